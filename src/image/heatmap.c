/* SPDX-License-Identifier: MIT */
/* heatmap.c - difference heat-maps of needle areas (see heatmap.h): the
 * grey and blur steps are the matcher's own (image/match.h building
 * blocks), so the figures are what the matcher compares; only the
 * colouring is new. Owns nothing beyond the image it returns. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "image/heatmap.h"
#include "image/match.h"
#include "util/err.h"
#include "util/banned.h" /* last: after every system header */

/* The ramp's stops: violet (a small difference), red, yellow (full scale). */
static const uint8_t ramp[3][3] = { { 70, 30, 140 }, { 225, 50, 50 }, { 255, 235, 70 } };

void heatmap_colour(int d, uint8_t rgb[3])
{
	double t = d >= HEATMAP_FULL_SCALE ? 1.0 : d <= 0 ? 0.0 : (double)d / HEATMAP_FULL_SCALE;
	int seg = t < 0.5 ? 0 : 1, c;
	double f = t < 0.5 ? t * 2 : (t - 0.5) * 2;

	for (c = 0; c < 3; c++)
		rgb[c] = (uint8_t)(ramp[seg][c] + (ramp[seg + 1][c] - ramp[seg][c]) * f + 0.5);
}

static int inside(int x, int y, int w, int h, int iw, int ih)
{
	return x >= 0 && y >= 0 && w > 0 && h > 0 && (long)x + w <= iw && (long)y + h <= ih;
}

/* Grey copy of img blurred inside [x, x + w) x [y, y + h); with exclude
 * areas of n painted green first (the screen's copy, as the matcher
 * paints it at the needle's coordinates). New buffer of img's size. */
static uint8_t *grey_blurred(const struct image *img, const struct needle *n, int x, int y, int w, int h)
{
	size_t bytes = (size_t)img->w * (size_t)img->h;
	uint8_t *grey = malloc(bytes), *blur = malloc(bytes);
	size_t i;

	if (!grey || !blur) {
		free(grey);
		free(blur);
		return NULL;
	}
	match_grey_image(img, grey);
	for (i = 0; n && i < n->nareas; i++) {
		const struct needle_area *a = &n->areas[i];
		int r;
		if (a->type != NEEDLE_AREA_EXCLUDE || !inside(a->x, a->y, a->w, a->h, img->w, img->h))
			continue;
		for (r = a->y; r < a->y + a->h; r++)
			memset(grey + (size_t)r * img->w + a->x, match_grey(0, 255, 0), (size_t)a->w);
	}
	match_blur_rect(grey, blur, img->w, img->h, x, y, x + w, y + h);
	free(grey);
	return blur;
}

int heatmap_area(const struct image *screen, struct needle *n, size_t k, int sx, int sy,
		 struct image **out, struct heatmap_stats *st, char *err, size_t errlen)
{
	const struct needle_area *a = needle_match_area(n, k);
	const struct image *nimg;
	uint8_t *sb = NULL, *nb = NULL;
	struct image *img = NULL;
	uint64_t ssd = 0, sum = 0;
	int rc, i, j, maxd = 0;

	*out = NULL;
	if (!a) {
		snprintf(err, errlen, "needle '%s' has no match area %zu", n->name, k);
		return ERR_NOT_FOUND;
	}
	rc = needle_image(n, &nimg, err, errlen);
	if (rc)
		return rc;
	if (!inside(a->x, a->y, a->w, a->h, nimg->w, nimg->h) ||
	    !inside(sx, sy, a->w, a->h, screen->w, screen->h)) {
		snprintf(err, errlen, "needle '%s' area %zu (%dx%d) lies outside its %dx%d image or, at %d,%d, "
			 "outside the %dx%d screen", n->name, k, a->w, a->h, nimg->w, nimg->h, sx, sy,
			 screen->w, screen->h);
		return ERR_INVALID;
	}
	sb = grey_blurred(screen, n, sx, sy, a->w, a->h);
	nb = grey_blurred(nimg, NULL, a->x, a->y, a->w, a->h); /* the needle's PNG comes painted */
	img = image_new(a->w, a->h);
	if (!sb || !nb || !img) {
		snprintf(err, errlen, "out of memory for a %dx%d heat-map", a->w, a->h);
		rc = ERR_NOMEM;
		goto out;
	}
	for (j = 0; j < a->h; j++) {
		const uint8_t *srow = sb + (size_t)(sy + j) * screen->w + sx;
		const uint8_t *nrow = nb + (size_t)(a->y + j) * nimg->w + a->x;
		const uint8_t *spx = screen->px + ((size_t)(sy + j) * screen->w + sx) * 3;
		uint8_t *o = img->px + (size_t)j * a->w * 3;
		for (i = 0; i < a->w; i++, o += 3, spx += 3) {
			int d = srow[i] > nrow[i] ? srow[i] - nrow[i] : nrow[i] - srow[i];
			ssd += (uint64_t)(d * d);
			sum += (uint64_t)d;
			if (d > maxd)
				maxd = d;
			if (d <= 1) {
				/* the screen dimmed: where the area lies, what agrees */
				uint8_t g = (uint8_t)(match_grey(spx[0], spx[1], spx[2]) / 4);
				o[0] = o[1] = o[2] = g;
			} else {
				heatmap_colour(d, o);
			}
		}
	}
	if (st) {
		uint64_t np = (uint64_t)a->w * (uint64_t)a->h;
		st->similarity = match_similarity(ssd, np);
		st->max_diff = maxd;
		st->mean_diff = (double)sum / (double)np;
	}
	*out = img;
	img = NULL;
	rc = 0;
out:
	image_free(img);
	free(sb);
	free(nb);
	return rc;
}
