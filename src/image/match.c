/* SPDX-License-Identifier: MIT */
/* match.c - needle matching as os-autoinst's tinycv does it, computed
 * exactly: tinycv's per-image prep cache and OpenCV's rounding of an in-place
 * sub-Mat blur, integer SSD (where OpenCV uses a float DFT), the minVec rule
 * in float as tinycv keeps it, libstdc++'s sort for the closest candidate.
 * The search prunes with proven lower bounds only, so it returns what an
 * exhaustive search returns. Owns the prepared screen and needle caches. */
#include <float.h>
#include <math.h>
#include <smmintrin.h>
#include <stdlib.h>
#include <string.h>
#include "image/match.h"
#include "util/err.h"

/* ---- grey and blur ---- */

void match_grey_image(const struct image *img, uint8_t *grey)
{
	size_t i, n = (size_t)img->w * (size_t)img->h;
	const uint8_t *p = img->px;

	for (i = 0; i < n; i++, p += 3)
		grey[i] = match_grey(p[0], p[1], p[2]);
}

static inline int reflect101(int i, int n)
{
	if (n == 1)
		return 0;
	if (i < 0)
		return -i;
	if (i >= n)
		return 2 * n - 2 - i;
	return i;
}

/* The [1 2 1] x [1 2 1] kernel is exact in OpenCV's fixed point, so every
 * output is t / 16 for the integer 3x3 weighted sum t; only the rounding of
 * the halves differs between OpenCV's code paths (see match.h): columns
 * [x0, even_end) round halves to even, the others round them up. */
static void blur_rows(const uint8_t *src, uint8_t *dst, int w, int h,
		      int x0, int y0, int x1, int y1, int even_end)
{
	uint16_t *v;
	int x, y, xe;

	if (x0 < 0)
		x0 = 0;
	if (y0 < 0)
		y0 = 0;
	if (x1 > w)
		x1 = w;
	if (y1 > h)
		y1 = h;
	if (x1 <= x0 || y1 <= y0)
		return;
	xe = even_end < x0 ? x0 : even_end > x1 ? x1 : even_end;
	v = malloc(sizeof(*v) * (size_t)(x1 - x0 + 2));
	if (!v) {
		/* Out of memory: the direct formula, pixel by pixel. */
		for (y = y0; y < y1; y++)
			for (x = x0; x < x1; x++) {
				int t = 0, dy, dx;
				for (dy = -1; dy <= 1; dy++)
					for (dx = -1; dx <= 1; dx++)
						t += (2 - (dy < 0 ? -dy : dy)) * (2 - (dx < 0 ? -dx : dx)) *
						     src[(size_t)reflect101(y + dy, h) * w + reflect101(x + dx, w)];
				dst[(size_t)y * w + x] = (uint8_t)(x < xe ? (t + 7 + ((t >> 4) & 1)) >> 4 : (t + 8) >> 4);
			}
		return;
	}
	for (y = y0; y < y1; y++) {
		const uint8_t *ra = src + (size_t)reflect101(y - 1, h) * w;
		const uint8_t *rb = src + (size_t)y * w;
		const uint8_t *rc = src + (size_t)reflect101(y + 1, h) * w;
		uint8_t *d = dst + (size_t)y * w;
		int xs = x0 - 1 < 0 ? 0 : x0 - 1, xz = x1 + 1 > w ? w : x1 + 1;
		uint16_t *vv = v + 1 - x0; /* vv[x] for x in [x0-1, x1] */

		for (x = xs; x < xz; x++)
			vv[x] = (uint16_t)(ra[x] + 2 * rb[x] + rc[x]);
		if (x0 == 0)
			vv[-1] = vv[reflect101(-1, w)];
		if (x1 == w)
			vv[w] = vv[reflect101(w, w)];
		for (x = x0; x < xe; x++) {
			unsigned t = (unsigned)vv[x - 1] + 2u * vv[x] + vv[x + 1];
			d[x] = (uint8_t)((t + 7 + ((t >> 4) & 1)) >> 4);
		}
		for (x = xe; x < x1; x++)
			d[x] = (uint8_t)(((unsigned)vv[x - 1] + 2u * vv[x] + vv[x + 1] + 8) >> 4);
	}
	free(v);
}

void match_blur_rect(const uint8_t *src, uint8_t *dst, int w, int h,
		     int x0, int y0, int x1, int y1)
{
	blur_rows(src, dst, w, h, x0, y0, x1, y1, x0);
}

void match_blur_rect_submat(const uint8_t *src, uint8_t *dst, int w, int h,
			    int x0, int y0, int x1, int y1)
{
	if (x0 <= 0 && y0 <= 0 && x1 >= w && y1 >= h) {
		blur_rows(src, dst, w, h, 0, 0, w, h, 0);
		return;
	}
	if (x0 < 0)
		x0 = 0;
	if (x1 > w)
		x1 = w;
	blur_rows(src, dst, w, h, x0, y0, x1, y1, x0 + ((x1 - x0) & ~3));
}

/* ---- tinycv's per-image preparation cache ---- */

/* Image::prep(roi) keeps one grey copy per image and the rectangle it has
 * blurred (_prep_roi). A roi inside that rectangle reuses it; any other roi
 * grows the rectangle to the bounding box of both (cv::Rect |=, where an
 * empty rectangle is replaced), takes the whole image once it covers half of
 * it, converts the whole image to grey afresh and blurs the rectangle in
 * place. Only pixels inside the rectangle are ever read afterwards. */
static int prep_contains(const struct match__prep *p, int x, int y, int w, int h)
{
	int x1, y1, x2, y2;

	/* (_prep_roi & roi) == roi, with cv::Rect &= (empty when disjoint) */
	x1 = p->x > x ? p->x : x;
	y1 = p->y > y ? p->y : y;
	x2 = p->x + p->w < x + w ? p->x + p->w : x + w;
	y2 = p->y + p->h < y + h ? p->y + p->h : y + h;
	if (x2 - x1 <= 0 || y2 - y1 <= 0)
		return w == 0 && h == 0 && x == 0 && y == 0;
	return x1 == x && y1 == y && x2 - x1 == w && y2 - y1 == h;
}

int match__prep_roi(struct match__prep *p, int img_w, int img_h, int x, int y, int w, int h)
{
	if (p->valid && prep_contains(p, x, y, w, h))
		return 0;
	if (p->w <= 0 || p->h <= 0) {
		p->x = x;
		p->y = y;
		p->w = w;
		p->h = h;
	} else if (w > 0 && h > 0) {
		int x1 = p->x < x ? p->x : x, y1 = p->y < y ? p->y : y;
		int x2 = p->x + p->w > x + w ? p->x + p->w : x + w;
		int y2 = p->y + p->h > y + h ? p->y + p->h : y + h;
		p->x = x1;
		p->y = y1;
		p->w = x2 - x1;
		p->h = y2 - y1;
	}
	if ((double)img_w * (double)img_h * 0.5 <= (double)p->w * (double)p->h) {
		p->x = p->y = 0;
		p->w = img_w;
		p->h = img_h;
	}
	p->valid = 1;
	return 1;
}

int match__prep_even_end(const struct match__prep *p, int img_w, int img_h)
{
	if (p->x <= 0 && p->y <= 0 && p->x + p->w >= img_w && p->y + p->h >= img_h)
		return 0;
	return p->x + (p->w & ~3);
}

/* Blur of grey as tinycv's cache leaves it after prep(roi); dst keeps its
 * contents when the cached rectangle already covers roi. */
static void prep_apply(struct match__prep *p, const uint8_t *grey, uint8_t *dst, int img_w, int img_h,
		       int x, int y, int w, int h)
{
	if (!match__prep_roi(p, img_w, img_h, x, y, w, h))
		return;
	blur_rows(grey, dst, img_w, img_h, p->x, p->y, p->x + p->w, p->y + p->h,
		  match__prep_even_end(p, img_w, img_h));
}

double match_similarity(uint64_t ssd, uint64_t n)
{
	double mse = (double)ssd / (double)n;
	double sim = .9 + (40 - mse) / 380;

	if (sim < 0)
		sim = 0;
	if (sim > 1)
		sim = 1;
	return sim;
}

/* ---- SSD kernels ---- */

static inline uint32_t row_ssd(const uint8_t *a, const uint8_t *b, int n)
{
	__m128i acc = _mm_setzero_si128(), z = _mm_setzero_si128();
	uint32_t s;
	int i = 0;

	for (; i + 16 <= n; i += 16) {
		__m128i va = _mm_loadu_si128((const __m128i *)(const void *)(a + i));
		__m128i vb = _mm_loadu_si128((const __m128i *)(const void *)(b + i));
		__m128i dl = _mm_sub_epi16(_mm_unpacklo_epi8(va, z), _mm_unpacklo_epi8(vb, z));
		__m128i dh = _mm_sub_epi16(_mm_unpackhi_epi8(va, z), _mm_unpackhi_epi8(vb, z));
		acc = _mm_add_epi32(acc, _mm_madd_epi16(dl, dl));
		acc = _mm_add_epi32(acc, _mm_madd_epi16(dh, dh));
	}
	if (i + 8 <= n) {
		__m128i va = _mm_loadl_epi64((const __m128i *)(const void *)(a + i));
		__m128i vb = _mm_loadl_epi64((const __m128i *)(const void *)(b + i));
		__m128i dl = _mm_sub_epi16(_mm_unpacklo_epi8(va, z), _mm_unpacklo_epi8(vb, z));
		acc = _mm_add_epi32(acc, _mm_madd_epi16(dl, dl));
		i += 8;
	}
	acc = _mm_add_epi32(acc, _mm_shuffle_epi32(acc, 0x4e));
	acc = _mm_add_epi32(acc, _mm_shuffle_epi32(acc, 0xb1));
	s = (uint32_t)_mm_cvtsi128_si32(acc);
	for (; i < n; i++) {
		int d = (int)a[i] - (int)b[i];
		s += (uint32_t)(d * d);
	}
	return s;
}

/* SSD of the template at window position (px, py); gives up as soon as
 * the partial sum exceeds bound and returns a value > bound then. */
static inline int64_t ssd_at(const uint8_t *scene, int sw, const uint8_t *tpl, int w, int h,
			     int px, int py, int64_t bound)
{
	const uint8_t *s = scene + (size_t)py * sw + px;
	int64_t acc = 0;
	int j;

	for (j = 0; j < h; j++) {
		acc += row_ssd(s + (size_t)j * sw, tpl + (size_t)j * w, w);
		if (acc > bound)
			return acc;
	}
	return acc;
}

/* Largest integer s with (float)s <= b (b finite, >= 0). */
static int64_t float_floor_bound(float b)
{
	double lo, hi;
	int64_t s;

	if (b >= 9.0e18f)
		return INT64_MAX;
	lo = (double)b;
	hi = (double)nextafterf(b, FLT_MAX);
	s = (int64_t)floor((lo + hi) / 2);
	while (s > 0 && (float)s > b)
		s--;
	while ((float)(s + 1) <= b && s < INT64_MAX)
		s++;
	return s;
}

/* ---- one area search ---- */

double match__search(const uint8_t *scene, int sw, int sh, const uint8_t *tpl, int w, int h,
		     int x, int y, int margin, int *bx, int *by)
{
	int wx0, wy0, wx1, wy1, rw, rh, cx, cy, i, j, k;
	int64_t *val = NULL, *is = NULL, *iq = NULL, best, sse0, thr;
	int *lx = NULL, *ly = NULL;
	size_t nl = 0, capl = 0, npos, pick;
	uint64_t N = (uint64_t)w * (uint64_t)h, tsum = 0, tsq = 0;
	double cT, sim = 0;
	float min0, gmin;
	int have_center, reset;

	*bx = 0;
	*by = 0;
	if (x < 0 || y < 0 || (long)y + h > sh || (long)x + w > sw)
		return 0;
	wx0 = x - margin < 0 ? 0 : x - margin;
	wy0 = y - margin < 0 ? 0 : y - margin;
	wx1 = (long)x + w + margin > sw ? sw : x + w + margin;
	wy1 = (long)y + h + margin > sh ? sh : y + h + margin;
	rw = wx1 - wx0 - w + 1;
	rh = wy1 - wy0 - h + 1;
	if (rw <= 0 || rh <= 0)
		return 0;
	cx = x - wx0;
	cy = y - wy0;
	npos = (size_t)rw * (size_t)rh;

	/* Exact hit at the original position: tinycv's fast path. */
	have_center = cx < rw && cy < rh;
	sse0 = have_center ? ssd_at(scene, sw, tpl, w, h, x, y, INT64_MAX) : INT64_MAX;
	if (sse0 == 0) {
		*bx = x;
		*by = y;
		return 1;
	}

	val = malloc(npos * sizeof(*val));
	is = malloc((size_t)(wx1 - wx0 + 1) * (size_t)(wy1 - wy0 + 1) * sizeof(*is));
	iq = malloc((size_t)(wx1 - wx0 + 1) * (size_t)(wy1 - wy0 + 1) * sizeof(*iq));
	if (!val || !is || !iq)
		goto out;
	/* Integral images of the window for the mean/deviation lower bound. */
	{
		int iw = wx1 - wx0 + 1;
		for (i = 0; i < iw; i++)
			is[i] = iq[i] = 0;
		for (j = 1; j <= wy1 - wy0; j++) {
			const uint8_t *r = scene + (size_t)(wy0 + j - 1) * sw + wx0;
			int64_t rs = 0, rq = 0;
			is[(size_t)j * iw] = iq[(size_t)j * iw] = 0;
			for (i = 1; i < iw; i++) {
				rs += r[i - 1];
				rq += (int64_t)r[i - 1] * r[i - 1];
				is[(size_t)j * iw + i] = is[(size_t)(j - 1) * iw + i] + rs;
				iq[(size_t)j * iw + i] = iq[(size_t)(j - 1) * iw + i] + rq;
			}
		}
	}
	for (k = 0; k < w * h; k++) {
		tsum += tpl[k];
		tsq += (uint64_t)tpl[k] * tpl[k];
	}
	cT = (double)tsq - (double)tsum * (double)tsum / (double)N;
	cT = cT > 0 ? sqrt(cT) : 0;

	/* Phase A: the exact minimum SSD. Every position gets either its exact
	 * SSD (val >= 0) or a proven lower bound lb that exceeded the bound at
	 * the time (val = -lb - 1). */
	best = sse0;
	{
		int iw = wx1 - wx0 + 1;
		for (j = 0; j < rh; j++) {
			for (i = 0; i < rw; i++) {
				size_t p = (size_t)j * rw + i;
				int64_t A, B, v;
				double d, cS, lb;
				if (have_center && i == cx && j == cy) {
					val[p] = sse0;
					continue;
				}
				A = is[(size_t)(j + h) * iw + i + w] - is[(size_t)j * iw + i + w] -
				    is[(size_t)(j + h) * iw + i] + is[(size_t)j * iw + i];
				B = iq[(size_t)(j + h) * iw + i + w] - iq[(size_t)j * iw + i + w] -
				    iq[(size_t)(j + h) * iw + i] + iq[(size_t)j * iw + i];
				d = (double)(A - (int64_t)tsum);
				cS = (double)B - (double)A * (double)A / (double)N;
				cS = cS > 0 ? sqrt(cS) : 0;
				lb = d * d / (double)N + (cS - cT) * (cS - cT);
				/* Rounding margin: a bound must never exceed the truth. */
				lb = lb * (1 - 1e-9) - 1;
				if (lb > (double)best) {
					val[p] = -(int64_t)lb - 1;
					continue;
				}
				v = ssd_at(scene, sw, tpl, w, h, wx0 + i, wy0 + j, best);
				if (v > best) {
					val[p] = -v - 1;
					continue;
				}
				val[p] = v;
				best = v;
			}
		}
	}

	/* minVec as tinycv runs it, in float: min0 = (float)sse0 + 10; a value
	 * v with v + 10 < min restarts the list. The last restart is at the
	 * first position (row-major) where (float)v + 10 reaches its minimum. */
	min0 = have_center ? (float)sse0 + 10.0f : FLT_MAX;
	gmin = (float)best + 10.0f;
	reset = gmin < min0;
	thr = float_floor_bound(reset ? gmin : min0);

	/* Phase B: every position with (float)SSD <= the final bound, in scan
	 * order. */
	for (j = 0; j < rh; j++) {
		for (i = 0; i < rw; i++) {
			size_t p = (size_t)j * rw + i;
			int64_t v = val[p];
			if (v < 0) {
				if (-v - 1 > thr)
					continue;
				v = ssd_at(scene, sw, tpl, w, h, wx0 + i, wy0 + j, thr);
				val[p] = v;
			}
			if (v > thr)
				continue;
			if (nl == capl) {
				size_t nc = capl ? capl * 2 : 64;
				int *nx = realloc(lx, nc * sizeof(*lx)), *ny;
				if (!nx)
					goto out;
				lx = nx;
				ny = realloc(ly, nc * sizeof(*ly));
				if (!ny)
					goto out;
				ly = ny;
				capl = nc;
			}
			/* Positions before the last restart are dropped. */
			if (reset && nl == 0 && (float)v + 10.0f > gmin)
				continue;
			lx[nl] = i;
			ly[nl] = j;
			nl++;
		}
	}
	if (nl == 0)
		goto out;
	/* SortByClose(x, y) measures from the area's screen position, but
	 * minVec's points are relative to the window: tinycv compares the two
	 * as they are, and so do we. */
	pick = match__closest(lx, ly, nl, x, y);
	*bx = wx0 + lx[pick];
	*by = wy0 + ly[pick];
	{
		int64_t v = val[(size_t)ly[pick] * rw + lx[pick]];
		if (v < 0)
			v = ssd_at(scene, sw, tpl, w, h, *bx, *by, INT64_MAX);
		sim = match_similarity((uint64_t)v, N);
	}
out:
	free(val);
	free(is);
	free(iq);
	free(lx);
	free(ly);
	return sim;
}

/* ---- prepared screens ---- */

struct match_screen {
	const struct image *img;
	uint8_t *grey;            /* grey of the screen, lazily */
	uint8_t *blur;            /* the screen as tinycv's cache holds it */
	struct match__prep st;    /* its prepared rectangle */
	uint8_t *xgrey;           /* scratch: grey with exclude areas painted */
	uint8_t *xblur;           /* scratch: the painted copy's cache */
};

struct match_screen *match_screen_new(const struct image *img)
{
	struct match_screen *s;

	if (!img || img->w <= 0 || img->h <= 0)
		return NULL;
	s = calloc(1, sizeof(*s));
	if (s)
		s->img = img;
	return s;
}

void match_screen_free(struct match_screen *s)
{
	if (!s)
		return;
	free(s->grey);
	free(s->blur);
	free(s->xgrey);
	free(s->xblur);
	free(s);
}

static int screen_grey(struct match_screen *s)
{
	size_t n = (size_t)s->img->w * (size_t)s->img->h;

	if (s->blur)
		return 0;
	s->grey = malloc(n);
	s->blur = malloc(n);
	if (!s->grey || !s->blur) {
		free(s->grey);
		free(s->blur);
		s->grey = s->blur = NULL;
		return ERR_NOMEM;
	}
	match_grey_image(s->img, s->grey);
	return 0;
}

static int needle_has_exclude(const struct needle *n)
{
	size_t i;

	for (i = 0; i < n->nareas; i++)
		if (n->areas[i].type == NEEDLE_AREA_EXCLUDE)
			return 1;
	return 0;
}

/* tinycv.pm search_ matches a needle with exclude areas on a fresh copy of
 * the screenshot ($self->copy: no preparation cache) with the rectangles
 * painted green (replacerect ignores those outside the image). Grey is per
 * pixel, so painting the grey copy is the same. */
static int screen_copy_excluded(struct match_screen *s, const struct needle *n)
{
	int w = s->img->w, h = s->img->h;
	size_t i, bytes = (size_t)w * (size_t)h;
	uint8_t green = match_grey(0, 255, 0);

	if (!s->xgrey)
		s->xgrey = malloc(bytes);
	if (!s->xblur)
		s->xblur = malloc(bytes);
	if (!s->xgrey || !s->xblur)
		return ERR_NOMEM;
	memcpy(s->xgrey, s->grey, bytes);
	for (i = 0; i < n->nareas; i++) {
		const struct needle_area *a = &n->areas[i];
		int j;
		if (a->type != NEEDLE_AREA_EXCLUDE || a->x < 0 || a->y < 0 ||
		    (long)a->y + a->h > h || (long)a->x + a->w > w || a->w <= 0 || a->h <= 0)
			continue;
		for (j = a->y; j < a->y + a->h; j++)
			memset(s->xgrey + (size_t)j * w + a->x, green, (size_t)a->w);
	}
	return 0;
}

/* ---- prepared needles ---- */

struct prep_area {
	uint8_t *up;    /* w*h blurred needle pixels, halves rounded up */
	uint8_t *even;  /* the same, halves rounded to even */
	uint8_t *tpl;   /* the template as the needle's cache state gives it */
	int split;      /* tpl columns [0, split) come from even; -1: not built */
};

struct needle_prep {
	int img_w, img_h;
	struct match__prep st;   /* the needle image's prepared rectangle */
	size_t n;                /* number of match areas */
	struct prep_area a[];    /* up/even NULL: area outside the needle image */
};

static void prep_free(void *p)
{
	struct needle_prep *np = p;
	size_t i;

	if (!np)
		return;
	for (i = 0; i < np->n; i++) {
		free(np->a[i].up);
		free(np->a[i].even);
		free(np->a[i].tpl);
	}
	free(np);
}

static void copy_rect(uint8_t *dst, const uint8_t *src, int stride, const struct needle_area *a)
{
	int j;

	for (j = 0; j < a->h; j++)
		memcpy(dst + (size_t)j * a->w, src + (size_t)(a->y + j) * stride + a->x, (size_t)a->w);
}

/* Both roundings of every match area are kept, so the decoded PNG can be
 * dropped and any later state of the needle's cache rebuilt from them. */
static int needle_prepare(struct needle *n, char *err, size_t errlen)
{
	const struct image *img;
	struct needle_prep *np = NULL;
	uint8_t *grey = NULL, *blur = NULL;
	size_t i, k = 0, nm = 0, bytes;
	int rc;

	if (n->prep)
		return 0;
	rc = needle_image(n, &img, err, errlen);
	if (rc)
		return rc;
	for (i = 0; i < n->nareas; i++)
		if (n->areas[i].type == NEEDLE_AREA_MATCH)
			nm++;
	np = calloc(1, sizeof(*np) + nm * sizeof(np->a[0]));
	bytes = (size_t)img->w * (size_t)img->h;
	grey = malloc(bytes);
	blur = malloc(bytes);
	if (!np || !grey || !blur) {
		rc = ERR_NOMEM;
		goto out;
	}
	np->img_w = img->w;
	np->img_h = img->h;
	np->n = nm;
	match_grey_image(img, grey);
	for (i = 0; i < n->nareas; i++) {
		const struct needle_area *a = &n->areas[i];
		struct prep_area *pa;
		size_t ab;
		if (a->type != NEEDLE_AREA_MATCH)
			continue;
		pa = &np->a[k++];
		pa->split = -1;
		if (a->x < 0 || a->y < 0 || a->w <= 0 || a->h <= 0 ||
		    (long)a->x + a->w > img->w || (long)a->y + a->h > img->h)
			continue;
		ab = (size_t)a->w * (size_t)a->h;
		pa->up = malloc(ab);
		pa->even = malloc(ab);
		pa->tpl = malloc(ab);
		if (!pa->up || !pa->even || !pa->tpl) {
			rc = ERR_NOMEM;
			goto out;
		}
		blur_rows(grey, blur, img->w, img->h, a->x, a->y, a->x + a->w, a->y + a->h, a->x);
		copy_rect(pa->up, blur, img->w, a);
		blur_rows(grey, blur, img->w, img->h, a->x, a->y, a->x + a->w, a->y + a->h, a->x + a->w);
		copy_rect(pa->even, blur, img->w, a);
	}
	n->prep = np;
	n->prep_free = prep_free;
	np = NULL;
	/* The templates are all the matcher needs: drop the decoded PNG. */
	needle_image_drop(n);
out:
	prep_free(np);
	free(grey);
	free(blur);
	return rc;
}

/* object->prep(area) on the needle image, then the area's template as the
 * resulting cache holds it. */
static const uint8_t *needle_template(struct needle_prep *np, struct prep_area *pa,
				      const struct needle_area *a)
{
	int split, j;

	match__prep_roi(&np->st, np->img_w, np->img_h, a->x, a->y, a->w, a->h);
	split = match__prep_even_end(&np->st, np->img_w, np->img_h) - a->x;
	split = split < 0 ? 0 : split > a->w ? a->w : split;
	if (split != pa->split) {
		for (j = 0; j < a->h; j++) {
			size_t o = (size_t)j * a->w;
			memcpy(pa->tpl + o, pa->even + o, (size_t)split);
			memcpy(pa->tpl + o + split, pa->up + o + split, (size_t)(a->w - split));
		}
		pa->split = split;
	}
	return pa->tpl;
}

int match_needle_err(struct match_screen *s, struct needle *n, double search_ratio,
		     double threshold, struct match_result *out, char *err, size_t errlen)
{
	struct needle_prep *np;
	struct match__prep xst = { 0 }, *st;
	const uint8_t *grey;
	uint8_t *scene;
	char ebuf[512];
	size_t i, k = 0;
	double sum = 0;
	int rc, sw = s->img->w, sh = s->img->h;

	memset(out, 0, sizeof(*out));
	out->needle = n;
	if (!err) {
		err = ebuf;
		errlen = sizeof(ebuf);
	}
	rc = needle_prepare(n, err, errlen);
	if (rc)
		return rc;
	rc = screen_grey(s);
	if (rc)
		return rc;
	if (needle_has_exclude(n)) {
		rc = screen_copy_excluded(s, n);
		if (rc)
			return rc;
		grey = s->xgrey;
		scene = s->xblur;
		st = &xst;
	} else {
		grey = s->grey;
		scene = s->blur;
		st = &s->st;
	}
	np = n->prep;
	out->areas = calloc(np->n ? np->n : 1, sizeof(*out->areas));
	if (!out->areas)
		return ERR_NOMEM;
	out->nareas = np->n;
	out->ok = 1;
	for (i = 0; i < n->nareas; i++) {
		const struct needle_area *a = &n->areas[i];
		struct match_area_result *r;
		int margin, x, y, wx0, wy0, wx1, wy1;
		if (a->type != NEEDLE_AREA_MATCH)
			continue;
		r = &out->areas[k];
		r->w = a->w;
		r->h = a->h;
		/* tinycv.pm: int(margin + ratio * (1024 - margin)), truncated. */
		margin = (int)(a->margin + search_ratio * (1024 - a->margin));
		/* tinycv_impl.cc checks the unscaled area against the screen,
		 * then scales the position (not the size); a no-op for needles
		 * of the screen's size. */
		x = np->img_w > 0 ? (int)((long)a->x * sw / np->img_w) : 0;
		y = np->img_h > 0 ? (int)((long)a->y * sh / np->img_h) : 0;
		wx0 = x - margin < 0 ? 0 : x - margin;
		wy0 = y - margin < 0 ? 0 : y - margin;
		wx1 = (long)x + a->w + margin > sw ? sw : x + a->w + margin;
		wy1 = (long)y + a->h + margin > sh ? sh : y + a->h + margin;
		r->similarity = 0;
		if (a->x >= 0 && a->y >= 0 && (long)a->y + a->h <= sh && (long)a->x + a->w <= sw &&
		    np->a[k].up && wx1 > wx0 && wy1 > wy0) {
			const uint8_t *tpl;
			/* scene->prep(window), then object->prep(area), as
			 * search_TEMPLATE calls them; then its check that the
			 * template fits the window. */
			prep_apply(st, grey, scene, sw, sh, wx0, wy0, wx1 - wx0, wy1 - wy0);
			tpl = needle_template(np, &np->a[k], a);
			if (wx1 - wx0 >= a->w && wy1 - wy0 >= a->h)
				r->similarity = match__search(scene, sw, sh, tpl, a->w, a->h,
							      x, y, margin, &r->x, &r->y);
		}
		r->ok = !(r->similarity < (a->match ? a->match : NEEDLE_DEFAULT_MATCH) / 100 - threshold);
		if (!r->ok)
			out->ok = 0;
		sum += (1 - r->similarity) * (1 - r->similarity);
		k++;
	}
	out->error = k ? sum / (double)k : 0;
	return 0;
}

int match_needle(struct match_screen *s, struct needle *n, double search_ratio,
		 double threshold, struct match_result *out)
{
	return match_needle_err(s, n, search_ratio, threshold, out, NULL, 0);
}

void match_result_release(struct match_result *r)
{
	if (!r)
		return;
	free(r->areas);
	r->areas = NULL;
	r->nareas = 0;
}

static int cmp_result(const void *pa, const void *pb)
{
	const struct match_result *a = pa, *b = pb;

	if (a->ok != b->ok)
		return a->ok ? -1 : 1;
	if (a->error != b->error)
		return a->error < b->error ? -1 : 1;
	if (a->needle->workaround != b->needle->workaround)
		return a->needle->workaround ? -1 : 1;
	return strcmp(a->needle->name, b->needle->name);
}

void match_results_sort(struct match_result *r, size_t n)
{
	if (n > 1)
		qsort(r, n, sizeof(*r), cmp_result);
}
