/* SPDX-License-Identifier: MIT */
/* test_server_pool.c - the server's handler pool without HTTP: a reader
 * runs while a writer is held, a second writer never starts while the
 * first runs, the writer token excludes items, clients are served in turn,
 * a full queue refuses, and pool_free runs what is queued. Items wait on gates the test opens:
 * nothing depends on which thread runs first. */
#include <pthread.h>
#include <stdbool.h>
#include "unit.h"
#include "server/http/pool.h"
#include "util/err.h"

struct gate {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool open;
};

struct titem {
	struct pool_item item; /* first: the pool hands it back as this */
	struct gate *wait;     /* held until this opens, NULL: no wait */
	bool started, done;
	char name;
};

struct tctx {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int writers_now, writers_max, done;
	char order[16];        /* names in the order the items started */
};

static struct gate gate_a = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, false };
static struct tctx ctx = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, 0, "" };

static void gate_open(struct gate *g)
{
	pthread_mutex_lock(&g->lock);
	g->open = true;
	pthread_cond_broadcast(&g->cond);
	pthread_mutex_unlock(&g->lock);
}

static void run(void *c, unsigned idx, struct pool_item *item)
{
	struct tctx *t = c;
	struct titem *it = (struct titem *)item;

	(void)idx;
	pthread_mutex_lock(&t->lock);
	it->started = true;
	if (it->name && strlen(t->order) + 1 < sizeof(t->order))
		t->order[strlen(t->order)] = it->name;
	if (it->item.writes && ++t->writers_now > t->writers_max)
		t->writers_max = t->writers_now;
	pthread_cond_broadcast(&t->cond);
	pthread_mutex_unlock(&t->lock);
	if (it->wait) {
		pthread_mutex_lock(&it->wait->lock);
		while (!it->wait->open)
			pthread_cond_wait(&it->wait->cond, &it->wait->lock);
		pthread_mutex_unlock(&it->wait->lock);
	}
	pthread_mutex_lock(&t->lock);
	if (it->item.writes)
		t->writers_now--;
	it->done = true;
	t->done++;
	pthread_cond_broadcast(&t->cond);
	pthread_mutex_unlock(&t->lock);
}

static void wait_flag(bool *flag)
{
	pthread_mutex_lock(&ctx.lock);
	while (!*flag)
		pthread_cond_wait(&ctx.cond, &ctx.lock);
	pthread_mutex_unlock(&ctx.lock);
}

TEST(server_pool_reader_beside_held_writer)
{
	struct pool *p = NULL;
	struct titem w1 = { .item = { .writes = true }, .wait = &gate_a };
	struct titem w2 = { .item = { .writes = true }, .wait = NULL };
	struct titem rd = { .item = { .writes = false }, .wait = NULL };

	CHECK_INT(pool_new(&p, 3, 16, run, &ctx), 0);
	CHECK_INT(pool_push(p, &w1.item), 0);
	wait_flag(&w1.started);
	/* w2 waits for the token; the reader queued behind it goes first. */
	CHECK_INT(pool_push(p, &w2.item), 0);
	CHECK_INT(pool_push(p, &rd.item), 0);
	wait_flag(&rd.done);
	pthread_mutex_lock(&ctx.lock);
	CHECK(!w2.started);     /* impossible while w1 holds the token, whatever the timing */
	pthread_mutex_unlock(&ctx.lock);
	gate_open(&gate_a);
	wait_flag(&w2.done);
	CHECK_INT(ctx.writers_max, 1);
	pool_free(p);
}

TEST(server_pool_write_token_excludes_items)
{
	struct pool *p = NULL;
	struct titem w = { .item = { .writes = true }, .wait = NULL };
	struct titem rd = { .item = { .writes = false }, .wait = NULL };

	CHECK_INT(pool_new(&p, 2, 4, run, &ctx), 0);
	pool_write_begin(p);
	CHECK_INT(pool_push(p, &w.item), 0);
	CHECK_INT(pool_push(p, &rd.item), 0);
	wait_flag(&rd.done);
	pthread_mutex_lock(&ctx.lock);
	CHECK(!w.started);
	pthread_mutex_unlock(&ctx.lock);
	pool_write_end(p);
	wait_flag(&w.done);
	pool_free(p);
}

TEST(server_pool_full_queue_refuses)
{
	struct pool *p = NULL;
	struct titem busy = { .item = { .writes = false }, .wait = &gate_a };
	struct titem q1 = { .item = { .writes = false }, .wait = NULL };
	struct titem q2 = { .item = { .writes = false }, .wait = NULL };

	CHECK_INT(pool_new(&p, 1, 1, run, &ctx), 0);
	CHECK_INT(pool_push(p, &busy.item), 0);
	wait_flag(&busy.started);   /* the one thread is held: q1 stays queued */
	CHECK_INT(pool_push(p, &q1.item), 0);
	CHECK_INT(pool_push(p, &q2.item), ERR_TOO_BIG);
	gate_open(&gate_a);
	/* pool_free runs what was queued before the threads end. */
	pool_free(p);
	CHECK(busy.done && q1.done && !q2.started);
	CHECK_INT(pool_new(&p, 0, 1, run, &ctx), ERR_INVALID);
	CHECK(p == NULL);
}

TEST(server_pool_clients_served_in_turn)
{
	struct pool *p = NULL;
	struct titem busy = { .item = { .client = 9 }, .wait = &gate_a };
	struct titem a1 = { .item = { .client = 1 }, .name = 'a' }, a2 = a1, a3 = a1;
	struct titem b1 = { .item = { .client = 2 }, .name = 'b' };

	CHECK_INT(pool_new(&p, 1, 8, run, &ctx), 0);
	CHECK_INT(pool_push(p, &busy.item), 0);
	wait_flag(&busy.started);   /* the one thread is held while the others queue */
	CHECK_INT(pool_push(p, &a1.item), 0);
	CHECK_INT(pool_push(p, &a2.item), 0);
	CHECK_INT(pool_push(p, &a3.item), 0);
	CHECK_INT(pool_push(p, &b1.item), 0);
	gate_open(&gate_a);
	pool_free(p);
	/* Client 2's one request does not wait behind all of client 1's. */
	CHECK_STR(ctx.order, "abaa");
}
