/* SPDX-License-Identifier: MIT */
/* alloc_fail.h - allocation-failure injection for the unit binary: the
 * link wraps malloc, calloc, realloc, strdup and strndup (-Wl,--wrap, see
 * the Makefile), so every allocation vigil's own code makes (and jansson's,
 * routed here while armed) can be made to fail. Not for other binaries. */
#ifndef VIGIL_UNIT_ALLOC_FAIL_H
#define VIGIL_UNIT_ALLOC_FAIL_H

#include <stdbool.h>

/* From now on, count allocations and fail the nth (1-based) only. */
void alloc_fail_arm(long nth);
/* Stop counting; whether the nth allocation came (and failed). */
bool alloc_fail_disarm(void);

#endif
