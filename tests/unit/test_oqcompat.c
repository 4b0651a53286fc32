/* SPDX-License-Identifier: MIT */
/* test_oqcompat.c - what openQA's worker sends, stored the vigil way
 * (server/oqcompat.c, server/workers.c): a status with test_order and step
 * details becomes job modules (the script kept as its path) and
 * result-<module>.json (screenshots by name); md5-named screenshots make
 * known_images and are linked under a later step's new name. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "unit.h"
#include "server/artefacts.h"
#include "server/db.h"
#include "server/jobs.h"
#include "server/oqcompat.h"
#include "server/sched.h"
#include "server/workers.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/file.h"
#include "util/path.h"

#define MD5A "0123456789abcdef0123456789abcdef"
#define MD5B "fedcba9876543210fedcba9876543210"

/* A PNG-named artefact of the job with the given bytes. */
static void put_shot(const char *data, int64_t job, enum artefact_kind kind, const char *name, const char *bytes)
{
	char tmp[512];

	snprintf(tmp, sizeof(tmp), "%s/up-%s-%d", unit_tmpdir(), name, (int)kind);
	CHECK_INT(file_write_all(tmp, bytes, strlen(bytes)), 0);
	CHECK_INT(artefact_store(data, job, kind, name, tmp), 0);
}

static json_t *load(const char *data, int64_t job, const char *name)
{
	char *p = artefact_path(data, job, name);
	json_t *j = json_load_file(p, 0, NULL);

	free(p);
	return j;
}

TEST(oqcompat_status_modules_and_details)
{
	struct db *db = unit_db();
	const char *data = unit_tmpdir();
	json_t *settings = json_pack("{s:s,s:s}", "TEST", "t", "WORKER_CLASS", "c");
	json_t *status, *mods, *res;
	const char *cmd = NULL;
	int64_t w = 0, job = 0, picked = 0;
	char msg[256];

	CHECK_INT(jobs_insert(db, settings, 50, 0, 0, &job), 0);
	json_decref(settings);
	CHECK_INT(workers_register(db, "h", 1, "c", 1000, &w), 0);
	CHECK_INT(sched_pick(db, w, &picked), 0);
	CHECK_INT(picked, job);
	/* As openQA 4.6's worker posts it (Job.pm _upload_results_step_0_prepare). */
	status = json_pack("{s:I,s:[{s:s,s:s,s:s,s:{s:i,s:i}}],s:{s:{s:s,s:i,s:[{s:s,s:{s:s,s:s},s:s,s:[{s:i,s:i,s:i,s:i,s:i}]},"
			   "{s:s,s:{s:s,s:s}}]},s:{s:s}}}",
			   "worker_id", (json_int_t)w, "test_order", "name", "boot", "category", "anchor", "script",
			   "tests/boot.pm", "flags", "fatal", 1, "milestone", 0, "result", "boot", "result", "ok", "dents",
			   0, "details", "result", "ok", "screenshot", "name", "boot-1.png", "md5", MD5A, "needle",
			   "grub-menu", "area", "x", 0, "y", 0, "w", 10, "h", 10, "similarity", 100, "result", "ok",
			   "screenshot", "name", "boot-2.png", "md5", MD5A, "current_module", "result", "running");
	CHECK(status);
	CHECK_INT(workers_job_status(db, job, status, &cmd, msg, sizeof(msg)), 0);
	mods = workers_job_modules(db, job);
	CHECK_INT(json_array_size(mods), 1);
	CHECK_STR(json_string_value(json_object_get(json_array_get(mods, 0), "script")), "tests/boot.pm");
	CHECK_STR(json_string_value(json_object_get(json_array_get(mods, 0), "result")), "passed");
	json_decref(mods);

	/* boot-1.png arrived (with its md5), boot-2.png is the same picture:
	 * the worker does not send it again once it is known. */
	put_shot(data, job, ARTEFACT_FILE, "boot-1.png", "full picture");
	put_shot(data, job, ARTEFACT_THUMB, "boot-1.png", "thumb");
	CHECK_INT(oqcompat_note_image(data, job, "boot-1.png", MD5A, false), 0);
	CHECK_INT(oqcompat_note_image(data, job, "boot-1.png", MD5A, true), 0);
	CHECK_INT(oqcompat_note_image(data, job, "boot-1.png", "not-an-md5", false), ERR_INVALID);
	res = oqcompat_known_images(data, job);
	CHECK_INT(json_array_size(res), 1);
	CHECK_STR(json_string_value(json_array_get(res, 0)), MD5A);
	json_decref(res);

	CHECK_INT(oqcompat_store_details(data, job, status), 0);
	res = load(data, job, "result-boot.json");
	CHECK(res);
	CHECK_STR(json_string_value(json_object_get(res, "result")), "ok");
	CHECK_INT(json_array_size(json_object_get(res, "details")), 2);
	CHECK_STR(json_string_value(json_object_get(json_array_get(json_object_get(res, "details"), 0), "screenshot")),
		  "boot-1.png");
	CHECK_STR(json_string_value(json_object_get(json_array_get(json_object_get(res, "details"), 0), "needle")),
		  "grub-menu");
	json_decref(res);
	/* No details, no file: current_module is only a marker. */
	res = load(data, job, "result-current_module.json");
	CHECK(!res);
	/* boot-2.png: linked from the known md5, thumbnail too. */
	{
		char *p2 = artefact_kind_path(data, job, ARTEFACT_FILE, "boot-2.png");
		char *t2 = artefact_kind_path(data, job, ARTEFACT_THUMB, "boot-2.png");
		struct buf b;
		buf_init(&b, 1024);
		CHECK_INT(file_read_all(p2, &b), 0);
		CHECK_STR(b.data, "full picture");
		buf_reset(&b);
		CHECK_INT(file_read_all(t2, &b), 0);
		CHECK_STR(b.data, "thumb");
		buf_release(&b);
		free(p2);
		free(t2);
	}
	json_decref(status);
	db_free(db);
}

TEST(oqcompat_details_refuse_bad_module_names)
{
	const char *data = unit_tmpdir();
	json_t *status = json_pack("{s:{s:{s:s,s:[]}}}", "result", "../evil", "result", "ok", "details");
	char *p;

	CHECK_INT(oqcompat_store_details(data, 7, status), 0);
	p = path_join(data, "testresults/result-../evil.json");
	CHECK(!file_exists(p));
	free(p);
	json_decref(status);
}
