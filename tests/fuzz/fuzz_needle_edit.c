/* SPDX-License-Identifier: MIT */
/* fuzz_needle_edit.c - the needle editor's save (server/store/needle_edit.c) as
 * a browser's POST /tests/<id>/modules/<m>/steps/<n> brings it:
 * "SUBDIR\0NAME\0DRAFT\0FLAGS\0MESSAGE", DRAFT the editor's JSON; the name
 * check, the draft's normalisation against a 200x100 screenshot, then the
 * save into DATA/tests/d/needles (a temporary directory made once, no git
 * repository, removed at exit) when FLAGS starts with 's' (with overwrite
 * when it holds 'o'). A crash, leak or sanitizer report fails the target. */
#include <stdio.h>
#include <jansson.h>
#include "fuzz.h"
#include "image/image.h"
#include "server/store/needle_edit.h"
#include "util/file.h"
#include "util/log.h"
#include "util/path.h"

static char dir[] = "/tmp/vigil-fuzz-needle-edit-XXXXXX";
static char *shot;

static void cleanup(void)
{
	char cmd[64];

	free(shot);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "fuzz_needle_edit: could not remove %s\n", dir);
}

static void setup(void)
{
	struct image *img;
	char *p;
	int x, y;

	if (!mkdtemp(dir))
		abort();
	atexit(cleanup);
	log_set_stderr_level(LOG_ERR);
	p = path_join(dir, "tests/d");
	if (!p || file_mkdir_p(p, 0755))
		abort();
	free(p);
	p = path_join(dir, "tests/d/main.lua");
	if (!p || file_write_all(p, "-- x\n", 5))
		abort();
	free(p);
	if (!(img = image_new(200, 100)))
		abort();
	image_fill_rect(img, 0, 0, 200, 100, 90, 90, 90);
	for (y = 0; y < 20; y++)
		for (x = 0; x < 50; x++) {
			unsigned char *px = img->px + ((size_t)(30 + y) * 200 + (size_t)(40 + x)) * 3;
			px[0] = px[1] = px[2] = (unsigned char)((x * 37 + y * 91) % 251);
		}
	shot = path_join(dir, "shot.png");
	if (!shot || image_save_png(img, shot))
		abort();
	image_free(img);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *part[5], *s, msg[512];
	json_t *draft, *out = NULL;

	if (!shot)
		setup();
	s = fuzz_fields(data, size, part, 5);
	(void)needle_edit_name_check(part[1], msg, sizeof(msg));
	draft = json_loads(part[2], JSON_REJECT_DUPLICATES, NULL);
	if (draft) {
		if (needle_edit_normalise(draft, 200, 100, part[3][0] == 's', &out, msg, sizeof(msg)) == 0)
			json_decref(out);
		out = NULL;
		if (part[3][0] == 's') {
			struct needle_edit_save sv = { 0 };
			sv.data_dir = dir;
			sv.distri = "d";
			sv.subdir = part[0];
			sv.name = part[1];
			sv.draft = draft;
			sv.png_path = shot;
			sv.overwrite = strchr(part[3], 'o') != NULL;
			sv.author = "Fuzz <fuzz@example.org>";
			sv.message = *part[4] ? part[4] : NULL;
			sv.job_name = "job";
			if (needle_edit_save(&sv, &out, msg, sizeof(msg)) == 0)
				json_decref(out);
		}
		json_decref(draft);
	}
	free(s);
	return 0;
}
