/* SPDX-License-Identifier: MIT */
/* test_needle_show.c - image/draw: outlines, click-point crosses, a
 * needle's areas drawn on its PNG and the crop of one area, on the real
 * needles of examples/grub (the runner starts in the repository root). */
#include <stdio.h>
#include "unit.h"
#include "image/draw.h"
#include "image/needle.h"
#include "util/err.h"

#define GRUB_NEEDLES "examples/grub/needles"

static const uint8_t *px(const struct image *img, int x, int y)
{
	return img->px + ((size_t)y * img->w + x) * 3;
}

static int is(const struct image *img, int x, int y, struct draw_rgb c)
{
	const uint8_t *p = px(img, x, y);
	return p[0] == c.r && p[1] == c.g && p[2] == c.b;
}

static struct needle *grub_needle(const char *file, struct image **png)
{
	struct needle *n = NULL;
	char err[512];

	if (needle_load(GRUB_NEEDLES, file, &n, err, sizeof(err)))
		FAIL("load %s: %s", file, err);
	if (image_load_png(n->png_path, png, err, sizeof(err)))
		FAIL("png: %s", err);
	return n;
}

TEST(draw_outline_covers_the_border_only)
{
	struct image *img = image_new(20, 10);
	struct draw_rgb red = { 255, 0, 0 }, black = { 0, 0, 0 };

	draw_outline(img, 2, 3, 8, 5, 2, red);
	/* Corners and edges of the rectangle 2..9 x 3..7, two pixels deep. */
	CHECK(is(img, 2, 3, red) && is(img, 9, 3, red) && is(img, 2, 7, red) && is(img, 9, 7, red));
	CHECK(is(img, 3, 4, red) && is(img, 8, 6, red));
	/* Inside the outline and just outside it: untouched. */
	CHECK(is(img, 4, 5, black) && is(img, 7, 5, black));
	CHECK(is(img, 1, 3, black) && is(img, 10, 3, black) && is(img, 2, 2, black) && is(img, 2, 8, black));
	/* Clipped at the image's edges, without writing outside it (ASan). */
	draw_outline(img, 15, 8, 10, 10, 1, red);
	CHECK(is(img, 15, 8, red) && is(img, 19, 8, red) && is(img, 15, 9, red));
	/* Its top edge is row 8, its left edge column 15; the rest is cut off. */
	CHECK(is(img, 16, 9, black) && is(img, 19, 9, black));
	draw_outline(img, -5, -5, 3, 3, 1, red);
	image_free(img);
}

TEST(draw_cross_is_centred)
{
	struct image *img = image_new(21, 21);
	struct draw_rgb m = DRAW_CLICK_COLOUR, black = { 0, 0, 0 };

	draw_cross(img, 10, 10, 4, 3, m);
	CHECK(is(img, 10, 10, m) && is(img, 6, 10, m) && is(img, 14, 10, m) && is(img, 10, 6, m) && is(img, 10, 14, m));
	CHECK(is(img, 9, 9, m) && is(img, 11, 11, m)); /* 3 wide around the centre */
	CHECK(is(img, 5, 10, black) && is(img, 15, 10, black) && is(img, 10, 5, black) && is(img, 7, 7, black));
	draw_cross(img, 0, 20, 6, 3, m); /* clipped */
	CHECK(is(img, 0, 20, m));
	image_free(img);
}

TEST(draw_click_point_center_and_offset)
{
	struct needle_area a = { .x = 10, .y = 20, .w = 31, .h = 8 };
	int x = -1, y = -1;

	CHECK_INT(draw_click_point(&a, &x, &y), ERR_NOT_FOUND);
	a.has_click_point = 1;
	a.click_center = 1;
	CHECK_INT(draw_click_point(&a, &x, &y), 0);
	CHECK_INT(x, 25);
	CHECK_INT(y, 24);
	a.click_center = 0;
	a.click_x = 3;
	a.click_y = 5;
	CHECK_INT(draw_click_point(&a, &x, &y), 0);
	CHECK_INT(x, 13);
	CHECK_INT(y, 25);
}

/* grub-menu: two match areas, outlined green; the rest of the PNG intact. */
TEST(draw_needle_areas_on_grub_menu)
{
	struct image *png = NULL, *img;
	struct needle *n = grub_needle("grub-menu.json", &png);
	struct draw_rgb green = draw_area_colour(NEEDLE_AREA_MATCH);
	const struct needle_area *a0 = &n->areas[0], *a1 = &n->areas[1];
	size_t i, differ = 0;

	CHECK_INT(n->nareas, 2);
	img = draw_needle_areas(png, n);
	CHECK(img && img->w == png->w && img->h == png->h);
	CHECK(is(img, a0->x, a0->y, green) && is(img, a0->x + a0->w - 1, a0->y + a0->h - 1, green));
	CHECK(is(img, a1->x + 1, a1->y + a1->h / 2, green) && is(img, a1->x + a1->w / 2, a1->y + a1->h - 2, green));
	/* Only border pixels changed: at most the two outlines' 2-pixel rings. */
	for (i = 0; i < (size_t)img->w * img->h * 3; i += 3)
		differ += memcmp(img->px + i, png->px + i, 3) != 0;
	CHECK(differ > 0);
	CHECK(differ <= (size_t)(2 * 2 * (a0->w + a0->h) + 2 * 2 * (a1->w + a1->h)));
	/* Inside an area the pixels are the needle's own. */
	CHECK(!memcmp(px(img, a1->x + 10, a1->y + 10), px(png, a1->x + 10, a1->y + 10), 3));
	image_free(img);
	image_free(png);
	needle_free(n);
}

/* grub-echo: a match and an ocr area; the ocr outline is blue. */
TEST(draw_needle_areas_colours_by_type)
{
	struct image *png = NULL, *img;
	struct needle *n = grub_needle("grub-echo.json", &png);
	size_t i;

	img = draw_needle_areas(png, n);
	CHECK(img != NULL);
	for (i = 0; i < n->nareas; i++) {
		const struct needle_area *a = &n->areas[i];
		/* The bottom-right corner: drawn last for the later area. */
		if (i == n->nareas - 1)
			CHECK(is(img, a->x + a->w - 1, a->y + a->h - 1, draw_area_colour(a->type)));
	}
	CHECK_INT(n->areas[1].type, NEEDLE_AREA_OCR);
	CHECK(is(img, n->areas[1].x + n->areas[1].w - 1, n->areas[1].y + 5, draw_area_colour(NEEDLE_AREA_OCR)));
	image_free(img);
	image_free(png);
	needle_free(n);
}

/* The crop of each area of every GRUB needle is exactly the area's size
 * and its pixels are the needle PNG's at the area. */
TEST(draw_area_crop_real_needles)
{
	static const char *files[] = { "grub-menu.json", "grub-cmdline.json", "grub-echo.json", "grub-menu-memtest.json" };
	size_t f, i;
	int y;

	for (f = 0; f < sizeof(files) / sizeof(files[0]); f++) {
		struct image *png = NULL;
		struct needle *n = grub_needle(files[f], &png);
		for (i = 0; i < n->nareas; i++) {
			const struct needle_area *a = &n->areas[i];
			struct image *c = NULL;
			char err[256];
			CHECK_INT(draw_area_crop(png, a, i, &c, err, sizeof(err)), 0);
			CHECK_INT(c->w, a->w);
			CHECK_INT(c->h, a->h);
			for (y = 0; y < a->h; y++)
				CHECK(!memcmp(c->px + (size_t)y * c->w * 3, px(png, a->x, a->y + y), (size_t)a->w * 3));
			image_free(c);
		}
		image_free(png);
		needle_free(n);
	}
}

TEST(draw_area_crop_outside_is_an_error)
{
	struct image *png = image_new(100, 50), *c = (struct image *)1;
	struct needle_area a = { .x = 90, .y = 0, .w = 20, .h = 10 };
	char err[256] = "";

	CHECK_INT(draw_area_crop(png, &a, 3, &c, err, sizeof(err)), ERR_INVALID);
	CHECK(c == NULL);
	CHECK_STR(err, "area 3 (90,0,20,10) lies outside the 100x50 image");
	a.x = 80;
	CHECK_INT(draw_area_crop(png, &a, 3, &c, err, sizeof(err)), 0);
	CHECK(c && c->w == 20 && c->h == 10);
	image_free(c);
	a.y = -1;
	CHECK_INT(draw_area_crop(png, &a, 0, &c, err, sizeof(err)), ERR_INVALID);
	image_free(png);
}
