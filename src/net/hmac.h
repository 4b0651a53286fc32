/* SPDX-License-Identifier: MIT */
/* hmac.h - openQA's API request signature, shared by the clients that sign
 * and the server that checks: X-API-Hash = lowercase hex
 * HMAC-SHA1(secret, request target as sent + X-API-Microtime text).
 * Pure computation: no keys are stored or looked up here. */
#ifndef VIGIL_NET_HMAC_H
#define VIGIL_NET_HMAC_H

#include <stdbool.h>

#define HMAC_HEX_LEN 40              /* hex characters of a signature (SHA-1) */
#define LIMIT_HMAC_TARGET (64u << 10) /* bytes of target + microtime signed */

/* The signature of target (path + query, exactly as on the wire) and
 * microtime (the header text, hashed verbatim) under secret, into out.
 * 0, or ERR_TOO_BIG (target over LIMIT_HMAC_TARGET)/ERR_NOMEM/ERR_IO with
 * out set to "". */
int hmac_sign(const char *secret, const char *target, const char *microtime, char out[HMAC_HEX_LEN + 1]);

/* True when hash is the signature of target and microtime under secret,
 * compared in constant time; false for a NULL or empty secret or hash. */
bool hmac_verify(const char *secret, const char *target, const char *microtime, const char *hash);

#endif
