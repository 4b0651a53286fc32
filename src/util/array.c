/* SPDX-License-Identifier: MIT */
/* array.c - growing a caller's array by doubling (array.h). Owns nothing:
 * the array stays the caller's. */
#include <stdlib.h>
#include <string.h>
#include "util/array.h"
#include "util/err.h"
#include "util/banned.h" /* last: after every system header */

int array_grow(void *arrp, size_t *cap, size_t n, size_t size, size_t first)
{
	size_t want, bytes;
	void *old, *nw;

	if (n < *cap)
		return 0;
	want = *cap ? *cap : (first ? first : 1);
	if (*cap && __builtin_mul_overflow(*cap, 2, &want))
		return ERR_NOMEM;
	if (__builtin_mul_overflow(want, size, &bytes))
		return ERR_NOMEM;
	/* The caller's pointer is a T *, not a void *: read and written as bytes. */
	memcpy(&old, arrp, sizeof(old));
	if (!(nw = realloc(old, bytes)))
		return ERR_NOMEM;
	memcpy(arrp, &nw, sizeof(nw));
	*cap = want;
	return 0;
}
