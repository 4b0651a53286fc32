/* SPDX-License-Identifier: MIT */
/* str.c - string helpers: a copy that aborts on exhaustion (small strings
 * in short-lived commands), prefix and suffix tests, whole-string number
 * parsing. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "util/err.h"
#include "util/str.h"
#include "util/banned.h" /* last: after every system header */

char *str_dup(const char *s)
{
	char *p = strdup(s ? s : "");
	if (!p)
		abort();
	return p;
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
