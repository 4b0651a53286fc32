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
	if (x - wx0 >= rw || y - wy0 >= rh)
		FAIL("brute force: the area's position lies outside the result");
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

/* ---- the fast search and its kernels against plain references ---- */

#include "image/match_ssd.h"

static int64_t naive_ssd(const uint8_t *win, size_t sw, const uint8_t *tpl, int w, int h, int i, int j)
{
	int64_t s = 0;
	int a, b;

	for (b = 0; b < h; b++)
		for (a = 0; a < w; a++) {
			int d = win[(size_t)(j + b) * sw + i + a] - tpl[(size_t)b * w + a];
			s += d * d;
		}
	return s;
}

/* Every SIMD level's kernels, per position and per block, give the exact
 * SSD when it is <= bound and a lower bound > bound otherwise. */
TEST(match_ssd_kernels_exact_every_level)
{
	int iter, level, top = match__simd_level();

	for (iter = 0; iter < 60; iter++) {
		int w = 1 + (int)(rnd() % 200), h = 1 + (int)(rnd() % 40);
		int ww = w + (int)(rnd() % 150), wh = h + (int)(rnd() % 30), rw = ww - w + 1, rh = wh - h + 1;
		uint8_t *win = malloc((size_t)ww * wh), *tpl = malloc((size_t)w * h);
		int8_t *tq = malloc((size_t)w * h);
		int64_t *tt = malloc(sizeof(*tt) * (size_t)(2 * h + 2));
		int *border = malloc(sizeof(*border) * (size_t)h);
		int64_t *is = malloc(sizeof(*is) * (size_t)(ww + 1) * (wh + 1)), *iq = malloc(sizeof(*iq) * (size_t)(ww + 1) * (wh + 1));
		int i, j, k;

		for (i = 0; i < ww * wh; i++)
			win[i] = (uint8_t)(iter % 3 == 0 ? (rnd() & 1) * 255 : rnd());
		for (i = 0; i < w * h; i++)
			tpl[i] = (uint8_t)(iter % 3 == 0 ? (rnd() & 1) * 255 : rnd());
		for (i = 0; i <= ww; i++)
			is[i] = iq[i] = 0;
		for (j = 1; j <= wh; j++) {
			int64_t rs = 0, rq = 0;
			is[(size_t)j * (ww + 1)] = iq[(size_t)j * (ww + 1)] = 0;
			for (i = 1; i <= ww; i++) {
				int v = win[(size_t)(j - 1) * ww + i - 1];
				rs += v;
				rq += v * v;
				is[(size_t)j * (ww + 1) + i] = is[(size_t)(j - 1) * (ww + 1) + i] + rs;
				iq[(size_t)j * (ww + 1) + i] = iq[(size_t)(j - 1) * (ww + 1) + i] + rq;
			}
		}
		for (level = 0; level <= top; level++) {
			struct match__ssd c;
			uint32_t *buf = NULL;
			int32_t *tbuf = NULL;
			size_t bytes;
			memset(&c, 0, sizeof(c));
			c.win = win;
			c.sw = (size_t)ww;
			c.tpl = tpl;
			c.w = w;
			c.h = h;
			c.iw = (size_t)ww + 1;
			c.is = is;
			c.iq = iq;
			match__simd_cap = level;
			match__ssd_prepare(&c, tq, tt, border);
			CHECK_INT(c.level, level);
			bytes = match__ssd_qw_size(&c, ww, wh);
			if (bytes) {
				buf = malloc(bytes * 4);
				tbuf = malloc(match__ssd_tq4_size(&c) * 4);
				match__ssd_qw_fill(&c, ww, wh, buf);
				match__ssd_tq4_fill(&c, tbuf);
			}
			for (k = 0; k < 20; k++) {
				int64_t exact, v, bound, out[MATCH_BLOCK];
				int n;
				i = (int)(rnd() % (unsigned)rw);
				j = (int)(rnd() % (unsigned)rh);
				exact = naive_ssd(win, (size_t)ww, tpl, w, h, i, j);
				bound = k % 3 == 0 ? INT64_MAX : k % 3 == 1 ? exact : (int64_t)(rnd() % (unsigned)(exact + 1));
				v = match__ssd_at(&c, i, j, bound);
				if (exact <= bound)
					CHECK_INT(v, exact);
				else if (!(v > bound && v <= exact))
					FAIL("level %d: ssd_at %lld, exact %lld, bound %lld", level, (long long)v, (long long)exact, (long long)bound);
				CHECK_INT(match__ssd_direct(&c, i, j, INT64_MAX), exact);
				/* a block from (i, j): every lane exact or a bound > bound */
				n = rw - i < MATCH_BLOCK ? rw - i : MATCH_BLOCK;
				n = 1 + (int)(rnd() % (unsigned)n);
				match__ssd_block(&c, i, j, n, bound, out);
				for (int l = 0; l < n; l++) {
					int64_t e = naive_ssd(win, (size_t)ww, tpl, w, h, i + l, j);
					if (out[l] >= 0 ? out[l] != e : !(-out[l] - 1 > bound && -out[l] - 1 <= e))
						FAIL("level %d block lane %d: %lld, exact %lld, bound %lld", level, l,
						     (long long)out[l], (long long)e, (long long)bound);
				}
			}
			free(buf);
			free(tbuf);
		}
		match__simd_cap = MATCH_SIMD_VNNI;
		free(win);
		free(tpl);
		free(tq);
		free(tt);
		free(border);
		free(is);
		free(iq);
	}
}

/* The SIMD grey conversion equals OpenCV's formula on every pixel. */
TEST(match_grey_row_simd)
{
	uint8_t rgb[3 * 100], grey[100];
	int n, i;

	int level;

	for (level = 0; level <= match__simd_level(); level++) {
		match__simd_cap = level;
		for (n = 0; n <= 100; n += 7) {
			for (i = 0; i < 3 * n; i++)
				rgb[i] = (uint8_t)(i < 48 ? (i % 3 == 1 ? 255 : 0) : rnd());
			match__grey_row(rgb, grey, (size_t)n);
			for (i = 0; i < n; i++)
				CHECK_INT(grey[i], match_grey(rgb[3 * i], rgb[3 * i + 1], rgb[3 * i + 2]));
		}
	}
	match__simd_cap = MATCH_SIMD_VNNI;
	for (i = 0; i < 256 * 3 && i < 100; i++) {
		rgb[3 * i] = rgb[3 * i + 1] = rgb[3 * i + 2] = (uint8_t)(255 - i);
	}
	match__grey_row(rgb, grey, 100);
	for (i = 0; i < 100; i++)
		CHECK_INT(grey[i], 255 - i);
}

/* One search case: the pruned search at every SIMD level against the
 * exhaustive reference in the code and the test's own brute force. */
static void check_search(const uint8_t *scene, int sw, int sh, const uint8_t *tpl, int w, int h,
			 int x, int y, int margin, const char *what)
{
	int top = match__simd_level(), level, rx, ry, bx, by;
	double rs = match__search_ref(scene, sw, sh, tpl, w, h, x, y, margin, &rx, &ry), s;

	s = brute(scene, sw, sh, tpl, w, h, x, y, margin, &bx, &by);
	if (bx != rx || by != ry || s != rs)
		FAIL("%s: reference (%d,%d) %.6f, brute force (%d,%d) %.6f", what, rx, ry, rs, bx, by, s);
	for (level = 0; level <= top; level++) {
		match__simd_cap = level;
		s = match__search(scene, sw, sh, tpl, w, h, x, y, margin, &bx, &by);
		if (bx != rx || by != ry || s != rs)
			FAIL("%s, level %d: fast (%d,%d) %.6f, reference (%d,%d) %.6f", what, level, bx, by, s, rx, ry, rs);
	}
	match__simd_cap = MATCH_SIMD_VNNI;
}

TEST(match_fast_equals_reference_adversarial)
{
	int iter;

	for (iter = 0; iter < 120; iter++) {
		int kind = iter % 6;
		int sw = 20 + (int)(rnd() % 300), sh = 10 + (int)(rnd() % 60);
		int w = 1 + (int)(rnd() % (unsigned)(sw < 150 ? sw : 150)), h = 1 + (int)(rnd() % (unsigned)(sh < 30 ? sh : 30));
		int x, y, margin = (int)(rnd() % 200), i, k;
		uint8_t *scene = malloc((size_t)sw * sh), *tpl = malloc((size_t)w * h);
		char what[96];

		/* templates at the borders half of the time */
		x = iter % 4 == 0 ? 0 : iter % 4 == 1 ? sw - w : (int)(rnd() % (unsigned)(sw - w + 1));
		y = iter % 3 == 0 ? 0 : iter % 3 == 1 ? sh - h : (int)(rnd() % (unsigned)(sh - h + 1));
		for (i = 0; i < sw * sh; i++) {
			switch (kind) {
			case 0: scene[i] = 77; break;                                   /* flat: all ties */
			case 1: scene[i] = (uint8_t)((i % sw) % 3 == 0 ? 200 : 10); break; /* stripes */
			case 2: scene[i] = (uint8_t)(((i % sw) / 4 + (i / sw) / 4) % 2 * 255); break; /* checkers */
			case 3: scene[i] = (uint8_t)(rnd() % 2 * 255); break;           /* large SSDs */
			default: scene[i] = (uint8_t)rnd(); break;
			}
		}
		for (k = 0; k < h; k++)
			memcpy(tpl + (size_t)k * w, scene + (size_t)(y + k) * sw + x, (size_t)w);
		if (kind == 0 && iter % 2)
			tpl[rnd() % (unsigned)(w * h)] = 80;                 /* near-flat: ties at SSD 9 */
		if (kind >= 4)
			for (i = 0; i < w * h; i++)                          /* a mismatch: noise */
				tpl[i] = (uint8_t)(kind == 4 ? rnd() : tpl[i] ^ (rnd() & 3));
		if (kind == 3 && iter % 2)
			for (i = 0; i < w * h; i++)
				tpl[i] = (uint8_t)(255 - tpl[i]);
		snprintf(what, sizeof(what), "case %d (%dx%d in %dx%d at %d,%d margin %d)", iter, w, h, sw, sh, x, y, margin);
		check_search(scene, sw, sh, tpl, w, h, x, y, margin, what);
		free(scene);
		free(tpl);
	}
}

/* Tiny and huge areas: 1x1 templates, a template as large as the screen,
 * widths around the kernels' 16/64/128 steps, windows wider than a block. */
TEST(match_fast_equals_reference_sizes)
{
	static const int widths[] = { 1, 3, 4, 15, 16, 17, 63, 64, 65, 127, 128, 129, 130, 200 };
	size_t t;

	for (t = 0; t < sizeof(widths) / sizeof(widths[0]); t++) {
		int w = widths[t], h = 1 + (int)(rnd() % 20), sw = w + 1 + (int)(rnd() % 300), sh = h + (int)(rnd() % 25);
		int x = (int)(rnd() % (unsigned)(sw - w + 1)), y = (int)(rnd() % (unsigned)(sh - h + 1)), i, k;
		uint8_t *scene = malloc((size_t)sw * sh), *tpl = malloc((size_t)w * h);
		char what[64];

		for (i = 0; i < sw * sh; i++)
			scene[i] = (uint8_t)(rnd() % 4 * 60);
		for (k = 0; k < h; k++)
			memcpy(tpl + (size_t)k * w, scene + (size_t)(y + k) * sw + x, (size_t)w);
		tpl[0] ^= 1;
		snprintf(what, sizeof(what), "width %d", w);
		check_search(scene, sw, sh, tpl, w, h, x, y, 1024, what);
		check_search(scene, sw, sh, tpl, w, h, x, y, 5, what);
		free(scene);
		free(tpl);
	}
	{
		/* the template is the whole screen: one position */
		int sw = 90, sh = 40, i;
		uint8_t *scene = malloc((size_t)sw * sh), *tpl = malloc((size_t)sw * sh);
		for (i = 0; i < sw * sh; i++) {
			scene[i] = (uint8_t)rnd();
			tpl[i] = (uint8_t)rnd();
		}
		check_search(scene, sw, sh, tpl, sw, sh, 0, 0, 50, "whole screen");
		free(scene);
		free(tpl);
	}
}

static int refl(int i, int n)
{
	return n == 1 ? 0 : i < 0 ? -i : i >= n ? 2 * n - 2 - i : i;
}

/* The vectorised blur against the 3x3 formula, pixel by pixel, with both
 * roundings (halves to even in [x0, x0 + 4 floor(width / 4)) of a part). */
TEST(match_blur_simd_equals_formula)
{
	int iter;

	for (iter = 0; iter < 300; iter++) {
		int w = 1 + (int)(rnd() % 70), h = 1 + (int)(rnd() % 12), x, y;
		int x0 = (int)(rnd() % (unsigned)w), y0 = (int)(rnd() % (unsigned)h);
		int x1 = x0 + 1 + (int)(rnd() % (unsigned)(w - x0)), y1 = y0 + 1 + (int)(rnd() % (unsigned)(h - y0));
		uint8_t *src = malloc((size_t)w * h), *dst = malloc((size_t)w * h);
		int whole = iter % 5 == 0, even_end;

		if (whole) {
			x0 = y0 = 0;
			x1 = w;
			y1 = h;
		}
		for (x = 0; x < w * h; x++)
			src[x] = (uint8_t)(iter % 2 ? rnd() : (rnd() % 2) * 8);  /* many exact halves */
		memset(dst, 0, (size_t)w * h);
		match__simd_cap = iter % 3;  /* every level's loops */
		match_blur_rect_submat(src, dst, w, h, x0, y0, x1, y1);
		match__simd_cap = MATCH_SIMD_VNNI;
		even_end = whole ? 0 : x0 + ((x1 - x0) & ~3);
		for (y = y0; y < y1; y++)
			for (x = x0; x < x1; x++) {
				int t = 0, dy, dx, want;
				for (dy = -1; dy <= 1; dy++)
					for (dx = -1; dx <= 1; dx++)
						t += (2 - abs(dy)) * (2 - abs(dx)) * src[refl(y + dy, h) * w + refl(x + dx, w)];
				want = x < even_end ? (t + 7 + ((t >> 4) & 1)) >> 4 : (t + 8) >> 4;
				if (dst[y * w + x] != want)
					FAIL("%dx%d rect %d,%d-%d,%d: (%d,%d) = %d, want %d", w, h, x0, y0, x1, y1, x, y,
					     dst[y * w + x], want);
			}
		free(src);
		free(dst);
	}
}

/* A whole-screen search prepares the whole screen at once, so sharing one
 * match_screen between needles (its search buffers and the window data
 * kept for the next area) must give what a fresh screen per needle gives. */
TEST(match_shared_screen_equals_fresh)
{
	struct image *base = random_screen(260, 150), *shot = image_clone(base);
	struct needle *nd[6];
	struct match_screen *shared;
	int k;

	shift_image(base, shot, 7, -3);
	image_fill_rect(shot, 30, 30, 40, 20, 200, 10, 10);
	shared = match_screen_new(shot);
	for (k = 0; k < 6; k++) {
		int w = 8 + (int)(rnd() % 60), h = 5 + (int)(rnd() % 30);
		nd[k] = make_needle(base, (int)(rnd() % (unsigned)(260 - w)), (int)(rnd() % (unsigned)(150 - h)), w, h, 96, 50);
		if (k == 5) {  /* a second area, and an exclude area: the painted copy */
			nd[k]->areas = realloc(nd[k]->areas, 2 * sizeof(*nd[k]->areas));
			memset(&nd[k]->areas[1], 0, sizeof(nd[k]->areas[1]));
			nd[k]->areas[1].x = nd[k]->areas[0].x + 1;
			nd[k]->areas[1].y = nd[k]->areas[0].y + 1;
			nd[k]->areas[1].w = 3;
			nd[k]->areas[1].h = 3;
			nd[k]->areas[1].type = NEEDLE_AREA_EXCLUDE;
			nd[k]->nareas = 2;
		}
	}
	for (k = 0; k < 6; k++) {
		struct match_screen *fresh = match_screen_new(shot);
		struct match_result a, b;
		CHECK_INT(match_needle(shared, nd[k], MATCH_RATIO_FULL, 0, &a), 0);
		CHECK_INT(match_needle(fresh, nd[k], MATCH_RATIO_FULL, 0, &b), 0);
		CHECK_INT(a.nareas, b.nareas);
		CHECK_INT(a.areas[0].x, b.areas[0].x);
		CHECK_INT(a.areas[0].y, b.areas[0].y);
		CHECK_NEAR(a.areas[0].similarity, b.areas[0].similarity, 0);
		match_result_release(&a);
		match_result_release(&b);
		match_screen_free(fresh);
	}
	match_screen_free(shared);
	for (k = 0; k < 6; k++)
		needle_free(nd[k]);
	image_free(base);
	image_free(shot);
}

/* A reset screen behaves as a new one: the preparation starts afresh and
 * the kept buffers hold nothing of the previous image (same size or not). */
TEST(match_screen_reset_equals_new)
{
	struct image *a = random_screen(200, 120), *b = image_clone(a), *c = random_screen(150, 90);
	struct needle *n = make_needle(a, 60, 40, 50, 30, 96, 50);
	struct match_screen *s = match_screen_new(a);
	const struct image *imgs[3];
	int k, mode;

	shift_image(a, b, 5, 3);
	imgs[0] = b;
	imgs[1] = c;
	imgs[2] = a;
	for (mode = 0; mode < 2; mode++) {
		double ratio = mode ? MATCH_RATIO_FULL : MATCH_RATIO_MARGIN;
		struct match_result r;
		CHECK_INT(match_needle(s, n, ratio, 0, &r), 0);
		match_result_release(&r);
		for (k = 0; k < 3; k++) {
			struct match_screen *fresh = match_screen_new(imgs[k]);
			struct match_result x, y;
			match_screen_reset(s, imgs[k]);
			CHECK_INT(match_needle(s, n, ratio, 0, &x), 0);
			CHECK_INT(match_needle(fresh, n, ratio, 0, &y), 0);
			CHECK_INT(x.areas[0].x, y.areas[0].x);
			CHECK_INT(x.areas[0].y, y.areas[0].y);
			CHECK_NEAR(x.areas[0].similarity, y.areas[0].similarity, 0);
			match_result_release(&x);
			match_result_release(&y);
			match_screen_free(fresh);
		}
	}
	match_screen_free(s);
	needle_free(n);
	image_free(a);
	image_free(b);
	image_free(c);
}

/* Results carried over from the screen before (match_screen_reset_rows)
 * are those a fresh screen gives, whichever rows change: a run of frames
 * with random bands of changed rows, needles with one or two areas and
 * with an exclude area, margin and whole-screen searches. The fresh
 * screens search twins of the needles (nf), which go through the same
 * calls: a needle's own preparation state (tinycv's) shapes its template. */
static void same_results(struct match_screen *s, const struct image *img, struct needle **nd,
			 struct needle **nf, int nn, double ratio, int reverse, const char *what)
{
	struct match_screen *fresh = match_screen_new(img);
	int j, k;
	size_t i;

	for (j = 0; j < nn; j++) {
		struct match_result a, b;
		k = reverse ? nn - 1 - j : j;
		CHECK_INT(match_needle(s, nd[k], ratio, 0, &a), 0);
		CHECK_INT(match_needle(fresh, nf[k], ratio, 0, &b), 0);
		CHECK_INT(a.nareas, b.nareas);
		CHECK_INT(a.ok, b.ok);
		for (i = 0; i < a.nareas && i < b.nareas; i++) {
			if (a.areas[i].x != b.areas[i].x || a.areas[i].y != b.areas[i].y ||
			    a.areas[i].similarity != b.areas[i].similarity)
				FAIL("%s: needle %d area %zu: (%d,%d) %.6f carried, (%d,%d) %.6f fresh", what, k, i,
				     a.areas[i].x, a.areas[i].y, a.areas[i].similarity,
				     b.areas[i].x, b.areas[i].y, b.areas[i].similarity);
		}
		match_result_release(&a);
		match_result_release(&b);
	}
	match_screen_free(fresh);
}

/* Needle a on s and its twin b on fr, ratio 0 (the area's margin alone):
 * the same similarity, which it returns. */
static double twin_search(struct match_screen *s, struct needle *a, struct match_screen *fr, struct needle *b)
{
	struct match_result r, r2;
	double sim;

	CHECK_INT(match_needle(s, a, 0, 0, &r), 0);
	CHECK_INT(match_needle(fr, b, 0, 0, &r2), 0);
	CHECK_NEAR(r.areas[0].similarity, r2.areas[0].similarity, 0);
	sim = r.areas[0].similarity;
	match_result_release(&r);
	match_result_release(&r2);
	return sim;
}

TEST(match_carry_over_equals_fresh)
{
	struct image *base = random_screen(320, 240), *img[2];
	struct needle *nd[5], *nf[5], **set;
	struct match_screen *s;
	int k, f, cur = 0;

	for (set = nd; set; set = set == nd ? nf : NULL) {
		set[0] = make_needle(base, 100, 80, 40, 30, 96, 50);
		set[1] = make_needle(base, 20, 200, 60, 20, 96, 20);
		set[2] = make_needle(base, 250, 10, 50, 12, 96, 10);
		set[3] = make_needle(base, 150, 150, 30, 30, 96, 30);
		set[4] = make_needle(base, 40, 30, 70, 25, 96, 15);
		/* a second match area and an exclude area */
		set[4]->areas = realloc(set[4]->areas, 3 * sizeof(*set[4]->areas));
		set[4]->areas[1] = (struct needle_area){ .x = 200, .y = 120, .w = 30, .h = 40, .match = 96, .margin = 25 };
		set[4]->areas[2] = (struct needle_area){ .x = 45, .y = 35, .w = 5, .h = 5, .type = NEEDLE_AREA_EXCLUDE };
		set[4]->nareas = 3;
	}
	img[0] = image_clone(base);
	img[1] = image_clone(base);
	s = match_screen_new(img[0]);
	same_results(s, img[0], nd, nf, 5, MATCH_RATIO_MARGIN, 0, "first frame");
	/* frame 1 changes the bottom rows only: most areas carry over, from
	 * the first search of their needles (whose templates differ from the
	 * second's, see match_needle_err) */
	for (f = 0; f < 60; f++) {
		int nxt = !cur, y0 = (int)(rnd() % 240), h = 1 + (int)(rnd() % 30), y1;
		char what[64];
		if (f == 0)
			y0 = 235;
		y1 = y0 + h > 240 ? 240 : y0 + h;
		memcpy(img[nxt]->px, img[cur]->px, (size_t)320 * 240 * 3);
		/* change rows [y0, y1): the first and the last for sure */
		image_fill_rect(img[nxt], (int)(rnd() % 300), y0, 1 + (int)(rnd() % 20), y1 - y0,
				(uint8_t)rnd(), (uint8_t)rnd(), (uint8_t)rnd());
		if (f % 5 == 4) /* the needle back where it was, now and then */
			for (k = y0; k < y1; k++)
				memcpy(img[nxt]->px + (size_t)k * 320 * 3, base->px + (size_t)k * 320 * 3, 320 * 3);
		match_screen_reset_rows(s, img[nxt], y0, y1);
		snprintf(what, sizeof(what), "frame %d, rows %d-%d", f + 1, y0, y1);
		/* now and then the whole screen, or the needles in another order
		 * (the screen's preparation then grows otherwise) */
		same_results(s, img[nxt], nd, nf, 5, f % 7 == 6 ? MATCH_RATIO_FULL : MATCH_RATIO_MARGIN,
			     f % 3 == 1, what);
		cur = nxt;
	}
	/* The row below the window counts (the blur reaches it): a needle
	 * searched at its place alone (no margin, ratio 0), then only the row
	 * under it changed. b is a's twin, for the fresh screens. */
	{
		struct needle *a = make_needle(base, 100, 80, 40, 30, 96, 0), *b = make_needle(base, 100, 80, 40, 30, 96, 0);
		struct match_screen *fr = match_screen_new(base);
		memcpy(img[!cur]->px, base->px, (size_t)320 * 240 * 3);
		match_screen_reset(s, img[!cur]);
		CHECK_NEAR(twin_search(s, a, fr, b), 1, 0);
		memcpy(img[cur]->px, base->px, (size_t)320 * 240 * 3);
		image_fill_rect(img[cur], 100, 110, 40, 1, 255, 255, 255);
		match_screen_reset_rows(s, img[cur], 110, 111);
		match_screen_reset(fr, img[cur]);
		CHECK(twin_search(s, a, fr, b) < 1);
		match_screen_free(fr);
		needle_free(a);
		needle_free(b);
	}
	/* The screen's prepared rectangle before the search counts: it decides
	 * the blur's rounding in the window. A needle from a noisier copy of
	 * the screen (its similarity in the linear range), searched after a
	 * needle whose rectangle is small, then after one whose rectangle
	 * takes half the screen (both at the top left): tinycv then blurs the
	 * whole screen, halves rounded up instead of to even. */
	{
		struct image *other = image_clone(base);
		struct needle *a, *b;
		struct needle *c1 = make_needle(base, 0, 0, 40, 30, 96, 0), *c2 = make_needle(base, 0, 0, 300, 140, 96, 0);
		struct match_screen *fr = match_screen_new(base);
		double sim = 0;
		size_t i;
		for (i = 0; i < (size_t)320 * 240 * 3; i++) {
			int v = other->px[i] + (int)(rnd() % 25) - 12;
			other->px[i] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
		}
		a = make_needle(other, 150, 100, 40, 30, 96, 0);
		b = make_needle(other, 150, 100, 40, 30, 96, 0);
		memcpy(img[!cur]->px, base->px, (size_t)320 * 240 * 3);
		memcpy(img[cur]->px, base->px, (size_t)320 * 240 * 3);
		match_screen_reset(s, img[!cur]);
		twin_search(s, c1, fr, c1);
		/* twice: the needle's own state settles in the first search */
		for (i = 0; i < 2; i++)
			sim = twin_search(s, a, fr, b);
		CHECK(sim > 0 && sim < 1);
		/* the same pixels, rows at the bottom named */
		match_screen_reset_rows(s, img[cur], 230, 240);
		match_screen_reset(fr, img[cur]);
		twin_search(s, c2, fr, c2);
		twin_search(s, a, fr, b);
		match_screen_free(fr);
		needle_free(a);
		needle_free(b);
		needle_free(c1);
		needle_free(c2);
		image_free(other);
	}
	/* Carried over, not searched: a change the caller leaves out of the
	 * rows it names is not seen (the needle at the top is blacked out, and
	 * rows at the bottom named). */
	{
		struct match_result r;
		memcpy(img[!cur]->px, base->px, (size_t)320 * 240 * 3);
		match_screen_reset(s, img[!cur]);
		CHECK_INT(match_needle(s, nd[2], MATCH_RATIO_MARGIN, 0, &r), 0);
		CHECK_INT(r.ok, 1);
		match_result_release(&r);
		memcpy(img[cur]->px, base->px, (size_t)320 * 240 * 3);
		image_fill_rect(img[cur], 250, 10, 50, 12, 0, 0, 0);
		match_screen_reset_rows(s, img[cur], 230, 240);
		CHECK_INT(match_needle(s, nd[2], MATCH_RATIO_MARGIN, 0, &r), 0);
		CHECK_INT(r.ok, 1);
		match_result_release(&r);
		/* named truly, it is searched again */
		match_screen_reset_rows(s, img[cur], 10, 22);
		CHECK_INT(match_needle(s, nd[2], MATCH_RATIO_MARGIN, 0, &r), 0);
		CHECK_INT(r.ok, 0);
		match_result_release(&r);
	}
	match_screen_free(s);
	for (k = 0; k < 5; k++) {
		needle_free(nd[k]);
		needle_free(nf[k]);
	}
	image_free(base);
	image_free(img[0]);
	image_free(img[1]);
}

/* ---- threads ---- */

/* The search split over 2, 3 and 4 threads (at every SIMD level, or the
 * best one only when all_levels is 0) against the single-threaded search
 * and, when ref, the exhaustive reference: the same position and the
 * same similarity, bit for bit. */
static void check_threads(const uint8_t *scene, int sw, int sh, const uint8_t *tpl, int w, int h,
			  int x, int y, int margin, int ref, int all_levels, const char *what)
{
	static const int counts[] = { 2, 4, 3 };
	int top = match__simd_level(), level, bx1, by1, bx, by, rx, ry;
	double s1, s, rs;
	size_t k;

	match__threads = 1;
	s1 = match__search(scene, sw, sh, tpl, w, h, x, y, margin, &bx1, &by1);
	if (ref) {
		rs = match__search_ref(scene, sw, sh, tpl, w, h, x, y, margin, &rx, &ry);
		if (bx1 != rx || by1 != ry || s1 != rs)
			FAIL("%s: one thread (%d,%d) %.9f, reference (%d,%d) %.9f", what, bx1, by1, s1, rx, ry, rs);
	}
	for (level = all_levels ? 0 : top; level <= top; level++) {
		match__simd_cap = level;
		for (k = 0; k < sizeof(counts) / sizeof(counts[0]); k++) {
			match__threads = counts[k];
			s = match__search(scene, sw, sh, tpl, w, h, x, y, margin, &bx, &by);
			if (bx != bx1 || by != by1 || s != s1)
				FAIL("%s, level %d, %d threads: (%d,%d) %.9f, one thread (%d,%d) %.9f", what, level,
				     counts[k], bx, by, s, bx1, by1, s1);
		}
	}
	match__simd_cap = MATCH_SIMD_VNNI;
	match__threads = 0;
}

/* A scene tiled with one random tile, each copy disturbed by a few +-1
 * pixels: many positions with equal or nearly equal SSDs (minVec's ties),
 * spread over rows that different threads search. */
static void tiled_scene(uint8_t *scene, int sw, int sh, int tw, int th, int noise)
{
	uint8_t *tile = malloc((size_t)tw * th);
	int i;

	for (i = 0; i < tw * th; i++)
		tile[i] = (uint8_t)(40 + rnd() % 170);
	for (i = 0; i < sw * sh; i++)
		scene[i] = tile[(i / sw) % th * tw + (i % sw) % tw];
	for (i = 0; i < noise; i++) {
		size_t p = rnd() % (unsigned)(sw * sh);
		scene[p] = (uint8_t)(scene[p] + (rnd() % 2 ? 1 : -1));
	}
	free(tile);
}

/* A smooth scene, like a blurred screen: the bounds and the early exit
 * prune as they do on real screens, so the threads race for the minimum. */
static void smooth_scene(uint8_t *scene, int sw, int sh)
{
	int i;

	for (i = 0; i < sw * sh; i++)
		scene[i] = (uint8_t)((i % sw) / 7 * 13 + (i / sw) / 5 * 7 + rnd() % 16);
}

TEST(match_threads_equal_single_random)
{
	int iter;

	for (iter = 0; iter < 60; iter++) {
		int kind = iter % 6, sw = 20 + (int)(rnd() % 380), sh = 4 + (int)(rnd() % 120);
		int w = 1 + (int)(rnd() % (unsigned)(sw < 100 ? sw : 100)), h = 1 + (int)(rnd() % (unsigned)(sh < 24 ? sh : 24));
		int x = (int)(rnd() % (unsigned)(sw - w + 1)), y = (int)(rnd() % (unsigned)(sh - h + 1));
		int margin = iter % 3 ? (int)(rnd() % 100) : 1024, i, k;
		uint8_t *scene = malloc((size_t)sw * sh), *tpl = malloc((size_t)w * h);
		char what[112];

		if (kind == 5)
			tiled_scene(scene, sw, sh, 3 + (int)(rnd() % 20), 2 + (int)(rnd() % 9), sw * sh / 50);
		else if (kind == 4)
			smooth_scene(scene, sw, sh);
		for (i = 0; kind < 4 && i < sw * sh; i++) {
			switch (kind) {
			case 0: scene[i] = 77; break;
			case 1: scene[i] = (uint8_t)((i % sw) % 3 == 0 ? 200 : 10); break;
			case 2: scene[i] = (uint8_t)(rnd() % 2 * 255); break;
			default: scene[i] = (uint8_t)rnd(); break;
			}
		}
		for (k = 0; k < h; k++)
			memcpy(tpl + (size_t)k * w, scene + (size_t)(y + k) * sw + x, (size_t)w);
		if (iter % 2)
			for (i = 0; i < w * h; i++)
				tpl[i] = (uint8_t)(kind == 3 ? rnd() : tpl[i] ^ (rnd() & 3));
		snprintf(what, sizeof(what), "case %d (%dx%d in %dx%d at %d,%d margin %d)", iter, w, h, sw, sh, x, y, margin);
		check_threads(scene, sw, sh, tpl, w, h, x, y, margin, 1, 1, what);
		free(scene);
		free(tpl);
	}
}

/* The best position in each row in turn (the rows go to the threads in
 * an order of their own): a row left out or searched twice shows. The
 * scene repeats a 7x4 tile and the template is 7x4, so every position has
 * the same lower bound and the seeds cannot find the best; the ties one
 * tile apart leave the one nearest the area's position to pick. */
TEST(match_threads_every_row)
{
	int sw = 71, sh = 46, w = 7, h = 4, cy, i, k;
	uint8_t *scene = malloc((size_t)sw * sh), *tpl = malloc((size_t)w * h);

	tiled_scene(scene, sw, sh, w, h, 0);
	for (cy = 0; cy <= sh - h; cy++) {
		int cx = (int)(rnd() % (unsigned)(sw - w));
		char what[64];
		for (k = 0; k < h; k++)
			memcpy(tpl + (size_t)k * w, scene + (size_t)(cy + k) * sw + cx, (size_t)w);
		for (i = 0; i < 3; i++)
			tpl[rnd() % (unsigned)(w * h)] ^= 2;
		snprintf(what, sizeof(what), "best at %d,%d", cx, cy);
		check_threads(scene, sw, sh, tpl, w, h, cx + 1, cy, 1024, 1, 1, what);
	}
	free(scene);
	free(tpl);
}

/* Whole-screen searches on a 1024x768 screen (the split of the bounds
 * and the shared minimum over ~700,000 positions), with near-ties: against
 * the reference for small templates, against one thread for large ones. */
TEST(match_threads_equal_single_full_screen)
{
	int sw = 1024, sh = 768, iter;
	uint8_t *scene = malloc((size_t)sw * sh);

	for (iter = 0; iter < 8; iter++) {
		int small = iter < 3, w = small ? 6 + (int)(rnd() % 10) : 40 + (int)(rnd() % 160);
		int h = small ? 4 + (int)(rnd() % 8) : 15 + (int)(rnd() % 60), i, k;
		int x = (int)(rnd() % (unsigned)(sw - w + 1)), y = (int)(rnd() % (unsigned)(sh - h + 1));
		uint8_t *tpl = malloc((size_t)w * h);
		char what[96];

		if (iter % 2)
			tiled_scene(scene, sw, sh, 50 + (int)(rnd() % 200), 20 + (int)(rnd() % 80), 3000);
		else
			smooth_scene(scene, sw, sh);
		for (k = 0; k < h; k++)
			memcpy(tpl + (size_t)k * w, scene + (size_t)(y + k) * sw + x, (size_t)w);
		/* a near miss: the minimum is not where the area was cut */
		for (i = 0; i < 3; i++)
			tpl[rnd() % (unsigned)(w * h)] ^= 1;
		snprintf(what, sizeof(what), "full screen %d (%dx%d at %d,%d)", iter, w, h, x, y);
		check_threads(scene, sw, sh, tpl, w, h, x, y, 1024, small, 0, what);
		if (!small) {
			/* a margin search large enough to split by itself */
			snprintf(what, sizeof(what), "margin %d (%dx%d at %d,%d)", iter, w, h, x, y);
			check_threads(scene, sw, sh, tpl, w, h, x, y, 40 + (int)(rnd() % 100), 0, 0, what);
		}
		free(tpl);
	}
	free(scene);
}

/* Without the test's knob, VIGIL_MATCH_THREADS and the size decide: a
 * whole-screen search and large margin searches split, small ones do
 * not; the results are those of one thread all the same. */
TEST(match_threads_auto_equals_single)
{
	int sw = 1024, sh = 768, iter;
	uint8_t *scene = malloc((size_t)sw * sh);

	setenv("VIGIL_MATCH_THREADS", "3", 1);
	smooth_scene(scene, sw, sh);
	for (iter = 0; iter < 12; iter++) {
		int w = 10 + (int)(rnd() % 200), h = 5 + (int)(rnd() % 90), margin = iter % 3 ? 20 + (int)(rnd() % 120) : 1024;
		int x = (int)(rnd() % (unsigned)(sw - w + 1)), y = (int)(rnd() % (unsigned)(sh - h + 1));
		int bx1, by1, bx, by, k;
		uint8_t *tpl = malloc((size_t)w * h);
		double s1, s;

		for (k = 0; k < h; k++)
			memcpy(tpl + (size_t)k * w, scene + (size_t)(y + k) * sw + x, (size_t)w);
		if (iter % 2)  /* not on the screen: nothing prunes */
			for (k = 0; k < w * h; k++)
				tpl[k] = (uint8_t)rnd();
		else
			tpl[0] ^= 1;
		match__threads = 1;
		s1 = match__search(scene, sw, sh, tpl, w, h, x, y, margin, &bx1, &by1);
		match__threads = 0;
		s = match__search(scene, sw, sh, tpl, w, h, x, y, margin, &bx, &by);
		if (bx != bx1 || by != by1 || s != s1)
			FAIL("case %d (%dx%d margin %d): auto (%d,%d) %.9f, one thread (%d,%d) %.9f", iter, w, h, margin,
			     bx, by, s, bx1, by1, s1);
		free(tpl);
	}
	free(scene);
}

/* match_needle on a shared whole screen (the window data kept between
 * areas) gives the same with 1, 2 and 4 threads. */
TEST(match_threads_shared_screen)
{
	struct image *base = random_screen(1024, 768), *shot = image_clone(base);
	struct needle *nd[4];
	struct match_result want[4];
	static const int counts[] = { 2, 4 };
	size_t t;
	int k;

	shift_image(base, shot, -9, 5);
	for (k = 0; k < 4; k++) {
		int w = 20 + (int)(rnd() % 150), h = 10 + (int)(rnd() % 60);
		nd[k] = make_needle(base, (int)(rnd() % (unsigned)(1024 - w)), (int)(rnd() % (unsigned)(768 - h)), w, h, 95, 30);
	}
	for (t = 0; t <= sizeof(counts) / sizeof(counts[0]); t++) {
		struct match_screen *s = match_screen_new(shot);
		match__threads = t ? counts[t - 1] : 1;
		for (k = 0; k < 4; k++) {
			struct match_result r;
			CHECK_INT(match_needle(s, nd[k], k % 2 ? MATCH_RATIO_MARGIN : MATCH_RATIO_FULL, 0, &r), 0);
			if (!t) {
				want[k] = r;
				continue;
			}
			CHECK_INT(r.areas[0].x, want[k].areas[0].x);
			CHECK_INT(r.areas[0].y, want[k].areas[0].y);
			CHECK(r.areas[0].similarity == want[k].areas[0].similarity);
			CHECK_INT(r.ok, want[k].ok);
			match_result_release(&r);
		}
		match_screen_free(s);
	}
	match__threads = 0;
	for (k = 0; k < 4; k++) {
		match_result_release(&want[k]);
		needle_free(nd[k]);
	}
	image_free(base);
	image_free(shot);
}

/* A screen of flat panels with text-like noise in a few boxes: most
 * windows are of one value. */
static void panel_scene(uint8_t *scene, int sw, int sh)
{
	int i, k;

	for (i = 0; i < sw * sh; i++)
		scene[i] = 20;
	for (k = 0; k < 6; k++) {
		int x0 = (int)(rnd() % (unsigned)sw), y0 = (int)(rnd() % (unsigned)sh), pw = 1 + (int)(rnd() % 120),
		    ph = 1 + (int)(rnd() % 40), x, y, text = k % 2;
		uint8_t v = (uint8_t)(rnd() % 3 == 0 ? 20 : rnd());
		for (y = y0; y < sh && y < y0 + ph; y++)
			for (x = x0; x < sw && x < x0 + pw; x++)
				scene[(size_t)y * sw + x] = text && rnd() % 4 == 0 ? (uint8_t)rnd() : v;
	}
}

/* Screens of flat panels (many windows of one value, many equal SSDs):
 * the search equals the reference with templates cut from flat parts and
 * from parts with text, changed a little or flat, on every SIMD level and
 * with threads. */
TEST(match_flat_windows_equal_reference)
{
	int iter;

	for (iter = 0; iter < 80; iter++) {
		int sw = 40 + (int)(rnd() % 260), sh = 20 + (int)(rnd() % 80);
		int w = 1 + (int)(rnd() % 60), h = 1 + (int)(rnd() % 20), x, y, k, margin = (int)(rnd() % 120);
		uint8_t *scene = malloc((size_t)sw * sh), *tpl = malloc((size_t)w * h);
		char what[96];

		if (w > sw)
			w = sw;
		if (h > sh)
			h = sh;
		panel_scene(scene, sw, sh);
		x = (int)(rnd() % (unsigned)(sw - w + 1));
		y = (int)(rnd() % (unsigned)(sh - h + 1));
		for (k = 0; k < h; k++)
			memcpy(tpl + (size_t)k * w, scene + (size_t)(y + k) * sw + x, (size_t)w);
		if (iter % 3 == 1)
			tpl[rnd() % (unsigned)(w * h)] ^= 1;             /* near-ties with flat windows */
		else if (iter % 3 == 2)
			for (k = 0; k < w * h; k++)                        /* flat, close to the background */
				tpl[k] = (uint8_t)(20 + iter % 7);
		snprintf(what, sizeof(what), "panels %d (%dx%d in %dx%d at %d,%d margin %d)", iter, w, h, sw, sh, x, y,
			 margin);
		check_search(scene, sw, sh, tpl, w, h, x, y, margin, what);
		check_threads(scene, sw, sh, tpl, w, h, x, y, margin, 0, 0, what);
		free(scene);
		free(tpl);
	}
}
