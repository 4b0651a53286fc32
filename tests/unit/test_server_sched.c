/* SPDX-License-Identifier: MIT */
/* test_server_sched.c - the scheduler's rules beyond one job per worker,
 * without HTTP: PARALLEL_ONE_HOST_ONLY (a cluster on the workers of one
 * host, a returned job joining its running cluster only there), openQA's
 * priority bonus for a parallel cluster short of workers (the bonus grows,
 * then the asking worker is held; never for a cluster no live worker could
 * run), START_DIRECTLY_AFTER_TEST kept on the parent's worker (first, and
 * released when that worker is gone), the jobs of openQA's prio and
 * bulk cancel routes (set_prio, cancel_by_settings), and a pick's work
 * (SQLite's counters, db_work_take) that does not grow with the number of
 * scheduled jobs (issue 39: a sort of every scheduled job in each poll). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "unit.h"
#include "server/db/db.h"
#include "server/store/deps.h"
#include "server/store/jobs.h"
#include "server/sched/sched.h"
#include "server/store/workers.h"
#include "util/err.h"

/* A job of class cls at prio; one_host sets PARALLEL_ONE_HOST_ONLY=1. */
static int64_t job(struct db *db, const char *test, const char *cls, int64_t prio, bool one_host)
{
	json_t *s = json_pack("{s:s,s:s,s:s}", "TEST", test, "WORKER_CLASS", cls, "BUILD", "b1");
	int64_t id = 0;

	if (one_host)
		json_object_set_new(s, "PARALLEL_ONE_HOST_ONLY", json_string("1"));
	CHECK_INT(jobs_insert(db, s, prio, 0, 0, &id), 0);
	json_decref(s);
	return id;
}

static int64_t worker(struct db *db, const char *host, long instance)
{
	int64_t w = 0;

	CHECK_INT(workers_register(db, host, instance, "q", (int64_t)time(NULL), &w), 0);
	return w;
}

static void state_is(struct db *db, int64_t id, const char *state, int64_t worker_id)
{
	struct db_stmt *st;

	CHECK_INT(db_prepare(db, &st, "SELECT state, COALESCE(assigned_worker_id, 0) FROM jobs WHERE id = ?", "i", id), 0);
	CHECK_INT(db_step(st), 1);
	CHECK_STR(db_col_text(st, 0), state);
	if (worker_id >= 0)
		CHECK_INT(db_col_int(st, 1), worker_id);
	db_finalize(st);
}

static int64_t bonus_of(struct db *db, int64_t id)
{
	int64_t b = -1;

	CHECK_INT(db_query_int(db, &b, "SELECT sched_bonus FROM jobs WHERE id = ?", "i", id), 0);
	return b;
}

static void done(struct db *db, int64_t id, int64_t w)
{
	char msg[256];

	CHECK_INT(workers_job_done(db, id, w, "passed", NULL, msg, sizeof(msg)), 0);
}

TEST(sched_parallel_one_host_only)
{
	struct db *db = unit_db();
	int64_t a1 = worker(db, "hosta", 1), b1 = worker(db, "hostb", 1), a2, got = 0;
	int64_t p = job(db, "server", "q", 50, true), c = job(db, "client", "q", 50, false);
	char msg[256];

	CHECK_INT(deps_add(db, p, c, DEPS_PARALLEL, msg, sizeof(msg)), 0);
	/* The only other free worker is on another host: the cluster waits. */
	CHECK_INT(sched_pick(db, a1, &got), ERR_NOT_FOUND);
	CHECK_INT(sched_pick(db, b1, &got), ERR_NOT_FOUND);
	state_is(db, c, "scheduled", 0);
	/* A second worker on hosta: both there. */
	a2 = worker(db, "hosta", 2);
	CHECK_INT(sched_pick(db, b1, &got), ERR_NOT_FOUND); /* hostb has one worker only */
	CHECK_INT(sched_pick(db, a1, &got), 0);
	CHECK_INT(got, p);
	state_is(db, c, "assigned", a2);
	/* The client returns to scheduled while the server runs: it joins on hosta only. */
	CHECK_INT(db_exec(db, "UPDATE jobs SET state = 'running' WHERE id = ?", "i", p), 1);
	CHECK_INT(db_exec(db, "UPDATE jobs SET state = 'scheduled', assigned_worker_id = NULL WHERE id = ?", "i", c), 1);
	CHECK_INT(sched_pick(db, b1, &got), ERR_NOT_FOUND);
	CHECK_INT(sched_pick(db, a2, &got), 0);
	CHECK_INT(got, c);
	db_free(db);
}

TEST(sched_parallel_across_hosts_without_one_host_only)
{
	struct db *db = unit_db();
	int64_t a1 = worker(db, "hosta", 1), b1 = worker(db, "hostb", 1), got = 0;
	int64_t p = job(db, "server", "q", 50, false), c = job(db, "client", "q", 50, false);
	char msg[256];

	CHECK_INT(deps_add(db, p, c, DEPS_PARALLEL, msg, sizeof(msg)), 0);
	CHECK_INT(sched_pick(db, a1, &got), 0);
	CHECK_INT(got, p);
	state_is(db, c, "assigned", b1);
	db_free(db);
}

TEST(sched_parallel_priority_bonus_then_held)
{
	struct db *db = unit_db();
	int64_t w1 = worker(db, "h", 1), w2 = worker(db, "h", 2), busy = job(db, "busy", "q", 0, false);
	int64_t p, c, alone1, alone2, alone3, got = 0;
	char msg[256];

	CHECK_INT(sched_pick(db, w2, &got), 0);
	CHECK_INT(got, busy);
	p = job(db, "server", "q", 2, false);
	c = job(db, "client", "q", 2, false);
	CHECK_INT(deps_add(db, p, c, DEPS_PARALLEL, msg, sizeof(msg)), 0);
	alone1 = job(db, "alone1", "q", 50, false);
	alone2 = job(db, "alone2", "q", 50, false);
	alone3 = job(db, "alone3", "q", 50, false);
	/* w2 is busy: the cluster misses a worker; its first job gains 1 (the
	 * one job that got a worker) and w1 takes a lone job. */
	CHECK_INT(sched_pick(db, w1, &got), 0);
	CHECK_INT(got, alone1);
	CHECK_INT(bonus_of(db, p), 1);
	done(db, alone1, w1);
	CHECK_INT(sched_pick(db, w1, &got), 0);
	CHECK_INT(got, alone2);
	CHECK_INT(bonus_of(db, p), 2); /* priority 2 - 2: from now on w1 is held */
	done(db, alone2, w1);
	CHECK_INT(sched_pick(db, w1, &got), ERR_NOT_FOUND);
	CHECK_INT(sched_pick(db, w1, &got), ERR_NOT_FOUND);
	CHECK_INT(bonus_of(db, p), 2);
	state_is(db, alone3, "scheduled", 0);
	/* w2 ends its job: the whole cluster goes, on w2 and the held w1; the bonus is reset. */
	done(db, busy, w2);
	CHECK_INT(sched_pick(db, w2, &got), 0);
	CHECK_INT(got, p);
	state_is(db, c, "assigned", w1);
	CHECK_INT(bonus_of(db, p), 0);
	CHECK_INT(sched_pick(db, w1, &got), 0);
	CHECK_INT(got, c);
	db_free(db);
}

TEST(sched_parallel_bonus_never_holds_for_an_impossible_cluster)
{
	struct db *db = unit_db();
	int64_t w1 = worker(db, "h", 1), p = job(db, "server", "q", 0, false), c = job(db, "client", "nosuch", 0, false);
	int64_t alone = job(db, "alone", "q", 50, false), got = 0;
	char msg[256];

	CHECK_INT(deps_add(db, p, c, DEPS_PARALLEL, msg, sizeof(msg)), 0);
	/* Priority 0 (held at once if it could ever run), but no live worker offers "nosuch". */
	CHECK_INT(sched_pick(db, w1, &got), 0);
	CHECK_INT(got, alone);
	db_free(db);
}

TEST(sched_directly_chained_on_the_parents_worker)
{
	struct db *db = unit_db();
	int64_t w1 = worker(db, "h", 1), w2 = worker(db, "h", 2), w3, x = job(db, "x", "q", 10, false);
	int64_t a = job(db, "a", "q", 50, false), b = job(db, "b", "q", 50, false), y, z, a2, b2, got = 0;
	char msg[256];

	CHECK_INT(deps_add(db, a, b, DEPS_DIRECTLY_CHAINED, msg, sizeof(msg)), 0);
	CHECK_INT(sched_pick(db, w1, &got), 0);
	CHECK_INT(got, x);
	CHECK_INT(sched_pick(db, w2, &got), 0);
	CHECK_INT(got, a);
	done(db, x, w1);
	CHECK_INT(sched_pick(db, w1, &got), ERR_NOT_FOUND); /* b waits for a */
	done(db, a, w2);
	y = job(db, "y", "q", 10, false);
	z = job(db, "z", "q", 10, false);
	/* b is not offered to w1 although it is free first ... */
	CHECK_INT(sched_pick(db, w1, &got), 0);
	CHECK_INT(got, y);
	/* ... and goes to a's worker before the jobs of better priority. */
	CHECK_INT(sched_pick(db, w2, &got), 0);
	CHECK_INT(got, b);
	state_is(db, z, "scheduled", 0);
	/* A parent's worker that is gone releases the child to any worker. */
	w3 = worker(db, "h", 3);
	a2 = job(db, "a2", "q", 5, false);
	b2 = job(db, "b2", "q", 5, false);
	CHECK_INT(deps_add(db, a2, b2, DEPS_DIRECTLY_CHAINED, msg, sizeof(msg)), 0);
	CHECK_INT(sched_pick(db, w3, &got), 0);
	CHECK_INT(got, a2);
	done(db, a2, w3);
	done(db, y, w1);
	CHECK_INT(sched_pick(db, w1, &got), 0);
	CHECK_INT(got, z); /* w3 is alive: b2 waits for it */
	CHECK_INT(db_exec(db, "UPDATE workers SET t_seen_s = 0 WHERE id = ?", "i", w3), 1);
	done(db, z, w1);
	CHECK_INT(sched_pick(db, w1, &got), 0);
	CHECK_INT(got, b2);
	db_free(db);
}

TEST(sched_set_prio_and_cancel_by_settings)
{
	struct db *db = unit_db();
	int64_t w1 = worker(db, "h", 1), j1 = job(db, "t1", "q", 50, false), j2 = job(db, "t2", "q", 50, false);
	int64_t j3, prio = 0, got = 0;
	json_t *f;
	int n = -1;

	CHECK_INT(jobs_set_prio(db, j2, 7), 0);
	CHECK_INT(db_query_int(db, &prio, "SELECT priority FROM jobs WHERE id = ?", "i", j2), 0);
	CHECK_INT(prio, 7);
	CHECK_INT(jobs_set_prio(db, 99999, 7), ERR_NOT_FOUND);
	CHECK_INT(sched_pick(db, w1, &got), 0);
	CHECK_INT(got, j2); /* 7 before 50 */
	{
		json_t *s = json_pack("{s:s,s:s,s:s,s:s}", "TEST", "t3", "WORKER_CLASS", "q", "BUILD", "b2", "FOO", "bar");
		CHECK_INT(jobs_insert(db, s, 50, 0, 0, &j3), 0);
		json_decref(s);
	}
	/* An empty filter and a non-string value are refused. */
	f = json_object();
	CHECK_INT(jobs_cancel_by_settings(db, f, NULL, &n), ERR_INVALID);
	json_object_set_new(f, "BUILD", json_integer(1));
	CHECK_INT(jobs_cancel_by_settings(db, f, NULL, &n), ERR_INVALID);
	json_decref(f);
	/* A column and a setting: only j3 matches. */
	f = json_pack("{s:s,s:s}", "BUILD", "b2", "FOO", "bar");
	CHECK_INT(jobs_cancel_by_settings(db, f, "by test", &n), 0);
	CHECK_INT(n, 1);
	json_decref(f);
	state_is(db, j3, "cancelled", -1);
	/* BUILD=b1: the scheduled j1 and the assigned j2 (both not ended). */
	f = json_pack("{s:s}", "BUILD", "b1");
	CHECK_INT(jobs_cancel_by_settings(db, f, NULL, &n), 0);
	CHECK_INT(n, 2);
	state_is(db, j1, "cancelled", -1);
	state_is(db, j2, "cancelled", -1);
	CHECK_INT(jobs_cancel_by_settings(db, f, NULL, &n), 0);
	CHECK_INT(n, 0); /* nothing left to cancel */
	json_decref(f);
	db_free(db);
}

TEST(sched_job_network_per_cluster)
{
	struct db *db = unit_db();
	int64_t p = job(db, "server", "q", 50, false), c = job(db, "client", "q", 50, false);
	json_t *sp = json_pack("{s:s}", "NICTYPE", "tap"), *sc = json_pack("{s:s,s:s}", "NICTYPE", "tap", "NICMAC", "m");
	json_t *user = json_pack("{s:s}", "NICTYPE", "user"), *own = json_pack("{s:s,s:s}", "NICTYPE", "tap", "NICVLAN", "9");
	char want[32];
	char msg[256];

	CHECK_INT(deps_add(db, p, c, DEPS_PARALLEL, msg, sizeof(msg)), 0);
	CHECK_INT(sched_job_network(db, p, sp, 9526), 0);
	CHECK_INT(sched_job_network(db, c, sc, 9526), 0);
	snprintf(want, sizeof(want), "%lld", (long long)p);
	CHECK_STR(json_string_value(json_object_get(sp, "NICVLAN")), want); /* one network: the first job's id */
	CHECK_STR(json_string_value(json_object_get(sc, "NICVLAN")), want);
	snprintf(want, sizeof(want), "52:54:00:00:00:%02x", (unsigned)p & 255);
	CHECK_STR(json_string_value(json_object_get(sp, "NICMAC")), want);
	CHECK_STR(json_string_value(json_object_get(sc, "NICMAC")), "m"); /* a job's own is kept */
	CHECK_STR(json_string_value(json_object_get(sc, "NICMCAST_PORT")), "9526");
	CHECK_INT(sched_job_network(db, p, user, 9526), 0);
	CHECK_INT(json_object_size(user), 1); /* user networking: nothing added */
	CHECK_INT(sched_job_network(db, p, own, 0), 0);
	CHECK_STR(json_string_value(json_object_get(own, "NICVLAN")), "9");
	CHECK(!json_object_get(own, "NICMCAST_PORT"));
	json_decref(sp);
	json_decref(sc);
	json_decref(user);
	json_decref(own);
	db_free(db);
}

/* The work of one pick by w, its job given back after: SQLite's counters. */
static struct db_work pick_work(struct db *db, int64_t w)
{
	struct db_work work;
	int64_t got = 0;

	db_work_take(db, &work);
	CHECK_INT(sched_pick(db, w, &got), 0);
	db_work_take(db, &work);
	CHECK(db_exec(db, "UPDATE jobs SET state = 'scheduled', assigned_worker_id = NULL WHERE id = ?", "i", got) == 1);
	CHECK(db_exec(db, "UPDATE workers SET job_id = NULL", "") >= 0);
	return work;
}

/* Counted, not timed: a pick among 100 scheduled jobs and among 5,100 reads
 * the candidates in an index's order (no sort of them, no full scan) and takes
 * about the same number of steps. (Zeros on PostgreSQL, whose plans
 * test_pg and bench/api.py's rows cover.) */
TEST(sched_pick_work_does_not_grow_with_jobs)
{
	struct db *db = unit_db();
	int64_t w = worker(db, "h", 1);
	struct db_work few, many;
	int i;

	for (i = 0; i < 100; i++)
		(void)job(db, "few", "q", 50 + i % 7, false);
	few = pick_work(db, w);
	CHECK_INT(db_begin(db), 0);
	for (i = 0; i < 5000; i++)
		(void)job(db, "many", "q", 40 + i % 13, false);
	CHECK_INT(db_commit(db), 0);
	many = pick_work(db, w);
	/* One sort, of the worker's own directly chained jobs (none here). */
	CHECK(few.sorts <= 1);
	CHECK_INT(many.sorts, few.sorts);
	CHECK_INT(few.scan_steps, 0);
	CHECK_INT(many.scan_steps, 0);
	if (many.vm_steps > 2 * few.vm_steps + 200)
		FAIL("a pick among 5,100 jobs took %lld steps, among 100 %lld", (long long)many.vm_steps,
		     (long long)few.vm_steps);
	db_free(db);
}
