/* SPDX-License-Identifier: MIT */
/* match.c - needle matching as os-autoinst's tinycv does it, computed
 * exactly: tinycv's per-image prep cache and OpenCV's rounding of an in-place
 * sub-Mat blur, integer SSD (where OpenCV uses a float DFT), the minVec rule
 * in float as tinycv keeps it, libstdc++'s sort for the closest candidate.
 * The search prunes with proven lower bounds only, so it returns what an
 * exhaustive search returns (match__search_ref, kept for the tests). Owns
 * the prepared screen, its search buffers and the needle caches; the SSD
 * kernels are in match_ssd.c. Large searches split their first phase over
 * a process-wide pool of worker threads (match_pool.c). */
#include <float.h>
#include <math.h>
#include <immintrin.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "image/match.h"
#include "image/match_pool.h"
#include "image/match_ssd.h"
#include "util/err.h"
#include "util/str.h"
#include "util/banned.h" /* last: after every system header */

/* ---- grey and blur ---- */

void match_grey_image(const struct image *img, uint8_t *grey)
{
	match__grey_row(img->px, grey, (size_t)img->w * (size_t)img->h);
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

/* v[-1] + 2 v[0] + v[1] for 8 columns of vertical sums. */
static inline __m128i blur_h8(const uint16_t *v)
{
	__m128i l = _mm_loadu_si128((const __m128i *)(const void *)(v - 1));
	__m128i m = _mm_loadu_si128((const __m128i *)(const void *)v);
	__m128i r = _mm_loadu_si128((const __m128i *)(const void *)(v + 1));

	return _mm_add_epi16(_mm_add_epi16(l, r), _mm_slli_epi16(m, 1));
}

/* The AVX2 steps of blur_rows, 16 columns at a time; each returns the
 * column it reached (the SSE4.1 and scalar loops finish the row). */
__attribute__((target("avx2")))
static int blur_v_avx2(const uint8_t *ra, const uint8_t *rb, const uint8_t *rc, uint16_t *vv, int x, int xz)
{
	for (; x + 16 <= xz; x += 16) {
		__m256i a = _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(const void *)(ra + x)));
		__m256i b = _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(const void *)(rb + x)));
		__m256i c = _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(const void *)(rc + x)));
		_mm256_storeu_si256((__m256i *)(void *)(vv + x), _mm256_add_epi16(_mm256_add_epi16(a, c), _mm256_slli_epi16(b, 1)));
	}
	return x;
}

__attribute__((target("avx2")))
static int blur_h_avx2(const uint16_t *vv, uint8_t *d, int x, int x1, int even)
{
	const __m256i seven = _mm256_set1_epi16(7), eight = _mm256_set1_epi16(8), one = _mm256_set1_epi16(1);

	for (; x + 16 <= x1; x += 16) {
		__m256i l = _mm256_loadu_si256((const __m256i *)(const void *)(vv + x - 1));
		__m256i m = _mm256_loadu_si256((const __m256i *)(const void *)(vv + x));
		__m256i r = _mm256_loadu_si256((const __m256i *)(const void *)(vv + x + 1));
		__m256i t = _mm256_add_epi16(_mm256_add_epi16(l, r), _mm256_slli_epi16(m, 1));
		t = even ? _mm256_add_epi16(t, _mm256_add_epi16(seven, _mm256_and_si256(_mm256_srli_epi16(t, 4), one)))
			 : _mm256_add_epi16(t, eight);
		t = _mm256_srli_epi16(t, 4);
		/* bytes 0-7 of each lane hold the results; gather them in 128 bits */
		t = _mm256_permute4x64_epi64(_mm256_packus_epi16(t, t), 0x08);
		_mm_storeu_si128((__m128i *)(void *)(d + x), _mm256_castsi256_si128(t));
	}
	return x;
}

/* The [1 2 1] x [1 2 1] kernel is exact in OpenCV's fixed point, so every
 * output is t / 16 for the integer 3x3 weighted sum t; only the rounding of
 * the halves differs between OpenCV's code paths (see match.h): columns
 * [x0, even_end) round halves to even, the others round them up. */
static void blur_rows(const uint8_t *src, uint8_t *dst, int w, int h,
		      int x0, int y0, int x1, int y1, int even_end)
{
	uint16_t *v;
	int x, y, xe, avx2;

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
	avx2 = match__simd_level() >= MATCH_SIMD_AVX2;
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

		x = avx2 ? blur_v_avx2(ra, rb, rc, vv, xs, xz) : xs;
		for (; x + 16 <= xz; x += 16) {
			__m128i z = _mm_setzero_si128();
			__m128i a = _mm_loadu_si128((const __m128i *)(const void *)(ra + x));
			__m128i b = _mm_loadu_si128((const __m128i *)(const void *)(rb + x));
			__m128i c = _mm_loadu_si128((const __m128i *)(const void *)(rc + x));
			__m128i lo = _mm_add_epi16(_mm_add_epi16(_mm_unpacklo_epi8(a, z), _mm_unpacklo_epi8(c, z)),
						   _mm_slli_epi16(_mm_unpacklo_epi8(b, z), 1));
			__m128i hi = _mm_add_epi16(_mm_add_epi16(_mm_unpackhi_epi8(a, z), _mm_unpackhi_epi8(c, z)),
						   _mm_slli_epi16(_mm_unpackhi_epi8(b, z), 1));
			_mm_storeu_si128((__m128i *)(void *)(vv + x), lo);
			_mm_storeu_si128((__m128i *)(void *)(vv + x + 8), hi);
		}
		for (; x < xz; x++)
			vv[x] = (uint16_t)(ra[x] + 2 * rb[x] + rc[x]);
		if (x0 == 0)
			vv[-1] = vv[reflect101(-1, w)];
		if (x1 == w)
			vv[w] = vv[reflect101(w, w)];
		/* t <= 16 * 255 fits 16 bits; halves to even: t + 7 + bit 4 */
		x = avx2 ? blur_h_avx2(vv, d, x0, xe, 1) : x0;
		for (; x + 8 <= xe; x += 8) {
			__m128i t = blur_h8(vv + x);
			t = _mm_add_epi16(t, _mm_add_epi16(_mm_set1_epi16(7),
							   _mm_and_si128(_mm_srli_epi16(t, 4), _mm_set1_epi16(1))));
			_mm_storel_epi64((__m128i *)(void *)(d + x), _mm_packus_epi16(_mm_srli_epi16(t, 4), t));
		}
		for (; x < xe; x++) {
			unsigned t = (unsigned)vv[x - 1] + 2u * vv[x] + vv[x + 1];
			d[x] = (uint8_t)((t + 7 + ((t >> 4) & 1)) >> 4);
		}
		if (avx2)
			x = blur_h_avx2(vv, d, x, x1, 0);
		for (; x + 8 <= x1; x += 8) {
			__m128i t = _mm_add_epi16(blur_h8(vv + x), _mm_set1_epi16(8));
			_mm_storel_epi64((__m128i *)(void *)(d + x), _mm_packus_epi16(_mm_srli_epi16(t, 4), t));
		}
		for (; x < x1; x++)
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

struct window {
	int wx0, wy0, wx1, wy1, rw, rh, cx, cy;
};

/* search_TEMPLATE's window and result size; 0 when there is nothing to
 * search (its "out of range" returns). */
static int search_window(struct window *win, int sw, int sh, int w, int h, int x, int y, int margin)
{
	if (x < 0 || y < 0 || (long)y + h > sh || (long)x + w > sw)
		return 0;
	win->wx0 = x - margin < 0 ? 0 : x - margin;
	win->wy0 = y - margin < 0 ? 0 : y - margin;
	win->wx1 = (long)x + w + margin > sw ? sw : x + w + margin;
	win->wy1 = (long)y + h + margin > sh ? sh : y + h + margin;
	win->rw = win->wx1 - win->wx0 - w + 1;
	win->rh = win->wy1 - win->wy0 - h + 1;
	win->cx = x - win->wx0;
	win->cy = y - win->wy0;
	return win->rw > 0 && win->rh > 0;
}

/* The reference: every SSD computed in full, minVec and the closest
 * candidate exactly as search_TEMPLATE spells them. Slow; for tests. */
double match__search_ref(const uint8_t *scene, int sw, int sh, const uint8_t *tpl, int w, int h,
			 int x, int y, int margin, int *bx, int *by)
{
	struct window win;
	int64_t *val = NULL;
	int *lx = NULL, *ly = NULL;
	size_t n = 0, p, npos, pick;
	double sim = 0;
	float mn;
	int i, j, a, b;

	*bx = 0;
	*by = 0;
	if (!search_window(&win, sw, sh, w, h, x, y, margin))
		return 0;
	npos = (size_t)win.rw * (size_t)win.rh;
	val = malloc(npos * sizeof(*val));
	lx = malloc(npos * sizeof(*lx));
	ly = malloc(npos * sizeof(*ly));
	if (!val || !lx || !ly)
		goto out;
	for (j = 0; j < win.rh; j++)
		for (i = 0; i < win.rw; i++) {
			int64_t s = 0;
			for (b = 0; b < h; b++)
				for (a = 0; a < w; a++) {
					int d = scene[(size_t)(win.wy0 + j + b) * sw + win.wx0 + i + a] -
						tpl[(size_t)b * w + a];
					s += d * d;
				}
			val[(size_t)j * win.rw + i] = s;
		}
	if (win.cx < win.rw && win.cy < win.rh) {
		int64_t c = val[(size_t)win.cy * win.rw + win.cx];
		if (c == 0) {
			*bx = x;
			*by = y;
			sim = 1;
			goto out;
		}
		mn = (float)c;
	} else {
		mn = FLT_MAX;
	}
	mn += 10;
	for (p = 0; p < npos; p++) {
		float v = (float)val[p];
		if (v > mn)
			continue;
		if (v + 10 < mn) {
			mn = v + 10;
			n = 0;
		}
		lx[n] = (int)(p % (size_t)win.rw);
		ly[n] = (int)(p / (size_t)win.rw);
		n++;
	}
	if (n == 0)
		goto out;
	pick = match__closest(lx, ly, n, x, y);
	*bx = win.wx0 + lx[pick];
	*by = win.wy0 + ly[pick];
	sim = match_similarity((uint64_t)val[(size_t)ly[pick] * win.rw + lx[pick]], (uint64_t)w * (uint64_t)h);
out:
	free(val);
	free(lx);
	free(ly);
	return sim;
}

/* Buffers of the search, kept from one search to the next on a screen
 * (they only grow), and what the window's integrals and expanded copy
 * were computed from: a whole-screen search reuses them for every area. */
struct match__scratch {
	int64_t *is, *iq, *val, *lbv, *tt;
	uint32_t *qw;
	int32_t *tq4;
	int8_t *tq;
	int *border, *lx, *ly;
	size_t n_is, n_iq, n_val, n_lbv, n_tt, n_qw, n_tq4, n_tq, n_border, n_lx, n_ly;
	const uint8_t *win;      /* the window the caches hold, NULL: none */
	int ww, wh, level, have_qw;
	unsigned gen;
};

static void scratch_release(struct match__scratch *sc)
{
	free(sc->is);
	free(sc->iq);
	free(sc->val);
	free(sc->lbv);
	free(sc->tt);
	free(sc->qw);
	free(sc->tq4);
	free(sc->tq);
	free(sc->border);
	free(sc->lx);
	free(sc->ly);
	memset(sc, 0, sizeof(*sc));
}

/* *p holds at least n elements of size elem afterwards; 0 or ERR_NOMEM. */
static int grow(void *pp, size_t *cap, size_t n, size_t elem)
{
	void **p = pp, *q;

	if (n <= *cap && *p)
		return 0;
	free(*p);
	*p = NULL;
	*cap = 0;
	q = malloc((n ? n : 1) * elem);
	if (!q)
		return ERR_NOMEM;
	*p = q;
	*cap = n;
	return 0;
}

/* The seeds: positions with the smallest lower bounds, searched first so
 * that the bound prunes from the start (an exact hit has a bound near 0). */
#define SEEDS 8

int match__threads;

/* When a round pays (when threads are not forced): a worker must fetch
 * the window's integrals and expanded copy and the rows' bounds from the
 * caller's cache, tens of microseconds, so the bounds are split from
 * PAR_MIN_POS positions on (a whole-screen search) and the blocks when
 * the positions the bounds leave times the template's pixels reach
 * PAR_MIN_WORK (on 2 cores in a VM: 2% margin searches of about 0.4 ms
 * and more gain, smaller ones lose). */
#define PAR_MIN_POS  65536
#define PAR_MIN_WORK 5e7

/* The threads searches use (see match__threads); *forced: set by
 * match__threads, to be used whatever the size. */
static int search_threads(int *forced)
{
	static atomic_int auto_n;
	int n = match__threads;

	*forced = n > 0;
	if (n > 0)
		return n < MATCH_THREADS_MAX ? n : MATCH_THREADS_MAX;
	n = atomic_load_explicit(&auto_n, memory_order_relaxed);
	if (!n) {
		const char *e = getenv("VIGIL_MATCH_THREADS");
		long v;
		if (e && str_to_long(e, &v) == 0 && v >= 1) {
			n = v < MATCH_THREADS_MAX ? (int)v : MATCH_THREADS_MAX;
		} else {
			long cpus = sysconf(_SC_NPROCESSORS_ONLN);
			n = cpus < 1 ? 1 : cpus > 8 ? 8 : (int)cpus;
		}
		atomic_store_explicit(&auto_n, n, memory_order_relaxed);
	}
	return n;
}

/* ---- Phase A, split by rows ----
 * Each row of positions is done by one thread, which alone writes its
 * val and lbv; the running minimum is shared and only ever lowered. A
 * thread that reads it late prunes with a larger bound, which prunes
 * less but never wrongly, so the minimum is exact however the rows fall
 * and Phase B sees the same values it would alone: an exact SSD, or a
 * true lower bound above the final minimum. */
struct phase_a {
	const struct match__ssd *c;
	const struct window *win;
	int64_t *val, *lbv;
	const int64_t *is, *iq;
	size_t iw;
	int64_t N, tsum, VT;
	int bw;            /* block width */
	int chunk;         /* rows a thread takes at a time for the bounds */
	int stage;         /* 0: the bounds, 1: the blocks */
	size_t seed[MATCH_THREADS_MAX][SEEDS];
	int nseed[MATCH_THREADS_MAX];
	_Alignas(64) atomic_int next;        /* the next row (or chunk) to take */
	_Alignas(64) _Atomic int64_t best;   /* the running minimum */
};

/* Position q into seed[0..*n), kept sorted by bound, then position, and
 * at most SEEDS long (q is dropped when it would come last of a full
 * list). */
static void seed_insert(const int64_t *lbv, size_t *seed, int *n, size_t q)
{
	int m = *n < SEEDS ? (*n)++ : SEEDS;

	while (m > 0 && (lbv[seed[m - 1]] > lbv[q] || (lbv[seed[m - 1]] == lbv[q] && seed[m - 1] > q))) {
		if (m < SEEDS)
			seed[m] = seed[m - 1];
		m--;
	}
	if (m < SEEDS)
		seed[m] = q;
}

/* The lower bounds of rows [j0, j1), their val marked "not yet", and the
 * SEEDS smallest bounds of the rows (by bound, then position) kept in
 * seed[0..*nseed), rows being given in increasing order. */
static void bound_rows(const struct phase_a *a, int j0, int j1, size_t *seed, int *nseed)
{
	const struct window *win = a->win;
	int64_t *lbv = a->lbv, sthr = *nseed == SEEDS ? lbv[seed[SEEDS - 1]] : INT64_MAX;
	int i, j, w = a->c->w, h = a->c->h;

	for (j = j0; j < j1; j++) {
		int64_t *l = lbv + (size_t)j * win->rw, *v = a->val + (size_t)j * win->rw;
		match__lb_row(a->c->level, a->is + (size_t)j * a->iw, a->is + (size_t)(j + h) * a->iw,
			      a->iq + (size_t)j * a->iw, a->iq + (size_t)(j + h) * a->iw, w, win->rw,
			      a->N, a->tsum, a->VT, l);
		for (i = 0; i < win->rw; i++) {
			v[i] = INT64_MIN;
			if (l[i] >= sthr)
				continue;
			seed_insert(lbv, seed, nseed, (size_t)j * win->rw + i);
			if (*nseed == SEEDS)
				sthr = lbv[seed[SEEDS - 1]];
		}
	}
}

/* The blocks of row j with early exit against best; returns the new
 * minimum. shared: the minimum the threads share (NULL when alone), read
 * before each block and lowered with what the row finds. */
static int64_t block_row(const struct phase_a *a, int j, int64_t best, _Atomic int64_t *shared)
{
	const struct window *win = a->win;
	int64_t *val = a->val;
	const int64_t *lbv = a->lbv;
	int i, bw = a->bw;

	for (i = 0; i < win->rw; i += bw) {
		int n = win->rw - i < bw ? win->rw - i : bw, k, need = 0;
		int64_t out[MATCH_BLOCK];
		size_t p = (size_t)j * win->rw + i;
		if (shared) {
			int64_t s = atomic_load_explicit(shared, memory_order_relaxed);
			if (s < best)
				best = s;
		}
		for (k = 0; k < n; k++) {
			if (val[p + k] >= 0)
				continue;
			if (lbv[p + k] > best)
				val[p + k] = -lbv[p + k] - 1;
			else
				need = 1;
		}
		if (!need)
			continue;
		match__ssd_block(a->c, i, j, n, best, out);
		for (k = 0; k < n; k++) {
			int64_t v = out[k];
			if (val[p + k] >= 0 || (v < 0 && val[p + k] < v && val[p + k] != INT64_MIN))
				continue;
			val[p + k] = v;
			if (v >= 0 && v < best) {
				best = v;
				if (shared) {
					int64_t cur = atomic_load_explicit(shared, memory_order_relaxed);
					while (v < cur && !atomic_compare_exchange_weak_explicit(shared, &cur, v,
								memory_order_relaxed, memory_order_relaxed))
						;
				}
			}
		}
	}
	return best;
}

/* Row t of the block loop's order: rows 0, 4, 8..., then 2, 6..., then
 * 1, 5..., then 3, 7... (a low SSD found early prunes the rest better:
 * the SSD varies little between neighbouring positions of blurred
 * images); -1 past the last. */
static int pass_row(int t, int rows)
{
	static const int start[4] = { 0, 2, 1, 3 };
	int k;

	for (k = 0; k < 4; k++) {
		int n = start[k] < rows ? (rows - start[k] + 3) / 4 : 0;
		if (t < n)
			return start[k] + 4 * t;
		t -= n;
	}
	return -1;
}

static void phase_a_work(void *arg, int id)
{
	struct phase_a *a = arg;
	int rows = a->win->rh;

	if (a->stage == 0) {
		size_t seed[SEEDS];
		int nseed = 0, k;
		for (;;) {
			int j0 = atomic_fetch_add_explicit(&a->next, a->chunk, memory_order_relaxed);
			if (j0 >= rows)
				break;
			bound_rows(a, j0, rows - j0 < a->chunk ? rows : j0 + a->chunk, seed, &nseed);
		}
		for (k = 0; k < nseed; k++)
			a->seed[id][k] = seed[k];
		a->nseed[id] = nseed;
	} else {
		int64_t best = atomic_load_explicit(&a->best, memory_order_relaxed);
		for (;;) {
			int t = atomic_fetch_add_explicit(&a->next, 1, memory_order_relaxed);
			if (t >= rows)
				break;
			best = block_row(a, pass_row(t, rows), best, &a->best);
		}
	}
}

/* The block loop's work: template pixels times the positions that the
 * bounds leave to it, estimated from every 7th position. */
static double block_work(const struct phase_a *a, int64_t best)
{
	size_t p, n = 0, npos = (size_t)a->win->rw * (size_t)a->win->rh;

	for (p = 0; p < npos; p += 7)
		n += a->val[p] < 0 && a->lbv[p] <= best;
	return (double)n * 7.0 * (double)a->N;
}

/* The SEEDS smallest of the threads' seeds, by bound, then position: what
 * one thread finds going through all rows in order. */
static int merge_seeds(const struct phase_a *a, int nthreads, size_t *seed)
{
	int t, k, n = 0;

	for (t = 0; t < nthreads; t++)
		for (k = 0; k < a->nseed[t]; k++)
			seed_insert(a->lbv, seed, &n, a->seed[t][k]);
	return n;
}

/* The window's integrals and expanded copy into c, made afresh unless sc
 * holds them already (same window, generation and level), and the
 * template's expanded copy when the window has one. 0, or -1 when memory
 * ran out. */
static int window_tables(struct match__scratch *sc, unsigned gen, struct match__ssd *c, int ww, int wh)
{
	size_t iw = (size_t)ww + 1;

	if (sc->win != c->win || sc->ww != ww || sc->wh != wh || sc->gen != gen || sc->level != c->level) {
		sc->win = NULL;
		if (grow(&sc->is, &sc->n_is, iw * ((size_t)wh + 1), sizeof(*sc->is)) ||
		    grow(&sc->iq, &sc->n_iq, iw * ((size_t)wh + 1), sizeof(*sc->iq)))
			return -1;
		match__integrals(c->level, c->win, c->sw, ww, wh, sc->is, sc->iq);
		sc->have_qw = 0;
		if (match__ssd_qw_size(c, ww, wh)) {
			if (grow(&sc->qw, &sc->n_qw, match__ssd_qw_size(c, ww, wh), sizeof(*sc->qw)))
				return -1;
			match__ssd_qw_fill(c, ww, wh, sc->qw);
			sc->have_qw = 1;
		}
		sc->win = c->win;
		sc->ww = ww;
		sc->wh = wh;
		sc->gen = gen;
		sc->level = c->level;
	} else if (sc->have_qw) {
		c->qw = sc->qw;
		c->qs = (size_t)ww + MATCH_BLOCK + 8;  /* as match__ssd_qw_fill sets it */
	}
	if (c->qw) {
		if (grow(&sc->tq4, &sc->n_tq4, match__ssd_tq4_size(c), sizeof(*sc->tq4)))
			return -1;
		match__ssd_tq4_fill(c, sc->tq4);
	}
	c->is = sc->is;
	c->iq = sc->iq;
	return 0;
}

/* Phase A: the exact minimum SSD over the window's positions (sse0: the
 * one at the centre, INT64_MAX when there is none). Every position gets
 * either its exact SSD (val >= 0) or a proven lower bound lb that exceeded
 * the bound at the time (val = -lb - 1); INT64_MIN: not yet. First the
 * lower bounds of every position (see match__lb_row), row by row, noting
 * the SEEDS smallest (insertion into a sorted list) while the row is at
 * hand; then the seeds, then every row's blocks. */
static int64_t min_ssd(const struct match__ssd *c, const struct window *win, int64_t *val, int64_t *lbv, int64_t sse0,
		       int have_center)
{
	struct phase_a pa;
	size_t p, seed[SEEDS], npos = (size_t)win->rw * (size_t)win->rh;
	uint64_t N = (uint64_t)c->w * (uint64_t)c->h, tsum = (uint64_t)c->ts[c->h], tsq = (uint64_t)c->tt[c->h];
	int64_t best;
	int i, j, nseed = 0, nthreads, want, forced = 0;

	memset(&pa, 0, sizeof(pa));
	pa.c = c;
	pa.win = win;
	pa.val = val;
	pa.lbv = lbv;
	pa.is = c->is;
	pa.iq = c->iq;
	pa.iw = c->iw;
	pa.N = (int64_t)N;
	pa.tsum = (int64_t)tsum;
	/* exact when N <= the bound's limit (N tsq <= 65025 N^2 < 2^63) */
	pa.VT = N <= MATCH_LB_MAX_N ? (int64_t)(N * tsq - tsum * tsum) : 0;
	/* blocks of equal width, a multiple of 16 */
	{
		int nv = (win->rw + 15) / 16, nb = (nv + MATCH_BLOCK / 16 - 1) / (MATCH_BLOCK / 16);
		pa.bw = 16 * ((nv + nb - 1) / nb);
	}
	pa.chunk = 512 / win->rw < 1 ? 1 : 512 / win->rw;
	want = win->rh < 2 ? 1 : search_threads(&forced);
	nthreads = want > 1 && (forced || npos >= PAR_MIN_POS) ? match__pool_take(want) : 1;
	best = sse0;
	if (nthreads > 1) {
		atomic_init(&pa.next, 0);
		match__pool_run(phase_a_work, &pa, nthreads);
		nseed = merge_seeds(&pa, nthreads, seed);
	} else {
		bound_rows(&pa, 0, win->rh, seed, &nseed);
	}
	if (have_center)
		val[(size_t)win->cy * win->rw + win->cx] = sse0;
	for (i = 0; i < nseed; i++) {
		int64_t v;
		p = seed[i];
		if (val[p] != INT64_MIN)
			continue;
		if (lbv[p] > best) {
			val[p] = -lbv[p] - 1;
			continue;
		}
		v = match__ssd_at(c, (int)(p % (size_t)win->rw), (int)(p / (size_t)win->rw), best);
		val[p] = v > best ? -v - 1 : v;
		if (v < best)
			best = v;
	}
	/* Then every row's blocks (see pass_row for the order). */
	if (want > 1 && !forced && npos < PAR_MIN_POS && block_work(&pa, best) >= PAR_MIN_WORK)
		nthreads = match__pool_take(want);
	if (nthreads > 1) {
		pa.stage = 1;
		atomic_store_explicit(&pa.next, 0, memory_order_relaxed);
		atomic_store_explicit(&pa.best, best, memory_order_relaxed);
		match__pool_run(phase_a_work, &pa, nthreads);
		best = atomic_load_explicit(&pa.best, memory_order_relaxed);
		match__pool_put();
	} else {
		for (i = 0; (j = pass_row(i, win->rh)) >= 0; i++)
			best = block_row(&pa, j, best, NULL);
	}
	return best;
}

/* Phase B: every position with (float)SSD <= the final bound, in scan
 * order, as tinycv's minVec keeps them; the one closest to the area's
 * position (x, y) into *bx, *by and its similarity, 0 when none. */
static double closest_min(struct match__scratch *sc, const struct match__ssd *c, const struct window *win,
			  int64_t *val, int64_t best, int64_t sse0, int have_center, int x, int y, int *bx, int *by)
{
	size_t nl = 0, pick, p, npos = (size_t)win->rw * (size_t)win->rh;
	uint64_t N = (uint64_t)c->w * (uint64_t)c->h;
	int64_t thr;
	float min0, gmin;
	int reset, *lx, *ly;

	/* minVec as tinycv runs it, in float: min0 = (float)sse0 + 10; a value
	 * v with v + 10 < min restarts the list. The last restart is at the
	 * first position (row-major) where (float)v + 10 reaches its minimum. */
	min0 = have_center ? (float)sse0 + 10.0f : FLT_MAX;
	gmin = (float)best + 10.0f;
	reset = gmin < min0;
	thr = float_floor_bound(reset ? gmin : min0);

	if (grow(&sc->lx, &sc->n_lx, npos, sizeof(*sc->lx)) || grow(&sc->ly, &sc->n_ly, npos, sizeof(*sc->ly)))
		return 0;
	lx = sc->lx;
	ly = sc->ly;
	for (p = 0; p < npos; p++) {
		int64_t v = val[p];
		/* v in [-thr - 1, thr]: exact <= thr, or a bound <= thr */
		if ((uint64_t)v + (uint64_t)thr + 1 > 2 * (uint64_t)thr + 1)
			continue;
		if (v < 0) {
			v = match__ssd_at(c, (int)(p % (size_t)win->rw), (int)(p / (size_t)win->rw), thr);
			val[p] = v;
		}
		if (v > thr)
			continue;
		/* Positions before the last restart are dropped. */
		if (reset && nl == 0 && (float)v + 10.0f > gmin)
			continue;
		lx[nl] = (int)(p % (size_t)win->rw);
		ly[nl] = (int)(p / (size_t)win->rw);
		nl++;
	}
	if (nl == 0)
		return 0;
	/* SortByClose(x, y) measures from the area's screen position, but
	 * minVec's points are relative to the window: tinycv compares the two
	 * as they are, and so do we. */
	pick = match__closest(lx, ly, nl, x, y);
	*bx = win->wx0 + lx[pick];
	*by = win->wy0 + ly[pick];
	{
		int64_t v = val[(size_t)ly[pick] * win->rw + lx[pick]];
		if (v < 0)
			v = match__ssd_at(c, lx[pick], ly[pick], INT64_MAX);
		return match_similarity((uint64_t)v, N);
	}
}

static double search_area(struct match__scratch *sc, unsigned gen, const uint8_t *scene, int sw, int sh,
			  const uint8_t *tpl, int w, int h, int x, int y, int margin, int *bx, int *by)
{
	struct window win;
	struct match__ssd c;
	int64_t best, sse0;
	size_t npos, iw;
	uint64_t N = (uint64_t)w * (uint64_t)h;
	int have_center, ww, wh;

	*bx = 0;
	*by = 0;
	if (!search_window(&win, sw, sh, w, h, x, y, margin))
		return 0;
	ww = win.wx1 - win.wx0;
	wh = win.wy1 - win.wy0;
	iw = (size_t)ww + 1;
	npos = (size_t)win.rw * (size_t)win.rh;

	if (grow(&sc->tt, &sc->n_tt, 2 * (size_t)h + 2, sizeof(*sc->tt)) ||
	    grow(&sc->border, &sc->n_border, (size_t)h + 1, sizeof(*sc->border)) ||
	    grow(&sc->tq, &sc->n_tq, (size_t)N, 1))
		return 0;
	memset(&c, 0, sizeof(c));
	c.win = scene + (size_t)win.wy0 * sw + win.wx0;
	c.sw = (size_t)sw;
	c.tpl = tpl;
	c.w = w;
	c.h = h;
	c.iw = iw;
	match__ssd_prepare(&c, sc->tq, sc->tt, sc->border);
	/* Exact hit at the original position: tinycv's fast path. */
	have_center = win.cx < win.rw && win.cy < win.rh;
	sse0 = have_center ? match__ssd_direct(&c, win.cx, win.cy, INT64_MAX) : INT64_MAX;
	if (sse0 == 0) {
		*bx = x;
		*by = y;
		return 1;
	}
	if (window_tables(sc, gen, &c, ww, wh) || grow(&sc->val, &sc->n_val, npos, sizeof(*sc->val)) ||
	    grow(&sc->lbv, &sc->n_lbv, npos, sizeof(*sc->lbv)))
		return 0;
	best = min_ssd(&c, &win, sc->val, sc->lbv, sse0, have_center);
	return closest_min(sc, &c, &win, sc->val, best, sse0, have_center, x, y, bx, by);
}

double match__search(const uint8_t *scene, int sw, int sh, const uint8_t *tpl, int w, int h,
		     int x, int y, int margin, int *bx, int *by)
{
	struct match__scratch sc;
	double sim;

	memset(&sc, 0, sizeof(sc));
	sim = search_area(&sc, 0, scene, sw, sh, tpl, w, h, x, y, margin, bx, by);
	scratch_release(&sc);
	return sim;
}


/* ---- prepared screens ---- */

struct match_screen {
	const struct image *img;
	int w, h;                 /* its size (the buffers' size after a reset) */
	uint8_t *grey;            /* grey of the screen, row by row as needed */
	uint8_t *blur;            /* the screen as tinycv's cache holds it */
	uint8_t *done;            /* per row: 1 grey converted, 2 also in xgrey */
	struct match__prep st;    /* its prepared rectangle */
	uint8_t *xgrey;           /* scratch: grey with exclude areas painted */
	uint8_t *xblur;           /* scratch: the painted copy's cache */
	unsigned gen;             /* counts the blurs of blur and xblur */
	struct match__scratch sc; /* the searches' buffers */
	/* The content's identity, unique in the process, and what is known of
	 * the content before: prev_id, the same but for rows [chg_y0, chg_y1)
	 * (prev_id 0: nothing known). Area results carry over on it. */
	uint64_t id, prev_id;
	int chg_y0, chg_y1;
};

static uint64_t next_screen_id(void)
{
	static _Atomic uint64_t ids;

	return atomic_fetch_add_explicit(&ids, 1, memory_order_relaxed) + 1;
}

struct match_screen *match_screen_new(const struct image *img)
{
	struct match_screen *s;

	if (!img || img->w <= 0 || img->h <= 0)
		return NULL;
	s = calloc(1, sizeof(*s));
	if (s) {
		s->img = img;
		s->w = img->w;
		s->h = img->h;
		s->id = next_screen_id();
	}
	return s;
}

/* A new content img; its grey rows outside [y0, y1) are those of the
 * content before (same size), which stay converted. */
static void screen_reset(struct match_screen *s, const struct image *img, int y0, int y1)
{
	s->id = next_screen_id();
	s->prev_id = 0;
	if (img->w != s->w || img->h != s->h) {
		free(s->grey);
		free(s->blur);
		free(s->done);
		free(s->xgrey);
		free(s->xblur);
		s->grey = s->blur = s->done = s->xgrey = s->xblur = NULL;
	} else if (s->done) {
		int y;
		for (y = 0; y < img->h; y++)
			s->done[y] = y >= y0 && y < y1 ? 0 : s->done[y] != 0;
	}
	memset(&s->st, 0, sizeof(s->st));
	s->img = img;
	s->w = img->w;
	s->h = img->h;
	s->gen++;   /* the search buffers' window data is stale */
}

void match_screen_reset(struct match_screen *s, const struct image *img)
{
	if (!img || img->w <= 0 || img->h <= 0)
		return;
	screen_reset(s, img, 0, img->h);
}

void match_screen_reset_rows(struct match_screen *s, const struct image *img, int y0, int y1)
{
	uint64_t prev = s->id;

	if (!img || img->w <= 0 || img->h <= 0)
		return;
	if (img->w != s->w || img->h != s->h || y0 < 0 || y1 > img->h || y0 > y1) {
		screen_reset(s, img, 0, img->h);
		return;
	}
	screen_reset(s, img, y0, y1);
	s->prev_id = prev;
	s->chg_y0 = y0;
	s->chg_y1 = y1;
}

void match_screen_free(struct match_screen *s)
{
	if (!s)
		return;
	free(s->grey);
	free(s->blur);
	free(s->done);
	free(s->xgrey);
	free(s->xblur);
	scratch_release(&s->sc);
	free(s);
}

static int screen_grey(struct match_screen *s)
{
	size_t n = (size_t)s->img->w * (size_t)s->img->h;

	if (s->blur)
		return 0;
	s->grey = malloc(n);
	s->blur = malloc(n);
	s->done = calloc((size_t)s->img->h, 1);
	if (!s->grey || !s->blur || !s->done) {
		free(s->grey);
		free(s->blur);
		free(s->done);
		s->grey = s->blur = s->done = NULL;
		return ERR_NOMEM;
	}
	return 0;
}

/* Grey is per pixel, so converting only the rows a blur reads gives the
 * same bytes as converting the whole screen. */
static void grey_rows(struct match_screen *s, int y0, int y1)
{
	size_t w = (size_t)s->img->w;
	int y;

	for (y = y0; y < y1; y++)
		if (!s->done[y]) {
			match__grey_row(s->img->px + (size_t)y * w * 3, s->grey + (size_t)y * w, w);
			s->done[y] = 1;
		}
}

/* tinycv.pm search_ matches a needle with exclude areas on a fresh copy of
 * the screenshot ($self->copy: no preparation cache) with the rectangles
 * painted green (replacerect ignores those outside the image). Grey is per
 * pixel, so painting the grey copy is the same; rows are copied and
 * painted as the blur needs them (done[y] == 2: done for this needle). */
static void xgrey_rows(struct match_screen *s, const struct needle *n, int y0, int y1)
{
	int w = s->img->w, h = s->img->h, y;
	uint8_t green = match_grey(0, 255, 0);
	size_t i;

	grey_rows(s, y0, y1);
	for (y = y0; y < y1; y++) {
		if (s->done[y] == 2)
			continue;
		memcpy(s->xgrey + (size_t)y * w, s->grey + (size_t)y * w, (size_t)w);
		for (i = 0; i < n->nareas; i++) {
			const struct needle_area *a = &n->areas[i];
			if (a->type != NEEDLE_AREA_EXCLUDE || a->x < 0 || a->y < 0 ||
			    (long)a->y + a->h > h || (long)a->x + a->w > w || a->w <= 0 || a->h <= 0 ||
			    y < a->y || y >= a->y + a->h)
				continue;
			memset(s->xgrey + (size_t)y * w + a->x, green, (size_t)a->w);
		}
		s->done[y] = 2;
	}
}

static int screen_copy_excluded(struct match_screen *s)
{
	size_t bytes = (size_t)s->img->w * (size_t)s->img->h;
	int y;

	if (!s->xgrey)
		s->xgrey = malloc(bytes);
	if (!s->xblur)
		s->xblur = malloc(bytes);
	if (!s->xgrey || !s->xblur)
		return ERR_NOMEM;
	for (y = 0; y < s->img->h; y++)
		if (s->done[y] == 2)
			s->done[y] = 1;
	return 0;
}

/* The blur as tinycv's cache leaves it after prep(roi) (xn: the needle
 * whose exclude areas paint the copy, or NULL); dst keeps its contents
 * when the cached rectangle already covers roi. */
static void prep_apply(struct match_screen *s, const struct needle *xn, struct match__prep *p,
		       uint8_t *dst, int x, int y, int w, int h)
{
	int iw = s->img->w, ih = s->img->h, y0, y1;

	if (!match__prep_roi(p, iw, ih, x, y, w, h))
		return;
	y0 = p->y - 1 < 0 ? 0 : p->y - 1;
	y1 = p->y + p->h + 1 > ih ? ih : p->y + p->h + 1;
	if (xn)
		xgrey_rows(s, xn, y0, y1);
	else
		grey_rows(s, y0, y1);
	s->gen++;
	blur_rows(xn ? s->xgrey : s->grey, dst, iw, ih, p->x, p->y, p->x + p->w, p->y + p->h,
		  match__prep_even_end(p, iw, ih));
}

static int needle_has_exclude(const struct needle *n)
{
	size_t i;

	for (i = 0; i < n->nareas; i++)
		if (n->areas[i].type == NEEDLE_AREA_EXCLUDE)
			return 1;
	return 0;
}

/* ---- prepared needles ---- */

/* An area's last result and everything it was computed from but the
 * pixels: the screen content (id), the scene's prepared rectangle before
 * the search, the window, the template's state. The blurred window is a
 * function of these and of the grey rows from one above the window to one
 * below (tinycv's 3x3 blur over the prepared rectangle, its rounding
 * fixed by the rectangle), so on a screen that differs from the memo's
 * only in other rows the search gives this same result. */
struct area_memo {
	uint64_t id;            /* 0: none */
	struct match__prep st;
	int wx0, wy0, wx1, wy1, split;
	double sim;
	int x, y;
};

struct prep_area {
	uint8_t *up;    /* w*h blurred needle pixels, halves rounded up */
	uint8_t *even;  /* the same, halves rounded to even */
	uint8_t *tpl;   /* the template as the needle's cache state gives it */
	int split;      /* tpl columns [0, split) come from even; -1: not built */
	struct area_memo memo;
};

/* Whether m's result holds for this search on s (see struct area_memo). */
static int memo_holds(const struct area_memo *m, const struct match_screen *s, const struct match__prep *st,
		      int wx0, int wy0, int wx1, int wy1, int split)
{
	if (!m->id || (m->id != s->id && (m->id != s->prev_id || (s->chg_y0 < wy1 + 1 && wy0 - 1 < s->chg_y1))))
		return 0;
	return m->wx0 == wx0 && m->wy0 == wy0 && m->wx1 == wx1 && m->wy1 == wy1 && m->split == split &&
	       m->st.valid == st->valid && m->st.x == st->x && m->st.y == st->y &&
	       m->st.w == st->w && m->st.h == st->h;
}

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

int match_needle_prepare(struct needle *n, char *err, size_t errlen)
{
	char ebuf[512];

	if (!err) {
		err = ebuf;
		errlen = sizeof(ebuf);
	}
	return needle_prepare(n, err, errlen);
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
	const struct needle *xn = NULL;
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
		rc = screen_copy_excluded(s);
		if (rc)
			return rc;
		xn = n;
		scene = s->xblur;
		st = &xst;
	} else {
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
			struct match__prep before = *st;
			struct area_memo *m = &np->a[k].memo;
			/* scene->prep(window), then object->prep(area), as
			 * search_TEMPLATE calls them; then its check that the
			 * template fits the window. */
			prep_apply(s, xn, st, scene, wx0, wy0, wx1 - wx0, wy1 - wy0);
			tpl = needle_template(np, &np->a[k], a);
			if (wx1 - wx0 >= a->w && wy1 - wy0 >= a->h) {
				if (memo_holds(m, s, &before, wx0, wy0, wx1, wy1, np->a[k].split)) {
					r->similarity = m->sim;
					r->x = m->x;
					r->y = m->y;
				} else {
					r->similarity = search_area(&s->sc, s->gen, scene, sw, sh, tpl, a->w, a->h,
								    x, y, margin, &r->x, &r->y);
					*m = (struct area_memo){ .id = s->id, .st = before, .wx0 = wx0, .wy0 = wy0,
								 .wx1 = wx1, .wy1 = wy1, .split = np->a[k].split,
								 .sim = r->similarity,
								 .x = r->x, .y = r->y };
				}
				/* carried to the next content with the same rows */
				m->id = s->id;
			}
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
