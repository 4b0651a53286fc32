/* SPDX-License-Identifier: MIT */
/* api_live.h - the live view's parts outside its routes: a worker's
 * status post, and the housekeeping thread's pass over the streams. */
#ifndef VIGIL_API_LIVE_H
#define VIGIL_API_LIVE_H

#include <jansson.h>
#include <stdint.h>
#include "server/http/api.h"

struct db;
struct livestream;
struct watch_map;

/* For POST jobs/<id>/status: store status.screen.png as the live frame
 * while someone watches, give the streams the modules' results so far and
 * set reply.live (true: send frames). 0, or ERR_NOMEM when reply could
 * not take it. */
int api_live_status(struct api_req *req, const json_t *status, json_t *reply);
/* Hand job's {"state", "result"} (status, borrowed: jobs_status_json's)
 * to its streams; a job done or cancelled ends them. */
void api_live_state(struct livestream *h, int64_t job, const json_t *status);
/* Each second, on the housekeeping thread's connection: keep the streamed
 * running jobs watched, tell their streams of state changes and ends,
 * send heartbeats and close the streams whose clients left. */
void api_live_tick(struct db *db, struct livestream *h, struct watch_map *watched);

#endif
