/* SPDX-License-Identifier: MIT */
/* dev_relay.h - the worker's side of developer mode (docs/devmode.md):
 * notice when the runner's developer state (OUT/.devmode.json) changes,
 * for the next live post, and hand the server's commands to the runner's
 * channel (OUT/.devmode.sock, one JSON line each way). */
#ifndef VIGIL_WORKER_DEV_RELAY_H
#define VIGIL_WORKER_DEV_RELAY_H

#include <jansson.h>
#include <time.h>

#define DEV_RELAY_TIMEOUT_MS 5000 /* the runner answers a command at once */

struct dev_relay {
	struct timespec mtime;    /* the state file as last read */
	json_int_t shown_pause;   /* the version of the pause last uploaded for */
};

/* The runner's state when its file changed since the last call (new
 * reference), else NULL. */
json_t *dev_relay_state(struct dev_relay *d, const char *out_dir);
/* Send cmd to the runner's channel in out_dir; *reply (new reference) is
 * its answer. 0, ERR_NOT_FOUND (no channel: the runner has not started it
 * or has ended), ERR_TIMEOUT, ERR_PROTO or -errno; err says what. */
int dev_relay_send(const char *out_dir, const json_t *cmd, json_t **reply, char *err, size_t errlen);

#endif
