/* SPDX-License-Identifier: MIT */
/* db_int.h - inside the database module: the connection and statement
 * structs shared by the SQLite side (db.c) and the PostgreSQL side
 * (db_pg.c), and the PostgreSQL functions db.c dispatches to. Nothing
 * outside src/server/db*.c includes it. */
#ifndef VIGIL_DB_INT_H
#define VIGIL_DB_INT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sqlite3;
struct sqlite3_stmt;
struct dbpg;

struct db_stmt {
	struct sqlite3_stmt *s; /* SQLite's statement; unused for PostgreSQL */
	struct db *db;
	bool cached; /* lives in db->cache: db_finalize resets it */
	bool in_use;
};

/* true when target names a PostgreSQL database (postgresql:// or postgres://). */
bool db__is_pg(const char *target);

int db__pg_open(struct dbpg **out, const char *url, char *err, size_t errlen);
void db__pg_free(struct dbpg *pg);
int db__pg_prepare(struct db *db, struct dbpg *pg, struct db_stmt **out, const char *sql, const char *types, va_list ap);
int db__pg_bind_text(struct db_stmt *st, int idx, const char *s);
int db__pg_step(struct db_stmt *st);
const char *db__pg_col_text(struct db_stmt *st, int col);
bool db__pg_col_null(struct db_stmt *st, int col);
void db__pg_finalize(struct db_stmt *st);
int64_t db__pg_stmt_changes(struct db_stmt *st);
/* st runs without a savepoint in a transaction (db_exec_whole). */
void db__pg_stmt_whole(struct db_stmt *st);
int db__pg_change_stamp(struct dbpg *pg, int64_t stamp[2]);
int64_t db__pg_last_id(struct dbpg *pg);
int db__pg_plan(struct dbpg *pg, const char *sql, char *buf, size_t len);
const char *db__pg_errmsg(struct dbpg *pg);
int db__pg_begin(struct dbpg *pg, bool serial);
/* The last failed statement lost to another transaction (40001, 40P01). */
bool db__pg_conflict(struct dbpg *pg);
int db__pg_commit(struct dbpg *pg);
void db__pg_rollback(struct dbpg *pg);
int db__pg_schema_version(struct dbpg *pg);
/* Run sql (several statements allowed, no parameters). 0 or ERR_IO. */
int db__pg_exec_plain(struct dbpg *pg, const char *sql);

#endif
