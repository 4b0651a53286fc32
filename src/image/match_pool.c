/* SPDX-License-Identifier: MIT */
/* match_pool.c - the needle search's worker pool: a few threads, started
 * on the first search that wants them and kept for the life of the
 * process, that run the rounds match.c splits its large searches into.
 * They own nothing but their stacks. */
#include <immintrin.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>
#include "image/match_pool.h"
#include "util/time.h"
#include "util/banned.h" /* last: after every system header */

/* A search runs two short rounds on the pool (a millisecond or
 * so), too short to start threads for. Waking a sleeping thread costs tens
 * to hundreds of microseconds (more in a VM), so the workers poll a little
 * before they sleep, and the caller before it waits: the second round of
 * a search, and often the next search, find them awake. A round offers
 * its slots to the workers, and the caller takes back those still free
 * when it has done its own share, so that it never waits for a worker
 * that wakes late. One search at a time has the pool; another that asks
 * meanwhile (another screen on another thread) runs alone. Workers block
 * every signal, so that signals go to the threads that expect them. */

/* How long a thread polls before it sleeps, in seconds. */
#define POOL_SPIN_S 60e-6

/* job: the round number times POOL_IDS plus the round's free slots, in
 * one word, so that a worker claims a slot of the round it saw or none. */
#define POOL_IDS 32

struct pool {
	pthread_mutex_t mu;
	pthread_cond_t go, idle;
	int nworkers;        /* threads started (mu) */
	int busy;            /* a search holds the pool (mu) */
	int failed;          /* pthread_create failed: start no more (mu) */
	pid_t pid;           /* the process that started them, not a fork (mu) */
	int sleepers;        /* workers asleep on go (mu) */
	int waiting;         /* the caller is asleep on idle (mu) */
	_Alignas(64) atomic_ulong job;
	_Alignas(64) atomic_int running;     /* slots claimed or free, not done */
	/* the round's work, written before job is published */
	void (*fn)(void *arg, int id);
	void *arg;
};

static struct pool pool = {
	.mu = PTHREAD_MUTEX_INITIALIZER, .go = PTHREAD_COND_INITIALIZER, .idle = PTHREAD_COND_INITIALIZER,
};

/* Poll pool.job until its round differs from round or POOL_SPIN_S
 * pass; returns the last value read (acquire). */
static unsigned long spin_job(unsigned long round)
{
	double t0 = 0;
	unsigned long cur;
	int k;

	for (k = 0;; k++) {
		cur = atomic_load_explicit(&pool.job, memory_order_acquire);
		if (cur / POOL_IDS != round)
			return cur;
		if ((k & 31) == 31) {
			double t = time_mono();
			if (!t0)
				t0 = t;
			else if (t - t0 > POOL_SPIN_S)
				return cur;
		}
		_mm_pause();
	}
}

/* One slot done: the last wakes the caller if it sleeps (the caller
 * checks running under mu before it sleeps: no wake-up is lost). */
static void pool_done(int n)
{
	if (atomic_fetch_sub_explicit(&pool.running, n, memory_order_acq_rel) == n) {
		pthread_mutex_lock(&pool.mu);
		if (pool.waiting)
			pthread_cond_signal(&pool.idle);
		pthread_mutex_unlock(&pool.mu);
	}
}

static void *pool_main(void *p)
{
	unsigned long round = *(unsigned long *)p, job;

	free(p);
	for (;;) {
		job = spin_job(round);
		if (job / POOL_IDS == round) {
			pthread_mutex_lock(&pool.mu);
			pool.sleepers++;
			while ((job = atomic_load_explicit(&pool.job, memory_order_acquire)) / POOL_IDS == round)
				pthread_cond_wait(&pool.go, &pool.mu);
			pool.sleepers--;
			pthread_mutex_unlock(&pool.mu);
		}
		round = job / POOL_IDS;
		/* claim a free slot of this round; a failed claim reloads job
		 * (a newer round is then taken on the next turn) */
		while (job % POOL_IDS && job / POOL_IDS == round) {
			if (atomic_compare_exchange_weak_explicit(&pool.job, &job, job - 1, memory_order_acq_rel,
								  memory_order_acquire)) {
				pool.fn(pool.arg, (int)(job % POOL_IDS));
				pool_done(1);
				break;
			}
		}
	}
	return NULL;
}

/* Called with pool.mu held and no round running: start workers until
 * n - 1 run. */
static void pool_grow(int n)
{
	pthread_attr_t attr;
	sigset_t all, old;

	if (pool.failed || pool.nworkers >= n - 1)
		return;
	if (pthread_attr_init(&attr)) {
		pool.failed = 1;
		return;
	}
	(void)pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	while (pool.nworkers < n - 1) {
		/* the round before its first (the caller may publish the
		 * first before the thread runs) */
		unsigned long *st = malloc(sizeof(*st));
		pthread_t t;
		if (!st) {
			pool.failed = 1;
			break;
		}
		*st = atomic_load_explicit(&pool.job, memory_order_relaxed) / POOL_IDS;
		if (pthread_create(&t, &attr, pool_main, st)) {
			free(st);
			pool.failed = 1;
			break;
		}
		pool.nworkers++;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
}

/* Take the pool for a search that wants n threads; returns how many it
 * may use (1: none, the pool is busy or has no workers). A return > 1
 * must be followed by pool_put. */
int match__pool_take(int n)
{
	int got = 1;

	pthread_mutex_lock(&pool.mu);
	if (pool.nworkers == 0)
		pool.pid = getpid();
	if (!pool.busy && pool.pid == getpid()) {
		pool_grow(n);
		got = pool.nworkers + 1 < n ? pool.nworkers + 1 : n;
		if (got > 1)
			pool.busy = 1;
	}
	pthread_mutex_unlock(&pool.mu);
	return got;
}

void match__pool_put(void)
{
	pthread_mutex_lock(&pool.mu);
	pool.busy = 0;
	pthread_mutex_unlock(&pool.mu);
}

/* fn(arg, id) on id 0 on the calling thread and on ids 1..n - 1 by the
 * workers that claim them in time (n <= pool_take's); returns when all
 * are done, their writes visible to the caller. fn must do all the work
 * whichever ids run. */
void match__pool_run(void (*fn)(void *, int), void *arg, int n)
{
	unsigned long job = atomic_load_explicit(&pool.job, memory_order_relaxed);
	double t0;

	pool.fn = fn;
	pool.arg = arg;
	atomic_store_explicit(&pool.running, n - 1, memory_order_relaxed);
	job = (job / POOL_IDS + 1) * POOL_IDS + (unsigned long)(n - 1);
	atomic_store_explicit(&pool.job, job, memory_order_release);
	pthread_mutex_lock(&pool.mu);
	if (pool.sleepers)
		pthread_cond_broadcast(&pool.go);
	pthread_mutex_unlock(&pool.mu);
	fn(arg, 0);
	/* close the round: the slots no worker claimed are done */
	while (!atomic_compare_exchange_weak_explicit(&pool.job, &job, job - job % POOL_IDS, memory_order_acq_rel,
						      memory_order_acquire))
		;
	if (job % POOL_IDS)
		pool_done((int)(job % POOL_IDS));
	t0 = time_mono();
	while (atomic_load_explicit(&pool.running, memory_order_acquire) > 0 && time_mono() - t0 < POOL_SPIN_S)
		_mm_pause();
	if (atomic_load_explicit(&pool.running, memory_order_acquire) > 0) {
		pthread_mutex_lock(&pool.mu);
		pool.waiting = 1;
		while (atomic_load_explicit(&pool.running, memory_order_acquire) > 0)
			pthread_cond_wait(&pool.idle, &pool.mu);
		pool.waiting = 0;
		pthread_mutex_unlock(&pool.mu);
	}
}
