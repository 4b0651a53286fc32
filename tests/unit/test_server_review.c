/* SPDX-License-Identifier: MIT */
/* test_server_review.c - review.c and investigate.c on a real SQLite
 * database: the review queue and what takes a job off it, carry-over of
 * bug references (the right earlier job, the limit of reason changes, the
 * group switch), RETRY=N, and the investigation's last good job,
 * settings diff and git log read from result files and a real repository. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "unit.h"
#include "server/store/comments.h"
#include "server/db/db.h"
#include "server/store/investigate.h"
#include "server/store/jobs.h"
#include "server/store/review.h"
#include "util/err.h"
#include "util/file.h"
#include "util/git.h"
#include "util/path.h"

/* A finished job of scenario web@64bit whose modules ended as given
 * ("boot:passed,check:failed"). */
static int64_t done_job(struct db *db, const char *result, const char *modules, const char *retry, int64_t group)
{
	json_t *s = json_pack("{s:s,s:s,s:s,s:s,s:s,s:s}", "TEST", "web", "DISTRI", "d", "VERSION", "1", "FLAVOR", "cd",
			      "ARCH", "x86_64", "MACHINE", "64bit");
	char copy[256], *save = NULL, *m;
	int64_t id;

	if (retry)
		json_object_set_new(s, "RETRY", json_string(retry));
	CHECK_INT(jobs_insert(db, s, 50, group, 0, &id), 0);
	json_decref(s);
	CHECK_INT(db_exec(db, "UPDATE jobs SET state = 'done', result = ? WHERE id = ?", "ti", result, id), 1);
	snprintf(copy, sizeof(copy), "%s", modules);
	for (m = strtok_r(copy, ",", &save); m; m = strtok_r(NULL, ",", &save)) {
		char *colon = strchr(m, ':');
		*colon = '\0';
		CHECK_INT(db_exec(db, "INSERT INTO job_modules (job_id, name, result) VALUES (?, ?, ?)", "itt", id, m,
				  colon + 1), 1);
	}
	return id;
}

static void comment(struct db *db, int64_t job, const char *text)
{
	struct comments_author by = { 0, NULL, NULL };
	char msg[256];
	int64_t cid;

	CHECK_INT(comments_add(db, COMMENTS_JOB, job, text, &by, &cid, msg, sizeof(msg)), 0);
	CHECK_INT(review_refresh(db, job), 0);
}

/* The text of the job's newest comment, or "" (static buffer). */
static const char *last_comment(struct db *db, int64_t job)
{
	static char text[1024];
	char msg[256];
	json_t *a;

	CHECK_INT(comments_list(db, COMMENTS_JOB, job, 100, false, &a, msg, sizeof(msg)), 0);
	snprintf(text, sizeof(text), "%s",
		 json_array_size(a) ? json_string_value(json_object_get(json_array_get(a, json_array_size(a) - 1), "text"))
				    : "");
	json_decref(a);
	return text;
}

static bool queued(struct db *db, int64_t id)
{
	json_t *page, *j;
	size_t i;
	bool found = false;

	CHECK_INT(review_list(db, 0, REVIEW_PAGE_MAX, &page), 0);
	json_array_foreach(json_object_get(page, "jobs"), i, j)
		found |= json_integer_value(json_object_get(j, "id")) == id;
	json_decref(page);
	return found;
}

TEST(server_review_failure_reason)
{
	struct db *db = unit_db();
	int64_t a = done_job(db, "failed", "boot:passed,zz:failed,check:failed,after:none", NULL, 0);
	int64_t b = done_job(db, "passed", "boot:passed", NULL, 0);
	char *r;

	CHECK_INT(review_failure_reason(db, NULL, a, &r), 0);
	CHECK_STR(r, "after:none,check:failed,zz:failed");
	free(r);
	CHECK_INT(review_failure_reason(db, NULL, b, &r), 0);
	CHECK_STR(r, "GOOD");
	free(r);
	db_free(db);
}

TEST(server_review_carry_over_same_reason)
{
	struct db *db = unit_db();
	int64_t old = done_job(db, "failed", "boot:passed,check:failed", NULL, 0);
	int64_t other = done_job(db, "failed", "boot:failed", NULL, 0);
	int64_t good = done_job(db, "passed", "boot:passed,check:passed", NULL, 0);
	int64_t now, from;
	char want[128];

	comment(db, old, "plain words first");
	comment(db, old, "bsc#1234 the check is broken");
	comment(db, old, "and a chat without a reference");
	comment(db, other, "poo#99 other failure");
	(void)good;
	now = done_job(db, "failed", "boot:passed,check:failed", NULL, 0);
	CHECK_INT(review_job_done(db, NULL, now), 0);
	CHECK_INT(review_carry_over(db, NULL, now, &from), 0); /* a second time: still the same job */
	CHECK_INT(from, old);
	snprintf(want, sizeof(want), "bsc#1234 the check is broken\n\n(Automatic takeover from t#%lld)\n", (long long)old);
	CHECK_STR(last_comment(db, now), want);
	CHECK(!queued(db, now)); /* the carried reference reviews it */
	db_free(db);
}

TEST(server_review_carry_over_gives_up)
{
	struct db *db = unit_db();
	int64_t old = done_job(db, "failed", "check:failed", NULL, 0), now, from;

	comment(db, old, "bsc#1 known");
	/* Four different reasons between: more than three changes. */
	(void)done_job(db, "failed", "a:failed", NULL, 0);
	(void)done_job(db, "failed", "b:failed", NULL, 0);
	(void)done_job(db, "failed", "b:failed", NULL, 0); /* a repeated reason is no change */
	(void)done_job(db, "failed", "c:failed", NULL, 0);
	(void)done_job(db, "passed", "check:passed", NULL, 0);
	now = done_job(db, "failed", "check:failed", NULL, 0);
	CHECK_INT(review_carry_over(db, NULL, now, &from), 0);
	CHECK_INT(from, 0);
	CHECK(queued(db, now) == false); /* not refreshed yet: review_job_done does */
	CHECK_INT(review_job_done(db, NULL, now), 0);
	CHECK(queued(db, now));
	/* Three changes are still followed. */
	(void)done_job(db, "failed", "a:failed", NULL, 0);
	(void)done_job(db, "failed", "b:failed", NULL, 0);
	(void)done_job(db, "failed", "c:failed", NULL, 0);
	comment(db, now, "bsc#2 seen again");
	old = now;
	now = done_job(db, "failed", "check:failed", NULL, 0);
	CHECK_INT(review_carry_over(db, NULL, now, &from), 0);
	CHECK_INT(from, old);
	db_free(db);
}

TEST(server_review_carry_over_group_switch)
{
	struct db *db = unit_db();
	int64_t group, old, now, from;
	bool on;

	CHECK_INT(db_exec(db, "INSERT INTO job_groups (name, t_created) VALUES ('g', 'now')", NULL), 1);
	group = db_last_id(db);
	CHECK_INT(review_group_carry_over(db, group, &on), 0);
	CHECK(on);
	CHECK_INT(review_group_set_carry_over(db, group, false), 0);
	old = done_job(db, "failed", "check:failed", NULL, group);
	comment(db, old, "bsc#1 known");
	now = done_job(db, "failed", "check:failed", NULL, group);
	CHECK_INT(review_carry_over(db, NULL, now, &from), 0);
	CHECK_INT(from, 0);
	CHECK_INT(review_group_set_carry_over(db, group, true), 0);
	CHECK_INT(review_carry_over(db, NULL, now, &from), 0);
	CHECK_INT(from, old);
	CHECK_INT(review_group_set_carry_over(db, 999, true), ERR_NOT_FOUND);
	db_free(db);
}

TEST(server_review_retry)
{
	struct db *db = unit_db();
	int64_t first = done_job(db, "failed", "check:failed", "2:bsc#5 flaky", 0), second, third, none;
	json_t *j;

	CHECK_INT(review_retry(db, first, &second), 0);
	CHECK(second > first);
	CHECK_STR(last_comment(db, first), "Restarting because RETRY is set to 2 (and only restarted 0 times so far)");
	CHECK_INT(db_exec(db, "UPDATE jobs SET state = 'done', result = 'incomplete' WHERE id = ?", "i", second), 1);
	CHECK_INT(review_retry(db, second, &third), 0);
	CHECK(third > second);
	CHECK_INT(db_exec(db, "UPDATE jobs SET state = 'done', result = 'failed' WHERE id = ?", "i", third), 1);
	CHECK_INT(review_retry(db, third, &none), 0);
	CHECK_INT(none, 0); /* restarted twice: RETRY=2 is spent */
	CHECK_INT(review_job_json(db, NULL, third, &j), 0);
	CHECK_INT(json_integer_value(json_object_get(j, "restarts")), 2);
	CHECK_INT(json_array_size(json_object_get(j, "runs")), 3);
	CHECK_STR(json_string_value(json_object_get(j, "retry_verdict")), "failed 3 of 3 runs (RETRY=2)");
	json_decref(j);
	/* The original is off the queue (cloned), the last run on it. */
	CHECK_INT(review_refresh(db, first), 0);
	CHECK_INT(review_refresh(db, third), 0);
	CHECK(!queued(db, first));
	CHECK(queued(db, third));
	/* A pass on a retry tells a flaky failure. */
	CHECK_INT(db_exec(db, "UPDATE jobs SET result = 'passed' WHERE id = ?", "i", third), 1);
	CHECK_INT(review_job_json(db, NULL, first, &j), 0);
	CHECK_STR(json_string_value(json_object_get(j, "retry_verdict")), "passed on retry 2 of 2: flaky");
	json_decref(j);
	/* Passed, or no RETRY: nothing. */
	none = done_job(db, "passed", "check:passed", "3", 0);
	CHECK_INT(review_retry(db, none, &second), 0);
	CHECK_INT(second, 0);
	none = done_job(db, "failed", "check:failed", NULL, 0);
	CHECK_INT(review_retry(db, none, &second), 0);
	CHECK_INT(second, 0);
	db_free(db);
}

TEST(server_review_queue)
{
	struct db *db = unit_db();
	int64_t failed = done_job(db, "failed", "check:failed", NULL, 0);
	int64_t labelled = done_job(db, "failed", "check:failed", NULL, 0);
	int64_t soft = done_job(db, "softfailed", "check:softfailed", NULL, 0);
	int64_t softbad = done_job(db, "softfailed", "check:failed", NULL, 0);
	int64_t passed = done_job(db, "passed", "check:passed", NULL, 0);
	int64_t incomplete = done_job(db, "incomplete", "check:none", NULL, 0);
	int64_t ids[] = { failed, labelled, soft, softbad, passed, incomplete };
	char plan[512];
	json_t *page;

	for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++)
		CHECK_INT(review_refresh(db, ids[i]), 0);
	comment(db, labelled, "label:wontfix");
	comment(db, failed, "no reference in this one");
	CHECK(queued(db, failed));
	CHECK(!queued(db, labelled));
	CHECK(!queued(db, soft));
	CHECK(queued(db, softbad));
	CHECK(!queued(db, passed));
	CHECK(queued(db, incomplete));
	/* Newest first, a page at a time. */
	CHECK_INT(review_list(db, 0, 2, &page), 0);
	CHECK_INT(json_integer_value(json_object_get(json_array_get(json_object_get(page, "jobs"), 0), "id")), incomplete);
	CHECK_INT(json_integer_value(json_object_get(page, "next")), softbad);
	CHECK_STR(json_string_value(json_array_get(json_object_get(json_array_get(json_object_get(page, "jobs"), 1),
								   "failed_modules"), 0)), "check");
	json_decref(page);
	CHECK_INT(review_list(db, softbad, 2, &page), 0);
	CHECK_INT(json_array_size(json_object_get(page, "jobs")), 1);
	CHECK(json_is_null(json_object_get(page, "next")));
	json_decref(page);
	comment(db, failed, "gh#os-autoinst/openQA#12 filed");
	CHECK(!queued(db, failed));
	/* A page is a range of the partial index, whatever the table holds. */
	CHECK_INT(db_plan(db, "SELECT j.id FROM jobs j WHERE j.review_todo = 1 AND j.clone_id IS NULL AND j.id < ?"
			  " ORDER BY j.id DESC LIMIT ?", plan, sizeof(plan)), 0);
	if (!strstr(plan, "jobs_review"))
		FAIL("plan: %s", plan);
	db_free(db);
}

/* A job's result file, written as the worker's upload would leave it. */
static void result_file(const char *data, int64_t job, const char *name, const char *text)
{
	char rel[64], *dir, *path;

	snprintf(rel, sizeof(rel), "testresults/%lld", (long long)job);
	dir = path_join(data, rel);
	CHECK_INT(file_mkdir_p(dir, 0700), 0);
	path = path_join(dir, name);
	CHECK_INT(file_write_all(path, text, strlen(text)), 0);
	free(path);
	free(dir);
}

TEST(server_review_investigate)
{
	struct db *db = unit_db();
	const char *data = unit_tmpdir();
	int64_t good = done_job(db, "passed", "check:passed", NULL, 0);
	int64_t bad1 = done_job(db, "failed", "check:failed", NULL, 0);
	int64_t bad2 = done_job(db, "failed", "check:failed", NULL, 0);
	json_t *inv, *ff;
	char link[48];

	result_file(data, good, "vars.json", "{\"NAME\": \"1-x\", \"TAG\": \"grub-menu\", \"QEMURAM\": \"512\"}");
	result_file(data, bad2, "vars.json", "{\"NAME\": \"3-x\", \"QEMURAM\": \"1024\", \"NEW\": \"1\"}");
	result_file(data, good, "result-check.json",
		    "{\"details\": [{\"result\": \"ok\", \"tags\": [\"menu\"], \"needle\": \"menu-a\"},"
		    " {\"result\": \"ok\", \"tags\": [\"login\"], \"needle\": \"login\"}]}");
	result_file(data, bad2, "result-check.json",
		    "{\"details\": [{\"result\": \"ok\", \"tags\": [\"menu\"], \"needle\": \"menu-a\"},"
		    " {\"result\": \"fail\", \"tags\": [\"login\"], \"needles\": [{\"name\": \"login\"}]}]}");
	CHECK_INT(investigate_job(db, data, bad2, &inv), 0);
	snprintf(link, sizeof(link), "/tests/%lld", (long long)good);
	CHECK_STR(json_string_value(json_object_get(json_object_get(inv, "last_good"), "link")), link);
	CHECK_INT(json_integer_value(json_object_get(inv, "last_good_id")), good);
	CHECK_INT(atoll(json_string_value(json_object_get(json_object_get(inv, "first_bad"), "text"))), bad1);
	CHECK_STR(json_string_value(json_object_get(inv, "diff_to_last_good")),
		  "+NEW: 1\n-QEMURAM: 512\n+QEMURAM: 1024\n-TAG: grub-menu\n");
	CHECK_INT(json_array_size(json_object_get(inv, "settings_diff")), 3);
	CHECK(strstr(json_string_value(json_object_get(inv, "test_log")), "not known") != NULL);
	ff = json_object_get(inv, "first_failure");
	CHECK_STR(json_string_value(json_object_get(ff, "module")), "check");
	CHECK_INT(json_integer_value(json_object_get(ff, "step")), 2);
	CHECK_STR(json_string_value(json_object_get(json_object_get(ff, "last_good"), "needle")), "login");
	CHECK_INT(json_integer_value(json_object_get(json_object_get(ff, "last_good"), "job")), good);
	/* login: matched in the good run, only a candidate now. */
	CHECK_STR(json_string_value(json_object_get(json_array_get(json_object_get(inv, "needles_diff"), 0), "this")),
		  "candidate");
	json_decref(inv);
	CHECK_INT(investigate_job(db, data, good, &inv), 0);
	CHECK(json_string_value(json_object_get(inv, "error")) != NULL);
	json_decref(inv);
	CHECK_INT(investigate_job(db, data, 999, &inv), ERR_NOT_FOUND);
	db_free(db);
}

/* Run a shell command for a test's setup; the test fails when it does. */
static void sh(const char *cmd)
{
	CHECK_INT(system(cmd), 0);
}

TEST(server_review_investigate_git)
{
	struct db *db = unit_db();
	const char *data = unit_tmpdir();
	int64_t good = done_job(db, "passed", "check:passed", NULL, 0);
	int64_t bad = done_job(db, "failed", "check:failed", NULL, 0);
	char cmd[2048], first[GIT_HASH_MAX], second[GIT_HASH_MAX], vars[256], *repo = path_join(data, "tests/d");
	json_t *inv;

	snprintf(cmd, sizeof(cmd),
		 "set -e; mkdir -p '%s'; cd '%s'; git init -q; git config user.email t@t; git config user.name t;"
		 " echo a > main.lua; git add main.lua; git commit -qm 'first version'", repo, repo);
	sh(cmd);
	CHECK_INT(git_head(repo, first), 0);
	snprintf(cmd, sizeof(cmd), "set -e; cd '%s'; echo b > main.lua; git commit -qam 'boot: wait longer for the menu'",
		 repo);
	sh(cmd);
	CHECK_INT(git_head(repo, second), 0);
	CHECK(strcmp(first, second) != 0);
	snprintf(vars, sizeof(vars), "{\"TEST_GIT_HASH\": \"%s\"}", first);
	result_file(data, good, "vars.json", vars);
	snprintf(vars, sizeof(vars), "{\"TEST_GIT_HASH\": \"%s\"}", second);
	result_file(data, bad, "vars.json", vars);
	CHECK_INT(investigate_job(db, data, bad, &inv), 0);
	CHECK(strstr(json_string_value(json_object_get(inv, "test_log")), "boot: wait longer for the menu") != NULL);
	CHECK(strstr(json_string_value(json_object_get(inv, "test_log")), "first version") == NULL);
	json_decref(inv);
	CHECK_INT(git_head(data, first), ERR_NOT_FOUND); /* no work tree */
	free(repo);
	db_free(db);
}
