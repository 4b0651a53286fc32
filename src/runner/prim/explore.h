/* SPDX-License-Identifier: MIT */
/* explore.h - `vigil run --explore`: every distinct screen of the run
 * (distinct by wait_still_screen's test, screen_changed) saved as
 * DIR/NNNN-SECONDS.png (video time, as the steps' frametimes) and listed
 * in DIR/index.txt with the module and step running when it was captured,
 * so screens that flash by can be looked at and cut into needles. The
 * capture thread only queues frames; comparing and PNG encoding happen on
 * explore's own thread. */
#ifndef VIGIL_EXPLORE_H
#define VIGIL_EXPLORE_H

#include "vm/vnc.h"

#define EXPLORE_QUEUE_MAX 16      /* frames waiting for the thread; more are dropped */
#define EXPLORE_MAX_FRAMES 9999   /* frames saved at most */
#define EXPLORE_NUDGE_MS 100      /* QEMU's refresh timer reset, so short screens reach VNC */
#define EXPLORE_INDEX "index.txt"

struct explore;

/* Start saving v's distinct frames into dir (created; borrowed string
 * copied); t0 is time_mono() of video time 0. Registers a frame listener
 * on v, so explore_stop must come after vnc_close. *out is the caller's.
 * 0, ERR_NOMEM, ERR_TOO_BIG (no listener slot left), -errno. */
int explore_start(struct vnc *v, const char *dir, double t0, struct explore **out);

/* What the job does now (copied; any thread; NULL-safe): the module, its
 * steps so far and the progress text, for the index lines of the frames
 * captured from now on. */
void explore_note(struct explore *e, const char *module, int step, const char *what);

/* Stop touching v (no more nudges); call before vnc_close. NULL-safe. */
void explore_detach(struct explore *e);

/* After vnc_close: save what is queued, stop the thread, free. Returns the
 * number of frames saved. NULL-safe (0). */
long explore_stop(struct explore *e);

#endif
