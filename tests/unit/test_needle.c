/* SPDX-License-Identifier: MIT */
/* test_needle.c - needle parsing (valid forms and every malformed case),
 * recursive loading, the tag index, writing. */
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>
#include "unit.h"
#include "image/needle.h"
#include "util/buf.h"
#include "util/file.h"
#include "util/path.h"

static struct needle *parse_ok(const char *json)
{
	struct needle *n = NULL;
	char err[512];
	int rc = needle_parse(json, strlen(json), "sub/x.json", &n, err, sizeof(err));
	if (rc)
		FAIL("parse failed: %s", err);
	return n;
}

static void parse_bad(const char *json, const char *want)
{
	struct needle *n = NULL;
	char err[512];
	int rc = needle_parse(json, strlen(json), "x.json", &n, err, sizeof(err));
	if (rc == 0 || n)
		FAIL("parsed but should fail: %s", json);
	if (!strstr(err, "needle 'x.json'") || !strstr(err, want))
		FAIL("message '%s' lacks '%s'", err, want);
}

TEST(needle_parse_valid_forms)
{
	struct needle *n = parse_ok("{\"tags\":[\"a\",\"b\",\"a\"],\"properties\":[\"glossy\",{\"name\":\"workaround\",\"value\":\"bsc#1\"}],"
		"\"area\":[{\"xpos\":\"10\",\"ypos\":20.7,\"width\":30,\"height\":\"40\",\"match\":\"90\",\"margin\":0,\"click_point\":\"center\"},"
		"{\"xpos\":1,\"ypos\":2,\"width\":3,\"height\":4,\"type\":\"exclude\"},"
		"{\"xpos\":1,\"ypos\":2,\"width\":3,\"height\":4,\"type\":\"ocr\",\"match\":0}]}");
	CHECK_STR(n->name, "x");
	CHECK_STR(n->file, "sub/x.json");
	CHECK_INT(n->ntags, 2);
	CHECK_INT(n->workaround, 1);
	CHECK_STR(n->workaround_value, "bsc#1");
	CHECK_INT(n->nareas, 3);
	CHECK_INT(n->areas[0].x, 10);
	CHECK_INT(n->areas[0].y, 20);
	CHECK_INT(n->areas[0].h, 40);
	CHECK_NEAR(n->areas[0].match, 90, 0);
	CHECK_NEAR(n->areas[0].margin, 50, 0);
	CHECK(n->areas[0].has_click_point && n->areas[0].click_center);
	CHECK_INT(n->areas[1].type, NEEDLE_AREA_EXCLUDE);
	CHECK_INT(n->areas[2].type, NEEDLE_AREA_OCR);
	CHECK_NEAR(n->areas[2].match, 96, 0);
	needle_free(n);
	n = parse_ok("{\"area\":[{\"xpos\":0,\"ypos\":0,\"width\":5,\"height\":5,\"margin\":\"300\",\"click_point\":{\"xpos\":2,\"ypos\":3,\"id\":\"a\"}},"
		"{\"xpos\":0,\"ypos\":0,\"width\":5,\"height\":5,\"click_point\":{\"xpos\":1,\"ypos\":1,\"id\":\"b\"}}]}");
	CHECK_NEAR(n->areas[0].margin, 300, 0);
	CHECK_INT(n->areas[0].click_x, 2);
	CHECK_STR(n->areas[1].click_id, "b");
	CHECK_INT(n->workaround, 0);
	CHECK_INT(n->ntags, 0);
	needle_free(n);
	n = parse_ok("{\"properties\":[\"workaround\"],\"area\":[{\"xpos\":0,\"ypos\":0,\"width\":5,\"height\":5}]}");
	CHECK_INT(n->workaround, 1);
	needle_free(n);
}

TEST(needle_parse_malformed)
{
	parse_bad("{\"area\":[", "broken json");
	parse_bad("[1]", "top level must be an object");
	parse_bad("{\"tags\":\"a\",\"area\":[]}", "tags must be an array");
	parse_bad("{\"tags\":[1],\"area\":[]}", "tags: entry 1");
	parse_bad("{\"tags\":[]}", "area is missing");
	parse_bad("{\"area\":{}}", "area must be an array");
	parse_bad("{\"area\":[{\"ypos\":0,\"width\":5,\"height\":5}]}", "area 1: xpos is missing");
	parse_bad("{\"area\":[{\"xpos\":[],\"ypos\":0,\"width\":5,\"height\":5}]}", "area 1: xpos must be a number");
	parse_bad("{\"area\":[{\"xpos\":\"ten\",\"ypos\":0,\"width\":5,\"height\":5}]}", "area 1: xpos must be a number");
	parse_bad("{\"area\":[{\"xpos\":0,\"ypos\":0,\"width\":0,\"height\":5}]}", "area 1: width and height must be positive");
	parse_bad("{\"area\":[{\"xpos\":0,\"ypos\":0,\"width\":5,\"height\":5},{\"xpos\":0,\"ypos\":0,\"width\":5,\"height\":5,\"type\":\"foo\"}]}",
		  "area 2: unknown type 'foo'");
	parse_bad("{\"area\":[{\"xpos\":0,\"ypos\":0,\"width\":5,\"height\":5,\"type\":3}]}", "area 1: type must be a string");
	parse_bad("{\"area\":[{\"xpos\":0,\"ypos\":0,\"width\":5,\"height\":5,\"match\":\"x\"}]}", "area 1: match must be a number");
	parse_bad("{\"area\":[{\"xpos\":0,\"ypos\":0,\"width\":5,\"height\":5,\"type\":\"exclude\"}]}", "missing match area");
	parse_bad("{\"area\":[{\"xpos\":0,\"ypos\":0,\"width\":5,\"height\":5,\"click_point\":{\"xpos\":0,\"ypos\":3}}]}", "click_point: xpos");
	parse_bad("{\"area\":[{\"xpos\":0,\"ypos\":0,\"width\":5,\"height\":5,\"click_point\":\"left\"}]}", "click_point: invalid value");
	parse_bad("{\"area\":[{\"xpos\":0,\"ypos\":0,\"width\":5,\"height\":5,\"click_point\":\"center\"},"
		  "{\"xpos\":0,\"ypos\":0,\"width\":5,\"height\":5,\"click_point\":\"center\"}]}", "area 2: more than one area with a click point");
	parse_bad("{\"area\":[{\"xpos\":0,\"ypos\":0,\"width\":5,\"height\":5,\"click_point\":{\"xpos\":1,\"ypos\":1,\"id\":\"a\"}},"
		  "{\"xpos\":0,\"ypos\":0,\"width\":5,\"height\":5,\"click_point\":{\"xpos\":1,\"ypos\":1,\"id\":\"a\"}}]}", "duplicate id 'a'");
	parse_bad("{\"properties\":[3],\"area\":[]}", "properties: entry 1");
	parse_bad("{\"area\":[{\"xpos\":0,\"ypos\":0,\"width\":5,\"height\":5,\"match\":200}]}",
		  "area 1: match 200 is not a percentage (0 to 100)");
	parse_bad("{\"area\":[{\"xpos\":0,\"ypos\":0,\"width\":5,\"height\":5,\"match\":\"-1\"}]}",
		  "area 1: match -1 is not a percentage");
}

static void write_file(const char *dir, const char *rel, const void *data, size_t len)
{
	char *p = path_join(dir, rel), *d = path_dir(p);
	CHECK_INT(file_mkdir_p(d, 0755), 0);
	CHECK_INT(file_write_all(p, data, len), 0);
	free(p);
	free(d);
}

static void write_needle(const char *dir, const char *rel, const char *tags)
{
	char json[512], png[512];
	struct image *img = image_new(16, 16);
	char *p;
	snprintf(json, sizeof(json), "{\"tags\":[%s],\"area\":[{\"xpos\":1,\"ypos\":1,\"width\":4,\"height\":4},"
		 "{\"xpos\":0,\"ypos\":0,\"width\":2,\"height\":2,\"type\":\"exclude\"}]}", tags);
	write_file(dir, rel, json, strlen(json));
	snprintf(png, sizeof(png), "%.*s.png", (int)(strlen(rel) - 5), rel);
	p = path_join(dir, png);
	CHECK_INT(image_save_png(img, p), 0);
	free(p);
	image_free(img);
}

static void write_json(const char *dir, const char *rel, const char *json)
{
	write_file(dir, rel, json, strlen(json));
}

#define AREA_JSON "{\"area\":[{\"xpos\":1,\"ypos\":1,\"width\":4,\"height\":4}]}"
static char warnings[4096];
static void collect(void *ctx, const char *msg)
{
	(void)ctx;
	strncat(warnings, msg, sizeof(warnings) - strlen(warnings) - 2);
	strcat(warnings, "\n");
}

TEST(needle_set_load_recursive_and_tags)
{
	const char *dir = unit_tmpdir();
	struct needle_set set;
	struct needle **found = NULL;
	const struct image *img;
	const char *e1[] = { "a b" }, *e2[] = { "c", "b" }, *e3[] = { "zzz" };
	char err[256];
	size_t n;

	write_needle(dir, "one.json", "\"a\",\"b\"");
	write_needle(dir, "sub/two.json", "\"b\"");
	write_needle(dir, "sub/deeper/three.json", "\"c\",\"a\"");
	write_file(dir, "bad.json", "{", 1);
	write_file(dir, "nopng.json", AREA_JSON, strlen(AREA_JSON));
	write_file(dir, "emptypng.json", AREA_JSON, strlen(AREA_JSON));
	write_file(dir, "emptypng.png", "", 0);
	write_file(dir, "corrupt.json", AREA_JSON, strlen(AREA_JSON));
	write_file(dir, "corrupt.png", "not a png at all, really not one", 32);
	{
		char *l = path_join(dir, "sub/loop");
		CHECK_INT(symlink("..", l), 0);
		free(l);
	}
	warnings[0] = '\0';
	CHECK_INT(needle_set_load(&set, dir, collect, NULL), 0);
	CHECK_INT(needle_set_count(&set), 3);
	CHECK_STR(set.needles[0]->name, "one");
	CHECK_STR(set.needles[1]->name, "three");
	CHECK_STR(set.needles[1]->file, "sub/deeper/three.json");
	CHECK(strstr(warnings, "needle 'bad.json': broken json"));
	CHECK(strstr(warnings, "needle 'nopng.json': png: nopng.png is missing"));
	CHECK(strstr(warnings, "needle 'emptypng.json': png:"));
	CHECK(strstr(warnings, "needle 'corrupt.json': png:"));
	n = needle_set_find(&set, e1, 1, &found);
	CHECK_INT(n, 1);
	CHECK_STR(found[0]->name, "one");
	free(found);
	n = needle_set_find(&set, e2, 2, &found);
	CHECK_INT(n, 3);
	CHECK_STR(found[2]->name, "two");
	free(found);
	CHECK_INT(needle_set_find(&set, e3, 1, &found), 0);
	CHECK(needle_set_get(&set, "two") != NULL);
	CHECK_INT(needle_image(set.needles[0], &img, err, sizeof(err)), 0);
	CHECK_INT(img->px[1], 255); /* exclude painted green */
	CHECK_INT(img->px[0], 0);
	needle_set_release(&set);
	CHECK(needle_set_load(&set, "/nonexistent/needles", NULL, NULL) < 0);
	needle_set_release(&set);
}

/* Needles that load but could never match are refused at load, each with
 * its file and reason in one warning (issue 17: a truncated PNG, an area
 * outside the PNG, a negative position). */
TEST(needle_load_refuses_what_cannot_match)
{
	const char *dir = unit_tmpdir();
	struct needle_set set;
	struct buf b;
	char *p;

	write_needle(dir, "good.json", "\"a\"");
	write_needle(dir, "cut.json", "\"a\"");
	p = path_join(dir, "cut.png");
	buf_init(&b, 1 << 20);
	CHECK_INT(file_read_all(p, &b), 0);
	CHECK(b.len > 40);
	CHECK_INT(truncate(p, (off_t)b.len - 12), 0); /* its IEND chunk cut off */
	buf_release(&b);
	free(p);
	write_needle(dir, "outside.json", "\"a\"");
	write_json(dir, "outside.json", "{\"area\":[{\"xpos\":10,\"ypos\":1,\"width\":8,\"height\":4}]}");
	write_needle(dir, "negative.json", "\"a\"");
	write_json(dir, "negative.json", "{\"area\":[{\"xpos\":-10,\"ypos\":1,\"width\":4,\"height\":4}]}");
	/* an exclude area outside the PNG is ignored, as replacerect does */
	write_needle(dir, "exclout.json", "\"a\"");
	write_json(dir, "exclout.json", "{\"area\":[{\"xpos\":1,\"ypos\":1,\"width\":4,\"height\":4},"
		   "{\"xpos\":12,\"ypos\":12,\"width\":9,\"height\":9,\"type\":\"exclude\"}]}");
	warnings[0] = '\0';
	CHECK_INT(needle_set_load(&set, dir, collect, NULL), 0);
	CHECK_INT(needle_set_count(&set), 2);
	CHECK_STR(set.needles[0]->name, "exclout");
	CHECK_STR(set.needles[1]->name, "good");
	CHECK(strstr(warnings, "needle 'cut.json': png: ") && strstr(warnings, "cut.png: truncated: no IEND chunk"));
	CHECK(strstr(warnings, "needle 'outside.json': area 1 (xpos 10, ypos 1, 8x4) lies outside its 16x16 PNG"));
	CHECK(strstr(warnings, "needle 'negative.json': area 1 (xpos -10, ypos 1, 4x4) lies outside its 16x16 PNG"));
	CHECK(needle_tell_failure(set.needles[0]));
	CHECK(!needle_tell_failure(set.needles[0]));
	CHECK(needle_tell_failure(set.needles[1]));
	needle_set_release(&set);
}

TEST(needle_write_and_reload)
{
	const char *dir = unit_tmpdir();
	struct image *img = image_new(20, 10);
	struct needle_area a[2];
	const char *tags[] = { "t1" };
	struct needle *n = NULL;
	char err[256];

	memset(a, 0, sizeof(a));
	a[0].x = 1; a[0].y = 1; a[0].w = 5; a[0].h = 5; a[0].match = 90; a[0].margin = 50;
	a[1].x = 2; a[1].y = 2; a[1].w = 2; a[1].h = 2; a[1].type = NEEDLE_AREA_EXCLUDE;
	CHECK_INT(needle_write(dir, "new", img, tags, 1, a, 2, NULL, 0, err, sizeof(err)), 0);
	CHECK_INT(needle_load(dir, "new.json", &n, err, sizeof(err)), 0);
	CHECK_NEAR(n->areas[0].match, 90, 0);
	CHECK_INT(n->areas[1].type, NEEDLE_AREA_EXCLUDE);
	CHECK_STR(n->tags[0], "t1");
	needle_free(n);
	a[0].w = 50;
	CHECK(needle_write(dir, "bad", img, tags, 1, a, 1, NULL, 0, err, sizeof(err)) < 0);
	CHECK(strstr(err, "does not lie inside the 20x10 screenshot"));
	image_free(img);
}
