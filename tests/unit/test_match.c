/* SPDX-License-Identifier: MIT */
/* test_match.c - the matcher on synthetic images with known answers, and a
 * brute-force reference (exhaustive SSD + tinycv's minVec) against which
 * the pruned search must give identical positions and similarities. */
#include <math.h>
#include <stdio.h>
#include "unit.h"
#include "image/match.h"
#include "image/needle.h"

static uint32_t rnd_state = 12345;
static uint32_t rnd(void)
{
	rnd_state = rnd_state * 1103515245u + 12345u;
	return rnd_state >> 8;
}

/* Exhaustive reference, as tinycv_impl.cc search_TEMPLATE spells it. */
static double brute(const uint8_t *scene, int sw, int sh, const uint8_t *tpl, int w, int h,
		    int x, int y, int margin, int *bx, int *by)
{
	int wx0 = x - margin < 0 ? 0 : x - margin, wy0 = y - margin < 0 ? 0 : y - margin;
	int wx1 = x + w + margin > sw ? sw : x + w + margin, wy1 = y + h + margin > sh ? sh : y + h + margin;
	int rw = wx1 - wx0 - w + 1, rh = wy1 - wy0 - h + 1, i, j, a, b;
	int *lx = malloc(sizeof(int) * (size_t)(rw * rh)), *ly = malloc(sizeof(int) * (size_t)(rw * rh));
	float *res = malloc(sizeof(float) * (size_t)(rw * rh)), mn;
	size_t n = 0, pick;
	uint64_t ssd;

	for (j = 0; j < rh; j++)
		for (i = 0; i < rw; i++) {
			uint64_t s = 0;
			for (b = 0; b < h; b++)
				for (a = 0; a < w; a++) {
					int d = scene[(size_t)(wy0 + j + b) * sw + wx0 + i + a] - tpl[b * w + a];
					s += (uint64_t)(d * d);
				}
			res[j * rw + i] = (float)s;
		}
	if (res[(y - wy0) * rw + (x - wx0)] == 0) {
		*bx = x;
		*by = y;
		free(lx); free(ly); free(res);
		return 1;
	}
	mn = res[(y - wy0) * rw + (x - wx0)];
	mn += 10;
	for (j = 0; j < rh; j++)
		for (i = 0; i < rw; i++) {
			float v = res[j * rw + i];
			if (v > mn)
				continue;
			if (v + 10 < mn) {
				mn = v + 10;
				n = 0;
			}
			lx[n] = i;
			ly[n] = j;
			n++;
		}
	/* SortByClose(x, y) against window-relative points, as tinycv does */
	pick = match__closest(lx, ly, n, x, y);
	*bx = wx0 + lx[pick];
	*by = wy0 + ly[pick];
	ssd = 0;
	for (b = 0; b < h; b++)
		for (a = 0; a < w; a++) {
			int d = scene[(size_t)(*by + b) * sw + *bx + a] - tpl[b * w + a];
			ssd += (uint64_t)(d * d);
		}
	free(lx); free(ly); free(res);
	return match_similarity(ssd, (uint64_t)w * h);
}

TEST(match_grey_blur_exact)
{
	uint8_t src[9] = { 0, 0, 0, 0, 160, 0, 0, 0, 0 }, dst[9];
	struct image *img = image_new(1, 1);

	CHECK_INT(match_grey(255, 255, 255), 255);
	CHECK_INT(match_grey(0, 255, 0), 150);
	CHECK_INT(match_grey(255, 0, 0), 76);
	CHECK_INT(match_grey(0, 0, 255), 29);
	match_blur_rect(src, dst, 3, 3, 0, 0, 3, 3);
	CHECK_INT(dst[4], 40);  /* 160 * 4 / 16 */
	CHECK_INT(dst[0], 40);  /* reflect-101: (0,0) sees (1,1) four times */
	CHECK_INT(dst[1], 40);  /* 160 * (2*1*2) / 16 */
	src[4] = 9;
	match_blur_rect(src, dst, 3, 3, 0, 0, 3, 3);
	CHECK_INT(dst[4], 2);   /* 36/16 = 2.25 */
	src[4] = 2;
	match_blur_rect(src, dst, 3, 3, 0, 0, 3, 3);
	CHECK_INT(dst[4], 1);   /* 8/16 = 0.5 rounds up */
	image_free(img);
}

/* OpenCV 4.6 blurs a sub-Mat in place through sepFilter2D, whose SIMD
 * column pass rounds halves to even for the first 4*floor(width/4) columns
 * of the rectangle; its scalar tail and the whole-image path round up
 * (checked against libopencv 4.6 with a probe on random rectangles). */
TEST(match_blur_submat_rounding)
{
	uint8_t src[6 * 3], up[6 * 3], sub[6 * 3];
	int i;

	/* grey 2 everywhere but a centre column of 0: the 3x3 sum next to it
	 * is 2*12 = 24 -> 1.5 */
	for (i = 0; i < 18; i++)
		src[i] = (uint8_t)(i % 6 == 2 ? 0 : 2);
	memset(up, 0, sizeof(up));
	memset(sub, 0, sizeof(sub));
	match_blur_rect(src, up, 6, 3, 0, 0, 6, 3);
	match_blur_rect_submat(src, sub, 6, 3, 1, 1, 6, 2);
	CHECK_INT(up[6 + 1], 2);   /* 24/16 = 1.5 rounds up */
	CHECK_INT(sub[6 + 1], 2);  /* column 0 of the rectangle, 1.5 -> 2 (even) */
	CHECK_INT(up[6 + 3], 2);   /* 24/16 again */
	CHECK_INT(sub[6 + 3], 2);
	/* t = 8: 0.5 -> 0 in the SIMD columns, 1 in the tail */
	for (i = 0; i < 18; i++)
		src[i] = 0;
	src[6 + 1] = 2;            /* centre weight 4: t = 8 */
	src[6 + 5] = 2;
	match_blur_rect_submat(src, sub, 6, 3, 1, 1, 6, 2); /* width 5: columns 1-4 even, 5 up */
	CHECK_INT(sub[6 + 1], 0);
	CHECK_INT(sub[6 + 5], 1);
	match_blur_rect_submat(src, sub, 6, 3, 0, 0, 6, 3); /* whole image: up */
	CHECK_INT(sub[6 + 1], 1);
}

TEST(match_prep_cache_like_tinycv)
{
	struct match__prep p = { 0 };

	CHECK_INT(match__prep_roi(&p, 100, 100, 10, 10, 20, 20), 1);
	CHECK_INT(p.x, 10);
	CHECK_INT(p.w, 20);
	CHECK_INT(match__prep_even_end(&p, 100, 100), 30);
	CHECK_INT(match__prep_roi(&p, 100, 100, 12, 12, 5, 5), 0);   /* inside: reused */
	CHECK_INT(match__prep_roi(&p, 100, 100, 40, 5, 6, 6), 1);    /* bounding box */
	CHECK_INT(p.x, 10);
	CHECK_INT(p.y, 5);
	CHECK_INT(p.w, 36);
	CHECK_INT(p.h, 25);
	CHECK_INT(match__prep_even_end(&p, 100, 100), 46);
	CHECK_INT(match__prep_roi(&p, 100, 100, 0, 50, 80, 45), 1);  /* 80x90 >= half: whole */
	CHECK_INT(p.w, 100);
	CHECK_INT(p.h, 100);
	CHECK_INT(match__prep_even_end(&p, 100, 100), 0);
}

TEST(match_similarity_formula)
{
	CHECK_NEAR(match_similarity(0, 100), 1.0, 1e-12);
	CHECK_NEAR(match_similarity(40 * 100, 100), 0.9, 1e-12);
	CHECK_NEAR(match_similarity(78 * 100, 100), 0.8, 1e-12);
	CHECK_NEAR(match_similarity(1000 * 100, 100), 0.0, 1e-12);
}

static struct image *random_screen(int w, int h)
{
	struct image *img = image_new(w, h);
	int i, k;
	memset(img->px, 60, (size_t)w * h * 3);
	for (k = 0; k < 40; k++) {
		int x = (int)(rnd() % (unsigned)w), y = (int)(rnd() % (unsigned)h);
		image_fill_rect(img, x, y, 1 + (int)(rnd() % 40), 1 + (int)(rnd() % 20),
				(uint8_t)rnd(), (uint8_t)rnd(), (uint8_t)rnd());
	}
	for (i = 0; i < w * h / 10; i++)
		img->px[rnd() % (unsigned)(w * h * 3)] = (uint8_t)rnd();
	return img;
}

static struct needle *make_needle(struct image *img, int x, int y, int w, int h, double match, double margin)
{
	struct needle *n = calloc(1, sizeof(*n));
	n->name = strdup("n");
	n->file = strdup("n.json");
	n->nareas = 1;
	n->areas = calloc(1, sizeof(*n->areas));
	n->areas[0].x = x; n->areas[0].y = y; n->areas[0].w = w; n->areas[0].h = h;
	n->areas[0].match = match;
	n->areas[0].margin = margin;
	n->img = image_clone(img);
	n->img_state = 1;
	return n;
}

static void shift_image(const struct image *src, struct image *dst, int dx, int dy)
{
	int x, y;
	memset(dst->px, 60, (size_t)src->w * src->h * 3);
	for (y = 0; y < src->h; y++)
		for (x = 0; x < src->w; x++) {
			int sx = x - dx, sy = y - dy;
			if (sx >= 0 && sy >= 0 && sx < src->w && sy < src->h)
				memcpy(dst->px + ((size_t)y * src->w + x) * 3, src->px + ((size_t)sy * src->w + sx) * 3, 3);
		}
}

TEST(match_known_answers)
{
	struct image *base = random_screen(300, 200), *moved = image_clone(base), *far = image_clone(base);
	struct needle *n = make_needle(base, 100, 80, 40, 30, 96, 50);
	struct match_screen *s;
	struct match_result r;

	/* exact hit */
	s = match_screen_new(base);
	CHECK_INT(match_needle(s, n, MATCH_RATIO_MARGIN, 0, &r), 0);
	CHECK_INT(r.ok, 1);
	CHECK_INT(r.areas[0].x, 100);
	CHECK_NEAR(r.areas[0].similarity, 1, 0);
	CHECK_NEAR(r.error, 0, 0);
	match_result_release(&r);
	match_screen_free(s);
	/* moved within the margin (69 px) */
	shift_image(base, moved, 20, -15);
	s = match_screen_new(moved);
	CHECK_INT(match_needle(s, n, MATCH_RATIO_MARGIN, 0, &r), 0);
	CHECK_INT(r.areas[0].x, 120);
	CHECK_INT(r.areas[0].y, 65);
	CHECK_NEAR(r.areas[0].similarity, 1, 0);
	match_result_release(&r);
	match_screen_free(s);
	/* moved beyond: not found in the margin, found full screen */
	shift_image(base, far, 120, 0);
	s = match_screen_new(far);
	CHECK_INT(match_needle(s, n, MATCH_RATIO_MARGIN, 0, &r), 0);
	CHECK_INT(r.ok, 0);
	match_result_release(&r);
	CHECK_INT(match_needle(s, n, MATCH_RATIO_FULL, 0, &r), 0);
	CHECK_INT(r.ok, 1);
	CHECK_INT(r.areas[0].x, 220);
	match_result_release(&r);
	/* threshold lowers the level */
	CHECK_INT(match_needle(s, n, MATCH_RATIO_MARGIN, 1.0, &r), 0);
	CHECK_INT(r.ok, 1);
	match_result_release(&r);
	match_screen_free(s);
	/* area outside the screen: similarity 0 */
	n->areas[0].x = 290;
	s = match_screen_new(base);
	CHECK_INT(match_needle(s, n, MATCH_RATIO_MARGIN, 0, &r), 0);
	CHECK_NEAR(r.areas[0].similarity, 0, 0);
	CHECK_INT(r.ok, 0);
	CHECK_NEAR(r.error, 1, 0);
	match_result_release(&r);
	match_screen_free(s);
	needle_free(n);
	image_free(base);
	image_free(moved);
	image_free(far);
}

TEST(match_exclude_and_levels)
{
	struct image *base = random_screen(200, 150), *changed = image_clone(base);
	struct needle *n = make_needle(base, 50, 50, 60, 40, 96, 50);
	struct match_screen *s;
	struct match_result r;

	/* a region inside the area differs: fails without exclude */
	image_fill_rect(changed, 60, 60, 20, 15, 255, 255, 255);
	s = match_screen_new(changed);
	CHECK_INT(match_needle(s, n, MATCH_RATIO_MARGIN, 0, &r), 0);
	CHECK_INT(r.ok, 0);
	match_result_release(&r);
	/* the same needle with an exclude area over it: identical */
	needle_free(n);
	n = make_needle(base, 50, 50, 60, 40, 96, 50);
	n->areas = realloc(n->areas, 2 * sizeof(*n->areas));
	memset(&n->areas[1], 0, sizeof(n->areas[1]));
	n->areas[1].x = 58; n->areas[1].y = 58; n->areas[1].w = 24; n->areas[1].h = 19;
	n->areas[1].type = NEEDLE_AREA_EXCLUDE;
	n->nareas = 2;
	image_fill_rect(n->img, 58, 58, 24, 19, 0, 255, 0);
	CHECK_INT(match_needle(s, n, MATCH_RATIO_MARGIN, 0, &r), 0);
	CHECK_INT(r.ok, 1);
	CHECK_INT(r.nareas, 1);
	CHECK_NEAR(r.areas[0].similarity, 1, 0);
	match_result_release(&r);
	match_screen_free(s);
	needle_free(n);
	image_free(base);
	image_free(changed);
}

TEST(match_results_sort_order)
{
	struct needle a = { 0 }, b = { 0 }, c = { 0 }, d = { 0 };
	struct match_result r[4];

	a.name = "a"; b.name = "b"; c.name = "c"; d.name = "d";
	c.workaround = 1;
	memset(r, 0, sizeof(r));
	r[0].needle = &a; r[0].ok = 0; r[0].error = 0.01;
	r[1].needle = &b; r[1].ok = 1; r[1].error = 0.02;
	r[2].needle = &c; r[2].ok = 1; r[2].error = 0.02;
	r[3].needle = &d; r[3].ok = 1; r[3].error = 0.001;
	match_results_sort(r, 4);
	CHECK_STR(r[0].needle->name, "d");
	CHECK_STR(r[1].needle->name, "c");
	CHECK_STR(r[2].needle->name, "b");
	CHECK_STR(r[3].needle->name, "a");
}

TEST(match_closest_ties_follow_std_sort)
{
	int px[3] = { 5, 3, 4 }, py[3] = { 4, 4, 3 };
	/* (5,4) and (3,4) are both at distance 1 from (4,4): the first wins. */
	CHECK_INT(match__closest(px, py, 3, 4, 4), 0);
}

TEST(match_fast_equals_brute_force)
{
	int iter;

	for (iter = 0; iter < 300; iter++) {
		int sw = 40 + (int)(rnd() % 80), sh = 30 + (int)(rnd() % 60);
		int w = 1 + (int)(rnd() % 20), h = 1 + (int)(rnd() % 15);
		int x = (int)(rnd() % (unsigned)(sw - w + 1)), y = (int)(rnd() % (unsigned)(sh - h + 1));
		int margin = (int)(rnd() % 40), bx1, by1, bx2, by2, i, k;
		uint8_t *scene = malloc((size_t)sw * sh), *tpl = malloc((size_t)w * h);
		int levels = iter % 3 == 0 ? 2 : iter % 3 == 1 ? 4 : 256;
		double s1, s2;

		/* few grey levels and repeated patterns make near-ties common */
		for (i = 0; i < sw * sh; i++)
			scene[i] = (uint8_t)((rnd() % (unsigned)levels) * (255 / (levels - 1 ? levels - 1 : 1)));
		if (iter % 4 == 0)
			for (i = 0; i < sw * sh; i++)
				scene[i] = scene[i % (sw * 3 + 7)];
		for (k = 0; k < h; k++)
			memcpy(tpl + k * w, scene + (size_t)(y + k) * sw + x, (size_t)w);
		if (iter % 2)
			for (i = 0; i < w * h; i++)
				tpl[i] = (uint8_t)(tpl[i] + (rnd() % 3) - 1);
		if (iter % 5 == 0)
			tpl[rnd() % (unsigned)(w * h)] ^= 0x55;
		s1 = match__search(scene, sw, sh, tpl, w, h, x, y, margin, &bx1, &by1);
		s2 = brute(scene, sw, sh, tpl, w, h, x, y, margin, &bx2, &by2);
		if (bx1 != bx2 || by1 != by2 || s1 != s2)
			FAIL("iteration %d: fast (%d,%d) %.6f, brute force (%d,%d) %.6f", iter, bx1, by1, s1, bx2, by2, s2);
		free(scene);
		free(tpl);
	}
}
