/* SPDX-License-Identifier: MIT */
/* match_ssd.c - the needle search's inner loops: exact integer SSD of a
 * template at a window position (SSE4.1, AVX2, AVX-512 VNNI by run-time
 * dispatch) and the grey conversion. Owns nothing; every level computes
 * the same integers, so the choice never changes a result. */
#include <smmintrin.h>
#include <immintrin.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "image/match.h"
#include "image/match_ssd.h"
#include "util/banned.h" /* last: after every system header */

int match__simd_cap = MATCH_SIMD_VNNI;

int match__simd_level(void)
{
	int level = MATCH_SIMD_SSE41;

	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx2"))
		level = MATCH_SIMD_AVX2;
	if (level == MATCH_SIMD_AVX2 && __builtin_cpu_supports("avx512f") &&
	    __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
	    __builtin_cpu_supports("avx512vnni"))
		level = MATCH_SIMD_VNNI;
	return level < match__simd_cap ? level : match__simd_cap;
}

/* ---- SSE4.1: sum of squared differences of one row ---- */

static inline uint32_t row_ssd_sse(const uint8_t *a, const uint8_t *b, int n)
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

/* A band of rows holds at most 65536 pixels (see match__ssd_prepare), so
 * its SSD, at most 65025 * 65536, fits the uint32 sums. */
static int64_t ssd_at_sse(const struct match__ssd *c, int i, int j, int64_t bound)
{
	const uint8_t *s = c->win + (size_t)j * c->sw + i;
	int64_t acc = 0;
	int r, e;

	for (r = 0; r < c->h; r = e) {
		uint32_t band = 0;
		e = r + c->band < c->h ? r + c->band : c->h;
		for (; r < e; r++)
			band += row_ssd_sse(s + (size_t)r * c->sw, c->tpl + (size_t)r * c->w, c->w);
		acc += band;
		if (acc > bound)
			return acc;
	}
	return acc;
}

/* ---- AVX2: the same with 16 pixels a step ---- */

__attribute__((target("avx2")))
static int64_t ssd_at_avx2(const struct match__ssd *c, int i, int j, int64_t bound)
{
	const uint8_t *s = c->win + (size_t)j * c->sw + i;
	int64_t acc = 0;
	int r, e, w = c->w;

	for (r = 0; r < c->h; r = e) {
		__m256i a0 = _mm256_setzero_si256(), a1 = _mm256_setzero_si256();
		__m128i q;
		uint32_t band = 0;
		e = r + c->band < c->h ? r + c->band : c->h;
		for (; r < e; r++) {
			const uint8_t *sa = s + (size_t)r * c->sw, *tb = c->tpl + (size_t)r * w;
			int k = 0;
			for (; k + 32 <= w; k += 32) {
				__m256i d0 = _mm256_sub_epi16(
					_mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(const void *)(sa + k))),
					_mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(const void *)(tb + k))));
				__m256i d1 = _mm256_sub_epi16(
					_mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(const void *)(sa + k + 16))),
					_mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(const void *)(tb + k + 16))));
				a0 = _mm256_add_epi32(a0, _mm256_madd_epi16(d0, d0));
				a1 = _mm256_add_epi32(a1, _mm256_madd_epi16(d1, d1));
			}
			if (k < w)
				band += row_ssd_sse(sa + k, tb + k, w - k);
		}
		a0 = _mm256_add_epi32(a0, a1);
		q = _mm_add_epi32(_mm256_castsi256_si128(a0), _mm256_extracti128_si256(a0, 1));
		q = _mm_add_epi32(q, _mm_shuffle_epi32(q, 0x4e));
		q = _mm_add_epi32(q, _mm_shuffle_epi32(q, 0xb1));
		band += (uint32_t)_mm_cvtsi128_si32(q);
		acc += band;
		if (acc > bound)
			return acc;
	}
	return acc;
}

/* ---- AVX-512 VNNI: SSD = T^2 - 2 (S.(T - 128) + 128 S) + S^2 ----
 * vpdpbusd multiplies unsigned S bytes by signed tq = T - 128 bytes and
 * adds four products into each 32-bit lane without saturation. A band's
 * |S.tq| <= 255 * 128 * 65536 < 2^31, so the int32 lanes cannot wrap;
 * the sums of S and S^2 over the band come from the window's integrals. */

__attribute__((target("avx512f,avx512bw,avx512vnni")))
static int64_t ssd_at_vnni(const struct match__ssd *c, int i, int j, int64_t bound)
{
	const uint8_t *s = c->win + (size_t)j * c->sw + i;
	size_t iw = c->iw, xl = (size_t)i, xr = (size_t)i + (size_t)c->w;
	int64_t acc = 0;
	int r, r0, e, w = c->w, tail = w & 63, full = w - tail;
	__mmask64 tm = tail ? (((__mmask64)1 << tail) - 1) : 0;

	for (r0 = 0; r0 < c->h; r0 = e) {
		__m512i a0 = _mm512_setzero_si512(), a1 = _mm512_setzero_si512();
		int64_t corr, s1, s2;
		size_t top, bot;
		e = r0 + c->band < c->h ? r0 + c->band : c->h;
		for (r = r0; r < e; r++) {
			const uint8_t *sa = s + (size_t)r * c->sw;
			const int8_t *tb = c->tq + (size_t)r * w;
			__m512i t;
			int k = 0;
			for (; k + 128 <= full; k += 128) {
				a0 = _mm512_dpbusd_epi32(a0, _mm512_loadu_si512(sa + k), _mm512_loadu_si512(tb + k));
				a1 = _mm512_dpbusd_epi32(a1, _mm512_loadu_si512(sa + k + 64),
							 _mm512_loadu_si512(tb + k + 64));
			}
			if (k < full) {
				a1 = _mm512_dpbusd_epi32(a1, _mm512_loadu_si512(sa + k), _mm512_loadu_si512(tb + k));
				k += 64;
			}
			if (tail)
				a0 = _mm512_dpbusd_epi32(a0, _mm512_maskz_loadu_epi8(tm, sa + k),
							 _mm512_maskz_loadu_epi8(tm, tb + k));
			/* swap, so that rows of one chunk alternate accumulators */
			t = a0;
			a0 = a1;
			a1 = t;
		}
		corr = (int64_t)_mm512_reduce_add_epi32(_mm512_add_epi32(a0, a1));
		top = ((size_t)j + (size_t)r0) * iw;
		bot = ((size_t)j + (size_t)e) * iw;
		s1 = c->is[bot + xr] - c->is[top + xr] - c->is[bot + xl] + c->is[top + xl];
		s2 = c->iq[bot + xr] - c->iq[top + xr] - c->iq[bot + xl] + c->iq[top + xl];
		acc += c->tt[e] - c->tt[r0] + s2 - 2 * (corr + 128 * s1);
		if (acc > bound)
			return acc;
	}
	return acc;
}

/* ---- lower bounds ---- */

/* ||S - T||^2 >= N (mean S - mean T)^2 + (|S~| - |T~|)^2, S~ and T~ the
 * deviations from the means. In integers: with A = sum S, B = sum S^2,
 * VS = N B - A^2 and VT alike for the template, d = A - sum T,
 *     N * bound = d^2 + (sqrt(VS) - sqrt(VT))^2.
 * VS, VT and d are exact (int64: N B <= 65025 N^2 < 2^63 for N up to
 * MATCH_LB_MAX_N); the double arithmetic after them errs by less than
 * 20 ulps of (d^2 + VS + VT) / N, so 1e-13 of that plus 1 is taken off.
 * Returns floor(bound) >= 0. */
static inline int64_t lb_one(int64_t A, int64_t B, int64_t N, int64_t tsum, double rVT, double vt, double invN)
{
	int64_t VS = N * B - A * A, d = A - tsum;
	double dd = (double)d * (double)d, vs = (double)VS, e = sqrt(vs > 0 ? vs : 0) - rVT, lb;

	lb = (dd + e * e) * invN - 1e-13 * (dd + vs + vt) * invN - 1;
	return lb > 0 ? (int64_t)lb : 0;
}

static void lb_row_scalar(const int64_t *s0, const int64_t *s1, const int64_t *q0, const int64_t *q1, int w,
			  int n, int64_t N, int64_t tsum, int64_t VT, int64_t *out)
{
	double vt = (double)VT, rVT = sqrt(vt), invN = 1.0 / (double)N;
	int i;

	for (i = 0; i < n; i++)
		out[i] = N > MATCH_LB_MAX_N ? 0 :
			 lb_one(s1[i + w] - s0[i + w] - s1[i] + s0[i], q1[i + w] - q0[i + w] - q1[i] + q0[i],
				N, tsum, rVT, vt, invN);
}

__attribute__((target("avx512f,avx512dq")))
static inline __m512i lb_vec(__m512i A, __m512i B, __m512i vN, __m512i ts, __m512d rVT, __m512d vt, __m512d invN)
{
	__m512i VS = _mm512_sub_epi64(_mm512_mullo_epi64(vN, B), _mm512_mullo_epi64(A, A));
	__m512d d = _mm512_cvtepi64_pd(_mm512_sub_epi64(A, ts)), z = _mm512_setzero_pd();
	__m512d vs = _mm512_cvtepi64_pd(VS), dd = _mm512_mul_pd(d, d), e, lb;

	e = _mm512_sub_pd(_mm512_sqrt_pd(_mm512_max_pd(vs, z)), rVT);
	lb = _mm512_mul_pd(_mm512_add_pd(dd, _mm512_mul_pd(e, e)), invN);
	lb = _mm512_sub_pd(lb, _mm512_mul_pd(_mm512_mul_pd(_mm512_set1_pd(1e-13), _mm512_add_pd(_mm512_add_pd(dd, vs), vt)),
					     invN));
	lb = _mm512_max_pd(_mm512_sub_pd(lb, _mm512_set1_pd(1)), z);
	return _mm512_cvttpd_epi64(lb);
}

__attribute__((target("avx512f,avx512dq")))
static void lb_row_avx512(const int64_t *s0, const int64_t *s1, const int64_t *q0, const int64_t *q1, int w,
			  int n, int64_t N, int64_t tsum, int64_t VT, int64_t *out)
{
	const __m512i vN = _mm512_set1_epi64(N), ts = _mm512_set1_epi64(tsum);
	const __m512d vt = _mm512_set1_pd((double)VT), rVT = _mm512_set1_pd(sqrt((double)VT));
	const __m512d invN = _mm512_set1_pd(1.0 / (double)N);
	int i = 0;

	for (; i + 8 <= n; i += 8) {
		__m512i A = _mm512_add_epi64(_mm512_sub_epi64(_mm512_loadu_si512(s1 + i + w), _mm512_loadu_si512(s0 + i + w)),
					     _mm512_sub_epi64(_mm512_loadu_si512(s0 + i), _mm512_loadu_si512(s1 + i)));
		__m512i B = _mm512_add_epi64(_mm512_sub_epi64(_mm512_loadu_si512(q1 + i + w), _mm512_loadu_si512(q0 + i + w)),
					     _mm512_sub_epi64(_mm512_loadu_si512(q0 + i), _mm512_loadu_si512(q1 + i)));
		_mm512_storeu_si512(out + i, lb_vec(A, B, vN, ts, rVT, vt, invN));
	}
	lb_row_scalar(s0 + i, s1 + i, q0 + i, q1 + i, w, n - i, N, tsum, VT, out + i);
}

void match__lb_row(int level, const int64_t *s0, const int64_t *s1, const int64_t *q0, const int64_t *q1, int w,
		   int n, int64_t N, int64_t tsum, int64_t VT, int64_t *out)
{
	if (level == MATCH_SIMD_VNNI && N <= MATCH_LB_MAX_N)
		lb_row_avx512(s0, s1, q0, q1, w, n, N, tsum, VT, out);
	else
		lb_row_scalar(s0, s1, q0, q1, w, n, N, tsum, VT, out);
}

/* The block kernel: 16 positions a vector, up to 8 vectors at once. For
 * every template quad q of row r, lane k of the vector at offset off adds
 * S[off + k + 4q .. + 3] . tq4[q] (vpdpbusd), reading the quads from the
 * expanded window. Bands go in the order of c->border (the template's
 * busiest first); after each band the int32 lanes (|sum| < 2^31 for a
 * band) go into int64 correlations, and a vector stops once every one of
 * its positions has a partial SSD above bound. */
__attribute__((target("avx512f,avx512bw,avx512vnni"), always_inline))
static inline void band_vnni(const struct match__ssd *c, int i0, int j, int r0, int e, const int *off,
			     __m512i *acc, const int NB)
{
	int b, r;

#pragma GCC unroll 8
	for (b = 0; b < NB; b++)
		acc[b] = _mm512_setzero_si512();
	for (r = r0; r < e; r++) {
		const uint32_t *qrow = c->qw + (size_t)(j + r) * c->qs + i0;
		const int32_t *trow = c->tq4 + (size_t)r * c->nq;
		const uint32_t *qb[8];
		int q;
#pragma GCC unroll 8
		for (b = 0; b < NB; b++)
			qb[b] = qrow + off[b];
		for (q = 0; q < c->nq; q++) {
			__m512i t = _mm512_set1_epi32(trow[q]);
#pragma GCC unroll 8
			for (b = 0; b < NB; b++)
				acc[b] = _mm512_dpbusd_epi32(acc[b], _mm512_loadu_si512(qb[b] + 4 * q), t);
		}
	}
}

__attribute__((target("avx512f,avx512bw,avx512vnni")))
static void band_vnni_any(const struct match__ssd *c, int i0, int j, int r0, int e, const int *off, int nb,
			  __m512i *acc)
{
	switch (nb) {
	case 8: band_vnni(c, i0, j, r0, e, off, acc, 8); break;
	case 7: band_vnni(c, i0, j, r0, e, off, acc, 7); break;
	case 6: band_vnni(c, i0, j, r0, e, off, acc, 6); break;
	case 5: band_vnni(c, i0, j, r0, e, off, acc, 5); break;
	case 4: band_vnni(c, i0, j, r0, e, off, acc, 4); break;
	case 3: band_vnni(c, i0, j, r0, e, off, acc, 3); break;
	case 2: band_vnni(c, i0, j, r0, e, off, acc, 2); break;
	default: band_vnni(c, i0, j, r0, e, off, acc, 1); break;
	}
}

__attribute__((target("avx512f,avx512bw,avx512dq,avx512vnni")))
static void block_vnni(const struct match__ssd *c, int i0, int j, int n, int64_t bound, int64_t *out)
{
	int64_t corr[MATCH_BLOCK] __attribute__((aligned(64)));
	int64_t s1[MATCH_BLOCK] __attribute__((aligned(64)));
	int64_t s2[MATCH_BLOCK] __attribute__((aligned(64)));
	const int64_t *is = c->is, *iq = c->iq;
	__m512i acc[8];
	int64_t t1[MATCH_BLOCK] __attribute__((aligned(64)));
	int64_t t2[MATCH_BLOCK] __attribute__((aligned(64)));
	int off[8], nact = 0, b, k, bi, rows = 0;
	int64_t tts = 0, tss = 0;
	int lbrem = (int64_t)c->w * c->h <= MATCH_LB_MAX_N;

	for (b = 0; b * 16 < n; b++)
		off[nact++] = b * 16;
	memset(corr, 0, sizeof(corr));
	memset(s1, 0, sizeof(s1));
	memset(s2, 0, sizeof(s2));
	/* sums of S and S^2 over each whole footprint, for the bound of the
	 * rows still to do */
	if (lbrem) {
		const int64_t *it = is + (size_t)j * c->iw + i0, *ib = is + ((size_t)j + (size_t)c->h) * c->iw + i0;
		const int64_t *qt = iq + (size_t)j * c->iw + i0, *qb = iq + ((size_t)j + (size_t)c->h) * c->iw + i0;
		for (k = 0; k < nact * 16; k += 8) {
			__mmask8 m = (__mmask8)(k + 8 <= n ? 0xff : k >= n ? 0 : (1u << (n - k)) - 1);
			_mm512_store_si512(t1 + k, _mm512_sub_epi64(
				_mm512_sub_epi64(_mm512_maskz_loadu_epi64(m, ib + k + c->w), _mm512_maskz_loadu_epi64(m, it + k + c->w)),
				_mm512_sub_epi64(_mm512_maskz_loadu_epi64(m, ib + k), _mm512_maskz_loadu_epi64(m, it + k))));
			_mm512_store_si512(t2 + k, _mm512_sub_epi64(
				_mm512_sub_epi64(_mm512_maskz_loadu_epi64(m, qb + k + c->w), _mm512_maskz_loadu_epi64(m, qt + k + c->w)),
				_mm512_sub_epi64(_mm512_maskz_loadu_epi64(m, qb + k), _mm512_maskz_loadu_epi64(m, qt + k))));
		}
	}
	for (bi = 0; bi < c->nbands; bi++) {
		int r0 = c->border[bi], e = r0 + c->band < c->h ? r0 + c->band : c->h, keep = 0;
		const int64_t *ist = is + ((size_t)j + (size_t)r0) * c->iw + i0;
		const int64_t *isb = is + ((size_t)j + (size_t)e) * c->iw + i0;
		const int64_t *iqt = iq + ((size_t)j + (size_t)r0) * c->iw + i0;
		const int64_t *iqb = iq + ((size_t)j + (size_t)e) * c->iw + i0;
		__m512i vb = _mm512_set1_epi64(bound), vt, vN = _mm512_setzero_si512(), vts = vN;
		__m512d rVT = _mm512_setzero_pd(), vVT = rVT, invN = rVT;
		int last;

		band_vnni_any(c, i0, j, r0, e, off, nact, acc);
		tts += c->tt[e] - c->tt[r0];
		tss += c->ts[e] - c->ts[r0];
		rows += e - r0;
		vt = _mm512_set1_epi64(tts);
		last = rows == c->h;
		if (lbrem && !last) {
			/* the template's part still to do: N, sum, VT */
			int64_t nr = (int64_t)(c->h - rows) * c->w, tr1 = c->ts[c->h] - tss, tr2 = c->tt[c->h] - tts;
			vN = _mm512_set1_epi64(nr);
			vts = _mm512_set1_epi64(tr1);
			vVT = _mm512_set1_pd((double)(nr * tr2 - tr1 * tr1));
			rVT = _mm512_sqrt_pd(vVT);
			invN = _mm512_set1_pd(1.0 / (double)nr);
		}
		for (b = 0; b < nact; b++) {
			int o = off[b], h2, done = 1;
			__m512i lohi[2];
			lohi[0] = _mm512_cvtepi32_epi64(_mm512_castsi512_si256(acc[b]));
			lohi[1] = _mm512_cvtepi32_epi64(_mm512_extracti64x4_epi64(acc[b], 1));
			for (h2 = 0; h2 < 2; h2++) {
				int x = o + 8 * h2;
				__m512i vc = _mm512_add_epi64(_mm512_load_si512(corr + x), lohi[h2]);
				/* lanes past n are masked: their integrals may lie past the array */
				__mmask8 m = (__mmask8)(x + 8 <= n ? 0xff : x >= n ? 0 : (1u << (n - x)) - 1);
				__m512i v1 = _mm512_add_epi64(_mm512_load_si512(s1 + x), _mm512_sub_epi64(
					_mm512_sub_epi64(_mm512_maskz_loadu_epi64(m, isb + x + c->w),
							 _mm512_maskz_loadu_epi64(m, ist + x + c->w)),
					_mm512_sub_epi64(_mm512_maskz_loadu_epi64(m, isb + x),
							 _mm512_maskz_loadu_epi64(m, ist + x))));
				__m512i v2 = _mm512_add_epi64(_mm512_load_si512(s2 + x), _mm512_sub_epi64(
					_mm512_sub_epi64(_mm512_maskz_loadu_epi64(m, iqb + x + c->w),
							 _mm512_maskz_loadu_epi64(m, iqt + x + c->w)),
					_mm512_sub_epi64(_mm512_maskz_loadu_epi64(m, iqb + x),
							 _mm512_maskz_loadu_epi64(m, iqt + x))));
				/* partial SSD = T^2 + S^2 - 2 (corr + 128 S), plus the
				 * bound of the rest (match__lb_row's, on the rows to do) */
				__m512i ps = _mm512_sub_epi64(_mm512_add_epi64(vt, v2),
							      _mm512_slli_epi64(_mm512_add_epi64(vc, _mm512_slli_epi64(v1, 7)), 1));
				if (lbrem && !last)
					ps = _mm512_add_epi64(ps, lb_vec(_mm512_sub_epi64(_mm512_load_si512(t1 + x), v1),
									 _mm512_sub_epi64(_mm512_load_si512(t2 + x), v2),
									 vN, vts, rVT, vVT, invN));
				_mm512_store_si512(corr + x, vc);
				_mm512_store_si512(s1 + x, v1);
				_mm512_store_si512(s2 + x, v2);
				if (_mm512_mask_cmple_epi64_mask(m, ps, vb))
					done = 0;
				/* out (MATCH_BLOCK long) holds the partial sums until the end */
				_mm512_storeu_si512(out + x, ps);
			}
			if (!last && done) {
				for (k = o; k < o + 16 && k < n; k++)
					out[k] = -out[k] - 1;
				continue;
			}
			off[keep++] = o;
		}
		nact = keep;
		if (!nact)
			return;
	}
}

void match__ssd_block(const struct match__ssd *c, int i0, int j, int n, int64_t bound, int64_t *out)
{
	int k;

	if (c->level == MATCH_SIMD_VNNI && c->qw && c->tq4) {
		block_vnni(c, i0, j, n, bound, out);
		return;
	}
	for (k = 0; k < n; k++) {
		int64_t v = match__ssd_at(c, i0 + k, j, bound);
		out[k] = v > bound ? -v - 1 : v;
	}
}

size_t match__ssd_qw_size(const struct match__ssd *c, int ww, int wh)
{
	if (c->level != MATCH_SIMD_VNNI)
		return 0;
	return ((size_t)ww + MATCH_BLOCK + 8) * (size_t)wh;
}

/* quads x..x+7 of a row: each lane shuffles 7 of the 16 bytes it loaded;
 * returns how far it got (every read stays inside the row) */
__attribute__((target("avx2")))
static size_t qw_row_avx2(const uint8_t *s, uint32_t *q, size_t ww)
{
	const __m256i sh = _mm256_broadcastsi128_si256(_mm_setr_epi8(0, 1, 2, 3, 1, 2, 3, 4, 2, 3, 4, 5, 3, 4, 5, 6));
	size_t x = 0;

	for (; x + 20 <= ww; x += 8) {
		__m256i v = _mm256_loadu2_m128i((const __m128i *)(const void *)(s + x + 4),
						(const __m128i *)(const void *)(s + x));
		_mm256_storeu_si256((__m256i *)(void *)(q + x), _mm256_shuffle_epi8(v, sh));
	}
	return x;
}

void match__ssd_qw_fill(struct match__ssd *c, int ww, int wh, uint32_t *qw)
{
	size_t qs = (size_t)ww + MATCH_BLOCK + 8, x;
	int r;

	for (r = 0; r < wh; r++) {
		const uint8_t *s = c->win + (size_t)r * c->sw;
		uint32_t *q = qw + (size_t)r * qs;
		for (x = qw_row_avx2(s, q, (size_t)ww); x + 3 < (size_t)ww; x++) {
			uint32_t v;
			memcpy(&v, s + x, 4);
			q[x] = v;
		}
		for (; x < qs; x++) {
			uint32_t v = 0;
			size_t k;
			for (k = 0; k < 4 && x + k < (size_t)ww; k++)
				v |= (uint32_t)s[x + k] << (8 * k);
			q[x] = v;
		}
	}
	c->qw = qw;
	c->qs = qs;
}

size_t match__ssd_tq4_size(const struct match__ssd *c)
{
	if (c->level != MATCH_SIMD_VNNI)
		return 0;
	return ((size_t)c->w + 3) / 4 * (size_t)c->h;
}

void match__ssd_tq4_fill(struct match__ssd *c, int32_t *tq4)
{
	size_t nq = ((size_t)c->w + 3) / 4, x;
	int r;

	for (r = 0; r < c->h; r++) {
		const uint8_t *t = c->tpl + (size_t)r * c->w;
		for (x = 0; x < nq; x++) {
			uint32_t v = 0;
			size_t k;
			for (k = 0; k < 4 && 4 * x + k < (size_t)c->w; k++)
				v |= (uint32_t)(uint8_t)(t[4 * x + k] - 128) << (8 * k);
			tq4[(size_t)r * nq + x] = (int32_t)v;
		}
	}
	c->tq4 = tq4;
	c->nq = (int)nq;
}

void match__ssd_prepare(struct match__ssd *c, int8_t *tq, int64_t *tt, int *border)
{
	size_t k, n = (size_t)c->w * (size_t)c->h;
	double *energy;
	int j, b;

	c->level = match__simd_level();
	/* a band: rows of at most 4096 pixels between early-exit checks (the
	 * kernels' 32-bit sums need at most 65536), and at least 8 bands when
	 * the template has the rows: an early check prunes most positions */
	c->band = 4096 / c->w;
	if (c->band > (c->h + 7) / 8)
		c->band = (c->h + 7) / 8;
	if (c->band < 1)
		c->band = 1;
	tt[0] = 0;
	tt[c->h + 1] = 0;
	for (j = 0; j < c->h; j++) {
		const uint8_t *t = c->tpl + (size_t)j * c->w;
		int64_t q = 0, p = 0;
		int x;
		for (x = 0; x < c->w; x++) {
			p += t[x];
			q += (int64_t)t[x] * t[x];
		}
		tt[j + 1] = tt[j] + q;
		tt[c->h + 2 + j] = tt[c->h + 1 + j] + p;
	}
	c->tt = tt;
	c->ts = tt + c->h + 1;
	/* bands with the most template detail first: their partial sums grow
	 * fastest where the template does not match (a heuristic; any order
	 * gives the same results) */
	c->nbands = (c->h + c->band - 1) / c->band;
	c->border = border;
	energy = malloc((size_t)c->nbands * sizeof(*energy));
	for (b = 0; b < c->nbands; b++) {
		int r0 = b * c->band, e = r0 + c->band < c->h ? r0 + c->band : c->h, i = b;
		double sum = 0, cnt = (double)(e - r0) * c->w, en;
		for (j = r0; j < e; j++) {
			const uint8_t *t = c->tpl + (size_t)j * c->w;
			int x;
			for (x = 0; x < c->w; x++)
				sum += t[x];
		}
		en = (double)(tt[e] - tt[r0]) - sum * sum / cnt;
		if (energy) {
			while (i > 0 && energy[i - 1] < en) {
				energy[i] = energy[i - 1];
				border[i] = border[i - 1];
				i--;
			}
			energy[i] = en;
		}
		border[i] = r0;
	}
	free(energy);
	c->tq = NULL;
	if (c->level == MATCH_SIMD_VNNI) {
		for (k = 0; k < n; k++)
			tq[k] = (int8_t)((int)c->tpl[k] - 128);
		c->tq = tq;
	}
}

int64_t match__ssd_direct(const struct match__ssd *c, int i, int j, int64_t bound)
{
	return c->level >= MATCH_SIMD_AVX2 ? ssd_at_avx2(c, i, j, bound) : ssd_at_sse(c, i, j, bound);
}

int64_t match__ssd_at(const struct match__ssd *c, int i, int j, int64_t bound)
{
	switch (c->level) {
	case MATCH_SIMD_VNNI:
		return ssd_at_vnni(c, i, j, bound);
	case MATCH_SIMD_AVX2:
		return ssd_at_avx2(c, i, j, bound);
	default:
		return ssd_at_sse(c, i, j, bound);
	}
}

/* ---- integral images ---- */

/* cs[i] = ps[i] + rs[i] and cq alike, 4 at a time (the row prefix sums
 * rs, rq fit 32 bits: a row holds at most 16384 pixels). */
__attribute__((target("avx2")))
static int integ_add_avx2(const int64_t *ps, const int64_t *pq, const int32_t *rs, const int32_t *rq,
			  int64_t *cs, int64_t *cq, int n)
{
	int i = 0;

	for (; i + 4 <= n; i += 4) {
		__m256i s = _mm256_cvtepi32_epi64(_mm_loadu_si128((const __m128i *)(const void *)(rs + i)));
		__m256i q = _mm256_cvtepi32_epi64(_mm_loadu_si128((const __m128i *)(const void *)(rq + i)));
		_mm256_storeu_si256((__m256i *)(void *)(cs + i),
				    _mm256_add_epi64(_mm256_loadu_si256((const __m256i *)(const void *)(ps + i)), s));
		_mm256_storeu_si256((__m256i *)(void *)(cq + i),
				    _mm256_add_epi64(_mm256_loadu_si256((const __m256i *)(const void *)(pq + i)), q));
	}
	return i;
}

void match__integrals(int level, const uint8_t *win, size_t sw, int ww, int wh, int64_t *is, int64_t *iq)
{
	size_t iw = (size_t)ww + 1;
	int32_t *rs = malloc(iw * sizeof(*rs)), *rq = malloc(iw * sizeof(*rq));
	int i, j;

	for (i = 0; i <= ww; i++)
		is[i] = iq[i] = 0;
	for (j = 1; j <= wh; j++) {
		const uint8_t *r = win + (size_t)(j - 1) * sw;
		const int64_t *ps = is + (size_t)(j - 1) * iw, *pq = iq + (size_t)(j - 1) * iw;
		int64_t *cs = is + (size_t)j * iw, *cq = iq + (size_t)j * iw;
		int32_t a = 0, q = 0;
		if (!rs || !rq) {
			/* out of memory for the row sums: all in one pass */
			int64_t s64 = 0, q64 = 0;
			cs[0] = cq[0] = 0;
			for (i = 1; i <= ww; i++) {
				s64 += r[i - 1];
				q64 += r[i - 1] * r[i - 1];
				cs[i] = ps[i] + s64;
				cq[i] = pq[i] + q64;
			}
			continue;
		}
		rs[0] = rq[0] = 0;
		for (i = 1; i <= ww; i++) {
			a += r[i - 1];
			q += r[i - 1] * r[i - 1];
			rs[i] = a;
			rq[i] = q;
		}
		i = level >= MATCH_SIMD_AVX2 ? integ_add_avx2(ps, pq, rs, rq, cs, cq, (int)iw) : 0;
		for (; i <= ww; i++) {
			cs[i] = ps[i] + rs[i];
			cq[i] = pq[i] + rq[i];
		}
	}
	free(rs);
	free(rq);
}

/* ---- grey ---- */

/* The same as below with AVX2: each 128-bit lane does what the SSE code
 * does for one group of 16 pixels (byte shuffles work within lanes). */
__attribute__((target("avx2")))
static size_t grey_avx2(const uint8_t *rgb, uint8_t *grey, size_t n)
{
	const __m256i wrg = _mm256_set1_epi32(4899 | (9617 << 16));
	const __m256i wb1 = _mm256_set1_epi32(1868 | (8192 << 16));
	const __m256i one = _mm256_set1_epi16(1), z = _mm256_setzero_si256();
	const __m256i ra = _mm256_broadcastsi128_si256(_mm_setr_epi8(0, 3, 6, 9, 12, 15, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1));
	const __m256i rb = _mm256_broadcastsi128_si256(_mm_setr_epi8(-1, -1, -1, -1, -1, -1, 2, 5, 8, 11, 14, -1, -1, -1, -1, -1));
	const __m256i rc = _mm256_broadcastsi128_si256(_mm_setr_epi8(-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 1, 4, 7, 10, 13));
	const __m256i ga = _mm256_broadcastsi128_si256(_mm_setr_epi8(1, 4, 7, 10, 13, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1));
	const __m256i gb = _mm256_broadcastsi128_si256(_mm_setr_epi8(-1, -1, -1, -1, -1, 0, 3, 6, 9, 12, 15, -1, -1, -1, -1, -1));
	const __m256i gc = _mm256_broadcastsi128_si256(_mm_setr_epi8(-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 2, 5, 8, 11, 14));
	const __m256i ba = _mm256_broadcastsi128_si256(_mm_setr_epi8(2, 5, 8, 11, 14, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1));
	const __m256i bb = _mm256_broadcastsi128_si256(_mm_setr_epi8(-1, -1, -1, -1, -1, 1, 4, 7, 10, 13, -1, -1, -1, -1, -1, -1));
	const __m256i bc = _mm256_broadcastsi128_si256(_mm_setr_epi8(-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 0, 3, 6, 9, 12, 15));
	size_t i = 0;

	for (; i + 32 <= n; i += 32) {
		const uint8_t *p = rgb + 3 * i;
		/* lane 0: pixels i..i+15, lane 1: pixels i+16..i+31 */
		__m256i a = _mm256_loadu2_m128i((const __m128i *)(const void *)(p + 48), (const __m128i *)(const void *)p);
		__m256i b = _mm256_loadu2_m128i((const __m128i *)(const void *)(p + 64), (const __m128i *)(const void *)(p + 16));
		__m256i c = _mm256_loadu2_m128i((const __m128i *)(const void *)(p + 80), (const __m128i *)(const void *)(p + 32));
		__m256i r = _mm256_or_si256(_mm256_or_si256(_mm256_shuffle_epi8(a, ra), _mm256_shuffle_epi8(b, rb)),
					    _mm256_shuffle_epi8(c, rc));
		__m256i g = _mm256_or_si256(_mm256_or_si256(_mm256_shuffle_epi8(a, ga), _mm256_shuffle_epi8(b, gb)),
					    _mm256_shuffle_epi8(c, gc));
		__m256i bl = _mm256_or_si256(_mm256_or_si256(_mm256_shuffle_epi8(a, ba), _mm256_shuffle_epi8(b, bb)),
					     _mm256_shuffle_epi8(c, bc));
		__m256i rg_lo = _mm256_unpacklo_epi8(r, g), rg_hi = _mm256_unpackhi_epi8(r, g);
		__m256i b_lo = _mm256_unpacklo_epi8(bl, z), b_hi = _mm256_unpackhi_epi8(bl, z);
		__m256i b0 = _mm256_unpacklo_epi16(b_lo, one), b1 = _mm256_unpackhi_epi16(b_lo, one);
		__m256i b2 = _mm256_unpacklo_epi16(b_hi, one), b3 = _mm256_unpackhi_epi16(b_hi, one);
		__m256i rg0 = _mm256_unpacklo_epi8(rg_lo, z), rg1 = _mm256_unpackhi_epi8(rg_lo, z);
		__m256i rg2 = _mm256_unpacklo_epi8(rg_hi, z), rg3 = _mm256_unpackhi_epi8(rg_hi, z);
		__m256i v0 = _mm256_srli_epi32(_mm256_add_epi32(_mm256_madd_epi16(rg0, wrg), _mm256_madd_epi16(b0, wb1)), 14);
		__m256i v1 = _mm256_srli_epi32(_mm256_add_epi32(_mm256_madd_epi16(rg1, wrg), _mm256_madd_epi16(b1, wb1)), 14);
		__m256i v2 = _mm256_srli_epi32(_mm256_add_epi32(_mm256_madd_epi16(rg2, wrg), _mm256_madd_epi16(b2, wb1)), 14);
		__m256i v3 = _mm256_srli_epi32(_mm256_add_epi32(_mm256_madd_epi16(rg3, wrg), _mm256_madd_epi16(b3, wb1)), 14);
		__m256i out = _mm256_packus_epi16(_mm256_packs_epi32(v0, v1), _mm256_packs_epi32(v2, v3));
		_mm256_storeu2_m128i((__m128i *)(void *)(grey + i + 16), (__m128i *)(void *)(grey + i), out);
	}
	return i;
}

/* 16 RGB pixels: gather each channel with byte shuffles, then
 * r*4899 + g*9617 + b*1868 + 8192 >> 14 in 32-bit lanes, as match_grey. */
void match__grey_row(const uint8_t *rgb, uint8_t *grey, size_t n)
{
	const __m128i wrg = _mm_set1_epi32(4899 | (9617 << 16));
	const __m128i wb1 = _mm_set1_epi32(1868 | (8192 << 16));
	const __m128i one = _mm_set1_epi16(1);
	size_t i = 0;

	if (match__simd_level() >= MATCH_SIMD_AVX2)
		i = grey_avx2(rgb, grey, n);
	for (; i + 16 <= n; i += 16) {
		const uint8_t *p = rgb + 3 * i;
		__m128i a = _mm_loadu_si128((const __m128i *)(const void *)p);
		__m128i b = _mm_loadu_si128((const __m128i *)(const void *)(p + 16));
		__m128i c = _mm_loadu_si128((const __m128i *)(const void *)(p + 32));
		__m128i r = _mm_or_si128(_mm_or_si128(
			_mm_shuffle_epi8(a, _mm_setr_epi8(0, 3, 6, 9, 12, 15, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1)),
			_mm_shuffle_epi8(b, _mm_setr_epi8(-1, -1, -1, -1, -1, -1, 2, 5, 8, 11, 14, -1, -1, -1, -1, -1))),
			_mm_shuffle_epi8(c, _mm_setr_epi8(-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 1, 4, 7, 10, 13)));
		__m128i g = _mm_or_si128(_mm_or_si128(
			_mm_shuffle_epi8(a, _mm_setr_epi8(1, 4, 7, 10, 13, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1)),
			_mm_shuffle_epi8(b, _mm_setr_epi8(-1, -1, -1, -1, -1, 0, 3, 6, 9, 12, 15, -1, -1, -1, -1, -1))),
			_mm_shuffle_epi8(c, _mm_setr_epi8(-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 2, 5, 8, 11, 14)));
		__m128i bl = _mm_or_si128(_mm_or_si128(
			_mm_shuffle_epi8(a, _mm_setr_epi8(2, 5, 8, 11, 14, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1)),
			_mm_shuffle_epi8(b, _mm_setr_epi8(-1, -1, -1, -1, -1, 1, 4, 7, 10, 13, -1, -1, -1, -1, -1, -1))),
			_mm_shuffle_epi8(c, _mm_setr_epi8(-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 0, 3, 6, 9, 12, 15)));
		__m128i z = _mm_setzero_si128();
		__m128i rg_lo = _mm_unpacklo_epi8(r, g), rg_hi = _mm_unpackhi_epi8(r, g);
		__m128i b_lo = _mm_unpacklo_epi8(bl, z), b_hi = _mm_unpackhi_epi8(bl, z);
		/* (b, 1) word pairs: b | 1 << 16 */
		__m128i b0 = _mm_unpacklo_epi16(b_lo, one), b1 = _mm_unpackhi_epi16(b_lo, one);
		__m128i b2 = _mm_unpacklo_epi16(b_hi, one), b3 = _mm_unpackhi_epi16(b_hi, one);
		__m128i rg0 = _mm_unpacklo_epi8(rg_lo, z), rg1 = _mm_unpackhi_epi8(rg_lo, z);
		__m128i rg2 = _mm_unpacklo_epi8(rg_hi, z), rg3 = _mm_unpackhi_epi8(rg_hi, z);
		__m128i v0 = _mm_srli_epi32(_mm_add_epi32(_mm_madd_epi16(rg0, wrg), _mm_madd_epi16(b0, wb1)), 14);
		__m128i v1 = _mm_srli_epi32(_mm_add_epi32(_mm_madd_epi16(rg1, wrg), _mm_madd_epi16(b1, wb1)), 14);
		__m128i v2 = _mm_srli_epi32(_mm_add_epi32(_mm_madd_epi16(rg2, wrg), _mm_madd_epi16(b2, wb1)), 14);
		__m128i v3 = _mm_srli_epi32(_mm_add_epi32(_mm_madd_epi16(rg3, wrg), _mm_madd_epi16(b3, wb1)), 14);
		_mm_storeu_si128((__m128i *)(void *)(grey + i),
				 _mm_packus_epi16(_mm_packs_epi32(v0, v1), _mm_packs_epi32(v2, v3)));
	}
	for (; i < n; i++)
		grey[i] = match_grey(rgb[3 * i], rgb[3 * i + 1], rgb[3 * i + 2]);
}
