/* SPDX-License-Identifier: MIT */
/* hmac.h - the API request signatures, shared by the clients that sign
 * and the server that checks. Legacy (openQA's): X-API-Hash = lowercase hex
 * HMAC-SHA1(secret, request target as sent + X-API-Microtime text).
 * Scheme 2 (vigil's own worker and client): X-API-Signature = lowercase hex
 * HMAC-SHA256(secret, "vigil-hmac-2" LF method LF target LF microtime LF
 * nonce LF body-sha256), with X-API-Nonce (random, >= 128 bits, hex) and
 * X-API-Content-SHA256 (hex SHA-256 of the body as sent).
 * Pure computation: no keys or nonces are stored or looked up here. */
#ifndef VIGIL_NET_HMAC_H
#define VIGIL_NET_HMAC_H

#include <stdbool.h>
#include <stddef.h>

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

#define HMAC2_HEX_LEN 64       /* hex characters of a scheme-2 signature and of a body hash */
#define HMAC2_NONCE_MIN 32     /* hex characters of a nonce: 128 bits at least ... */
#define HMAC2_NONCE_MAX 64     /* ... 256 at most */

/* Lowercase hex SHA-256 of len bytes at data into out. 0 or ERR_IO. */
int hmac_sha256_hex(const void *data, size_t len, char out[HMAC2_HEX_LEN + 1]);
/* A fresh nonce: HMAC2_NONCE_MIN lowercase hex characters from the
 * system's random source. 0 or ERR_IO. */
int hmac2_nonce(char out[HMAC2_NONCE_MIN + 1]);
/* Whether s is a nonce as scheme 2 takes it (HMAC2_NONCE_MIN to
 * HMAC2_NONCE_MAX lowercase hex characters). */
bool hmac2_nonce_ok(const char *s);
/* HMAC-SHA256 of len bytes at data under keylen bytes of key, raw, into
 * out. 0 or ERR_IO. */
#define HMAC_SHA256_LEN 32
int hmac_sha256(const void *key, size_t keylen, const void *data, size_t len, unsigned char out[HMAC_SHA256_LEN]);
/* Whether n bytes at a and b are equal, compared in constant time. */
bool hmac_equal(const void *a, const void *b, size_t n);
/* n bytes from the system's random source into out. 0 or ERR_IO. */
int hmac_random(void *out, size_t n);
/* Whether s is HMAC2_HEX_LEN lowercase hex characters. */
bool hmac2_hex_ok(const char *s);
/* The scheme-2 signature of method, target (as on the wire), microtime
 * (verbatim), nonce and body_sha256 (hex) under secret, into out. 0,
 * ERR_TOO_BIG (target over LIMIT_HMAC_TARGET), ERR_NOMEM or ERR_IO with
 * out set to "". */
int hmac2_sign(const char *secret, const char *method, const char *target, const char *microtime,
	       const char *nonce, const char *body_sha256, char out[HMAC2_HEX_LEN + 1]);
/* True when sig is the scheme-2 signature of the rest under secret,
 * compared in constant time; false for a NULL or empty secret or sig. */
bool hmac2_verify(const char *secret, const char *method, const char *target, const char *microtime,
		  const char *nonce, const char *body_sha256, const char *sig);

#endif
