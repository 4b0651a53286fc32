/* SPDX-License-Identifier: MIT */
/* live.c - the in-memory map of watched jobs (see live.h). */
#include "server/live.h"

void live_watch(struct live_map *m, int64_t job_id, double now)
{
	size_t i, oldest = 0;

	for (i = 0; i < m->n; i++) {
		if (m->e[i].job_id == job_id) {
			m->e[i].until = now + LIVE_WATCH_S;
			return;
		}
		if (m->e[i].until < m->e[oldest].until)
			oldest = i;
	}
	if (m->n < LIVE_MAX_JOBS)
		i = m->n++;
	else
		i = oldest;
	m->e[i].job_id = job_id;
	m->e[i].until = now + LIVE_WATCH_S;
}

bool live_watched(struct live_map *m, int64_t job_id, double now)
{
	size_t i;

	for (i = 0; i < m->n; i++)
		if (m->e[i].job_id == job_id)
			return m->e[i].until >= now;
	return false;
}
