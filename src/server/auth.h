/* SPDX-License-Identifier: MIT */
/* auth.h - openQA's API authentication: X-API-Key, X-API-Microtime and
 * X-API-Hash (the signature of net/hmac.h), accepted within
 * AUTH_TIME_TOLERANCE seconds; API key creation. */
#ifndef VIGIL_AUTH_H
#define VIGIL_AUTH_H

#include <stdbool.h>
#include <stddef.h>

struct db;

#define AUTH_TIME_TOLERANCE 300.0
#define AUTH_KEY_LEN 16 /* hex characters of a key and of a secret, as openQA */

enum auth_level {
	AUTH_PUBLIC = 0,  /* no key needed */
	AUTH_OPERATOR,    /* any valid key: jobs, isos */
	AUTH_ADMIN,       /* an admin key: tables, groups, templates */
};

/* Check one signed request against a known secret at time now (seconds
 * since the epoch): microtime is the header text (integer or float seconds)
 * and is hashed verbatim. 0, or ERR_INVALID with openQA's reason text in msg. */
int auth_verify(const char *secret, const char *target, const char *microtime, const char *hash, double now,
		char *msg, size_t msglen);

/* Look the key up and verify the request; 0 and *level, or ERR_INVALID with
 * the reason in msg (unknown key, expired, wrong hash, stale time). */
int auth_check(struct db *db, const char *key, const char *microtime, const char *hash, const char *target,
	       double now, enum auth_level *level, char *msg, size_t msglen);

/* Create a key (admin or operator) with fresh random key and secret
 * (uppercase hex, AUTH_KEY_LEN chars). 0, ERR_IO or the db's error. */
int auth_key_new(struct db *db, bool admin, char key[AUTH_KEY_LEN + 1], char secret[AUTH_KEY_LEN + 1]);

#endif
