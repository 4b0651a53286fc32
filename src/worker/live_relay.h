/* SPDX-License-Identifier: MIT */
/* live_relay.h - the worker's side of the live view: switch the runner's
 * frame writer on and off (OUT/live.on, see runner/liveview.h) as the server's
 * status replies say, and relay a new frame into the next status post
 * (openQA's status.screen: {"name", "png": base64}). */
#ifndef VIGIL_WORKER_LIVE_RELAY_H
#define VIGIL_WORKER_LIVE_RELAY_H

#include <jansson.h>
#include <stdbool.h>
#include <sys/types.h>

/* Status posts while someone watches: at least two frames a second. */
#define LIVE_RELAY_INTERVAL_S 0.4
/* A frame bigger than this is skipped (the server takes 1 MiB bodies). */
#define LIVE_RELAY_FRAME_MAX (700u << 10)

struct live_relay {
	bool on;
	struct timespec sent;  /* mtime of the last frame sent */
};

/* Follow the server: on creates out_dir/live.on, off removes it. */
void live_relay_set(struct live_relay *l, const char *out_dir, bool on);
/* While on: {"name": "live.png", "png": base64} of out_dir/live.png when it
 * changed since the last one sent, else NULL. New reference. */
json_t *live_relay_frame(struct live_relay *l, const char *out_dir);

#endif
