/* SPDX-License-Identifier: MIT */
/* watch.h - who watches which running job's live view. A viewer's request
 * marks the job watched for WATCH_S seconds; the worker's status
 * reply then asks for frames (openQA's livelog_start) and stops asking
 * once nobody looked for that long (livelog_stop). Kept in memory: a
 * server restart just makes viewers ask again. Shared by the handler
 * threads: every call takes the map's lock. */
#ifndef VIGIL_SERVER_WATCH_H
#define VIGIL_SERVER_WATCH_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define WATCH_S 15
#define WATCH_MAX_JOBS 256
#define WATCH_FRAME_NAME ".live.png"   /* in testresults/<job>/, never an artefact */

struct watch_map {
	pthread_mutex_t lock;
	struct {
		int64_t job_id;
		double until;   /* monotonic seconds */
	} e[WATCH_MAX_JOBS];
	size_t n;
};

void watch_init(struct watch_map *m);
void watch_release(struct watch_map *m);
/* Mark job_id watched until now + WATCH_S (the oldest mark goes when
 * the map is full). */
void watch_mark(struct watch_map *m, int64_t job_id, double now);
/* Whether someone watched job_id within WATCH_S of now. */
bool watch_active(struct watch_map *m, int64_t job_id, double now);

#endif
