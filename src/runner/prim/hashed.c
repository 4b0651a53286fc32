/* SPDX-License-Identifier: MIT */
/* hashed.c - os-autoinst's hashed_string (md5, base64 with '_' and '~'):
 * a pure function of its bytes, shared by the Lua test API and the
 * command server. */
#include <openssl/evp.h>
#include <string.h>
#include "runner/prim/hashed.h"
#include "util/err.h"
#include "util/banned.h" /* last: after every system header */

int hashed_string(const char *s, size_t len, size_t count, char *out)
{
	static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_~";
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;
	char all[24];
	size_t i, o = 0;

	if (!EVP_Digest(s, len, md, &mdlen, EVP_md5(), NULL) || mdlen != 16)
		return ERR_IO;
	for (i = 0; i < 16; i += 3) {
		unsigned v = (unsigned)md[i] << 16 | (i + 1 < 16 ? (unsigned)md[i + 1] << 8 : 0) |
			     (i + 2 < 16 ? md[i + 2] : 0);
		all[o++] = b64[v >> 18 & 63];
		all[o++] = b64[v >> 12 & 63];
		if (i + 1 < 16)
			all[o++] = b64[v >> 6 & 63];
		if (i + 2 < 16)
			all[o++] = b64[v & 63];
	}
	if (count > o)
		count = o;
	memcpy(out, all, count);
	out[count] = '\0';
	return 0;
}
