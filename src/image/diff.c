/* SPDX-License-Identifier: MIT */
/* diff.c - the failure explanation of a match (see diff.h): one line of
 * area similarities and a heat-map image of grey differences. Pure image
 * and text work on a match result; the matcher's numbers are taken as
 * they are, never computed again here. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "image/diff.h"
#include "image/heatmap.h"
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
	struct image *img;
	size_t i, k;

	*out = NULL;
	img = image_clone(screen);
	if (!img)
		return ERR_NOMEM;
	for (i = 0; i < (size_t)img->w * (size_t)img->h * 3; i++)
		img->px[i] = (uint8_t)(img->px[i] / 4);
	/* Each match area's heat-map (heatmap.c: the matcher's grey and blur)
	 * where the matcher placed it; an area it cannot draw is left dimmed. */
	for (k = 0; k < res->nareas; k++) {
		const struct match_area_result *a = &res->areas[k];
		struct image *tile = NULL;
		int rc = heatmap_area(screen, n, k, a->x, a->y, &tile, NULL, err, errlen);
		int y;

		if (rc == ERR_NOMEM || (rc && rc != ERR_INVALID && rc != ERR_NOT_FOUND)) {
			needle_image_drop(n);
			image_free(img);
			return rc;
		}
		for (y = 0; !rc && y < tile->h; y++)
			memcpy(img->px + ((size_t)(a->y + y) * (size_t)img->w + (size_t)a->x) * 3,
			       tile->px + (size_t)y * (size_t)tile->w * 3, (size_t)tile->w * 3);
		image_free(tile);
	}
	/* Frames last, so no area's heat covers another's frame. */
	for (k = 0; k < res->nareas; k++)
		if (needle_match_area(n, k))
			frame_rect(img, res->areas[k].x, res->areas[k].y, res->areas[k].w, res->areas[k].h,
				   res->areas[k].ok);
	needle_image_drop(n); /* decoded for the heat-maps only: the matcher has its areas */
	*out = img;
	return 0;
}
