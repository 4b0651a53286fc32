/* SPDX-License-Identifier: MIT */
/* developer.c - developer mode's command queues and states per job (see
 * developer.h): a fixed table under one lock, no SQL. */
#define LOG_MODULE "developer"
#include <pthread.h>
#include <stdlib.h>
#include "server/store/developer.h"
#include "util/err.h"
#include "util/banned.h" /* last: after every system header */

struct developer_job {
	int64_t job;      /* 0: a free slot */
	uint64_t touched; /* the hub's clock at the last use */
	json_t *queue;    /* array of commands */
	json_t *state;    /* the runner's, or NULL */
};

struct developer_hub {
	pthread_mutex_t lock;
	uint64_t clock;
	struct developer_job jobs[DEVELOPER_JOBS_MAX];
};

int developer_hub_new(struct developer_hub **out)
{
	struct developer_hub *h = calloc(1, sizeof(*h));

	*out = NULL;
	if (!h)
		return ERR_NOMEM;
	pthread_mutex_init(&h->lock, NULL);
	*out = h;
	return 0;
}

static void slot_clear(struct developer_job *j)
{
	json_decref(j->queue);
	json_decref(j->state);
	j->queue = j->state = NULL;
	j->job = 0;
}

void developer_hub_free(struct developer_hub *h)
{
	size_t i;

	if (!h)
		return;
	for (i = 0; i < DEVELOPER_JOBS_MAX; i++)
		slot_clear(&h->jobs[i]);
	pthread_mutex_destroy(&h->lock);
	free(h);
}

/* job's slot; with make, a new one (a free one or the least recently
 * touched) when it has none. NULL without. Under lock. */
static struct developer_job *slot(struct developer_hub *h, int64_t job, int make)
{
	struct developer_job *j = NULL, *oldest = &h->jobs[0];
	size_t i;

	for (i = 0; i < DEVELOPER_JOBS_MAX; i++) {
		if (h->jobs[i].job == job) {
			j = &h->jobs[i];
			break;
		}
		if (h->jobs[i].touched < oldest->touched)
			oldest = &h->jobs[i];
	}
	if (!j && make) {
		j = oldest;
		slot_clear(j);
		j->job = job;
	}
	if (j)
		j->touched = ++h->clock;
	return j;
}

int developer_queue(struct developer_hub *h, int64_t job, const json_t *cmd)
{
	struct developer_job *j;
	int rc = 0;

	pthread_mutex_lock(&h->lock);
	j = slot(h, job, 1);
	if (!j->queue && !(j->queue = json_array()))
		rc = ERR_NOMEM;
	else if (json_array_size(j->queue) >= DEVELOPER_QUEUE_MAX)
		rc = ERR_TOO_BIG;
	else if (json_array_append_new(j->queue, json_deep_copy(cmd)))
		rc = ERR_NOMEM;
	pthread_mutex_unlock(&h->lock);
	return rc;
}

json_t *developer_take(struct developer_hub *h, int64_t job)
{
	struct developer_job *j;
	json_t *q = NULL;

	pthread_mutex_lock(&h->lock);
	j = slot(h, job, 0);
	if (j && json_array_size(j->queue)) {
		q = j->queue;
		j->queue = NULL;
	}
	pthread_mutex_unlock(&h->lock);
	return q;
}

size_t developer_pending(struct developer_hub *h, int64_t job)
{
	struct developer_job *j;
	size_t n;

	pthread_mutex_lock(&h->lock);
	j = slot(h, job, 0);
	n = j ? json_array_size(j->queue) : 0;
	pthread_mutex_unlock(&h->lock);
	return n;
}

void developer_set_state(struct developer_hub *h, int64_t job, const json_t *state)
{
	struct developer_job *j;

	pthread_mutex_lock(&h->lock);
	j = slot(h, job, 1);
	json_decref(j->state);
	j->state = json_deep_copy(state);
	pthread_mutex_unlock(&h->lock);
}

json_t *developer_state(struct developer_hub *h, int64_t job)
{
	struct developer_job *j;
	json_t *s = NULL;

	pthread_mutex_lock(&h->lock);
	j = slot(h, job, 0);
	if (j && j->state)
		s = json_deep_copy(j->state);
	pthread_mutex_unlock(&h->lock);
	return s;
}
