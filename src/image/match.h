/* SPDX-License-Identifier: MIT */
/* match.h - the needle matcher, bit-compatible with os-autoinst's tinycv
 * (search_TEMPLATE + tinycv.pm search_): OpenCV BGR2GRAY, 3x3 Gaussian blur,
 * SSD search within the margin, minVec candidate rule, closest candidate,
 * similarity = clamp(0.9 + (40 - mse) / 380, 0, 1). Exact but fast: the
 * screen is prepared once per frame (grey rows as the blur needs them),
 * needle areas once per needle, and the search prunes only positions that
 * provably cannot be candidates: the centre first (tinycv's exact hit),
 * then positions in blocks of up to 128 whose SSDs come from one integer
 * correlation (AVX-512 VNNI, or SSE4.1/AVX2 per position; picked at run
 * time, all giving the same integers) with early exit once every partial
 * sum exceeds the best SSD so far, and mean/deviation lower bounds that
 * skip positions outright. match__search_ref is the plain exhaustive
 * search the tests hold it to. Large searches split their first phase
 * over a small process-wide pool of threads (see match__threads); the
 * result never depends on the split. Not thread-safe per screen or per
 * needle (lazy caches); searches on different screens may run at once
 * (one of them has the pool, the others run on their caller's thread).
 *
 * tinycv's results depend on history, and so do ours, on purpose: each
 * tinycv Image caches one grey copy blurred inside a rectangle that grows
 * with every search (Image::prep in tinycv_impl.cc), and OpenCV rounds the
 * blur's halves differently for a part of the image than for all of it
 * (see match_blur_rect_submat). So a match_screen stands for one tinycv
 * screenshot object: match needles on it in the order os-autoinst searches
 * them (tinycv.pm search: the needle list in its given order; `vigil needle
 * match` uses name order, like its comparison test) and reuse it while
 * os-autoinst would reuse the same image (baseclass keeps last_image until
 * the screen changes). A needle with exclude areas is matched on a fresh
 * copy of the screen (search_ copies it), and each struct needle carries
 * the cache of its PNG across screens, like needle.pm's image cache (which
 * os-autoinst empties beyond 30 images; a reloaded needle starts afresh,
 * as a newly loaded struct needle does). */
#ifndef VIGIL_MATCH_H
#define VIGIL_MATCH_H

#include <stddef.h>
#include <stdint.h>
#include "image/image.h"
#include "image/needle.h"

/* os-autoinst's search ratios: margin search and whole-screen search. */
#define MATCH_RATIO_MARGIN 0.02
#define MATCH_RATIO_FULL   1.0

struct match_screen;

/* A screen to match needles against. img is borrowed and must outlive the
 * match_screen (and stay unchanged). Grey + blur are computed on first use
 * and shared by all needles. NULL on OOM. */
struct match_screen *match_screen_new(const struct image *img);
void match_screen_free(struct match_screen *s); /* NULL-safe */
/* Make s stand for a new screen img (borrowed, as for match_screen_new),
 * as a fresh match_screen would, keeping its buffers for reuse. img must
 * not be NULL or empty (then s is left as it was). */
void match_screen_reset(struct match_screen *s, const struct image *img);
/* The same for an img that equals the screen s stood for but in rows
 * [y0, y1) (same size): an area whose search window, and the row above
 * and below it, lie outside them gets the result it got there (the search
 * would give it again), without searching. */
void match_screen_reset_rows(struct match_screen *s, const struct image *img, int y0, int y1);

struct match_area_result {
	int x, y, w, h;      /* best position on the screen, area size */
	double similarity;   /* 0..1 */
	int ok;              /* similarity >= match/100 - threshold */
};

struct match_result {
	struct needle *needle;   /* borrowed */
	int ok;                  /* every match area ok */
	double error;            /* mean of (1 - similarity)^2 over match areas */
	size_t nareas;           /* one per needle area of type match, in order */
	struct match_area_result *areas;
};

/* Match needle n on screen s. search_ratio: 0.02 (margin search) or 1.0
 * (whole screen); threshold is subtracted from each area's required level
 * (0 for assert/check_screen). Fills *out (release with
 * match_result_release). 0, ERR_NOMEM, or the needle_image error when the
 * needle's PNG cannot be decoded (err gets the message; may be NULL). */
int match_needle_err(struct match_screen *s, struct needle *n, double search_ratio,
		     double threshold, struct match_result *out, char *err, size_t errlen);
int match_needle(struct match_screen *s, struct needle *n, double search_ratio,
		 double threshold, struct match_result *out);
void match_result_release(struct match_result *r);

/* Decode needle n's PNG and prepare its areas now rather than on its first
 * match (the results are the same). 0 or match_needle_err's errors. */
int match_needle_prepare(struct needle *n, char *err, size_t errlen);

/* os-autoinst's cmp_by_error_type_: ok first, then lower error, then the
 * workaround property, then name. */
void match_results_sort(struct match_result *r, size_t n);

/* ---- building blocks, exposed for tests and tools ---- */

/* tinycv's per-image preparation cache (Image::_prep_roi): the rectangle
 * of the grey image that is blurred. valid 0: nothing prepared yet. */
struct match__prep {
	int valid;
	int x, y, w, h;
};
/* Image::prep(roi): returns 1 when the rectangle had to grow (tinycv then
 * converts and blurs again), 0 when roi was already inside it. */
int match__prep_roi(struct match__prep *p, int img_w, int img_h, int x, int y, int w, int h);
/* Columns [p->x, end) of the prepared rectangle round halves to even, the
 * rest round them up; returns end (0 when the whole image is prepared). */
int match__prep_even_end(const struct match__prep *p, int img_w, int img_h);


/* OpenCV COLOR_BGR2GRAY for 8-bit pixels (fixed point, rounded). */
static inline uint8_t match_grey(uint8_t r, uint8_t g, uint8_t b)
{
	return (uint8_t)((r * 4899u + g * 9617u + b * 1868u + (1u << 13)) >> 14);
}
/* Grey conversion of a whole image into grey (w*h bytes). */
void match_grey_image(const struct image *img, uint8_t *grey);
/* OpenCV GaussianBlur 3x3, sigma 0, 8-bit bit-exact, BORDER_REFLECT_101 at
 * the image border, for rows/cols [x0,x1) x [y0,y1) of a w x h image;
 * src and dst must differ. */
void match_blur_rect(const uint8_t *src, uint8_t *dst, int w, int h,
		     int x0, int y0, int x1, int y1);
/* The same blur as OpenCV computes it in place on a sub-Mat of the image
 * (tinycv's prep of a part of the image): neighbours outside the rectangle
 * are read unblurred, halves round to even in the first 4*floor(width/4)
 * columns of the rectangle and up in the rest; the whole image rounds up. */
void match_blur_rect_submat(const uint8_t *src, uint8_t *dst, int w, int h,
			    int x0, int y0, int x1, int y1);
/* Similarity from an SSD over n pixels (os-autoinst's mapping). */
double match_similarity(uint64_t ssd, uint64_t n);

/* One area search on prepared (grey+blurred) data: scene is sw x sh, tpl is
 * w x h, (x, y) the area's position in needle coordinates (already
 * scaled), margin in pixels. Returns the similarity and the best position. */
double match__search(const uint8_t *scene, int sw, int sh, const uint8_t *tpl, int w, int h,
		     int x, int y, int margin, int *bx, int *by);
/* The same search done exhaustively (every SSD in full, minVec in float
 * step by step): the reference the tests hold match__search to. */
double match__search_ref(const uint8_t *scene, int sw, int sh, const uint8_t *tpl, int w, int h,
			 int x, int y, int margin, int *bx, int *by);
/* Threads a large search uses: 0 (the default) takes VIGIL_MATCH_THREADS
 * from the environment (read once), else the online CPUs, at most 8, and
 * splits only searches large enough to gain from it; n > 0 makes every
 * search of more than one row use n threads (tests set it). 1 is the
 * single-threaded search. At most MATCH_THREADS_MAX; where threads cannot
 * be started the search runs on its caller's thread alone. Set it only
 * while no search runs. */
#define MATCH_THREADS_MAX 16
extern int match__threads;

/* libstdc++'s std::sort applied to candidate points ordered by distance to
 * (ox, oy): returns the index of the element it puts first. */
size_t match__closest(const int *px, const int *py, size_t n, int ox, int oy);

#endif
