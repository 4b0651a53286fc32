/* SPDX-License-Identifier: MIT */
/* test_rejudge.c - re-judging stored screenshots with the GRUB example's
 * real needles and screens: a failed assert that a new needle makes pass
 * (the honest "must run on" verdict), one that still fails with its best
 * candidate's figures, an unmatched check_screen, a module that failed
 * otherwise, the tag filter of the build's other jobs, one decode per
 * screenshot file shared by hard links, and the last-answer store. */
#include <stdlib.h>
#include <unistd.h>
#include "unit.h"
#include "server/db/db.h"
#include "server/store/rejudge.h"
#include "util/err.h"
#include "util/file.h"
#include "util/path.h"
#include "util/str.h"

#define GRUB "examples/grub/needles"

static void copy_file(const char *from, const char *dir, const char *name)
{
	struct buf b;
	char *to = path_join(dir, name);

	buf_init(&b, 64u << 20);
	CHECK_INT(file_read_all(from, &b), 0);
	CHECK_INT(file_write_all(to, b.data, b.len), 0);
	buf_release(&b);
	free(to);
}

static void write_text(const char *dir, const char *name, const char *text)
{
	char *p = path_join(dir, name);

	CHECK_INT(file_write_all(p, text, strlen(text)), 0);
	free(p);
}

/* needles/: grub-menu-memtest carrying the tag "menu" (it misses on
 * grub-menu.png's screen); with fixed, grub-menu under "menu" too. */
static char *needles(bool fixed)
{
	char *dir = path_join(unit_tmpdir(), "needles");
	const char *memtest =
		"{\"tags\": [\"menu\"], \"area\": [{\"xpos\": 18, \"ypos\": 62, \"width\": 400, \"height\": 145,"
		" \"type\": \"match\"}]}";
	const char *menu =
		"{\"tags\": [\"menu\", \"grub-menu\"], \"area\": [{\"xpos\": 18, \"ypos\": 62, \"width\": 400,"
		" \"height\": 145, \"type\": \"match\"}]}";

	CHECK_INT(file_mkdir_p(dir, 0700), 0);
	write_text(dir, "memtest.json", memtest);
	copy_file(GRUB "/grub-menu-memtest.png", dir, "memtest.png");
	if (fixed) {
		write_text(dir, "menu.json", menu);
		copy_file(GRUB "/grub-menu.png", dir, "menu.png");
	}
	return dir;
}

/* A job's results: module "boot" passed, "menu" failed on an assert of
 * "menu" after an unmatched check_screen of "menu", "script" failed
 * without a screen check. */
static char *results(const char *name)
{
	char *dir = path_join(unit_tmpdir(), name);

	CHECK_INT(file_mkdir_p(dir, 0700), 0);
	copy_file(GRUB "/grub-menu.png", dir, "menu-1.png");
	{
		char *a = path_join(dir, "menu-1.png"), *b = path_join(dir, "menu-2.png");
		CHECK_INT(link(a, b), 0);
		free(a);
		free(b);
	}
	write_text(dir, "result-boot.json", "{\"result\": \"ok\", \"details\": [{\"result\": \"ok\","
		   " \"tags\": [\"menu\"], \"needle\": \"memtest\", \"screenshot\": \"menu-1.png\"}]}");
	write_text(dir, "result-menu.json", "{\"result\": \"fail\", \"details\": ["
		   "{\"result\": \"unk\", \"tags\": [\"menu\"], \"screenshot\": \"menu-1.png\", \"needles\": []},"
		   "{\"result\": \"fail\", \"tags\": [\"menu\"], \"screenshot\": \"menu-2.png\", \"needs_review\": true,"
		   " \"needles\": [{\"name\": \"memtest\", \"area\": [{\"similarity\": 81}]}]},"
		   "{\"title\": \"Failed\", \"result\": \"fail\", \"text\": \"menu-3.txt\"}]}");
	write_text(dir, "result-script.json", "{\"result\": \"fail\", \"details\": ["
		   "{\"title\": \"Failed\", \"result\": \"fail\", \"text\": \"script-1.txt\"}]}");
	return dir;
}

static json_t *modules(bool with_script)
{
	return with_script ? json_pack("[{s:s,s:s},{s:s,s:s},{s:s,s:s}]", "name", "boot", "result", "passed",
				       "name", "menu", "result", "failed", "name", "script", "result", "failed")
			   : json_pack("[{s:s,s:s},{s:s,s:s}]", "name", "boot", "result", "passed",
				       "name", "menu", "result", "failed");
}

static json_t *judge_since(bool fixed, bool with_script, double since, json_t **asked)
{
	struct rejudge rj;
	char msg[256];
	json_t *mods = modules(with_script), *out = NULL;
	char *nd = needles(fixed), *rd = results("job7");

	CHECK_INT(rejudge_init(&rj, nd, msg, sizeof(msg)), 0);
	CHECK_INT(rejudge_add_job(&rj, json_pack("{s:i}", "id", 7), rd, mods, NULL, since, asked), 0);
	CHECK_INT(rejudge_run(&rj, &out), 0);
	/* two steps on one file (hard links): decoded once */
	CHECK_INT(json_integer_value(json_object_get(json_object_get(out, "stats"), "screenshots_decoded")), 1);
	rejudge_release(&rj);
	json_decref(mods);
	free(nd);
	free(rd);
	return out;
}

static json_t *judge(bool fixed, bool with_script, json_t **asked)
{
	return judge_since(fixed, with_script, 0, asked);
}

static json_t *first_job(json_t *out)
{
	return json_array_get(json_object_get(out, "jobs"), 0);
}

static const char *s_of(const json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

TEST(rejudge_still_failing_names_best_candidate)
{
	json_t *asked = NULL, *out = judge(false, false, &asked), *job = first_job(out);
	json_t *steps = json_object_get(job, "steps"), *assert_step = json_array_get(steps, 1);
	json_t *nj = json_object_get(assert_step, "new");

	CHECK_INT(json_array_size(asked), 1);
	CHECK_STR(json_string_value(json_array_get(asked, 0)), "menu");
	CHECK_INT(json_array_size(steps), 2); /* the passed step is left alone */
	CHECK_STR(s_of(json_array_get(steps, 0), "check"), "check_screen");
	CHECK_STR(s_of(assert_step, "check"), "assert_screen");
	CHECK_INT(json_integer_value(json_object_get(assert_step, "step")), 2);
	CHECK(!json_is_true(json_object_get(assert_step, "would_pass")));
	CHECK_STR(s_of(nj, "result"), "fail");
	CHECK_STR(s_of(nj, "needle"), "memtest");
	CHECK_STR(s_of(nj, "search"), "whole screen");
	CHECK(json_integer_value(json_object_get(nj, "similarity")) < 96);
	CHECK_INT(json_integer_value(json_object_get(json_object_get(assert_step, "old"), "similarity")), 81);
	CHECK_STR(s_of(job, "verdict"), "still_failing");
	CHECK(strstr(s_of(job, "summary"), "module 'menu' step 2 still fails: best candidate memtest at "));
	CHECK(strstr(s_of(job, "summary"), " % < 96 %"));
	json_decref(asked);
	json_decref(out);
}

/* Needles older than the job's start missed on the whole screen in the
 * run already: only the margin search is done again for them. */
TEST(rejudge_unchanged_needles_keep_the_runs_whole_screen_search)
{
	json_t *out = judge_since(false, false, 4e9, NULL), *job = first_job(out);
	json_t *nj = json_object_get(json_array_get(json_object_get(job, "steps"), 1), "new");

	CHECK_STR(s_of(nj, "result"), "fail");
	CHECK_STR(s_of(nj, "search"), "margin");
	CHECK_STR(s_of(job, "verdict"), "still_failing");
	json_decref(out);
}

TEST(rejudge_would_pass_must_run_on)
{
	json_t *out = judge(true, false, NULL), *job = first_job(out);
	json_t *steps = json_object_get(job, "steps"), *nj = json_object_get(json_array_get(steps, 1), "new");

	CHECK(json_is_true(json_object_get(json_array_get(steps, 0), "would_pass")));
	CHECK(json_is_true(json_object_get(json_array_get(steps, 1), "would_pass")));
	CHECK_STR(s_of(nj, "result"), "pass");
	CHECK_STR(s_of(nj, "needle"), "menu");
	CHECK_STR(s_of(nj, "search"), "margin");
	CHECK_INT(json_integer_value(json_object_get(nj, "similarity")), 100);
	CHECK_INT(json_integer_value(json_object_get(job, "would_pass")), 2);
	/* a stored screenshot proves a step, never the job */
	CHECK_STR(s_of(job, "verdict"), "would_run_on");
	CHECK(str_starts_with(s_of(job, "summary"), "step would pass; the job must run on from here"));
	CHECK_STR(s_of(job, "failed_module"), "menu");
	CHECK_INT(json_integer_value(json_object_get(job, "failed_step")), 2);
	json_decref(out);
}

TEST(rejudge_other_failure_stays)
{
	json_t *out = judge(true, true, NULL), *job = first_job(out);

	CHECK_STR(s_of(job, "verdict"), "other_failure");
	CHECK(strstr(s_of(job, "summary"), "module 'script' failed for another reason"));
	json_decref(out);
}

TEST(rejudge_other_jobs_only_same_tags)
{
	struct rejudge rj;
	char msg[256];
	json_t *mods = modules(false), *only = json_pack("[s]", "grub-menu"), *out = NULL;
	char *nd = needles(true), *rd = results("job8");

	CHECK_INT(rejudge_init(&rj, nd, msg, sizeof(msg)), 0);
	CHECK_INT(rejudge_add_job(&rj, json_pack("{s:i}", "id", 8), rd, mods, only, 0, NULL), 0);
	CHECK_INT(rj.ntasks, 0);
	CHECK_INT(rejudge_run(&rj, &out), 0);
	CHECK_STR(s_of(first_job(out), "verdict"), "still_failing");
	CHECK(strstr(s_of(first_job(out), "summary"), "other tags"));
	json_decref(out);
	rejudge_release(&rj);
	json_decref(mods);
	json_decref(only);
	free(nd);
	free(rd);
}

TEST(rejudge_store_keeps_last)
{
	struct rejudge_store *s = NULL;
	json_t *a = json_pack("{s:i,s:s}", "id", 3, "verdict", "still_failing");
	json_t *b = json_pack("{s:i,s:s}", "id", 3, "verdict", "would_run_on"), *got;
	int i;

	CHECK_INT(rejudge_store_new(&s), 0);
	CHECK(rejudge_store_get(s, 3) == NULL);
	CHECK_INT(rejudge_store_put(s, a, "2026-01-01T00:00:00"), 0);
	CHECK_INT(rejudge_store_put(s, b, "2026-01-01T00:00:01"), 0);
	got = rejudge_store_get(s, 3);
	CHECK_STR(s_of(got, "verdict"), "would_run_on");
	CHECK_STR(s_of(got, "time"), "2026-01-01T00:00:01");
	json_decref(got);
	/* full: the oldest goes */
	for (i = 0; i < REJUDGE_STORE_MAX; i++) {
		json_t *j = json_pack("{s:i}", "id", 100 + i);
		CHECK_INT(rejudge_store_put(s, j, "t"), 0);
		json_decref(j);
	}
	CHECK(rejudge_store_get(s, 3) == NULL);
	got = rejudge_store_get(s, 100 + REJUDGE_STORE_MAX - 1);
	CHECK(got != NULL);
	json_decref(got);
	json_decref(a);
	json_decref(b);
	rejudge_store_free(s);
}

/* Jobs 1..4 of one build and job 5 of another: 1 asked, 2 failed on the
 * same tag, 3 passed, 4 failed but restarted (clone 6); job 5 is another
 * build. The request re-judges 1 and 2 only. */
TEST(rejudge_build_takes_the_builds_failed_jobs)
{
	struct db *db = unit_db();
	const char *data = unit_tmpdir();
	static const struct { const char *result, *build; int64_t clone; } jobs[] = {
		{ "failed", "7", 0 }, { "failed", "7", 0 }, { "passed", "7", 0 }, { "failed", "7", 6 },
		{ "failed", "8", 0 }, { "none", "7", 0 },
	};
	char msg[256], rel[64];
	json_t *out = NULL, *list;
	size_t i;
	int64_t id;

	for (i = 0; i < sizeof(jobs) / sizeof(jobs[0]); i++) {
		char *dir, *nd;
		CHECK_INT(db_exec(db, "INSERT INTO jobs (state, result, test, distri, version, flavor, arch, build, machine,"
				  " t_created, t_updated) VALUES (?, ?, 'menu', 'grub', '1', 'cd', 'x86_64', ?, '64bit', 'x', 'x')",
				  "ttt", i == 5 ? "scheduled" : "done", jobs[i].result, jobs[i].build), 1);
		id = (int64_t)i + 1;
		CHECK_INT(db_exec(db, "INSERT INTO job_modules (job_id, name, result) VALUES (?, 'boot', 'passed'),"
				  " (?, 'menu', 'failed')", "ii", id, id), 2);
		snprintf(rel, sizeof(rel), "testresults/%lld", (long long)id);
		dir = path_join(data, rel);
		CHECK_INT(file_mkdir_p(dir, 0700), 0);
		nd = results(rel);
		free(nd);
		free(dir);
	}
	CHECK_INT(db_exec(db, "UPDATE jobs SET clone_id = 6 WHERE id = 4", NULL), 1);
	{
		char *nd = needles(true), *dest = path_join(data, "tests/grub");
		CHECK_INT(file_mkdir_p(dest, 0700), 0);
		free(dest);
		dest = path_join(data, "tests/grub/needles");
		CHECK_INT(rename(nd, dest), 0);
		free(dest);
		free(nd);
	}
	CHECK_INT(rejudge_build(db, data, 1, &out, msg, sizeof(msg)), 0);
	list = json_object_get(out, "jobs");
	CHECK_INT(json_array_size(list), 2);
	CHECK_INT(json_integer_value(json_object_get(json_array_get(list, 0), "id")), 1);
	CHECK_INT(json_integer_value(json_object_get(json_array_get(list, 1), "id")), 2);
	CHECK_STR(s_of(json_array_get(list, 1), "verdict"), "would_run_on");
	CHECK_STR(s_of(json_object_get(out, "build"), "build"), "7");
	json_decref(out);
	CHECK_INT(rejudge_build(db, data, 6, &out, msg, sizeof(msg)), ERR_BADSTATE);
	CHECK(strstr(msg, "scheduled"));
	CHECK_INT(rejudge_build(db, data, 99, &out, msg, sizeof(msg)), ERR_NOT_FOUND);
	db_free(db);
}
