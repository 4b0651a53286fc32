/* SPDX-License-Identifier: MIT */
/* test_server_parallel.c - parallel jobs without HTTP, as openQA: the
 * cluster, all-or-nothing assignment to distinct free workers (reserved
 * jobs handed out at the next poll), clusters waiting for their chained
 * parents, a running cluster joined by a returned job, a failure stopping
 * the cluster (parallel_failed / skipped, the worker told to cancel),
 * restart of the whole cluster (re-run from a module refused), and the settings that create the edges
 * (_PARALLEL, _PARALLEL_JOBS, PARALLEL_WITH). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "unit.h"
#include "server/db/db.h"
#include "server/store/deps.h"
#include "server/store/isos.h"
#include "server/store/jobs.h"
#include "server/store/rerun.h"
#include "server/sched/sched.h"
#include "server/store/workers.h"
#include "util/err.h"

static int64_t add_job(struct db *db, const char *test, const char *cls)
{
	json_t *s = json_pack("{s:s,s:s}", "TEST", test, "WORKER_CLASS", cls);
	int64_t id = 0;

	CHECK_INT(jobs_insert(db, s, 50, 0, 0, &id), 0);
	json_decref(s);
	return id;
}

/* A worker seen now (the scheduler counts only recently seen workers free). */
static int64_t add_worker(struct db *db, long instance, const char *cls)
{
	int64_t w = 0;

	CHECK_INT(workers_register(db, "h", instance, cls, (int64_t)time(NULL), &w), 0);
	return w;
}

static void job_is(struct db *db, int64_t id, const char *state, const char *result, int64_t worker)
{
	struct db_stmt *st;

	CHECK_INT(db_prepare(db, &st, "SELECT state, result, COALESCE(assigned_worker_id, 0) FROM jobs WHERE id = ?",
			     "i", id), 0);
	CHECK_INT(db_step(st), 1);
	CHECK_STR(db_col_text(st, 0), state);
	CHECK_STR(db_col_text(st, 1), result);
	if (worker >= 0)
		CHECK_INT(db_col_int(st, 2), worker);
	db_finalize(st);
}

static void set_state(struct db *db, int64_t id, const char *state)
{
	CHECK_INT(db_exec(db, "UPDATE jobs SET state = ? WHERE id = ?", "ti", state, id), 1);
}

TEST(parallel_cluster_of_three)
{
	struct db *db = unit_db();
	int64_t p = add_job(db, "server", "q"), c1 = add_job(db, "client1", "q"), c2 = add_job(db, "client2", "q");
	int64_t alone = add_job(db, "alone", "q"), ids[DEPS_MAX_CLUSTER];
	char msg[256];
	size_t n = 0;

	CHECK_INT(deps_add(db, p, c1, DEPS_PARALLEL, msg, sizeof(msg)), 0);
	CHECK_INT(deps_add(db, p, c2, DEPS_PARALLEL, msg, sizeof(msg)), 0);
	CHECK_INT(deps_cluster(db, c2, ids, &n), 0); /* up to the parent, down to the sibling */
	CHECK_INT(n, 3);
	CHECK_INT(ids[0], p);
	CHECK_INT(ids[1], c1);
	CHECK_INT(ids[2], c2);
	CHECK_INT(deps_cluster(db, alone, ids, &n), 0);
	CHECK_INT(n, 1);
	job_is(db, c1, "scheduled", "none", 0); /* a parallel parent does not block */
	db_free(db);
}

TEST(parallel_cluster_waits_for_two_free_workers)
{
	struct db *db = unit_db();
	int64_t p = add_job(db, "server", "q"), c = add_job(db, "client", "q"), w1 = add_worker(db, 1, "q");
	int64_t got = 0, w2, alone, busy = 0;
	char msg[256];
	int n = 0;

	CHECK_INT(deps_add(db, p, c, DEPS_PARALLEL, msg, sizeof(msg)), 0);
	/* One free worker: never half a cluster. */
	CHECK_INT(sched_pick(db, w1, &got), ERR_NOT_FOUND);
	job_is(db, p, "scheduled", "none", 0);
	job_is(db, c, "scheduled", "none", 0);
	/* The waiting cluster does not hold back a job that fits alone. */
	alone = add_job(db, "alone", "q");
	CHECK_INT(sched_pick(db, w1, &got), 0);
	CHECK_INT(got, alone);
	CHECK_INT(workers_job_done(db, alone, w1, "passed", NULL, msg, sizeof(msg)), 0);
	/* A second worker that does not offer the client's class does not count. */
	w2 = add_worker(db, 2, "other");
	CHECK_INT(sched_pick(db, w1, &got), ERR_NOT_FOUND);
	/* With a second free worker of the class: both at once. */
	CHECK_INT(workers_register(db, "h", 2, "q", (int64_t)time(NULL), &w2), 0);
	CHECK_INT(sched_pick(db, w1, &got), 0);
	CHECK_INT(got, p);
	job_is(db, p, "assigned", "none", w1);
	job_is(db, c, "assigned", "none", w2); /* reserved for w2 */
	CHECK_INT(db_query_int(db, &busy, "SELECT COUNT(*) FROM workers WHERE id = ? AND job_id IS NULL", "i", w2), 0);
	CHECK_INT(busy, 1); /* not handed out yet */
	/* w2 asking for work keeps its reserved job, and gets it. */
	CHECK_INT(workers_abandon_jobs(db, w2, "abandoned: asked for new work", true, &n), 0);
	CHECK_INT(n, 0);
	CHECK_INT(sched_pick(db, w2, &got), 0);
	CHECK_INT(got, c);
	CHECK_INT(db_query_int(db, &busy, "SELECT job_id FROM workers WHERE id = ?", "i", w2), 0);
	CHECK_INT(busy, c);
	/* Handed out, it is abandoned like any job when w2 asks again. */
	CHECK_INT(workers_abandon_jobs(db, w2, "abandoned: asked for new work", true, &n), 0);
	CHECK_INT(n, 1);
	job_is(db, c, "scheduled", "none", 0);
	db_free(db);
}

TEST(parallel_busy_worker_is_not_free)
{
	struct db *db = unit_db();
	int64_t w1 = add_worker(db, 1, "q"), w2 = add_worker(db, 2, "q"), other = add_job(db, "other", "q");
	int64_t p, c, got = 0;
	char msg[256];

	CHECK_INT(sched_pick(db, w2, &got), 0);
	CHECK_INT(got, other);
	p = add_job(db, "server", "q");
	c = add_job(db, "client", "q");
	CHECK_INT(deps_add(db, p, c, DEPS_PARALLEL, msg, sizeof(msg)), 0);
	CHECK_INT(sched_pick(db, w1, &got), ERR_NOT_FOUND); /* w2 runs "other" */
	CHECK_INT(workers_job_done(db, other, w2, "passed", NULL, msg, sizeof(msg)), 0);
	CHECK_INT(sched_pick(db, w2, &got), 0);
	CHECK_INT(got, p);
	job_is(db, c, "assigned", "none", w1);
	db_free(db);
}

TEST(parallel_cluster_waits_for_chained_parent)
{
	struct db *db = unit_db();
	int64_t inst = add_job(db, "install", "q"), p = add_job(db, "server", "q"), c = add_job(db, "client", "q");
	int64_t w1 = add_worker(db, 1, "q"), w2 = add_worker(db, 2, "q"), got = 0;
	char msg[256];

	CHECK_INT(deps_add(db, p, c, DEPS_PARALLEL, msg, sizeof(msg)), 0);
	CHECK_INT(deps_add(db, inst, c, DEPS_CHAINED, msg, sizeof(msg)), 0); /* the client boots install's disk */
	CHECK_INT(sched_pick(db, w1, &got), 0);
	CHECK_INT(got, inst); /* the server waits with its client */
	CHECK_INT(sched_pick(db, w2, &got), ERR_NOT_FOUND);
	job_is(db, p, "scheduled", "none", 0);
	CHECK_INT(workers_job_done(db, inst, w1, "passed", NULL, msg, sizeof(msg)), 0);
	CHECK_INT(sched_pick(db, w2, &got), 0);
	CHECK_INT(got, p);
	job_is(db, c, "assigned", "none", w1);
	db_free(db);
}

TEST(parallel_failed_chained_parent_skips_the_cluster)
{
	struct db *db = unit_db();
	int64_t inst = add_job(db, "install", "q"), p = add_job(db, "server", "q"), c = add_job(db, "client", "q");
	char msg[256];

	CHECK_INT(deps_add(db, p, c, DEPS_PARALLEL, msg, sizeof(msg)), 0);
	CHECK_INT(deps_add(db, inst, c, DEPS_CHAINED, msg, sizeof(msg)), 0);
	CHECK_INT(workers_job_done(db, inst, 0, "failed", NULL, msg, sizeof(msg)), 0);
	job_is(db, c, "cancelled", "skipped", 0);
	job_is(db, p, "cancelled", "skipped", 0);
	db_free(db);
}

TEST(parallel_failure_stops_the_running_cluster)
{
	struct db *db = unit_db();
	int64_t p = add_job(db, "server", "q"), c1 = add_job(db, "client1", "q"), c2 = add_job(db, "client2", "q");
	int64_t w1 = add_worker(db, 1, "q"), w2 = add_worker(db, 2, "q"), w3 = add_worker(db, 3, "q"), got = 0;
	int64_t late = 0;
	json_t *status;
	const char *cmd = NULL;
	char msg[256];
	int stopped = -1;

	CHECK_INT(deps_add(db, p, c1, DEPS_PARALLEL, msg, sizeof(msg)), 0);
	CHECK_INT(deps_add(db, p, c2, DEPS_PARALLEL, msg, sizeof(msg)), 0);
	CHECK_INT(sched_pick(db, w1, &got), 0);
	CHECK_INT(got, p);
	job_is(db, c1, "assigned", "none", w2);
	job_is(db, c2, "assigned", "none", w3);
	set_state(db, p, "running");
	CHECK_INT(sched_pick(db, w2, &got), 0);
	CHECK_INT(got, c1);
	set_state(db, c1, "running");
	/* c2 is still only reserved when c1 fails. */
	CHECK_INT(workers_job_done(db, c1, w2, "failed", NULL, msg, sizeof(msg)), 0);
	job_is(db, p, "running", "parallel_failed", w1);
	job_is(db, c2, "cancelled", "skipped", w3);
	CHECK_INT(db_query_int(db, &late, "SELECT COUNT(*) FROM workers WHERE job_id IS NOT NULL AND id = ?", "i", w3),
		  0);
	CHECK_INT(late, 0);
	CHECK_INT(sched_pick(db, w3, &got), ERR_NOT_FOUND); /* nothing left for w3 */
	/* The running relative's worker is told to cancel; its set_done keeps the result. */
	status = json_pack("{s:I}", "worker_id", (json_int_t)w1);
	CHECK_INT(workers_job_status(db, p, status, &cmd, msg, sizeof(msg)), 0);
	CHECK_STR(cmd, "cancel");
	json_decref(status);
	CHECK_INT(workers_job_done(db, p, w1, "user_cancelled", "cancelled by user", msg, sizeof(msg)), 0);
	job_is(db, p, "done", "parallel_failed", w1);
	{
		/* The reason naming the failed job stays, as openQA's. */
		struct db_stmt *st;
		char want[64];
		snprintf(want, sizeof(want), "parallel job %lld ended failed", (long long)c1);
		CHECK_INT(db_prepare(db, &st, "SELECT reason FROM jobs WHERE id = ?", "i", p), 0);
		CHECK_INT(db_step(st), 1);
		CHECK_STR(db_col_text(st, 0), want);
		db_finalize(st);
	}
	/* Nothing more to stop. */
	CHECK_INT(deps_stop_cluster(db, c1, &stopped), 0);
	CHECK_INT(stopped, 0);
	db_free(db);
}

TEST(parallel_passed_job_leaves_the_cluster_running)
{
	struct db *db = unit_db();
	int64_t p = add_job(db, "server", "q"), c = add_job(db, "client", "q");
	char msg[256];

	CHECK_INT(deps_add(db, p, c, DEPS_PARALLEL, msg, sizeof(msg)), 0);
	set_state(db, p, "running");
	set_state(db, c, "running");
	CHECK_INT(workers_job_done(db, c, 0, "passed", NULL, msg, sizeof(msg)), 0);
	job_is(db, p, "running", "none", -1);
	db_free(db);
}

TEST(parallel_returned_job_joins_its_running_cluster)
{
	struct db *db = unit_db();
	int64_t p = add_job(db, "server", "q"), c = add_job(db, "client", "q");
	int64_t w1 = add_worker(db, 1, "q"), w2 = add_worker(db, 2, "q"), got = 0;
	char msg[256];
	int n = 0;

	CHECK_INT(deps_add(db, p, c, DEPS_PARALLEL, msg, sizeof(msg)), 0);
	CHECK_INT(sched_pick(db, w1, &got), 0);
	set_state(db, p, "running");
	/* w2 restarts before taking its reserved job: the job goes back... */
	CHECK_INT(workers_abandon_jobs(db, w2, "abandoned: worker restarted", false, &n), 0);
	CHECK_INT(n, 1);
	job_is(db, c, "scheduled", "none", 0);
	/* ...and joins its running server alone, as openQA's siblings of running jobs. */
	CHECK_INT(sched_pick(db, w2, &got), 0);
	CHECK_INT(got, c);
	job_is(db, c, "assigned", "none", w2);
	db_free(db);
}

TEST(parallel_restart_clones_the_cluster)
{
	struct db *db = unit_db();
	int64_t p = add_job(db, "server", "q"), c = add_job(db, "client", "q"), np = 0, nc = 0, link = 0, type = 0;
	char msg[256];

	CHECK_INT(deps_add(db, p, c, DEPS_PARALLEL, msg, sizeof(msg)), 0);
	set_state(db, p, "running");
	set_state(db, c, "running");
	/* Restarting the running client restarts the server with it. */
	CHECK_INT(jobs_restart(db, c, &nc, msg, sizeof(msg)), 0);
	job_is(db, c, "running", "user_restarted", -1);
	job_is(db, p, "running", "parallel_restarted", -1);
	CHECK_INT(db_query_int(db, &np, "SELECT clone_id FROM jobs WHERE id = ?", "i", p), 0);
	job_is(db, np, "scheduled", "none", 0);
	job_is(db, nc, "scheduled", "none", 0);
	CHECK_INT(db_query_int(db, &link, "SELECT parent_job_id FROM job_dependencies WHERE child_job_id = ?", "i", nc),
		  0);
	CHECK_INT(link, np);
	CHECK_INT(db_query_int(db, &type, "SELECT dependency FROM job_dependencies WHERE child_job_id = ?", "i", nc), 0);
	CHECK_INT(type, DEPS_PARALLEL);
	/* Restarting the old one again is refused: it has a clone. */
	CHECK_INT(jobs_restart(db, p, &np, msg, sizeof(msg)), ERR_BADSTATE);
	db_free(db);
}

TEST(parallel_restart_of_a_failed_cluster)
{
	struct db *db = unit_db();
	int64_t p = add_job(db, "server", "q"), c = add_job(db, "client", "q"), np = 0, nc = 0, n = 0;
	char msg[256];

	CHECK_INT(deps_add(db, p, c, DEPS_PARALLEL, msg, sizeof(msg)), 0);
	set_state(db, p, "running");
	set_state(db, c, "running");
	CHECK_INT(workers_job_done(db, p, 0, "failed", NULL, msg, sizeof(msg)), 0);
	job_is(db, c, "running", "parallel_failed", -1);
	CHECK_INT(workers_job_done(db, c, 0, "user_cancelled", NULL, msg, sizeof(msg)), 0);
	CHECK_INT(jobs_restart(db, p, &np, msg, sizeof(msg)), 0);
	CHECK_INT(db_query_int(db, &nc, "SELECT clone_id FROM jobs WHERE id = ?", "i", c), 0);
	job_is(db, p, "done", "failed", -1);
	job_is(db, c, "done", "parallel_failed", -1);
	CHECK_INT(db_query_int(db, &n, "SELECT COUNT(*) FROM job_dependencies WHERE parent_job_id = ? AND child_job_id = ?"
			       " AND dependency = ?", "iii", np, nc, (int64_t)DEPS_PARALLEL), 0);
	CHECK_INT(n, 1);
	db_free(db);
}

TEST(parallel_rerun_from_a_module_refused)
{
	struct db *db = unit_db();
	int64_t p = add_job(db, "server", "q"), c = add_job(db, "client", "q");
	json_t *out = NULL;
	char msg[256];

	CHECK_INT(deps_add(db, p, c, DEPS_PARALLEL, msg, sizeof(msg)), 0);
	CHECK_INT(workers_job_done(db, c, 0, "failed", NULL, msg, sizeof(msg)), 0);
	CHECK_INT(rerun_create(db, c, NULL, 1000, 60, &out, msg, sizeof(msg)), ERR_INVALID);
	CHECK(strstr(msg, "one of 2 parallel jobs") != NULL);
	CHECK(out == NULL);
	db_free(db);
}

TEST(parallel_cancel_stops_the_cluster)
{
	struct db *db = unit_db();
	int64_t p = add_job(db, "server", "q"), c = add_job(db, "client", "q");
	char msg[256];
	int changed = 0;

	CHECK_INT(deps_add(db, p, c, DEPS_PARALLEL, msg, sizeof(msg)), 0);
	CHECK_INT(jobs_cancel(db, p, NULL, &changed), 0);
	CHECK_INT(changed, 1);
	job_is(db, p, "cancelled", "user_cancelled", 0);
	job_is(db, c, "cancelled", "skipped", 0);
	db_free(db);
}

TEST(parallel_posted_jobs)
{
	struct db *db = unit_db();
	json_t *global = json_pack("{s:s}", "DISTRI", "d"), *ids = json_object(), *job = NULL, *par;
	json_t *per = json_pack("{s:{s:s},s:{s:s,s:s}}", "server", "TEST", "server", "client", "TEST", "client",
				"_PARALLEL", "server");
	int64_t server, client, later = 0;
	char msg[256];

	CHECK_INT(jobs_create_posted(db, global, per, false, true, ids, msg, sizeof(msg)), 0);
	server = json_integer_value(json_object_get(ids, "server"));
	client = json_integer_value(json_object_get(ids, "client"));
	CHECK_INT(jobs_to_json(db, client, false, &job), 0);
	par = json_object_get(json_object_get(job, "parents"), "Parallel");
	CHECK_INT(json_array_size(par), 1);
	CHECK_INT(json_integer_value(json_array_get(par, 0)), server);
	CHECK_INT(json_integer_value(json_object_get(job, "has_parents")), 1);
	json_decref(job);
	CHECK_INT(jobs_to_json(db, server, false, &job), 0);
	CHECK_INT(json_integer_value(json_array_get(json_object_get(json_object_get(job, "children"), "Parallel"), 0)),
		  client);
	json_decref(job);
	json_decref(per);
	/* _PARALLEL_JOBS: ids of existing jobs. */
	json_object_clear(ids);
	snprintf(msg, sizeof(msg), "%lld", (long long)server);
	per = json_pack("{s:{s:s,s:s}}", "", "TEST", "third", "_PARALLEL_JOBS", msg);
	CHECK_INT(jobs_create_posted(db, global, per, false, false, ids, msg, sizeof(msg)), 0);
	later = json_integer_value(json_object_get(ids, ""));
	CHECK_INT(db_query_int(db, &later, "SELECT COUNT(*) FROM job_dependencies WHERE parent_job_id = ? AND"
			       " child_job_id = ? AND dependency = ?", "iii", server, later, (int64_t)DEPS_PARALLEL), 0);
	CHECK_INT(later, 1);
	json_decref(per);
	/* A suffix nobody posted is refused, nothing created. */
	json_object_clear(ids);
	per = json_pack("{s:{s:s,s:s}}", "a", "TEST", "a", "_PARALLEL", "nosuch");
	CHECK_INT(jobs_create_posted(db, global, per, false, true, ids, msg, sizeof(msg)), ERR_INVALID);
	CHECK(strstr(msg, "nosuch") != NULL);
	json_decref(per);
	json_decref(ids);
	json_decref(global);
	db_free(db);
}

TEST(parallel_isos_parallel_with)
{
	struct db *db = unit_db();
	json_t *params, *resp = NULL;
	int64_t server = 0, client = 0, type = 0, parent = 0;

	CHECK(db_exec(db, "INSERT INTO machines (name, backend) VALUES ('64bit', 'qemu')", NULL) > 0);
	CHECK(db_exec(db, "INSERT INTO products (distri, version, flavor, arch) VALUES ('d', '1', 'f', 'x86_64')", NULL) > 0);
	CHECK(db_exec(db, "INSERT INTO test_suites (name) VALUES ('server'), ('client')", NULL) > 0);
	CHECK(db_exec(db, "INSERT INTO job_groups (name, t_created) VALUES ('g', 'now')", NULL) > 0);
	CHECK(db_exec(db, "INSERT INTO table_settings (kind, owner_id, key, value) VALUES"
		      " ('test_suite', 2, 'PARALLEL_WITH', 'server@64bit')", NULL) > 0);
	CHECK(db_exec(db, "INSERT INTO job_templates (product_id, machine_id, test_suite_id, group_id, t_created) VALUES"
		      " (1, 1, 1, 1, 'now'), (1, 1, 2, 1, 'now')", NULL) > 0);
	params = json_pack("{s:s,s:s,s:s,s:s,s:s}", "DISTRI", "d", "VERSION", "1", "FLAVOR", "f", "ARCH", "x86_64",
			   "BUILD", "1");
	CHECK_INT(isos_schedule(db, params, &resp), 200);
	CHECK_INT(json_array_size(json_object_get(resp, "failed")), 0);
	CHECK_INT(db_query_int(db, &server, "SELECT id FROM jobs WHERE test = 'server'", NULL), 0);
	CHECK_INT(db_query_int(db, &client, "SELECT id FROM jobs WHERE test = 'client'", NULL), 0);
	CHECK_INT(db_query_int(db, &parent, "SELECT parent_job_id FROM job_dependencies WHERE child_job_id = ?", "i",
			       client), 0);
	CHECK_INT(parent, server);
	CHECK_INT(db_query_int(db, &type, "SELECT dependency FROM job_dependencies WHERE child_job_id = ?", "i", client),
		  0);
	CHECK_INT(type, DEPS_PARALLEL);
	json_decref(resp);
	json_decref(params);
	db_free(db);
}
