/* SPDX-License-Identifier: MIT */
/* live_relay.h - the worker's side of the live view: switch the runner's
 * frame writer on and off (OUT/live.on, see runner/prim/liveview.h) as the
 * server's replies say, and while on turn what changed since the last
 * post - the runner's newest frame (OUT/live.png), its note
 * (OUT/live.json: module, step, line, what) and the new lines of the
 * runner's output - into the body of one POST /api/v1/jobs/<id>/live, sent
 * at once (the worker looks every LIVE_RELAY_NAP_MS). With nothing new
 * (and while off), an empty post every LIVE_RELAY_CHECK_S asks whether
 * someone watches now and brings developer mode's commands (dev_relay.h).
 * The openQA status posts stay as they were, every 5 s, without frames. */
#ifndef VIGIL_WORKER_LIVE_RELAY_H
#define VIGIL_WORKER_LIVE_RELAY_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

/* Without news: how often the worker asks whether someone watches. */
#define LIVE_RELAY_CHECK_S 1.0
/* While on: how often the worker looks for a new frame. */
#define LIVE_RELAY_NAP_MS 30
/* A frame bigger than this is skipped (the server takes 1 MiB bodies). */
#define LIVE_RELAY_FRAME_MAX (700u << 10)
/* The runner output sent in one post at most (older lines are skipped),
 * and what a viewer sees first when the live view starts. */
#define LIVE_RELAY_LOG_MAX (16u << 10)

struct live_relay {
	bool on;
	double next_check;          /* monotonic: the next empty post while off */
	struct timespec note_mtime; /* live.json as last read */
	uint64_t sent_seq;          /* the frame last sent */
	off_t log_pos;              /* runner output bytes sent */
};

/* Follow the server: on creates out_dir/live.on (and stays off while
 * out_dir is not there yet), off removes it. Turning on starts the
 * output from its last LIVE_RELAY_LOG_MAX bytes of log. */
void live_relay_set(struct live_relay *l, const char *out_dir, const char *log, bool on);
/* While on: the body of a live post with what changed since the last
 * call - {"frame": {"png": base64, "seq", "t", "w"}, "module", "step",
 * "line", "what", "log": text} (each part only when new) - or NULL when
 * nothing did. New reference. */
json_t *live_relay_update(struct live_relay *l, const char *out_dir, const char *log);

#endif
