/* SPDX-License-Identifier: MIT */
/* oqcompat_video.c - isotovideo 4.6's video.ogv (Theora) decoded and
 * re-encoded as video.webm (VP8, libvpx) with FFmpeg's libraries, so a
 * browser without Theora (Debian 12's Chromium) plays an openQA worker's
 * video on vigil's job page. Timestamps are kept (the video_time.vtt the
 * worker sends still fits). Writes video.webm.tmp, then renames it. */
#define LOG_MODULE "oqcompat"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/error.h>
#include <libavutil/log.h>
#include <libavutil/opt.h>
#include <libavutil/pixdesc.h>
#include <libswscale/swscale.h>
#include "server/oqcompat/oqcompat.h"
#include "util/err.h"
#include "util/log.h"
#include "util/banned.h" /* last: after every system header */

struct tc {
	AVFormatContext *in, *out;
	AVCodecContext *dec, *enc;
	struct SwsContext *sws;
	AVFrame *frame, *yuv;
	AVPacket *pkt, *opkt;
	AVStream *ost;
	int vs;
	int64_t last_pts;
};

static int tc_code(int averr)
{
	if (averr == AVERROR(ENOMEM))
		return ERR_NOMEM;
	if (averr == AVERROR(ENOENT))
		return ERR_NOT_FOUND;
	return ERR_IO;
}

/* Drains the encoder's packets into the file (f NULL: flush). */
static int encode(struct tc *t, AVFrame *f)
{
	int ret = avcodec_send_frame(t->enc, f);

	while (ret >= 0) {
		ret = avcodec_receive_packet(t->enc, t->opkt);
		if (ret == AVERROR(EAGAIN) || ret == AVERROR_EOF)
			return 0;
		if (ret < 0)
			break;
		av_packet_rescale_ts(t->opkt, t->enc->time_base, t->ost->time_base);
		t->opkt->stream_index = 0;
		ret = av_interleaved_write_frame(t->out, t->opkt);
	}
	return ret;
}

static int convert(struct tc *t)
{
	AVStream *ist = t->in->streams[t->vs];
	int64_t pts = t->frame->best_effort_timestamp;
	int ret;

	if (pts == AV_NOPTS_VALUE)
		pts = t->last_pts + 1;
	pts = av_rescale_q(pts, ist->time_base, t->enc->time_base);
	if (pts <= t->last_pts)
		pts = t->last_pts + 1;
	t->last_pts = pts;
	if ((ret = av_frame_make_writable(t->yuv)) < 0)
		return ret;
	sws_scale(t->sws, (const uint8_t *const *)t->frame->data, t->frame->linesize, 0, t->dec->height, t->yuv->data,
		  t->yuv->linesize);
	t->yuv->pts = pts;
	return encode(t, t->yuv);
}

static int decode(struct tc *t, AVPacket *p)
{
	int ret = avcodec_send_packet(t->dec, p);

	while (ret >= 0) {
		ret = avcodec_receive_frame(t->dec, t->frame);
		if (ret == AVERROR(EAGAIN) || ret == AVERROR_EOF)
			return 0;
		if (ret < 0)
			break;
		ret = convert(t);
		av_frame_unref(t->frame);
	}
	return ret;
}

static int open_all(struct tc *t, const char *src, const char *dst, char *msg, size_t msglen)
{
	const AVCodec *dc, *ec = avcodec_find_encoder_by_name("libvpx");
	AVDictionary *opts = NULL;
	int ret;

	if (!ec) {
		err_set(msg, msglen, "this FFmpeg has no libvpx VP8 encoder");
		return ERR_NOT_FOUND;
	}
	if ((ret = avformat_open_input(&t->in, src, NULL, NULL)) < 0 ||
	    (ret = avformat_find_stream_info(t->in, NULL)) < 0) {
		err_set(msg, msglen, "'%s': %s", src, av_err2str(ret));
		return tc_code(ret);
	}
	t->vs = av_find_best_stream(t->in, AVMEDIA_TYPE_VIDEO, -1, -1, &dc, 0);
	if (t->vs < 0 || !dc) {
		err_set(msg, msglen, "'%s': no video stream this FFmpeg decodes", src);
		return ERR_PROTO;
	}
	t->dec = avcodec_alloc_context3(dc);
	if (!t->dec || avcodec_parameters_to_context(t->dec, t->in->streams[t->vs]->codecpar) < 0 ||
	    (ret = avcodec_open2(t->dec, dc, NULL)) < 0) {
		err_set(msg, msglen, "'%s': cannot open its decoder", src);
		return ERR_PROTO;
	}
	if (t->dec->width <= 0 || t->dec->height <= 0) {
		err_set(msg, msglen, "'%s': no frame size", src);
		return ERR_PROTO;
	}
	if ((ret = avformat_alloc_output_context2(&t->out, NULL, "webm", dst)) < 0 || !t->out) {
		err_set(msg, msglen, "this FFmpeg has no webm muxer");
		return ERR_NOT_FOUND;
	}
	t->enc = avcodec_alloc_context3(ec);
	t->ost = avformat_new_stream(t->out, NULL);
	t->frame = av_frame_alloc();
	t->yuv = av_frame_alloc();
	t->pkt = av_packet_alloc();
	t->opkt = av_packet_alloc();
	if (!t->enc || !t->ost || !t->frame || !t->yuv || !t->pkt || !t->opkt)
		return ERR_NOMEM;
	t->enc->width = t->dec->width;
	t->enc->height = t->dec->height;
	t->enc->pix_fmt = AV_PIX_FMT_YUV420P;
	t->enc->time_base = (AVRational){ 1, 1000 };
	t->enc->bit_rate = 1000000;
	t->enc->gop_size = 240;
	t->enc->thread_count = 1;
	if (t->out->oformat->flags & AVFMT_GLOBALHEADER)
		t->enc->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
	/* Screens: fast, and good enough to read text. */
	if (av_dict_set(&opts, "deadline", "realtime", 0) < 0 || av_dict_set(&opts, "cpu-used", "8", 0) < 0 ||
	    av_dict_set(&opts, "crf", "10", 0) < 0) {
		av_dict_free(&opts);
		return ERR_NOMEM;
	}
	ret = avcodec_open2(t->enc, ec, &opts);
	av_dict_free(&opts);
	if (ret < 0) {
		err_set(msg, msglen, "cannot open the VP8 encoder: %s", av_err2str(ret));
		return tc_code(ret);
	}
	if (avcodec_parameters_from_context(t->ost->codecpar, t->enc) < 0)
		return ERR_NOMEM;
	t->ost->time_base = t->enc->time_base;
	t->yuv->format = AV_PIX_FMT_YUV420P;
	t->yuv->width = t->enc->width;
	t->yuv->height = t->enc->height;
	if (av_frame_get_buffer(t->yuv, 0) < 0)
		return ERR_NOMEM;
	t->sws = sws_getContext(t->dec->width, t->dec->height, t->dec->pix_fmt, t->enc->width, t->enc->height,
				AV_PIX_FMT_YUV420P, SWS_BILINEAR, NULL, NULL, NULL);
	if (!t->sws) {
		err_set(msg, msglen, "cannot convert %s frames", av_get_pix_fmt_name(t->dec->pix_fmt));
		return ERR_PROTO;
	}
	if ((ret = avio_open(&t->out->pb, dst, AVIO_FLAG_WRITE)) < 0 ||
	    (ret = avformat_write_header(t->out, NULL)) < 0) {
		err_set(msg, msglen, "'%s': %s", dst, av_err2str(ret));
		return tc_code(ret);
	}
	return 0;
}

int oqcompat_video_webm(const char *data_dir, int64_t job_id, char *msg, size_t msglen)
{
	char *src = artefact_path(data_dir, job_id, "video.ogv");
	char *dst = artefact_path(data_dir, job_id, "video.webm");
	char tmp[4200];
	struct tc t = { .vs = -1, .last_pts = -1 };
	bool header = false;
	int ret, rc = 0;

	if (!src || !dst) {
		rc = ERR_NOMEM;
		goto out;
	}
	snprintf(tmp, sizeof(tmp), "%s.tmp", dst);
	/* FFmpeg's chatter (libvpx's banner, Theora's keyframe warnings) is not
	 * for the server's log: the serve process uses FFmpeg only here. */
	av_log_set_level(AV_LOG_ERROR);
	if ((rc = open_all(&t, src, tmp, msg, msglen)))
		goto out;
	header = true;
	while ((ret = av_read_frame(t.in, t.pkt)) >= 0) {
		if (t.pkt->stream_index == t.vs)
			ret = decode(&t, t.pkt);
		av_packet_unref(t.pkt);
		if (ret < 0)
			break;
	}
	if (ret < 0 && ret != AVERROR_EOF) {
		err_set(msg, msglen, "'%s': %s", src, av_err2str(ret));
		rc = tc_code(ret);
		goto out;
	}
	if ((ret = decode(&t, NULL)) < 0 || (ret = encode(&t, NULL)) < 0 || (ret = av_write_trailer(t.out)) < 0) {
		err_set(msg, msglen, "'%s': %s", tmp, av_err2str(ret));
		rc = tc_code(ret);
		goto out;
	}
	if (rename(tmp, dst)) {
		rc = -errno;
		err_set(msg, msglen, "'%s': %s", dst, strerror(errno));
	}
out:
	if (t.out) {
		if (t.out->pb)
			avio_closep(&t.out->pb);
		avformat_free_context(t.out);
	}
	if (rc && header)
		(void)remove(tmp);
	avformat_close_input(&t.in);
	avcodec_free_context(&t.dec);
	avcodec_free_context(&t.enc);
	sws_freeContext(t.sws);
	av_frame_free(&t.frame);
	av_frame_free(&t.yuv);
	av_packet_free(&t.pkt);
	av_packet_free(&t.opkt);
	free(src);
	free(dst);
	return rc;
}
