/* SPDX-License-Identifier: MIT */
/* video.c - the WebM/VP8 recorder: a bounded frame queue filled by the
 * capture thread and an encoder thread that owns every FFmpeg object
 * (muxer, encoder, scaler). Nothing here may slow the capture thread: it
 * only takes a lock for a few pointer moves. */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/error.h>
#include <libavutil/imgutils.h>
#include <libavutil/opt.h>
#include <libswscale/swscale.h>
#define LOG_MODULE "video"
#include "util/err.h"
#include "util/log.h"
#include "util/time.h"
#include "video/video.h"
#include "util/banned.h" /* last: after every system header */

/* Quality for screens: constant quality with a generous cap. Text stays
 * sharp at crf 10; sparse frames get a large share of the cap anyway. */
#define VIDEO__CRF "10"
#define VIDEO__MAX_RATE 2000000
/* libvpx's fastest realtime speed: on screens it costs a fraction of the
 * time of speed 8 for the same size and sharpness. */
#define VIDEO__CPU_USED "16"
/* Macroblocks whose prediction error stays below this are coded as
 * unchanged without searching: the still part of a screen. Low enough
 * that a single changed glyph is always coded. */
#define VIDEO__STATIC_THRESH "100"
/* Colour conversion in strips of this many rows (even, for 4:2:0), so a
 * frame that changed in a few rows converts only their strips. With point
 * sampling a strip's output depends on its own rows only: converting some
 * strips gives exactly what converting the whole picture would. */
#define VIDEO__STRIP 16
#define VIDEO__SWS_FLAGS (SWS_POINT | SWS_FULL_CHR_H_INP)

struct video {
	char path[512];
	int w, h;
	double t0;
	pthread_t thread;
	bool thread_started;

	pthread_mutex_t lock;     /* everything in this block, with cond */
	pthread_cond_t cond;
	struct frame *queue[VIDEO_QUEUE_LEN];
	int qhead, qlen;
	bool closing, failed;
	bool held;                /* video_hold: the encoder takes no frame */
	double t_end;
	int result;               /* first error of the encoder thread */
	struct video_stats stats;

	/* Encoder thread only (and video_open before it starts). */
	AVFormatContext *fmt;
	AVCodecContext *enc;
	AVStream *st;
	struct SwsContext *sws;   /* whole frames of another size */
	struct SwsContext *strip; /* w x VIDEO__STRIP strips */
	struct SwsContext *tail;  /* the last strip when h is not a multiple */
	AVFrame *yuv;             /* the last frame encoded, kept for the end */
	uint64_t yuv_seq;         /* the frame in yuv, if yuv_valid */
	bool yuv_valid;
	AVPacket *pkt;
	bool have_frame;
	int64_t last_pts, last_key_pts;
	double last_flush;        /* time_mono() of the last cluster flush */
	bool unflushed;           /* packets written since then */
};

/* Map an FFmpeg error to our table. */
static int av_code(int averr)
{
	if (averr == AVERROR(ENOMEM))
		return ERR_NOMEM;
	if (averr < 0 && averr > -4096)
		return averr; /* AVERROR(e) is -e */
	return ERR_PROTO;
}

static double thread_cpu(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts))
		return 0;
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Record the encoder thread's first error; later frames are dropped. */
static void fail(struct video *v, int code, const char *what, int averr)
{
	char msg[AV_ERROR_MAX_STRING_SIZE] = "";

	if (averr)
		av_strerror(averr, msg, sizeof(msg));
	pthread_mutex_lock(&v->lock);
	if (!v->failed) {
		v->failed = true;
		v->result = code;
		log_err("video '%s': %s failed: %s; the video stops here", v->path,
			what, averr ? msg : err_str(code));
	}
	pthread_mutex_unlock(&v->lock);
}

/* Write out whatever packets the encoder has ready. */
static int drain_packets(struct video *v)
{
	int ret;

	for (;;) {
		ret = avcodec_receive_packet(v->enc, v->pkt);
		if (ret == AVERROR(EAGAIN) || ret == AVERROR_EOF)
			return 0;
		if (ret < 0) {
			fail(v, av_code(ret), "receiving a packet from the encoder", ret);
			return ret;
		}
		av_packet_rescale_ts(v->pkt, v->enc->time_base, v->st->time_base);
		v->pkt->stream_index = v->st->index;
		/* One stream, no reordering: no interleaving needed. */
		ret = av_write_frame(v->fmt, v->pkt);
		av_packet_unref(v->pkt);
		if (ret < 0) {
			fail(v, av_code(ret), "writing a packet", ret);
			return ret;
		}
		v->unflushed = true;
	}
}

/* End the muxer's open cluster and push it to the file, so a kill loses
 * nothing older than this. av_write_frame(NULL) makes the Matroska muxer
 * close its cluster; the cluster and its cue are then on disk. */
static void flush_cluster(struct video *v)
{
	int ret;

	v->last_flush = time_mono();
	if (!v->unflushed)
		return;
	v->unflushed = false;
	ret = av_write_frame(v->fmt, NULL);
	if (ret < 0) {
		fail(v, av_code(ret), "flushing the file", ret);
		return;
	}
	avio_flush(v->fmt->pb);
	if (v->fmt->pb->error < 0)
		fail(v, av_code(v->fmt->pb->error), "writing the file", v->fmt->pb->error);
}

/* Encode v->yuv (already filled) at video time ms. */
static int encode_at(struct video *v, int64_t ms)
{
	int ret;

	if (ms < 0)
		ms = 0;
	if (v->have_frame && ms <= v->last_pts)
		ms = v->last_pts + 1;
	v->yuv->pts = ms;
	v->yuv->pict_type = AV_PICTURE_TYPE_NONE;
	if (!v->have_frame || ms - v->last_key_pts >= VIDEO_KEYFRAME_MS) {
		v->yuv->pict_type = AV_PICTURE_TYPE_I;
		v->last_key_pts = ms;
	}
	v->have_frame = true;
	v->last_pts = ms;
	ret = avcodec_send_frame(v->enc, v->yuv);
	if (ret < 0) {
		fail(v, av_code(ret), "encoding a frame", ret);
		return ret;
	}
	return drain_packets(v);
}

static void account(struct video *v, bool frame)
{
	double cpu = thread_cpu();
	int64_t bytes = v->fmt->pb ? avio_tell(v->fmt->pb) : 0;

	pthread_mutex_lock(&v->lock);
	if (frame) {
		v->stats.frames++;
		v->stats.duration_s = (double)v->last_pts / 1000.0;
	}
	v->stats.cpu_s = cpu;
	if (bytes > 0)
		v->stats.bytes = (uint64_t)bytes;
	v->stats.unflushed = v->unflushed;
	pthread_mutex_unlock(&v->lock);
}

/* Black (Y 16, U/V 128): the screen before the first capture. */
static int fill_black(AVFrame *yuv)
{
	int y, ret = av_frame_make_writable(yuv);

	if (ret < 0)
		return ret;
	for (y = 0; y < yuv->height; y++)
		memset(yuv->data[0] + (size_t)y * (size_t)yuv->linesize[0], 16, (size_t)yuv->width);
	for (y = 0; y < (yuv->height + 1) / 2; y++) {
		memset(yuv->data[1] + (size_t)y * (size_t)yuv->linesize[1], 128, (size_t)(yuv->width + 1) / 2);
		memset(yuv->data[2] + (size_t)y * (size_t)yuv->linesize[2], 128, (size_t)(yuv->width + 1) / 2);
	}
	return 0;
}

/* Convert rows [y0, y1) (multiples of VIDEO__STRIP, y1 may be h) of a
 * w x h frame into v->yuv, strip by strip. 0 or ERR_NOMEM. */
static int convert_rows(struct video *v, const struct image *img, int y0, int y1)
{
	int y, n;

	for (y = y0; y < y1; y += VIDEO__STRIP) {
		struct SwsContext **ctx = &v->strip;
		const uint8_t *src[1] = { img->px + (size_t)y * (size_t)img->w * 3 };
		int src_stride[1] = { img->w * 3 };
		uint8_t *dst[3] = {
			v->yuv->data[0] + (size_t)y * (size_t)v->yuv->linesize[0],
			v->yuv->data[1] + (size_t)(y / 2) * (size_t)v->yuv->linesize[1],
			v->yuv->data[2] + (size_t)(y / 2) * (size_t)v->yuv->linesize[2],
		};

		n = y1 - y < VIDEO__STRIP ? y1 - y : VIDEO__STRIP;
		if (n < VIDEO__STRIP)
			ctx = &v->tail;
		*ctx = sws_getCachedContext(*ctx, v->w, n, AV_PIX_FMT_RGB24, v->w, n,
					    AV_PIX_FMT_YUV420P, VIDEO__SWS_FLAGS, NULL, NULL, NULL);
		if (!*ctx)
			return ERR_NOMEM;
		sws_scale(*ctx, src, src_stride, 0, n, dst, v->yuv->linesize);
	}
	return 0;
}

/* Convert f into v->yuv: when yuv holds the frame just before f, only the
 * strips of the rows f changed (frame.same_top/same_bottom). */
static int convert_frame(struct video *v, const struct frame *f)
{
	const struct image *img = f->img;
	const uint8_t *src[1] = { img->px };
	int src_stride[1] = { img->w * 3 }, y0 = 0, y1 = v->h;

	if (img->w != v->w || img->h != v->h) {
		v->sws = sws_getCachedContext(v->sws, img->w, img->h, AV_PIX_FMT_RGB24,
					      v->w, v->h, AV_PIX_FMT_YUV420P,
					      SWS_BILINEAR, NULL, NULL, NULL);
		if (!v->sws)
			return ERR_NOMEM;
		sws_scale(v->sws, src, src_stride, 0, img->h, v->yuv->data, v->yuv->linesize);
		return 0;
	}
	if (v->yuv_valid && f->seq == v->yuv_seq + 1 && f->same_top >= 0 &&
	    f->same_bottom >= 0 && f->same_top + f->same_bottom < v->h) {
		y0 = f->same_top / VIDEO__STRIP * VIDEO__STRIP;
		y1 = v->h - f->same_bottom;
		y1 = (y1 + VIDEO__STRIP - 1) / VIDEO__STRIP * VIDEO__STRIP;
		if (y1 > v->h)
			y1 = v->h;
	}
	return convert_rows(v, img, y0, y1);
}

/* Convert one captured frame and encode it at its capture time. The video
 * starts at 0 in every player only if a frame stands there: before the
 * first capture, that is a black one. */
static void encode_frame(struct video *v, const struct frame *f)
{
	int ret;
	int64_t ms = video_time_ms(v->t0, f->t);

	if (!v->have_frame && ms > 0) {
		ret = fill_black(v->yuv);
		if (ret < 0) {
			fail(v, av_code(ret), "allocating a picture", ret);
			return;
		}
		v->yuv_valid = false;
		if (encode_at(v, 0))
			return;
		account(v, true);
	}
	/* The encoder may still hold the previous picture: this copies it,
	 * so the rows a partial conversion keeps stay. */
	ret = av_frame_make_writable(v->yuv);
	if (ret < 0) {
		fail(v, av_code(ret), "allocating a picture", ret);
		return;
	}
	ret = convert_frame(v, f);
	if (ret) {
		v->yuv_valid = false;
		fail(v, ret, "setting up the colour conversion", 0);
		return;
	}
	/* A scaled picture is no base for the next frame's changed rows. */
	v->yuv_valid = f->img->w == v->w && f->img->h == v->h;
	v->yuv_seq = f->seq;
	if (encode_at(v, ms) == 0)
		account(v, true);
}

/* The last frame again at t_end, the encoder's tail, the trailer. */
static void finish(struct video *v, double t_end)
{
	int ret;
	bool failed;

	pthread_mutex_lock(&v->lock);
	failed = v->failed;
	pthread_mutex_unlock(&v->lock);
	if (!failed) {
		if (!v->have_frame) {
			ret = fill_black(v->yuv);
			if (ret < 0)
				fail(v, av_code(ret), "allocating a picture", ret);
			else if (encode_at(v, 0) == 0)
				account(v, true);
		} else {
			/* Same picture: make_writable keeps the pixels. */
			ret = av_frame_make_writable(v->yuv);
			if (ret < 0)
				fail(v, av_code(ret), "allocating a picture", ret);
		}
		if (ret >= 0 && encode_at(v, video_time_ms(v->t0, t_end)) == 0)
			account(v, true);
		ret = avcodec_send_frame(v->enc, NULL);
		if (ret < 0)
			fail(v, av_code(ret), "flushing the encoder", ret);
		else
			(void)drain_packets(v); /* records its own failure */
	}
	/* Write the trailer even after an error: the cues and duration make
	 * whatever was written seekable. */
	ret = av_write_trailer(v->fmt);
	if (ret < 0)
		fail(v, av_code(ret), "writing the trailer", ret);
	account(v, false);
}

static void *encoder_main(void *arg)
{
	struct video *v = arg;
	struct frame *f;
	struct timespec until;
	double t_end, next, wait_s;
	bool failed;

	for (;;) {
		pthread_mutex_lock(&v->lock);
		while ((!v->qlen || v->held) && !v->closing) {
			if (!v->unflushed) {
				pthread_cond_wait(&v->cond, &v->lock);
				continue;
			}
			next = v->last_flush + VIDEO_FLUSH_MS / 1000.0;
			wait_s = next - time_mono();
			if (wait_s <= 0)
				break;
			/* The cond uses the monotonic clock (video_open). */
			clock_gettime(CLOCK_MONOTONIC, &until);
			until.tv_nsec += (long)(wait_s * 1e9) + 1000000;
			until.tv_sec += until.tv_nsec / 1000000000;
			until.tv_nsec %= 1000000000;
			pthread_cond_timedwait(&v->cond, &v->lock, &until);
		}
		if (!v->qlen && v->closing) {
			t_end = v->t_end;
			pthread_mutex_unlock(&v->lock);
			finish(v, t_end);
			return NULL;
		}
		f = NULL;
		if (v->qlen && (!v->held || v->closing)) {
			f = v->queue[v->qhead];
			v->queue[v->qhead] = NULL;
			v->qhead = (v->qhead + 1) % VIDEO_QUEUE_LEN;
			v->qlen--;
		}
		failed = v->failed;
		pthread_mutex_unlock(&v->lock);

		if (f) {
			if (!failed)
				encode_frame(v, f);
			frame_unref(f);
		}
		if (!failed && time_mono() - v->last_flush >= VIDEO_FLUSH_MS / 1000.0)
			flush_cluster(v);
		account(v, false);
	}
}

static void free_ff(struct video *v)
{
	if (v->fmt) {
		if (v->fmt->pb)
			avio_closep(&v->fmt->pb);
		avformat_free_context(v->fmt);
		v->fmt = NULL;
	}
	avcodec_free_context(&v->enc);
	sws_freeContext(v->sws);
	v->sws = NULL;
	sws_freeContext(v->strip);
	v->strip = NULL;
	sws_freeContext(v->tail);
	v->tail = NULL;
	av_frame_free(&v->yuv);
	av_packet_free(&v->pkt);
}

static int set_opt(AVDictionary **d, const char *key, const char *val)
{
	return av_dict_set(d, key, val, 0) < 0 ? ERR_NOMEM : 0;
}

/* Encoder, muxer and file; v->path, w, h filled. */
static int open_ff(struct video *v, char *err, size_t errlen)
{
	const AVCodec *codec = avcodec_find_encoder_by_name("libvpx");
	AVDictionary *copts = NULL, *mopts = NULL;
	int ret;

	if (!codec) {
		err_set(err, errlen, "video '%s': this FFmpeg has no libvpx VP8 encoder "
			 "(install a libavcodec built with libvpx, or set NOVIDEO=1)", v->path);
		return ERR_NOT_FOUND;
	}
	ret = avformat_alloc_output_context2(&v->fmt, NULL, "webm", v->path);
	if (ret < 0 || !v->fmt) {
		err_set(err, errlen, "video '%s': this FFmpeg has no webm muxer", v->path);
		return ret == AVERROR(ENOMEM) ? ERR_NOMEM : ERR_NOT_FOUND;
	}
	v->enc = avcodec_alloc_context3(codec);
	v->yuv = av_frame_alloc();
	v->pkt = av_packet_alloc();
	v->st = avformat_new_stream(v->fmt, NULL);
	if (!v->enc || !v->yuv || !v->pkt || !v->st) {
		err_set(err, errlen, "video '%s': out of memory", v->path);
		return ERR_NOMEM;
	}
	v->enc->width = v->w;
	v->enc->height = v->h;
	v->enc->pix_fmt = AV_PIX_FMT_YUV420P;
	v->enc->time_base = (AVRational){ 1, 1000 };
	v->enc->bit_rate = VIDEO__MAX_RATE;
	v->enc->qmin = 4;
	v->enc->qmax = 48;
	/* Keyframes by video time (encode_at); this is only a backstop. */
	v->enc->gop_size = 600;
	/* One thread: the CPU cost stays in ours (measured) and off QEMU's. */
	v->enc->thread_count = 1;
	if (v->fmt->oformat->flags & AVFMT_GLOBALHEADER)
		v->enc->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
	if ((ret = set_opt(&copts, "deadline", "realtime")) ||
	    (ret = set_opt(&copts, "cpu-used", VIDEO__CPU_USED)) ||
	    (ret = set_opt(&copts, "lag-in-frames", "0")) ||
	    (ret = set_opt(&copts, "crf", VIDEO__CRF)) ||
	    (ret = set_opt(&copts, "static-thresh", VIDEO__STATIC_THRESH)))
		goto out;
	ret = avcodec_open2(v->enc, codec, &copts);
	if (ret < 0) {
		err_set(err, errlen, "video '%s': cannot open the VP8 encoder for %dx%d: %s",
			 v->path, v->w, v->h, av_err2str(ret));
		ret = av_code(ret);
		goto out;
	}
	ret = avcodec_parameters_from_context(v->st->codecpar, v->enc);
	if (ret < 0) {
		ret = av_code(ret);
		err_set(err, errlen, "video '%s': %s", v->path, err_str(ret));
		goto out;
	}
	v->st->time_base = v->enc->time_base;
	v->yuv->format = AV_PIX_FMT_YUV420P;
	v->yuv->width = v->w;
	v->yuv->height = v->h;
	ret = av_frame_get_buffer(v->yuv, 0);
	if (ret < 0) {
		err_set(err, errlen, "video '%s': out of memory", v->path);
		ret = ERR_NOMEM;
		goto out;
	}
	ret = avio_open(&v->fmt->pb, v->path, AVIO_FLAG_WRITE);
	if (ret < 0) {
		err_set(err, errlen, "video '%s': cannot create the file: %s",
			 v->path, av_err2str(ret));
		ret = av_code(ret);
		goto out;
	}
	/* Short clusters bound what a kill can lose even while frames keep
	 * coming; flush_cluster bounds it while the screen is still. */
	if ((ret = set_opt(&mopts, "cluster_time_limit", "1000")))
		goto out;
	ret = avformat_write_header(v->fmt, &mopts);
	if (ret < 0) {
		err_set(err, errlen, "video '%s': cannot write the header: %s",
			 v->path, av_err2str(ret));
		ret = av_code(ret);
		goto out;
	}
	avio_flush(v->fmt->pb);
	ret = 0;
out:
	av_dict_free(&copts);
	av_dict_free(&mopts);
	return ret;
}

/* FFmpeg's own messages go to our log: its errors as warnings (ours
 * follow with the story), chatter such as libvpx's version banner at
 * debug level, its debugging not at all. */
static void av_log_to_ours(void *avcl, int level, const char *fmt, va_list ap)
{
	char line[1024];
	size_t n;
	int prefix = 1;

	if (level > AV_LOG_VERBOSE)
		return;
	if (level <= AV_LOG_ERROR ? LOG_WARN > log_level_max : LOG_DEBUG > log_level_max)
		return;
	av_log_format_line2(avcl, level, fmt, ap, line, (int)sizeof(line), &prefix);
	n = strlen(line);
	while (n && (line[n - 1] == '\n' || line[n - 1] == '\r'))
		line[--n] = '\0';
	if (!n)
		return;
	if (level <= AV_LOG_ERROR)
		log_warn("ffmpeg: %s", line);
	else
		log_debug("ffmpeg: %s", line);
}

static void av_log_setup(void)
{
	av_log_set_callback(av_log_to_ours);
}

int video_open(const char *path, int w, int h, double t0,
	       struct video **out, char *err, size_t errlen)
{
	static pthread_once_t log_once = PTHREAD_ONCE_INIT;

	struct video *v = NULL;
	pthread_condattr_t ca;
	int ret;

	*out = NULL;
	pthread_once(&log_once, av_log_setup);
	if (w < 16 || h < 16 || w > 16384 || h > 16384 || (w & 1) || (h & 1)) {
		err_set(err, errlen, "video '%s': cannot encode %dx%d frames "
			 "(even sizes from 16 to 16384 only)", path, w, h);
		return ERR_INVALID;
	}
	if (strlen(path) >= sizeof(v->path)) {
		err_set(err, errlen, "video path is too long: '%s'", path);
		return ERR_INVALID;
	}
	v = calloc(1, sizeof(*v));
	if (!v) {
		err_set(err, errlen, "video '%s': out of memory", path);
		return ERR_NOMEM;
	}
	snprintf(v->path, sizeof(v->path), "%s", path);
	v->w = w;
	v->h = h;
	v->t0 = t0;
	pthread_mutex_init(&v->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&v->cond, &ca);
	pthread_condattr_destroy(&ca);
	ret = open_ff(v, err, errlen);
	if (ret)
		goto fail;
	v->last_flush = time_mono();
	ret = -pthread_create(&v->thread, NULL, encoder_main, v);
	if (ret) {
		err_set(err, errlen, "video '%s': cannot start the encoder thread: %s",
			 path, strerror(-ret));
		goto fail;
	}
	v->thread_started = true;
	*out = v;
	return 0;
fail:
	free_ff(v);
	pthread_mutex_destroy(&v->lock);
	pthread_cond_destroy(&v->cond);
	free(v);
	return ret;
}

void video_add_frame(struct video *v, struct frame *f)
{
	struct frame *old = NULL;
	uint64_t dropped = 0;

	if (!v || !f || !f->img)
		return;
	pthread_mutex_lock(&v->lock);
	if (v->closing || v->failed) {
		pthread_mutex_unlock(&v->lock);
		return;
	}
	frame_ref(f);
	if (v->qlen == VIDEO_QUEUE_LEN) {
		old = v->queue[v->qhead];
		v->queue[v->qhead] = NULL;
		v->qhead = (v->qhead + 1) % VIDEO_QUEUE_LEN;
		v->qlen--;
		dropped = ++v->stats.dropped;
	}
	v->queue[(v->qhead + v->qlen) % VIDEO_QUEUE_LEN] = f;
	v->qlen++;
	pthread_cond_signal(&v->cond);
	pthread_mutex_unlock(&v->lock);
	if (old) {
		log_debug("frame %llu not recorded: the encoder is %d frames behind "
			  "(%llu dropped so far)", (unsigned long long)old->seq,
			  VIDEO_QUEUE_LEN, (unsigned long long)dropped);
		frame_unref(old);
	}
}

void video_hold(struct video *v, bool hold)
{
	pthread_mutex_lock(&v->lock);
	v->held = hold;
	pthread_cond_signal(&v->cond);
	pthread_mutex_unlock(&v->lock);
}

void video_frame_listener(void *ctx, struct frame *f)
{
	video_add_frame(ctx, f);
}

int64_t video_time_ms(double t0, double t)
{
	int64_t ms = llround((t - t0) * 1000.0);

	return ms < 0 ? 0 : ms;
}

void video_get_stats(struct video *v, struct video_stats *st)
{
	pthread_mutex_lock(&v->lock);
	*st = v->stats;
	pthread_mutex_unlock(&v->lock);
}

int video_close_stats(struct video *v, double t_end, struct video_stats *st)
{
	int ret;

	if (st)
		memset(st, 0, sizeof(*st));
	if (!v)
		return 0;
	pthread_mutex_lock(&v->lock);
	v->closing = true;
	v->t_end = t_end;
	pthread_cond_signal(&v->cond);
	pthread_mutex_unlock(&v->lock);
	if (v->thread_started)
		pthread_join(v->thread, NULL);
	if (avio_closep(&v->fmt->pb) < 0 && !v->result)
		v->result = ERR_IO;
	ret = v->result;
	if (st)
		*st = v->stats;
	log_debug("video '%s': %llu frames, %llu dropped, %llu bytes, %.2f s CPU",
		  v->path, (unsigned long long)v->stats.frames,
		  (unsigned long long)v->stats.dropped,
		  (unsigned long long)v->stats.bytes, v->stats.cpu_s);
	while (v->qlen) { /* only after a failure */
		frame_unref(v->queue[v->qhead]);
		v->qhead = (v->qhead + 1) % VIDEO_QUEUE_LEN;
		v->qlen--;
	}
	free_ff(v);
	pthread_mutex_destroy(&v->lock);
	pthread_cond_destroy(&v->cond);
	free(v);
	return ret;
}

int video_close(struct video *v, double t_end)
{
	return video_close_stats(v, t_end, NULL);
}
