/* SPDX-License-Identifier: MIT */
/* shots.c - the screenshot writer thread: a bounded FIFO of (name, frame)
 * drained by one thread that encodes PNGs and thumbnails. */
#define LOG_MODULE "shots"
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "runner/core/results.h"
#include "runner/core/shots.h"
#include "util/err.h"
#include "util/log.h"
#include "image/frame.h"
#include "util/banned.h" /* last: after every system header */

struct shot {
	char *name;
	struct frame *frame;
};

struct shots {
	const char *dir;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct shot q[SHOTS_QUEUE_MAX];
	int head, len;
	int stop;
	int failed;
};

static void *writer(void *arg)
{
	struct shots *s = arg;

	pthread_mutex_lock(&s->lock);
	for (;;) {
		struct shot sh;
		int rc;

		while (s->len == 0 && !s->stop)
			pthread_cond_wait(&s->cond, &s->lock);
		if (s->len == 0)
			break;
		sh = s->q[s->head];
		pthread_mutex_unlock(&s->lock);
		rc = results_save_image(s->dir, sh.name, sh.frame->img);
		if (rc)
			log_warn("could not write screenshot '%s': %s", sh.name, err_str(rc));
		free(sh.name);
		frame_unref(sh.frame);
		pthread_mutex_lock(&s->lock);
		if (rc)
			s->failed++;
		/* Dequeue only after writing, so a waiter in shots_free sees the end. */
		s->head = (s->head + 1) % SHOTS_QUEUE_MAX;
		s->len--;
		pthread_cond_broadcast(&s->cond);
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

struct shots *shots_new(const char *testresults)
{
	struct shots *s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->dir = testresults;
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->cond, NULL);
	if (pthread_create(&s->thread, NULL, writer, s) != 0) {
		pthread_mutex_destroy(&s->lock);
		pthread_cond_destroy(&s->cond);
		free(s);
		return NULL;
	}
	return s;
}

int shots_enqueue(struct shots *s, const char *name, struct frame *f)
{
	char *copy = strdup(name);
	if (!copy)
		return ERR_NOMEM;
	frame_ref(f);
	pthread_mutex_lock(&s->lock);
	while (s->len == SHOTS_QUEUE_MAX)
		pthread_cond_wait(&s->cond, &s->lock);
	s->q[(s->head + s->len) % SHOTS_QUEUE_MAX] = (struct shot){ copy, f };
	s->len++;
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
	return 0;
}

void shots_flush(struct shots *s)
{
	if (!s)
		return;
	pthread_mutex_lock(&s->lock);
	while (s->len > 0)
		pthread_cond_wait(&s->cond, &s->lock);
	pthread_mutex_unlock(&s->lock);
}

int shots_free(struct shots *s)
{
	int failed;
	if (!s)
		return 0;
	pthread_mutex_lock(&s->lock);
	s->stop = 1;
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
	pthread_join(s->thread, NULL);
	failed = s->failed;
	pthread_mutex_destroy(&s->lock);
	pthread_cond_destroy(&s->cond);
	free(s);
	return failed;
}
