/* SPDX-License-Identifier: MIT */
/* draw.c - drawing on RGB images for people to look at (vigil needle show,
 * the docs' pictures): outlines, click-point crosses, a needle's areas and
 * their crops. Works on caller-owned images; no matching logic here. */
#include <stdio.h>
#include "image/draw.h"
#include "util/err.h"
#include "util/banned.h" /* last: after every system header */

const struct draw_rgb DRAW_CLICK_COLOUR = { 255, 0, 255 };

struct draw_rgb draw_area_colour(enum needle_area_type type)
{
	static const struct draw_rgb match = { 0, 255, 0 }, exclude = { 255, 0, 0 }, ocr = { 0, 96, 255 };

	switch (type) {
	case NEEDLE_AREA_EXCLUDE: return exclude;
	case NEEDLE_AREA_OCR: return ocr;
	default: return match;
	}
}

void draw_outline(struct image *img, int x, int y, int w, int h, int thick, struct draw_rgb c)
{
	if (w <= 0 || h <= 0 || thick <= 0)
		return;
	if (thick * 2 >= w || thick * 2 >= h) {
		image_fill_rect(img, x, y, w, h, c.r, c.g, c.b);
		return;
	}
	image_fill_rect(img, x, y, w, thick, c.r, c.g, c.b);
	image_fill_rect(img, x, y + h - thick, w, thick, c.r, c.g, c.b);
	image_fill_rect(img, x, y + thick, thick, h - 2 * thick, c.r, c.g, c.b);
	image_fill_rect(img, x + w - thick, y + thick, thick, h - 2 * thick, c.r, c.g, c.b);
}

void draw_cross(struct image *img, int x, int y, int arm, int thick, struct draw_rgb c)
{
	if (arm < 0 || thick <= 0)
		return;
	image_fill_rect(img, x - arm, y - thick / 2, 2 * arm + 1, thick, c.r, c.g, c.b);
	image_fill_rect(img, x - thick / 2, y - arm, thick, 2 * arm + 1, c.r, c.g, c.b);
}

int draw_click_point(const struct needle_area *a, int *x, int *y)
{
	if (!a->has_click_point)
		return ERR_NOT_FOUND;
	if (a->click_center) {
		*x = a->x + a->w / 2;
		*y = a->y + a->h / 2;
	} else {
		*x = a->x + a->click_x;
		*y = a->y + a->click_y;
	}
	return 0;
}

struct image *draw_needle_areas(const struct image *png, const struct needle *n)
{
	struct image *img = image_clone(png);
	size_t i;
	int cx, cy;

	if (!img)
		return NULL;
	for (i = 0; i < n->nareas; i++) {
		const struct needle_area *a = &n->areas[i];
		draw_outline(img, a->x, a->y, a->w, a->h, 2, draw_area_colour(a->type));
	}
	/* Marks last, so that no outline hides them. */
	for (i = 0; i < n->nareas; i++)
		if (!draw_click_point(&n->areas[i], &cx, &cy))
			draw_cross(img, cx, cy, 6, 3, DRAW_CLICK_COLOUR);
	return img;
}

int draw_area_crop(const struct image *png, const struct needle_area *a, size_t index,
		   struct image **out, char *err, size_t errlen)
{
	*out = NULL;
	if (a->x < 0 || a->y < 0 || a->w <= 0 || a->h <= 0 ||
	    a->x > png->w - a->w || a->y > png->h - a->h) {
		err_set(err, errlen, "area %zu (%d,%d,%d,%d) lies outside the %dx%d image",
			index, a->x, a->y, a->w, a->h, png->w, png->h);
		return ERR_INVALID;
	}
	*out = image_crop(png, a->x, a->y, a->w, a->h);
	return *out ? 0 : ERR_NOMEM;
}
