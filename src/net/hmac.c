/* SPDX-License-Identifier: MIT */
/* hmac.c - openQA's request signature over OpenSSL's HMAC-SHA1, as
 * Shared/Controller/Auth.pm _valid_hmac checks it. Hashes the target as
 * given, never decoding it; owns nothing beyond one bounded buffer. */
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
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
