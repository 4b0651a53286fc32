/* SPDX-License-Identifier: MIT */
/* auth.c - signed requests checked exactly as openQA checks them
 * (Shared/Controller/Auth.pm _valid_hmac: key, expiry, time, then the
 * signature of net/hmac.c over the raw target) and API key creation. */
#define LOG_MODULE "auth"
#include <math.h>
#include <openssl/rand.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "net/hmac.h"
#include "server/auth.h"
#include "server/db.h"
#include "util/err.h"
#include "util/str.h"
#include "util/banned.h" /* last: after every system header */

int auth_verify(const char *secret, const char *target, const char *microtime, const char *hash, double now,
		char *msg, size_t msglen)
{
	double t;

	if (!microtime || str_to_double(microtime, &t) || !isfinite(t)) {
		snprintf(msg, msglen, "invalid X-API-Microtime header (expected seconds since the epoch)");
		return ERR_INVALID;
	}
	if (fabs(now - t) > AUTH_TIME_TOLERANCE) {
		snprintf(msg, msglen,
			 "timestamp mismatch - check whether clocks on the local host and the web UI host are in sync "
			 "(server time: %.0f, client time: %s, tolerance: %.0fs)", now, microtime, AUTH_TIME_TOLERANCE);
		return ERR_INVALID;
	}
	if (!hmac_verify(secret, target, microtime, hash)) {
		snprintf(msg, msglen, "unknown error (wrong secret?)");
		return ERR_INVALID;
	}
	return 0;
}

int auth_check(struct db *db, const char *key, const char *microtime, const char *hash, const char *target,
	       double now, enum auth_level *level, char *msg, size_t msglen)
{
	struct db_stmt *st = NULL;
	char nowtext[DB_TIME_LEN];
	int rc;

	*level = AUTH_PUBLIC;
	if (!key || !*key) {
		snprintf(msg, msglen, "no api key");
		return ERR_INVALID;
	}
	rc = db_prepare(db, &st, "SELECT secret, is_admin, is_operator, t_expiration FROM api_keys WHERE key = ?",
			"t", key);
	if (rc)
		goto fail;
	rc = db_step(st);
	if (rc != 1) {
		db_finalize(st);
		snprintf(msg, msglen, rc == 0 ? "api key not found" : "cannot read api keys");
		return ERR_INVALID;
	}
	db_now(nowtext);
	if (db_col_text(st, 3) && strcmp(db_col_text(st, 3), nowtext) < 0) {
		snprintf(msg, msglen, "api key expired");
		rc = ERR_INVALID;
		goto out;
	}
	rc = auth_verify(db_col_text(st, 0), target, microtime, hash, now, msg, msglen);
	if (!rc)
		*level = db_col_int(st, 1) ? AUTH_ADMIN : db_col_int(st, 2) ? AUTH_OPERATOR : AUTH_PUBLIC;
out:
	db_finalize(st);
	return rc;
fail:
	snprintf(msg, msglen, "cannot read api keys");
	return ERR_INVALID;
}

static int random_hex(char *out, size_t n)
{
	unsigned char raw[AUTH_KEY_LEN];
	size_t i;

	if (n > sizeof(raw) * 2 || RAND_bytes(raw, (int)sizeof(raw)) != 1)
		return ERR_IO;
	for (i = 0; i < n; i++)
		out[i] = "0123456789ABCDEF"[(raw[i / 2] >> (i % 2 ? 0 : 4)) & 15];
	out[n] = '\0';
	return 0;
}

int auth_key_new(struct db *db, bool admin, char key[AUTH_KEY_LEN + 1], char secret[AUTH_KEY_LEN + 1])
{
	char now[DB_TIME_LEN];
	int rc;

	if (random_hex(key, AUTH_KEY_LEN) || random_hex(secret, AUTH_KEY_LEN))
		return ERR_IO;
	db_now(now);
	rc = db_exec(db, "INSERT INTO api_keys (key, secret, is_admin, is_operator, t_created) VALUES (?, ?, ?, 1, ?)",
		     "ttit", key, secret, (int64_t)(admin ? 1 : 0), now);
	return rc < 0 ? rc : 0;
}
