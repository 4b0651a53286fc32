/* SPDX-License-Identifier: MIT */
/* watch.c - the in-memory map of watched jobs (see watch.h). */
#include <string.h>
#include "server/api/watch.h"
#include "util/banned.h" /* last: after every system header */

void watch_init(struct watch_map *m)
{
	memset(m, 0, sizeof(*m));
	pthread_mutex_init(&m->lock, NULL);
}

void watch_release(struct watch_map *m)
{
	pthread_mutex_destroy(&m->lock);
}

void watch_mark(struct watch_map *m, int64_t job_id, double now)
{
	size_t i, oldest = 0;

	pthread_mutex_lock(&m->lock);
	for (i = 0; i < m->n; i++) {
		if (m->e[i].job_id == job_id) {
			m->e[i].until = now + WATCH_S;
			pthread_mutex_unlock(&m->lock);
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
	pthread_mutex_unlock(&m->lock);
}

bool watch_active(struct watch_map *m, int64_t job_id, double now)
{
	size_t i;
	bool on = false;

	pthread_mutex_lock(&m->lock);
	for (i = 0; i < m->n; i++)
		if (m->e[i].job_id == job_id) {
			on = m->e[i].until >= now;
			break;
		}
	pthread_mutex_unlock(&m->lock);
	return on;
}
