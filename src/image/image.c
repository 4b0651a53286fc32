/* SPDX-License-Identifier: MIT */
/* image.c - RGB images: PNG decode/encode through libspng, os-autoinst's
 * screen normalisation (cv::resize INTER_LINEAR / grey canvas), PSNR,
 * rectangles and thumbnails. Owns pixel buffers only; no global state. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <spng.h>
#include "image/image.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/file.h"
#include "util/limits.h"
#include "util/banned.h" /* last: after every system header */

static int image_size(int w, int h, size_t *bytes)
{
	size_t px;

	if (w <= 0 || h <= 0)
		return ERR_INVALID;
	if (__builtin_mul_overflow((size_t)w, (size_t)h, &px) || px > LIMIT_IMAGE_PIXELS)
		return ERR_TOO_BIG;
	if (__builtin_mul_overflow(px, (size_t)3, bytes))
		return ERR_TOO_BIG;
	return 0;
}

struct image *image_new(int w, int h)
{
	struct image *img;
	size_t bytes;

	if (image_size(w, h, &bytes))
		return NULL;
	img = calloc(1, sizeof(*img));
	if (!img)
		return NULL;
	img->px = calloc(bytes, 1);
	if (!img->px) {
		free(img);
		return NULL;
	}
	img->w = w;
	img->h = h;
	return img;
}

void image_free(struct image *img)
{
	if (!img)
		return;
	free(img->px);
	free(img);
}

struct image *image_clone(const struct image *img)
{
	struct image *c = image_new(img->w, img->h);

	if (c)
		memcpy(c->px, img->px, (size_t)img->w * (size_t)img->h * 3);
	return c;
}

int image_decode_png(const void *data, size_t len, struct image **out, char *err, size_t errlen)
{
	spng_ctx *ctx = NULL;
	struct spng_ihdr ihdr;
	struct image *img = NULL;
	size_t need = 0;
	int rc = 0, src;

	*out = NULL;
	if (len == 0) {
		snprintf(err, errlen, "empty PNG data");
		return ERR_PROTO;
	}
	ctx = spng_ctx_new(0);
	if (!ctx)
		return ERR_NOMEM;
	/* Bound memory for hostile files: chunk sizes and pixel count. */
	spng_set_chunk_limits(ctx, 16u << 20, 64u << 20);
	spng_set_image_limits(ctx, 16384, 16384);
	src = spng_set_png_buffer(ctx, data, len);
	if (!src)
		src = spng_get_ihdr(ctx, &ihdr);
	if (src) {
		snprintf(err, errlen, "not a valid PNG: %s", spng_strerror(src));
		rc = ERR_PROTO;
		goto out;
	}
	if (ihdr.width > 16384 || ihdr.height > 16384) {
		snprintf(err, errlen, "PNG too large: %ux%u", ihdr.width, ihdr.height);
		rc = ERR_TOO_BIG;
		goto out;
	}
	img = image_new((int)ihdr.width, (int)ihdr.height);
	if (!img) {
		rc = ERR_NOMEM;
		goto out;
	}
	src = spng_decoded_image_size(ctx, SPNG_FMT_RGB8, &need);
	if (!src && need != (size_t)img->w * (size_t)img->h * 3)
		src = SPNG_EINTERNAL;
	if (!src)
		src = spng_decode_image(ctx, img->px, need, SPNG_FMT_RGB8, 0);
	if (src) {
		snprintf(err, errlen, "PNG decoding failed: %s", spng_strerror(src));
		rc = ERR_PROTO;
		goto out;
	}
	*out = img;
	img = NULL;
out:
	image_free(img);
	spng_ctx_free(ctx);
	return rc;
}

int image_load_png(const char *path, struct image **out, char *err, size_t errlen)
{
	struct buf b;
	char e[200];
	int rc;

	*out = NULL;
	buf_init(&b, LIMIT_PNG_FILE);
	rc = file_read_all(path, &b);
	if (rc) {
		snprintf(err, errlen, "%s: %s", path, err_str(rc));
		goto out;
	}
	rc = image_decode_png(b.data, b.len, out, e, sizeof(e));
	if (rc)
		snprintf(err, errlen, "%s: %s", path, rc == ERR_NOMEM ? err_str(rc) : e);
out:
	buf_release(&b);
	return rc;
}

int image_encode_png(const struct image *img, struct buf *out)
{
	spng_ctx *ctx = NULL;
	struct spng_ihdr ihdr;
	void *png = NULL;
	size_t len = 0;
	int rc = 0, src;

	if (!img || img->w <= 0 || img->h <= 0)
		return ERR_INVALID;
	ctx = spng_ctx_new(SPNG_CTX_ENCODER);
	if (!ctx)
		return ERR_NOMEM;
	memset(&ihdr, 0, sizeof(ihdr));
	ihdr.width = (uint32_t)img->w;
	ihdr.height = (uint32_t)img->h;
	ihdr.bit_depth = 8;
	ihdr.color_type = SPNG_COLOR_TYPE_TRUECOLOR;
	/* Screenshots are large and flat: fast deflate, and one filter for
	 * every row (UP) rather than spng's choice between two, which costs
	 * twice the time for files within a few per cent of the size (GRUB,
	 * d-i text and gtk, xterm screens measured). */
	src = spng_set_option(ctx, SPNG_ENCODE_TO_BUFFER, 1);
	if (!src)
		src = spng_set_option(ctx, SPNG_IMG_COMPRESSION_LEVEL, 1);
	if (!src)
		src = spng_set_option(ctx, SPNG_FILTER_CHOICE, SPNG_FILTER_CHOICE_UP);
	if (!src)
		src = spng_set_ihdr(ctx, &ihdr);
	if (!src)
		src = spng_encode_image(ctx, img->px, (size_t)img->w * (size_t)img->h * 3,
					SPNG_FMT_PNG, SPNG_ENCODE_FINALIZE);
	if (!src)
		png = spng_get_png_buffer(ctx, &len, &src);
	if (src || !png) {
		rc = ERR_IO;
		goto out;
	}
	rc = buf_append(out, png, len);
out:
	free(png);
	spng_ctx_free(ctx);
	return rc;
}

int image_save_png(const struct image *img, const char *path)
{
	struct buf b;
	int rc;

	buf_init(&b, LIMIT_PNG_FILE * 4);
	rc = image_encode_png(img, &b);
	if (!rc)
		rc = file_write_all(path, b.data, b.len);
	buf_release(&b);
	return rc;
}

/* cv::resize INTER_LINEAR for 8-bit images, fixed point as OpenCV does it:
 * 11-bit coefficients per axis, products rounded once at the end. */
static void resize_linear(const struct image *src, struct image *dst)
{
	double sx = (double)src->w / dst->w, sy = (double)src->h / dst->h;
	int *xo = NULL, *yo = NULL;
	short *xc = NULL, *yc = NULL;
	int x, y, c;

	xo = malloc(sizeof(int) * (size_t)dst->w);
	xc = malloc(sizeof(short) * 2 * (size_t)dst->w);
	yo = malloc(sizeof(int) * (size_t)dst->h);
	yc = malloc(sizeof(short) * 2 * (size_t)dst->h);
	if (!xo || !xc || !yo || !yc)
		goto out;
	for (x = 0; x < dst->w; x++) {
		double f = (x + 0.5) * sx - 0.5;
		int i = (int)floor(f);
		f -= i;
		if (i < 0) {
			i = 0;
			f = 0;
		}
		if (i >= src->w - 1) {
			i = src->w - 1;
			f = 0;
		}
		xo[x] = i;
		xc[2 * x] = (short)lrint((1.0 - f) * 2048);
		xc[2 * x + 1] = (short)(2048 - xc[2 * x]);
	}
	for (y = 0; y < dst->h; y++) {
		double f = (y + 0.5) * sy - 0.5;
		int i = (int)floor(f);
		f -= i;
		if (i < 0) {
			i = 0;
			f = 0;
		}
		if (i >= src->h - 1) {
			i = src->h - 1;
			f = 0;
		}
		yo[y] = i;
		yc[2 * y] = (short)lrint((1.0 - f) * 2048);
		yc[2 * y + 1] = (short)(2048 - yc[2 * y]);
	}
	for (y = 0; y < dst->h; y++) {
		int y0 = yo[y], y1 = y0 + 1 < src->h ? y0 + 1 : y0;
		const uint8_t *r0 = src->px + (size_t)y0 * src->w * 3;
		const uint8_t *r1 = src->px + (size_t)y1 * src->w * 3;
		uint8_t *d = dst->px + (size_t)y * dst->w * 3;
		for (x = 0; x < dst->w; x++) {
			int x0 = xo[x], x1 = x0 + 1 < src->w ? x0 + 1 : x0;
			for (c = 0; c < 3; c++) {
				int h0 = r0[x0 * 3 + c] * xc[2 * x] + r0[x1 * 3 + c] * xc[2 * x + 1];
				int h1 = r1[x0 * 3 + c] * xc[2 * x] + r1[x1 * 3 + c] * xc[2 * x + 1];
				long v = (long)h0 * yc[2 * y] + (long)h1 * yc[2 * y + 1];
				v = (v + (1L << 21)) >> 22;
				d[x * 3 + c] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
			}
		}
	}
out:
	free(xo);
	free(xc);
	free(yo);
	free(yc);
}

struct image *image_normalise(const struct image *src, int xres, int yres)
{
	struct image *dst;
	int y;

	if (src->w == xres && src->h == yres)
		return image_clone(src);
	dst = image_new(xres, yres);
	if (!dst)
		return NULL;
	if (src->w > xres || src->h > yres) {
		resize_linear(src, dst);
		return dst;
	}
	memset(dst->px, 120, (size_t)xres * (size_t)yres * 3);
	for (y = 0; y < src->h; y++)
		memcpy(dst->px + (size_t)y * xres * 3, src->px + (size_t)y * src->w * 3, (size_t)src->w * 3);
	return dst;
}

double image_psnr(const struct image *a, const struct image *b)
{
	size_t i, n;
	uint64_t sse = 0;
	double signal;

	if (a->w != b->w || a->h != b->h)
		return 0.0;
	n = (size_t)a->w * (size_t)a->h * 3;
	for (i = 0; i < n; i++) {
		int d = (int)a->px[i] - (int)b->px[i];
		sse += (uint64_t)(d * d);
	}
	if (sse == 0)
		return IMAGE_PSNR_IDENTICAL;
	signal = 255.0 * 255.0 * (double)n;
	return 10.0 * log10(signal / (double)sse);
}

/* Clip a rectangle to the image; 0 if nothing is left. */
static int clip_rect(const struct image *img, int *x, int *y, int *w, int *h)
{
	long x0 = *x, y0 = *y, x1 = (long)*x + *w, y1 = (long)*y + *h;

	if (x0 < 0)
		x0 = 0;
	if (y0 < 0)
		y0 = 0;
	if (x1 > img->w)
		x1 = img->w;
	if (y1 > img->h)
		y1 = img->h;
	if (x1 <= x0 || y1 <= y0)
		return 0;
	*x = (int)x0;
	*y = (int)y0;
	*w = (int)(x1 - x0);
	*h = (int)(y1 - y0);
	return 1;
}

void image_fill_rect(struct image *img, int x, int y, int w, int h,
		     uint8_t r, uint8_t g, uint8_t b)
{
	int i, j;

	if (!clip_rect(img, &x, &y, &w, &h))
		return;
	for (j = y; j < y + h; j++) {
		uint8_t *p = img->px + ((size_t)j * img->w + x) * 3;
		for (i = 0; i < w; i++) {
			p[3 * i] = r;
			p[3 * i + 1] = g;
			p[3 * i + 2] = b;
		}
	}
}

struct image *image_crop(const struct image *img, int x, int y, int w, int h)
{
	struct image *c;
	int j;

	if (!clip_rect(img, &x, &y, &w, &h))
		return NULL;
	c = image_new(w, h);
	if (!c)
		return NULL;
	for (j = 0; j < h; j++)
		memcpy(c->px + (size_t)j * w * 3, img->px + ((size_t)(y + j) * img->w + x) * 3, (size_t)w * 3);
	return c;
}

struct image *image_thumbnail(const struct image *img, int max_w)
{
	struct image *t;
	int w, h;

	if (max_w <= 0)
		return NULL;
	if (img->w <= max_w)
		return image_clone(img);
	w = max_w;
	h = (int)((long)img->h * max_w / img->w);
	if (h < 1)
		h = 1;
	t = image_new(w, h);
	if (t)
		resize_linear(img, t);
	return t;
}

/* Walk the chunks after IHDR (length, type, data, CRC each) up to IEND
 * without decoding them: a file cut short or padded with garbage is caught
 * here, where a header check alone would pass it. The data itself (zlib,
 * CRCs) is checked when the image is decoded. */
static int png_walk_chunks(FILE *f, const char *path, char *err, size_t errlen)
{
	uint8_t ch[8];
	long pos = 8 + 8 + 13 + 4; /* signature, IHDR's header, data and CRC */
	long size;
	unsigned nchunks = 0;
	int idat = 0;

	if (fseek(f, 0, SEEK_END) != 0 || (size = ftell(f)) < 0) {
		snprintf(err, errlen, "%s: cannot find its size", path);
		return ERR_IO;
	}
	for (;;) {
		uint32_t len;
		if (fseek(f, pos, SEEK_SET) != 0 || fread(ch, 1, 8, f) != 8) {
			snprintf(err, errlen, "%s: truncated: no IEND chunk (the file ends at byte %ld)", path, size);
			return ERR_PROTO;
		}
		len = (uint32_t)ch[0] << 24 | (uint32_t)ch[1] << 16 | (uint32_t)ch[2] << 8 | ch[3];
		if (len > 0x7fffffffu || (long)len > size - pos - 12) {
			snprintf(err, errlen, "%s: truncated: chunk '%.4s' at byte %ld needs %u bytes, the file has %ld",
				 path, isalpha(ch[4]) && isalpha(ch[5]) && isalpha(ch[6]) && isalpha(ch[7]) ?
				 (const char *)ch + 4 : "????", pos, len + 12, size - pos);
			return ERR_PROTO;
		}
		if (!memcmp(ch + 4, "IDAT", 4))
			idat = 1;
		pos += 12 + (long)len;
		if (!memcmp(ch + 4, "IEND", 4))
			break;
		if (++nchunks > 1000000) {
			snprintf(err, errlen, "%s: more than a million chunks", path);
			return ERR_TOO_BIG;
		}
	}
	if (!idat) {
		snprintf(err, errlen, "%s: no image data (IDAT chunk)", path);
		return ERR_PROTO;
	}
	return 0;
}

int image_png_info(const char *path, int *w, int *h, char *err, size_t errlen)
{
	static const uint8_t sig[8] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n' };
	uint8_t hdr[24];
	uint32_t pw, ph;
	size_t n;
	FILE *f;
	int rc = ERR_PROTO;

	f = fopen(path, "rb");
	if (!f) {
		int e = -errno;
		snprintf(err, errlen, "%s: %s", path, err_str(e));
		return e;
	}
	n = fread(hdr, 1, sizeof(hdr), f);
	if (n == 0) {
		snprintf(err, errlen, "%s: empty file", path);
		goto out;
	}
	if (n < sizeof(hdr) || memcmp(hdr, sig, 8) || memcmp(hdr + 12, "IHDR", 4)) {
		snprintf(err, errlen, "%s: not a PNG file", path);
		goto out;
	}
	pw = (uint32_t)hdr[16] << 24 | (uint32_t)hdr[17] << 16 | (uint32_t)hdr[18] << 8 | hdr[19];
	ph = (uint32_t)hdr[20] << 24 | (uint32_t)hdr[21] << 16 | (uint32_t)hdr[22] << 8 | hdr[23];
	if (pw == 0 || ph == 0) {
		snprintf(err, errlen, "%s: PNG with zero size", path);
		goto out;
	}
	if (pw > 16384 || ph > 16384) {
		snprintf(err, errlen, "%s: PNG too large (%ux%u)", path, pw, ph);
		rc = ERR_TOO_BIG;
		goto out;
	}
	if ((rc = png_walk_chunks(f, path, err, errlen)))
		goto out;
	*w = (int)pw;
	*h = (int)ph;
out:
	fclose(f);
	return rc;
}
