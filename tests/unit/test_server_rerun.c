/* SPDX-License-Identifier: MIT */
/* test_server_rerun.c - re-run from a milestone without HTTP: where the
 * clone resumes, the pin to the worker keeping the snapshot (offered to it
 * only), its release to any worker when the deadline passes or the worker
 * no longer reports the snapshot, a full re-run when nobody keeps it, and
 * the copy of the earlier modules (files hard-linked, copied_from, the
 * result over all modules) when the resumed job is done. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include "unit.h"
#include "server/store/artefacts.h"
#include "server/db/db.h"
#include "server/store/jobs.h"
#include "server/store/rerun.h"
#include "server/sched/sched.h"
#include "server/store/workers.h"
#include "util/err.h"
#include "util/file.h"
#include "util/path.h"

/* A finished, failed job with modules boot (milestone), setup, check
 * (failed), last; results given as the status would set them. */
static int64_t failed_job(struct db *db)
{
	static const char *const mods[][3] = {
		{ "boot", "passed", "1" }, { "setup", "passed", "0" }, { "check", "failed", "0" }, { "last", "passed", "0" },
	};
	json_t *s = json_pack("{s:s,s:s}", "TEST", "t", "WORKER_CLASS", "qemu_x86_64");
	int64_t id = 0;
	size_t i;

	CHECK_INT(jobs_insert(db, s, 50, 0, 0, &id), 0);
	json_decref(s);
	for (i = 0; i < 4; i++)
		CHECK_INT(db_exec(db, "INSERT INTO job_modules (job_id, name, category, script, milestone, important, fatal,"
				  " result) VALUES (?, ?, 'tests', '', ?, 1, 0, ?)", "itit", id, mods[i][0],
				  (int64_t)(mods[i][2][0] - '0'), mods[i][1]), 1);
	CHECK_INT(db_exec(db, "UPDATE jobs SET state = 'done', result = 'failed' WHERE id = ?", "i", id), 1);
	return id;
}

static int64_t now(void)
{
	return (int64_t)time(NULL);
}

TEST(rerun_pinned_to_its_worker)
{
	struct db *db = unit_db();
	int64_t w1 = 0, w2 = 0, job = 0, old = failed_job(db), from = 0, clone = 0;
	char msg[256], *module = NULL;
	json_t *r = NULL;

	CHECK_INT(workers_register(db, "h", 1, NULL, 1000, &w1), 0);
	CHECK_INT(workers_register(db, "h", 2, NULL, 1000, &w2), 0);
	CHECK_INT(rerun_record_held(db, w1, "3,") == ERR_INVALID || rerun_record_held(db, w1, "x") == ERR_INVALID, 1);
	CHECK_INT(rerun_record_held(db, w1, "999,123"), 0);
	CHECK_INT(rerun_record_held(db, w1, "999"), 0); /* replaces the list */
	{
		char list[32];
		snprintf(list, sizeof(list), "%lld,999", (long long)old);
		CHECK_INT(rerun_record_held(db, w1, list), 0);
	}
	CHECK_INT(rerun_create(db, old, NULL, now(), 600, &r, msg, sizeof(msg)), 0);
	CHECK_STR(json_string_value(json_object_get(r, "resume_from")), "setup");
	CHECK_STR(json_string_value(json_object_get(r, "milestone")), "boot");
	CHECK_INT(json_integer_value(json_object_get(r, "worker_id")), w1);
	/* A clone in restart's sense: the old job's clone_id names it. */
	CHECK_INT(db_query_int(db, &clone, "SELECT clone_id FROM jobs WHERE id = ?", "i", old), 0);
	CHECK_INT(clone, json_integer_value(json_object_get(r, "id")));
	CHECK_INT(sched_pick(db, w2, &job), ERR_NOT_FOUND); /* pinned elsewhere */
	CHECK_INT(sched_pick(db, w1, &job), 0);
	CHECK_INT(job, clone);
	CHECK_INT(rerun_resume_of(db, job, &module, &from), 0);
	CHECK_STR(module, "setup");
	CHECK_INT(from, old);
	free(module);
	/* Already cloned: a second re-run is refused as restart refuses it. */
	json_decref(r);
	CHECK_INT(rerun_create(db, old, NULL, now(), 600, &r, msg, sizeof(msg)), ERR_BADSTATE);
	db_free(db);
}

TEST(rerun_deadline_releases_to_any_worker)
{
	struct db *db = unit_db();
	int64_t w1 = 0, w2 = 0, job = 0, old = failed_job(db), from = 0;
	char msg[256], list[24], *module = NULL;
	json_t *r = NULL;

	CHECK_INT(workers_register(db, "h", 1, NULL, 1000, &w1), 0);
	CHECK_INT(workers_register(db, "h", 2, NULL, 1000, &w2), 0);
	snprintf(list, sizeof(list), "%lld", (long long)old);
	CHECK_INT(rerun_record_held(db, w1, list), 0);
	/* Module "last": the milestone before it is still boot. */
	CHECK_INT(rerun_create(db, old, "last", now() - 10, 5, &r, msg, sizeof(msg)), 0);
	CHECK_STR(json_string_value(json_object_get(r, "resume_from")), "setup");
	/* The deadline has passed: w2 gets it, as a full re-run. */
	CHECK_INT(sched_pick(db, w2, &job), 0);
	CHECK_INT(job, json_integer_value(json_object_get(r, "id")));
	CHECK_INT(rerun_resume_of(db, job, &module, &from), 0);
	CHECK(module == NULL);
	json_decref(r);
	db_free(db);
}

TEST(rerun_lost_snapshot_releases)
{
	struct db *db = unit_db();
	int64_t w1 = 0, w2 = 0, job = 0, old = failed_job(db);
	char msg[256], list[24];
	json_t *r = NULL;
	int n = 0;

	CHECK_INT(workers_register(db, "h", 1, NULL, 1000, &w1), 0);
	CHECK_INT(workers_register(db, "h", 2, NULL, 1000, &w2), 0);
	snprintf(list, sizeof(list), "%lld", (long long)old);
	CHECK_INT(rerun_record_held(db, w1, list), 0);
	CHECK_INT(rerun_create(db, old, "check", now(), 600, &r, msg, sizeof(msg)), 0);
	CHECK_INT(rerun_release_due(db, now(), &n), 0);
	CHECK_INT(n, 0); /* still held, deadline ahead */
	CHECK_INT(sched_pick(db, w2, &job), ERR_NOT_FOUND);
	CHECK_INT(rerun_record_held(db, w1, ""), 0); /* w1 evicted it */
	CHECK_INT(sched_pick(db, w2, &job), 0);
	CHECK_INT(job, json_integer_value(json_object_get(r, "id")));
	json_decref(r);
	db_free(db);
}

TEST(rerun_full_without_snapshot_or_milestone)
{
	struct db *db = unit_db();
	int64_t old = failed_job(db), w1 = 0;
	char msg[256], list[24];
	json_t *r = NULL;

	CHECK_INT(rerun_create(db, old, NULL, now(), 600, &r, msg, sizeof(msg)), 0);
	CHECK(json_is_null(json_object_get(r, "worker_id"))); /* nobody keeps it */
	CHECK(json_object_get(r, "resume_from") == NULL || json_is_null(json_object_get(r, "resume_from")));
	json_decref(r);
	old = failed_job(db);
	CHECK_INT(workers_register(db, "h", 1, NULL, 1000, &w1), 0);
	snprintf(list, sizeof(list), "%lld", (long long)old);
	CHECK_INT(rerun_record_held(db, w1, list), 0);
	CHECK_INT(rerun_create(db, old, "boot", now(), 600, &r, msg, sizeof(msg)), 0);
	CHECK(json_is_null(json_object_get(r, "worker_id"))); /* no milestone before boot */
	json_decref(r);
	CHECK_INT(rerun_create(db, old, "nope", now(), 600, &r, msg, sizeof(msg)), ERR_INVALID);
	CHECK(strstr(msg, "nope") != NULL);
	CHECK_INT(rerun_create(db, 4242, NULL, now(), 600, &r, msg, sizeof(msg)), ERR_NOT_FOUND);
	db_free(db);
}

static void put(const char *data, int64_t job, const char *name, const char *text)
{
	char *p = artefact_path(data, job, name), *dir = artefact_kind_path(data, job, ARTEFACT_THUMB, NULL);

	CHECK(p && dir);
	CHECK_INT(file_mkdir_p(dir, 0700), 0); /* the job's directory with its .thumbs */
	CHECK_INT(file_write_all(p, text, strlen(text)), 0);
	free(p);
	free(dir);
}

TEST(rerun_finish_copies_earlier_modules)
{
	struct db *db = unit_db();
	const char *data = unit_tmpdir();
	int64_t w1 = 0, job = 0, old = failed_job(db);
	char msg[256], list[24], result[32] = "passed";
	json_t *r = NULL, *res, *mod;
	char *a, *b, *ta, *tb;
	struct stat sa, sb;

	CHECK_INT(workers_register(db, "h", 1, NULL, 1000, &w1), 0);
	snprintf(list, sizeof(list), "%lld", (long long)old);
	CHECK_INT(rerun_record_held(db, w1, list), 0);
	CHECK_INT(rerun_create(db, old, NULL, now(), 600, &r, msg, sizeof(msg)), 0);
	CHECK_INT(sched_pick(db, w1, &job), 0);
	put(data, old, "results.json", "{\"result\":\"failed\",\"modules\":[{\"name\":\"boot\",\"result\":\"ok\"},"
		"{\"name\":\"setup\",\"result\":\"ok\"},{\"name\":\"check\",\"result\":\"fail\"},{\"name\":\"last\",\"result\":\"ok\"}]}");
	put(data, old, "result-boot.json", "{\"result\":\"ok\",\"details\":[{\"screenshot\":\"boot-1.png\",\"result\":\"ok\"}]}");
	put(data, old, "boot-1.png", "png");
	put(data, old, ".thumbs/boot-1.png", "thumb");
	/* The resumed run: boot skipped, the rest ran and passed. */
	put(data, job, "results.json", "{\"result\":\"passed\",\"modules\":[{\"name\":\"boot\",\"result\":\"skip\"},"
		"{\"name\":\"setup\",\"result\":\"ok\"},{\"name\":\"check\",\"result\":\"ok\"},{\"name\":\"last\",\"result\":\"ok\"}]}");
	CHECK_INT(db_exec(db, "INSERT INTO job_modules (job_id, name, category, script, result) VALUES"
			  " (?, 'boot', 'tests', '', 'skipped')", "i", job), 1);
	CHECK_INT(rerun_finish(db, data, job, result, sizeof(result)), 0);
	CHECK_STR(result, "passed");
	a = artefact_path(data, old, "boot-1.png");
	b = artefact_path(data, job, "boot-1.png");
	ta = artefact_kind_path(data, old, ARTEFACT_THUMB, "boot-1.png");
	tb = artefact_kind_path(data, job, ARTEFACT_THUMB, "boot-1.png");
	CHECK(!stat(a, &sa) && !stat(b, &sb) && sa.st_ino == sb.st_ino); /* hard-linked */
	CHECK(!stat(ta, &sa) && !stat(tb, &sb) && sa.st_ino == sb.st_ino);
	free(b);
	b = artefact_path(data, job, "result-boot.json");
	mod = json_load_file(b, 0, NULL);
	CHECK_INT(json_integer_value(json_object_get(mod, "copied_from")), old);
	json_decref(mod);
	free(b);
	b = artefact_path(data, job, "results.json");
	res = json_load_file(b, 0, NULL);
	mod = json_array_get(json_object_get(res, "modules"), 0);
	CHECK_STR(json_string_value(json_object_get(mod, "result")), "ok");
	CHECK_INT(json_integer_value(json_object_get(mod, "copied_from")), old);
	json_decref(res);
	{
		int64_t passed = 0;
		CHECK_INT(db_query_int(db, &passed, "SELECT COUNT(*) FROM job_modules WHERE job_id = ? AND name = 'boot'"
				       " AND result = 'passed'", "i", job), 0);
		CHECK_INT(passed, 1);
	}
	json_decref(r);
	free(a);
	free(b);
	free(ta);
	free(tb);
	db_free(db);
}
