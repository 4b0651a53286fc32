/* SPDX-License-Identifier: MIT */
/* liveview.c - the live view's frame writer (see liveview.h): a thread
 * that polls for OUT/live.on and, while it exists, writes each new VNC
 * frame to OUT/live.png and the runner's latest note to OUT/live.json.
 * Owns its thread, paths and note; never touches the check path or the
 * frame queue (it only peeks at the newest frame). */
#define LOG_MODULE "liveview"
#include <jansson.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "runner/prim/liveview.h"
#include "util/err.h"
#include "util/file.h"
#include "util/log.h"
#include "util/path.h"
#include "util/time.h"
#include "util/banned.h" /* last: after every system header */

struct liveview {
	struct vnc *vnc;
	char *on_path, *png_path, *json_path;
	uint64_t last_seq;      /* the frame in live.png */
	double last_t;          /* its capture time (wall seconds) */
	double last_w;          /* when it was written (wall seconds) */
	/* The note, under lock; version counts changes. */
	char module[128], what[256];
	int step, line;
	unsigned version, version_written;
	bool stop;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	pthread_t thread;
};

void liveview_note(struct liveview *l, const char *module, int step, int line, const char *what)
{
	if (!l)
		return;
	pthread_mutex_lock(&l->lock);
	snprintf(l->module, sizeof(l->module), "%s", module ? module : "");
	snprintf(l->what, sizeof(l->what), "%s", what ? what : "");
	l->step = step;
	l->line = line;
	l->version++;
	pthread_mutex_unlock(&l->lock);
}

/* live.json for the frame in live.png and the note; 0 or negative. */
static int write_json(struct liveview *l)
{
	json_t *j;
	char *text;
	int rc;

	pthread_mutex_lock(&l->lock);
	j = json_pack("{s:I,s:I,s:I,s:s,s:i,s:i,s:s}", "seq", (json_int_t)l->last_seq, "t",
		      (json_int_t)(l->last_t * 1000), "w", (json_int_t)(l->last_w * 1000), "module", l->module,
		      "step", l->step, "line", l->line, "what", l->what);
	l->version_written = l->version;
	pthread_mutex_unlock(&l->lock);
	text = j ? json_dumps(j, JSON_COMPACT) : NULL;
	rc = text ? file_write_all(l->json_path, text, strlen(text)) : ERR_NOMEM;
	free(text);
	json_decref(j);
	return rc;
}

int liveview_tick(struct liveview *l)
{
	struct frame *f;
	struct stat st;
	bool noted;
	int rc = 0;

	if (stat(l->on_path, &st) != 0)
		return 0;
	f = vnc_latest(l->vnc);
	if (f && f->seq != l->last_seq) {
		/* image_save_png replaces the file atomically (file_write_all). */
		if ((rc = image_save_png(f->img, l->png_path)) == 0) {
			double wall = time_wall();
			l->last_seq = f->seq;
			l->last_t = wall - (time_mono() - f->t);
			l->last_w = wall;
			rc = 1;
		} else {
			log_warn("live view: cannot write '%s': %s", l->png_path, err_str(rc));
		}
	}
	frame_unref(f);
	pthread_mutex_lock(&l->lock);
	noted = l->version != l->version_written;
	pthread_mutex_unlock(&l->lock);
	if ((rc == 1 || noted) && write_json(l))
		log_warn("live view: cannot write '%s'", l->json_path);
	return rc;
}

/* Sleep up to ms unless stopped; false once stopped. */
static bool nap(struct liveview *l, int ms)
{
	struct timespec ts;
	bool go;

	pthread_mutex_lock(&l->lock);
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_nsec += (long)ms * 1000000L;
	ts.tv_sec += ts.tv_nsec / 1000000000L;
	ts.tv_nsec %= 1000000000L;
	if (!l->stop)
		pthread_cond_timedwait(&l->cond, &l->lock, &ts);
	go = !l->stop;
	pthread_mutex_unlock(&l->lock);
	return go;
}

static void *live_main(void *arg)
{
	struct liveview *l = arg;
	int64_t last_write = 0, last_nudge = 0;
	struct stat st;

	do {
		int64_t now = time_mono_ms();
		if (stat(l->on_path, &st) != 0) {
			if (!nap(l, LIVEVIEW_INTERVAL_MS))
				break;
			continue;
		}
		/* QEMU backs its display refresh off to seconds on a still
		 * screen: the next change would reach VNC that late. */
		if (now - last_nudge >= LIVEVIEW_NUDGE_MS) {
			vnc_nudge(l->vnc);
			last_nudge = now;
		}
		if (now - last_write >= LIVEVIEW_MIN_GAP_MS && liveview_tick(l) == 1)
			last_write = now;
	} while (nap(l, LIVEVIEW_POLL_MS));
	return NULL;
}

static void live_free(struct liveview *l)
{
	free(l->on_path);
	free(l->png_path);
	free(l->json_path);
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
	l->json_path = path_join(out_dir, LIVEVIEW_JSON_FILE);
	if (!l->on_path || !l->png_path || !l->json_path) {
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
	unlink(l->json_path);
	pthread_mutex_destroy(&l->lock);
	pthread_cond_destroy(&l->cond);
	live_free(l);
}
