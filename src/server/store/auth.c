/* SPDX-License-Identifier: MIT */
/* auth.c - signed requests: the legacy scheme checked exactly as openQA
 * checks it (Shared/Controller/Auth.pm _valid_hmac: key, expiry, time, then
 * the signature of net/hmac.c over the raw target), scheme 2 with its
 * nonces and body hash, API key creation, and the keys users own. Every
 * statement on api_keys and api_nonces lives here. */
#define LOG_MODULE "auth"
#include <math.h>
#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "net/hmac.h"
#include "server/store/auth.h"
#include "server/store/jbuild.h"
#include "server/db/db.h"
#include "util/err.h"
#include "util/str.h"
#include "util/banned.h" /* last: after every system header */

/* Whether s is a decimal integer or decimal fraction ("1712345678",
 * "1712345678.123456"): what openQA's Perl and Python clients send. strtod
 * alone would also take hex, exponents, "inf" and leading spaces. */
static bool decimal_time(const char *s)
{
	size_t i = 0, digits = 0;

	while (s[i] >= '0' && s[i] <= '9')
		i++;
	if (i == 0 || i > 12)
		return false;
	if (s[i] == '.') {
		i++;
		while (s[i] >= '0' && s[i] <= '9')
			i++, digits++;
		if (digits == 0 || digits > 9)
			return false;
	}
	return s[i] == '\0';
}

static int check_time(const char *microtime, double now, double *t, char *msg, size_t msglen)
{
	if (!microtime || !decimal_time(microtime) || str_to_double(microtime, t) || !isfinite(*t)) {
		snprintf(msg, msglen, "invalid X-API-Microtime header (expected decimal seconds since the epoch)");
		return ERR_INVALID;
	}
	if (fabs(now - *t) > AUTH_TIME_TOLERANCE) {
		snprintf(msg, msglen,
			 "timestamp mismatch - check whether clocks on the local host and the web UI host are in sync "
			 "(server time: %.0f, client time: %s, tolerance: %.0fs)", now, microtime, AUTH_TIME_TOLERANCE);
		return ERR_INVALID;
	}
	return 0;
}

int auth_verify(const char *secret, const char *target, const char *microtime, const char *hash, double now,
		char *msg, size_t msglen)
{
	double t;

	if (!microtime || !decimal_time(microtime) || str_to_double(microtime, &t) || !isfinite(t)) {
		snprintf(msg, msglen, "invalid X-API-Microtime header (expected decimal seconds since the epoch)");
		return ERR_INVALID;
	}
	if (fabs(now - t) > AUTH_TIME_TOLERANCE) {
		snprintf(msg, msglen,
			 "timestamp mismatch - check whether clocks on the local host and the web UI host are in sync "
			 "(server time: %.0f, client time: %s, tolerance: %.0fs)", now, microtime, AUTH_TIME_TOLERANCE);
		return ERR_INVALID;
	}
	if (secret && *secret && hash && strlen(hash) == HMAC_HEX_LEN) {
		char want[HMAC_HEX_LEN + 1];
		int rc = hmac_sign(secret, target, microtime, want);
		if (rc == ERR_NOMEM) {
			snprintf(msg, msglen, "out of memory");
			return rc;
		}
		if (!rc && CRYPTO_memcmp(want, hash, HMAC_HEX_LEN) == 0)
			return 0;
	}
	snprintf(msg, msglen, "unknown error (wrong secret?)");
	return ERR_INVALID;
}

static const char *const level_names[] = { "user", "operator", "admin" };

const char *auth_level_name(enum auth_level level)
{
	return (unsigned)level < 3 ? level_names[level] : "user";
}

int auth_level_parse(const char *name, enum auth_level *out)
{
	unsigned i;

	for (i = 0; name && i < 3; i++)
		if (!strcmp(name, level_names[i])) {
			*out = (enum auth_level)i;
			return 0;
		}
	return ERR_INVALID;
}

int auth_nonces_prune(struct db *db, double now)
{
	return db_exec(db, "DELETE FROM api_nonces WHERE t_expires < ?", "i", (int64_t)now) < 0 ? ERR_IO : 0;
}

/* Scheme 2 after the key is known: form, time, signature, body, nonce. */
static int check_v2(struct db *db, const struct auth_sig *s, const char *secret, double now, char *msg,
		    size_t msglen)
{
	static _Atomic long long last_prune;
	double t;
	int rc;

	if (!hmac2_nonce_ok(s->nonce)) {
		snprintf(msg, msglen, "invalid X-API-Nonce header (expected %d to %d lowercase hex characters)",
			 HMAC2_NONCE_MIN, HMAC2_NONCE_MAX);
		return ERR_INVALID;
	}
	if (!hmac2_hex_ok(s->content_sha256)) {
		snprintf(msg, msglen, "invalid X-API-Content-SHA256 header (expected the body's SHA-256 in %d lowercase "
			 "hex characters)", HMAC2_HEX_LEN);
		return ERR_INVALID;
	}
	if ((rc = check_time(s->microtime, now, &t, msg, msglen)))
		return rc;
	if (secret && *secret && s->signature && strlen(s->signature) == HMAC2_HEX_LEN) {
		char want[HMAC2_HEX_LEN + 1];
		rc = hmac2_sign(secret, s->method, s->target, s->microtime, s->nonce, s->content_sha256, want);
		if (rc == ERR_NOMEM) {
			snprintf(msg, msglen, "out of memory");
			return rc;
		}
		if (rc || CRYPTO_memcmp(want, s->signature, HMAC2_HEX_LEN))
			rc = ERR_INVALID;
	} else {
		rc = ERR_INVALID;
	}
	if (rc) {
		snprintf(msg, msglen, "wrong X-API-Signature (wrong secret?)");
		return rc;
	}
	if (!s->body_sha256)
		return 0;
	if (strcmp(s->body_sha256, s->content_sha256)) {
		snprintf(msg, msglen, "the body does not match X-API-Content-SHA256");
		return ERR_INVALID;
	}
	if ((long long)now > last_prune + 60) {
		last_prune = (long long)now;
		(void)auth_nonces_prune(db, now - AUTH_TIME_TOLERANCE - 2);
	}
	/* Kept until the time it came with is out of the window. */
	rc = db_exec(db, "INSERT INTO api_nonces (key, nonce, t_expires) VALUES (?, ?, ?) ON CONFLICT DO NOTHING", "tti", s->key,
		     s->nonce, (int64_t)ceil(t + AUTH_TIME_TOLERANCE) + 1);
	if (rc < 0) {
		/* The database is busy or failing: the request may be tried again. */
		snprintf(msg, msglen, "cannot record the nonce (database busy): try again");
		return ERR_IO;
	}
	if (rc == 0) {
		snprintf(msg, msglen, "replayed request: X-API-Nonce already used");
		return ERR_INVALID;
	}
	return 0;
}

int auth_check_sig(struct db *db, const struct auth_sig *s, double now, enum auth_level *level, char *msg,
		   size_t msglen)
{
	struct db_stmt *st = NULL;
	char nowtext[DB_TIME_LEN];
	int rc;

	*level = AUTH_PUBLIC;
	if (!s->key || !*s->key) {
		snprintf(msg, msglen, "no api key");
		return ERR_INVALID;
	}
	rc = db_prepare(db, &st,
			"SELECT secret, is_admin, is_operator, t_expiration,"
			" (SELECT role FROM users WHERE users.id = api_keys.user_id), user_id, refuse_legacy"
			" FROM api_keys WHERE key = ?",
			"t", s->key);
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
	if (s->signature) {
		rc = check_v2(db, s, db_col_text(st, 0), now, msg, msglen);
	} else if (db_col_int(st, 6)) {
		snprintf(msg, msglen, "this api key refuses legacy signatures (X-API-Hash): sign with X-API-Nonce, "
			 "X-API-Content-SHA256 and X-API-Signature (vigil client, vigil worker)");
		rc = ERR_INVALID;
	} else {
		rc = auth_verify(db_col_text(st, 0), s->target, s->microtime, s->hash, now, msg, msglen);
	}
	if (!rc && !db_col_null(st, 5)) {
		/* A user's key acts with the user's role of now. */
		if (auth_level_parse(db_col_text(st, 4), level))
			*level = AUTH_PUBLIC;
	} else if (!rc) {
		*level = db_col_int(st, 1) ? AUTH_ADMIN : db_col_int(st, 2) ? AUTH_OPERATOR : AUTH_PUBLIC;
	}
out:
	db_finalize(st);
	return rc;
fail:
	snprintf(msg, msglen, "cannot read api keys");
	return ERR_INVALID;
}

int auth_check(struct db *db, const char *key, const char *microtime, const char *hash, const char *target,
	       double now, enum auth_level *level, char *msg, size_t msglen)
{
	struct auth_sig s = { .key = key, .microtime = microtime, .hash = hash, .target = target, .method = "GET" };

	return auth_check_sig(db, &s, now, level, msg, msglen);
}

int auth_key_set_refuse_legacy(struct db *db, const char *key, bool refuse)
{
	int rc = db_exec(db, "UPDATE api_keys SET refuse_legacy = ? WHERE key = ?", "it", (int64_t)refuse, key);

	return rc < 0 ? ERR_IO : rc == 0 ? ERR_NOT_FOUND : 0;
}

static json_t *key_row(struct db_stmt *st)
{
	return json_pack("{s:I,s:s,s:s,s:s?,s:b,s:s,s:s?}", "id", (json_int_t)db_col_int(st, 0), "key",
			 db_col_text(st, 1), "level", db_col_int(st, 2) ? "admin" : db_col_int(st, 3) ? "operator" : "user",
			 "user", db_col_text(st, 4), "refuse_legacy", (int)db_col_int(st, 5), "t_created",
			 db_col_text(st, 6), "t_expiration", db_col_text(st, 7));
}

int auth_keys_all(struct db *db, json_t **out)
{
	struct db_stmt *st;

	*out = NULL;
	if (db_prepare(db, &st,
		       "SELECT id, key, is_admin, is_operator, (SELECT name FROM users WHERE users.id = api_keys.user_id),"
		       " refuse_legacy, t_created, t_expiration FROM api_keys ORDER BY id",
		       ""))
		return ERR_IO;
	return jbuild_rows(st, key_row, out);
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

int auth_key_create(struct db *db, enum auth_level level, int64_t user_id, char key[AUTH_KEY_LEN + 1],
		    char secret[AUTH_KEY_LEN + 1], int64_t *id)
{
	char now[DB_TIME_LEN];
	int64_t n = 0;
	int rc;

	if (user_id > 0) {
		if (db_query_int(db, &n, "SELECT COUNT(*) FROM api_keys WHERE user_id = ?", "i", user_id))
			return ERR_IO;
		if (n >= AUTH_USER_KEYS_MAX)
			return ERR_TOO_BIG;
	}
	if (random_hex(key, AUTH_KEY_LEN) || random_hex(secret, AUTH_KEY_LEN))
		return ERR_IO;
	db_now(now);
	rc = db_exec(db,
		     "INSERT INTO api_keys (key, secret, is_admin, is_operator, t_created, user_id)"
		     " VALUES (?, ?, ?, ?, ?, ?)",
		     "ttiitI", key, secret, (int64_t)(level == AUTH_ADMIN), (int64_t)(level >= AUTH_OPERATOR), now,
		     user_id);
	if (rc < 0)
		return rc;
	if (id)
		*id = db_last_id(db);
	return 0;
}

int auth_key_new(struct db *db, bool admin, char key[AUTH_KEY_LEN + 1], char secret[AUTH_KEY_LEN + 1])
{
	return auth_key_create(db, admin ? AUTH_ADMIN : AUTH_OPERATOR, 0, key, secret, NULL);
}

static json_t *user_key_row(struct db_stmt *st)
{
	return json_pack("{s:I,s:s,s:s,s:s?,s:b}", "id", (json_int_t)db_col_int(st, 0), "key", db_col_text(st, 1),
			 "t_created", db_col_text(st, 2), "t_expiration", db_col_text(st, 3), "refuse_legacy",
			 (int)db_col_int(st, 4));
}

int auth_keys_list(struct db *db, int64_t user_id, json_t **out)
{
	struct db_stmt *st;

	*out = NULL;
	if (db_prepare(db, &st, "SELECT id, key, t_created, t_expiration, refuse_legacy FROM api_keys WHERE user_id = ?"
		       " ORDER BY id DESC",
		       "i", user_id))
		return ERR_IO;
	return jbuild_rows(st, user_key_row, out);
}

int auth_key_revoke(struct db *db, int64_t user_id, int64_t id, char key[AUTH_KEY_LEN + 1])
{
	struct db_stmt *st = NULL;
	int rc;

	key[0] = '\0';
	rc = db_prepare(db, &st, "SELECT key FROM api_keys WHERE id = ? AND user_id = ?", "ii", id, user_id);
	if (!rc && (rc = db_step(st)) == 1)
		snprintf(key, AUTH_KEY_LEN + 1, "%s", db_col_text(st, 0) ? db_col_text(st, 0) : "");
	db_finalize(st);
	if (rc == 0)
		return ERR_NOT_FOUND;
	if (rc < 0)
		return ERR_IO;
	rc = db_exec(db, "DELETE FROM api_keys WHERE id = ? AND user_id = ?", "ii", id, user_id);
	return rc < 0 ? ERR_IO : rc == 0 ? ERR_NOT_FOUND : 0;
}

int auth_key_owner(struct db *db, const char *key, char *name, size_t len)
{
	struct db_stmt *st = NULL;
	int rc;

	rc = db_prepare(db, &st, "SELECT users.name FROM api_keys JOIN users ON users.id = api_keys.user_id WHERE key = ?",
			"t", key);
	if (!rc && (rc = db_step(st)) == 1)
		snprintf(name, len, "%s", db_col_text(st, 0));
	db_finalize(st);
	return rc == 1 ? 0 : rc == 0 ? ERR_NOT_FOUND : ERR_IO;
}
