/* SPDX-License-Identifier: MIT */
/* liveview.h - frames for the live view of a running job. While the file
 * OUT/live.on exists (a worker creates it when someone watches), a thread
 * writes each new screen as OUT/live.png (at most one every
 * LIVEVIEW_MIN_GAP_MS, within LIVEVIEW_POLL_MS of its capture) and then
 * OUT/live.json: {"seq", "t": wall ms of the capture, "w": wall ms once
 * written, "module", "step", "line", "what"} (the runner's latest progress
 * note), both atomically, for the worker to send. It also keeps QEMU's
 * display refresh fast (vnc_nudge) so a change reaches VNC at once.
 * Costs one stat() per LIVEVIEW_INTERVAL_MS while nobody watches. */
#ifndef VIGIL_LIVEVIEW_H
#define VIGIL_LIVEVIEW_H

#include "vm/vnc.h"

#define LIVEVIEW_INTERVAL_MS 250   /* looking for live.on while off */
#define LIVEVIEW_POLL_MS 40        /* looking for a new frame while on */
#define LIVEVIEW_MIN_GAP_MS 100    /* between two frames written: at most 10 a second */
#define LIVEVIEW_NUDGE_MS 100      /* QEMU's refresh timer reset while on */
#define LIVEVIEW_ON_FILE "live.on"
#define LIVEVIEW_PNG_FILE "live.png"
#define LIVEVIEW_JSON_FILE "live.json"

struct liveview;

/* Start the writer thread for out_dir (borrowed v must outlive it).
 * 0, ERR_NOMEM or -errno. */
int liveview_start(struct vnc *v, const char *out_dir, struct liveview **out);
/* Stop and join the thread; removes live.png and live.json. NULL-safe. */
void liveview_stop(struct liveview *l);
/* Note what the job does now (copied; any thread; l NULL-safe): the
 * module, its steps so far, the module file's line and a progress text.
 * Written to live.json by the thread while on. */
void liveview_note(struct liveview *l, const char *module, int step, int line, const char *what);
/* One pass of the thread's loop (for tests): writes live.png when live.on
 * exists and the newest frame is not the one last written, and live.json
 * when either changed. Returns 1 when it wrote the frame, 0 when not,
 * negative on a write error. */
int liveview_tick(struct liveview *l);

#endif
