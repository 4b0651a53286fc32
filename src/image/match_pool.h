/* SPDX-License-Identifier: MIT */
/* match_pool.h - the needle search's worker pool, internal to the image
 * module (see match_pool.c). */
#ifndef VIGIL_MATCH_POOL_H
#define VIGIL_MATCH_POOL_H

#include <stdint.h>

/* Take the pool for a search that wants n threads; returns how many it
 * may use (1: none, the pool is busy, has no workers, could not start
 * any or belongs to the parent of a fork). A return > 1 must be followed
 * by match__pool_put. */
int match__pool_take(int n);
void match__pool_put(void);

/* fn(arg, id) on id 0 on the calling thread and on ids 1..n - 1 by the
 * workers that claim them in time (n <= match__pool_take's); returns when
 * all are done, their writes visible to the caller. fn must do all the
 * work whichever ids run. */
void match__pool_run(void (*fn)(void *, int), void *arg, int n);

#endif
