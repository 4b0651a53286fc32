/* SPDX-License-Identifier: MIT */
/* pool.c - handler threads over one FIFO with a writer token (see pool.h).
 * Owns the threads and the queue links, never the items. One mutex guards
 * the queue, the token and the stop flag; one condition wakes the threads
 * and the token's waiters. */
#include <pthread.h>
#include <stdlib.h>
#include "server/pool.h"
#include "util/err.h"

struct pool_thread {
	struct pool *pool;
	pthread_t tid;
	unsigned idx;
};

struct pool {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct pool_item *head, *tail;
	size_t queued, max_queued;
	bool writing;   /* the writer token is taken */
	bool quit;
	pool_run_fn run;
	void *ctx;
	struct pool_thread *threads;
	unsigned nthreads, started;
};

/* The first item that may run now, unlinked; NULL when none may. */
static struct pool_item *take(struct pool *p)
{
	struct pool_item *prev = NULL, *it;

	for (it = p->head; it; prev = it, it = it->next) {
		if (it->writes && p->writing)
			continue;
		if (prev)
			prev->next = it->next;
		else
			p->head = it->next;
		if (p->tail == it)
			p->tail = prev;
		it->next = NULL;
		p->queued--;
		return it;
	}
	return NULL;
}

static void *pool_main(void *arg)
{
	struct pool_thread *t = arg;
	struct pool *p = t->pool;

	pthread_mutex_lock(&p->lock);
	for (;;) {
		struct pool_item *it = take(p);
		bool writes;
		if (!it) {
			if (p->quit && !p->head)
				break;
			pthread_cond_wait(&p->cond, &p->lock);
			continue;
		}
		writes = it->writes; /* the item may be gone once run returns */
		if (writes)
			p->writing = true;
		pthread_mutex_unlock(&p->lock);
		p->run(p->ctx, t->idx, it);
		pthread_mutex_lock(&p->lock);
		if (writes) {
			p->writing = false;
			pthread_cond_broadcast(&p->cond);
		}
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

int pool_new(struct pool **out, unsigned nthreads, size_t max_queued, pool_run_fn run, void *ctx)
{
	struct pool *p;
	unsigned i;
	int rc;

	*out = NULL;
	if (nthreads < 1 || nthreads > POOL_MAX_THREADS || max_queued < 1 || !run)
		return ERR_INVALID;
	if (!(p = calloc(1, sizeof(*p))))
		return ERR_NOMEM;
	if (!(p->threads = calloc(nthreads, sizeof(*p->threads)))) {
		free(p);
		return ERR_NOMEM;
	}
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->cond, NULL);
	p->max_queued = max_queued;
	p->run = run;
	p->ctx = ctx;
	p->nthreads = nthreads;
	for (i = 0; i < nthreads; i++) {
		p->threads[i].pool = p;
		p->threads[i].idx = i;
		if ((rc = pthread_create(&p->threads[i].tid, NULL, pool_main, &p->threads[i]))) {
			pool_free(p);
			return -rc;
		}
		p->started++;
	}
	*out = p;
	return 0;
}

int pool_push(struct pool *p, struct pool_item *item)
{
	int rc = 0;

	pthread_mutex_lock(&p->lock);
	if (p->quit) {
		rc = ERR_BADSTATE;
	} else if (p->queued >= p->max_queued) {
		rc = ERR_TOO_BIG;
	} else {
		item->next = NULL;
		if (p->tail)
			p->tail->next = item;
		else
			p->head = item;
		p->tail = item;
		p->queued++;
		/* Broadcast, not signal: a woken thread may find only a writer it
		 * cannot take while another thread could take a reader. */
		pthread_cond_broadcast(&p->cond);
	}
	pthread_mutex_unlock(&p->lock);
	return rc;
}

void pool_write_begin(struct pool *p)
{
	pthread_mutex_lock(&p->lock);
	while (p->writing)
		pthread_cond_wait(&p->cond, &p->lock);
	p->writing = true;
	pthread_mutex_unlock(&p->lock);
}

void pool_write_end(struct pool *p)
{
	pthread_mutex_lock(&p->lock);
	p->writing = false;
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
}

void pool_free(struct pool *p)
{
	unsigned i;

	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	p->quit = true;
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
	for (i = 0; i < p->started; i++)
		pthread_join(p->threads[i].tid, NULL);
	pthread_cond_destroy(&p->cond);
	pthread_mutex_destroy(&p->lock);
	free(p->threads);
	free(p);
}
