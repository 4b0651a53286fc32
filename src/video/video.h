/* SPDX-License-Identifier: MIT */
/* video.h - the run's screen recording: WebM/VP8 through libavcodec and
 * libavformat. The capture thread hands in changed frames (cheap, never
 * blocks); an encoder thread owned by struct video converts and encodes them
 * with their real timestamps, so a still screen costs nothing. The file is
 * flushed cluster by cluster, so a run killed with SIGKILL still leaves a
 * playable, seekable file up to about VIDEO_FLUSH_MS before the kill. */
#ifndef VIGIL_VIDEO_H
#define VIGIL_VIDEO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "image/frame.h"

struct video;

/* Frames waiting for the encoder. When full, the oldest waiting frame is
 * dropped (logged at debug level, counted in the stats): it is a video,
 * not a check. The newest frame is never dropped. */
#define VIDEO_QUEUE_LEN 8
/* A keyframe at least this often in video time (when frames come). */
#define VIDEO_KEYFRAME_MS 5000
/* Encoded data is written out and flushed to the file at most this long
 * after it was encoded, also while the screen stays still. */
#define VIDEO_FLUSH_MS 1000

struct video_stats {
	uint64_t frames;    /* frames encoded, the black and final ones included */
	uint64_t dropped;   /* frames dropped from a full queue */
	uint64_t bytes;     /* bytes written to the file so far */
	double cpu_s;       /* CPU seconds used by the encoder thread */
	double duration_s;  /* video time of the last frame encoded */
	bool unflushed;     /* encoded data not yet flushed to the file */
};

/* Create the WebM file path (truncated if it exists) for w x h frames and
 * start the encoder thread. t0 is the time_mono() value that is video time
 * 0; frame f is shown at f->t - t0. VP8 (libvpx) in realtime mode, no
 * look-ahead, millisecond time base. *out is the caller's (video_close).
 * Errors: ERR_INVALID (bad size), ERR_NOT_FOUND (no libvpx encoder or webm
 * muxer in this FFmpeg), ERR_NOMEM, ERR_IO or -errno; err says what and
 * on which file. */
int video_open(const char *path, int w, int h, double t0,
	       struct video **out, char *err, size_t errlen);

/* Queue a frame for encoding: takes its own reference, never blocks on
 * the encoder, safe from any thread (meant for the VNC capture thread).
 * Frames must come in capture order; one whose time is not after the
 * previous one's is shown 1 ms later. Until the first frame's time the
 * video shows black (an extra frame at 0, so every player starts there). Frames of another size are scaled
 * to w x h. Ignored after video_close began or once encoding failed. */
void video_add_frame(struct video *v, struct frame *f);

/* Hold (true) or release (false) the encoder: while held it takes no
 * frame from the queue, so frames added meanwhile fill it and the oldest
 * are dropped exactly as when the encoder falls behind. For tests, which
 * must not depend on which thread runs first; video_close releases it. */
void video_hold(struct video *v, bool hold);

/* video_add_frame as a frame listener (ctx: the video), e.g. for
 * vnc_add_listener(vnc, video_frame_listener, video). VNC listeners cannot
 * be removed: close the VNC connection before video_close. */
void video_frame_listener(void *ctx, struct frame *f);

/* The video time in milliseconds of time_mono() value t in a video whose
 * time 0 is t0 (video_open's), rounded to the nearest millisecond as the
 * encoder stamps frames; never negative. The run's one conversion: the
 * steps' frame times come from it too, so they name the video's frames. */
int64_t video_time_ms(double t0, double t);

/* Counters so far, consistent with each other (any thread). */
void video_get_stats(struct video *v, struct video_stats *st);

/* Encode every queued frame, then the last frame again at t_end so the
 * video lasts as long as the run, flush the encoder, write the index and
 * trailer, stop the thread and free v (NULL-safe: returns 0). With no frame
 * at all, a black frame stands at 0 and at t_end. If st is not NULL it
 * receives the final counters. 0, or the first error of the encoder
 * (ERR_IO, ERR_NOMEM, ERR_PROTO from the codec), logged when it happened;
 * the file is then as complete as the error allowed. */
int video_close_stats(struct video *v, double t_end, struct video_stats *st);
int video_close(struct video *v, double t_end);

/* Finish the file at path if its writer died before video_close (no
 * duration or trailing cues in it): remux its packets, without decoding,
 * into path.repair and rename that over path. A file closed properly is
 * left alone. 0, ERR_NOT_FOUND (no file), ERR_PROTO (not a video, or
 * nothing readable), ERR_NOMEM or -errno; err says what and where. */
int video_repair(const char *path, char *err, size_t errlen);

#endif
