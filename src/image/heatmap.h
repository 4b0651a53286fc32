/* SPDX-License-Identifier: MIT */
/* heatmap.h - the difference heat-map of one needle area against a screen:
 * per pixel, the absolute difference of the two grey levels after the
 * matcher's own preprocessing (OpenCV's BGR2GRAY, the needle's exclude
 * areas painted green on both, 3x3 Gaussian blur), coloured. Explains a
 * failed check; the matcher itself never uses it. No global state. */
#ifndef VIGIL_HEATMAP_H
#define VIGIL_HEATMAP_H

#include <stddef.h>
#include "image/image.h"
#include "image/needle.h"

/* A grey difference at or above this is drawn at the ramp's end. */
#define HEATMAP_FULL_SCALE 48

struct heatmap_stats {
	double similarity;   /* os-autoinst's mapping of the area's SSD, 0..1 */
	int max_diff;        /* largest grey difference, 0..255 */
	double mean_diff;    /* mean grey difference */
};

/* The heat-map of match area k (0-based, counting match areas only, as a
 * result's "area" list does) of needle n, placed with its top-left at
 * (sx, sy) on screen. *out: a new image of the area's size (pixels that
 * differ by at most 1 show the screen dimmed, the others a ramp from
 * violet to yellow reaching its end at HEATMAP_FULL_SCALE). st may be NULL.
 * 0; ERR_NOT_FOUND (no match area k); ERR_INVALID (the area lies outside
 * the needle's image or, placed at (sx, sy), outside the screen); the
 * needle_image error (its PNG cannot be decoded); ERR_NOMEM. err gets a
 * message for every error. */
int heatmap_area(const struct image *screen, struct needle *n, size_t k, int sx, int sy,
		 struct image **out, struct heatmap_stats *st, char *err, size_t errlen);

/* The colour heatmap_area gives a grey difference d (0..255) above 1. */
void heatmap_colour(int d, uint8_t rgb[3]);

#endif
