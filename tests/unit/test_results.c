/* SPDX-License-Identifier: MIT */
/* test_results.c - the results writer: module files, results.json, the
 * overall result rules and needs_review. */
#include <jansson.h>
#include "unit.h"
#include "runner/core/results.h"
#include "util/err.h"
#include "util/file.h"
#include "util/path.h"

static json_t *load(const char *name)
{
	char *p = path_join(unit_tmpdir(), name);
	json_error_t e;
	json_t *j = json_load_file(p, 0, &e);
	if (!j)
		FAIL("%s: %s", p, e.text);
	free(p);
	return j;
}

static struct module mod(const char *name, enum module_result r, unsigned flags)
{
	struct module m;
	memset(&m, 0, sizeof(m));
	m.name = (char *)name;
	m.script = (char *)"tests/x.lua";
	m.result = r;
	m.flags = flags;
	return m;
}

TEST(results_module_file)
{
	struct module m = mod("boot", MODULE_OK, MODULE_FLAG_FATAL);
	json_t *j, *d;

	m.details = json_array();
	d = json_object();
	json_object_set_new(d, "result", json_string("ok"));
	json_object_set_new(d, "needle", json_string("grub-menu"));
	json_array_append_new(m.details, d);
	m.start = 10;
	m.end = 12.6;
	CHECK_INT(results_write_module(unit_tmpdir(), &m), 0);
	j = load("result-boot.json");
	CHECK_STR(json_string_value(json_object_get(j, "result")), "ok");
	CHECK_INT(json_integer_value(json_object_get(j, "execution_time")), 3);
	CHECK_INT(json_integer_value(json_object_get(j, "dents")), 0);
	CHECK_STR(json_string_value(json_object_get(json_array_get(json_object_get(j, "details"), 0), "needle")), "grub-menu");
	CHECK(json_object_get(j, "needs_review") == NULL);
	json_decref(j);
	json_decref(m.details);
}

TEST(results_module_without_details)
{
	struct module m = mod("empty", MODULE_SKIP, 0);
	json_t *j;
	CHECK_INT(results_write_module(unit_tmpdir(), &m), 0);
	j = load("result-empty.json");
	CHECK_STR(json_string_value(json_object_get(j, "result")), "skip");
	CHECK(json_is_array(json_object_get(j, "details")));
	CHECK_INT(json_array_size(json_object_get(j, "details")), 0);
	json_decref(j);
}

TEST(results_job_file)
{
	struct module m[3] = { mod("boot", MODULE_OK, MODULE_FLAG_FATAL | MODULE_FLAG_MILESTONE),
			       mod("shell", MODULE_FAIL, 0), mod("end", MODULE_SKIP, MODULE_FLAG_IGNORE_FAILURE) };
	json_t *j, *mods, *order;

	CHECK_INT(results_write_job(unit_tmpdir(), JOB_FAILED, 1, "why", m, 3, 12.5), 0);
	j = load("results.json");
	CHECK_STR(json_string_value(json_object_get(j, "result")), "failed");
	CHECK(json_is_true(json_object_get(j, "needs_review")));
	CHECK_STR(json_string_value(json_object_get(j, "reason")), "why");
	mods = json_object_get(j, "modules");
	CHECK_INT(json_array_size(mods), 3);
	CHECK_STR(json_string_value(json_object_get(json_array_get(mods, 1), "name")), "shell");
	CHECK_STR(json_string_value(json_object_get(json_array_get(mods, 1), "result")), "fail");
	CHECK_INT(json_integer_value(json_object_get(json_object_get(json_array_get(mods, 0), "flags"), "fatal")), 1);
	CHECK_INT(json_integer_value(json_object_get(json_object_get(json_array_get(mods, 0), "flags"), "milestone")), 1);
	CHECK_INT(json_object_size(json_object_get(json_array_get(mods, 1), "flags")), 0);
	CHECK_INT(json_integer_value(json_object_get(json_object_get(json_array_get(mods, 2), "flags"), "ignore_failure")), 1);
	json_decref(j);
	order = load("test_order.json");
	CHECK_INT(json_array_size(order), 3);
	CHECK_STR(json_string_value(json_object_get(json_array_get(order, 0), "script")), "tests/x.lua");
	json_decref(order);
}

TEST(results_overall_rules)
{
	struct module m[3];
	int review;

	m[0] = mod("a", MODULE_OK, 0);
	m[1] = mod("b", MODULE_OK, 0);
	CHECK_INT(results_job_from_modules(m, 2, &review), JOB_PASSED);
	CHECK_INT(review, 0);
	m[1].result = MODULE_SOFTFAIL;
	CHECK_INT(results_job_from_modules(m, 2, &review), JOB_SOFTFAILED);
	m[1].result = MODULE_FAIL;
	m[1].flags = MODULE_FLAG_IGNORE_FAILURE;
	CHECK_INT(results_job_from_modules(m, 2, &review), JOB_SOFTFAILED);
	m[1].flags = 0;
	CHECK_INT(results_job_from_modules(m, 2, &review), JOB_FAILED);
	CHECK_INT(review, 0);
	/* All failures near misses: failed, but needs review. */
	m[1].needs_review = 1;
	CHECK_INT(results_job_from_modules(m, 2, &review), JOB_FAILED);
	CHECK_INT(review, 1);
	/* One hard failure besides: no review. */
	m[2] = mod("c", MODULE_FAIL, 0);
	m[2].hard_fail = 1;
	CHECK_INT(results_job_from_modules(m, 3, &review), JOB_FAILED);
	CHECK_INT(review, 0);
}

TEST(results_names)
{
	struct module m = mod("boot", MODULE_OK, 0);
	char *a = results_next_name(&m, "png"), *b = results_next_name(&m, "txt");
	CHECK_STR(a, "boot-1.png");
	CHECK_STR(b, "boot-2.txt");
	free(a);
	free(b);
	CHECK_STR(job_result_name(JOB_TIMEOUT_EXCEEDED), "timeout_exceeded");
	CHECK_STR(job_result_name(JOB_INCOMPLETE), "incomplete");
	CHECK_STR(module_result_name(MODULE_SOFTFAIL), "softfail");
}

/* Frame times stay numbers until written: the module's strings and the
 * video index's seconds are both rounded down from the video millisecond. */
TEST(results_frametimes_and_video_index)
{
	struct module m = mod("boot", MODULE_OK, 0);
	json_t *ft = results_frametime_json(12349, 12389), *j, *e, *d;

	CHECK_STR(json_string_value(json_array_get(ft, 0)), "12.34");
	CHECK_STR(json_string_value(json_array_get(ft, 1)), "12.38");
	json_decref(ft);
	ft = results_frametime_json(-5, 7);
	CHECK_STR(json_string_value(json_array_get(ft, 0)), "0.00");
	CHECK_STR(json_string_value(json_array_get(ft, 1)), "0.00");
	json_decref(ft);

	m.name = strdup("boot");
	m.script = strdup("tests/boot.lua");
	m.details = json_array();
	d = json_object();
	json_object_set_new(d, "title", json_string("text"));
	json_array_append_new(m.details, d);
	d = json_object();
	json_object_set_new(d, "screenshot", json_string("boot-2.png"));
	json_array_append_new(m.details, d);
	CHECK_INT(results_add_step_time(&m, 1, 2009), 0);
	CHECK_INT(results_write_video_index(unit_tmpdir(), &m, 1), 0);
	j = load("video_index.json");
	CHECK_INT((int)json_array_size(j), 1);
	e = json_array_get(j, 0);
	CHECK_STR(json_string_value(json_object_get(e, "module")), "boot");
	CHECK_INT(json_integer_value(json_object_get(e, "step")), 2);
	CHECK(json_real_value(json_object_get(e, "time")) == 2.0);
	CHECK_STR(json_string_value(json_object_get(e, "screenshot")), "boot-2.png");
	json_decref(j);
	results_module_release(&m);
}

TEST(results_needle_copied_once)
{
	char *json = path_join(unit_tmpdir(), "src.json"), *png = path_join(unit_tmpdir(), "src.png");
	char *out_json = path_join(unit_tmpdir(), "needle-menu.json"), *out_png = path_join(unit_tmpdir(), "needle-menu.png");
	json_t *j;

	CHECK_INT(file_write_all(json, "{\"tags\":[\"a\"],\"area\":[]}", 24), 0);
	CHECK_INT(file_write_all(png, "PNG!", 4), 0);
	/* A match copies the JSON only; a failed check's candidate its picture too. */
	CHECK_INT(results_save_needle(unit_tmpdir(), "menu", json, NULL), 0);
	CHECK(file_exists(out_json));
	CHECK(!file_exists(out_png));
	CHECK_INT(results_save_needle(unit_tmpdir(), "menu", json, png), 0);
	CHECK(file_exists(out_png));
	j = load("needle-menu.json");
	CHECK_STR(json_string_value(json_array_get(json_object_get(j, "tags"), 0)), "a");
	json_decref(j);
	/* Names the server would refuse as artefacts are not copied. */
	CHECK_INT(results_save_needle(unit_tmpdir(), "../x", json, png), ERR_INVALID);
	CHECK_INT(results_save_needle(unit_tmpdir(), "a b", json, png), ERR_INVALID);
	CHECK_INT(results_save_needle(unit_tmpdir(), ".hidden", json, png), ERR_INVALID);
	CHECK(results_save_needle(unit_tmpdir(), "gone", "/nonexistent/x.json", NULL) < 0);
	free(json);
	free(png);
	free(out_json);
	free(out_png);
}

/* parse_extra_log's tests: extra_test_results in the module's file
 * (openQA's shape, script "unk" made the module's), entries after the
 * module in results.json, and a failed one fails the job. */
TEST(results_extra_tests)
{
	struct module m[2] = { mod("junit", MODULE_OK, 0), mod("end", MODULE_OK, 0) };
	json_t *tests = json_loads("[{\"name\":\"1_a\",\"category\":\"c\",\"flags\":{},\"script\":\"unk\"},"
				   "{\"name\":\"b\",\"category\":\"c\",\"flags\":{},\"script\":\"s.xml\"},"
				   "{\"name\":\"../x\"}]", 0, NULL);
	json_t *j, *x, *mods;
	char *rp = path_join(unit_tmpdir(), "result-1_a.json");
	int review;

	CHECK_INT(file_write_all(rp, "{\"result\":\"ok\"}", 15), 0);
	free(rp);
	CHECK_INT(results_add_extra(unit_tmpdir(), &m[0], json_null()), ERR_PROTO);
	CHECK_INT(results_add_extra(unit_tmpdir(), &m[0], tests), 2);
	CHECK_INT(results_job_from_modules(m, 2, &review), JOB_PASSED); /* b: "unk" */
	CHECK_INT(results_write_module(unit_tmpdir(), &m[0]), 0);
	j = load("result-junit.json");
	x = json_object_get(j, "extra_test_results");
	CHECK_INT(json_array_size(x), 2);
	CHECK_STR(json_string_value(json_object_get(json_array_get(x, 0), "script")), "tests/x.lua");
	CHECK_STR(json_string_value(json_object_get(json_array_get(x, 1), "script")), "s.xml");
	CHECK(json_object_get(json_array_get(x, 0), "result") == NULL);
	json_decref(j);
	CHECK_INT(results_write_job(unit_tmpdir(), JOB_PASSED, 0, NULL, m, 2, 1), 0);
	j = load("results.json");
	mods = json_object_get(j, "modules");
	CHECK_INT(json_array_size(mods), 4);
	CHECK_STR(json_string_value(json_object_get(json_array_get(mods, 1), "name")), "1_a");
	CHECK_STR(json_string_value(json_object_get(json_array_get(mods, 1), "result")), "ok");
	CHECK_STR(json_string_value(json_object_get(json_array_get(mods, 2), "result")), "unk");
	CHECK_STR(json_string_value(json_object_get(json_array_get(mods, 3), "name")), "end");
	json_decref(j);
	j = load("test_order.json");
	CHECK_INT(json_array_size(j), 2);
	json_decref(j);
	json_object_set_new(json_array_get(m[0].extra, 1), "result", json_string("fail"));
	CHECK_INT(results_job_from_modules(m, 2, &review), JOB_FAILED);
	CHECK_INT(review, 0);
	json_decref(tests);
	json_decref(m[0].extra);
}
