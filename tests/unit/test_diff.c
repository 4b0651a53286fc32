/* SPDX-License-Identifier: MIT */
/* test_diff.c - the failure explanation: the line of area similarities
 * against their levels, and the heat-map's pixels (dimmed outside the
 * areas, grey where screen and needle agree or an exclude area hides a
 * pixel, hot where they differ, framed by the area's verdict). */
#include <stdio.h>
#include "unit.h"
#include "image/diff.h"
#include "image/heatmap.h"
#include "image/needle.h"

static struct needle *load(const char *json, const struct image *png)
{
	char path[512], err[256];
	struct needle *n = NULL;
	FILE *f;

	snprintf(path, sizeof(path), "%s/d.json", unit_tmpdir());
	f = fopen(path, "w");
	CHECK(f != NULL);
	fputs(json, f);
	fclose(f);
	snprintf(path, sizeof(path), "%s/d.png", unit_tmpdir());
	CHECK_INT(image_save_png(png, path), 0);
	CHECK_INT(needle_load(unit_tmpdir(), "d.json", &n, err, sizeof(err)), 0);
	return n;
}

static const uint8_t *px(const struct image *img, int x, int y)
{
	return img->px + ((size_t)y * (size_t)img->w + (size_t)x) * 3;
}

TEST(diff_describe_lists_every_area)
{
	struct image *img = image_new(64, 48);
	struct needle *n = load("{\"tags\":[\"t\"],\"area\":["
				"{\"xpos\":0,\"ypos\":24,\"width\":50,\"height\":8,\"type\":\"match\"},"
				"{\"xpos\":1,\"ypos\":1,\"width\":2,\"height\":2,\"type\":\"exclude\"},"
				"{\"xpos\":4,\"ypos\":2,\"width\":10,\"height\":6,\"type\":\"match\",\"match\":90}]}",
				img);
	struct match_area_result areas[2] = {
		{ 1, 25, 50, 8, 0.8349, 0 },
		{ 4, 2, 10, 6, 1.0, 1 },
	};
	struct match_result res = { n, 0, 0.01, 2, areas };
	char line[256], tiny[12];

	CHECK_STR(diff_describe(&res, line, sizeof(line)),
		  "best d: area 0,24,50,8 83 % < 96 %, area 4,2,10,6 100 % >= 90 %");
	/* Cut short, never overrun. */
	CHECK_STR(diff_describe(&res, tiny, sizeof(tiny)), "best d: are");
	res.nareas = 0;
	CHECK_STR(diff_describe(&res, line, sizeof(line)), "best d: no match area");
	needle_free(n);
	image_free(img);
}

TEST(diff_image_heat_map)
{
	struct image *screen = image_new(64, 48), *nimg = image_new(64, 48), *out = NULL;
	struct needle *n;
	struct match_area_result area = { 8, 8, 16, 16, 0.5, 0 };
	struct match_result res = { NULL, 0, 0.25, 1, &area };
	char err[256];

	image_fill_rect(screen, 0, 0, 64, 48, 100, 100, 100);
	image_fill_rect(nimg, 0, 0, 64, 48, 100, 100, 100);
	image_fill_rect(nimg, 12, 12, 4, 4, 200, 200, 200); /* differs from the screen */
	image_fill_rect(nimg, 20, 20, 2, 2, 10, 10, 10);    /* differs, but excluded */
	n = load("{\"tags\":[\"t\"],\"area\":["
		 "{\"xpos\":8,\"ypos\":8,\"width\":16,\"height\":16,\"type\":\"match\"},"
		 "{\"xpos\":20,\"ypos\":20,\"width\":2,\"height\":2,\"type\":\"exclude\"}]}",
		 nimg);
	res.needle = n;
	CHECK_INT(diff_image(screen, n, &res, &out, err, sizeof(err)), 0);
	CHECK_INT(out->w, 64);
	CHECK_INT(out->h, 48);
	CHECK_INT(px(out, 40, 40)[0], 25);              /* outside: dimmed to a quarter */
	CHECK_INT(px(out, 9, 9)[0], 25);                /* agreeing: the screen dimmed */
	CHECK_INT(px(out, 9, 9)[2], 25);
	{
		uint8_t hot[3];                          /* 100 levels apart: heatmap.c's full scale */
		heatmap_colour(100, hot);
		CHECK_INT(px(out, 13, 13)[0], hot[0]);
		CHECK_INT(px(out, 13, 13)[1], hot[1]);
		CHECK_INT(px(out, 13, 13)[2], hot[2]);
	}
	CHECK_INT(px(out, 20, 20)[0], px(out, 20, 20)[1]); /* excluded: no heat */
	CHECK_INT(px(out, 20, 20)[1], px(out, 20, 20)[2]);
	CHECK_INT(px(out, 7, 7)[0], 255);               /* a failed area's frame: magenta */
	CHECK_INT(px(out, 7, 7)[1], 0);
	CHECK_INT(px(out, 7, 7)[2], 255);
	CHECK_INT(px(screen, 13, 13)[0], 100);          /* the screen itself untouched */
	image_free(out);
	needle_free(n);
	image_free(nimg);
	image_free(screen);
}
