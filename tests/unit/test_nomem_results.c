/* SPDX-License-Identifier: MIT */
/* test_nomem_results.c - the out-of-memory policy (docs/hardening.md) in
 * the runner's results: for every N until the call succeeds, the Nth
 * allocation fails (alloc_fail.h, as test_nomem.c). The results writer
 * (result-<module>.json, results.json, test_order.json,
 * video_index.json) writes each file whole or returns ERR_NOMEM and
 * writes none; the step recorder (steps.c) keeps every step whole with
 * its "result" or says ERR_NOMEM (steps.err, which ends the job
 * incomplete); a Perl run's results read back (perl_results.c) whole
 * or ERR_NOMEM; no crash, no leak (LeakSanitizer under SAN=1). */
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "unit.h"
#include "alloc_fail.h"
#include "runner/perl/perl.h"
#include "runner/core/results.h"
#include "runner/core/job.h"
#include "runner/core/steps.h"
#include "util/err.h"
#include "util/file.h"
#include "util/log.h"
#include "util/path.h"

/* Two modules as a job leaves them: one passed with a match step and an
 * extra test (parse_extra_log), one failed with its message. */
static struct module nr_mods[2];

static void nr_setup(void)
{
	json_t *d;

	memset(nr_mods, 0, sizeof(nr_mods));
	nr_mods[0].name = (char *)"boot";
	nr_mods[0].script = (char *)"tests/boot.lua";
	nr_mods[0].result = MODULE_OK;
	nr_mods[0].flags = MODULE_FLAG_FATAL | MODULE_FLAG_MILESTONE;
	nr_mods[0].start = 1;
	nr_mods[0].end = 3.5;
	nr_mods[0].details = json_array();
	d = json_pack("{s:s,s:s,s:s,s:[s,s]}", "result", "ok", "needle", "grub-menu", "screenshot", "boot-1.png",
		      "frametime", "1.00", "1.04");
	json_array_append_new(nr_mods[0].details, d);
	nr_mods[0].extra = json_pack("[{s:s,s:s,s:s,s:s}]", "name", "ltp_x", "category", "ltp", "script", "s",
				     "result", "fail");
	nr_mods[0].times = calloc(1, sizeof(*nr_mods[0].times));
	nr_mods[0].ntimes = 1;
	nr_mods[0].times[0].ms = 1000;
	nr_mods[1].name = (char *)"shell";
	nr_mods[1].script = (char *)"tests/shell.lua";
	nr_mods[1].result = MODULE_FAIL;
	nr_mods[1].needs_review = 1;
	nr_mods[1].fail_message = (char *)"no candidate needle with tag(s) 'x' matched";
	nr_mods[1].details = json_array();
	json_array_append_new(nr_mods[1].details, json_pack("{s:s,s:[s]}", "result", "fail", "tags", "x"));
}

static void nr_teardown(void)
{
	size_t i;

	for (i = 0; i < 2; i++) {
		json_decref(nr_mods[i].details);
		json_decref(nr_mods[i].extra);
		free(nr_mods[i].times);
	}
}

static const char *str_at(json_t *j, const char *key)
{
	const char *s = json_string_value(json_object_get(j, key));
	return s ? s : "";
}

static int write_module_call(void) { return results_write_module(unit_tmpdir(), &nr_mods[1]); }
static int module_whole(json_t *j)
{
	return strcmp(str_at(j, "result"), "fail") || !json_is_integer(json_object_get(j, "dents")) ||
	       !json_is_true(json_object_get(j, "needs_review")) ||
	       strcmp(str_at(j, "fail_message"), nr_mods[1].fail_message) ||
	       json_array_size(json_object_get(j, "details")) != 1 ||
	       strcmp(str_at(json_array_get(json_object_get(j, "details"), 0), "result"), "fail");
}

static int write_extra_module_call(void) { return results_write_module(unit_tmpdir(), &nr_mods[0]); }
static int extra_module_whole(json_t *j)
{
	json_t *x = json_array_get(json_object_get(j, "extra_test_results"), 0);
	return strcmp(str_at(j, "result"), "ok") || json_array_size(json_object_get(j, "details")) != 1 ||
	       strcmp(str_at(x, "name"), "ltp_x") || strcmp(str_at(x, "category"), "ltp");
}

static int write_job_call(void)
{
	return results_write_job(unit_tmpdir(), JOB_FAILED, 0, "why", nr_mods, 2, 4.25);
}
static int job_whole(json_t *j)
{
	json_t *mods = json_object_get(j, "modules");
	return strcmp(str_at(j, "result"), "failed") || strcmp(str_at(j, "reason"), "why") ||
	       !json_is_boolean(json_object_get(j, "needs_review")) || !json_is_real(json_object_get(j, "elapsed")) ||
	       json_array_size(mods) != 3 || strcmp(str_at(json_array_get(mods, 0), "result"), "ok") ||
	       !json_is_integer(json_object_get(json_object_get(json_array_get(mods, 0), "flags"), "fatal")) ||
	       !json_is_integer(json_object_get(json_object_get(json_array_get(mods, 0), "flags"), "milestone")) ||
	       strcmp(str_at(json_array_get(mods, 1), "name"), "ltp_x") ||
	       strcmp(str_at(json_array_get(mods, 1), "result"), "fail") ||
	       strcmp(str_at(json_array_get(mods, 2), "result"), "fail");
}
static int order_whole(json_t *j)
{
	return json_array_size(j) != 2 || strcmp(str_at(json_array_get(j, 1), "script"), "tests/shell.lua") ||
	       strcmp(str_at(json_array_get(j, 0), "category"), "tests");
}

static int write_index_call(void) { return results_write_video_index(unit_tmpdir(), nr_mods, 2); }
static int index_whole(json_t *j)
{
	json_t *e = json_array_get(j, 0);
	return json_array_size(j) != 1 || strcmp(str_at(e, "module"), "boot") ||
	       strcmp(str_at(e, "screenshot"), "boot-1.png") ||
	       !json_is_integer(json_object_get(e, "step")) || !json_is_number(json_object_get(e, "time"));
}

/* file (and also, when not NULL, file2) under unit_tmpdir() written by
 * call with the nth allocation failing, for every n: whole (whole(j) 0)
 * when call says 0, absent when it says ERR_NOMEM. The runs. */
static long files_every_n(const char *what, int (*call)(void), const char *file, int (*whole)(json_t *),
			  const char *file2, int (*whole2)(json_t *))
{
	char *path = path_join(unit_tmpdir(), file), *path2 = file2 ? path_join(unit_tmpdir(), file2) : NULL;
	long n;

	for (n = 1; n < 100000; n++) {
		json_t *j;
		bool fired;
		int rc;

		unlink(path);
		if (path2)
			unlink(path2);
		alloc_fail_arm(n);
		rc = call();
		fired = alloc_fail_disarm();
		if (rc == ERR_NOMEM) {
			if (file_exists(path))
				FAIL("%s: allocation %ld failed: ERR_NOMEM, yet %s written", what, n, file);
		} else if (rc == 0) {
			j = json_load_file(path, 0, NULL);
			if (!j || whole(j))
				FAIL("%s: allocation %ld failed: 0, yet %s has a part missing", what, n, file);
			json_decref(j);
			if (path2) {
				j = json_load_file(path2, 0, NULL);
				if (!j || whole2(j))
					FAIL("%s: allocation %ld failed: 0, yet %s has a part missing", what, n, file2);
				json_decref(j);
			}
		} else {
			FAIL("%s: allocation %ld failed: %d (%s), expected ERR_NOMEM", what, n, rc, err_str(rc));
		}
		if (!fired) {
			if (rc)
				FAIL("%s: no allocation failed, yet %d (%s)", what, rc, err_str(rc));
			break;
		}
	}
	free(path);
	free(path2);
	return n;
}

TEST(nomem_results_writer_whole_or_nomem)
{
	nr_setup();
	CHECK(files_every_n("results_write_module", write_module_call, "result-shell.json", module_whole, NULL, NULL) > 1);
	CHECK(files_every_n("results_write_module (extra tests)", write_extra_module_call, "result-boot.json",
			    extra_module_whole, NULL, NULL) > 1);
	CHECK(files_every_n("results_write_job", write_job_call, "results.json", job_whole, "test_order.json",
			    order_whole) > 1);
	CHECK(files_every_n("results_write_video_index", write_index_call, "video_index.json", index_whole, NULL,
			    NULL) > 1);
	nr_teardown();
}

/* A text step (a failed module's message, wait_serial's output) and a
 * step built by a check (result set with steps_set), with the nth
 * allocation failing: both steps whole, each with its "result", or
 * steps.err = ERR_NOMEM (the job then ends incomplete). */
TEST(nomem_steps_whole_or_err)
{
	long n;

	log_set_stderr_level(LOG_ERR);
	for (n = 1; n < 100000; n++) {
		struct module m;
		struct steps s;
		json_t *d, *st;
		bool fired;

		memset(&m, 0, sizeof(m));
		memset(&s, 0, sizeof(s));
		m.name = (char *)"mod";
		s.testresults = unit_tmpdir();
		s.m = &m;
		alloc_fail_arm(n);
		steps_text(&s, "Failed", "the text", "fail");
		d = json_object();
		steps_set(&s, d, "result", json_string("unk"));
		steps_set(&s, d, "tags", json_pack("[s]", "x"));
		steps_add(&s, d, -1);
		fired = alloc_fail_disarm();
		if (s.err && s.err != ERR_NOMEM)
			FAIL("steps: allocation %ld failed: steps.err %d (%s), expected ERR_NOMEM", n, s.err, err_str(s.err));
		if (!s.err) {
			st = json_array_get(m.details, 0);
			if (json_array_size(m.details) != 2 || strcmp(str_at(st, "result"), "fail") ||
			    strcmp(str_at(st, "title"), "Failed") || strcmp(str_at(st, "text"), "mod-1.txt"))
				FAIL("steps: allocation %ld failed: no error, yet the text step is not whole", n);
			st = json_array_get(m.details, 1);
			if (strcmp(str_at(st, "result"), "unk") || json_array_size(json_object_get(st, "tags")) != 1)
				FAIL("steps: allocation %ld failed: no error, yet the check's step is not whole", n);
		}
		json_decref(m.details);
		free(m.times);
		if (!fired) {
			CHECK_INT(s.err, 0);
			break;
		}
	}
	CHECK(n > 1);
}

/* A Perl run's results read back (perl_results.c) with the nth
 * allocation failing: both modules with their results, or ERR_NOMEM and
 * the runner's list unchanged (the job then ends incomplete), never a
 * module whose result was lost as "none". The JSON's strings stay short:
 * jansson's parser is not safe when an allocation fails inside a long
 * one (akheron/jansson#362, docs/hardening.md). */
TEST(nomem_perl_results_whole_or_nomem)
{
	static struct runner r;
	char *dir = path_join(unit_tmpdir(), "perl"), *p;
	long n;

	CHECK_INT(file_mkdir_p(dir, 0755), 0);
	p = path_join(dir, "test_order.json");
	CHECK_INT(file_write_all(p, "[{\"name\":\"boot\",\"script\":\"t/boot.pm\",\"flags\":{\"fatal\":1}},"
				    "{\"name\":\"shell\",\"script\":\"t/shell.pm\",\"flags\":{}}]", 108), 0);
	free(p);
	p = path_join(dir, "result-boot.json");
	CHECK_INT(file_write_all(p, "{\"result\":\"ok\",\"details\":[{\"result\":\"ok\"}]}", 43), 0);
	free(p);
	p = path_join(dir, "result-shell.json");
	CHECK_INT(file_write_all(p, "{\"result\":\"fail\",\"details\":[]}", 30), 0);
	free(p);
	memset(&r, 0, sizeof(r));
	r.testresults = dir;
	for (n = 1; n < 100000; n++) {
		bool fired;
		size_t i;
		int rc;

		alloc_fail_arm(n);
		rc = perl_load_results(&r);
		fired = alloc_fail_disarm();
		if (rc == ERR_NOMEM) {
			if (r.nmodules != 0)
				FAIL("perl_load_results: allocation %ld failed: ERR_NOMEM, yet the modules were replaced", n);
		} else if (rc == 0) {
			if (r.nmodules != 2 || strcmp(r.modules[0].name, "boot") || r.modules[0].result != MODULE_OK ||
			    !(r.modules[0].flags & MODULE_FLAG_FATAL) || json_array_size(r.modules[0].details) != 1 ||
			    strcmp(r.modules[1].script, "t/shell.pm") || r.modules[1].result != MODULE_FAIL)
				FAIL("perl_load_results: allocation %ld failed: 0, yet a module is not whole", n);
		} else {
			FAIL("perl_load_results: allocation %ld failed: %d (%s), expected ERR_NOMEM", n, rc, err_str(rc));
		}
		for (i = 0; i < r.nmodules; i++)
			results_module_release(&r.modules[i]);
		free(r.modules);
		r.modules = NULL;
		r.nmodules = 0;
		if (!fired) {
			CHECK_INT(rc, 0);
			break;
		}
	}
	CHECK(n > 1);
	free(dir);
}
