/* SPDX-License-Identifier: MIT */
/* db.c - SQLite behind the db.h interface: WAL, busy timeout, numbered
 * migrations in a schema_version table, bound parameters only. Owns the
 * connection and a small cache of prepared statements (SQL parsing was the
 * largest cost of listing jobs). A connection belongs to one thread, so
 * SQLite runs without its own mutexes. A postgresql:// target goes to
 * db_pg.c instead: each function here hands such a connection over. */
#define LOG_MODULE "db"
#include <errno.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "server/db/db.h"
#include "server/db/db_int.h"
#include "util/err.h"
#include "util/log.h"
#include "util/banned.h" /* last: after every system header */

/* Prepared statements kept for reuse, looked up by their SQL text. A
 * cached statement in use is not handed out twice (nested queries of the
 * same text prepare a private one). */
#define DB_STMT_CACHE 64


struct db_cache_entry {
	const char *sql;   /* sqlite3_sql() of the statement */
	uint32_t hash;
	struct db_stmt st;
};

struct db {
	struct dbpg *pg; /* PostgreSQL (db_pg.c) instead of SQLite when set */
	sqlite3 *h;
	int version;
	bool disk_full;      /* a write failed for want of space since db_clear_error */
	bool saved_valid;    /* db_rollback kept the error that led to it in saved */
	char saved[256];
	struct db_cache_entry cache[DB_STMT_CACHE];
	size_t ncache, evict;
	struct db_work work; /* summed as statements end (db_work_take) */
};

static uint32_t sql_hash(const char *s)
{
	uint32_t h = 2166136261u;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h;
}

/* After a failed call: whether it failed for want of disk space
 * (SQLITE_FULL, or an I/O error whose errno says so). */
static void note_failure(struct db *db, int rc)
{
	int e = sqlite3_system_errno(db->h);

	if ((rc & 0xff) == SQLITE_FULL || e == ENOSPC || e == EDQUOT)
		db->disk_full = true;
}

/* A free cached statement for sql, or a new cache entry for it; NULL when
 * the text is in use already or nothing can be evicted. */
static struct db_stmt *cache_get(struct db *db, const char *sql)
{
	uint32_t h = sql_hash(sql);
	struct db_cache_entry *e;
	size_t i, k;

	for (i = 0; i < db->ncache; i++) {
		e = &db->cache[i];
		if (e->hash == h && !strcmp(e->sql, sql))
			return e->st.in_use ? NULL : &e->st;
	}
	if (db->ncache < DB_STMT_CACHE) {
		e = &db->cache[db->ncache];
	} else {
		for (k = 0; k < DB_STMT_CACHE; k++) {
			e = &db->cache[(db->evict + k) % DB_STMT_CACHE];
			if (!e->st.in_use)
				break;
		}
		if (k == DB_STMT_CACHE)
			return NULL;
		db->evict = (db->evict + k + 1) % DB_STMT_CACHE;
		sqlite3_finalize(e->st.s);
		memset(e, 0, sizeof(*e));
	}
	if (sqlite3_prepare_v3(db->h, sql, -1, SQLITE_PREPARE_PERSISTENT, &e->st.s, NULL) != SQLITE_OK || !e->st.s) {
		sqlite3_finalize(e->st.s);
		memset(e, 0, sizeof(*e));
		return NULL;
	}
	e->sql = sqlite3_sql(e->st.s);
	e->hash = h;
	e->st.db = db;
	e->st.cached = true;
	if (e == &db->cache[db->ncache])
		db->ncache++;
	return &e->st;
}

static int bind_va(struct db_stmt *st, const char *types, va_list ap)
{
	int i, rc = SQLITE_OK;

	for (i = 0; types && types[i] && rc == SQLITE_OK; i++) {
		switch (types[i]) {
		case 't': {
			const char *s = va_arg(ap, const char *);
			rc = s ? sqlite3_bind_text(st->s, i + 1, s, -1, SQLITE_TRANSIENT) : sqlite3_bind_null(st->s, i + 1);
			break;
		}
		case 'i':
			rc = sqlite3_bind_int64(st->s, i + 1, va_arg(ap, int64_t));
			break;
		case 'I': {
			int64_t v = va_arg(ap, int64_t);
			rc = v ? sqlite3_bind_int64(st->s, i + 1, v) : sqlite3_bind_null(st->s, i + 1);
			break;
		}
		case 'n':
			rc = sqlite3_bind_null(st->s, i + 1);
			break;
		default:
			return ERR_INVALID;
		}
	}
	return rc == SQLITE_OK ? 0 : ERR_INVALID;
}

static int prepare_va(struct db *db, struct db_stmt **out, const char *sql, const char *types, va_list ap)
{
	struct db_stmt *st;
	int rc;

	db->saved_valid = false;
	if (db->pg)
		return db__pg_prepare(db, db->pg, out, sql, types, ap);
	st = cache_get(db, sql);
	*out = NULL;
	if (st) {
		st->in_use = true;
	} else {
		if (!(st = calloc(1, sizeof(*st))))
			return ERR_NOMEM;
		st->db = db;
		if (sqlite3_prepare_v2(db->h, sql, -1, &st->s, NULL) != SQLITE_OK) {
			log_err("cannot prepare '%s': %s", sql, sqlite3_errmsg(db->h));
			free(st);
			return ERR_IO;
		}
	}
	rc = bind_va(st, types, ap);
	if (rc) {
		log_err("cannot bind parameters of '%s': %s", sql, sqlite3_errmsg(db->h));
		db_finalize(st);
		return ERR_IO;
	}
	*out = st;
	return 0;
}

int db_prepare(struct db *db, struct db_stmt **out, const char *sql, const char *types, ...)
{
	va_list ap;
	int rc;

	va_start(ap, types);
	rc = prepare_va(db, out, sql, types, ap);
	va_end(ap);
	return rc;
}

int db_bind_text(struct db_stmt *st, int idx, const char *s)
{
	int rc;

	if (st->db->pg)
		return db__pg_bind_text(st, idx, s);
	rc = s ? sqlite3_bind_text(st->s, idx, s, -1, SQLITE_TRANSIENT) : sqlite3_bind_null(st->s, idx);
	return rc == SQLITE_OK ? 0 : ERR_INVALID;
}

int db_bind_int(struct db_stmt *st, int idx, int64_t v)
{
	if (st->db->pg) {
		char num[24];
		snprintf(num, sizeof(num), "%lld", (long long)v);
		return db__pg_bind_text(st, idx, num);
	}
	return sqlite3_bind_int64(st->s, idx, v) == SQLITE_OK ? 0 : ERR_INVALID;
}

int db_step(struct db_stmt *st)
{
	int rc;

	if (st->db->pg)
		return db__pg_step(st);
	rc = sqlite3_step(st->s);

	if (rc == SQLITE_ROW)
		return 1;
	if (rc == SQLITE_DONE)
		return 0;
	if ((rc & 0xff) == SQLITE_CONSTRAINT)
		return ERR_INVALID;
	note_failure(st->db, rc);
	log_err("statement '%s' failed: %s", sqlite3_sql(st->s), sqlite3_errmsg(st->db->h));
	return ERR_IO;
}

const char *db_col_text(struct db_stmt *st, int col)
{
	if (st->db->pg)
		return db__pg_col_text(st, col);
	return (const char *)sqlite3_column_text(st->s, col);
}

int64_t db_col_int(struct db_stmt *st, int col)
{
	if (st->db->pg) {
		/* Text results: an integer, or a boolean's t/f as SQLite's 1/0. */
		const char *t = db__pg_col_text(st, col);
		return !t ? 0 : *t == 't' ? 1 : *t == 'f' ? 0 : strtoll(t, NULL, 10);
	}
	return sqlite3_column_int64(st->s, col);
}

bool db_col_null(struct db_stmt *st, int col)
{
	if (st->db->pg)
		return db__pg_col_null(st, col);
	return sqlite3_column_type(st->s, col) == SQLITE_NULL;
}

void db_work_take(struct db *db, struct db_work *out)
{
	*out = db->work;
	memset(&db->work, 0, sizeof(db->work));
}

void db_finalize(struct db_stmt *st)
{
	if (!st)
		return;
	if (st->db->pg) {
		db__pg_finalize(st);
		return;
	}
	st->db->work.sorts += sqlite3_stmt_status(st->s, SQLITE_STMTSTATUS_SORT, 1);
	st->db->work.scan_steps += sqlite3_stmt_status(st->s, SQLITE_STMTSTATUS_FULLSCAN_STEP, 1);
	st->db->work.vm_steps += sqlite3_stmt_status(st->s, SQLITE_STMTSTATUS_VM_STEP, 1);
	if (st->cached) {
		sqlite3_reset(st->s);
		sqlite3_clear_bindings(st->s);
		st->in_use = false;
		return;
	}
	sqlite3_finalize(st->s);
	free(st);
}

int db_exec(struct db *db, const char *sql, const char *types, ...)
{
	struct db_stmt *st;
	va_list ap;
	int rc;

	va_start(ap, types);
	rc = prepare_va(db, &st, sql, types, ap);
	va_end(ap);
	if (rc)
		return rc;
	while ((rc = db_step(st)) == 1)
		;
	if (rc == 0)
		rc = db->pg ? (int)db__pg_stmt_changes(st) : sqlite3_changes(db->h);
	db_finalize(st);
	return rc;
}

int db_exec_whole(struct db *db, const char *sql, const char *types, ...)
{
	struct db_stmt *st;
	va_list ap;
	int rc;

	va_start(ap, types);
	rc = prepare_va(db, &st, sql, types, ap);
	va_end(ap);
	if (rc)
		return rc;
	if (db->pg)
		db__pg_stmt_whole(st);
	while ((rc = db_step(st)) == 1)
		;
	if (rc == 0)
		rc = db->pg ? (int)db__pg_stmt_changes(st) : sqlite3_changes(db->h);
	db_finalize(st);
	return rc;
}

int db_query_int(struct db *db, int64_t *out, const char *sql, const char *types, ...)
{
	struct db_stmt *st;
	va_list ap;
	int rc;

	va_start(ap, types);
	rc = prepare_va(db, &st, sql, types, ap);
	va_end(ap);
	if (rc)
		return rc;
	rc = db_step(st);
	if (rc == 1) {
		*out = db_col_int(st, 0);
		rc = 0;
	} else if (rc == 0) {
		rc = ERR_NOT_FOUND;
	}
	db_finalize(st);
	return rc;
}

int db_change_stamp(struct db *db, int64_t stamp[2])
{
	int rc;

	if (db->pg)
		return db__pg_change_stamp(db->pg, stamp);
	rc = db_query_int(db, &stamp[0], "PRAGMA data_version", NULL);

	stamp[1] = sqlite3_total_changes64(db->h);
	return rc ? ERR_IO : 0;
}

int64_t db_last_id(struct db *db)
{
	if (db->pg)
		return db__pg_last_id(db->pg);
	return sqlite3_last_insert_rowid(db->h);
}

int db_plan(struct db *db, const char *sql, char *buf, size_t len)
{
	sqlite3_stmt *st = NULL;
	char *q = sqlite3_mprintf("EXPLAIN QUERY PLAN %s", sql);
	size_t used = 0;
	int rc = ERR_IO;

	if (db->pg) {
		sqlite3_free(q);
		return db__pg_plan(db->pg, sql, buf, len);
	}
	if (len)
		buf[0] = '\0';
	if (!q || sqlite3_prepare_v2(db->h, q, -1, &st, NULL) != SQLITE_OK)
		goto out;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *d = (const char *)sqlite3_column_text(st, 3);
		int n = snprintf(buf + used, len > used ? len - used : 0, "%s%s", used ? "; " : "", d ? d : "");
		if (n > 0)
			used = used + (size_t)n < len ? used + (size_t)n : len;
	}
	rc = rc == SQLITE_DONE ? 0 : ERR_IO;
out:
	sqlite3_finalize(st);
	sqlite3_free(q);
	return rc;
}

const char *db_errmsg(struct db *db)
{
	if (db->pg)
		return db__pg_errmsg(db->pg);
	return db->saved_valid ? db->saved : sqlite3_errmsg(db->h);
}

bool db_disk_full(struct db *db)
{
	return db->disk_full;
}

void db_clear_error(struct db *db)
{
	db->disk_full = false;
	db->saved_valid = false;
}

static int exec_plain(struct db *db, const char *sql)
{
	char *msg = NULL;
	int rc;

	db->saved_valid = false;
	if ((rc = sqlite3_exec(db->h, sql, NULL, NULL, &msg)) != SQLITE_OK) {
		note_failure(db, rc);
		log_err("'%.60s': %s", sql, msg ? msg : "?");
		sqlite3_free(msg);
		return ERR_IO;
	}
	return 0;
}

int db_begin(struct db *db)
{
	if (db->pg)
		return db__pg_begin(db->pg, false);
	return exec_plain(db, "BEGIN IMMEDIATE");
}

int db_begin_serial(struct db *db)
{
	if (db->pg)
		return db__pg_begin(db->pg, true);
	return exec_plain(db, "BEGIN IMMEDIATE");
}

int db_lock_row(struct db *db, const char *table, int64_t id)
{
	char sql[96];
	int rc;

	if (!db->pg)
		return 0; /* BEGIN IMMEDIATE holds the whole database already */
	if (snprintf(sql, sizeof(sql), "SELECT 1 FROM %s WHERE id = ? FOR UPDATE", table) >= (int)sizeof(sql))
		return ERR_INVALID;
	rc = db_query_int(db, &(int64_t){ 0 }, sql, "i", id);
	return rc == ERR_NOT_FOUND ? 0 : rc;
}

bool db_conflict(struct db *db)
{
	return db->pg && db__pg_conflict(db->pg);
}

int db_commit(struct db *db)
{
	if (db->pg)
		return db__pg_commit(db->pg);
	return exec_plain(db, "COMMIT");
}

int db_commit_unflushed(struct db *db)
{
	if (db->pg)
		return db__pg_exec_plain(db->pg, "SET LOCAL synchronous_commit = off; COMMIT");
	return exec_plain(db, "COMMIT");
}

void db_rollback(struct db *db)
{
	if (db->pg) {
		db__pg_rollback(db->pg);
		return;
	}
	/* The error that made the caller roll back stays what db_errmsg says:
	 * SQLite itself rolls back on some (a full disk), and the ROLLBACK
	 * then fails with "no transaction is active", which is no cause. */
	if (sqlite3_errcode(db->h) != SQLITE_OK && !db->saved_valid) {
		snprintf(db->saved, sizeof(db->saved), "%s", sqlite3_errmsg(db->h));
		db->saved_valid = true;
	}
	/* Fails only when no transaction is open, which is what we want anyway. */
	(void)sqlite3_exec(db->h, "ROLLBACK", NULL, NULL, NULL);
}

void db_now(char out[DB_TIME_LEN])
{
	time_t t = time(NULL);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(out, DB_TIME_LEN, "%Y-%m-%dT%H:%M:%S", &tm);
}

bool db_is_pg_target(const char *target)
{
	return db__is_pg(target);
}

bool db_is_pg(const struct db *db)
{
	return db->pg != NULL;
}

int db_schema_version(struct db *db)
{
	if (db->pg)
		return db__pg_schema_version(db->pg);
	return db->version;
}

static int migrate(struct db *db, char *err, size_t errlen)
{
	int64_t v = 0;
	size_t i;
	int rc;

	rc = exec_plain(db, "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)");
	if (rc)
		goto fail;
	rc = db_query_int(db, &v, "SELECT MAX(version) FROM schema_version", NULL);
	if (rc && rc != ERR_NOT_FOUND)
		goto fail;
	for (i = 0; i < db__migrations_sqlite_count; i++) {
		const struct db_migration *m = &db__migrations_sqlite[i];
		if (m->version <= v)
			continue;
		if ((rc = db_begin(db)))
			goto fail;
		if ((rc = exec_plain(db, m->sql)) ||
		    (rc = db_exec(db, "INSERT INTO schema_version (version) VALUES (?)", "i", (int64_t)m->version)) < 0) {
			db_rollback(db);
			snprintf(err, errlen, "migration %d failed: %s", m->version, sqlite3_errmsg(db->h));
			return ERR_IO;
		}
		if ((rc = db_commit(db)))
			goto fail;
		v = m->version;
		log_info("database migrated to version %d", m->version);
	}
	db->version = (int)v;
	return 0;
fail:
	snprintf(err, errlen, "cannot read or migrate the schema: %s", sqlite3_errmsg(db->h));
	return ERR_IO;
}

int db_open(struct db **out, const char *path, char *err, size_t errlen)
{
	struct db *db = NULL;
	int fd, rc = ERR_IO;

	*out = NULL;
	if (db__is_pg(path)) {
		if (!(db = calloc(1, sizeof(*db))))
			return ERR_NOMEM;
		if ((rc = db__pg_open(&db->pg, path, err, errlen))) {
			free(db);
			return rc;
		}
		*out = db;
		return 0;
	}
	db__fault_vfs_install();
	/* Create the file ourselves so it is 0600 from the first byte: it holds
	 * API secrets. Never open and close an existing database file here: a
	 * close() drops every POSIX lock this process holds on it, including
	 * those of its other open connections, and another process then takes
	 * itself for the last user, checkpoints and resets the WAL under them. */
	fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd >= 0) {
		close(fd);
	} else if (errno != EEXIST) {
		rc = -errno;
		snprintf(err, errlen, "cannot open '%s': %s%s", path, strerror(-rc),
			 rc == -ENOSPC ? " (the disk is full)" : "");
		return rc;
	} else {
		(void)chmod(path, 0600); /* best effort on an existing file */
	}
	db = calloc(1, sizeof(*db));
	if (!db)
		return ERR_NOMEM;
	if (sqlite3_open_v2(path, &db->h, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "cannot open database '%s': %s", path, db->h ? sqlite3_errmsg(db->h) : "out of memory");
		goto out;
	}
	sqlite3_busy_timeout(db->h, 5000);
	if (exec_plain(db, "PRAGMA journal_mode=WAL") || exec_plain(db, "PRAGMA foreign_keys=ON") ||
	    exec_plain(db, "PRAGMA synchronous=NORMAL")) {
		snprintf(err, errlen, "cannot configure database '%s': %s", path, sqlite3_errmsg(db->h));
		goto out;
	}
	rc = migrate(db, err, errlen);
out:
	/* A full disk says so (SQLite's own text is "disk I/O error"). */
	if (rc && db && db->h && (db->disk_full || sqlite3_system_errno(db->h) == ENOSPC)) {
		snprintf(err, errlen, "the disk holding database '%s' is full (no space left on device): free"
			 " space there and start again", path);
		rc = -ENOSPC;
	}
	if (rc) {
		db_free(db);
		return rc;
	}
	*out = db;
	return 0;
}

void db_free(struct db *db)
{
	size_t i;

	if (!db)
		return;
	db__pg_free(db->pg);
	for (i = 0; i < db->ncache; i++)
		sqlite3_finalize(db->cache[i].st.s);
	if (db->h)
		sqlite3_close_v2(db->h);
	free(db);
}
