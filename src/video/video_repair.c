/* SPDX-License-Identifier: MIT */
/* video_repair.c - finish a recording whose writer was killed: remux its
 * packets (no re-encoding) into a new file with a duration and cues, and
 * put it in the old one's place. Reads only what the dead writer left. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/error.h>
#define LOG_MODULE "video"
#include "util/err.h"
#include "util/log.h"
#include "video/video.h"
#include "util/banned.h" /* last: after every system header */

static int repair_code(int averr)
{
	if (averr == AVERROR(ENOMEM))
		return ERR_NOMEM;
	if (averr == AVERROR(ENOENT))
		return ERR_NOT_FOUND;
	if (averr < 0 && averr > -4096)
		return averr;
	return ERR_PROTO;
}

int video_repair(const char *path, char *err, size_t errlen)
{
	AVFormatContext *in = NULL, *out = NULL;
	AVPacket *pkt = NULL;
	AVStream *ist, *ost;
	char tmp[600];
	int ret, vs, n;
	const char *what = "";

	n = snprintf(tmp, sizeof(tmp), "%s.repair", path);
	if (n < 0 || (size_t)n >= sizeof(tmp)) {
		snprintf(err, errlen, "video path is too long: '%s'", path);
		return ERR_INVALID;
	}
	what = "cannot read it";
	ret = avformat_open_input(&in, path, NULL, NULL);
	if (ret < 0)
		goto out;
	ret = avformat_find_stream_info(in, NULL);
	if (ret < 0)
		goto out;
	if (in->duration != AV_NOPTS_VALUE) {
		ret = 0; /* closed properly: it has its duration and cues */
		goto out;
	}
	vs = av_find_best_stream(in, AVMEDIA_TYPE_VIDEO, -1, -1, NULL, 0);
	if (vs < 0) {
		what = "no video stream in it";
		ret = vs;
		goto out;
	}
	ist = in->streams[vs];
	what = "cannot write the repaired copy";
	ret = avformat_alloc_output_context2(&out, NULL, "webm", tmp);
	if (ret < 0)
		goto out;
	pkt = av_packet_alloc();
	ost = avformat_new_stream(out, NULL);
	if (!pkt || !ost) {
		ret = AVERROR(ENOMEM);
		goto out;
	}
	ret = avcodec_parameters_copy(ost->codecpar, ist->codecpar);
	if (ret < 0)
		goto out;
	ost->codecpar->codec_tag = 0;
	ost->time_base = ist->time_base;
	ret = avio_open(&out->pb, tmp, AVIO_FLAG_WRITE);
	if (ret < 0)
		goto out;
	ret = avformat_write_header(out, NULL);
	if (ret < 0)
		goto out;
	/* A torn last cluster ends the read with an error: keep what came. */
	while (av_read_frame(in, pkt) >= 0) {
		if (pkt->stream_index == vs) {
			av_packet_rescale_ts(pkt, ist->time_base, ost->time_base);
			pkt->stream_index = ost->index;
			pkt->pos = -1;
			ret = av_write_frame(out, pkt);
			if (ret < 0) {
				av_packet_unref(pkt);
				goto out;
			}
		}
		av_packet_unref(pkt);
	}
	ret = av_write_trailer(out);
	if (ret < 0)
		goto out;
	ret = avio_closep(&out->pb);
	if (ret < 0)
		goto out;
	if (rename(tmp, path)) {
		ret = AVERROR(errno);
		goto out;
	}
	log_info("video '%s': repaired after an unfinished run", path);
out:
	if (ret < 0) {
		char msg[AV_ERROR_MAX_STRING_SIZE];

		av_strerror(ret, msg, sizeof(msg));
		snprintf(err, errlen, "video '%s': %s: %s", path, what, msg);
		ret = repair_code(ret);
	}
	if (out) {
		if (out->pb)
			avio_closep(&out->pb);
		avformat_free_context(out);
		if (ret < 0)
			(void)remove(tmp); /* may not exist; nothing else to do */
	}
	avformat_close_input(&in);
	av_packet_free(&pkt);
	return ret;
}
