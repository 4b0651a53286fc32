/* SPDX-License-Identifier: MIT */
/* test_server_deps.c - chained dependencies without HTTP: the verdict
 * rule, START_AFTER_TEST entries, blocking and unblocking, skipping down a
 * chain, cycles refused, children following a restarted parent's clone;
 * and asset names, types and registration (no path leaves factory/). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "unit.h"
#include "server/store/artefacts.h"
#include "server/store/assets.h"
#include "server/db/db.h"
#include "server/store/deps.h"
#include "server/store/isos.h"
#include "server/store/jobs.h"
#include "server/sched/sched.h"
#include "server/store/workers.h"
#include "util/err.h"
#include "util/file.h"
#include "util/path.h"

TEST(deps_parent_verdict_rules)
{
	CHECK_INT(deps_parent_verdict("scheduled", "none"), DEPS_WAIT);
	CHECK_INT(deps_parent_verdict("running", "none"), DEPS_WAIT);
	CHECK_INT(deps_parent_verdict("uploading", "none"), DEPS_WAIT);
	CHECK_INT(deps_parent_verdict("done", "passed"), DEPS_READY);
	CHECK_INT(deps_parent_verdict("done", "softfailed"), DEPS_READY);
	CHECK_INT(deps_parent_verdict("done", "failed"), DEPS_SKIP);
	CHECK_INT(deps_parent_verdict("done", "incomplete"), DEPS_SKIP);
	CHECK_INT(deps_parent_verdict("done", "timeout_exceeded"), DEPS_SKIP);
	CHECK_INT(deps_parent_verdict("cancelled", "user_cancelled"), DEPS_SKIP);
	CHECK_INT(deps_parent_verdict("cancelled", "skipped"), DEPS_SKIP);
	CHECK_INT(deps_parent_verdict(NULL, NULL), DEPS_WAIT);
}

TEST(deps_parse_start_after_entries)
{
	char t[DEPS_MAX_ENTRY], m[DEPS_MAX_ENTRY], longer[DEPS_MAX_ENTRY + 8];

	CHECK_INT(deps_parse_entry("install", 7, "64bit", t, m), 0);
	CHECK_STR(t, "install");
	CHECK_STR(m, "64bit");
	CHECK_INT(deps_parse_entry(" install@uefi ", 14, "64bit", t, m), 0);
	CHECK_STR(t, "install");
	CHECK_STR(m, "uefi");
	CHECK_INT(deps_parse_entry("install:32bit", 13, "64bit", t, m), 0); /* legacy form */
	CHECK_STR(m, "32bit");
	CHECK_INT(deps_parse_entry("install@", 8, "64bit", t, m), ERR_INVALID);
	CHECK_INT(deps_parse_entry("@64bit", 6, "64bit", t, m), ERR_INVALID);
	CHECK_INT(deps_parse_entry("install", 7, NULL, t, m), ERR_INVALID);
	memset(longer, 'a', sizeof(longer) - 1);
	longer[sizeof(longer) - 1] = '\0';
	CHECK_INT(deps_parse_entry(longer, strlen(longer), "64bit", t, m), ERR_INVALID);
}

static int64_t add_job(struct db *db, const char *test)
{
	json_t *s = json_pack("{s:s,s:s}", "TEST", test, "WORKER_CLASS", "qemu_x86_64");
	int64_t id = 0;

	CHECK_INT(jobs_insert(db, s, 50, 0, 0, &id), 0);
	json_decref(s);
	return id;
}

static void job_is(struct db *db, int64_t id, const char *state, const char *result, int64_t blocked_by)
{
	struct db_stmt *st;

	CHECK_INT(db_prepare(db, &st, "SELECT state, result, COALESCE(blocked_by_id, 0) FROM jobs WHERE id = ?", "i", id),
		  0);
	CHECK_INT(db_step(st), 1);
	CHECK_STR(db_col_text(st, 0), state);
	CHECK_STR(db_col_text(st, 1), result);
	CHECK_INT(db_col_int(st, 2), blocked_by);
	db_finalize(st);
}

TEST(deps_child_waits_then_runs)
{
	struct db *db = unit_db();
	int64_t p = add_job(db, "install"), c = add_job(db, "use"), w = 0, got = 0;
	char msg[256];

	CHECK_INT(deps_add(db, p, c, DEPS_CHAINED, msg, sizeof(msg)), 0);
	job_is(db, c, "scheduled", "none", p);
	CHECK_INT(deps_parents_ok(db, c), 0);
	CHECK_INT(workers_register(db, "h", 1, NULL, 1000, &w), 0);
	CHECK_INT(sched_pick(db, w, &got), 0);
	CHECK_INT(got, p); /* the child is not offered while its parent runs */
	CHECK_INT(workers_job_done(db, p, w, "passed", NULL, msg, sizeof(msg)), 0);
	job_is(db, c, "scheduled", "none", 0);
	CHECK_INT(deps_parents_ok(db, c), 1);
	CHECK_INT(sched_pick(db, w, &got), 0);
	CHECK_INT(got, c);
	db_free(db);
}

TEST(deps_failed_parent_skips_the_chain)
{
	struct db *db = unit_db();
	int64_t p = add_job(db, "install"), c = add_job(db, "use"), g = add_job(db, "more"), w = 0, got = 0;
	int64_t other = add_job(db, "other");
	char msg[256];

	CHECK_INT(deps_add(db, p, c, DEPS_CHAINED, msg, sizeof(msg)), 0);
	CHECK_INT(deps_add(db, c, g, DEPS_CHAINED, msg, sizeof(msg)), 0);
	CHECK_INT(deps_add(db, other, g, DEPS_CHAINED, msg, sizeof(msg)), 0);
	job_is(db, g, "scheduled", "none", c);
	CHECK_INT(workers_register(db, "h", 1, NULL, 1000, &w), 0);
	CHECK_INT(sched_pick(db, w, &got), 0);
	CHECK_INT(workers_job_done(db, got, w, "failed", NULL, msg, sizeof(msg)), 0);
	job_is(db, c, "cancelled", "skipped", 0);
	job_is(db, g, "cancelled", "skipped", 0);
	job_is(db, other, "scheduled", "none", 0);
	db_free(db);
}

TEST(deps_softfailed_parent_and_two_parents)
{
	struct db *db = unit_db();
	int64_t a = add_job(db, "a"), b = add_job(db, "b"), c = add_job(db, "c");
	char msg[256];

	CHECK_INT(deps_add(db, a, c, DEPS_CHAINED, msg, sizeof(msg)), 0);
	CHECK_INT(deps_add(db, b, c, DEPS_CHAINED, msg, sizeof(msg)), 0);
	CHECK_INT(workers_job_done(db, a, 0, "softfailed", NULL, msg, sizeof(msg)), 0);
	job_is(db, c, "scheduled", "none", b); /* still waits for b */
	CHECK_INT(workers_job_done(db, b, 0, "passed", NULL, msg, sizeof(msg)), 0);
	job_is(db, c, "scheduled", "none", 0);
	db_free(db);
}

TEST(deps_cycles_and_missing_parents_refused)
{
	struct db *db = unit_db();
	int64_t a = add_job(db, "a"), b = add_job(db, "b"), c = add_job(db, "c");
	char msg[256];

	CHECK_INT(deps_add(db, a, b, DEPS_CHAINED, msg, sizeof(msg)), 0);
	CHECK_INT(deps_add(db, b, c, DEPS_CHAINED, msg, sizeof(msg)), 0);
	CHECK_INT(deps_add(db, c, a, DEPS_CHAINED, msg, sizeof(msg)), ERR_INVALID);
	CHECK(strstr(msg, "cycle"));
	CHECK_INT(deps_add(db, a, a, DEPS_CHAINED, msg, sizeof(msg)), ERR_INVALID);
	CHECK_INT(deps_add(db, 999, a, DEPS_CHAINED, msg, sizeof(msg)), ERR_NOT_FOUND);
	db_free(db);
}

TEST(deps_child_follows_the_parents_clone)
{
	struct db *db = unit_db();
	int64_t p = add_job(db, "install"), c = add_job(db, "use"), w = 0, got = 0, clone = 0;
	char msg[256];
	int n = 0;

	CHECK_INT(deps_add(db, p, c, DEPS_CHAINED, msg, sizeof(msg)), 0);
	CHECK_INT(workers_register(db, "h", 1, NULL, 1000, &w), 0);
	CHECK_INT(sched_pick(db, w, &got), 0);
	CHECK_INT(db_exec(db, "UPDATE jobs SET state = 'running' WHERE id = ?", "i", p), 1);
	/* The worker is lost: the parent ends incomplete and is cloned once. */
	CHECK_INT(workers_abandon_jobs(db, w, "abandoned: test", false, &n), 0);
	job_is(db, p, "done", "incomplete", 0);
	CHECK_INT(db_query_int(db, &clone, "SELECT clone_id FROM jobs WHERE id = ?", "i", p), 0);
	CHECK(clone > 0);
	job_is(db, c, "scheduled", "none", clone);
	CHECK_INT(db_query_int(db, &got, "SELECT parent_job_id FROM job_dependencies WHERE child_job_id = ?", "i", c), 0);
	CHECK_INT(got, clone);
	db_free(db);
}

TEST(deps_parent_done_before_the_child_exists)
{
	struct db *db = unit_db();
	int64_t ok = add_job(db, "ok"), bad = add_job(db, "bad"), c1, c2;
	char msg[256];

	CHECK_INT(workers_job_done(db, ok, 0, "passed", NULL, msg, sizeof(msg)), 0);
	CHECK_INT(workers_job_done(db, bad, 0, "failed", NULL, msg, sizeof(msg)), 0);
	c1 = add_job(db, "c1");
	c2 = add_job(db, "c2");
	CHECK_INT(deps_add(db, ok, c1, DEPS_CHAINED, msg, sizeof(msg)), 0);
	CHECK_INT(deps_add(db, bad, c2, DEPS_CHAINED, msg, sizeof(msg)), 0);
	job_is(db, c1, "scheduled", "none", 0);
	job_is(db, c2, "cancelled", "skipped", 0);
	db_free(db);
}

TEST(deps_deleted_parent_unblocks)
{
	struct db *db = unit_db();
	int64_t p = add_job(db, "p"), c = add_job(db, "c");
	char msg[256];

	CHECK_INT(deps_add(db, p, c, DEPS_CHAINED, msg, sizeof(msg)), 0);
	job_is(db, c, "scheduled", "none", p);
	CHECK_INT(jobs_delete(db, p), 0);
	job_is(db, c, "scheduled", "none", 0);
	db_free(db);
}

TEST(assets_names_and_types)
{
	CHECK(asset_name_valid("openSUSE-Tumbleweed-DVD-x86_64.iso"));
	CHECK(asset_name_valid("disk+1@v2.qcow2"));
	CHECK(!asset_name_valid(""));
	CHECK(!asset_name_valid(NULL));
	CHECK(!asset_name_valid(".."));
	CHECK(!asset_name_valid(".hidden.qcow2"));
	CHECK(!asset_name_valid("../vigil.db"));
	CHECK(!asset_name_valid("a/b.qcow2"));
	CHECK(!asset_name_valid("/etc/passwd"));
	CHECK(!asset_name_valid("with space.iso"));
	{
		char name[LIMIT_ARTEFACT_NAME + 2];
		memset(name, 'a', sizeof(name) - 1);
		name[sizeof(name) - 1] = '\0';
		CHECK(!asset_name_valid(name)); /* over the name limit */
		name[LIMIT_ARTEFACT_NAME] = '\0';
		CHECK(asset_name_valid(name));
	}
	CHECK(asset_type_valid("iso") && asset_type_valid("hdd") && asset_type_valid("repo") && asset_type_valid("other"));
	CHECK(!asset_type_valid("tests") && !asset_type_valid("..") && !asset_type_valid(NULL));
	CHECK_STR(asset_type_of_setting("ISO"), "iso");
	CHECK_STR(asset_type_of_setting("ISO_2"), "iso");
	CHECK_STR(asset_type_of_setting("HDD_1"), "hdd");
	CHECK_STR(asset_type_of_setting("UEFI_PFLASH_VARS"), "hdd");
	CHECK_STR(asset_type_of_setting("REPO_0"), "repo");
	CHECK_STR(asset_type_of_setting("KERNEL"), "other");
	CHECK_STR(asset_type_of_setting("ASSET_1"), "other");
	CHECK(!asset_type_of_setting("HDD_"));
	CHECK(!asset_type_of_setting("HDD_1X"));
	CHECK(!asset_type_of_setting("PUBLISH_HDD_1"));
	CHECK_STR(asset_type_of_name("x.iso"), "iso");
	CHECK_STR(asset_type_of_name("x.qcow2"), "hdd");
	CHECK_STR(asset_type_of_name("x.raw"), "hdd");
	CHECK_STR(asset_type_of_name("x.tar"), "other");
	CHECK(!asset_path("/data", "tests", "x"));
	CHECK(!asset_path("/data", "hdd", "../x"));
	{
		char *p = asset_path("/data", "hdd", "x.qcow2");
		CHECK_STR(p, "/data/factory/hdd/x.qcow2");
		free(p);
	}
	CHECK(LIMIT_ASSET > LIMIT_ARTEFACT);
}

TEST(assets_register_find_delete)
{
	struct db *db = unit_db();
	const char *data = unit_tmpdir();
	char *dir = path_join(data, "factory/hdd"), *file = NULL;
	int64_t id = 0, again = 0;
	json_t *a;

	CHECK_INT(file_mkdir_p(dir, 0700), 0);
	file = path_join(dir, "d.qcow2");
	CHECK_INT(file_write_all(file, "12345", 5), 0);
	CHECK_INT(assets_find(db, data, "hdd", "missing.qcow2", &id), ERR_NOT_FOUND);
	CHECK_INT(assets_register(db, data, "hdd", "missing.qcow2", NULL, 0, &id), ERR_NOT_FOUND);
	CHECK_INT(assets_register(db, data, "hdd", "../d.qcow2", NULL, 0, &id), ERR_INVALID);
	CHECK_INT(assets_find(db, data, "hdd", "d.qcow2", &id), 0); /* placed by hand: registered */
	CHECK_INT(assets_json(db, id, &a), 0);
	CHECK(a);
	CHECK_INT(json_integer_value(json_object_get(a, "size")), 5);
	CHECK(json_is_null(json_object_get(a, "checksum")));
	json_decref(a);
	CHECK_INT(assets_register(db, data, "hdd", "d.qcow2", "ab12", 7, &again), 0);
	CHECK_INT(again, id);
	CHECK_INT(assets_json(db, id, &a), 0);
	CHECK_STR(json_string_value(json_object_get(a, "checksum")), "ab12");
	CHECK_INT(json_integer_value(json_object_get(a, "last_use_job_id")), 7);
	json_decref(a);
	/* Same file again without a checksum: the known one stays. */
	CHECK_INT(assets_register(db, data, "hdd", "d.qcow2", NULL, 0, &again), 0);
	CHECK_INT(assets_json(db, id, &a), 0);
	CHECK_STR(json_string_value(json_object_get(a, "checksum")), "ab12");
	json_decref(a);
	CHECK_INT(assets_delete(db, data, id), 0);
	CHECK(!file_exists(file));
	CHECK_INT(assets_delete(db, data, id), ERR_NOT_FOUND);
	free(dir);
	free(file);
	db_free(db);
}

TEST(workers_grace_after_server_restart)
{
	struct db *db = unit_db();
	int64_t j = add_job(db, "long"), w = 0, got = 0;
	int n = -1;

	CHECK_INT(workers_register(db, "h", 1, NULL, 1000, &w), 0);
	CHECK_INT(sched_pick(db, w, &got), 0);
	CHECK_INT(got, j);
	CHECK_INT(db_exec(db, "UPDATE jobs SET state = 'running' WHERE id = ?", "i", j), 1);
	/* The server was down from 1001 to 5000: nobody could report meanwhile. */
	CHECK_INT(workers_grace(db, 5000), 0);
	CHECK_INT(workers_reap(db, 5005, 10, &n), 0);
	CHECK_INT(n, 0);
	job_is(db, j, "running", "none", 0);
	/* A worker silent for the whole timeout after the restart is still lost. */
	CHECK_INT(workers_reap(db, 5011, 10, &n), 0);
	CHECK_INT(n, 1);
	job_is(db, j, "done", "incomplete", 0);
	db_free(db);
}

TEST(deps_restart_failed_parent_clones_skipped_children)
{
	struct db *db = unit_db();
	int64_t p = add_job(db, "install"), c = add_job(db, "use"), g = add_job(db, "more");
	int64_t np = 0, nc = 0, ng = 0, dep = 0;
	char msg[256];

	CHECK_INT(deps_add(db, p, c, DEPS_CHAINED, msg, sizeof(msg)), 0);
	CHECK_INT(deps_add(db, c, g, DEPS_CHAINED, msg, sizeof(msg)), 0);
	CHECK_INT(workers_job_done(db, p, 0, "failed", NULL, msg, sizeof(msg)), 0);
	job_is(db, c, "cancelled", "skipped", 0);
	CHECK_INT(jobs_restart(db, p, &np, msg, sizeof(msg)), 0);
	CHECK_INT(db_query_int(db, &nc, "SELECT clone_id FROM jobs WHERE id = ?", "i", c), 0);
	CHECK_INT(db_query_int(db, &ng, "SELECT clone_id FROM jobs WHERE id = ?", "i", g), 0);
	job_is(db, nc, "scheduled", "none", np);
	job_is(db, ng, "scheduled", "none", nc);
	CHECK_INT(db_query_int(db, &dep, "SELECT parent_job_id FROM job_dependencies WHERE child_job_id = ?", "i", nc), 0);
	CHECK_INT(dep, np);
	CHECK_INT(workers_job_done(db, np, 0, "passed", NULL, msg, sizeof(msg)), 0);
	job_is(db, nc, "scheduled", "none", 0);
	db_free(db);
}

TEST(deps_restart_child_waits_for_the_parents_newest_clone)
{
	struct db *db = unit_db();
	int64_t p = add_job(db, "install"), c = add_job(db, "use"), np = 0, nc = 0;
	char msg[256];

	CHECK_INT(deps_add(db, p, c, DEPS_CHAINED, msg, sizeof(msg)), 0);
	CHECK_INT(workers_job_done(db, p, 0, "passed", NULL, msg, sizeof(msg)), 0);
	CHECK_INT(workers_job_done(db, c, 0, "failed", NULL, msg, sizeof(msg)), 0);
	CHECK_INT(jobs_restart(db, c, &nc, msg, sizeof(msg)), 0);
	job_is(db, nc, "scheduled", "none", 0); /* its parent passed: it may run */
	CHECK_INT(deps_parents_ok(db, nc), 1);
	/* Restarting the parent too: the child's clone waits for that clone. */
	CHECK_INT(jobs_restart(db, p, &np, msg, sizeof(msg)), 0);
	job_is(db, nc, "scheduled", "none", np);
	db_free(db);
}

TEST(deps_isos_start_after_test)
{
	struct db *db = unit_db();
	json_t *params, *resp = NULL, *failed;
	int64_t install64 = 0, use64 = 0, installuefi = 0, useuefi = 0, direct = 0, type = 0;

	CHECK(db_exec(db, "INSERT INTO machines (name, backend) VALUES ('64bit', 'qemu'), ('uefi', 'qemu')", NULL) > 0);
	CHECK(db_exec(db, "INSERT INTO products (distri, version, flavor, arch) VALUES ('d', '1', 'f', 'x86_64')", NULL) > 0);
	CHECK(db_exec(db, "INSERT INTO test_suites (name) VALUES ('install'), ('use'), ('typo'), ('direct')", NULL) > 0);
	CHECK(db_exec(db, "INSERT INTO job_groups (name, t_created) VALUES ('g', 'now')", NULL) > 0);
	/* use: after install on its own machine; typo names a suite nobody
	 * schedules; direct: directly after install@64bit from both machines. */
	CHECK(db_exec(db, "INSERT INTO table_settings (kind, owner_id, key, value) VALUES"
		      " ('test_suite', 2, 'START_AFTER_TEST', 'install'),"
		      " ('test_suite', 3, 'START_AFTER_TEST', 'install,nosuch@64bit'),"
		      " ('test_suite', 4, 'START_DIRECTLY_AFTER_TEST', 'install@64bit')", NULL) > 0);
	CHECK(db_exec(db, "INSERT INTO job_templates (product_id, machine_id, test_suite_id, group_id, t_created) VALUES"
		      " (1, 1, 1, 1, 'now'), (1, 2, 1, 1, 'now'), (1, 1, 2, 1, 'now'), (1, 2, 2, 1, 'now'),"
		      " (1, 1, 3, 1, 'now'), (1, 2, 4, 1, 'now')", NULL) > 0);
	params = json_pack("{s:s,s:s,s:s,s:s,s:s}", "DISTRI", "d", "VERSION", "1", "FLAVOR", "f", "ARCH", "x86_64",
			   "BUILD", "1");
	CHECK_INT(isos_schedule(db, params, &resp), 200);
	CHECK_INT(json_integer_value(json_object_get(resp, "count")), 6);
	failed = json_object_get(resp, "failed");
	CHECK_INT(json_array_size(failed), 1);
	CHECK_STR(json_string_value(json_array_get(json_object_get(json_array_get(failed, 0), "error_messages"), 0)),
		  "START_AFTER_TEST=nosuch@64bit not found - check for dependency typos and dependency cycles");
	CHECK_INT(db_query_int(db, &install64, "SELECT id FROM jobs WHERE test = 'install' AND machine = '64bit'", NULL), 0);
	CHECK_INT(db_query_int(db, &installuefi, "SELECT id FROM jobs WHERE test = 'install' AND machine = 'uefi'", NULL), 0);
	CHECK_INT(db_query_int(db, &use64, "SELECT id FROM jobs WHERE test = 'use' AND machine = '64bit'", NULL), 0);
	CHECK_INT(db_query_int(db, &useuefi, "SELECT id FROM jobs WHERE test = 'use' AND machine = 'uefi'", NULL), 0);
	CHECK_INT(db_query_int(db, &direct, "SELECT id FROM jobs WHERE test = 'direct'", NULL), 0);
	job_is(db, use64, "scheduled", "none", install64);
	job_is(db, useuefi, "scheduled", "none", installuefi);
	job_is(db, direct, "scheduled", "none", install64);
	CHECK_INT(db_query_int(db, &type, "SELECT dependency FROM job_dependencies WHERE child_job_id = ?", "i", direct), 0);
	CHECK_INT(type, DEPS_DIRECTLY_CHAINED);
	json_decref(resp);
	json_decref(params);
	db_free(db);
}

TEST(deps_many_children_of_one_parent)
{
	struct db *db = unit_db();
	int64_t p = add_job(db, "create_hdd"), first = 0, last = 0, left = -1;
	char msg[256];
	int i;

	CHECK_INT(db_begin(db), 0);
	for (i = 0; i < 150; i++) {
		int64_t c = add_job(db, "user");
		CHECK_INT(deps_add(db, p, c, DEPS_CHAINED, msg, sizeof(msg)), 0);
		if (!first)
			first = c;
		last = c;
	}
	CHECK_INT(db_commit(db), 0);
	CHECK_INT(workers_job_done(db, p, 0, "passed", NULL, msg, sizeof(msg)), 0);
	CHECK_INT(db_query_int(db, &left, "SELECT COUNT(*) FROM jobs WHERE blocked_by_id IS NOT NULL", NULL), 0);
	CHECK_INT(left, 0);
	job_is(db, first, "scheduled", "none", 0);
	job_is(db, last, "scheduled", "none", 0);
	db_free(db);
}
