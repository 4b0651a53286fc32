/* SPDX-License-Identifier: MIT */
/* db.h - the server's database: connection, numbered migrations, prepared
 * statements with bound parameters. The only module that knows the SQL
 * dialect (placeholders, identity columns, time); callers write portable SQL
 * with '?' placeholders and never format values into statement text. */
#ifndef VIGIL_DB_H
#define VIGIL_DB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct db;
struct db_stmt;

/* Length of a timestamp text "YYYY-MM-DDTHH:MM:SS" plus its NUL. */
#define DB_TIME_LEN 20

/* Open (creating with mode 0600) the SQLite database at path, switch on WAL
 * and foreign keys, and apply every pending migration; or, when path is a
 * postgresql:// (or postgres://) URL, connect to that PostgreSQL database
 * and migrate it. 0, ERR_IO (message in err) or ERR_NOMEM. The connection
 * may be used from one thread at a time. */
int db_open(struct db **out, const char *path, char *err, size_t errlen);
void db_free(struct db *db);
/* A stamp that changes whenever the database does, by this connection or
 * any other (SQLite's PRAGMA data_version or PostgreSQL's snapshot, and
 * this connection's total changes).
 * 0 or ERR_IO. */
int db_change_stamp(struct db *db, int64_t stamp[2]);

/* true when target (as given to db_open) names a PostgreSQL database. */
bool db_is_pg_target(const char *target);
/* true when db is a PostgreSQL connection, false for SQLite. */
bool db_is_pg(const struct db *db);

/* The schema version after migrations (the highest applied number). */
int db_schema_version(struct db *db);

/* Prepare sql and bind values by types: 't' text (const char *, NULL binds
 * NULL), 'i' int64_t, 'I' int64_t with
 * 0 binding NULL (optional ids), 'n' NULL (no argument). 0 or ERR_IO (bad SQL
 * or types, logged with the statement). */
int db_prepare(struct db *db, struct db_stmt **out, const char *sql, const char *types, ...);
/* Bind one more value after prepare (index from 1). 0 or ERR_INVALID. */
int db_bind_text(struct db_stmt *st, int idx, const char *s);
int db_bind_int(struct db_stmt *st, int idx, int64_t v);
/* 1 for a row, 0 when done, ERR_INVALID for a constraint violation, ERR_IO. */
int db_step(struct db_stmt *st);
/* Column values of the current row; text is borrowed until the next step
 * and NULL for SQL NULL. */
const char *db_col_text(struct db_stmt *st, int col);
int64_t db_col_int(struct db_stmt *st, int col);
bool db_col_null(struct db_stmt *st, int col);
void db_finalize(struct db_stmt *st); /* NULL-safe */

/* Prepare, bind, run to completion. Rows changed (>= 0) or an error code as db_step. */
int db_exec(struct db *db, const char *sql, const char *types, ...);
/* db_exec of a write whose failure fails its whole transaction, for a
 * caller that rolls back on any error: on PostgreSQL without the savepoint
 * that otherwise leaves the transaction usable after a failed statement
 * (two round trips fewer; the scheduler's assignment under the serial
 * lock). The same as db_exec on SQLite and outside a transaction. */
int db_exec_whole(struct db *db, const char *sql, const char *types, ...);
/* The first column of the first row as an integer: 0 and *out set, ERR_NOT_FOUND, or an error. */
int db_query_int(struct db *db, int64_t *out, const char *sql, const char *types, ...);
/* The identity of the row the last INSERT created. */
int64_t db_last_id(struct db *db);
/* How the database will run sql (parameters unbound): the steps of its
 * plan joined by "; " ("SEARCH jobs USING INDEX ... (result=? AND id<?)"),
 * into buf. For tests and benchmarks that check a query is bounded; the
 * text is the dialect's own. 0 or ERR_IO. */
int db_plan(struct db *db, const char *sql, char *buf, size_t len);
/* What SQLite did for the statements that ended on db since the last
 * call (sqlite3_stmt_status, summed at db_finalize): sorts without an
 * index, steps of full table scans, virtual machine steps. Zeros on
 * PostgreSQL. For tests that count the work of a request, which must not
 * grow with the rows it does not need (test_server_sched). */
struct db_work {
	int64_t sorts, scan_steps, vm_steps;
};
void db_work_take(struct db *db, struct db_work *out);
/* The last error text of the connection (after db_rollback: the error
 * that led to it, not the rollback's). Borrowed. */
const char *db_errmsg(struct db *db);
/* Whether a call failed for want of disk space (SQLITE_FULL, ENOSPC) since
 * the last db_clear_error: the server answers 507 then. */
bool db_disk_full(struct db *db);
void db_clear_error(struct db *db);

/* Transactions. On SQLite both begins are BEGIN IMMEDIATE: one writer at
 * a time. On PostgreSQL db_begin is a plain BEGIN (READ COMMITTED): the
 * transactions of every server write at once, a row's writers in turn;
 * db_begin_serial also takes a database-wide transaction advisory lock, so
 * the changes that read several rows and then write on what they read (the
 * scheduler's assignments) run one at a time across servers.
 * docs/database.md says which caller uses which and why. 0 or ERR_IO. */
int db_begin(struct db *db);
int db_begin_serial(struct db *db);
int db_commit(struct db *db);
/* db_commit without waiting for the disk on PostgreSQL (synchronous_commit
 * off for this transaction; SQLite's WAL commits so anyway): what it wrote
 * is durable once a later durable commit of any connection flushes the
 * log, at the latest after wal_writer_delay; a crash before loses it. For
 * a short change made under the serial lock whose caller answers only
 * after a durable commit of its own (the work poll: the job token), so
 * that the lock is not held across a disk flush. */
int db_commit_unflushed(struct db *db);
void db_rollback(struct db *db);
/* In a db_begin transaction: lock the row of table (a fixed name, never
 * input) with this id until the end of the transaction (PostgreSQL's
 * SELECT ... FOR UPDATE; nothing on SQLite, whose transaction holds the
 * database). A missing row is no error. 0 or ERR_IO. */
int db_lock_row(struct db *db, const char *table, int64_t id);
/* Whether the last failed statement lost to a concurrent transaction
 * (PostgreSQL's deadlock_detected or serialization_failure): the caller
 * rolls back and may run the whole transaction again. Never on SQLite. */
bool db_conflict(struct db *db);

/* Now as UTC "YYYY-MM-DDTHH:MM:SS", the form openQA's JSON uses. */
void db_now(char out[DB_TIME_LEN]);

/* Internal: the migration list of the dialect (db_migrate.c). */
struct db_migration {
	int version;
	const char *sql;
};
extern const struct db_migration db__migrations_sqlite[];
extern const size_t db__migrations_sqlite_count;
extern const struct db_migration db__migrations_pg[];
extern const size_t db__migrations_pg_count;
/* Internal: with VIGIL_FAULT_ENOSPC set, the write-fault VFS (db_fault.c)
 * becomes SQLite's default; once per process. */
void db__fault_vfs_install(void);

#endif
