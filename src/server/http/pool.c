/* SPDX-License-Identifier: MIT */
/* pool.c - handler threads over per-client FIFOs served in turn, with a
 * writer token (see pool.h). Owns the threads, the client queues and the
 * links, never the items. One mutex guards the queues, the token and the
 * stop flag; one condition wakes the threads and the token's waiters. */
#include <pthread.h>
#include <stdlib.h>
#include "server/http/pool.h"
#include "util/err.h"
#include "util/banned.h" /* last: after every system header */

struct pool_thread {
	struct pool *pool;
	pthread_t tid;
	unsigned idx;
};

/* One client's waiting items; the clients with any form a ring. */
struct pool_client {
	uint64_t key;
	struct pool_item *head, *tail;
	struct pool_client *next, *prev;  /* the ring, or the free list (next) */
};

struct pool {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct pool_client *clients;  /* max_queued of them: never more clients than items */
	struct pool_client *ring;     /* the client served next; NULL when nothing waits */
	struct pool_client *free;
	size_t queued, max_queued;
	size_t readers;  /* of queued: items that do not write */
	bool writing;   /* the writer token is taken */
	bool quit;
	pool_run_fn run;
	void *ctx;
	struct pool_thread *threads;
	unsigned nthreads, started;
};

static void ring_remove(struct pool *p, struct pool_client *c)
{
	if (c->next == c) {
		p->ring = NULL;
	} else {
		c->prev->next = c->next;
		c->next->prev = c->prev;
		if (p->ring == c)
			p->ring = c->next;
	}
	c->next = p->free;
	p->free = c;
}

/* The first item of the next client in turn that may run now, unlinked;
 * NULL when none may (only writers wait and the token is taken). */
static struct pool_item *take(struct pool *p)
{
	struct pool_client *c = p->ring;
	struct pool_item *prev, *it;

	/* The token taken and only writers waiting (1,000 work polls on
	 * SQLite): nothing may run, known without walking them all. */
	if (!c || (p->writing && !p->readers))
		return NULL;
	do {
		for (prev = NULL, it = c->head; it; prev = it, it = it->next) {
			if (it->writes && p->writing)
				continue;
			if (prev)
				prev->next = it->next;
			else
				c->head = it->next;
			if (c->tail == it)
				c->tail = prev;
			it->next = NULL;
			p->queued--;
			p->readers -= !it->writes;
			p->ring = c->next;
			if (!c->head)
				ring_remove(p, c);
			return it;
		}
		c = c->next;
	} while (c != p->ring);
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
			if (p->quit && !p->ring)
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
	if (!(p->threads = calloc(nthreads, sizeof(*p->threads))) ||
	    !(p->clients = calloc(max_queued, sizeof(*p->clients)))) {
		free(p->threads);
		free(p);
		return ERR_NOMEM;
	}
	for (i = 0; i < max_queued; i++) {
		p->clients[i].next = p->free;
		p->free = &p->clients[i];
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
		struct pool_client *c = p->ring;
		while (c && c->key != item->client && (c = c->next) != p->ring)
			;
		if (!c || c->key != item->client) {
			/* A new client takes its turn after those waiting already. */
			c = p->free;
			p->free = c->next;
			c->key = item->client;
			c->head = c->tail = NULL;
			if (!p->ring) {
				c->next = c->prev = c;
				p->ring = c;
			} else {
				c->next = p->ring;
				c->prev = p->ring->prev;
				c->prev->next = c;
				p->ring->prev = c;
			}
		}
		item->next = NULL;
		if (c->tail)
			c->tail->next = item;
		else
			c->head = item;
		c->tail = item;
		p->queued++;
		p->readers += !item->writes;
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
	free(p->clients);
	free(p);
}
