/* SPDX-License-Identifier: MIT */
/* test_auth.c - openQA's signed requests as the server checks them: both
 * microtime forms, the tolerance, wrong secrets and targets, and keys
 * stored in a fresh database. The signature itself: test_hmac.c. */
#include <stdlib.h>
#include "unit.h"
#include "net/hmac.h"
#include "server/auth.h"
#include "server/db.h"
#include "util/err.h"
#include "util/path.h"
#include "util/time.h"

TEST(auth_verify_time_and_hash)
{
	char msg[512];
	const char *t = "/api/v1/jobs?state=done&limit=2";

	/* Perl client: integer seconds; python client: float text hashed verbatim. */
	CHECK_INT(auth_verify("1234567890ABCDEF", t, "1712345678", "7212112d6b72e39c00543e946028ddc131c23fd6",
			      1712345678.0 + 299, msg, sizeof(msg)), 0);
	CHECK_INT(auth_verify("SECRET", "/api/v1/jobs/1/restart", "1712345678.123456",
			      "c1633933f8073d1446d60815100c54014c99b218", 1712345600.0, msg, sizeof(msg)), 0);
	/* Stale by more than 300 s either way. */
	CHECK(auth_verify("1234567890ABCDEF", t, "1712345678", "7212112d6b72e39c00543e946028ddc131c23fd6",
			  1712345678.0 + 301, msg, sizeof(msg)) != 0);
	CHECK(strstr(msg, "timestamp mismatch") != NULL);
	CHECK(auth_verify("1234567890ABCDEF", t, "1712345678", "7212112d6b72e39c00543e946028ddc131c23fd6",
			  1712345678.0 - 301, msg, sizeof(msg)) != 0);
	/* Wrong secret, tampered target, garbage time. */
	CHECK(auth_verify("WRONG", t, "1712345678", "7212112d6b72e39c00543e946028ddc131c23fd6", 1712345678.0, msg,
			  sizeof(msg)) != 0);
	CHECK(strstr(msg, "wrong secret") != NULL);
	CHECK(auth_verify("1234567890ABCDEF", "/api/v1/jobs?state=done&limit=3", "1712345678",
			  "7212112d6b72e39c00543e946028ddc131c23fd6", 1712345678.0, msg, sizeof(msg)) != 0);
	CHECK(auth_verify("1234567890ABCDEF", t, "soon", "7212112d6b72e39c00543e946028ddc131c23fd6", 1712345678.0,
			  msg, sizeof(msg)) != 0);
	CHECK(auth_verify("1234567890ABCDEF", t, "1712345678", NULL, 1712345678.0, msg, sizeof(msg)) != 0);
	/* Issue 17: the time is a decimal integer or fraction, nothing else
	 * (hex, exponents, signs, spaces: refused before the hash is looked at). */
	{
		static const char *const odd[] = { "0x6613C44E", "1.712345678e9", "+1712345678", " 1712345678",
						   "1712345678.", ".5", "1712345678 ", "inf", "" };
		size_t i;
		for (i = 0; i < sizeof(odd) / sizeof(odd[0]); i++) {
			CHECK_INT(auth_verify("1234567890ABCDEF", t, odd[i], "7212112d6b72e39c00543e946028ddc131c23fd6",
					      1712345678.0, msg, sizeof(msg)), ERR_INVALID);
			CHECK(strstr(msg, "invalid X-API-Microtime header") != NULL);
		}
	}
}

TEST(auth_keys_in_db)
{
	char key[AUTH_KEY_LEN + 1], secret[AUTH_KEY_LEN + 1], h[HMAC_HEX_LEN + 1], msg[512], now[32], err[256];
	char *path = path_join(unit_tmpdir(), "vigil.db");
	struct db *db;
	enum auth_level level;

	CHECK_INT(db_open(&db, path, err, sizeof(err)), 0);
	CHECK_INT(auth_key_new(db, false, key, secret), 0);
	CHECK_INT((int)strlen(key), AUTH_KEY_LEN);
	snprintf(now, sizeof(now), "%.0f", time_wall());
	CHECK_INT(hmac_sign(secret, "/api/v1/jobs", now, h), 0);
	CHECK_INT(auth_check(db, key, now, h, "/api/v1/jobs", time_wall(), &level, msg, sizeof(msg)), 0);
	CHECK_INT(level, AUTH_OPERATOR);
	CHECK(auth_check(db, "0000000000000000", now, h, "/api/v1/jobs", time_wall(), &level, msg, sizeof(msg)) != 0);
	CHECK_INT(auth_key_new(db, true, key, secret), 0);
	CHECK_INT(hmac_sign(secret, "/api/v1/machines", now, h), 0);
	CHECK_INT(auth_check(db, key, now, h, "/api/v1/machines", time_wall(), &level, msg, sizeof(msg)), 0);
	CHECK_INT(level, AUTH_ADMIN);
	db_free(db);
	free(path);
}
