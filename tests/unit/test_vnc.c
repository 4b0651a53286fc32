/* SPDX-License-Identifier: MIT */
/* test_vnc.c - the VNC client against tests/fixtures/vncfixture, a
 * libvncserver server that shows a screen for exactly one update: proves
 * deterministically that such a screen becomes a frame, plus DesktopSize,
 * input events, the refresh nudge, a dying server, and the live view's
 * frame writer on top of it. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "unit.h"
#include "image/image.h"
#include "runner/prim/liveview.h"
#include <jansson.h>
#include "util/err.h"
#include "vm/vnc.h"
#include "util/log.h"

struct fixture {
	pid_t pid;
	FILE *out;
	char sock[300];
};

static void fixture_start(struct fixture *fx, const char *mode)
{
	char exe[512], path[600], line[64];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	int p[2];
	char *slash;

	CHECK(n > 0);
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	CHECK(slash);
	*slash = '\0';
	snprintf(path, sizeof(path), "%s/fixtures/vncfixture", exe);
	snprintf(fx->sock, sizeof(fx->sock), "%s/vnc.sock", unit_tmpdir());
	CHECK(pipe(p) == 0);
	fflush(NULL);
	fx->pid = fork();
	CHECK(fx->pid >= 0);
	if (fx->pid == 0) {
		dup2(p[1], 1);
		close(p[0]);
		close(p[1]);
		execl(path, path, fx->sock, mode, (char *)NULL);
		perror(path);
		_exit(127);
	}
	close(p[1]);
	fx->out = fdopen(p[0], "r");
	CHECK(fx->out);
	CHECK(fgets(line, sizeof(line), fx->out));
	CHECK_STR(line, "ready\n");
}

/* Read the fixture's reports until one starting with prefix; copy it. */
static void fixture_expect(struct fixture *fx, const char *prefix, char *line, size_t len)
{
	while (fgets(line, (int)len, fx->out))
		if (!strncmp(line, prefix, strlen(prefix)))
			return;
	FAIL("fixture ended before reporting '%s'", prefix);
}

static void fixture_stop(struct fixture *fx)
{
	int st;

	kill(fx->pid, SIGKILL);
	waitpid(fx->pid, &st, 0);
	fclose(fx->out);
}

/* Which of the fixture's screens a frame shows, by the colour at (10, 10). */
static char screen_of(const struct frame *f)
{
	const uint8_t *p = f->img->px + (10 * (size_t)f->img->w + 10) * 3;

	if (p[0] == 255 && p[1] == 0 && p[2] == 0)
		return 'A';
	if (p[0] == 0 && p[1] == 255 && p[2] == 0)
		return 'B';
	if (p[0] == 0 && p[1] == 0 && p[2] == 255)
		return 'C';
	if (p[0] == 255 && p[1] == 255 && p[2] == 0)
		return 'D';
	return '?';
}

TEST(vnc_single_update_frame_is_caught)
{
	struct fixture fx;
	struct vnc *v = NULL;
	struct frame *f = NULL;
	char err[256] = "", seen[8] = "";
	uint64_t seq = 0;
	size_t n = 0;

	if (getenv("VIGIL_TEST_DEBUG"))
		log_set_stderr_level(LOG_DEBUG);
	fixture_start(&fx, "single");
	CHECK_INT(vnc_connect(fx.sock, 1024, 768, 5000, &v, err, sizeof(err)), 0);
	/* As a screen check does: every frame is kept until it is seen. */
	vnc_set_watch(v, true);
	while (n < sizeof(seen) - 1) {
		CHECK_INT(vnc_next_frame(v, seq, 10000, &f), 0);
		CHECK(f->seq > seq);
		CHECK_INT(f->img->w, 1024);
		CHECK_INT(f->img->h, 768);
		seq = f->seq;
		seen[n++] = screen_of(f);
		frame_unref(f);
		if (seen[n - 1] == 'C')
			break;
	}
	/* Every changed update is one frame, in order, nothing merged. */
	CHECK_STR(seen, "ABC");
	CHECK_INT(seq, 3);
	f = vnc_latest(v);
	CHECK(f && f->seq == 3 && screen_of(f) == 'C');
	frame_unref(f);
	/* Nothing changes any more. */
	CHECK_INT(vnc_next_frame(v, seq, 200, &f), ERR_TIMEOUT);
	vnc_close(v);
	fixture_stop(&fx);
}

TEST(vnc_desktop_size_normalised)
{
	struct fixture fx;
	struct vnc *v = NULL;
	struct frame *f = NULL;
	char err[256] = "", line[64];
	uint64_t seq = 0;
	const uint8_t *p;
	int w, h;

	fixture_start(&fx, "resize");
	CHECK_INT(vnc_connect(fx.sock, 1024, 768, 5000, &v, err, sizeof(err)), 0);
	for (;;) {
		CHECK_INT(vnc_next_frame(v, seq, 10000, &f), 0);
		seq = f->seq;
		if (screen_of(f) == 'D')
			break;
		CHECK(screen_of(f) == 'A');
		frame_unref(f);
	}
	CHECK_INT(f->fb_w, 720);
	CHECK_INT(f->fb_h, 400);
	CHECK_INT(f->img->w, 1024);
	CHECK_INT(f->img->h, 768);
	/* Outside the 720x400 text screen: os-autoinst's grey canvas. */
	p = f->img->px + (500 * 1024 + 800) * 3;
	CHECK(p[0] == 120 && p[1] == 120 && p[2] == 120);
	p = f->img->px + (399 * 1024 + 719) * 3;
	CHECK(p[0] == 255 && p[1] == 255 && p[2] == 0);
	frame_unref(f);
	vnc_fb_size(v, &w, &h);
	CHECK(w == 720 && h == 400);
	/* The pasted-top-left screen keeps coordinates; outside is clamped. */
	CHECK_INT(vnc_send_pointer(v, 100, 50, 0), 0);
	fixture_expect(&fx, "ptr", line, sizeof(line));
	CHECK_STR(line, "ptr 100 50 0\n");
	CHECK_INT(vnc_send_pointer(v, 1000, 700, 0), 0);
	fixture_expect(&fx, "ptr", line, sizeof(line));
	CHECK_STR(line, "ptr 719 399 0\n");
	vnc_close(v);
	fixture_stop(&fx);
}

/* The fixture's "band" screens as vnc.c must build them, pasted top-left
 * on grey when the frame is larger than the 1024x768 framebuffer. */
static struct image *band_expected(int xres, int yres, int step)
{
	struct image *img = image_new(xres, yres);

	CHECK(img);
	image_fill_rect(img, 0, 0, xres, yres, 120, 120, 120);
	image_fill_rect(img, 0, 0, 1024, 768, 255, 0, 0);
	if (step >= 1)
		image_fill_rect(img, 0, 100, 1024, 32, 0, 255, 0);
	if (step >= 2)
		image_fill_rect(img, 10, 300, 10, 10, 0, 0, 255);
	return img;
}

static void check_band_frames(int xres, int yres)
{
	struct fixture fx;
	struct vnc *v = NULL;
	struct frame *f = NULL;
	struct image *want;
	char err[256] = "";
	uint64_t seq = 0;
	int step;

	fixture_start(&fx, "band");
	CHECK_INT(vnc_connect(fx.sock, xres, yres, 5000, &v, err, sizeof(err)), 0);
	vnc_set_watch(v, true); /* keep every frame until it is seen */
	for (step = 0; step < 3; step++) {
		CHECK_INT(vnc_next_frame(v, seq, 10000, &f), 0);
		/* Frame by frame: the unchanged rewrite between made none. */
		CHECK_INT(f->seq, seq + 1);
		seq = f->seq;
		want = band_expected(xres, yres, step);
		CHECK_INT(f->img->w, xres);
		CHECK_INT(f->img->h, yres);
		CHECK(!memcmp(f->img->px, want->px, (size_t)xres * (size_t)yres * 3));
		image_free(want);
		if (step == 0) {
			CHECK_INT(f->same_top, 0); /* nothing before: unknown */
			CHECK_INT(f->same_bottom, 0);
		} else if (step == 1) {
			CHECK_INT(f->same_top, 100);
			CHECK_INT(f->same_bottom, yres - 132);
		} else {
			CHECK_INT(f->same_top, 300);
			CHECK_INT(f->same_bottom, yres - 310);
		}
		frame_unref(f);
	}
	CHECK_INT(vnc_next_frame(v, seq, 300, &f), ERR_TIMEOUT);
	vnc_close(v);
	fixture_stop(&fx);
	unlink(fx.sock); /* killed: the next fixture binds the same path */
}

/* Updates of a few rows: only those are converted, the rest comes from
 * the previous frame, a rewrite with the same pixels makes no frame, and
 * the frame says which rows changed; also when pasted on a larger canvas. */
TEST(vnc_partial_updates_build_whole_frames)
{
	check_band_frames(1024, 768);
	check_band_frames(1280, 1024);
}

/* Frames outlive their connection; released ones go back to the pool
 * while it is open and are freed after (ASan checks both). */
TEST(vnc_frames_outlive_the_connection)
{
	struct fixture fx;
	struct vnc *v = NULL;
	struct frame *f = NULL, *g = NULL;
	char err[256] = "";

	fixture_start(&fx, "band");
	CHECK_INT(vnc_connect(fx.sock, 1024, 768, 5000, &v, err, sizeof(err)), 0);
	vnc_set_watch(v, true);
	CHECK_INT(vnc_next_frame(v, 0, 10000, &f), 0);
	CHECK_INT(vnc_next_frame(v, f->seq, 10000, &g), 0);
	frame_unref(g); /* still referenced by the connection */
	CHECK_INT(vnc_next_frame(v, f->seq + 1, 10000, &g), 0);
	vnc_close(v);
	fixture_stop(&fx);
	CHECK(screen_of(f) == 'A');
	CHECK_INT(f->img->px[(110 * 1024 + 10) * 3 + 1], 0); /* all red */
	CHECK_INT(g->img->px[(110 * 1024 + 10) * 3 + 1], 255); /* green band */
	CHECK_INT(g->img->px[(305 * 1024 + 15) * 3 + 2], 255); /* blue square */
	frame_unref(f);
	frame_unref(g);
}

TEST(vnc_input_and_nudge)
{
	struct fixture fx;
	struct vnc *v = NULL;
	char err[256] = "", line[64];

	fixture_start(&fx, "single");
	CHECK_INT(vnc_connect(fx.sock, 1024, 768, 5000, &v, err, sizeof(err)), 0);
	CHECK_INT(vnc_send_key(v, 0xff0d, 1), 0);
	CHECK_INT(vnc_send_key(v, 0xff0d, 0), 0);
	CHECK_INT(vnc_send_pointer(v, 512, 384, 1), 0);
	fixture_expect(&fx, "key", line, sizeof(line));
	CHECK_STR(line, "key 65293 1\n");
	fixture_expect(&fx, "key", line, sizeof(line));
	CHECK_STR(line, "key 65293 0\n");
	fixture_expect(&fx, "ptr", line, sizeof(line));
	CHECK_STR(line, "ptr 512 384 1\n");
	/* Watching: empty cut texts keep coming (the first at once). */
	vnc_set_watch(v, true);
	fixture_expect(&fx, "cut", line, sizeof(line));
	CHECK_STR(line, "cut 0\n");
	fixture_expect(&fx, "cut", line, sizeof(line));
	fixture_expect(&fx, "cut", line, sizeof(line));
	vnc_set_watch(v, false);
	vnc_close(v);
	fixture_stop(&fx);
}

static void count_frame(void *ctx, struct frame *f)
{
	int *n = ctx;

	(void)f;
	__atomic_add_fetch(n, 1, __ATOMIC_RELAXED);
}

TEST(vnc_server_death_reported)
{
	struct fixture fx;
	struct vnc *v = NULL;
	struct frame *f = NULL;
	char err[256] = "";
	int listened = 0;
	uint64_t seq = 0;

	fixture_start(&fx, "single");
	CHECK_INT(vnc_connect(fx.sock, 1024, 768, 5000, &v, err, sizeof(err)), 0);
	CHECK_INT(vnc_add_listener(v, count_frame, &listened), 0);
	do {
		CHECK_INT(vnc_next_frame(v, seq, 10000, &f), 0);
		seq = f->seq;
		frame_unref(f);
	} while (seq < 3);
	CHECK(__atomic_load_n(&listened, __ATOMIC_RELAXED) >= 2);
	fixture_stop(&fx);
	/* The waiter wakes with ERR_CLOSED, not a timeout. */
	CHECK_INT(vnc_next_frame(v, seq, 60000, &f), ERR_CLOSED);
	CHECK(!vnc_alive(v));
	vnc_error(v, err, sizeof(err));
	CHECK(strstr(err, "vnc connection lost"));
	CHECK_INT(vnc_send_key(v, 'a', 1), ERR_CLOSED);
	/* The newest frame captured stays readable. */
	f = vnc_latest(v);
	CHECK(f != NULL);
	CHECK_INT(f->seq, 3);
	frame_unref(f);
	vnc_close(v);
}

TEST(vnc_connect_timeout)
{
	struct vnc *v = NULL;
	char err[256] = "", path[300];

	snprintf(path, sizeof(path), "%s/absent.sock", unit_tmpdir());
	CHECK_INT(vnc_connect(path, 1024, 768, 300, &v, err, sizeof(err)), ERR_TIMEOUT);
	CHECK(!v);
	CHECK(strstr(err, "absent.sock"));
}

/* The live view writer: nothing while nobody watches; the newest frame as
 * live.png once live.on exists; gone again after liveview_stop. */
TEST(vnc_live_view_frames)
{
	struct fixture fx;
	struct vnc *v = NULL;
	struct frame *f = NULL;
	struct liveview *l = NULL;
	struct image *img = NULL;
	char err[256] = "", on[600], png[600], js[600];
	uint64_t seq = 0;
	FILE *fp;

	snprintf(on, sizeof(on), "%s/%s", unit_tmpdir(), LIVEVIEW_ON_FILE);
	snprintf(png, sizeof(png), "%s/%s", unit_tmpdir(), LIVEVIEW_PNG_FILE);
	fixture_start(&fx, "single");
	CHECK_INT(vnc_connect(fx.sock, 1024, 768, 5000, &v, err, sizeof(err)), 0);
	while (seq < 3) {
		CHECK_INT(vnc_next_frame(v, seq, 10000, &f), 0);
		seq = f->seq;
		frame_unref(f);
	}
	CHECK_INT(liveview_start(v, unit_tmpdir(), &l), 0);
	usleep(3 * LIVEVIEW_INTERVAL_MS * 1000);
	CHECK(access(png, F_OK) != 0);
	fp = fopen(on, "w");
	CHECK(fp);
	fclose(fp);
	while (access(png, F_OK) != 0) /* however long it takes: the runner's limit ends a hang */
		usleep(100000);
	CHECK_INT(image_load_png(png, &img, err, sizeof(err)), 0);
	CHECK_INT(img->w, 1024);
	/* The newest screen of the fixture is C (blue at 10,10). */
	CHECK(img->px[(10 * 1024 + 10) * 3 + 2] == 255 && img->px[(10 * 1024 + 10) * 3] == 0);
	image_free(img);
	/* live.json names the frame written, with its capture time, and the
	 * note the runner left. */
	snprintf(js, sizeof(js), "%s/%s", unit_tmpdir(), LIVEVIEW_JSON_FILE);
	liveview_note(l, "boot", 3, 7, "assert_screen 'x'");
	for (;;) { /* however long it takes, as above */
		json_t *j = json_load_file(js, 0, NULL);
		const char *mod = json_string_value(json_object_get(j, "module"));
		bool done = j && json_integer_value(json_object_get(j, "seq")) > 0 &&
			    json_integer_value(json_object_get(j, "t")) > 1600000000000LL && mod && !strcmp(mod, "boot") &&
			    json_integer_value(json_object_get(j, "step")) == 3 &&
			    json_integer_value(json_object_get(j, "line")) == 7;
		json_decref(j);
		if (done)
			break;
		usleep(50000);
	}
	/* An unchanged screen is not written again. */
	CHECK(unlink(png) == 0);
	usleep(3 * LIVEVIEW_INTERVAL_MS * 1000);
	CHECK(access(png, F_OK) != 0);
	liveview_stop(l);
	CHECK(access(png, F_OK) != 0);
	CHECK(access(js, F_OK) != 0);
	vnc_close(v);
	fixture_stop(&fx);
}
