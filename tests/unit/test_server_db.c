/* SPDX-License-Identifier: MIT */
/* test_server_db.c - the database layer and the response cache: cached
 * statements reused and nested safely, the change stamp moving with this
 * connection's and other processes' commits, a second connection in the
 * same process not breaking the first one's view of other processes'
 * commits, the LRU of serialized answers and the live view's watch map. */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
#include "unit.h"
#include "server/db/db.h"
#include "server/api/watch.h"
#include "server/http/resp_cache.h"
#include "util/err.h"

static struct db *open_db(const char *path)
{
	char err[256];
	struct db *db = NULL;

	if (db_open(&db, path, err, sizeof(err)))
		FAIL("db_open %s: %s", path, err);
	return db;
}

static char *db_path(void)
{
	static char p[512];

	snprintf(p, sizeof(p), "%s/vigil.db", unit_tmpdir());
	return p;
}

struct lock_try {
	struct db *db;
	int rc;
	bool conflict;
};

static void *lock_row2(void *arg)
{
	struct lock_try *t = arg;

	t->rc = db_lock_row(t->db, "t_lock", 2);
	t->conflict = t->rc < 0 && db_conflict(t->db);
	if (t->rc < 0)
		db_rollback(t->db);
	return NULL;
}

/* db_lock_row holds a row until the transaction ends; two transactions
 * locking two rows in opposite orders deadlock on PostgreSQL, and the one
 * PostgreSQL picks fails with db_conflict (its caller may run it again)
 * while the other goes on. SQLite's transactions hold the whole database:
 * db_lock_row does nothing there and db_conflict is never true. */
TEST(server_db_row_lock_conflict)
{
	struct db *a = unit_db(), *b = unit_db();
	struct lock_try ta = { a, 0, false };
	pthread_t th;
	int rb;
	bool cb;

	CHECK(db_exec(a, "CREATE TABLE t_lock (id INTEGER PRIMARY KEY, v INTEGER)", "") >= 0);
	CHECK(db_exec(a, "INSERT INTO t_lock (id, v) VALUES (1, 0), (2, 0)", "") == 2);
	CHECK_INT(db_lock_row(a, "t_lock", 99), 0); /* no such row: no error */
	if (!db_is_pg(a)) {
		CHECK_INT(db_begin(a), 0);
		CHECK_INT(db_lock_row(a, "t_lock", 1), 0);
		CHECK_INT(db_commit(a), 0);
		CHECK(!db_conflict(a));
		db_free(b);
		db_free(a);
		return;
	}
	CHECK_INT(db_begin(a), 0);
	CHECK_INT(db_begin(b), 0);
	CHECK_INT(db_lock_row(a, "t_lock", 1), 0);
	CHECK_INT(db_lock_row(b, "t_lock", 2), 0);
	CHECK_INT(pthread_create(&th, NULL, lock_row2, &ta), 0); /* a waits for b's row 2 */
	rb = db_lock_row(b, "t_lock", 1);                         /* b for a's row 1: a deadlock */
	cb = rb < 0 && db_conflict(b);
	if (rb < 0)
		db_rollback(b); /* lets a go on */
	CHECK_INT(pthread_join(th, NULL), 0);
	CHECK((ta.rc < 0) != (rb < 0)); /* exactly one lost */
	CHECK(ta.rc < 0 ? ta.conflict : cb);
	if (ta.rc == 0)
		CHECK_INT(db_exec(a, "UPDATE t_lock SET v = 1 WHERE id = 2", ""), 1);
	else
		CHECK_INT(db_exec(b, "UPDATE t_lock SET v = 1 WHERE id = 2", ""), 1);
	CHECK_INT(db_commit(ta.rc == 0 ? a : b), 0);
	{
		int64_t v = 0;
		CHECK_INT(db_query_int(a, &v, "SELECT SUM(v) FROM t_lock", ""), 0);
		CHECK_INT(v, 1);
	}
	db_free(b);
	db_free(a);
}

TEST(server_db_cached_statements_nest)
{
	struct db *db = open_db(db_path());
	struct db_stmt *a, *b;
	int64_t n = 0, i;
	int rows = 0;

	CHECK(db_exec(db, "CREATE TABLE t (x INTEGER)", NULL) >= 0);
	for (i = 1; i <= 3; i++)
		CHECK_INT(db_exec(db, "INSERT INTO t (x) VALUES (?)", "i", i), 1);
	/* The same text twice at once: the inner one must not reset the outer. */
	CHECK_INT(db_prepare(db, &a, "SELECT x FROM t ORDER BY x", NULL), 0);
	while (db_step(a) == 1) {
		CHECK_INT(db_prepare(db, &b, "SELECT x FROM t ORDER BY x", NULL), 0);
		CHECK_INT(db_step(b), 1);
		CHECK_INT(db_col_int(b, 0), 1);
		db_finalize(b);
		rows++;
		CHECK_INT(db_col_int(a, 0), rows);
	}
	db_finalize(a);
	CHECK_INT(rows, 3);
	/* A reused statement starts with fresh bindings and from the first row. */
	CHECK_INT(db_query_int(db, &n, "SELECT COUNT(*) FROM t WHERE x >= ?", "i", (int64_t)2), 0);
	CHECK_INT(n, 2);
	CHECK_INT(db_query_int(db, &n, "SELECT COUNT(*) FROM t WHERE x >= ?", "i", (int64_t)3), 0);
	CHECK_INT(n, 1);
	/* More texts than the cache holds still work. */
	for (i = 0; i < 200; i++) {
		char sql[64];
		snprintf(sql, sizeof(sql), "SELECT x + %d FROM t WHERE x = 1", (int)i);
		CHECK_INT(db_query_int(db, &n, sql, NULL), 0);
		CHECK_INT(n, 1 + i);
	}
	db_free(db);
}

/* Another process commits. Taking itself for the last user (when this
 * process has lost its locks), it checkpoints the WAL and removes the
 * -shm file on close, and the next one makes a new one this process
 * never maps. */
static void other_process_sets(const char *path, int64_t v)
{
	pid_t pid = fork();
	int st;

	CHECK(pid >= 0);
	if (pid == 0) {
		/* A fresh process (SQLite's state must not cross a fork): the
		 * sqlite3 shell, as an administrator would use it. */
		char sql[64];
		snprintf(sql, sizeof(sql), "UPDATE t SET x = %lld", (long long)v);
		execlp("sqlite3", "sqlite3", path, sql, (char *)NULL);
		_exit(127);
	}
	CHECK(waitpid(pid, &st, 0) == pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

TEST(server_db_sees_other_processes_after_second_open)
{
	struct db *db = open_db(db_path()), *second;
	int64_t stamp[2], before[2], x = 0, i;

	CHECK(db_exec(db, "CREATE TABLE t (x INTEGER)", NULL) >= 0);
	CHECK_INT(db_exec(db, "INSERT INTO t (x) VALUES (1)", NULL), 1);
	CHECK_INT(db_change_stamp(db, before), 0);
	/* The server's housekeeping thread opens its own connection like this. */
	second = open_db(db_path());
	other_process_sets(db_path(), 2);
	CHECK_INT(db_query_int(db, &x, "SELECT x FROM t", NULL), 0);
	CHECK_INT(x, 2);
	CHECK_INT(db_change_stamp(db, stamp), 0);
	CHECK(stamp[0] != before[0]);
	/* Before the fix, from the second commit from outside on, none was seen. */
	for (i = 3; i < 6; i++) {
		CHECK_INT(db_query_int(second, &x, "SELECT x FROM t", NULL), 0);
		CHECK_INT(db_query_int(db, &x, "SELECT x FROM t", NULL), 0);
		other_process_sets(db_path(), i);
		CHECK_INT(db_query_int(db, &x, "SELECT x FROM t", NULL), 0);
		CHECK_INT(x, i);
		before[0] = stamp[0];
		before[1] = stamp[1];
		CHECK_INT(db_change_stamp(db, stamp), 0);
		CHECK(stamp[0] != before[0]);
	}
	/* Own changes move the stamp too; reads do not. */
	CHECK_INT(db_change_stamp(db, before), 0);
	CHECK_INT(db_query_int(db, &x, "SELECT x FROM t", NULL), 0);
	CHECK_INT(db_change_stamp(db, stamp), 0);
	CHECK(stamp[0] == before[0] && stamp[1] == before[1]);
	CHECK_INT(db_exec(db, "UPDATE t SET x = 4", NULL), 1);
	CHECK_INT(db_change_stamp(db, stamp), 0);
	CHECK(stamp[0] != before[0] || stamp[1] != before[1]);
	db_free(second);
	db_free(db);
}

TEST(server_resp_cache_lru_and_stamps)
{
	struct resp_cache c;
	int64_t s1[2] = { 1, 0 }, s2[2] = { 2, 0 };
	const char *b;
	size_t len = 0;
	char target[64];
	int i;

	resp_cache_init(&c);
	c.enabled = true;
	CHECK(resp_cache_route("/api/v1/jobs"));
	CHECK(resp_cache_route("/api/v1/job_groups/"));
	CHECK(!resp_cache_route("/api/v1/jobs/1"));
	CHECK(!resp_cache_route("/api/v1/workers"));
	CHECK(!resp_cache_route("/api/v1/jobsx"));
	CHECK(resp_cache_get(&c, "/api/v1/jobs?limit=5", s1, &len) == NULL);
	b = resp_cache_put(&c, "/api/v1/jobs?limit=5", s1, "{\"jobs\":[]}", 11);
	CHECK_STR(b, "{\"jobs\":[]}");
	b = resp_cache_get(&c, "/api/v1/jobs?limit=5", s1, &len);
	CHECK_STR(b, "{\"jobs\":[]}");
	CHECK_INT(len, 11);
	/* Another target, or the same at another stamp, misses. */
	CHECK(resp_cache_get(&c, "/api/v1/jobs?limit=6", s1, &len) == NULL);
	CHECK(resp_cache_get(&c, "/api/v1/jobs?limit=5", s2, &len) == NULL);
	CHECK(resp_cache_get(&c, "/api/v1/jobs?limit=5", s1, &len) == NULL);
	/* Beyond its size the least recently used entry goes. */
	resp_cache_put(&c, "/keep", s1, "k", 1);
	for (i = 0; i < RESP_CACHE_ENTRIES + 3; i++) {
		snprintf(target, sizeof(target), "/t%d", i);
		resp_cache_put(&c, target, s1, "x", 1);
		CHECK(resp_cache_get(&c, "/keep", s1, &len) != NULL);
	}
	CHECK(resp_cache_get(&c, "/t0", s1, &len) == NULL);
	snprintf(target, sizeof(target), "/t%d", RESP_CACHE_ENTRIES + 2);
	CHECK(resp_cache_get(&c, target, s1, &len) != NULL);
	resp_cache_release(&c);
	/* Switched off: nothing is kept. */
	resp_cache_init(&c);
	c.enabled = false;
	CHECK(resp_cache_put(&c, "/a", s1, "x", 1) == NULL);
	CHECK(resp_cache_get(&c, "/a", s1, &len) == NULL);
	resp_cache_release(&c);
}

TEST(server_watch_map)
{
	static struct watch_map m;
	int64_t id;

	watch_init(&m);
	CHECK(!watch_active(&m, 7, 100.0));
	watch_mark(&m, 7, 100.0);
	CHECK(watch_active(&m, 7, 100.0 + WATCH_S));
	CHECK(!watch_active(&m, 7, 100.0 + WATCH_S + 0.1));
	CHECK(!watch_active(&m, 8, 100.0));
	/* Watching again extends it. */
	watch_mark(&m, 7, 110.0);
	CHECK(watch_active(&m, 7, 110.0 + WATCH_S));
	/* A full map forgets the mark that ends first. */
	for (id = 1000; id < 1000 + WATCH_MAX_JOBS; id++)
		watch_mark(&m, id, 200.0 + (double)id / 1000);
	CHECK_INT(m.n, WATCH_MAX_JOBS);
	CHECK(!watch_active(&m, 7, 200.0));
	CHECK(watch_active(&m, 1000 + WATCH_MAX_JOBS - 1, 201.0));
	watch_release(&m);
}

/* Every migration is in both dialects' lists, in the same order: a
 * migration added to db_migrate.c and not mirrored in db_migrate_pg.c (or
 * the other way round) fails here, naming the number. */
TEST(server_db_migrations_mirrored)
{
	size_t i;

	for (i = 0; i < db__migrations_sqlite_count || i < db__migrations_pg_count; i++) {
		int sv = i < db__migrations_sqlite_count ? db__migrations_sqlite[i].version : -1;
		int pv = i < db__migrations_pg_count ? db__migrations_pg[i].version : -1;
		if (sv != pv)
			FAIL("migration %d of SQLite (db_migrate.c) against %d of PostgreSQL (db_migrate_pg.c): "
			     "add each migration to both lists", sv, pv);
		CHECK(db__migrations_sqlite[i].sql && *db__migrations_sqlite[i].sql);
		CHECK(db__migrations_pg[i].sql && *db__migrations_pg[i].sql);
	}
	CHECK(db__migrations_pg_count >= 11);
}

/* A PostgreSQL URL is told from a SQLite path. */
TEST(server_db_pg_target)
{
	CHECK(db_is_pg_target("postgresql:///vigil?host=/tmp"));
	CHECK(db_is_pg_target("postgres://u@h/db"));
	CHECK(!db_is_pg_target("/srv/vigil-data/vigil.db"));
	CHECK(!db_is_pg_target("postgresql.db"));
	{
		struct db *db = open_db(db_path());
		CHECK(!db_is_pg(db));
		db_free(db);
	}
}
