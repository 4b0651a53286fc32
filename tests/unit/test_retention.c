/* SPDX-License-Identifier: MIT */
/* test_retention.c - the cleanup's rules on a fresh database and data
 * directory: logs before results, important builds (group comment tags,
 * taken back by "-important") and linked jobs kept longer, 0 days kept
 * for ever, a group's assets within its size limit newest job first, an
 * asset any group keeps stays, nothing a job that has not finished names
 * is removed (listed as kept), untracked assets after their days; running
 * the plan removes rows, files and unlinked screenshots, and nothing else. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <fcntl.h>
#include <unistd.h>
#include "unit.h"
#include "server/db/db.h"
#include "server/store/retention.h"
#include "worker/asset_cache.h"
#include "util/err.h"
#include "util/file.h"
#include "util/path.h"

#define DAY 86400
#define NOW 1800000000 /* 2027-01-15 */

static void at(int64_t t, char out[DB_TIME_LEN])
{
	time_t tt = (time_t)t;
	struct tm tm;

	gmtime_r(&tt, &tm);
	strftime(out, DB_TIME_LEN, "%Y-%m-%dT%H:%M:%S", &tm);
}

/* A finished job of group (0: none), build, finished days ago, with an
 * ISO setting (NULL: none) and a results directory holding a log, a
 * result JSON, an uploaded log and a screenshot linked from images/. */
static int64_t job(struct db *db, int64_t group, const char *build, int days_ago, const char *state, const char *iso)
{
	char fin[DB_TIME_LEN], rel[128], *p;
	int64_t id;

	at(NOW - (int64_t)days_ago * DAY, fin);
	CHECK(db_exec(db, "INSERT INTO jobs (test, build, group_id, state, result, t_finished, t_created, t_updated)"
		      " VALUES ('t', ?, ?, ?, 'passed', ?, ?, ?)", "tItttt", build, group, state,
		      strcmp(state, "done") ? NULL : fin, fin, fin) == 1);
	id = db_last_id(db);
	if (iso)
		CHECK(db_exec(db, "INSERT INTO job_settings (job_id, key, value) VALUES (?, 'ISO', ?)", "it", id, iso) == 1);
	snprintf(rel, sizeof(rel), "testresults/%lld/ulogs", (long long)id);
	p = path_join(unit_tmpdir(), rel);
	CHECK_INT(file_mkdir_p(p, 0700), 0);
	free(p);
	snprintf(rel, sizeof(rel), "testresults/%lld/serial0.txt", (long long)id);
	p = path_join(unit_tmpdir(), rel);
	CHECK_INT(file_write_all(p, "serial", 6), 0);
	free(p);
	snprintf(rel, sizeof(rel), "testresults/%lld/ulogs/up.log", (long long)id);
	p = path_join(unit_tmpdir(), rel);
	CHECK_INT(file_write_all(p, "uploaded", 8), 0);
	free(p);
	snprintf(rel, sizeof(rel), "testresults/%lld/results.json", (long long)id);
	p = path_join(unit_tmpdir(), rel);
	CHECK_INT(file_write_all(p, "{}", 2), 0);
	free(p);
	{
		char *img = path_join(unit_tmpdir(), "images/aa.png"), *dst;
		char *dir = path_join(unit_tmpdir(), "images");
		CHECK_INT(file_mkdir_p(dir, 0700), 0);
		if (!file_exists(img))
			CHECK_INT(file_write_all(img, "png", 3), 0);
		snprintf(rel, sizeof(rel), "testresults/%lld/boot-1.png", (long long)id);
		dst = path_join(unit_tmpdir(), rel);
		CHECK(link(img, dst) == 0);
		free(dst);
		free(dir);
		free(img);
	}
	return id;
}

static int64_t group(struct db *db, const char *name)
{
	CHECK(db_exec(db, "INSERT INTO job_groups (name, t_created) VALUES (?, '2026-01-01T00:00:00')", "t", name) == 1);
	return db_last_id(db);
}

static int64_t asset(struct db *db, const char *name, int64_t size, int days_ago)
{
	char t[DB_TIME_LEN];

	at(NOW - (int64_t)days_ago * DAY, t);
	CHECK(db_exec(db, "INSERT INTO assets (type, name, size, t_created, t_updated) VALUES ('iso', ?, ?, ?, ?)", "titt",
		      name, size, t, t) == 1);
	return db_last_id(db);
}

static bool listed(json_t *plan, const char *what, int64_t id)
{
	json_t *v;
	size_t i;

	json_array_foreach(json_object_get(plan, what), i, v)
		if (json_integer_value(json_object_get(v, "id")) == id)
			return true;
	return false;
}

static const char *reason(json_t *plan, const char *what, int64_t id)
{
	json_t *v;
	size_t i;

	json_array_foreach(json_object_get(plan, what), i, v)
		if (json_integer_value(json_object_get(v, "id")) == id)
			return json_string_value(json_object_get(v, "reason"));
	return "";
}

TEST(retention_logs_then_results_by_group_settings)
{
	struct db *db = unit_db();
	json_t *plan;
	int64_t g = group(db, "g");
	int64_t fresh = job(db, g, "1", 5, "done", NULL);
	int64_t old_logs = job(db, g, "1", 40, "done", NULL);       /* past 30 days of logs */
	int64_t old = job(db, g, "1", 400, "done", NULL);           /* past 365 days of results */
	int64_t none = job(db, 0, "1", 40, "done", NULL);           /* no group: the defaults */
	int64_t running = job(db, g, "1", 400, "running", NULL);    /* never finished: never expires */

	CHECK_INT(retention_plan(db, unit_tmpdir(), NOW, &plan), 0);
	CHECK(!listed(plan, "logs", fresh) && !listed(plan, "jobs", fresh));
	CHECK(listed(plan, "logs", old_logs) && !listed(plan, "jobs", old_logs));
	CHECK_STR(reason(plan, "logs", old_logs), "logs of jobs are kept 30 days");
	CHECK(listed(plan, "jobs", old) && !listed(plan, "logs", old));
	CHECK_STR(reason(plan, "jobs", old), "results of jobs are kept 365 days");
	CHECK(listed(plan, "logs", none));
	CHECK(!listed(plan, "jobs", running) && !listed(plan, "logs", running));
	{
		json_t *l = json_array_get(json_object_get(plan, "logs"), 0);
		char *files = json_dumps(json_object_get(l, "files"), JSON_COMPACT);
		CHECK_STR(files, "[\"serial0.txt\",\"ulogs/up.log\"]");
		free(files);
		CHECK_INT(json_integer_value(json_object_get(l, "bytes")), 14);
	}
	json_decref(plan);
	/* The group keeps logs 50 days and results for ever (0). */
	CHECK(db_exec(db, "UPDATE job_groups SET keep_logs_in_days = 50, keep_results_in_days = 0 WHERE id = ?", "i", g) == 1);
	CHECK_INT(retention_plan(db, unit_tmpdir(), NOW, &plan), 0);
	CHECK(!listed(plan, "logs", old_logs));
	CHECK(!listed(plan, "jobs", old) && listed(plan, "logs", old));
	CHECK_STR(reason(plan, "logs", old), "logs of jobs are kept 50 days");
	json_decref(plan);
	db_free(db);
}

TEST(retention_important_builds_and_linked_jobs_kept_longer)
{
	struct db *db = unit_db();
	json_t *plan;
	int64_t g = group(db, "g");
	int64_t imp = job(db, g, "42", 400, "done", NULL);
	int64_t back = job(db, g, "43", 400, "done", NULL);
	int64_t linked = job(db, g, "44", 400, "done", NULL);
	int64_t plain = job(db, g, "45", 400, "done", NULL);

	CHECK(db_exec(db, "INSERT INTO comments (group_id, text, user_name, t_created, t_updated) VALUES"
		      " (?, 'tag:42:important release', 'a', 'x', 'x'), (?, 'see tag:43:important', 'a', 'x', 'x'),"
		      " (?, 'tag:43:-important', 'a', 'x', 'x')", "iii", g, g, g) == 3);
	CHECK(db_exec(db, "INSERT INTO comments (job_id, text, user_name, t_created, t_updated) VALUES"
		      " (?, 'label:linked https://x/t/1', 'a', 'x', 'x')", "i", linked) == 1);
	CHECK_INT(retention_plan(db, unit_tmpdir(), NOW, &plan), 0);
	/* keep_important_results_in_days 0 (the default): important results for ever; their logs 120 days */
	CHECK(!listed(plan, "jobs", imp) && listed(plan, "logs", imp));
	CHECK_STR(reason(plan, "logs", imp), "logs of important jobs are kept 120 days");
	CHECK(listed(plan, "jobs", back)); /* the tag was taken back */
	CHECK(!listed(plan, "jobs", linked) && listed(plan, "logs", linked));
	CHECK(listed(plan, "jobs", plain));
	json_decref(plan);
	/* important results kept 500 days: still there; 300 days: not longer than 365, so for ever (openQA's rule) */
	CHECK(db_exec(db, "UPDATE job_groups SET keep_important_results_in_days = 300 WHERE id = ?", "i", g) == 1);
	CHECK_INT(retention_plan(db, unit_tmpdir(), NOW, &plan), 0);
	CHECK(!listed(plan, "jobs", imp));
	json_decref(plan);
	CHECK(db_exec(db, "UPDATE job_groups SET keep_important_results_in_days = 380 WHERE id = ?", "i", g) == 1);
	CHECK_INT(retention_plan(db, unit_tmpdir(), NOW, &plan), 0);
	CHECK(listed(plan, "jobs", imp));
	CHECK_STR(reason(plan, "jobs", imp), "results of important jobs are kept 380 days");
	json_decref(plan);
	db_free(db);
}

TEST(retention_assets_by_size_limit_pending_and_untracked)
{
	struct db *db = unit_db();
	json_t *plan;
	int64_t g = group(db, "small"), h = group(db, "big");
	int64_t a_new = asset(db, "new.iso", 600 * 1048576, 30), a_old = asset(db, "old.iso", 600 * 1048576, 30);
	int64_t a_shared = asset(db, "shared.iso", 600 * 1048576, 30), a_pend = asset(db, "pend.iso", 600 * 1048576, 30);
	int64_t a_lone = asset(db, "lone.iso", 10, 20), a_young = asset(db, "young.iso", 10, 2);

	CHECK(db_exec(db, "UPDATE job_groups SET size_limit_gb = 1 WHERE id = ?", "i", g) == 1);
	(void)job(db, g, "1", 1, "done", "old.iso");
	(void)job(db, g, "1", 1, "done", "shared.iso");
	(void)job(db, g, "1", 1, "done", "pend.iso");
	(void)job(db, g, "2", 1, "scheduled", "pend.iso");
	(void)job(db, g, "3", 1, "done", "new.iso");      /* the newest job: its asset fits first */
	(void)job(db, h, "1", 1, "done", "shared.iso");   /* group big (100 GB) keeps it */
	CHECK_INT(retention_plan(db, unit_tmpdir(), NOW, &plan), 0);
	CHECK(!listed(plan, "assets", a_new));
	CHECK(listed(plan, "assets", a_old));
	CHECK_STR(reason(plan, "assets", a_old), "over the size limit of group 1 (1 GB)");
	CHECK(!listed(plan, "assets", a_shared));
	CHECK(!listed(plan, "assets", a_pend) && listed(plan, "kept_assets", a_pend));
	CHECK(strstr(reason(plan, "kept_assets", a_pend), "not finished, names it") != NULL);
	CHECK(listed(plan, "assets", a_lone));
	CHECK_STR(reason(plan, "assets", a_lone), "no job names it and it is older than 14 days");
	CHECK(!listed(plan, "assets", a_young));
	CHECK(json_integer_value(json_object_get(plan, "bytes")) >= 600 * 1048576 + 10);
	json_decref(plan);
	db_free(db);
}

TEST(retention_run_removes_exactly_the_plan)
{
	struct db *db = unit_db();
	json_t *done;
	char *p;
	int64_t g = group(db, "g");
	int64_t old = job(db, g, "1", 400, "done", NULL), logs = job(db, g, "1", 40, "done", NULL);
	int64_t keep = job(db, g, "1", 1, "done", NULL);
	int64_t n = 0;
	char rel[128];

	CHECK_INT(retention_run(db, unit_tmpdir(), NOW, &done), 0);
	CHECK(listed(done, "jobs", old) && listed(done, "logs", logs));
	CHECK(db_query_int(db, &n, "SELECT 1 FROM jobs WHERE id = ?", "i", old) == ERR_NOT_FOUND);
	snprintf(rel, sizeof(rel), "testresults/%lld", (long long)old);
	p = path_join(unit_tmpdir(), rel);
	CHECK(!file_exists(p));
	free(p);
	snprintf(rel, sizeof(rel), "testresults/%lld/serial0.txt", (long long)logs);
	p = path_join(unit_tmpdir(), rel);
	CHECK(!file_exists(p));
	free(p);
	snprintf(rel, sizeof(rel), "testresults/%lld/ulogs", (long long)logs);
	p = path_join(unit_tmpdir(), rel);
	CHECK(!file_exists(p));
	free(p);
	snprintf(rel, sizeof(rel), "testresults/%lld/results.json", (long long)logs);
	p = path_join(unit_tmpdir(), rel);
	CHECK(file_exists(p)); /* results stay */
	free(p);
	snprintf(rel, sizeof(rel), "testresults/%lld/boot-1.png", (long long)logs);
	p = path_join(unit_tmpdir(), rel);
	CHECK(file_exists(p));
	free(p);
	CHECK_INT(db_query_int(db, &n, "SELECT logs_present FROM jobs WHERE id = ?", "i", logs), 0);
	CHECK_INT(n, 0);
	CHECK_INT(db_query_int(db, &n, "SELECT logs_present FROM jobs WHERE id = ?", "i", keep), 0);
	CHECK_INT(n, 1);
	/* the shared screenshot is still linked by two jobs: stays */
	CHECK_INT(json_integer_value(json_object_get(done, "removed_images")), 0);
	json_decref(done);
	/* a second run finds nothing more; then, the other jobs gone, the screenshot goes too */
	CHECK_INT(retention_run(db, unit_tmpdir(), NOW, &done), 0);
	CHECK_INT(json_array_size(json_object_get(done, "jobs")) + json_array_size(json_object_get(done, "logs")), 0);
	json_decref(done);
	CHECK(db_exec(db, "UPDATE job_groups SET keep_results_in_days = 1 WHERE id = ?", "i", g) == 1);
	CHECK_INT(retention_run(db, unit_tmpdir(), NOW + 3 * DAY, &done), 0);
	CHECK_INT(json_array_size(json_object_get(done, "jobs")), 2);
	CHECK_INT(json_integer_value(json_object_get(done, "removed_images")), 1);
	p = path_join(unit_tmpdir(), "images/aa.png");
	CHECK(!file_exists(p));
	free(p);
	json_decref(done);
	db_free(db);
}

/* An entry of the worker's asset cache: POOL/cache/assets/iso/<key>/<name>
 * of size bytes, last used `ago` seconds before now. The file's path. */
static char *cache_entry(const char *key, const char *name, size_t size, int ago)
{
	char rel[256], *dir, *file, *data = calloc(1, size);
	struct timespec ts[2];

	snprintf(rel, sizeof(rel), "pool/cache/assets/iso/%s", key);
	dir = path_join(unit_tmpdir(), rel);
	CHECK_INT(file_mkdir_p(dir, 0700), 0);
	file = path_join(dir, name);
	CHECK_INT(file_write_all(file, data, size), 0);
	clock_gettime(CLOCK_REALTIME, &ts[0]);
	ts[0].tv_sec -= ago;
	ts[1] = ts[0];
	CHECK(utimensat(AT_FDCWD, dir, ts, 0) == 0);
	free(data);
	free(dir);
	return file;
}

TEST(worker_asset_cache_prunes_least_recently_used_never_the_current_job)
{
	char *a = cache_entry("k1", "a.iso", 100000, 300), *b = cache_entry("k2", "b.iso", 100000, 200);
	char *c = cache_entry("k3", "c.iso", 100000, 100), *d = cache_entry("k4", "d.iso", 100000, 400);
	char *pool = path_join(unit_tmpdir(), "pool");
	const char *keep[] = { d }; /* the oldest, but the current job's */
	int removed;
	int64_t left;

	asset_cache_touch(a); /* used now: the newest */
	left = asset_cache_prune(pool, 250000, keep, 1, &removed);
	CHECK_INT(removed, 2);
	CHECK(file_exists(a) && file_exists(d));
	CHECK(!file_exists(b) && !file_exists(c));
	CHECK(left <= 250000);
	/* under the cap: nothing goes */
	CHECK_INT(asset_cache_prune(pool, 1 << 30, NULL, 0, &removed) > 0, 1);
	CHECK_INT(removed, 0);
	free(a);
	free(b);
	free(c);
	free(d);
	free(pool);
}
