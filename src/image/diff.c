/* SPDX-License-Identifier: MIT */
/* diff.c - the failure explanation of a match (see diff.h): one line of
 * area similarities and a heat-map image of grey differences. Pure image
 * and text work on a match result; the matcher's numbers are taken as
 * they are, never computed again here. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "image/diff.h"
#include "util/err.h"
#include "util/banned.h" /* last: after every system header */

const char *diff_describe(const struct match_result *res, char *buf, size_t len)
{
	size_t k, off;
	int w;

	if (len == 0)
		return buf;
	w = snprintf(buf, len, "best %s:", res->needle->name);
	off = w < 0 ? 0 : (size_t)w;
	if (res->nareas == 0 && off < len)
		snprintf(buf + off, len - off, " no match area");
	for (k = 0; k < res->nareas && off < len; k++) {
		const struct needle_area *na = needle_match_area(res->needle, k);
		const struct match_area_result *a = &res->areas[k];

		if (!na)
			break;
		w = snprintf(buf + off, len - off, "%s area %d,%d,%d,%d %d %% %s %g %%", k ? "," : "", na->x,
			     na->y, na->w, na->h, (int)floor(a->similarity * 100 + 1e-9), a->ok ? ">=" : "<",
			     na->match);
		if (w < 0)
			break;
		off += (size_t)w;
	}
	return buf;
}

static int in_exclude(const struct needle *n, int x, int y)
{
	size_t i;

	for (i = 0; i < n->nareas; i++) {
		const struct needle_area *e = &n->areas[i];
		if (e->type == NEEDLE_AREA_EXCLUDE && x >= e->x && x < e->x + e->w && y >= e->y &&
		    y < e->y + e->h)
			return 1;
	}
	return 0;
}

static uint8_t grey_at(const struct image *img, int x, int y)
{
	const uint8_t *p = img->px + ((size_t)y * (size_t)img->w + (size_t)x) * 3;

	return match_grey(p[0], p[1], p[2]);
}

/* Heat colour of difference d over the pixel's dimmed grey v: grey at
 * 0, red at half heat, yellow at full. */
static void heat(uint8_t *p, int v, int d)
{
	double t = d >= DIFF_FULL_HEAT ? 1.0 : (double)d / DIFF_FULL_HEAT;
	double r = v + (255 - v) * (t * 2 > 1 ? 1 : t * 2);
	double g = v * (1 - t) + (t * 2 > 1 ? 255 * (t * 2 - 1) : 0);

	p[0] = (uint8_t)lround(r);
	p[1] = (uint8_t)lround(g > 255 ? 255 : g);
	p[2] = (uint8_t)lround(v * (1 - t));
}

/* One pixel wide frame just outside the rectangle (clipped). */
static void frame_rect(struct image *img, int x, int y, int w, int h, int ok)
{
	uint8_t r = ok ? 0 : 255, g = ok ? 200 : 0, b = ok ? 0 : 255;

	image_fill_rect(img, x - 1, y - 1, w + 2, 1, r, g, b);
	image_fill_rect(img, x - 1, y + h, w + 2, 1, r, g, b);
	image_fill_rect(img, x - 1, y, 1, h, r, g, b);
	image_fill_rect(img, x + w, y, 1, h, r, g, b);
}

int diff_image(const struct image *screen, struct needle *n, const struct match_result *res,
	       struct image **out, char *err, size_t errlen)
{
	const struct image *nimg = NULL;
	struct image *img;
	size_t i, k;
	int rc;

	*out = NULL;
	rc = needle_image(n, &nimg, err, errlen);
	if (rc)
		return rc;
	img = image_clone(screen);
	if (!img) {
		needle_image_drop(n);
		return ERR_NOMEM;
	}
	for (i = 0; i < (size_t)img->w * (size_t)img->h * 3; i++)
		img->px[i] = (uint8_t)(img->px[i] / 4);
	for (k = 0; k < res->nareas; k++) {
		const struct needle_area *na = needle_match_area(n, k);
		const struct match_area_result *a = &res->areas[k];
		int x, y;

		if (!na || a->w <= 0 || a->h <= 0)
			continue;
		for (y = 0; y < a->h; y++) {
			int sy = a->y + y, ny = na->y + (int)((long)y * na->h / a->h);
			for (x = 0; x < a->w; x++) {
				int sx = a->x + x, nx = na->x + (int)((long)x * na->w / a->w), v, d = 0;
				uint8_t *p;

				if (sx < 0 || sy < 0 || sx >= img->w || sy >= img->h)
					continue;
				p = img->px + ((size_t)sy * (size_t)img->w + (size_t)sx) * 3;
				v = grey_at(screen, sx, sy) * 2 / 5;
				if (nx >= 0 && ny >= 0 && nx < nimg->w && ny < nimg->h && !in_exclude(n, nx, ny))
					d = abs((int)grey_at(screen, sx, sy) - (int)grey_at(nimg, nx, ny));
				heat(p, v, d);
			}
		}
	}
	/* Frames last, so no area's heat covers another's frame. */
	for (k = 0; k < res->nareas; k++)
		if (needle_match_area(n, k))
			frame_rect(img, res->areas[k].x, res->areas[k].y, res->areas[k].w, res->areas[k].h,
				   res->areas[k].ok);
	needle_image_drop(n);
	*out = img;
	return 0;
}
