/* SPDX-License-Identifier: MIT */
/* auth.h - openQA's API authentication: X-API-Key, X-API-Microtime and
 * X-API-Hash (the signature of net/hmac.h), accepted within
 * AUTH_TIME_TOLERANCE seconds; API keys: creation, and the keys a signed-in
 * user owns (a key of a user acts with the user's role). Owns the api_keys
 * table. */
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

/* Create a key (admin or operator) with fresh random key and secret
 * (uppercase hex, AUTH_KEY_LEN chars). 0, ERR_IO or the db's error. */
int auth_key_new(struct db *db, bool admin, char key[AUTH_KEY_LEN + 1], char secret[AUTH_KEY_LEN + 1]);

/* Create a key of user user_id (> 0; the level follows the user's role
 * from then on) or, with user_id 0, a key of its own at level. *id: its
 * row. 0, ERR_TOO_BIG (the user holds AUTH_USER_KEYS_MAX keys), ERR_IO. */
int auth_key_create(struct db *db, enum auth_level level, int64_t user_id, char key[AUTH_KEY_LEN + 1],
		    char secret[AUTH_KEY_LEN + 1], int64_t *id);
/* The keys of user user_id, newest first, secrets left out:
 * [{"id", "key", "t_created", "t_expiration"}] (new array in *out).
 * 0, ERR_IO or ERR_NOMEM. */
int auth_keys_list(struct db *db, int64_t user_id, json_t **out);
/* Delete key id if user user_id owns it; its key text into key.
 * 0, ERR_NOT_FOUND (no such key of this user), ERR_IO. */
int auth_key_revoke(struct db *db, int64_t user_id, int64_t id, char key[AUTH_KEY_LEN + 1]);
/* The name of the user owning key into name. 0, ERR_NOT_FOUND (no such key
 * or no owner), ERR_IO. */
int auth_key_owner(struct db *db, const char *key, char *name, size_t len);

#endif
