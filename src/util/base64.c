/* SPDX-License-Identifier: MIT */
/* base64.c - base64 decoding with OpenSSL's EVP decoder in 4 KiB steps
 * (see base64.h). */
#include <openssl/evp.h>
#include "util/base64.h"
#include "util/err.h"
#include "util/banned.h" /* last: after every system header */

int base64_decode(const char *in, size_t len, struct buf *out)
{
	EVP_ENCODE_CTX *ctx = EVP_ENCODE_CTX_new();
	unsigned char chunk[4096 + 64];
	size_t off = 0;
	int n, rc = 0;

	if (!ctx)
		return ERR_NOMEM;
	EVP_DecodeInit(ctx);
	while (off < len && !rc) {
		int take = len - off > 4096 ? 4096 : (int)(len - off);
		if (EVP_DecodeUpdate(ctx, chunk, &n, (const unsigned char *)in + off, take) < 0)
			rc = ERR_PROTO;
		else
			rc = buf_append(out, chunk, (size_t)n);
		off += (size_t)take;
	}
	if (!rc) {
		if (EVP_DecodeFinal(ctx, chunk, &n) < 0)
			rc = ERR_PROTO;
		else
			rc = buf_append(out, chunk, (size_t)n);
	}
	EVP_ENCODE_CTX_free(ctx);
	return rc;
}
