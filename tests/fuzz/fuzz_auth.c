/* SPDX-License-Identifier: MIT */
/* fuzz_auth.c - the signature headers (X-API-Microtime, X-API-Hash) and the
 * signed target as auth_verify checks them: the input is
 * "SECRET\0TARGET\0MICROTIME\0HASH". */
#include "fuzz.h"
#include "server/store/auth.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *part[4], *s = fuzz_fields(data, size, part, 4), msg[512];

	(void)auth_verify(part[0], part[1], part[2], part[3], 1712345678.0, msg, sizeof(msg));
	free(s);
	return 0;
}
