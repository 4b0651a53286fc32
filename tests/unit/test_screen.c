/* SPDX-License-Identifier: MIT */
/* test_screen.c - the failed screens a check keeps for Perl's check_screen,
 * reduced as os-autoinst's _reduce_to_biggest_changes does. */
#include <string.h>
#include "unit.h"
#include "image/frame.h"
#include "image/image.h"
#include "runner/core/job.h"
#include "runner/prim/screen.h"

/* An 8x8 frame whose pixels are all v. */
static struct frame *grey_frame(int v)
{
	struct image *img = image_new(8, 8);
	memset(img->px, v, 8 * 8 * 3);
	return frame_from_image(img);
}

/* Adds n frames (grey levels 0, 1, 2...) with sims[i], at times 0, 1, 2... */
static void add_frames(struct runner *r, const double *sims, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		struct frame *f = grey_frame((int)i);
		json_t *c = json_array();
		CHECK_INT(screen_fails_add(r, f, c, sims[i]), 0);
		r->check_fails[r->check_nfails - 1].t = (double)i;
		json_decref(c);
		frame_unref(f);
	}
}

TEST(screen_fails_reduce_keeps_first_and_most_similar)
{
	static struct runner r;
	double sims[25];
	size_t i;

	memset(&r, 0, sizeof(r));
	for (i = 0; i < 25; i++)
		sims[i] = i == 0 ? 29.0 : (double)(i % 5); /* 1,2,3,4,0,1,... */
	add_frames(&r, sims, 25);
	CHECK_INT((int)r.check_nfails, 25);
	screen_fails_reduce(&r, SCREEN_FAIL_MAX);
	CHECK_INT((int)r.check_nfails, SCREEN_FAIL_MAX + 1);
	/* the first stays; the four of similarity 0 (frames 5, 10, 15, 20) go */
	CHECK_INT(r.check_fails[0].f->img->px[0], 0);
	for (i = 1; i < r.check_nfails; i++) {
		CHECK(r.check_fails[i].t > r.check_fails[i - 1].t);
		CHECK(r.check_fails[i].f->img->px[0] % 5 != 0);
		/* recomputed against the one before it now */
		CHECK(r.check_fails[i].sim == image_psnr(r.check_fails[i - 1].f->img, r.check_fails[i].f->img));
	}
	screen_fails_reduce(&r, SCREEN_FAIL_MAX); /* nothing more to drop */
	CHECK_INT((int)r.check_nfails, SCREEN_FAIL_MAX + 1);
	screen_fails_clear(&r);
	CHECK_INT((int)r.check_nfails, 0);
	CHECK(r.check_fails == NULL);
}

TEST(screen_fails_add_cleans_up_past_60)
{
	static struct runner r;
	double sims[61];
	size_t i;

	memset(&r, 0, sizeof(r));
	for (i = 0; i < 61; i++)
		sims[i] = 10.0;
	add_frames(&r, sims, 60);
	CHECK_INT((int)r.check_nfails, 60);
	add_frames(&r, sims, 1);
	CHECK_INT((int)r.check_nfails, SCREEN_FAIL_MAX + 1);
	screen_fails_clear(&r);
}

TEST(screen_windows_as_os_autoinst)
{
	/* 30 s: os-autoinst's checks at 29.9, 28.9... search whole at 25.9 */
	CHECK_INT(screen__first_window(100.0, 130.0), 5);
	CHECK(screen__window_start(100.0, 130.0, 5) == 104.0);
	CHECK(screen__window_start(100.0, 130.0, 0) == 129.0);
	/* 4.5 s: one window, its last second */
	CHECK_INT(screen__first_window(100.0, 104.5), 0);
	CHECK(screen__window_start(100.0, 104.5, 0) == 103.5);
	/* 0.5 s: the first check already lies in window 0 */
	CHECK_INT(screen__first_window(100.0, 100.5), 0);
	CHECK(screen__window_start(100.0, 100.5, 0) == 100.0);
	/* 5 s: 4.9 s left at the first check, so window 0 only */
	CHECK_INT(screen__first_window(100.0, 105.0), 0);
	/* 0 s: only the deadline's search */
	CHECK_INT(screen__first_window(100.0, 100.0), -1);
	CHECK(screen__window_start(100.0, 100.0, -1) == 100.0);
}
