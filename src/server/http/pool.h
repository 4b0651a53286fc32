/* SPDX-License-Identifier: MIT */
/* pool.h - the server's handler threads: a bounded queue of work items run
 * by N threads, each client's items in order and the clients in turn (one
 * client's flood does not starve another), and the writer token that lets
 * one item at a time write the database while any number of others read
 * (SQLite in WAL mode has one writer). Knows nothing of HTTP: server.c
 * queues its requests here. */
#ifndef VIGIL_SERVER_POOL_H
#define VIGIL_SERVER_POOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define POOL_MAX_THREADS 256

/* Embedded in the caller's work item; the pool links it while queued. */
struct pool_item {
	struct pool_item *next;  /* the pool's */
	bool writes;             /* run only while holding the writer token */
	uint64_t client;         /* who sent it (an address hash): clients are served in turn */
};

/* Runs item on handler thread number idx (0 .. nthreads - 1), with the
 * writer token held when item->writes. The item may be freed by its owner
 * as soon as run has handed it on: the pool does not touch it afterwards. */
typedef void (*pool_run_fn)(void *ctx, unsigned idx, struct pool_item *item);

struct pool;

/* Start nthreads (1 .. POOL_MAX_THREADS) threads taking the first item of
 * each waiting client in turn, a writer only when no other writer runs
 * (readers behind a waiting writer go first, so writers never hold threads
 * that readers need). At most max_queued items wait. 0, ERR_INVALID,
 * ERR_NOMEM or -errno. */
int pool_new(struct pool **out, unsigned nthreads, size_t max_queued, pool_run_fn run, void *ctx);
/* Queue item (not copied: it must live until run is called with it).
 * 0, ERR_TOO_BIG when max_queued items wait, ERR_BADSTATE once pool_free
 * has begun. */
int pool_push(struct pool *p, struct pool_item *item);
/* Take the writer token for work outside the pool (the housekeeping
 * thread), waiting until no writer item runs; never from inside run. */
void pool_write_begin(struct pool *p);
void pool_write_end(struct pool *p);
/* Run what is queued, stop and join the threads, free. NULL-safe. */
void pool_free(struct pool *p);

#endif
