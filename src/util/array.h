/* SPDX-License-Identifier: MIT */
/* array.h - growing a caller's array of fixed-size elements: the capacity
 * doubles when it is full, the size checked for overflow. The caller owns
 * the array and frees it; this only moves it. */
#ifndef VIGIL_UTIL_ARRAY_H
#define VIGIL_UTIL_ARRAY_H

#include <stddef.h>

/* Room for one element more in the array at *arrp (arrp: the address of
 * the caller's T * pointer), which holds n elements of size bytes in room
 * for *cap: when n == *cap, *cap doubles (to first when it is 0) and the
 * array moves. 0, or ERR_NOMEM (also when the bytes would overflow
 * size_t); *arrp and *cap are unchanged then. */
int array_grow(void *arrp, size_t *cap, size_t n, size_t size, size_t first);

#endif
