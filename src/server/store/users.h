/* SPDX-License-Identifier: MIT */
/* users.h - the people who sign in to the web UI: users with a role
 * (enum auth_level: "user", "operator", "admin") and, for local users, a
 * password hash (PBKDF2-HMAC-SHA256); their browser sessions (a random
 * token of which only the sha256 is stored, a CSRF token, a sliding
 * expiry). Owns the users and sessions tables. Sessions do not care how a
 * user proved who they are: a user has a provider ("local" today) and an
 * external id, so an OpenID Connect sign-in can find or create its user
 * and open a session with users_session_new like a password sign-in. */
#ifndef VIGIL_USERS_H
#define VIGIL_USERS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "server/store/auth.h"

struct db;

#define USERS_NAME_MAX 64            /* bytes of a user name */
#define USERS_PASSWORD_MIN 8         /* bytes of a new password */
#define USERS_PASSWORD_MAX 1024
#define USERS_PBKDF2_ITER 310000     /* PBKDF2-HMAC-SHA256 rounds of a new hash */
#define USERS_HASH_MAX 160           /* a stored hash text, NUL included */
#define USERS_TOKEN_HEX 64           /* session and CSRF tokens: 32 random bytes in hex */
#define USERS_SESSION_TTL_S (14 * 86400) /* a session unused this long ends */
#define USERS_SESSION_SLIDE_S 3600   /* the expiry moves forward at most this often */

struct users_user {
	int64_t id;
	char name[USERS_NAME_MAX + 1];
	enum auth_level role;
};

struct users_session {
	int64_t id;
	struct users_user user;
	char csrf[USERS_TOKEN_HEX + 1];
	int64_t expires_s;     /* epoch second the session ends unless used again */
};

/* Hash password for storage: "pbkdf2-sha256$ITER$SALT$HASH" (16 random
 * bytes of salt, 32 of hash, both base64) into out. 0, ERR_IO (no
 * randomness) or ERR_TOO_BIG (outlen under USERS_HASH_MAX). */
int users_password_hash(const char *password, char *out, size_t outlen);
/* Whether password matches stored (a users_password_hash text; the
 * rounds come from the text, 1,000 .. 10,000,000). The comparison takes
 * the same time wherever the bytes differ; a malformed text never matches. */
bool users_password_verify(const char *password, const char *stored);

/* Whether name may name a user: 1 .. USERS_NAME_MAX bytes of UTF-8, no
 * control characters, no space at either end, not starting with "key:"
 * (the audit log's name for an API key). 0, or ERR_INVALID with why in msg. */
int users_name_check(const char *name, char *msg, size_t msglen);

/* Add a local user. 0, ERR_INVALID (bad name or password, or the name is
 * taken; why in msg), ERR_IO. */
int users_add(struct db *db, const char *name, enum auth_level role, const char *password, char *msg,
	      size_t msglen);
/* Delete a user with their sessions and API keys. 0, ERR_NOT_FOUND, ERR_IO. */
int users_delete(struct db *db, const char *name);
/* Set a local user's password and end their sessions. 0, ERR_INVALID
 * (why in msg), ERR_NOT_FOUND, ERR_IO. */
int users_set_password(struct db *db, const char *name, const char *password, char *msg, size_t msglen);
/* Change a user's role (their API keys follow). 0, ERR_NOT_FOUND, ERR_IO. */
int users_set_role(struct db *db, const char *name, enum auth_level role);
/* Every user by name: [{"id", "name", "role", "provider", "t_created"}]
 * (new array in *out). 0, ERR_IO, ERR_NOMEM. */
int users_list(struct db *db, json_t **out);

/* Check a local user's name and password; 0 and *u, ERR_INVALID when the
 * user is unknown or the password wrong (one hash computed either way, so
 * the time tells nothing), ERR_IO. */
int users_login(struct db *db, const char *name, const char *password, struct users_user *u);

/* Open a session for u at now (epoch seconds): the cookie's token into
 * token (only its sha256 is stored), the session into *s. 0, ERR_IO. */
int users_session_new(struct db *db, const struct users_user *u, int64_t now, char token[USERS_TOKEN_HEX + 1],
		      struct users_session *s);
/* The session of cookie token, alive at now, into *s. With slide, an
 * expiry set more than USERS_SESSION_SLIDE_S ago moves to now +
 * USERS_SESSION_TTL_S (a write: only while holding the writer token).
 * 0, ERR_NOT_FOUND (malformed, unknown or expired), ERR_IO. */
int users_session_check(struct db *db, const char *token, int64_t now, bool slide, struct users_session *s);
/* End session id (sign-out). 0, ERR_IO. */
int users_session_end(struct db *db, int64_t id);
/* End the session of cookie token if there is one. 0, ERR_IO. */
int users_session_end_token(struct db *db, const char *token);
/* Delete the sessions expired at now. 0, ERR_IO. */
int users_sessions_expire(struct db *db, int64_t now);
/* Whether token (a request's X-CSRF-Token, NULL when absent) is s's CSRF
 * token; constant time. */
bool users_csrf_ok(const struct users_session *s, const char *token);

#endif
