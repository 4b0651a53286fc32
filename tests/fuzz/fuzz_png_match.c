/* SPDX-License-Identifier: MIT */
/* fuzz_png_match.c - PNG decoding (libspng through image_decode_png) and
 * the matcher's handling of areas: the first 24 bytes give one match area
 * (x, y, w, h, match, margin as signed 16-bit values) and one exclude area,
 * the rest is the needle's PNG, matched on a fixed 64x48 screen. */
#include <stdio.h>
#include "fuzz.h"
#include "image/image.h"
#include "image/match.h"
#include "image/needle.h"

static int s16(const uint8_t *p)
{
	return (int16_t)(uint16_t)(p[0] << 8 | p[1]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct image *screen;
	struct image *img = NULL;
	struct match_screen *ms = NULL;
	struct match_result res;
	char json[512], err[256];
	struct needle *n = NULL;
	int i;

	if (size < 24 || size > (1u << 20))
		return 0;
	if (!screen) {
		screen = image_new(64, 48);
		for (i = 0; i < 64 * 48 * 3; i++)
			screen->px[i] = (uint8_t)(i * 7 + i / 192);
	}
	if (image_decode_png(data + 24, size - 24, &img, err, sizeof(err)) || img->w > 256 || img->h > 256) {
		image_free(img);
		return 0;
	}
	snprintf(json, sizeof(json),
		 "{\"tags\":[\"t\"],\"area\":[{\"xpos\":%d,\"ypos\":%d,\"width\":%d,\"height\":%d,\"match\":%d,\"margin\":%d},"
		 "{\"xpos\":%d,\"ypos\":%d,\"width\":%d,\"height\":%d,\"type\":\"exclude\"}]}",
		 s16(data) % 300, s16(data + 2) % 300, s16(data + 4) % 300, s16(data + 6) % 300, s16(data + 8) % 101,
		 s16(data + 10) % 400, s16(data + 12) % 300, s16(data + 14) % 300, s16(data + 16) % 300,
		 s16(data + 18) % 300);
	if (needle_parse(json, strlen(json), "fuzz.json", &n, err, sizeof(err)) == 0 && needle_image_adopt(n, img) == 0) {
		img = NULL;
		ms = match_screen_new(screen);
		memset(&res, 0, sizeof(res));
		if (ms && match_needle(ms, n, data[20] % 2 ? 1.0 : 0.5, 0.0, &res) == 0)
			match_result_release(&res);
		match_screen_free(ms);
	}
	needle_free(n);
	image_free(img);
	return 0;
}
