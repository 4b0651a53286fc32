/* SPDX-License-Identifier: MIT */
/* vnc.c - the VNC capture thread: owns the libvncclient connection, turns
 * each complete, changed framebuffer update into a normalised frame (only
 * the rows the server rewrote are converted, the rest copied from the last
 * frame; buffers recycled through a frame pool, image/frame.h), queues
 * it (bounded, drops logged) and hands it to listeners. Input and the
 * refresh nudge come from other threads and write under wlock, which the capture thread also holds
 * while libvncclient handles a message. */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>
#define LOG_MODULE "vnc"
#include "util/err.h"
#include "util/limits.h"
#include "util/log.h"
#include "util/time.h"
#include <rfb/rfbclient.h>
#include "vm/vnc.h"
#include "util/banned.h" /* last: after every system header */

#define VNC__LISTENERS 4

struct vnc__listener {
	vnc_frame_fn fn;
	void *ctx;
};

struct vnc {
	rfbClient *cl;
	pthread_t thread;
	bool thread_started;
	int stop, watch;          /* atomics */
	pthread_mutex_t wlock;    /* serialises use of the socket */
	pthread_mutex_t lock;     /* everything below, with cond */
	pthread_cond_t cond;
	int xres, yres;
	bool alive;
	char error[320];
	int fb_w, fb_h;
	/* Capture thread only. */
	uint8_t *fb;              /* the framebuffer we allocated for libvncclient */
	bool dirty;
	int dirty_y0, dirty_y1;   /* rows the server rewrote since the last frame */
	bool base_ok;             /* the framebuffer outside them equals latest */
	struct frame_pool *pool;
	struct frame *pending;
	/* Frames. */
	uint64_t seq;
	struct frame *latest;
	struct frame *queue[VNC_QUEUE_MAX];
	int qhead, qlen, qmax;
	unsigned long dropped;
	struct vnc__listener listeners[VNC__LISTENERS];
	int nlisteners;
};

static void nudge(struct vnc *v);

/* Replace libvncclient's encoding list. libvncclient 0.9.14 advertises
 * ExtendedDesktopSize but ignores its resizes when the screen id is 0,
 * which is the id QEMU sends: the guest's switch to 720x400 text mode then
 * breaks the connection ("Rect too large"). Without it QEMU falls back to
 * plain DesktopSize, which libvncclient handles. Lossless encodings only. */
static rfbBool send_encodings(rfbClient *cl)
{
	static const uint32_t encs[] = { rfbEncodingRaw, rfbEncodingZRLE,
		rfbEncodingNewFBSize, rfbEncodingLastRect };
	unsigned char msg[4 + sizeof(encs)];
	size_t i;

	msg[0] = rfbSetEncodings;
	msg[1] = 0;
	msg[2] = 0;
	msg[3] = (unsigned char)(sizeof(encs) / sizeof(encs[0]));
	for (i = 0; i < sizeof(encs) / sizeof(encs[0]); i++) {
		msg[4 + 4 * i] = (unsigned char)(encs[i] >> 24);
		msg[5 + 4 * i] = (unsigned char)(encs[i] >> 16);
		msg[6 + 4 * i] = (unsigned char)(encs[i] >> 8);
		msg[7 + 4 * i] = (unsigned char)encs[i];
	}
	return WriteToRFBServer(cl, (const char *)msg, sizeof(msg));
}

static int client_tag; /* address used as libvncclient's client-data key */
static __thread char lib_last_msg[256];

/* libvncclient logs through two process-wide hooks; route them to our log
 * and remember the thread's last message to explain a dropped connection. */
static void lib_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void lib_log(const char *fmt, ...)
{
	va_list ap;
	size_t n;

	va_start(ap, fmt);
	vsnprintf(lib_last_msg, sizeof(lib_last_msg), fmt, ap);
	va_end(ap);
	n = strlen(lib_last_msg);
	while (n && (lib_last_msg[n - 1] == '\n' || lib_last_msg[n - 1] == '\r'))
		lib_last_msg[--n] = '\0';
	log_debug("libvncclient: %s", lib_last_msg);
}

static void lib_init(void)
{
	rfbClientLog = lib_log;
	rfbClientErr = lib_log;
}

static struct vnc *vnc_of(rfbClient *cl)
{
	return rfbClientGetClientData(cl, &client_tag);
}

/* libvncclient asks for a framebuffer at the handshake and on DesktopSize. */
static rfbBool malloc_fb(rfbClient *cl)
{
	struct vnc *v = vnc_of(cl);
	size_t px, bytes;
	uint8_t *fb;

	if (cl->width <= 0 || cl->height <= 0 ||
	    __builtin_mul_overflow((size_t)cl->width, (size_t)cl->height, &px) ||
	    px > LIMIT_VNC_PIXELS || __builtin_mul_overflow(px, (size_t)4, &bytes)) {
		rfbClientErr("framebuffer size %dx%d is out of range", cl->width, cl->height);
		return FALSE;
	}
	fb = calloc(1, bytes);
	if (!fb) {
		rfbClientErr("no memory for a %dx%d framebuffer", cl->width, cl->height);
		return FALSE;
	}
	free(cl->frameBuffer);
	cl->frameBuffer = fb;
	if (v) {
		v->fb = fb;
		v->base_ok = false; /* a new, black framebuffer */
		pthread_mutex_lock(&v->lock);
		v->fb_w = cl->width;
		v->fb_h = cl->height;
		pthread_mutex_unlock(&v->lock);
		log_debug("framebuffer is %dx%d", cl->width, cl->height);
	}
	return TRUE;
}

static void got_update(rfbClient *cl, int x, int y, int w, int h)
{
	struct vnc *v = vnc_of(cl);
	int y1;

	(void)x, (void)w;
	if (!v)
		return;
	/* libvncclient checked the rectangle against the framebuffer; clamp
	 * anyway, it decides which rows are copied instead of converted. */
	y1 = h > 0 && y < cl->height - h ? y + h : cl->height;
	if (y < 0)
		y = 0;
	if (y > y1)
		y = y1;
	if (!v->dirty) {
		v->dirty_y0 = y;
		v->dirty_y1 = y1;
	} else {
		if (y < v->dirty_y0)
			v->dirty_y0 = y;
		if (y1 > v->dirty_y1)
			v->dirty_y1 = y1;
	}
	v->dirty = true;
}

/* Pixels arrive as bytes R, G, B, X (32 bpp, shifts 0/8/16, LE). */
static void rgbx_rows(uint8_t *dst, const uint8_t *src, size_t px)
{
	size_t i;

	for (i = 0; i < px; i++) {
		dst[3 * i] = src[4 * i];
		dst[3 * i + 1] = src[4 * i + 1];
		dst[3 * i + 2] = src[4 * i + 2];
	}
}

/* A framebuffer larger than xres x yres, scaled down as a new frame
 * (image_normalise; rare, not pooled). */
static struct frame *frame_scaled(struct vnc *v, const uint8_t *src, int w, int h)
{
	struct image *raw = image_new(w, h), *img;

	if (!raw)
		return NULL;
	rgbx_rows(raw->px, src, (size_t)w * (size_t)h);
	img = image_normalise(raw, v->xres, v->yres);
	image_free(raw);
	return img ? frame_from_image(img) : NULL;
}

/* Rows [y0, y1) of a w x h framebuffer into f, pasted top-left as
 * image_normalise does for a framebuffer no larger than the frame: grey
 * (120) right of it. */
static void paste_rows(struct frame *f, const uint8_t *src, int w, int y0, int y1)
{
	size_t row = (size_t)f->img->w * 3;
	int y;

	if (w == f->img->w) {
		rgbx_rows(f->img->px + (size_t)y0 * row, src + (size_t)y0 * (size_t)w * 4,
			  (size_t)(y1 - y0) * (size_t)w);
		return;
	}
	for (y = y0; y < y1; y++) {
		uint8_t *dst = f->img->px + (size_t)y * row;

		rgbx_rows(dst, src + (size_t)y * (size_t)w * 4, (size_t)w);
		memset(dst + (size_t)w * 3, 120, row - (size_t)w * 3);
	}
}

static bool row_same(const struct image *a, const struct image *b, int y)
{
	size_t row = (size_t)a->w * 3;

	return !memcmp(a->px + (size_t)y * row, b->px + (size_t)y * row, row);
}

/* Build the frame for the framebuffer as it is now, if it changed since the
 * last frame. Runs on the capture thread only, which alone touches the
 * framebuffer and writes latest. Rows the server did not rewrite since the
 * last frame are copied from it; the rewritten ones are converted and
 * compared with it, so a rewrite with the same pixels makes no frame. */
static void finished_update(rfbClient *cl)
{
	struct vnc *v = vnc_of(cl);
	const struct frame *last;
	struct frame *f = NULL;
	const uint8_t *src = cl->frameBuffer;
	int w = cl->width, h = cl->height, y0 = 0, y1 = h, lo, hi;
	size_t row;
	bool same_fb, partial;

	if (!v || !v->dirty || !src)
		return;
	v->dirty = false;
	row = (size_t)v->xres * 3;
	last = v->latest; /* written by this thread only */
	same_fb = last && last->fb_w == w && last->fb_h == h;
	if (w <= v->xres && h <= v->yres) {
		f = frame_pool_get(v->pool);
		if (!f)
			goto oom;
		partial = same_fb && v->base_ok;
		if (partial) {
			y0 = v->dirty_y0 < h ? v->dirty_y0 : h;
			y1 = v->dirty_y1 < h ? v->dirty_y1 : h;
			if (y1 < y0)
				y1 = y0;
		}
		paste_rows(f, src, w, y0, y1);
		if (partial) {
			memcpy(f->img->px, last->img->px, (size_t)y0 * row);
			memcpy(f->img->px + (size_t)y1 * row, last->img->px + (size_t)y1 * row,
			       (size_t)(v->yres - y1) * row);
		} else {
			memset(f->img->px + (size_t)h * row, 120, (size_t)(v->yres - h) * row);
		}
	} else {
		f = frame_scaled(v, src, w, h);
		if (!f)
			goto oom;
		y1 = v->yres;
	}
	f->fb_w = w;
	f->fb_h = h;
	v->base_ok = true;
	if (same_fb) {
		/* Only rows [y0, y1) can differ from the last frame. */
		lo = y0;
		hi = y1;
		while (lo < hi && row_same(f->img, last->img, lo))
			lo++;
		if (lo == hi) {
			frame_unref(f); /* rewritten with the same pixels */
			return;
		}
		while (row_same(f->img, last->img, hi - 1))
			hi--;
		f->same_top = lo;
		f->same_bottom = v->yres - hi;
	}
	f->t = time_mono();
	frame_unref(v->pending); /* only one per message; defensive */
	v->pending = f;
	return;
oom:
	/* Convert everything next time: the last frame is not this state. */
	v->base_ok = false;
	log_err("out of memory building a %dx%d frame: frame lost", w, h);
}

/* Publish the frame built by the last message: number it, queue it, tell
 * the listeners. Capture thread, no lock held on entry. */
static void publish(struct vnc *v)
{
	struct frame *f = v->pending;
	struct vnc__listener ls[VNC__LISTENERS];
	int nls, i;

	if (!f)
		return;
	v->pending = NULL;
	pthread_mutex_lock(&v->lock);
	f->seq = ++v->seq;
	if (v->latest)
		frame_unref(v->latest);
	frame_ref(f);
	v->latest = f;
	/* Checks start from the newest frame: while none is pending, older
	 * frames matter only to a wait_screen_change that began before, and
	 * the newest shows it the change; VNC_IDLE_QUEUE keeps just that. */
	while (v->qlen >= (v->watch || v->qmax < VNC_IDLE_QUEUE ? v->qmax : VNC_IDLE_QUEUE)) {
		struct frame *old = v->queue[v->qhead];

		if (v->watch)
			log_warn("frame %llu dropped unseen: the checker is %d frames behind",
				 (unsigned long long)old->seq, v->qlen);
		else
			log_debug("frame %llu dropped from the idle queue", (unsigned long long)old->seq);
		frame_unref(old);
		v->qhead = (v->qhead + 1) % VNC_QUEUE_MAX;
		v->qlen--;
		v->dropped++;
	}
	v->queue[(v->qhead + v->qlen) % VNC_QUEUE_MAX] = f; /* the creation ref */
	v->qlen++;
	frame_ref(f); /* held while the listeners run */
	nls = v->nlisteners;
	memcpy(ls, v->listeners, sizeof(ls));
	pthread_cond_broadcast(&v->cond);
	pthread_mutex_unlock(&v->lock);
	for (i = 0; i < nls; i++)
		ls[i].fn(ls[i].ctx, f);
	frame_unref(f);
}

static void mark_dead(struct vnc *v, const char *why)
{
	pthread_mutex_lock(&v->lock);
	if (v->alive) {
		v->alive = false;
		snprintf(v->error, sizeof(v->error), "vnc connection lost: %s%s%s", why,
			 lib_last_msg[0] ? ": " : "", lib_last_msg);
		log_warn("%s", v->error);
	}
	pthread_cond_broadcast(&v->cond);
	pthread_mutex_unlock(&v->lock);
}

static void *capture_main(void *arg)
{
	struct vnc *v = arg;
	int64_t last_nudge = 0;

	while (!__atomic_load_n(&v->stop, __ATOMIC_ACQUIRE)) {
		bool watch = __atomic_load_n(&v->watch, __ATOMIC_RELAXED);
		int n = WaitForMessage(v->cl, watch ? VNC_NUDGE_MS * 500 : 200000);

		if (n < 0) {
			mark_dead(v, "waiting for the server failed");
			break;
		}
		if (n > 0) {
			rfbBool ok;

			/* libvncclient buffers reads: drain what it holds too. */
			do {
				pthread_mutex_lock(&v->wlock);
				ok = HandleRFBServerMessage(v->cl);
				pthread_mutex_unlock(&v->wlock);
				publish(v);
			} while (ok && v->cl->buffered > 0);
			if (!ok) {
				mark_dead(v, "the server closed the connection or broke the protocol");
				break;
			}
		}
		if (watch && time_mono_ms() - last_nudge >= VNC_NUDGE_MS) {
			nudge(v);
			last_nudge = time_mono_ms();
		}
	}
	return NULL;
}

int vnc_connect(const char *path, int xres, int yres, int timeout_ms,
		struct vnc **out, char *err, size_t errlen)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	static char encodings[] = "raw zrle";
	static char prog[] = "vigil";
	int64_t deadline = time_mono_ms() + timeout_ms;
	struct vnc *v;
	int rc;

	*out = NULL;
	pthread_once(&once, lib_init);
	if (xres <= 0 || yres <= 0) {
		snprintf(err, errlen, "bad screen size %dx%d", xres, yres);
		return ERR_INVALID;
	}
	v = calloc(1, sizeof(*v));
	if (!v)
		return ERR_NOMEM;
	pthread_mutex_init(&v->lock, NULL);
	pthread_mutex_init(&v->wlock, NULL);
	{
		pthread_condattr_t ca;

		/* vnc_next_frame's deadline is on the monotonic clock. */
		pthread_condattr_init(&ca);
		pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
		pthread_cond_init(&v->cond, &ca);
		pthread_condattr_destroy(&ca);
	}
	v->xres = xres;
	v->yres = yres;
	v->qmax = VNC_QUEUE_DEFAULT;
	v->pool = frame_pool_new(xres, yres);
	if (!v->pool) {
		rc = ERR_NOMEM;
		goto fail;
	}
	for (;;) {
		char *argv[] = { prog, NULL };
		int argc = 1;
		rfbClient *cl = rfbGetClient(8, 3, 4);

		if (!cl) {
			rc = ERR_NOMEM;
			goto fail;
		}
		free(cl->serverHost); /* rfbGetClient's strdup("") */
		cl->serverHost = strdup(path);
		cl->canHandleNewFBSize = TRUE;
		cl->appData.encodingsString = encodings;
		cl->appData.useRemoteCursor = FALSE;
		cl->appData.enableJPEG = FALSE;
		cl->appData.shareDesktop = TRUE;
		cl->MallocFrameBuffer = malloc_fb;
		cl->GotFrameBufferUpdate = got_update;
		cl->FinishedFrameBufferUpdate = finished_update;
		cl->connectTimeout = 5;
		cl->readTimeout = 10;
		rfbClientSetClientData(cl, &client_tag, v);
		lib_last_msg[0] = '\0';
		/* rfbInitClient frees the client on failure, but not the
		 * framebuffer, which is ours. */
		if (rfbInitClient(cl, &argc, argv)) {
			v->cl = cl;
			break;
		}
		free(v->fb);
		v->fb = NULL;
		if (time_mono_ms() >= deadline) {
			snprintf(err, errlen, "cannot connect to vnc socket '%s': %s", path,
				 lib_last_msg[0] ? lib_last_msg : "no answer");
			rc = ERR_TIMEOUT;
			goto fail;
		}
		time_sleep_ms(100);
	}
	if (!send_encodings(v->cl)) {
		snprintf(err, errlen, "cannot set vnc encodings on '%s'", path);
		rc = ERR_IO;
		goto fail;
	}
	/* Keep QEMU, started later, from inheriting the socket. */
	(void)fcntl(v->cl->sock, F_SETFD, FD_CLOEXEC);
	v->alive = true;
	rc = pthread_create(&v->thread, NULL, capture_main, v);
	if (rc) {
		rc = -rc;
		snprintf(err, errlen, "cannot start the vnc capture thread: %s", strerror(-rc));
		goto fail;
	}
	v->thread_started = true;
	log_info("connected to '%s', framebuffer %dx%d", path, v->cl->width, v->cl->height);
	*out = v;
	return 0;
fail:
	vnc_close(v);
	return rc;
}

void vnc_close(struct vnc *v)
{
	if (!v)
		return;
	if (v->thread_started) {
		__atomic_store_n(&v->stop, 1, __ATOMIC_RELEASE);
		pthread_join(v->thread, NULL);
	}
	if (v->cl) {
		v->cl->frameBuffer = NULL;
		rfbClientCleanup(v->cl);
	}
	free(v->fb);
	while (v->qlen) {
		frame_unref(v->queue[v->qhead]);
		v->qhead = (v->qhead + 1) % VNC_QUEUE_MAX;
		v->qlen--;
	}
	frame_unref(v->latest);
	frame_unref(v->pending);
	frame_pool_close(v->pool);
	pthread_cond_destroy(&v->cond);
	pthread_mutex_destroy(&v->wlock);
	pthread_mutex_destroy(&v->lock);
	free(v);
}

bool vnc_alive(struct vnc *v)
{
	bool alive;

	pthread_mutex_lock(&v->lock);
	alive = v->alive;
	pthread_mutex_unlock(&v->lock);
	return alive;
}

void vnc_error(struct vnc *v, char *err, size_t errlen)
{
	pthread_mutex_lock(&v->lock);
	snprintf(err, errlen, "%s", v->alive ? "" : v->error);
	pthread_mutex_unlock(&v->lock);
}

struct frame *vnc_latest(struct vnc *v)
{
	struct frame *f;

	pthread_mutex_lock(&v->lock);
	f = v->latest;
	if (f)
		frame_ref(f);
	pthread_mutex_unlock(&v->lock);
	return f;
}

int vnc_next_frame(struct vnc *v, uint64_t after_seq, int timeout_ms,
		   struct frame **out)
{
	struct timespec ts;
	int rc = ERR_TIMEOUT, i;

	*out = NULL;
	if (timeout_ms < 0)
		timeout_ms = 0; /* a negative wait would make the deadline invalid */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_sec += timeout_ms / 1000;
	ts.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&v->lock);
	for (;;) {
		/* Frames up to after_seq are behind the consumer: release them so
		 * they are not counted as dropped unseen later. */
		while (v->qlen > 0 && v->queue[v->qhead]->seq <= after_seq) {
			frame_unref(v->queue[v->qhead]);
			v->qhead = (v->qhead + 1) % VNC_QUEUE_MAX;
			v->qlen--;
		}
		for (i = 0; i < v->qlen; i++) {
			struct frame *f = v->queue[(v->qhead + i) % VNC_QUEUE_MAX];

			if (f->seq > after_seq) {
				frame_ref(f);
				*out = f;
				rc = 0;
				goto out;
			}
		}
		if (!v->alive) {
			rc = ERR_CLOSED;
			break;
		}
		if (pthread_cond_timedwait(&v->cond, &v->lock, &ts) == ETIMEDOUT) {
			rc = ERR_TIMEOUT;
			/* One last look: a frame may have come with the timeout. */
			for (i = 0; i < v->qlen; i++) {
				struct frame *f = v->queue[(v->qhead + i) % VNC_QUEUE_MAX];

				if (f->seq > after_seq) {
					frame_ref(f);
					*out = f;
					rc = 0;
					break;
				}
			}
			break;
		}
	}
out:
	pthread_mutex_unlock(&v->lock);
	return rc;
}

void vnc_set_queue_len(struct vnc *v, int len)
{
	if (len < 1)
		len = 1;
	if (len > VNC_QUEUE_MAX)
		len = VNC_QUEUE_MAX;
	pthread_mutex_lock(&v->lock);
	v->qmax = len;
	while (v->qlen > v->qmax) {
		frame_unref(v->queue[v->qhead]);
		v->qhead = (v->qhead + 1) % VNC_QUEUE_MAX;
		v->qlen--;
	}
	pthread_mutex_unlock(&v->lock);
}

int vnc_add_listener(struct vnc *v, vnc_frame_fn fn, void *ctx)
{
	int rc = 0;

	pthread_mutex_lock(&v->lock);
	if (v->nlisteners >= VNC__LISTENERS) {
		rc = ERR_TOO_BIG;
	} else {
		v->listeners[v->nlisteners].fn = fn;
		v->listeners[v->nlisteners].ctx = ctx;
		v->nlisteners++;
	}
	pthread_mutex_unlock(&v->lock);
	return rc;
}

void vnc_fb_size(struct vnc *v, int *w, int *h)
{
	pthread_mutex_lock(&v->lock);
	*w = v->fb_w;
	*h = v->fb_h;
	pthread_mutex_unlock(&v->lock);
}

/* Input: every write to the socket holds wlock, so key, pointer and nudge
 * messages never interleave with libvncclient's own update requests. */

static void nudge(struct vnc *v)
{
	static char empty[1];

	pthread_mutex_lock(&v->wlock);
	if (!SendClientCutText(v->cl, empty, 0))
		log_debug("could not send the refresh nudge");
	pthread_mutex_unlock(&v->wlock);
}

void vnc_nudge(struct vnc *v)
{
	if (vnc_alive(v))
		nudge(v);
}

void vnc_set_watch(struct vnc *v, bool on)
{
	__atomic_store_n(&v->watch, on ? 1 : 0, __ATOMIC_RELAXED);
	/* Reset QEMU's refresh timer now, not at the next capture tick. */
	if (on && vnc_alive(v))
		nudge(v);
}

int vnc_send_key(struct vnc *v, uint32_t keysym, int down)
{
	rfbBool ok;

	if (!vnc_alive(v))
		return ERR_CLOSED;
	pthread_mutex_lock(&v->wlock);
	ok = SendKeyEvent(v->cl, keysym, down ? TRUE : FALSE);
	pthread_mutex_unlock(&v->wlock);
	return ok ? 0 : ERR_IO;
}

static int clamp(int c, int max)
{
	if (c >= max)
		c = max - 1;
	return c < 0 ? 0 : c;
}

int vnc_send_pointer(struct vnc *v, int x, int y, int buttons)
{
	int fw, fh;
	rfbBool ok;

	if (!vnc_alive(v))
		return ERR_CLOSED;
	vnc_fb_size(v, &fw, &fh);
	if (fw > v->xres || fh > v->yres) {
		/* Normalisation scaled the whole screen: scale back. */
		x = (int)((long long)x * fw / v->xres);
		y = (int)((long long)y * fh / v->yres);
	}
	x = clamp(x, fw);
	y = clamp(y, fh);
	pthread_mutex_lock(&v->wlock);
	ok = SendPointerEvent(v->cl, x, y, buttons);
	pthread_mutex_unlock(&v->wlock);
	return ok ? 0 : ERR_IO;
}
