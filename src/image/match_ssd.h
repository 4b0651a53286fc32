/* SPDX-License-Identifier: MIT */
/* match_ssd.h - exact SSD kernels of the needle search, internal to the
 * image module: the sum of squared differences of a template at a window
 * position, band by band with early exit, in SSE4.1, AVX2 or AVX-512 VNNI
 * (chosen at run time). All integer: every level returns the same value. */
#ifndef VIGIL_MATCH_SSD_H
#define VIGIL_MATCH_SSD_H

#include <stddef.h>
#include <stdint.h>

/* SIMD levels, each a superset of the one before. */
#define MATCH_SIMD_SSE41 0
#define MATCH_SIMD_AVX2  1
#define MATCH_SIMD_VNNI  2  /* AVX-512 F+BW+DQ+VNNI */

/* The best level this CPU runs, capped by match__simd_cap (tests lower
 * the cap to check every level against the others). */
int match__simd_level(void);
extern int match__simd_cap;

/* One search's template against one window. win points at the window's
 * top-left pixel in a scene of stride sw; is/iq are the window's integral
 * images of S and S^2 ((window height + 1) rows of iw = window width + 1),
 * used by the VNNI level, which computes SSD = T^2 - 2 T.S + S^2 from the
 * correlation of S with tq = tpl - 128. */
struct match__ssd {
	const uint8_t *win;
	size_t sw;
	const uint8_t *tpl;
	const int8_t *tq;      /* NULL unless level is MATCH_SIMD_VNNI */
	const int64_t *tt, *ts;  /* sums of tpl^2 and tpl over rows < j */
	const int64_t *is, *iq;
	size_t iw;
	int w, h;
	int band;              /* rows between early-exit checks */
	int nbands;
	const int *border;     /* first rows of the bands, in the order tried */
	int level;
	/* the VNNI block kernel: qw[r * qs + x] holds window bytes x..x+3 of
	 * row r (zeros past the window), tq4[j * nq + q] template bytes
	 * 4q..4q+3 of row j less 128 (zeros past the row) */
	const uint32_t *qw;
	size_t qs;
	const int32_t *tq4;
	int nq;
};

/* Up to MATCH_BLOCK positions of a row are searched together; blocks of
 * a multiple of 16 use the VNNI kernel best. */
#define MATCH_BLOCK 128

/* Fills the fields that depend on the template only (band, level, tq,
 * tt, ts, border) into c; tq (w*h), tt (2h+2: tt then ts) and border (h)
 * are the caller's buffers. */
void match__ssd_prepare(struct match__ssd *c, int8_t *tq, int64_t *tt, int *border);

/* Exact SSD of the template at window position (i, j); once a partial
 * sum over whole bands of rows exceeds bound it returns that partial sum
 * (a lower bound of the SSD, > bound). */
int64_t match__ssd_at(const struct match__ssd *c, int i, int j, int64_t bound);

/* The same from the pixels alone (no integrals, tq or block buffers
 * needed): for a first position before the rest is set up. */
int64_t match__ssd_direct(const struct match__ssd *c, int i, int j, int64_t bound);

/* The SSDs of the n <= MATCH_BLOCK positions (i0 + k, j): out[k] >= 0 is
 * the exact SSD, out[k] < 0 is -lb - 1 for a lower bound lb > bound. out
 * must hold MATCH_BLOCK values (the kernel writes whole vectors). */
void match__ssd_block(const struct match__ssd *c, int i0, int j, int n, int64_t bound, int64_t *out);

/* The block kernel's buffers (VNNI level only, else size 0): the
 * expanded window (qw, depends on the window alone) and the template's
 * quads (tq4); sizes in elements, fill sets c->qw/qs or c->tq4/nq. */
size_t match__ssd_qw_size(const struct match__ssd *c, int ww, int wh);
void match__ssd_qw_fill(struct match__ssd *c, int ww, int wh, uint32_t *qw);
size_t match__ssd_tq4_size(const struct match__ssd *c);
void match__ssd_tq4_fill(struct match__ssd *c, int32_t *tq4);

/* Lower bounds of the SSD at the n positions of a row (s0/s1, q0/q1: the
 * integral rows of S and S^2 at the top and bottom of the template), from
 * the means and deviations (see match_ssd.c), given the template's pixel
 * count N, its sum tsum and VT = N sum(T^2) - tsum^2. Rigorous: each is
 * <= the exact SSD (0 when N is too large to bound in 64 bits). */
#define MATCH_LB_MAX_N 10000000  /* template pixels the bounds handle */
void match__lb_row(int level, const int64_t *s0, const int64_t *s1, const int64_t *q0, const int64_t *q1, int w,
		   int n, int64_t N, int64_t tsum, int64_t VT, int64_t *out);

/* Integral images of S and S^2 over a ww x wh window (rows of ww + 1,
 * a zero first row and column), as match__ssd's is and iq. */
void match__integrals(int level, const uint8_t *win, size_t sw, int ww, int wh, int64_t *is, int64_t *iq);

/* Grey conversion (match_grey) of n RGB pixels, SIMD where available. */
void match__grey_row(const uint8_t *rgb, uint8_t *grey, size_t n);

#endif
