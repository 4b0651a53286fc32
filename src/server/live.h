/* SPDX-License-Identifier: MIT */
/* live.h - who watches which running job's live view. A viewer's request
 * marks the job watched for LIVE_WATCH_S seconds; the worker's status
 * reply then asks for frames (openQA's livelog_start) and stops asking
 * once nobody looked for that long (livelog_stop). Kept in memory: a
 * server restart just makes viewers ask again. Used by the request
 * thread only. */
#ifndef VIGIL_SERVER_LIVE_H
#define VIGIL_SERVER_LIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LIVE_WATCH_S 15
#define LIVE_MAX_JOBS 256
#define LIVE_FRAME_NAME ".live.png"   /* in testresults/<job>/, never an artefact */

struct live_map {
	struct {
		int64_t job_id;
		double until;   /* monotonic seconds */
	} e[LIVE_MAX_JOBS];
	size_t n;
};

/* Mark job_id watched until now + LIVE_WATCH_S (the oldest mark goes when
 * the map is full). */
void live_watch(struct live_map *m, int64_t job_id, double now);
/* Whether someone watched job_id within LIVE_WATCH_S of now. */
bool live_watched(struct live_map *m, int64_t job_id, double now);

#endif
