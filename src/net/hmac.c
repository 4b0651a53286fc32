/* SPDX-License-Identifier: MIT */
/* hmac.c - openQA's request signature over OpenSSL's HMAC-SHA1, as
 * Shared/Controller/Auth.pm _valid_hmac checks it, and vigil's scheme 2
 * (HMAC-SHA256 over method, target, time, nonce and body hash), and the
 * raw HMAC-SHA256 and random bytes of the relay hubs' handshake
 * (worker/nethub.c). Hashes the
 * target as given, never decoding it; owns nothing beyond one bounded
 * buffer. */
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <openssl/sha.h>
#include <stdio.h>
#include <string.h>
#include "net/hmac.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/banned.h" /* last: after every system header */

int hmac_sign(const char *secret, const char *target, const char *microtime, char out[HMAC_HEX_LEN + 1])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0, i;
	struct buf msg;
	int rc;

	buf_init(&msg, LIMIT_HMAC_TARGET);
	out[0] = '\0';
	if ((rc = buf_puts(&msg, target)) || (rc = buf_puts(&msg, microtime)))
		goto out;
	if (!HMAC(EVP_sha1(), secret, (int)strlen(secret), (const unsigned char *)msg.data, msg.len, md, &mdlen) ||
	    mdlen * 2 != HMAC_HEX_LEN) {
		rc = ERR_IO;
		goto out;
	}
	for (i = 0; i < mdlen; i++)
		snprintf(out + 2 * i, 3, "%02x", md[i]);
out:
	buf_release(&msg);
	return rc;
}

bool hmac_verify(const char *secret, const char *target, const char *microtime, const char *hash)
{
	char want[HMAC_HEX_LEN + 1];

	if (!secret || !*secret || !hash || strlen(hash) != HMAC_HEX_LEN ||
	    hmac_sign(secret, target, microtime, want))
		return false;
	return CRYPTO_memcmp(want, hash, HMAC_HEX_LEN) == 0;
}

static void hex(const unsigned char *md, size_t n, char *out)
{
	size_t i;

	for (i = 0; i < n; i++) {
		out[2 * i] = "0123456789abcdef"[md[i] >> 4];
		out[2 * i + 1] = "0123456789abcdef"[md[i] & 15];
	}
	out[2 * n] = '\0';
}

int hmac_sha256_hex(const void *data, size_t len, char out[HMAC2_HEX_LEN + 1])
{
	unsigned char md[SHA256_DIGEST_LENGTH];

	out[0] = '\0';
	if (!SHA256(data ? data : (const void *)"", len, md))
		return ERR_IO;
	hex(md, sizeof(md), out);
	return 0;
}

int hmac2_nonce(char out[HMAC2_NONCE_MIN + 1])
{
	unsigned char raw[HMAC2_NONCE_MIN / 2];

	out[0] = '\0';
	if (RAND_bytes(raw, (int)sizeof(raw)) != 1)
		return ERR_IO;
	hex(raw, sizeof(raw), out);
	return 0;
}

int hmac_sha256(const void *key, size_t keylen, const void *data, size_t len, unsigned char out[HMAC_SHA256_LEN])
{
	unsigned int mdlen = 0;

	if (keylen > 1024 || !HMAC(EVP_sha256(), key, (int)keylen, data, len, out, &mdlen) ||
	    mdlen != HMAC_SHA256_LEN)
		return ERR_IO;
	return 0;
}

bool hmac_equal(const void *a, const void *b, size_t n)
{
	return CRYPTO_memcmp(a, b, n) == 0;
}

int hmac_random(void *out, size_t n)
{
	return n <= 4096 && RAND_bytes(out, (int)n) == 1 ? 0 : ERR_IO;
}

static bool lower_hex(const char *s, size_t min, size_t max)
{
	size_t n = 0;

	if (!s)
		return false;
	for (; s[n]; n++)
		if (!((s[n] >= '0' && s[n] <= '9') || (s[n] >= 'a' && s[n] <= 'f')) || n >= max)
			return false;
	return n >= min;
}

bool hmac2_nonce_ok(const char *s)
{
	return lower_hex(s, HMAC2_NONCE_MIN, HMAC2_NONCE_MAX);
}

bool hmac2_hex_ok(const char *s)
{
	return lower_hex(s, HMAC2_HEX_LEN, HMAC2_HEX_LEN);
}

int hmac2_sign(const char *secret, const char *method, const char *target, const char *microtime,
	       const char *nonce, const char *body_sha256, char out[HMAC2_HEX_LEN + 1])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;
	struct buf msg;
	int rc;

	buf_init(&msg, LIMIT_HMAC_TARGET + 512);
	out[0] = '\0';
	if (strlen(target) > LIMIT_HMAC_TARGET)
		return ERR_TOO_BIG;
	rc = buf_printf(&msg, "vigil-hmac-2\n%s\n%s\n%s\n%s\n%s", method, target, microtime, nonce, body_sha256);
	if (rc)
		goto out;
	if (!HMAC(EVP_sha256(), secret, (int)strlen(secret), (const unsigned char *)msg.data, msg.len, md, &mdlen) ||
	    mdlen * 2 != HMAC2_HEX_LEN) {
		rc = ERR_IO;
		goto out;
	}
	hex(md, mdlen, out);
out:
	buf_release(&msg);
	return rc;
}

bool hmac2_verify(const char *secret, const char *method, const char *target, const char *microtime,
		  const char *nonce, const char *body_sha256, const char *sig)
{
	char want[HMAC2_HEX_LEN + 1];

	if (!secret || !*secret || !sig || strlen(sig) != HMAC2_HEX_LEN || !method || !target || !microtime ||
	    !nonce || !body_sha256 || hmac2_sign(secret, method, target, microtime, nonce, body_sha256, want))
		return false;
	return CRYPTO_memcmp(want, sig, HMAC2_HEX_LEN) == 0;
}
