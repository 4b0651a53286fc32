/* SPDX-License-Identifier: MIT */
/* test_video.c - the WebM recorder on synthetic screens, checked with the
 * ffprobe/ffmpeg command-line tools: duration, frame count, decodable to
 * the end; a full queue drops the oldest; a recorder killed with SIGKILL
 * still leaves a file that decodes and seeks up to near the kill, and
 * video_repair gives that file its duration. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "unit.h"
#include "image/image.h"
#include "util/err.h"
#include "util/file.h"
#include "util/time.h"
#include "video/video.h"

#define W 1024
#define H 768
#define T0 1000.0 /* any monotonic time: video time 0 */

/* A frame without a pool (calloc + image, refs 1), so that
 * frame_unref frees it. A "text screen": dark background, line n of
 * glyph-like blocks per step, so each frame differs a little. */
static struct frame *text_frame(uint64_t seq, double t, int step)
{
	struct frame *f = calloc(1, sizeof(*f));
	int i, line, col;

	CHECK(f);
	f->img = image_new(W, H);
	CHECK(f->img);
	image_fill_rect(f->img, 0, 0, W, H, 0, 0, 40);
	for (i = 0; i <= step; i++) {
		line = i % 40;
		for (col = 0; col < 60; col++)
			if ((col * 7 + i * 13) % 5)
				image_fill_rect(f->img, 16 + col * 16, 16 + line * 18, 10, 14,
						200, 200, (uint8_t)(i * 5));
	}
	f->seq = seq;
	f->t = t;
	f->fb_w = W;
	f->fb_h = H;
	f->refs = 1;
	return f;
}

static bool have_tools(void)
{
	if (system("command -v ffprobe >/dev/null 2>&1 && command -v ffmpeg >/dev/null 2>&1") == 0)
		return true;
	printf("  skipped: ffprobe/ffmpeg not found (apt-get install ffmpeg)\n");
	return false;
}

/* Run a shell command; its whole output (stdout and stderr) into out. */
static void run_cmd(const char *cmd, char *out, size_t len)
{
	FILE *p = popen(cmd, "r");
	size_t n = 0, r;

	CHECK(p);
	while (n + 1 < len && (r = fread(out + n, 1, len - 1 - n, p)) > 0)
		n += r;
	out[n] = '\0';
	(void)pclose(p); /* the output tells what happened */
}

/* A number at the start of s (up to a newline or comma); 0 or -1. */
static int str_to_double_prefix(const char *s, double *out)
{
	char *end;

	*out = strtod(s, &end);
	return end == s || (*end && *end != '\n' && *end != ',' && *end != '\r') ? -1 : 0;
}

/* Value of "key=value" in ffprobe's default output, or -1. */
static double probe_value(const char *out, const char *key)
{
	char pat[64];
	const char *p;
	double d;

	snprintf(pat, sizeof(pat), "%s=", key);
	p = strstr(out, pat);
	if (!p || str_to_double_prefix(p + strlen(pat), &d))
		return -1;
	return d;
}

/* Wait until the encoder has encoded n frames (it drops none then), however
 * long a busy machine makes that take: the runner's own time limit ends a
 * test that hangs. */
static void wait_encoded(struct video *v, uint64_t n)
{
	struct video_stats st;

	for (;;) {
		video_get_stats(v, &st);
		if (st.frames >= n)
			return;
		time_sleep_ms(1);
	}
}

/* Decode the whole file: ffmpeg must say nothing at -v error. Frames
 * keep their own times (passthrough) in the file's millisecond time base
 * (enc_time_base -1): frames 1 ms apart would otherwise collide on
 * ffmpeg's guessed output rate and it would complain. */
static void check_decodes(const char *path)
{
	char cmd[700], out[4096];

	snprintf(cmd, sizeof(cmd), "ffmpeg -nostdin -v error -i '%s' -fps_mode passthrough "
		 "-enc_time_base -1 -f null - 2>&1", path);
	run_cmd(cmd, out, sizeof(out));
	if (out[0])
		FAIL("decoding %s: %s", path, out);
}

TEST(video_sparse_frames_duration_and_count)
{
	struct video *v = NULL;
	struct video_stats st;
	char path[512], err[256], cmd[700], out[4096];
	/* 50 changes over 10 s, in bursts with still periods between. */
	double t = 0;
	int i;

	if (!have_tools())
		return;
	snprintf(path, sizeof(path), "%s/video.webm", unit_tmpdir());
	CHECK_INT(video_open(path, W, H, T0, &v, err, sizeof(err)), 0);
	for (i = 0; i < 50; i++) {
		struct frame *f;

		t += (i % 10 == 0 && i) ? 1.1 : 0.1; /* 9 x 0.1 s, then a pause */
		f = text_frame((uint64_t)i + 1, T0 + t, i);
		video_add_frame(v, f);
		frame_unref(f);
		wait_encoded(v, (uint64_t)i + 2); /* + the black frame at 0 */
	}
	CHECK(t < 10.0);
	CHECK_INT(video_time_ms(T0, T0 + 1.5), 1500);
	CHECK_INT(video_time_ms(T0, T0 + 1.4996), 1500);
	CHECK_INT(video_time_ms(T0, T0 - 1), 0);
	CHECK_INT(video_close_stats(v, T0 + 12.0, &st), 0);
	CHECK_INT(st.frames, 52); /* black at 0, 50, the last again at 12 s */
	CHECK_INT(st.dropped, 0);
	CHECK(st.bytes > 1000);
	CHECK_NEAR(st.duration_s, 12.0, 0.001);
	printf("  %llu frames, %llu bytes, %.3f s encoder CPU\n",
	       (unsigned long long)st.frames, (unsigned long long)st.bytes, st.cpu_s);

	snprintf(cmd, sizeof(cmd), "ffprobe -v error -count_frames -show_entries "
		 "format=duration,start_time:stream=nb_read_frames,codec_name,width,height "
		 "-of default=nw=1 '%s' 2>&1", path);
	run_cmd(cmd, out, sizeof(out));
	CHECK(strstr(out, "codec_name=vp8"));
	CHECK_NEAR(probe_value(out, "width"), W, 0);
	CHECK_NEAR(probe_value(out, "height"), H, 0);
	CHECK_NEAR(probe_value(out, "duration"), 12.0, 0.5);
	CHECK_NEAR(probe_value(out, "nb_read_frames"), 52, 0);
	/* Closed properly: repair leaves it alone. */
	CHECK_INT(video_repair(path, err, sizeof(err)), 0);
	CHECK_NEAR(probe_value(out, "start_time"), 0, 0);
	check_decodes(path);
}

TEST(video_full_queue_drops_oldest)
{
	struct frame *screens[8];
	struct video *v = NULL;
	struct video_stats st;
	char path[512], err[256], cmd[700], out[4096];
	int i;

	if (!have_tools())
		return;
	snprintf(path, sizeof(path), "%s/video.webm", unit_tmpdir());
	CHECK_INT(video_open(path, W, H, T0, &v, err, sizeof(err)), 0);
	/* The encoder is held while the 200 frames come, so the queue keeps
	 * the newest VIDEO_QUEUE_LEN and drops the rest, whichever thread
	 * the machine runs first. Equal times are nudged 1 ms apart. */
	video_hold(v, true);
	for (i = 0; i < 8; i++)
		screens[i] = text_frame((uint64_t)i + 1, T0 + 1.0, i * 5);
	for (i = 0; i < 200; i++) {
		struct frame *f = calloc(1, sizeof(*f));

		CHECK(f);
		*f = *screens[i % 8];
		f->img = image_clone(screens[i % 8]->img);
		CHECK(f->img);
		f->seq = (uint64_t)i + 1;
		video_add_frame(v, f);
		frame_unref(f);
	}
	for (i = 0; i < 8; i++)
		frame_unref(screens[i]);
	video_get_stats(v, &st);
	CHECK_INT(st.dropped, 200 - VIDEO_QUEUE_LEN);
	video_hold(v, false);
	CHECK_INT(video_close_stats(v, T0 + 3.0, &st), 0);
	CHECK_INT(st.dropped, 200 - VIDEO_QUEUE_LEN);
	/* The black frame at 0, the queue's frames, the last one again at the end. */
	CHECK_INT(st.frames, 1 + VIDEO_QUEUE_LEN + 1);
	snprintf(cmd, sizeof(cmd), "ffprobe -v error -count_frames -show_entries "
		 "format=duration:stream=nb_read_frames -of default=nw=1 '%s' 2>&1", path);
	run_cmd(cmd, out, sizeof(out));
	CHECK_NEAR(probe_value(out, "nb_read_frames"), (double)st.frames, 0);
	CHECK_NEAR(probe_value(out, "duration"), 3.0, 0.5);
	check_decodes(path);
}

TEST(video_no_frames_is_black_for_the_run)
{
	struct video *v = NULL;
	struct video_stats st;
	char path[512], err[256], cmd[700], out[4096];

	CHECK(video_open("/nonexistent-dir/v.webm", W, H, T0, &v, err, sizeof(err)) < 0);
	CHECK(v == NULL);
	CHECK(strstr(err, "/nonexistent-dir/v.webm"));
	CHECK_INT(video_open("x.webm", 1023, H, T0, &v, err, sizeof(err)), ERR_INVALID);
	CHECK_INT(video_close(NULL, 0), 0);
	CHECK_INT(video_repair("/nonexistent-dir/v.webm", err, sizeof(err)), ERR_NOT_FOUND);
	if (!have_tools())
		return;
	snprintf(path, sizeof(path), "%s/video.webm", unit_tmpdir());
	CHECK_INT(video_open(path, W, H, T0, &v, err, sizeof(err)), 0);
	CHECK_INT(video_close_stats(v, T0 + 5.0, &st), 0);
	CHECK_INT(st.frames, 2);
	snprintf(cmd, sizeof(cmd), "ffprobe -v error -count_frames -show_entries "
		 "format=duration:stream=nb_read_frames -of default=nw=1 '%s' 2>&1", path);
	run_cmd(cmd, out, sizeof(out));
	CHECK_NEAR(probe_value(out, "duration"), 5.0, 0.5);
	CHECK_NEAR(probe_value(out, "nb_read_frames"), 2, 0);
	check_decodes(path);
}

/* The recorder in a child killed with SIGKILL before video_close: what
 * it encoded more than VIDEO_FLUSH_MS ago is on disk, decodes to the end,
 * and seeks. */
TEST(video_survives_sigkill)
{
	char path[512], cmd[800], out[16384], err[256], c;
	const char *last;
	double last_t = 0, pts;
	int p[2], status, i;
	pid_t pid;

	if (!have_tools())
		return;
	snprintf(path, sizeof(path), "%s/video.webm", unit_tmpdir());
	for (i = 0; i < 60; i++)
		last_t = 0.1 * (i + 1) + (i >= 30 ? 2.0 : 0); /* a pause at 3 s */
	CHECK(pipe(p) == 0);
	fflush(NULL);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		struct video *v = NULL;

		close(p[0]);
		alarm(110); /* no orphan if the flush never comes: the parent fails */
		if (video_open(path, W, H, T0, &v, err, sizeof(err)))
			_exit(2);
		for (i = 0; i < 60; i++) {
			struct frame *f = text_frame((uint64_t)i + 1,
				T0 + 0.1 * (i + 1) + (i >= 30 ? 2.0 : 0), i);

			video_add_frame(v, f);
			frame_unref(f);
			wait_encoded(v, (uint64_t)i + 2);
		}
		/* Still screen: the recorder flushes on its own, about
		 * VIDEO_FLUSH_MS after the last frame. */
		for (;;) {
			struct video_stats st;

			video_get_stats(v, &st);
			if (!st.unflushed)
				break;
			time_sleep_ms(10);
		}
		if (write(p[1], "k", 1) != 1)
			_exit(3);
		for (;;)
			pause();
	}
	close(p[1]);
	CHECK_INT(read(p[0], &c, 1), 1);
	close(p[0]);
	CHECK(kill(pid, SIGKILL) == 0);
	CHECK(waitpid(pid, &status, 0) == pid);
	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);

	check_decodes(path);
	/* No duration in the header (the trailer never came): the last
	 * packet's time says how far the file goes. */
	snprintf(cmd, sizeof(cmd), "ffprobe -v error -select_streams v -show_entries "
		 "packet=pts_time -of csv=p=0 '%s' 2>&1", path);
	run_cmd(cmd, out, sizeof(out));
	CHECK(out[0]);
	last = out + strlen(out);
	while (last > out && (last[-1] == '\n' || last[-1] == ','))
		last--;
	while (last > out && last[-1] != '\n')
		last--;
	CHECK(str_to_double_prefix(last, &pts) == 0);
	CHECK_NEAR(pts, last_t, 0.01);
	/* Every frame made it: 60 packets and the black one. */
	for (i = 0, last = out; (last = strchr(last, '\n')); last++)
		i++;
	CHECK_INT(i, 61);
	/* Seeking into the middle works without the cues of a trailer. */
	snprintf(cmd, sizeof(cmd), "ffmpeg -nostdin -v error -ss 4.5 -i '%s' "
		 "-frames:v 1 -f null - 2>&1", path);
	run_cmd(cmd, out, sizeof(out));
	if (out[0])
		FAIL("seeking in %s: %s", path, out);

	/* Repaired, it gets its duration in the header, frames unchanged. */
	CHECK_INT(video_repair(path, err, sizeof(err)), 0);
	check_decodes(path);
	snprintf(cmd, sizeof(cmd), "ffprobe -v error -count_frames -show_entries "
		 "format=duration:stream=nb_read_frames -of default=nw=1 '%s' 2>&1", path);
	run_cmd(cmd, out, sizeof(out));
	CHECK_NEAR(probe_value(out, "duration"), last_t, 0.2);
	CHECK_NEAR(probe_value(out, "nb_read_frames"), 61, 0);
	snprintf(cmd, sizeof(cmd), "%s.repair", path);
	CHECK(!file_exists(cmd));
}

/* Rows at the top and bottom of b identical to a, as vnc.c reports them. */
static void same_rows(const struct frame *a, struct frame *b)
{
	size_t row = (size_t)W * 3;
	int lo = 0, hi = H;

	while (lo < hi && !memcmp(a->img->px + lo * row, b->img->px + lo * row, row))
		lo++;
	while (hi > lo && !memcmp(a->img->px + (hi - 1) * row, b->img->px + (hi - 1) * row, row))
		hi--;
	b->same_top = lo;
	b->same_bottom = H - hi;
}

/* Record frames 1..n (frame 6 comes after a gap in seq, claiming a change
 * in rows it did not make); with rows set the encoder converts only the
 * changed strips. */
static void record_steps(const char *path, bool rows)
{
	struct video *v = NULL;
	struct frame *prev = NULL;
	char err[256];
	int i;

	CHECK_INT(video_open(path, W, H, T0, &v, err, sizeof(err)), 0);
	for (i = 0; i < 12; i++) {
		uint64_t seq = (uint64_t)i + 1 + (i >= 6);
		struct frame *f = text_frame(seq, T0 + 0.1 * (i + 1), i);

		if (rows && prev)
			same_rows(prev, f);
		if (rows && i == 6) {
			f->same_top = 0; /* after the gap: must not be trusted */
			f->same_bottom = H - 2;
		}
		video_add_frame(v, f);
		wait_encoded(v, (uint64_t)i + 2);
		frame_unref(prev);
		prev = f;
	}
	frame_unref(prev);
	CHECK_INT(video_close(v, T0 + 2.0), 0);
}

/* Converting only the rows a frame changed gives the very pictures that
 * converting every frame whole gives: the decoded frames' checksums match. */
TEST(video_partial_conversion_matches_full)
{
	char part[512], full[512], cmd[1200], a[16384], b[16384];

	if (!have_tools())
		return;
	snprintf(part, sizeof(part), "%s/part.webm", unit_tmpdir());
	snprintf(full, sizeof(full), "%s/full.webm", unit_tmpdir());
	record_steps(part, true);
	record_steps(full, false);
	snprintf(cmd, sizeof(cmd), "ffmpeg -nostdin -v error -i '%s' -fps_mode passthrough "
		 "-f framemd5 - 2>&1 | grep -v '^#'", part);
	run_cmd(cmd, a, sizeof(a));
	snprintf(cmd, sizeof(cmd), "ffmpeg -nostdin -v error -i '%s' -fps_mode passthrough "
		 "-f framemd5 - 2>&1 | grep -v '^#'", full);
	run_cmd(cmd, b, sizeof(b));
	CHECK(strlen(a) > 100);
	CHECK_STR(a, b);
}
