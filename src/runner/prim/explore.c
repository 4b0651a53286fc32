/* SPDX-License-Identifier: MIT */
/* explore.c - the --explore frame writer (see explore.h): a listener on
 * the capture thread queues a reference to each frame with the runner's
 * note; one thread compares each with the last frame saved, writes the
 * distinct ones as PNGs and appends their index lines. Owns its queue,
 * thread and files; never touches the checks' frame queue. */
#define LOG_MODULE "explore"
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "runner/prim/explore.h"
#include "runner/prim/screen.h"
#include "util/err.h"
#include "util/file.h"
#include "util/log.h"
#include "util/path.h"
#include "util/banned.h" /* last: after every system header */

struct explore_note {
	char module[128];
	char what[256];
	int step;
};

struct explore_item {
	struct frame *f;
	struct explore_note note;
};

struct explore {
	struct vnc *vnc;          /* NULL once detached */
	char *dir;
	FILE *index;
	double t0;
	struct explore_note note; /* the runner's latest */
	struct explore_item q[EXPLORE_QUEUE_MAX];
	int head, len;
	long saved, dropped, failed;
	bool stop;
	struct frame *last;       /* the frame saved last (the thread's) */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	pthread_t thread;
};

void explore_note(struct explore *e, const char *module, int step, const char *what)
{
	if (!e)
		return;
	pthread_mutex_lock(&e->lock);
	snprintf(e->note.module, sizeof(e->note.module), "%s", module ? module : "");
	snprintf(e->note.what, sizeof(e->note.what), "%s", what ? what : "");
	e->note.step = step;
	pthread_mutex_unlock(&e->lock);
}

/* On the capture thread: queue the frame, never wait. */
static void on_frame(void *ctx, struct frame *f)
{
	struct explore *e = ctx;

	pthread_mutex_lock(&e->lock);
	if (e->len == EXPLORE_QUEUE_MAX) {
		e->dropped++;
	} else {
		struct explore_item *it = &e->q[(e->head + e->len) % EXPLORE_QUEUE_MAX];
		frame_ref(f);
		it->f = f;
		it->note = e->note;
		e->len++;
		pthread_cond_signal(&e->cond);
	}
	pthread_mutex_unlock(&e->lock);
}

/* Tabs and line ends would break the index's columns. */
static void one_field(char *s)
{
	for (; *s; s++)
		if (*s == '\t' || *s == '\n' || *s == '\r')
			*s = ' ';
}

/* On the thread: save it when it differs from the last frame saved. */
static void consider(struct explore *e, struct explore_item *it)
{
	char name[64], *path;
	double t = it->f->t - e->t0;
	int rc;

	if (!screen_changed(e->last, it->f, SCREEN_STILL_LEVEL) || e->saved >= EXPLORE_MAX_FRAMES) {
		frame_unref(it->f);
		return;
	}
	snprintf(name, sizeof(name), "%04ld-%.3f.png", e->saved + 1, t > 0 ? t : 0.0);
	path = path_join(e->dir, name);
	rc = path ? image_save_png(it->f->img, path) : ERR_NOMEM;
	free(path);
	if (rc) {
		if (e->failed++ == 0)
			log_warn("explore: cannot write '%s': %s", name, err_str(rc));
		frame_unref(it->f);
		return;
	}
	e->saved++;
	one_field(it->note.module);
	one_field(it->note.what);
	if (e->index) {
		fprintf(e->index, "%s\t%.3f\t%s\t%d\t%s\n", name, t > 0 ? t : 0.0,
			it->note.module[0] ? it->note.module : "-", it->note.step, it->note.what);
		fflush(e->index);
	}
	frame_unref(e->last);
	e->last = it->f;
	if (e->saved == EXPLORE_MAX_FRAMES)
		log_warn("explore: %d frames saved, the rest of the run is not", EXPLORE_MAX_FRAMES);
}

static void *explore_main(void *arg)
{
	struct explore *e = arg;

	pthread_mutex_lock(&e->lock);
	for (;;) {
		struct explore_item it;

		if (e->len == 0) {
			struct timespec ts;

			if (e->stop)
				break;
			/* Keep QEMU's display refresh fast while nothing comes:
			 * after a still while it backs off to seconds. */
			if (e->vnc)
				vnc_nudge(e->vnc);
			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_nsec += EXPLORE_NUDGE_MS * 1000000L;
			ts.tv_sec += ts.tv_nsec / 1000000000L;
			ts.tv_nsec %= 1000000000L;
			pthread_cond_timedwait(&e->cond, &e->lock, &ts);
			continue;
		}
		it = e->q[e->head];
		e->head = (e->head + 1) % EXPLORE_QUEUE_MAX;
		e->len--;
		pthread_mutex_unlock(&e->lock);
		consider(e, &it);
		pthread_mutex_lock(&e->lock);
	}
	pthread_mutex_unlock(&e->lock);
	return NULL;
}

static void explore_free(struct explore *e)
{
	if (e->index)
		fclose(e->index);
	frame_unref(e->last);
	free(e->dir);
	free(e);
}

int explore_start(struct vnc *v, const char *dir, double t0, struct explore **out)
{
	struct explore *e = calloc(1, sizeof(*e));
	char *ipath = NULL;
	int rc;

	*out = NULL;
	if (!e)
		return ERR_NOMEM;
	e->vnc = v;
	e->t0 = t0;
	e->dir = strdup(dir);
	if (!e->dir) {
		explore_free(e);
		return ERR_NOMEM;
	}
	if ((rc = file_mkdir_p(dir, 0755)) != 0) {
		explore_free(e);
		return rc;
	}
	ipath = path_join(dir, EXPLORE_INDEX);
	e->index = ipath ? fopen(ipath, "w") : NULL;
	free(ipath);
	if (!e->index) {
		explore_free(e);
		return ERR_IO;
	}
	fputs("# file\tseconds\tmodule\tstep\twhat\n", e->index);
	pthread_mutex_init(&e->lock, NULL);
	pthread_cond_init(&e->cond, NULL);
	if ((rc = pthread_create(&e->thread, NULL, explore_main, e)) != 0) {
		rc = -rc;
		goto fail;
	}
	if ((rc = vnc_add_listener(v, on_frame, e)) != 0) {
		pthread_mutex_lock(&e->lock);
		e->stop = true;
		pthread_cond_signal(&e->cond);
		pthread_mutex_unlock(&e->lock);
		pthread_join(e->thread, NULL);
		goto fail;
	}
	*out = e;
	return 0;
fail:
	pthread_mutex_destroy(&e->lock);
	pthread_cond_destroy(&e->cond);
	explore_free(e);
	return rc;
}

void explore_detach(struct explore *e)
{
	if (!e)
		return;
	pthread_mutex_lock(&e->lock);
	e->vnc = NULL;
	pthread_mutex_unlock(&e->lock);
}

long explore_stop(struct explore *e)
{
	long saved;

	if (!e)
		return 0;
	pthread_mutex_lock(&e->lock);
	e->vnc = NULL;
	e->stop = true;
	pthread_cond_signal(&e->cond);
	pthread_mutex_unlock(&e->lock);
	pthread_join(e->thread, NULL);
	if (e->dropped)
		log_warn("explore: %ld frames came faster than they could be compared and were skipped", e->dropped);
	saved = e->saved;
	pthread_mutex_destroy(&e->lock);
	pthread_cond_destroy(&e->cond);
	explore_free(e);
	return saved;
}
