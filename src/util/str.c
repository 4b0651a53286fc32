/* SPDX-License-Identifier: MIT */
/* str.c - string helpers: a copy (NULL when memory is exhausted), prefix
 * and suffix tests, whole-string number parsing, UTF-8 validity. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "util/err.h"
#include "util/str.h"
#include "util/banned.h" /* last: after every system header */

char *str_dup(const char *s)
{
	return strdup(s ? s : "");
}

bool str_ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);
	return a >= b && memcmp(s + a - b, suffix, b) == 0;
}

bool str_starts_with(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

int str_to_long(const char *s, long *out)
{
	char *end;
	long v;
	if (!s || !*s)
		return ERR_INVALID;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end)
		return ERR_INVALID;
	*out = v;
	return 0;
}

int str_to_double(const char *s, double *out)
{
	char *end;
	double v;
	if (!s || !*s)
		return ERR_INVALID;
	errno = 0;
	v = strtod(s, &end);
	if (errno || *end)
		return ERR_INVALID;
	*out = v;
	return 0;
}

bool str_utf8_valid(const char *s, size_t len, size_t *bad)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0;

	while (i < len) {
		unsigned c = u[i];
		size_t n, k;
		unsigned lo = 0x80, hi = 0xbf; /* range of the second byte */

		if (c < 0x80) {
			i++;
			continue;
		}
		if (c >= 0xc2 && c <= 0xdf) {
			n = 1;
		} else if (c >= 0xe0 && c <= 0xef) {
			n = 2;
			if (c == 0xe0)
				lo = 0xa0; /* overlong */
			else if (c == 0xed)
				hi = 0x9f; /* surrogates */
		} else if (c >= 0xf0 && c <= 0xf4) {
			n = 3;
			if (c == 0xf0)
				lo = 0x90; /* overlong */
			else if (c == 0xf4)
				hi = 0x8f; /* above U+10FFFF */
		} else {
			goto fail;
		}
		if (len - i <= n || u[i + 1] < lo || u[i + 1] > hi)
			goto fail;
		for (k = 2; k <= n; k++)
			if ((u[i + k] & 0xc0) != 0x80)
				goto fail;
		i += n + 1;
	}
	return true;
fail:
	if (bad)
		*bad = i;
	return false;
}
