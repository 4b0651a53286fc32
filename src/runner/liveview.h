/* SPDX-License-Identifier: MIT */
/* liveview.h - frames for the live view of a running job. While the file
 * OUT/live.on exists (a worker creates it when someone watches), the newest
 * screen is written as OUT/live.png at most every LIVEVIEW_INTERVAL_MS,
 * atomically (file_write_all), for the worker to upload.
 * Costs one stat() per interval while nobody watches. */
#ifndef VIGIL_LIVEVIEW_H
#define VIGIL_LIVEVIEW_H

#include "vm/vnc.h"

#define LIVEVIEW_INTERVAL_MS 400
#define LIVEVIEW_ON_FILE "live.on"
#define LIVEVIEW_PNG_FILE "live.png"

struct liveview;

/* Start the writer thread for out_dir (borrowed v must outlive it).
 * 0, ERR_NOMEM or -errno. */
int liveview_start(struct vnc *v, const char *out_dir, struct liveview **out);
/* Stop and join the thread; removes live.png. NULL-safe. */
void liveview_stop(struct liveview *l);
/* One pass of the thread's loop (for tests): writes live.png when live.on
 * exists and the newest frame is not the one last written. Returns 1 when
 * it wrote, 0 when not, negative on a write error. */
int liveview_tick(struct liveview *l);

#endif
