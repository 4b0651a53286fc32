/* SPDX-License-Identifier: MIT */
/* test_needle_edit.c - the needle editor's server side: needle names and
 * paths, the draft checked into openQA's layout, the live match on a
 * synthetic screenshot (found where drawn, a moved area found back, an
 * exclude area that makes a changed screen match), and the save: files,
 * overwrite refusal, the distribution hash that workers fetch by. */
#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include "image/image.h"
#include "server/store/distri.h"
#include "server/store/needle_edit.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/file.h"
#include "util/path.h"
#include "unit.h"
#include "util/banned.h" /* last: after every system header */

TEST(needle_edit_names)
{
	char msg[256];

	CHECK_INT(needle_edit_name_check("grub-menu_2+x.y", msg, sizeof(msg)), 0);
	CHECK_INT(needle_edit_name_check("", msg, sizeof(msg)), ERR_INVALID);
	CHECK_INT(needle_edit_name_check("../x", msg, sizeof(msg)), ERR_INVALID);
	CHECK_INT(needle_edit_name_check("a/b", msg, sizeof(msg)), ERR_INVALID);
	CHECK_INT(needle_edit_name_check(".hidden", msg, sizeof(msg)), ERR_INVALID);
	CHECK_INT(needle_edit_name_check("-opt", msg, sizeof(msg)), ERR_INVALID);
	CHECK_INT(needle_edit_name_check("a..b", msg, sizeof(msg)), ERR_INVALID);
	CHECK_INT(needle_edit_name_check("a b", msg, sizeof(msg)), ERR_INVALID);
	CHECK_INT(needle_edit_name_check("<img>", msg, sizeof(msg)), ERR_INVALID);
}

static json_t *load(const char *text)
{
	json_error_t e;
	json_t *j = json_loads(text, 0, &e);
	if (!j)
		FAIL("bad test json: %s", e.text);
	return j;
}

TEST(needle_edit_normalise_layout)
{
	json_t *d = load("{\"tags\":[\"a\",\"b\",\"a\"],\"properties\":[\"workaround\"],\"area\":["
			 "{\"xpos\":1,\"ypos\":2,\"width\":30,\"height\":40,\"type\":\"match\",\"match\":96,\"margin\":50,"
			 "\"click_point\":{\"xpos\":3,\"ypos\":4}},"
			 "{\"xpos\":5,\"ypos\":6,\"width\":7,\"height\":8,\"type\":\"exclude\",\"match\":90.5,\"margin\":10}]}");
	json_t *o = NULL;
	char msg[256], *s;

	CHECK_INT(needle_edit_normalise(d, 100, 100, true, &o, msg, sizeof(msg)), 0);
	s = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
	CHECK_STR(s, "{\"area\":[{\"xpos\":1,\"ypos\":2,\"width\":30,\"height\":40,\"type\":\"match\","
		     "\"click_point\":{\"xpos\":3,\"ypos\":4}},"
		     "{\"xpos\":5,\"ypos\":6,\"width\":7,\"height\":8,\"type\":\"exclude\",\"match\":90.5,\"margin\":10}],"
		     "\"tags\":[\"a\",\"b\"],\"properties\":[{\"name\":\"workaround\"}]}");
	free(s);
	json_decref(o);
	json_decref(d);
}

TEST(needle_edit_normalise_refuses)
{
	static const char *const bad[] = {
		"{\"tags\":[\"a\"],\"area\":[]}",
		"{\"tags\":[\"a\"],\"area\":[{\"xpos\":90,\"ypos\":0,\"width\":20,\"height\":5}]}",
		"{\"tags\":[\"a\"],\"area\":[{\"xpos\":0.5,\"ypos\":0,\"width\":20,\"height\":5}]}",
		"{\"tags\":[\"a\"],\"area\":[{\"xpos\":0,\"ypos\":0,\"width\":20,\"height\":5,\"type\":\"blur\"}]}",
		"{\"tags\":[\"a\"],\"area\":[{\"xpos\":0,\"ypos\":0,\"width\":20,\"height\":5,\"match\":101}]}",
		"{\"tags\":[\"a\"],\"area\":[{\"xpos\":0,\"ypos\":0,\"width\":20,\"height\":5,\"type\":\"exclude\"}]}",
		"{\"tags\":[\"a b\"],\"area\":[{\"xpos\":0,\"ypos\":0,\"width\":20,\"height\":5}]}",
		"{\"tags\":[],\"area\":[{\"xpos\":0,\"ypos\":0,\"width\":20,\"height\":5}]}",
		"{\"tags\":[\"a\"],\"area\":[{\"xpos\":0,\"ypos\":0,\"width\":20,\"height\":5,\"type\":\"ocr\"}]}",
		"{\"tags\":[\"a\"],\"area\":[{\"xpos\":0,\"ypos\":0,\"width\":20,\"height\":5,\"click_point\":\"center\"},"
		"{\"xpos\":0,\"ypos\":0,\"width\":20,\"height\":5,\"click_point\":\"center\"}]}",
	};
	char msg[256];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		json_t *d = load(bad[i]), *o = NULL;
		if (needle_edit_normalise(d, 100, 100, true, &o, msg, sizeof(msg)) != ERR_INVALID || o)
			FAIL("draft %zu was accepted: %s", i, bad[i]);
		json_decref(d);
	}
}

/* A 200x100 screen: grey with a textured block at (40, 30) 50x20, saved
 * as DIR/NAME. Returns the image (caller frees). */
static struct image *screen(const char *name, int bx, char **path)
{
	struct image *img = image_new(200, 100);
	int x, y;

	CHECK(img);
	image_fill_rect(img, 0, 0, 200, 100, 90, 90, 90);
	for (y = 0; y < 20; y++)
		for (x = 0; x < 50; x++) {
			unsigned char *p = img->px + ((size_t)(30 + y) * 200 + (size_t)(bx + x)) * 3;
			p[0] = p[1] = p[2] = (unsigned char)((x * 37 + y * 91) % 251);
		}
	*path = path_join(unit_tmpdir(), name);
	CHECK_INT(image_save_png(img, *path), 0);
	return img;
}

TEST(needle_edit_live_match)
{
	struct needle_edit_cache c;
	char msg[256], *shot = NULL, *other = NULL;
	struct image *a = screen("a.png", 40, &shot), *b = screen("b.png", 44, &other);
	json_t *d = load("{\"area\":[{\"xpos\":40,\"ypos\":30,\"width\":50,\"height\":20}]}"), *r = NULL, *ar;

	needle_edit_cache_init(&c);
	/* The screenshot as the needle's image: found where drawn, 100 %. */
	CHECK_INT(needle_edit_match(&c, shot, NULL, d, &r, msg, sizeof(msg)), 0);
	CHECK(json_is_true(json_object_get(r, "match")));
	CHECK(json_is_false(json_object_get(r, "cached")));
	ar = json_array_get(json_object_get(r, "areas"), 0);
	CHECK_INT(json_integer_value(json_object_get(ar, "x")), 40);
	CHECK_NEAR(json_real_value(json_object_get(ar, "similarity")), 100.0, 1e-9);
	json_decref(r);
	/* The block moved by 4 on the other screen, found there with the
	 * first screen's image; the second call finds both decoded. */
	CHECK_INT(needle_edit_match(&c, other, shot, d, &r, msg, sizeof(msg)), 0);
	ar = json_array_get(json_object_get(r, "areas"), 0);
	CHECK(json_is_true(json_object_get(r, "match")));
	CHECK_INT(json_integer_value(json_object_get(ar, "x")), 44);
	json_decref(r);
	CHECK_INT(needle_edit_match(&c, other, shot, d, &r, msg, sizeof(msg)), 0);
	CHECK(json_is_true(json_object_get(r, "cached")));
	json_decref(r);
	/* A bad draft is refused with where. */
	json_decref(d);
	d = load("{\"area\":[{\"xpos\":190,\"ypos\":30,\"width\":50,\"height\":20}]}");
	CHECK_INT(needle_edit_match(&c, shot, NULL, d, &r, msg, sizeof(msg)), ERR_INVALID);
	CHECK(strstr(msg, "area 1"));
	needle_edit_cache_release(&c);
	json_decref(d);
	image_free(a);
	image_free(b);
	free(shot);
	free(other);
}

TEST(needle_edit_save_files_and_overwrite)
{
	char msg[512], hash1[ARTEFACTS_HASH_HEX], hash2[ARTEFACTS_HASH_HEX], *shot = NULL, *p, *tests;
	struct image *a = screen("s.png", 40, &shot);
	json_t *d = load("{\"tags\":[\"t\"],\"area\":[{\"xpos\":40,\"ypos\":30,\"width\":50,\"height\":20}]}"), *o = NULL;
	struct needle_edit_save s = { 0 };
	struct buf b, b2;

	tests = path_join(unit_tmpdir(), "tests/d/main.lua");
	CHECK_INT(file_mkdir_p(p = path_join(unit_tmpdir(), "tests/d"), 0755), 0);
	free(p);
	CHECK_INT(file_write_all(tests, "-- x\n", 5), 0);
	CHECK_INT(distri_hash(unit_tmpdir(), "d", hash1), 0);
	s.data_dir = unit_tmpdir();
	s.distri = "d";
	s.name = "new-needle";
	s.draft = d;
	s.png_path = shot;
	s.job_name = "job";
	CHECK_INT(needle_edit_save(&s, &o, msg, sizeof(msg)), 0);
	CHECK_STR(json_string_value(json_object_get(o, "json")), "new-needle.json");
	CHECK(json_is_null(json_object_get(o, "commit"))); /* no repository */
	json_decref(o);
	/* The files: the screenshot's bytes, the json in openQA's layout. */
	buf_init(&b, 1 << 20);
	buf_init(&b2, 1 << 20);
	CHECK_INT(file_read_all(p = path_join(unit_tmpdir(), "tests/d/needles/new-needle.png"), &b), 0);
	free(p);
	CHECK_INT(file_read_all(shot, &b2), 0);
	CHECK(b.len == b2.len && !memcmp(b.data, b2.data, b.len));
	buf_reset(&b);
	CHECK_INT(file_read_all(p = path_join(unit_tmpdir(), "tests/d/needles/new-needle.json"), &b), 0);
	free(p);
	CHECK(strstr(b.data, "\"area\""));
	CHECK(strstr(b.data, "\"xpos\": 40"));
	/* Workers fetch the distribution by its hash: the needle changed it. */
	CHECK_INT(distri_hash(unit_tmpdir(), "d", hash2), 0);
	CHECK(strcmp(hash1, hash2));
	/* Again: refused unless overwrite. */
	CHECK_INT(needle_edit_save(&s, &o, msg, sizeof(msg)), ERR_BADSTATE);
	CHECK(o == NULL);
	s.overwrite = true;
	CHECK_INT(needle_edit_save(&s, &o, msg, sizeof(msg)), 0);
	CHECK(json_is_true(json_object_get(o, "replaced")));
	json_decref(o);
	/* Unsafe names and directories, an unknown distribution. */
	s.name = "../x";
	CHECK_INT(needle_edit_save(&s, &o, msg, sizeof(msg)), ERR_INVALID);
	s.name = "x";
	s.subdir = "../../etc";
	CHECK_INT(needle_edit_save(&s, &o, msg, sizeof(msg)), ERR_INVALID);
	s.subdir = "missing";
	CHECK_INT(needle_edit_save(&s, &o, msg, sizeof(msg)), ERR_NOT_FOUND);
	s.subdir = NULL;
	s.distri = "nodistri";
	CHECK_INT(needle_edit_save(&s, &o, msg, sizeof(msg)), ERR_NOT_FOUND);
	buf_release(&b);
	buf_release(&b2);
	json_decref(d);
	image_free(a);
	free(shot);
	free(tests);
}
