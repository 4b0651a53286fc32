/* SPDX-License-Identifier: MIT */
/* image.h - RGB images: PNG in/out (libspng), os-autoinst's screen
 * normalisation, PSNR, rectangles. Pixels are 8-bit R,G,B, row-major,
 * stride = w * 3. No global state. */
#ifndef VIGIL_IMAGE_H
#define VIGIL_IMAGE_H

#include <stddef.h>
#include <stdint.h>
#include "util/buf.h"

struct image {
	int w, h;
	uint8_t *px; /* w * h * 3 bytes, owned */
};

/* PSNR value for identical images, as os-autoinst's VERY_SIM. */
#define IMAGE_PSNR_IDENTICAL 1000000.0

/* A new zeroed (black) image, or NULL (bad size / OOM). Sizes are checked
 * against LIMIT_IMAGE_PIXELS with overflow-safe multiplication. */
struct image *image_new(int w, int h);
void image_free(struct image *img); /* NULL-safe */
struct image *image_clone(const struct image *img);

/* Decode a PNG file / buffer (any bit depth, palette, grey, alpha dropped)
 * into RGB. 0 or a negative code; err gets "file: what went wrong". */
int image_load_png(const char *path, struct image **out, char *err, size_t errlen);
int image_decode_png(const void *data, size_t len, struct image **out, char *err, size_t errlen);
/* A PNG file's size from its header, after checking that the file holds
 * every chunk up to IEND and some image data (chunk headers only, nothing
 * decoded). 0, -errno, ERR_PROTO (not a PNG, truncated; err says why and
 * where) or ERR_TOO_BIG. */
int image_png_info(const char *path, int *w, int *h, char *err, size_t errlen);
/* Encode as PNG (fast compression suited to screenshots). 0 or negative. */
int image_encode_png(const struct image *img, struct buf *out);
int image_save_png(const struct image *img, const char *path);

/* os-autoinst's normalisation to xres x yres: identical size -> copy; larger
 * -> scaled down (bilinear, as cv::resize INTER_LINEAR); smaller -> pasted
 * top-left onto a grey (120,120,120) canvas. NULL on OOM. */
struct image *image_normalise(const struct image *src, int xres, int yres);

/* PSNR in dB over all three channels (os-autoinst's similarity):
 * IMAGE_PSNR_IDENTICAL when identical, 0 when sizes differ. */
double image_psnr(const struct image *a, const struct image *b);

/* Fill a rectangle (clipped to the image). */
void image_fill_rect(struct image *img, int x, int y, int w, int h,
		     uint8_t r, uint8_t g, uint8_t b);
/* Copy of a rectangle (clipped; NULL if empty or OOM). */
struct image *image_crop(const struct image *img, int x, int y, int w, int h);
/* Downscaled copy no wider than max_w (aspect kept), for thumbnails. */
struct image *image_thumbnail(const struct image *img, int max_w);

#endif
