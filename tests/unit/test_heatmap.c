/* SPDX-License-Identifier: MIT */
/* test_heatmap.c - difference heat-maps on the GRUB example's real needles:
 * a needle against its own screen is all agreement, against another menu
 * the differences and the similarity agree with the matcher, a shift of 7
 * grey levels reads as 7, and areas outside either picture are refused. */
#include <stdlib.h>
#include "unit.h"
#include "image/heatmap.h"
#include "image/match.h"
#include "image/needle.h"
#include "util/err.h"

#define GRUB "examples/grub/needles"

static struct needle *grub_needle(const char *json)
{
	struct needle *n = NULL;
	char err[256];

	if (needle_load(GRUB, json, &n, err, sizeof(err)))
		FAIL("%s", err);
	return n;
}

static struct image *grub_png(const char *png)
{
	struct image *img = NULL;
	char path[256], err[256];

	snprintf(path, sizeof(path), "%s/%s", GRUB, png);
	if (image_load_png(path, &img, err, sizeof(err)))
		FAIL("%s", err);
	return img;
}

TEST(heatmap_same_screen)
{
	struct needle *n = grub_needle("grub-menu.json");
	struct image *screen = grub_png("grub-menu.png"), *hm = NULL;
	struct heatmap_stats st;
	char err[256];
	int i;

	CHECK_INT(heatmap_area(screen, n, 1, 18, 62, &hm, &st, err, sizeof(err)), 0);
	CHECK_INT(hm->w, 400);
	CHECK_INT(hm->h, 145);
	CHECK_INT(st.max_diff, 0);
	CHECK_NEAR(st.similarity, 1.0, 1e-9);
	/* all agreement: the screen, dimmed and grey */
	for (i = 0; i < hm->w * hm->h; i++)
		CHECK(hm->px[i * 3] == hm->px[i * 3 + 1] && hm->px[i * 3] == hm->px[i * 3 + 2] && hm->px[i * 3] <= 64);
	image_free(hm);
	image_free(screen);
	needle_free(n);
}

TEST(heatmap_other_menu_agrees_with_matcher)
{
	struct needle *n = grub_needle("grub-menu.json");
	struct image *screen = grub_png("grub-menu-memtest.png"), *hm = NULL;
	struct match_screen *ms = match_screen_new(screen);
	struct match_result r;
	struct heatmap_stats st;
	char err[256];

	/* the memtest entry is highlighted: the menu area differs */
	CHECK_INT(match_needle(ms, n, MATCH_RATIO_MARGIN, 0, &r), 0);
	CHECK_INT(r.nareas, 2);
	CHECK(!r.areas[1].ok);
	CHECK_INT(heatmap_area(screen, n, 1, r.areas[1].x, r.areas[1].y, &hm, &st, err, sizeof(err)), 0);
	CHECK(st.max_diff >= HEATMAP_FULL_SCALE);
	CHECK(st.similarity < 0.96);
	CHECK_NEAR(st.similarity, r.areas[1].similarity, 0.005);
	match_result_release(&r);
	match_screen_free(ms);
	image_free(hm);
	image_free(screen);
	needle_free(n);
}

TEST(heatmap_shift_reads_as_its_size)
{
	struct needle *n = grub_needle("grub-menu.json");
	struct image *screen = grub_png("grub-menu.png"), *hm = NULL;
	struct heatmap_stats st;
	uint8_t want[3];
	char err[256];
	int x, y, c;

	/* every pixel of the menu area 7 grey levels off, as tests/web's near-miss needle */
	for (y = 62; y < 62 + 145; y++)
		for (x = 18; x < 18 + 400; x++)
			for (c = 0; c < 3; c++) {
				uint8_t *p = &screen->px[((size_t)y * screen->w + x) * 3 + c];
				*p = *p + 7 <= 255 ? *p + 7 : *p - 7;
			}
	CHECK_INT(heatmap_area(screen, n, 1, 18, 62, &hm, &st, err, sizeof(err)), 0);
	CHECK(st.mean_diff > 6.0 && st.mean_diff < 7.5);
	CHECK(st.similarity < 0.92 && st.similarity > 0.85);
	heatmap_colour(7, want);
	/* the middle of the area: a plain shift of 7 */
	CHECK_INT(hm->px[(70 * 400 + 200) * 3], want[0]);
	CHECK_INT(hm->px[(70 * 400 + 200) * 3 + 1], want[1]);
	CHECK_INT(hm->px[(70 * 400 + 200) * 3 + 2], want[2]);
	image_free(hm);
	image_free(screen);
	needle_free(n);
}

TEST(heatmap_refuses_outside)
{
	struct needle *n = grub_needle("grub-menu.json");
	struct image *screen = grub_png("grub-menu.png"), *hm = NULL;
	char err[256];

	CHECK_INT(heatmap_area(screen, n, 2, 0, 0, &hm, NULL, err, sizeof(err)), ERR_NOT_FOUND);
	CHECK_INT(heatmap_area(screen, n, 1, 700, 62, &hm, NULL, err, sizeof(err)), ERR_INVALID);
	CHECK(strstr(err, "outside"));
	CHECK_INT(heatmap_area(screen, n, 1, -1, 62, &hm, NULL, err, sizeof(err)), ERR_INVALID);
	CHECK(hm == NULL);
	image_free(screen);
	needle_free(n);
}
