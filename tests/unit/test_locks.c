/* SPDX-License-Identifier: MIT */
/* test_locks.c - the lock API's rules without HTTP (server/store/locks.c): job
 * tokens only for jobs that have not ended; mutexes found among the job's
 * and its parents' (or a named job's), locked by one job at a time,
 * 410 once the named owner has ended; barriers released when their count
 * of jobs arrived, removed when a related job failed (check_dead_job). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "unit.h"
#include "server/db/db.h"
#include "server/store/deps.h"
#include "server/store/jobs.h"
#include "server/store/locks.h"
#include "util/err.h"

static int64_t lock_job(struct db *db, const char *test)
{
	json_t *s = json_pack("{s:s}", "TEST", test);
	int64_t id = 0;

	CHECK_INT(jobs_insert(db, s, 50, 0, 0, &id), 0);
	json_decref(s);
	return id;
}

static void set_state(struct db *db, int64_t id, const char *state, const char *result)
{
	CHECK_INT(db_exec(db, "UPDATE jobs SET state = ?, result = ? WHERE id = ?", "tti", state, result, id), 1);
}

TEST(locks_tokens_name_a_running_job)
{
	struct db *db = unit_db();
	int64_t j = lock_job(db, "a"), got = 0;
	char t1[LOCKS_TOKEN_LEN + 1], t2[LOCKS_TOKEN_LEN + 1];

	set_state(db, j, "running", "none");
	CHECK_INT(locks_token_issue(db, j, t1), 0);
	CHECK_INT((int)strlen(t1), LOCKS_TOKEN_LEN);
	CHECK_INT(locks_token_job(db, t1, &got), 0);
	CHECK_INT(got, j);
	CHECK_INT(locks_token_issue(db, j, t2), 0); /* a new one replaces it */
	CHECK(strcmp(t1, t2) != 0);
	CHECK_INT(locks_token_job(db, t1, &got), ERR_NOT_FOUND);
	CHECK_INT(locks_token_job(db, "short", &got), ERR_NOT_FOUND);
	set_state(db, j, "done", "passed");
	CHECK_INT(locks_token_job(db, t2, &got), ERR_NOT_FOUND); /* the job ended */
	CHECK(locks_name_valid("a_B9"));
	CHECK(!locks_name_valid("a-b"));
	CHECK(!locks_name_valid(""));
	CHECK(!locks_name_valid("../x"));
	db_free(db);
}

TEST(locks_mutex_between_parent_and_child)
{
	struct db *db = unit_db();
	int64_t p = lock_job(db, "server"), c = lock_job(db, "client"), o = lock_job(db, "other");
	char msg[256], pid[24];

	CHECK_INT(deps_add(db, p, c, DEPS_PARALLEL, msg, sizeof(msg)), 0);
	CHECK_INT(locks_mutex_lock(db, "ready", c, ""), 0); /* not created yet: try later */
	CHECK_INT(locks_mutex_create(db, "ready", p), 1);
	CHECK_INT(locks_mutex_create(db, "ready", c), 0); /* the parent's exists */
	CHECK_INT(locks_mutex_lock(db, "ready", c, ""), 1); /* the child finds its parent's */
	CHECK_INT(locks_mutex_lock(db, "ready", c, ""), 1); /* again: it holds it */
	CHECK_INT(locks_mutex_lock(db, "ready", p, ""), 0); /* held by the child */
	CHECK_INT(locks_mutex_lock(db, "ready", o, ""), 0); /* not related: none found */
	CHECK_INT(locks_mutex_unlock(db, "ready", p, ""), 0); /* not its lock to open */
	CHECK_INT(locks_mutex_unlock(db, "ready", c, ""), 1);
	CHECK_INT(locks_mutex_unlock(db, "ready", c, ""), 1); /* unlocked already */
	CHECK_INT(locks_mutex_lock(db, "ready", p, ""), 1);
	/* where=<job>: that job's lock; 410 once that job has ended without it. */
	snprintf(pid, sizeof(pid), "%lld", (long long)o);
	CHECK_INT(locks_mutex_lock(db, "later", p, pid), 0);
	set_state(db, o, "done", "failed");
	CHECK_INT(locks_mutex_lock(db, "later", p, pid), -1);
	db_free(db);
}

TEST(locks_barrier_releases_when_all_arrived)
{
	struct db *db = unit_db();
	int64_t p = lock_job(db, "server"), c1 = lock_job(db, "c1"), c2 = lock_job(db, "c2");
	char msg[256];

	CHECK_INT(deps_add(db, p, c1, DEPS_PARALLEL, msg, sizeof(msg)), 0);
	CHECK_INT(deps_add(db, p, c2, DEPS_PARALLEL, msg, sizeof(msg)), 0);
	CHECK_INT(locks_barrier_wait(db, "setup", c1, "", false), -1); /* none yet: 410 */
	CHECK_INT(locks_barrier_create(db, "setup", p, 3), 1);
	CHECK_INT(locks_barrier_create(db, "setup", c1, 3), 0); /* the parent's exists */
	CHECK_INT(locks_barrier_create(db, "zero", p, 0), 0);
	CHECK_INT(locks_barrier_wait(db, "setup", c1, "", false), 0);
	CHECK_INT(locks_barrier_wait(db, "setup", c1, "", false), 0); /* asking again adds nothing */
	CHECK_INT(locks_barrier_wait(db, "setup", p, "", false), 0);
	CHECK_INT(locks_barrier_wait(db, "setup", c2, "", false), 1); /* the third: released */
	CHECK_INT(locks_barrier_wait(db, "setup", c1, "", false), 1); /* and stays so */
	CHECK_INT(locks_barrier_destroy(db, "setup", p, ""), 1);
	CHECK_INT(locks_barrier_wait(db, "setup", c1, "", false), -1);
	/* check_dead_job: a failed child removes the barrier, the waiters get 410. */
	CHECK_INT(locks_barrier_create(db, "dead", p, 3), 1);
	CHECK_INT(locks_barrier_wait(db, "dead", c1, "", true), 0);
	set_state(db, c2, "done", "failed");
	CHECK_INT(locks_barrier_wait(db, "dead", p, "", true), -1);
	CHECK_INT(locks_barrier_wait(db, "dead", c1, "", false), -1); /* gone */
	db_free(db);
}

TEST(locks_mm_relatives)
{
	struct db *db = unit_db();
	int64_t p = lock_job(db, "server"), c1 = lock_job(db, "c1"), c2 = lock_job(db, "c2");
	int64_t after = lock_job(db, "after");
	char msg[256], *s;
	json_t *j = NULL;

	CHECK_INT(deps_add(db, p, c1, DEPS_PARALLEL, msg, sizeof(msg)), 0);
	CHECK_INT(deps_add(db, p, c2, DEPS_PARALLEL, msg, sizeof(msg)), 0);
	CHECK_INT(deps_add(db, p, after, DEPS_CHAINED, msg, sizeof(msg)), 0);
	set_state(db, c1, "running", "none");
	CHECK_INT(locks_mm_children(db, p, &j), 0); /* parallel ones only, with their state */
	s = json_dumps(j, JSON_SORT_KEYS | JSON_COMPACT);
	CHECK(s != NULL);
	{
		char want[128];
		snprintf(want, sizeof(want), "{\"%lld\":\"running\",\"%lld\":\"scheduled\"}", (long long)c1,
			 (long long)c2);
		CHECK_STR(s, want);
	}
	free(s);
	json_decref(j);
	CHECK_INT(locks_mm_children_in(db, p, "scheduled", &j), 0); /* any dependency */
	CHECK_INT((int)json_array_size(j), 2);
	CHECK_INT(json_integer_value(json_array_get(j, 0)), c2);
	CHECK_INT(json_integer_value(json_array_get(j, 1)), after);
	json_decref(j);
	CHECK_INT(locks_mm_children_in(db, p, "anything", &j), 0); /* else: done */
	CHECK_INT((int)json_array_size(j), 0);
	json_decref(j);
	CHECK_INT(locks_mm_parents(db, c2, &j), 0);
	CHECK_INT((int)json_array_size(j), 1);
	CHECK_INT(json_integer_value(json_array_get(j, 0)), p);
	json_decref(j);
	CHECK_INT(locks_mm_parents(db, after, &j), 0); /* chained: not a parallel parent */
	CHECK_INT((int)json_array_size(j), 0);
	json_decref(j);
	db_free(db);
}

TEST(locks_relay_addresses_within_the_cluster)
{
	struct db *db = unit_db();
	int64_t p = lock_job(db, "server"), c = lock_job(db, "client"), other = lock_job(db, "other");
	char msg[256], *s, want[160];
	json_t *j = NULL;

	CHECK_INT(deps_add(db, p, c, DEPS_PARALLEL, msg, sizeof(msg)), 0);
	CHECK_INT(locks_relay_peers(db, p, &j), 0); /* nobody has published one yet */
	CHECK_INT((int)json_object_size(j), 0);
	json_decref(j);
	CHECK_INT(locks_relay_set(db, p, "10.0.0.1:4000"), 0);
	CHECK_INT(locks_relay_set(db, c, "10.0.0.2:4001"), 0);
	CHECK_INT(locks_relay_set(db, c, "10.0.0.3:4002"), 0); /* a new hub replaces the old address */
	CHECK_INT(locks_relay_set(db, other, "10.0.0.9:4009"), 0);
	CHECK_INT(locks_relay_peers(db, p, &j), 0); /* the others of its cluster, not itself, not other */
	s = json_dumps(j, JSON_SORT_KEYS | JSON_COMPACT);
	snprintf(want, sizeof(want), "{\"%lld\":\"10.0.0.3:4002\"}", (long long)c);
	CHECK_STR(s, want);
	free(s);
	json_decref(j);
	CHECK_INT(locks_relay_peers(db, c, &j), 0);
	s = json_dumps(j, JSON_SORT_KEYS | JSON_COMPACT);
	snprintf(want, sizeof(want), "{\"%lld\":\"10.0.0.1:4000\"}", (long long)p);
	CHECK_STR(s, want);
	free(s);
	json_decref(j);
	CHECK_INT(locks_relay_peers(db, other, &j), 0); /* alone: no peers */
	CHECK_INT((int)json_object_size(j), 0);
	json_decref(j);
	db_free(db);
}

TEST(locks_relay_secret_per_cluster_never_a_setting)
{
	struct db *db = unit_db();
	int64_t p = lock_job(db, "server"), c = lock_job(db, "client"), other = lock_job(db, "other"), n = -1;
	char sp[LOCKS_RELAY_SECRET_LEN + 1], sc[LOCKS_RELAY_SECRET_LEN + 1], so[LOCKS_RELAY_SECRET_LEN + 1];
	char msg[256];

	CHECK_INT(deps_add(db, p, c, DEPS_PARALLEL, msg, sizeof(msg)), 0);
	CHECK_INT(locks_relay_secret(db, c, sc), 0); /* the later member asks first */
	CHECK_INT(locks_relay_secret(db, p, sp), 0);
	CHECK_INT((int)strlen(sp), LOCKS_RELAY_SECRET_LEN);
	CHECK(strspn(sp, "0123456789abcdef") == LOCKS_RELAY_SECRET_LEN);
	CHECK_STR(sc, sp); /* one secret for the cluster */
	CHECK_INT(locks_relay_secret(db, p, sc), 0);
	CHECK_STR(sc, sp); /* kept */
	CHECK_INT(locks_relay_secret(db, other, so), 0);
	CHECK(strcmp(so, sp) != 0); /* another cluster's is another */
	CHECK_INT(db_query_int(db, &n, "SELECT COUNT(*) FROM job_settings WHERE value = ? OR value = ?", "tt", sp, so), 0);
	CHECK_INT(n, 0); /* never a job setting */
	CHECK_INT(db_query_int(db, &n, "SELECT COUNT(*) FROM relay_secrets", ""), 0);
	CHECK_INT(n, 2);
	db_free(db);
}
