/* SPDX-License-Identifier: MIT */
/* watch.c - the in-memory map of watched jobs (see watch.h). */
#include "server/watch.h"

void watch_mark(struct watch_map *m, int64_t job_id, double now)
{
	size_t i, oldest = 0;

	for (i = 0; i < m->n; i++) {
		if (m->e[i].job_id == job_id) {
			m->e[i].until = now + WATCH_S;
			return;
		}
		if (m->e[i].until < m->e[oldest].until)
			oldest = i;
	}
	if (m->n < WATCH_MAX_JOBS)
		i = m->n++;
	else
		i = oldest;
	m->e[i].job_id = job_id;
	m->e[i].until = now + WATCH_S;
}

bool watch_active(struct watch_map *m, int64_t job_id, double now)
{
	size_t i;

	for (i = 0; i < m->n; i++)
		if (m->e[i].job_id == job_id)
			return m->e[i].until >= now;
	return false;
}
