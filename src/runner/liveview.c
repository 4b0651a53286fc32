/* SPDX-License-Identifier: MIT */
/* liveview.c - the live view's frame writer (see liveview.h): a thread
 * that polls for OUT/live.on and writes the newest VNC frame to
 * OUT/live.png. Owns its thread and paths; never touches the check path or
 * the frame queue. */
#define LOG_MODULE "liveview"
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "runner/liveview.h"
#include "util/err.h"
#include "util/file.h"
#include "util/log.h"
#include "util/path.h"
#include "util/banned.h" /* last: after every system header */

struct liveview {
	struct vnc *vnc;
	char *on_path, *png_path;
	uint64_t last_seq;
	bool stop;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	pthread_t thread;
};

int liveview_tick(struct liveview *l)
{
	struct frame *f;
	struct stat st;
	int rc = 0;

	if (stat(l->on_path, &st) != 0)
		return 0;
	f = vnc_latest(l->vnc);
	if (!f || f->seq == l->last_seq) {
		frame_unref(f);
		return 0;
	}
	/* image_save_png replaces the file atomically (file_write_all). */
	if ((rc = image_save_png(f->img, l->png_path)) == 0) {
		l->last_seq = f->seq;
		rc = 1;
	} else {
		log_warn("live view: cannot write '%s': %s", l->png_path, err_str(rc));
	}
	frame_unref(f);
	return rc;
}

static void *live_main(void *arg)
{
	struct liveview *l = arg;
	struct timespec ts;

	pthread_mutex_lock(&l->lock);
	while (!l->stop) {
		pthread_mutex_unlock(&l->lock);
		(void)liveview_tick(l);
		pthread_mutex_lock(&l->lock);
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += (long)LIVEVIEW_INTERVAL_MS * 1000000L;
		ts.tv_sec += ts.tv_nsec / 1000000000L;
		ts.tv_nsec %= 1000000000L;
		if (!l->stop)
			pthread_cond_timedwait(&l->cond, &l->lock, &ts);
	}
	pthread_mutex_unlock(&l->lock);
	return NULL;
}

static void live_free(struct liveview *l)
{
	free(l->on_path);
	free(l->png_path);
	free(l);
}

int liveview_start(struct vnc *v, const char *out_dir, struct liveview **out)
{
	struct liveview *l = calloc(1, sizeof(*l));
	int rc;

	*out = NULL;
	if (!l)
		return ERR_NOMEM;
	l->vnc = v;
	l->on_path = path_join(out_dir, LIVEVIEW_ON_FILE);
	l->png_path = path_join(out_dir, LIVEVIEW_PNG_FILE);
	if (!l->on_path || !l->png_path) {
		live_free(l);
		return ERR_NOMEM;
	}
	pthread_mutex_init(&l->lock, NULL);
	pthread_cond_init(&l->cond, NULL);
	if ((rc = pthread_create(&l->thread, NULL, live_main, l)) != 0) {
		pthread_mutex_destroy(&l->lock);
		pthread_cond_destroy(&l->cond);
		live_free(l);
		return -rc;
	}
	*out = l;
	return 0;
}

void liveview_stop(struct liveview *l)
{
	if (!l)
		return;
	pthread_mutex_lock(&l->lock);
	l->stop = true;
	pthread_cond_signal(&l->cond);
	pthread_mutex_unlock(&l->lock);
	pthread_join(l->thread, NULL);
	unlink(l->png_path);
	pthread_mutex_destroy(&l->lock);
	pthread_cond_destroy(&l->cond);
	live_free(l);
}
