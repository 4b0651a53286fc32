/* SPDX-License-Identifier: MIT */
/* frame.c - reference counted frames and the pool that recycles their
 * buffers (see frame.h). Owns the frames' images; knows nothing of where
 * the frames come from. */
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "image/frame.h"
#include "util/banned.h" /* last: after every system header */

/* Shared by the producer and by every frame it lent. */
struct frame_pool {
	pthread_mutex_t lock;
	int refs;                 /* the producer, and each frame out */
	bool closed;              /* the producer is gone: keep nothing */
	int w, h;
	int n;
	struct frame *free[FRAME_POOL_LEN];
};

void frame_ref(struct frame *f)
{
	__atomic_add_fetch(&f->refs, 1, __ATOMIC_RELAXED);
}

static void frame_destroy(struct frame *f)
{
	image_free(f->img);
	free(f);
}

struct frame *frame_from_image(struct image *img)
{
	struct frame *f = calloc(1, sizeof(*f));

	if (!f) {
		image_free(img);
		return NULL;
	}
	f->img = img;
	f->refs = 1;
	return f;
}

static void pool_destroy(struct frame_pool *p)
{
	int i;

	for (i = 0; i < p->n; i++)
		frame_destroy(p->free[i]);
	pthread_mutex_destroy(&p->lock);
	free(p);
}

struct frame_pool *frame_pool_new(int w, int h)
{
	struct frame_pool *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	pthread_mutex_init(&p->lock, NULL);
	p->refs = 1;
	p->w = w;
	p->h = h;
	return p;
}

struct frame *frame_pool_get(struct frame_pool *p)
{
	struct frame *f = NULL;
	struct image *img;

	pthread_mutex_lock(&p->lock);
	if (p->n)
		f = p->free[--p->n];
	pthread_mutex_unlock(&p->lock);
	if (f) {
		img = f->img;
		memset(f, 0, sizeof(*f));
		f->img = img;
	} else {
		f = calloc(1, sizeof(*f));
		if (!f)
			return NULL;
		f->img = image_new(p->w, p->h);
		if (!f->img) {
			free(f);
			return NULL;
		}
	}
	pthread_mutex_lock(&p->lock);
	p->refs++;
	pthread_mutex_unlock(&p->lock);
	f->pool = p;
	f->refs = 1;
	return f;
}

/* A frame of the pool came back (any thread). */
static void pool_put(struct frame *f)
{
	struct frame_pool *p = f->pool;
	bool keep, last;

	pthread_mutex_lock(&p->lock);
	keep = !p->closed && p->n < FRAME_POOL_LEN;
	if (keep)
		p->free[p->n++] = f;
	last = --p->refs == 0;
	pthread_mutex_unlock(&p->lock);
	if (!keep)
		frame_destroy(f);
	if (last)
		pool_destroy(p);
}

void frame_pool_close(struct frame_pool *p)
{
	struct frame *keep[FRAME_POOL_LEN];
	int i, n;
	bool last;

	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	p->closed = true;
	n = p->n;
	memcpy(keep, p->free, sizeof(keep));
	p->n = 0;
	last = --p->refs == 0;
	pthread_mutex_unlock(&p->lock);
	for (i = 0; i < n; i++)
		frame_destroy(keep[i]);
	if (last)
		pool_destroy(p);
}

void frame_unref(struct frame *f)
{
	if (!f)
		return;
	if (__atomic_sub_fetch(&f->refs, 1, __ATOMIC_ACQ_REL) == 0) {
		if (f->pool)
			pool_put(f);
		else
			frame_destroy(f);
	}
}
