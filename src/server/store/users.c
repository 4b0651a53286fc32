/* SPDX-License-Identifier: MIT */
/* users.c - users, their password hashes and their browser sessions (see
 * users.h). Every statement on the users and sessions tables lives here;
 * passwords are hashed with OpenSSL's PBKDF2-HMAC-SHA256, tokens come from
 * RAND_bytes, secrets are compared with CRYPTO_memcmp. Knows nothing of
 * HTTP: cookies and CSRF headers are the server's. */
#define LOG_MODULE "users"
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "server/db/db.h"
#include "server/store/jbuild.h"
#include "server/store/users.h"
#include "util/base64.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/str.h"
#include "util/banned.h" /* last: after every system header */

#define HASH_PREFIX "pbkdf2-sha256$"
#define SALT_LEN 16
#define DK_LEN 32
#define ITER_MIN 1000L
#define ITER_MAX 10000000L
#define TEXT_(x) #x
#define TEXT(x) TEXT_(x)

static void hex(const unsigned char *b, size_t n, char *out)
{
	size_t i;

	for (i = 0; i < n; i++) {
		out[2 * i] = "0123456789abcdef"[b[i] >> 4];
		out[2 * i + 1] = "0123456789abcdef"[b[i] & 15];
	}
	out[2 * n] = '\0';
}

/* A fresh random token: 32 bytes as 64 lowercase hex characters. */
static int random_token(char out[USERS_TOKEN_HEX + 1])
{
	unsigned char raw[USERS_TOKEN_HEX / 2];

	if (RAND_bytes(raw, (int)sizeof(raw)) != 1)
		return ERR_IO;
	hex(raw, sizeof(raw), out);
	OPENSSL_cleanse(raw, sizeof(raw));
	return 0;
}

/* sha256 of a token as hex: what the sessions table keeps. */
static void token_hash(const char *token, char out[65])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned mdlen = 0;

	if (!EVP_Digest(token, strlen(token), md, &mdlen, EVP_sha256(), NULL) || mdlen != 32)
		memset(md, 0, 32); /* matches no stored hash of a real token */
	hex(md, 32, out);
}

static bool token_wellformed(const char *t)
{
	return t && strlen(t) == USERS_TOKEN_HEX && strspn(t, "0123456789abcdef") == USERS_TOKEN_HEX;
}

static int pbkdf2(const char *password, const unsigned char *salt, size_t saltlen, long iter, unsigned char *dk,
		  size_t dklen)
{
	return PKCS5_PBKDF2_HMAC(password, (int)strlen(password), salt, (int)saltlen, (int)iter, EVP_sha256(),
				 (int)dklen, dk) == 1 ? 0 : ERR_IO;
}

int users_password_hash(const char *password, char *out, size_t outlen)
{
	unsigned char salt[SALT_LEN], dk[DK_LEN];
	char salt64[4 * ((SALT_LEN + 2) / 3) + 1], dk64[4 * ((DK_LEN + 2) / 3) + 1];
	int n;

	if (outlen < USERS_HASH_MAX)
		return ERR_TOO_BIG;
	if (RAND_bytes(salt, sizeof(salt)) != 1 || pbkdf2(password, salt, sizeof(salt), USERS_PBKDF2_ITER, dk, sizeof(dk)))
		return ERR_IO;
	EVP_EncodeBlock((unsigned char *)salt64, salt, sizeof(salt));
	EVP_EncodeBlock((unsigned char *)dk64, dk, sizeof(dk));
	OPENSSL_cleanse(dk, sizeof(dk));
	n = snprintf(out, outlen, HASH_PREFIX "%ld$%s$%s", (long)USERS_PBKDF2_ITER, salt64, dk64);
	return n > 0 && (size_t)n < outlen ? 0 : ERR_TOO_BIG;
}

/* Decode one base64 field of a stored hash into out (at most max bytes). */
static int field64(const char *s, size_t len, unsigned char *out, size_t max, size_t *n)
{
	struct buf b;
	int rc;

	buf_init(&b, max);
	rc = base64_decode(s, len, &b);
	if (!rc && b.len > 0) {
		memcpy(out, b.data, b.len);
		*n = b.len;
	} else if (!rc) {
		rc = ERR_PROTO;
	}
	buf_release(&b);
	return rc;
}

bool users_password_verify(const char *password, const char *stored)
{
	unsigned char salt[64], want[64], got[64];
	size_t saltlen = 0, wantlen = 0;
	const char *p, *d1, *d2;
	char num[16];
	long iter;
	bool ok;

	if (!password || !stored || !str_starts_with(stored, HASH_PREFIX))
		return false;
	p = stored + strlen(HASH_PREFIX);
	if (!(d1 = strchr(p, '$')) || !(d2 = strchr(d1 + 1, '$')) || (size_t)(d1 - p) >= sizeof(num))
		return false;
	memcpy(num, p, (size_t)(d1 - p));
	num[d1 - p] = '\0';
	if (str_to_long(num, &iter) || iter < ITER_MIN || iter > ITER_MAX)
		return false;
	if (field64(d1 + 1, (size_t)(d2 - d1 - 1), salt, sizeof(salt), &saltlen) ||
	    field64(d2 + 1, strlen(d2 + 1), want, sizeof(want), &wantlen) || wantlen < 16)
		return false;
	if (pbkdf2(password, salt, saltlen, iter, got, wantlen))
		return false;
	ok = CRYPTO_memcmp(got, want, wantlen) == 0;
	OPENSSL_cleanse(got, sizeof(got));
	return ok;
}

int users_name_check(const char *name, char *msg, size_t msglen)
{
	size_t n = name ? strlen(name) : 0, i;
	json_t *utf8;

	if (n == 0 || n > USERS_NAME_MAX) {
		err_set(msg, msglen, "a user name has 1 to %d bytes", USERS_NAME_MAX);
		return ERR_INVALID;
	}
	for (i = 0; i < n; i++)
		if ((unsigned char)name[i] < 0x20 || name[i] == 0x7f) {
			err_set(msg, msglen, "a user name holds no control characters");
			return ERR_INVALID;
		}
	if (name[0] == ' ' || name[n - 1] == ' ') {
		err_set(msg, msglen, "a user name neither starts nor ends with a space");
		return ERR_INVALID;
	}
	if (str_starts_with(name, "key:")) {
		err_set(msg, msglen, "a user name does not start with 'key:' (the audit log's name for API keys)");
		return ERR_INVALID;
	}
	if (!(utf8 = json_string(name))) { /* jansson takes only valid UTF-8 */
		err_set(msg, msglen, "a user name is UTF-8 text");
		return ERR_INVALID;
	}
	json_decref(utf8);
	return 0;
}

static int password_check(const char *password, char *msg, size_t msglen)
{
	size_t n = password ? strlen(password) : 0;

	if (n < USERS_PASSWORD_MIN || n > USERS_PASSWORD_MAX) {
		err_set(msg, msglen, "a password has %d to %d bytes", USERS_PASSWORD_MIN, USERS_PASSWORD_MAX);
		return ERR_INVALID;
	}
	return 0;
}

int users_add(struct db *db, const char *name, enum auth_level role, const char *password, char *msg,
	      size_t msglen)
{
	char hash[USERS_HASH_MAX], now[DB_TIME_LEN];
	int rc;

	if ((rc = users_name_check(name, msg, msglen)) || (rc = password_check(password, msg, msglen)))
		return rc;
	if (users_password_hash(password, hash, sizeof(hash))) {
		err_set(msg, msglen, "cannot hash the password (no randomness?)");
		return ERR_IO;
	}
	db_now(now);
	rc = db_exec(db,
		     "INSERT INTO users (name, role, password, provider, t_created, t_updated) VALUES (?, ?, ?, 'local', ?, ?)",
		     "ttttt", name, auth_level_name(role), hash, now, now);
	OPENSSL_cleanse(hash, sizeof(hash));
	if (rc == ERR_INVALID) {
		err_set(msg, msglen, "a user '%s' exists already", name);
		return ERR_INVALID;
	}
	if (rc < 0) {
		err_set(msg, msglen, "cannot store the user: %s", db_errmsg(db));
		return ERR_IO;
	}
	return 0;
}

int users_delete(struct db *db, const char *name)
{
	int rc = db_exec(db, "DELETE FROM users WHERE name = ?", "t", name);

	return rc < 0 ? ERR_IO : rc == 0 ? ERR_NOT_FOUND : 0;
}

int users_set_password(struct db *db, const char *name, const char *password, char *msg, size_t msglen)
{
	char hash[USERS_HASH_MAX], now[DB_TIME_LEN];
	int64_t id;
	int rc;

	if ((rc = password_check(password, msg, msglen)))
		return rc;
	rc = db_query_int(db, &id, "SELECT id FROM users WHERE name = ? AND provider = 'local'", "t", name);
	if (rc) {
		err_set(msg, msglen, rc == ERR_NOT_FOUND ? "no local user '%s'" : "cannot read the user '%s'", name);
		return rc == ERR_NOT_FOUND ? rc : ERR_IO;
	}
	if (users_password_hash(password, hash, sizeof(hash))) {
		err_set(msg, msglen, "cannot hash the password (no randomness?)");
		return ERR_IO;
	}
	db_now(now);
	if (db_begin(db))
		goto fail;
	if (db_exec(db, "UPDATE users SET password = ?, t_updated = ? WHERE id = ?", "tti", hash, now, id) < 0 ||
	    db_exec(db, "DELETE FROM sessions WHERE user_id = ?", "i", id) < 0 || db_commit(db)) {
		db_rollback(db);
		goto fail;
	}
	OPENSSL_cleanse(hash, sizeof(hash));
	return 0;
fail:
	OPENSSL_cleanse(hash, sizeof(hash));
	err_set(msg, msglen, "cannot store the password: %s", db_errmsg(db));
	return ERR_IO;
}

int users_set_role(struct db *db, const char *name, enum auth_level role)
{
	char now[DB_TIME_LEN];
	int rc;

	db_now(now);
	rc = db_exec(db, "UPDATE users SET role = ?, t_updated = ? WHERE name = ?", "ttt", auth_level_name(role), now,
		     name);
	return rc < 0 ? ERR_IO : rc == 0 ? ERR_NOT_FOUND : 0;
}

static json_t *user_row(struct db_stmt *st)
{
	return json_pack("{s:I,s:s,s:s,s:s,s:s}", "id", (json_int_t)db_col_int(st, 0), "name", db_col_text(st, 1),
			 "role", db_col_text(st, 2), "provider", db_col_text(st, 3), "t_created", db_col_text(st, 4));
}

int users_list(struct db *db, json_t **out)
{
	struct db_stmt *st;

	*out = NULL;
	if (db_prepare(db, &st, "SELECT id, name, role, provider, t_created FROM users ORDER BY name", NULL))
		return ERR_IO;
	return jbuild_rows(st, user_row, out);
}

/* Fill u from columns id, name, role at col of st. */
static void user_from(struct db_stmt *st, int col, struct users_user *u)
{
	u->id = db_col_int(st, col);
	snprintf(u->name, sizeof(u->name), "%s", db_col_text(st, col + 1) ? db_col_text(st, col + 1) : "");
	if (auth_level_parse(db_col_text(st, col + 2), &u->role))
		u->role = AUTH_PUBLIC;
}

int users_login(struct db *db, const char *name, const char *password, struct users_user *u)
{
	/* Verified in place of a missing user's hash, so an unknown name
	 * costs the same as a wrong password (the salt is "vigil-no-user!!!"). */
	static const char no_user[] = HASH_PREFIX TEXT(USERS_PBKDF2_ITER) "$dmlnaWwtbm8tdXNlciEhIQ==$"
				      "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=";
	struct db_stmt *st = NULL;
	char *stored = NULL;
	bool ok;
	int rc;

	memset(u, 0, sizeof(*u));
	rc = db_prepare(db, &st, "SELECT id, name, role, password FROM users WHERE name = ? AND provider = 'local'", "t",
			name ? name : "");
	if (!rc && (rc = db_step(st)) == 1) {
		user_from(st, 0, u);
		if (db_col_text(st, 3) && !(stored = strdup(db_col_text(st, 3))))
			rc = ERR_NOMEM;
	}
	db_finalize(st);
	if (rc < 0)
		return rc == ERR_NOMEM ? rc : ERR_IO;
	ok = users_password_verify(password ? password : "", stored ? stored : no_user) && stored;
	if (stored) {
		OPENSSL_cleanse(stored, strlen(stored));
		free(stored);
	}
	if (!ok) {
		memset(u, 0, sizeof(*u));
		return ERR_INVALID;
	}
	return 0;
}

int users_session_new(struct db *db, const struct users_user *u, int64_t now, char token[USERS_TOKEN_HEX + 1],
		      struct users_session *s)
{
	char h[65], created[DB_TIME_LEN];

	memset(s, 0, sizeof(*s));
	if (random_token(token) || random_token(s->csrf))
		return ERR_IO;
	token_hash(token, h);
	db_now(created);
	s->user = *u;
	s->expires_s = now + USERS_SESSION_TTL_S;
	if (db_exec(db, "INSERT INTO sessions (token_hash, user_id, csrf, expires_s, t_created) VALUES (?, ?, ?, ?, ?)",
		    "titit", h, u->id, s->csrf, s->expires_s, created) < 0)
		return ERR_IO;
	s->id = db_last_id(db);
	return 0;
}

int users_session_check(struct db *db, const char *token, int64_t now, bool slide, struct users_session *s)
{
	struct db_stmt *st = NULL;
	char h[65];
	int rc;

	memset(s, 0, sizeof(*s));
	if (!token_wellformed(token))
		return ERR_NOT_FOUND;
	token_hash(token, h);
	rc = db_prepare(db, &st,
			"SELECT s.id, s.csrf, s.expires_s, u.id, u.name, u.role FROM sessions s"
			" JOIN users u ON u.id = s.user_id WHERE s.token_hash = ? AND s.expires_s > ?",
			"ti", h, now);
	if (!rc && (rc = db_step(st)) == 1) {
		s->id = db_col_int(st, 0);
		snprintf(s->csrf, sizeof(s->csrf), "%s", db_col_text(st, 1) ? db_col_text(st, 1) : "");
		s->expires_s = db_col_int(st, 2);
		user_from(st, 3, &s->user);
	}
	db_finalize(st);
	if (rc != 1) {
		memset(s, 0, sizeof(*s));
		return rc == 0 ? ERR_NOT_FOUND : ERR_IO;
	}
	if (slide && s->expires_s - now < USERS_SESSION_TTL_S - USERS_SESSION_SLIDE_S) {
		s->expires_s = now + USERS_SESSION_TTL_S;
		if (db_exec(db, "UPDATE sessions SET expires_s = ? WHERE id = ?", "ii", s->expires_s, s->id) < 0)
			return ERR_IO;
	}
	return 0;
}

int users_session_end(struct db *db, int64_t id)
{
	return db_exec(db, "DELETE FROM sessions WHERE id = ?", "i", id) < 0 ? ERR_IO : 0;
}

int users_session_end_token(struct db *db, const char *token)
{
	char h[65];

	if (!token_wellformed(token))
		return 0;
	token_hash(token, h);
	return db_exec(db, "DELETE FROM sessions WHERE token_hash = ?", "t", h) < 0 ? ERR_IO : 0;
}

int users_sessions_expire(struct db *db, int64_t now)
{
	return db_exec(db, "DELETE FROM sessions WHERE expires_s <= ?", "i", now) < 0 ? ERR_IO : 0;
}

bool users_csrf_ok(const struct users_session *s, const char *token)
{
	return s && token && strlen(token) == USERS_TOKEN_HEX && strlen(s->csrf) == USERS_TOKEN_HEX &&
	       CRYPTO_memcmp(token, s->csrf, USERS_TOKEN_HEX) == 0;
}
