/* SPDX-License-Identifier: MIT */
/* screen.h - screen checks of the running job: assert/check_screen over
 * every changed frame, stillness and change waits, step screenshots. */
#ifndef VIGIL_SCREEN_H
#define VIGIL_SCREEN_H

#include <stdint.h>
#include <jansson.h>
#include "runner/core/job.h"

/* PSNR thresholds (dB), as os-autoinst. */
#define SCREEN_CHANGE_LEVEL 50.0
#define SCREEN_STILL_LEVEL  47.0

/* Look for a needle carrying one of the tag expressions (OR; each
 * expression space-separated AND) on every changed frame until timeout
 * seconds (already scaled) pass. timeout 0 = one check of the current screen.
 * Records the step (screenshot + match, or the failure with candidates; for
 * check_screen a failure is recorded as "unk").
 * Returns 1 matched (*match = new reference to the match object: needle,
 * area[], tags...), 0 not matched, or negative when the VM is gone.
 * On a non-match *near_miss tells whether the best candidate came close. */
int screen_check(struct runner *r, const char *const *tags, size_t ntags, double timeout,
		 int is_assert, json_t **match, int *near_miss);

/* One whole-image search of f (not a screen: a recorded sound's
 * spectrogram) for the tags, recorded as screen_check records its last
 * search. Returns 1 matched (*match as screen_check's), 0 not, or
 * ERR_NOMEM. */
int screen_check_frame(struct runner *r, struct frame *f, const char *const *tags, size_t ntags, int is_assert,
		       json_t **match, int *near_miss);

/* wait_still_screen's test of a change: whether frame f differs from ref
 * by a PSNR under level (ref NULL: always). --explore keeps the frames
 * that pass it (explore.c), so "distinct" means the same in both. */
int screen_changed(const struct frame *ref, const struct frame *f, double level);

/* Wait until the screen stays still (PSNR >= level vs the reference) for
 * stilltime seconds. 1 still, 0 timed out, negative VM gone or QEMU
 * stopped when it ended (runner__vm_frozen: the job ends incomplete
 * naming api, the test API name, e.g. "wait_still_screen"). */
int screen_wait_still(struct runner *r, const char *api, double stilltime, double timeout, double level);

/* The current frame, referenced (release with frame_unref); it may be
 * NULL before the first frame arrived. */
struct frame *screen_current(struct runner *r);
/* Wait for a frame after ref that differs from it by PSNR < level (ref
 * NULL: any frame). 1 changed (*sim = its PSNR), 0 timed out, negative VM
 * gone or QEMU stopped when it ran out (runner__vm_frozen, naming api,
 * e.g. "send_key's wait_screen_change"). */
int screen_wait_change(struct runner *r, const char *api, struct frame *ref, double timeout, double level,
		       double *sim);

/* A failed screen kept during a check, as os-autoinst's backend keeps
 * them for check_screen's time-out reply (backend/baseclass.pm): a
 * whole-screen search that found nothing, on a frame that differs from the
 * previous one kept by a PSNR under SCREEN_FAIL_LEVEL. */
struct screen_fail {
	struct frame *f;  /* referenced */
	json_t *cands;    /* candidate objects, as r->check_cands */
	double t;         /* time_mono() of the search */
	double sim;       /* PSNR against the previous one kept */
};
#define SCREEN_FAIL_LEVEL 30.0
#define SCREEN_FAIL_MAX 20

/* Keep f and its candidates (referenced here) in r->check_fails as the
 * last one, with sim against the previous; then reduce the list to
 * os-autoinst's limit. 0 or ERR_NOMEM. */
int screen_fails_add(struct runner *r, struct frame *f, json_t *cands, double sim);
/* os-autoinst's _reduce_to_biggest_changes: keep the first and the limit
 * entries of highest similarity to their predecessor, in time order, and
 * recompute each one's similarity to the one before. */
void screen_fails_reduce(struct runner *r, size_t limit);
/* Release r->check_fails. */
void screen_fails_clear(struct runner *r);
/* Perl's checks search the whole screen when os-autoinst's would, so that
 * they keep the same failed screens: its check, once a second, searches
 * the whole screen when the whole seconds left are a multiple of 5
 * (FULL_SCREEN_SEARCH_FREQUENCY), so once in each second [5j, 5j + 1)
 * left before the deadline. The first window j of a check from t0 to
 * deadline (-1: none), and when window win starts (never before t0; the
 * deadline once win < 0). Internal, exported for the unit tests. */
int screen__first_window(double t0, double deadline);
double screen__window_start(double t0, double deadline, int win);

/* Free the prepared screen kept from the last search (r->screen). */
void screen_release(struct runner *r);

/* Record the current screen as a step with the given result ("unk", "ok",
 * "fail"). 0 or negative. */
int screen_save_step(struct runner *r, const char *result);

#endif
