/* SPDX-License-Identifier: MIT */
/* test_image.c - PNG round trip, normalisation, PSNR, rectangles. */
#include <stdio.h>
#include <unistd.h>
#include "unit.h"
#include "image/image.h"
#include "util/buf.h"
#include "util/err.h"

TEST(image_png_round_trip)
{
	struct image *a = image_new(7, 5), *b = NULL;
	char path[512], err[256];
	int i, w = 0, h = 0;

	for (i = 0; i < 7 * 5 * 3; i++)
		a->px[i] = (uint8_t)(i * 37);
	snprintf(path, sizeof(path), "%s/a.png", unit_tmpdir());
	CHECK_INT(image_save_png(a, path), 0);
	CHECK_INT(image_load_png(path, &b, err, sizeof(err)), 0);
	CHECK_INT(b->w, 7);
	CHECK_INT(b->h, 5);
	CHECK(!memcmp(a->px, b->px, 7 * 5 * 3));
	image_free(b);
	b = NULL;
	CHECK_INT(image_png_info(path, &w, &h, err, sizeof(err)), 0);
	CHECK_INT(w, 7);
	CHECK_INT(h, 5);
	/* cut short: the header alone is intact, the chunks are not */
	CHECK_INT(truncate(path, 60), 0);
	CHECK_INT(image_png_info(path, &w, &h, err, sizeof(err)), ERR_PROTO);
	CHECK(strstr(err, "a.png: truncated: "));
	CHECK(image_decode_png("garbage", 7, &b, err, sizeof(err)) < 0);
	CHECK(b == NULL);
	image_free(a);
}

TEST(image_normalise_smaller_and_larger)
{
	struct image *a = image_new(2, 2), *n;

	image_fill_rect(a, 0, 0, 2, 2, 10, 20, 30);
	n = image_normalise(a, 4, 3);
	CHECK_INT(n->w, 4);
	CHECK_INT(n->px[0], 10);
	CHECK_INT(n->px[3 * 3 + 1], 120); /* (3,0) is grey canvas */
	CHECK_INT(n->px[(2 * 4 + 0) * 3 + 2], 120);
	image_free(n);
	image_free(a);
	a = image_new(8, 6);
	image_fill_rect(a, 0, 0, 8, 6, 200, 100, 50);
	n = image_normalise(a, 4, 3);
	CHECK_INT(n->w, 4);
	CHECK_INT(n->h, 3);
	CHECK_INT(n->px[0], 200);
	CHECK_INT(n->px[4], 100);
	image_free(n);
	image_free(a);
}

TEST(image_psnr_values)
{
	struct image *a = image_new(4, 4), *b = image_new(4, 4), *c = image_new(5, 4);

	CHECK_NEAR(image_psnr(a, b), IMAGE_PSNR_IDENTICAL, 0);
	CHECK_NEAR(image_psnr(a, c), 0, 0);
	b->px[0] = 255; /* sse = 255^2 over 48 values: 10*log10(48) */
	CHECK_NEAR(image_psnr(a, b), 16.8124, 1e-3);
	image_free(a);
	image_free(b);
	image_free(c);
}

TEST(image_crop_fill_clip)
{
	struct image *a = image_new(4, 4), *c;

	image_fill_rect(a, 2, 2, 10, 10, 1, 2, 3);
	CHECK_INT(a->px[(3 * 4 + 3) * 3 + 2], 3);
	CHECK_INT(a->px[(1 * 4 + 1) * 3], 0);
	c = image_crop(a, 2, 2, 5, 5);
	CHECK_INT(c->w, 2);
	CHECK_INT(c->px[0], 1);
	image_free(c);
	CHECK(image_crop(a, 9, 9, 2, 2) == NULL);
	CHECK(image_new(0, 3) == NULL);
	image_free(a);
}
