/* SPDX-License-Identifier: MIT */
/* auth.h - API authentication: openQA's legacy scheme (X-API-Key,
 * X-API-Microtime, X-API-Hash) and vigil's scheme 2 (X-API-Nonce,
 * X-API-Content-SHA256, X-API-Signature: net/hmac.h), accepted within
 * AUTH_TIME_TOLERANCE seconds, a scheme-2 nonce only once (kept in
 * api_nonces until its time is out of the window); per key, an admin may
 * refuse the legacy scheme. API keys: creation, and the keys a signed-in
 * user owns (a key of a user acts with the user's role). Owns the api_keys
 * and api_nonces tables. */
#ifndef VIGIL_AUTH_H
#define VIGIL_AUTH_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct db;

#define AUTH_TIME_TOLERANCE 300.0
#define AUTH_KEY_LEN 16 /* hex characters of a key and of a secret, as openQA */
#define AUTH_USER_KEYS_MAX 100 /* API keys one user may hold */

enum auth_level {
	AUTH_PUBLIC = 0,  /* no key needed */
	AUTH_OPERATOR,    /* any valid key: jobs, isos */
	AUTH_ADMIN,       /* an admin key: tables, groups, templates */
};

/* A user's role is the level it grants: "user" (AUTH_PUBLIC: reads, and
 * the user's own API keys), "operator", "admin". Static text. */
const char *auth_level_name(enum auth_level level);
/* The level of a role name. 0 or ERR_INVALID. */
int auth_level_parse(const char *name, enum auth_level *out);

/* Check one signed request against a known secret at time now (seconds
 * since the epoch): microtime is the header text (integer or float seconds)
 * and is hashed verbatim. 0, or ERR_INVALID with openQA's reason text in msg. */
int auth_verify(const char *secret, const char *target, const char *microtime, const char *hash, double now,
		char *msg, size_t msglen);

/* Look the key up and verify the request; 0 and *level (the owner's role
 * for a key a user owns, else the key's own flags), or ERR_INVALID with
 * the reason in msg (unknown key, expired, wrong hash, stale time). */
int auth_check(struct db *db, const char *key, const char *microtime, const char *hash, const char *target,
	       double now, enum auth_level *level, char *msg, size_t msglen);

/* One request's signature headers (NULL when absent) and what the server
 * knows of the request. signature set: scheme 2, else legacy. */
struct auth_sig {
	const char *key, *microtime;
	const char *hash;                       /* legacy: X-API-Hash */
	const char *nonce, *content_sha256, *signature; /* scheme 2 */
	const char *method, *target;            /* as received */
	/* The hex SHA-256 of the body received, or NULL for a check from the
	 * headers alone (an upload's start): then neither the body hash is
	 * compared nor the nonce spent; the full check follows. */
	const char *body_sha256;
};

/* auth_check for either scheme: scheme 2 checks the nonce's form, the
 * signature, the body's hash and (once the body is known) spends the
 * nonce, refusing one seen before (in any process on this database);
 * legacy is refused for a key whose refuse_legacy is set. 0 and *level,
 * ERR_INVALID with the reason in msg, ERR_IO (the nonce could not be
 * recorded: try again) or ERR_NOMEM. */
int auth_check_sig(struct db *db, const struct auth_sig *sig, double now, enum auth_level *level, char *msg,
		   size_t msglen);
/* Forget nonces whose time is out of the window (before now). 0 or ERR_IO. */
int auth_nonces_prune(struct db *db, double now);
/* Set whether key refuses legacy signatures. 0, ERR_NOT_FOUND, ERR_IO. */
int auth_key_set_refuse_legacy(struct db *db, const char *key, bool refuse);
/* All keys (no secrets), oldest first: [{"id", "key", "level", "user",
 * "refuse_legacy", "t_created", "t_expiration"}]. 0, ERR_IO, ERR_NOMEM. */
int auth_keys_all(struct db *db, json_t **out);

/* Create a key (admin or operator) with fresh random key and secret
 * (uppercase hex, AUTH_KEY_LEN chars). 0, ERR_IO or the db's error. */
int auth_key_new(struct db *db, bool admin, char key[AUTH_KEY_LEN + 1], char secret[AUTH_KEY_LEN + 1]);

/* Create a key of user user_id (> 0; the level follows the user's role
 * from then on) or, with user_id 0, a key of its own at level. *id: its
 * row. 0, ERR_TOO_BIG (the user holds AUTH_USER_KEYS_MAX keys), ERR_IO. */
int auth_key_create(struct db *db, enum auth_level level, int64_t user_id, char key[AUTH_KEY_LEN + 1],
		    char secret[AUTH_KEY_LEN + 1], int64_t *id);
/* The keys of user user_id, newest first, secrets left out:
 * [{"id", "key", "t_created", "t_expiration", "refuse_legacy"}] (new array in *out).
 * 0, ERR_IO or ERR_NOMEM. */
int auth_keys_list(struct db *db, int64_t user_id, json_t **out);
/* Delete key id if user user_id owns it; its key text into key.
 * 0, ERR_NOT_FOUND (no such key of this user), ERR_IO. */
int auth_key_revoke(struct db *db, int64_t user_id, int64_t id, char key[AUTH_KEY_LEN + 1]);
/* The name of the user owning key into name. 0, ERR_NOT_FOUND (no such key
 * or no owner), ERR_IO. */
int auth_key_owner(struct db *db, const char *key, char *name, size_t len);

#endif
