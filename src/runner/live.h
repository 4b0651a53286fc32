/* SPDX-License-Identifier: MIT */
/* live.h - frames for the live view of a running job. While the file
 * OUT/live.on exists (a worker creates it when someone watches), the newest
 * screen is written as OUT/live.png at most every LIVE_INTERVAL_MS,
 * atomically (file_write_all), for the worker to upload.
 * Costs one stat() per interval while nobody watches. */
#ifndef VIGIL_LIVE_H
#define VIGIL_LIVE_H

#include "vm/vnc.h"

#define LIVE_INTERVAL_MS 400
#define LIVE_ON_FILE "live.on"
#define LIVE_PNG_FILE "live.png"

struct live;

/* Start the writer thread for out_dir (borrowed v must outlive it).
 * 0, ERR_NOMEM or -errno. */
int live_start(struct vnc *v, const char *out_dir, struct live **out);
/* Stop and join the thread; removes live.png. NULL-safe. */
void live_stop(struct live *l);
/* One pass of the thread's loop (for tests): writes live.png when live.on
 * exists and the newest frame is not the one last written. Returns 1 when
 * it wrote, 0 when not, negative on a write error. */
int live_tick(struct live *l);

#endif
