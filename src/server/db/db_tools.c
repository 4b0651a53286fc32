/* SPDX-License-Identifier: MIT */
/* db_tools.c - `vigil db`'s work on whole databases: the schema as
 * dialect-neutral lines (tables, columns with their mapped types, keys,
 * indexes: two databases agree when their lines do), and the copy of a
 * server's SQLite database into a new PostgreSQL one with every id kept
 * and the identity sequences moved past them. Table and column names come
 * from the source's own catalogue (never from a request) and are quoted;
 * values are always bound. */
#define LOG_MODULE "db"
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "server/db/db.h"
#include "server/db/db_tools.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/log.h"
#include "util/banned.h" /* last: after every system header */

#define DB_TOOLS_MAX_TABLES 128
#define DB_TOOLS_MAX_COLS 64

/* A buffer that remembers its first failed append. */
struct sb {
	struct buf b;
	int err;
};

static void put(struct sb *s, const char *t)
{
	int rc = buf_puts(&s->b, t);

	if (rc && !s->err)
		s->err = rc;
}

static const char *sb_str(struct sb *s)
{
	return s->err ? NULL : s->b.data ? s->b.data : "";
}

static void sb_init(struct sb *s, size_t max)
{
	buf_init(&s->b, max);
	s->err = 0;
}

static void sb_reset(struct sb *s)
{
	buf_reset(&s->b);
	s->err = 0;
}

struct names {
	char *v[DB_TOOLS_MAX_TABLES > DB_TOOLS_MAX_COLS ? DB_TOOLS_MAX_TABLES : DB_TOOLS_MAX_COLS];
	size_t n;
};

static void names_release(struct names *n)
{
	size_t i;

	for (i = 0; i < n->n; i++)
		free(n->v[i]);
	n->n = 0;
}

/* The rows' first column of sql (one text parameter or none) into out. */
static int names_query(struct db *db, struct names *out, size_t max, const char *sql, const char *arg)
{
	struct db_stmt *st;
	int rc;

	out->n = 0;
	if ((rc = arg ? db_prepare(db, &st, sql, "t", arg) : db_prepare(db, &st, sql, NULL)))
		return rc;
	while ((rc = db_step(st)) == 1) {
		if (out->n == max) {
			rc = ERR_TOO_BIG;
			break;
		}
		if (!(out->v[out->n] = strdup(db_col_text(st, 0) ? db_col_text(st, 0) : ""))) {
			rc = ERR_NOMEM;
			break;
		}
		out->n++;
	}
	db_finalize(st);
	if (rc)
		names_release(out);
	return rc;
}

static int tables(struct db *db, struct names *out)
{
	return names_query(db, out, DB_TOOLS_MAX_TABLES,
			   db_is_pg(db) ? "SELECT table_name FROM information_schema.tables WHERE table_schema ="
					  " current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name" :
					  "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE"
					  " 'sqlite_%' ORDER BY name",
			   NULL);
}

static int columns(struct db *db, const char *table, struct names *out)
{
	return names_query(db, out, DB_TOOLS_MAX_COLS,
			   db_is_pg(db) ? "SELECT column_name FROM information_schema.columns WHERE table_schema ="
					  " current_schema() AND table_name = ? ORDER BY ordinal_position" :
					  "SELECT name FROM pragma_table_info(?) ORDER BY cid",
			   table);
}

/* Lines of sql's rows (columns joined by ' ', NULL as '-'), each prefixed. */
static int lines(struct db *db, struct sb *out, const char *prefix, const char *sql, int ncols, const char *arg)
{
	struct db_stmt *st;
	int rc, i;

	if ((rc = arg ? db_prepare(db, &st, sql, "t", arg) : db_prepare(db, &st, sql, NULL)))
		return rc;
	while ((rc = db_step(st)) == 1) {
		put(out, prefix);
		for (i = 0; i < ncols; i++) {
			const char *t = db_col_text(st, i);
			put(out, " ");
			put(out, t ? t : "-");
		}
		put(out, "\n");
	}
	db_finalize(st);
	return rc;
}

/* Per table: its columns (name, integer|text, notnull, default given),
 * primary key, unique constraints, foreign keys and named indexes with
 * their uniqueness and whether partial. */
static const char *const sql_sqlite[] = {
	"SELECT name, CASE WHEN upper(type) = 'INTEGER' THEN 'integer' ELSE lower(type) END,"
	" CASE WHEN \"notnull\" OR pk THEN 'notnull' ELSE 'null' END,"
	/* A rowid alias (PostgreSQL's identity) counts as a default. */
	" CASE WHEN dflt_value IS NULL AND NOT (pk AND upper(type) = 'INTEGER' AND name = 'id') THEN 'nodefault'"
	" ELSE 'default' END FROM pragma_table_info(?) ORDER BY name",
	"SELECT group_concat(name, ',') FROM (SELECT name FROM pragma_table_info(?1) WHERE pk > 0 ORDER BY pk)"
	" HAVING COUNT(*) > 0",
	"SELECT (SELECT group_concat(name, ',') FROM (SELECT name FROM pragma_index_info(l.name) ORDER BY seqno))"
	" FROM pragma_index_list(?1) l WHERE l.origin = 'u' ORDER BY 1",
	"SELECT \"from\", \"table\", lower(on_delete) FROM pragma_foreign_key_list(?1) ORDER BY 1",
	"SELECT l.name, CASE WHEN l.\"unique\" THEN 'unique' ELSE 'plain' END,"
	" CASE WHEN l.partial THEN 'partial' ELSE 'whole' END,"
	" (SELECT group_concat(COALESCE(name, 'expr'), ',') FROM (SELECT name FROM pragma_index_info(l.name) ORDER BY seqno))"
	" FROM pragma_index_list(?1) l WHERE l.origin = 'c' ORDER BY 1",
};

static const char *const sql_pg[] = {
	"SELECT column_name, CASE WHEN data_type IN ('bigint', 'integer') THEN 'integer' ELSE data_type END,"
	" CASE WHEN is_nullable = 'NO' THEN 'notnull' ELSE 'null' END,"
	" CASE WHEN column_default IS NULL AND is_identity = 'NO' THEN 'nodefault' ELSE 'default' END"
	" FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = ?"
	" ORDER BY column_name",
	"SELECT string_agg(a.attname, ',' ORDER BY k.i) FROM pg_constraint c"
	" CROSS JOIN LATERAL unnest(c.conkey) WITH ORDINALITY AS k(n, i)"
	" JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.n"
	" WHERE c.conrelid = to_regclass(?1) AND c.contype = 'p' GROUP BY c.oid",
	"SELECT string_agg(a.attname, ',' ORDER BY k.i) AS cols FROM pg_constraint c"
	" CROSS JOIN LATERAL unnest(c.conkey) WITH ORDINALITY AS k(n, i)"
	" JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.n"
	" WHERE c.conrelid = to_regclass(?1) AND c.contype = 'u' GROUP BY c.oid ORDER BY 1",
	"SELECT a.attname, f.relname, CASE c.confdeltype WHEN 'c' THEN 'cascade' WHEN 'n' THEN 'set null'"
	" WHEN 'd' THEN 'set default' WHEN 'r' THEN 'restrict' ELSE 'no action' END"
	" FROM pg_constraint c JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = c.conkey[1]"
	" JOIN pg_class f ON f.oid = c.confrelid WHERE c.conrelid = to_regclass(?1) AND c.contype = 'f' ORDER BY 1",
	"SELECT i.relname, CASE WHEN x.indisunique THEN 'unique' ELSE 'plain' END,"
	" CASE WHEN x.indpred IS NOT NULL THEN 'partial' ELSE 'whole' END,"
	" (SELECT string_agg(CASE WHEN k.n = 0 THEN 'expr' ELSE a.attname END, ',' ORDER BY k.i)"
	" FROM unnest(x.indkey::int2[]) WITH ORDINALITY AS k(n, i)"
	" LEFT JOIN pg_attribute a ON a.attrelid = x.indrelid AND a.attnum = k.n)"
	" FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid"
	" WHERE x.indrelid = to_regclass(?1) AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = x.indexrelid)"
	" ORDER BY 1",
};

int db_schema_text(struct db *db, char **out)
{
	static const char *const what[] = { "column", "primary", "unique", "foreign", "index" };
	static const int ncols[] = { 4, 1, 1, 3, 4 };
	const char *const *q = db_is_pg(db) ? sql_pg : sql_sqlite;
	struct names t = { .n = 0 };
	struct sb b;
	size_t i, k;
	int rc;

	*out = NULL;
	sb_init(&b, 1 << 20);
	if ((rc = tables(db, &t)))
		goto out;
	for (i = 0; i < t.n && !rc; i++) {
		char prefix[256];
		if (!strcmp(t.v[i], "schema_version"))
			continue;
		for (k = 0; k < sizeof(what) / sizeof(what[0]) && !rc; k++) {
			snprintf(prefix, sizeof(prefix), "%s %s", t.v[i], what[k]);
			rc = lines(db, &b, prefix, q[k], ncols[k], t.v[i]);
		}
	}
	if (!rc && b.err)
		rc = b.err;
	if (!rc && !(*out = buf_steal(&b.b)))
		rc = ERR_NOMEM;
out:
	buf_release(&b.b);
	names_release(&t);
	return rc;
}

/* "name" with quotes doubled, into out. */
static void quote(struct sb *out, const char *name)
{
	put(out, "\"");
	for (; *name; name++) {
		if (*name == '"')
			put(out, "\"");
		char c[2] = { *name, '\0' };
		put(out, c);
	}
	put(out, "\"");
}

static int copy_table(struct db *from, struct db *to, const char *table, int64_t *rows, char *err, size_t errlen)
{
	struct names cols = { .n = 0 };
	struct sb sel, ins;
	struct db_stmt *st = NULL, *w = NULL;
	size_t i;
	int rc;

	*rows = 0;
	sb_init(&sel, 1 << 16);
	sb_init(&ins, 1 << 16);
	if ((rc = columns(from, table, &cols)) || !cols.n) {
		snprintf(err, errlen, "cannot read the columns of table %s", table);
		rc = rc ? rc : ERR_INVALID;
		goto out;
	}
	put(&sel, "SELECT ");
	put(&ins, "INSERT INTO ");
	quote(&ins, table);
	put(&ins, " (");
	for (i = 0; i < cols.n; i++) {
		put(&sel, i ? ", " : "");
		quote(&sel, cols.v[i]);
		put(&ins, i ? ", " : "");
		quote(&ins, cols.v[i]);
	}
	put(&sel, " FROM ");
	quote(&sel, table);
	put(&ins, ") VALUES (");
	for (i = 0; i < cols.n; i++)
		put(&ins, i ? ", ?" : "?");
	put(&ins, ")");
	if (!sb_str(&sel) || !sb_str(&ins)) {
		rc = ERR_NOMEM;
		goto out;
	}
	if ((rc = db_prepare(from, &st, sb_str(&sel), NULL))) {
		snprintf(err, errlen, "cannot read table %s: %s", table, db_errmsg(from));
		goto out;
	}
	while ((rc = db_step(st)) == 1) {
		if ((rc = db_prepare(to, &w, sb_str(&ins), NULL)))
			break;
		for (i = 0; i < cols.n && !rc; i++)
			rc = db_bind_text(w, (int)i + 1, db_col_text(st, (int)i));
		while (!rc && (rc = db_step(w)) == 1)
			;
		db_finalize(w);
		if (rc)
			break;
		(*rows)++;
	}
	if (rc)
		snprintf(err, errlen, "cannot copy row %lld of table %s: %s", (long long)*rows + 1, table,
			 db_errmsg(to));
out:
	db_finalize(st);
	buf_release(&sel.b);
	buf_release(&ins.b);
	names_release(&cols);
	return rc;
}

int db_copy(struct db *from, struct db *to, FILE *report, char *err, size_t errlen)
{
	struct names t = { .n = 0 }, dst = { .n = 0 };
	struct sb q;
	size_t i, k;
	int rc;

	sb_init(&q, 1 << 12);
	if (db_is_pg(from) || !db_is_pg(to)) {
		snprintf(err, errlen, "copies from a SQLite database to a PostgreSQL one");
		rc = ERR_INVALID;
		goto out;
	}
	if (db_schema_version(from) != db_schema_version(to)) {
		snprintf(err, errlen, "schema versions differ: %d in the source, %d in the destination",
			 db_schema_version(from), db_schema_version(to));
		rc = ERR_INVALID;
		goto out;
	}
	if ((rc = tables(from, &t)) || (rc = tables(to, &dst))) {
		snprintf(err, errlen, "cannot list the tables: %s", db_errmsg(rc && !t.n ? from : to));
		goto out;
	}
	/* Every table must be in the destination and empty: a copy never merges. */
	for (i = 0; i < t.n; i++) {
		int64_t n = 0;
		bool found = false;
		if (!strcmp(t.v[i], "schema_version"))
			continue;
		for (k = 0; k < dst.n && !found; k++)
			found = !strcmp(dst.v[k], t.v[i]);
		if (!found) {
			snprintf(err, errlen, "table %s is missing from the destination's schema", t.v[i]);
			rc = ERR_INVALID;
			goto out;
		}
		sb_reset(&q);
		put(&q, "SELECT COUNT(*) FROM ");
		quote(&q, t.v[i]);
		if (!sb_str(&q) || (rc = db_query_int(to, &n, sb_str(&q), NULL))) {
			snprintf(err, errlen, "cannot count table %s in the destination", t.v[i]);
			rc = rc ? rc : ERR_NOMEM;
			goto out;
		}
		if (n) {
			snprintf(err, errlen, "the destination is not empty (table %s has %lld rows): copy into a new database",
				 t.v[i], (long long)n);
			rc = ERR_INVALID;
			goto out;
		}
	}
	if ((rc = db_begin_serial(to)) || (rc = db_exec(to, "SET CONSTRAINTS ALL DEFERRED", NULL)) < 0) {
		snprintf(err, errlen, "cannot start the copy: %s", db_errmsg(to));
		goto out;
	}
	for (i = 0; i < t.n; i++) {
		int64_t rows, ident = 0;
		if (!strcmp(t.v[i], "schema_version"))
			continue;
		if ((rc = copy_table(from, to, t.v[i], &rows, err, errlen)))
			goto rollback;
		/* An identity column's sequence goes past the ids copied. */
		if ((rc = db_query_int(to, &ident, "SELECT COUNT(*) FROM information_schema.columns WHERE table_schema ="
					" current_schema() AND table_name = ? AND column_name = 'id' AND is_identity = 'YES'",
					"t", t.v[i]))) {
			snprintf(err, errlen, "cannot read the columns of table %s: %s", t.v[i], db_errmsg(to));
			goto rollback;
		}
		if (report)
			fprintf(report, "%-24s %lld rows\n", t.v[i], (long long)rows);
		if (!ident)
			continue;
		sb_reset(&q);
		put(&q, "SELECT setval(s, COALESCE((SELECT MAX(id) FROM ");
		quote(&q, t.v[i]);
		put(&q, "), 0) + 1, false) FROM (SELECT pg_get_serial_sequence(?, 'id') AS s) x"
				   " WHERE s IS NOT NULL");
		if (!sb_str(&q) || (rc = db_exec(to, sb_str(&q), "t", t.v[i])) < 0) {
			snprintf(err, errlen, "cannot advance the ids of table %s: %s", t.v[i], db_errmsg(to));
			rc = rc < 0 ? rc : ERR_NOMEM;
			goto rollback;
		}
	}
	if ((rc = db_commit(to))) {
		snprintf(err, errlen, "cannot commit the copy: %s", db_errmsg(to));
		goto rollback;
	}
	rc = 0;
	goto out;
rollback:
	db_rollback(to);
out:
	buf_release(&q.b);
	names_release(&t);
	names_release(&dst);
	return rc;
}
