/* SPDX-License-Identifier: MIT */
/* vnc.c - the VNC capture thread: owns the libvncclient connection, turns
 * each complete, changed framebuffer update into a normalised frame, queues
 * it (bounded, drops logged) and hands it to listeners. Input and the
 * refresh nudge come from other threads and write under wlock, which the
 * capture thread also holds while libvncclient handles a message. */
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
#include "util/log.h"
#include "util/util.h"
#include <rfb/rfbclient.h>
#include "vm/vnc.h"

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
	uint8_t *prev;            /* copy of the last frame's framebuffer */
	int prev_w, prev_h;
	bool dirty;
	struct vnc_frame *pending;
	/* Frames. */
	uint64_t seq;
	struct vnc_frame *latest;
	struct vnc_frame *queue[VNC_QUEUE_MAX];
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

void vnc_frame_ref(struct vnc_frame *f)
{
	__atomic_add_fetch(&f->refs, 1, __ATOMIC_RELAXED);
}

void vnc_frame_unref(struct vnc_frame *f)
{
	if (!f)
		return;
	if (__atomic_sub_fetch(&f->refs, 1, __ATOMIC_ACQ_REL) == 0) {
		image_free(f->img);
		free(f);
	}
}

/* libvncclient asks for a framebuffer at the handshake and on DesktopSize. */
static rfbBool malloc_fb(rfbClient *cl)
{
	struct vnc *v = vnc_of(cl);
	size_t px, bytes;
	uint8_t *fb;

	if (cl->width <= 0 || cl->height <= 0 ||
	    __builtin_mul_overflow((size_t)cl->width, (size_t)cl->height, &px) ||
	    px > LIMIT_IMAGE_PIXELS || __builtin_mul_overflow(px, (size_t)4, &bytes)) {
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

	(void)x, (void)y, (void)w, (void)h;
	if (v)
		v->dirty = true;
}

/* Build the frame for the framebuffer as it is now, if it changed since the
 * last frame. Runs on the capture thread only, which alone touches the
 * framebuffer and the previous copy. */
static void finished_update(rfbClient *cl)
{
	struct vnc *v = vnc_of(cl);
	size_t bytes = (size_t)cl->width * (size_t)cl->height * 4, i, n;
	struct image *raw = NULL, *img = NULL;
	struct vnc_frame *f = NULL;
	const uint8_t *src = cl->frameBuffer;

	if (!v || !v->dirty || !src)
		return;
	v->dirty = false;
	if (v->prev && v->prev_w == cl->width && v->prev_h == cl->height &&
	    !memcmp(v->prev, src, bytes))
		return; /* rewritten with the same pixels */
	if (!v->prev || v->prev_w != cl->width || v->prev_h != cl->height) {
		uint8_t *p = realloc(v->prev, bytes);

		if (!p)
			goto oom;
		v->prev = p;
		v->prev_w = cl->width;
		v->prev_h = cl->height;
	}
	memcpy(v->prev, src, bytes);
	raw = image_new(cl->width, cl->height);
	if (!raw)
		goto oom;
	/* Pixels arrive as bytes R, G, B, X (32 bpp, shifts 0/8/16, LE). */
	n = (size_t)cl->width * (size_t)cl->height;
	for (i = 0; i < n; i++) {
		raw->px[3 * i] = src[4 * i];
		raw->px[3 * i + 1] = src[4 * i + 1];
		raw->px[3 * i + 2] = src[4 * i + 2];
	}
	if (cl->width == v->xres && cl->height == v->yres) {
		img = raw;
		raw = NULL;
	} else {
		img = image_normalise(raw, v->xres, v->yres);
		if (!img)
			goto oom;
	}
	f = calloc(1, sizeof(*f));
	if (!f)
		goto oom;
	f->img = img;
	f->t = time_mono();
	f->fb_w = cl->width;
	f->fb_h = cl->height;
	f->refs = 1;
	img = NULL;
	vnc_frame_unref(v->pending); /* only one per message; defensive */
	v->pending = f;
	image_free(raw);
	return;
oom:
	/* Forget the copy so the next update retries instead of matching it. */
	free(v->prev);
	v->prev = NULL;
	image_free(raw);
	image_free(img);
	log_err("out of memory building a %dx%d frame: frame lost", cl->width, cl->height);
}

/* Publish the frame built by the last message: number it, queue it, tell
 * the listeners. Capture thread, no lock held on entry. */
static void publish(struct vnc *v)
{
	struct vnc_frame *f = v->pending;
	struct vnc__listener ls[VNC__LISTENERS];
	int nls, i;

	if (!f)
		return;
	v->pending = NULL;
	pthread_mutex_lock(&v->lock);
	f->seq = ++v->seq;
	if (v->latest)
		vnc_frame_unref(v->latest);
	vnc_frame_ref(f);
	v->latest = f;
	/* Checks start from the newest frame: while none is pending, older
	 * frames matter only to a wait_screen_change that began before, so a
	 * few are kept, not a whole queue of 2.4 MB screens. */
	while (v->qlen >= (v->watch || v->qmax < VNC_IDLE_QUEUE ? v->qmax : VNC_IDLE_QUEUE)) {
		struct vnc_frame *old = v->queue[v->qhead];

		if (v->watch)
			log_warn("frame %llu dropped unseen: the checker is %d frames behind",
				 (unsigned long long)old->seq, v->qlen);
		else
			log_debug("frame %llu dropped from the idle queue", (unsigned long long)old->seq);
		vnc_frame_unref(old);
		v->qhead = (v->qhead + 1) % VNC_QUEUE_MAX;
		v->qlen--;
		v->dropped++;
	}
	v->queue[(v->qhead + v->qlen) % VNC_QUEUE_MAX] = f; /* the creation ref */
	v->qlen++;
	vnc_frame_ref(f); /* held while the listeners run */
	nls = v->nlisteners;
	memcpy(ls, v->listeners, sizeof(ls));
	pthread_cond_broadcast(&v->cond);
	pthread_mutex_unlock(&v->lock);
	for (i = 0; i < nls; i++)
		ls[i].fn(ls[i].ctx, f);
	vnc_frame_unref(f);
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
		sleep_ms(100);
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
		vnc_frame_unref(v->queue[v->qhead]);
		v->qhead = (v->qhead + 1) % VNC_QUEUE_MAX;
		v->qlen--;
	}
	vnc_frame_unref(v->latest);
	vnc_frame_unref(v->pending);
	free(v->prev);
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

struct vnc_frame *vnc_latest(struct vnc *v)
{
	struct vnc_frame *f;

	pthread_mutex_lock(&v->lock);
	f = v->latest;
	if (f)
		vnc_frame_ref(f);
	pthread_mutex_unlock(&v->lock);
	return f;
}

int vnc_next_frame(struct vnc *v, uint64_t after_seq, int timeout_ms,
		   struct vnc_frame **out)
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
			vnc_frame_unref(v->queue[v->qhead]);
			v->qhead = (v->qhead + 1) % VNC_QUEUE_MAX;
			v->qlen--;
		}
		for (i = 0; i < v->qlen; i++) {
			struct vnc_frame *f = v->queue[(v->qhead + i) % VNC_QUEUE_MAX];

			if (f->seq > after_seq) {
				vnc_frame_ref(f);
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
				struct vnc_frame *f = v->queue[(v->qhead + i) % VNC_QUEUE_MAX];

				if (f->seq > after_seq) {
					vnc_frame_ref(f);
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
		vnc_frame_unref(v->queue[v->qhead]);
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
