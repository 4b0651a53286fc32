/* SPDX-License-Identifier: MIT */
/* diff.h - why a needle did not match, for people: the failure line
 * (each match area's similarity against its required level) and a
 * difference heat-map of the screen against the needle over its areas.
 * Reads match results; never matches anything itself. */
#ifndef VIGIL_DIFF_H
#define VIGIL_DIFF_H

#include <stddef.h>
#include "image/image.h"
#include "image/match.h"

/* The best candidate in one line, every match area with its needle
 * position, similarity (whole percent, rounded down as the step JSON has
 * it) and required level:
 *   best NAME: area X,Y,W,H 83 % < 96 %, area X,Y,W,H 100 % >= 96 %
 * Truncated to len (always terminated). Returns buf. */
const char *diff_describe(const struct match_result *res, char *buf, size_t len);

/* A copy of screen, dimmed to a quarter, with each match area of res
 * (at the position the matcher found it) replaced by its heatmap_area
 * (image/heatmap.h: the grey difference after the matcher's blur, the
 * screen dimmed where they agree, violet to yellow as they differ,
 * exclude areas painted alike on both sides); an area that cannot be
 * drawn there stays dimmed. A frame around each area, green when it
 * passed, magenta when it failed. Decodes n's image and lets it go
 * again. *out is the caller's (image_free).
 * 0, ERR_NOMEM, or needle_image's error (err filled). */
int diff_image(const struct image *screen, struct needle *n, const struct match_result *res,
	       struct image **out, char *err, size_t errlen);

#endif
