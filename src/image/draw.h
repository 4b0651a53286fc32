/* SPDX-License-Identifier: MIT */
/* draw.h - drawing on RGB images for people to look at: rectangle
 * outlines, click-point marks, a needle's areas on its PNG and the crop of
 * one area. Never used for matching. No global state. */
#ifndef VIGIL_DRAW_H
#define VIGIL_DRAW_H

#include <stdint.h>
#include "image/image.h"
#include "image/needle.h"

struct draw_rgb {
	uint8_t r, g, b;
};

/* The outline colour of an area type: match green, exclude red, ocr blue. */
struct draw_rgb draw_area_colour(enum needle_area_type type);
/* The colour of the click-point mark (magenta). */
extern const struct draw_rgb DRAW_CLICK_COLOUR;

/* Outline the rectangle x,y,w,h with lines `thick` pixels wide drawn on its
 * inside, so that the outline covers exactly the rectangle's border pixels;
 * clipped to the image. */
void draw_outline(struct image *img, int x, int y, int w, int h, int thick, struct draw_rgb c);

/* A plus sign centred on x,y: arms `arm` pixels long, `thick` wide (odd
 * values centre exactly); clipped to the image. */
void draw_cross(struct image *img, int x, int y, int arm, int thick, struct draw_rgb c);

/* The click point of area a in image coordinates: "center" is the area's
 * centre (w/2, h/2 from its top-left, as os-autoinst), otherwise the
 * area's top-left plus click_x, click_y. 0 when the area has one, else
 * ERR_NOT_FOUND. */
int draw_click_point(const struct needle_area *a, int *x, int *y);

/* A copy of png (the needle's own image) with every area of n outlined
 * in draw_area_colour, 2 pixels wide, and the click point marked. NULL on
 * OOM. */
struct image *draw_needle_areas(const struct image *png, const struct needle *n);

/* The pixels of area a of a needle image, exactly a->w x a->h. 0 and a new
 * image in *out; ERR_INVALID with err ("area I (x,y,w,h) lies outside the
 * WxH image") when the area does not lie wholly inside png; ERR_NOMEM. */
int draw_area_crop(const struct image *png, const struct needle_area *a, size_t index,
		   struct image **out, char *err, size_t errlen);

#endif
