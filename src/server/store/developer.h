/* SPDX-License-Identifier: MIT */
/* developer.h - developer mode on the server: per running job, the
 * commands people sent (queued until the job's worker picks them up with
 * its next live post, within a second) and the runner's developer state
 * as the worker last reported it (docs/devmode.md). In memory only, for
 * DEVELOPER_JOBS_MAX jobs at once (the least recently touched is
 * forgotten first); shared by the handlers: every call takes the lock. */
#ifndef VIGIL_SERVER_DEVELOPER_H
#define VIGIL_SERVER_DEVELOPER_H

#include <jansson.h>
#include <stdint.h>

#define DEVELOPER_JOBS_MAX 64
#define DEVELOPER_QUEUE_MAX 16 /* commands waiting per job */

struct developer_hub;

/* 0 and *out, or ERR_NOMEM. */
int developer_hub_new(struct developer_hub **out);
/* NULL-safe. */
void developer_hub_free(struct developer_hub *h);

/* Queue cmd (an object, copied) for job. 0, ERR_TOO_BIG when
 * DEVELOPER_QUEUE_MAX wait already, ERR_NOMEM. */
int developer_queue(struct developer_hub *h, int64_t job, const json_t *cmd);
/* The commands waiting for job, oldest first, taken off the queue: an
 * array (new reference), or NULL when none wait. */
json_t *developer_take(struct developer_hub *h, int64_t job);
/* How many commands wait for job. */
size_t developer_pending(struct developer_hub *h, int64_t job);
/* The runner's state as the worker reported it (an object, copied). */
void developer_set_state(struct developer_hub *h, int64_t job, const json_t *state);
/* job's last state (new reference), or NULL when none was reported. */
json_t *developer_state(struct developer_hub *h, int64_t job);

#endif
