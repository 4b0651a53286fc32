/* SPDX-License-Identifier: MIT */
/* test_auth.c - openQA's signed requests as the server checks them: both
 * microtime forms, the tolerance, wrong secrets and targets, and keys
 * stored in a fresh database. The signature itself: test_hmac.c. */
#include <stdlib.h>
#include "unit.h"
#include "net/hmac.h"
#include "server/store/auth.h"
#include "server/db/db.h"
#include "util/err.h"
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
	char key[AUTH_KEY_LEN + 1], secret[AUTH_KEY_LEN + 1], h[HMAC_HEX_LEN + 1], msg[512], now[32];
	struct db *db;
	enum auth_level level;

	db = unit_db();
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
}

TEST(hmac2_sign_vector)
{
	char sha[HMAC2_HEX_LEN + 1], sig[HMAC2_HEX_LEN + 1], n[HMAC2_NONCE_MIN + 1];

	/* Computed with python3's hashlib and hmac from the scheme's text. */
	CHECK_INT(hmac_sha256_hex("TEST=a", 6, sha), 0);
	CHECK_STR(sha, "5080d7caacd3af288595a3c6b18194f751fdeb5dd117b11e4a72405abb5ab95b");
	CHECK_INT(hmac_sha256_hex(NULL, 0, sha), 0);
	CHECK_STR(sha, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	CHECK_INT(hmac2_sign("1234567890ABCDEF", "POST", "/api/v1/jobs", "1712345678", "00112233445566778899aabbccddeeff",
			     "5080d7caacd3af288595a3c6b18194f751fdeb5dd117b11e4a72405abb5ab95b", sig), 0);
	CHECK_STR(sig, "6ae9942888c31a1ba7cf7d00b6b04502e1c44fc235a7cc9a269421017703f989");
	CHECK(hmac2_verify("1234567890ABCDEF", "POST", "/api/v1/jobs", "1712345678", "00112233445566778899aabbccddeeff",
			   "5080d7caacd3af288595a3c6b18194f751fdeb5dd117b11e4a72405abb5ab95b", sig));
	/* The method is signed too. */
	CHECK(!hmac2_verify("1234567890ABCDEF", "PUT", "/api/v1/jobs", "1712345678", "00112233445566778899aabbccddeeff",
			    "5080d7caacd3af288595a3c6b18194f751fdeb5dd117b11e4a72405abb5ab95b", sig));
	CHECK_INT(hmac2_nonce(n), 0);
	CHECK(hmac2_nonce_ok(n));
	CHECK(!hmac2_nonce_ok("0011223344556677"));                  /* 64 bits: too short */
	CHECK(!hmac2_nonce_ok("00112233445566778899AABBCCDDEEFF"));  /* uppercase */
	CHECK(!hmac2_hex_ok("5080d7caacd3af288595a3c6b18194f751fdeb5dd117b11e4a72405abb5ab95"));
}

/* A scheme-2 signature of method target body by key/secret with nonce, at now. */
static void sign2(struct auth_sig *s, const char *key, const char *secret, const char *method, const char *target,
		  const char *body, const char *nonce, char mt[32], char sha[HMAC2_HEX_LEN + 1],
		  char sig[HMAC2_HEX_LEN + 1])
{
	snprintf(mt, 32, "%.0f", time_wall());
	CHECK_INT(hmac_sha256_hex(body, strlen(body), sha), 0);
	CHECK_INT(hmac2_sign(secret, method, target, mt, nonce, sha, sig), 0);
	memset(s, 0, sizeof(*s));
	s->key = key;
	s->microtime = mt;
	s->nonce = nonce;
	s->content_sha256 = sha;
	s->signature = sig;
	s->method = method;
	s->target = target;
	s->body_sha256 = sha;
}

TEST(auth_scheme2_replay_body_legacy_refusal)
{
	char key[AUTH_KEY_LEN + 1], secret[AUTH_KEY_LEN + 1], msg[512], mt[32];
	char sha[HMAC2_HEX_LEN + 1], sig[HMAC2_HEX_LEN + 1], other[HMAC2_HEX_LEN + 1], h[HMAC_HEX_LEN + 1];
	const char *nonce = "0123456789abcdef0123456789abcdef";
	struct auth_sig s;
	struct db *db;
	enum auth_level level;
	int64_t n = -1;

	db = unit_db();
	CHECK_INT(auth_key_new(db, false, key, secret), 0);
	sign2(&s, key, secret, "POST", "/api/v1/jobs", "TEST=a", nonce, mt, sha, sig);
	/* From the headers alone (an upload's start): nothing spent. */
	s.body_sha256 = NULL;
	CHECK_INT(auth_check_sig(db, &s, time_wall(), &level, msg, sizeof(msg)), 0);
	s.body_sha256 = sha;
	CHECK_INT(auth_check_sig(db, &s, time_wall(), &level, msg, sizeof(msg)), 0);
	CHECK_INT(level, AUTH_OPERATOR);
	CHECK_INT(auth_check_sig(db, &s, time_wall(), &level, msg, sizeof(msg)), ERR_INVALID);
	CHECK(strstr(msg, "replayed"));
	/* Another body under the same signature. */
	sign2(&s, key, secret, "POST", "/api/v1/jobs", "TEST=a", "ffffffffffffffffffffffffffffffff", mt, sha, sig);
	CHECK_INT(hmac_sha256_hex("TEST=b", 6, other), 0);
	s.body_sha256 = other;
	CHECK_INT(auth_check_sig(db, &s, time_wall(), &level, msg, sizeof(msg)), ERR_INVALID);
	CHECK(strstr(msg, "does not match"));
	/* A nonce of 64 bits is refused before anything else. */
	s.nonce = "0123456789abcdef";
	CHECK_INT(auth_check_sig(db, &s, time_wall(), &level, msg, sizeof(msg)), ERR_INVALID);
	CHECK(strstr(msg, "X-API-Nonce"));
	/* Nonces out of the window are forgotten. */
	CHECK_INT(db_query_int(db, &n, "SELECT COUNT(*) FROM api_nonces", ""), 0);
	CHECK_INT(n, 1);
	CHECK_INT(auth_nonces_prune(db, time_wall() + 2 * AUTH_TIME_TOLERANCE), 0);
	CHECK_INT(db_query_int(db, &n, "SELECT COUNT(*) FROM api_nonces", ""), 0);
	CHECK_INT(n, 0);
	/* Legacy: taken until refused for the key; scheme 2 goes on. */
	CHECK_INT(hmac_sign(secret, "/api/v1/jobs", mt, h), 0);
	CHECK_INT(auth_check(db, key, mt, h, "/api/v1/jobs", time_wall(), &level, msg, sizeof(msg)), 0);
	CHECK_INT(auth_key_set_refuse_legacy(db, key, true), 0);
	CHECK_INT(auth_check(db, key, mt, h, "/api/v1/jobs", time_wall(), &level, msg, sizeof(msg)), ERR_INVALID);
	CHECK(strstr(msg, "refuses legacy signatures"));
	sign2(&s, key, secret, "GET", "/api/v1/jobs", "", "abcdefabcdefabcdefabcdefabcdefab", mt, sha, sig);
	CHECK_INT(auth_check_sig(db, &s, time_wall(), &level, msg, sizeof(msg)), 0);
	CHECK_INT(auth_key_set_refuse_legacy(db, "NOSUCHKEY", true), ERR_NOT_FOUND);
	db_free(db);
}
