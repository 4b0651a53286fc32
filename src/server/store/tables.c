/* SPDX-License-Identifier: MIT */
/* tables.c - machines, products and test suites with their settings rows
 * (table_settings, by kind and owner id): one descriptor per table with its
 * statements instead of copied code. Owns these tables; job templates that
 * name their rows are templates.c. */
#define LOG_MODULE "tables"
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include "server/db/db.h"
#include "server/store/tables.h"
#include "server/store/jbuild.h"
#include "util/err.h"
#include "util/banned.h" /* last: after every system header */

struct table {
	struct tables_desc d;
	const char *kind;       /* table_settings.kind */
	const char *sql_select; /* id, cols...; one '?' for "id or all" twice */
	const char *sql_insert;
	const char *sql_update; /* cols..., id */
	const char *sql_delete;
};

static const struct table tables[] = {
	[TABLES_MACHINES] = {
		{ "Machines", { "name", "backend", "description", NULL }, 3 }, "machine",
		"SELECT id, name, backend, description FROM machines WHERE (? = 0 OR id = ?) ORDER BY id",
		"INSERT INTO machines (name, backend, description) VALUES (?, ?, ?)",
		"UPDATE machines SET name = ?, backend = ?, description = ? WHERE id = ?",
		"DELETE FROM machines WHERE id = ?",
	},
	[TABLES_PRODUCTS] = {
		{ "Products", { "distri", "version", "flavor", "arch", "description", NULL }, 15 }, "product",
		"SELECT id, distri, version, flavor, arch, description FROM products WHERE (? = 0 OR id = ?) ORDER BY id",
		"INSERT INTO products (distri, version, flavor, arch, description) VALUES (?, ?, ?, ?, ?)",
		"UPDATE products SET distri = ?, version = ?, flavor = ?, arch = ?, description = ? WHERE id = ?",
		"DELETE FROM products WHERE id = ?",
	},
	[TABLES_TEST_SUITES] = {
		{ "TestSuites", { "name", "description", NULL }, 1 }, "test_suite",
		"SELECT id, name, description FROM test_suites WHERE (? = 0 OR id = ?) ORDER BY id",
		"INSERT INTO test_suites (name, description) VALUES (?, ?)",
		"UPDATE test_suites SET name = ?, description = ? WHERE id = ?",
		"DELETE FROM test_suites WHERE id = ?",
	},
};

const struct tables_desc *tables_desc(enum tables_kind kind)
{
	return &tables[kind].d;
}

static size_t ncols(const struct table *t)
{
	size_t n = 0;

	while (t->d.cols[n])
		n++;
	return n;
}

static json_t *settings_list(struct db *db, const char *kind, int64_t id)
{
	struct jbuild b = JBUILD_INIT;
	json_t *a = jbuild_take(&b, json_array(), "settings");
	struct db_stmt *st;

	if (!a || db_prepare(db, &st, "SELECT key, value FROM table_settings WHERE kind = ? AND owner_id = ? ORDER BY key",
			     "ti", kind, id))
		return a;
	while (!jbuild_failed(&b) && db_step(st) == 1)
		jbuild_append(&b, a, json_pack("{s:s,s:s}", "key", db_col_text(st, 0), "value", db_col_text(st, 1)));
	db_finalize(st);
	return jbuild_done(&b, a); /* NULL: out of memory */
}

int tables_list(struct db *db, enum tables_kind kind, int64_t id, const char *const *want, json_t **out, char *msg,
		size_t msglen)
{
	const struct table *t = &tables[kind];
	size_t n = ncols(t), i;
	struct jbuild b = JBUILD_INIT;
	struct db_stmt *st;
	json_t *rows;
	int rc = 0;

	*out = NULL;
	if (db_prepare(db, &st, t->sql_select, "ii", id, id)) {
		err_set(msg, msglen, "cannot read %s", t->d.json_key);
		return ERR_IO;
	}
	rows = jbuild_take(&b, json_array(), t->d.json_key);
	while (!jbuild_failed(&b) && (rc = db_step(st)) == 1) {
		json_t *row = jbuild_take(&b, json_object(), "row");
		bool keep = true;
		if (!row)
			break;
		jbuild_set(&b, row, "id", json_integer(db_col_int(st, 0)));
		for (i = 0; i < n; i++) {
			const char *v = db_col_text(st, (int)i + 1);
			if (want[i] && (!v || strcmp(want[i], v)))
				keep = false;
			if (v && *v) /* falsy columns are omitted, as openQA */
				jbuild_set(&b, row, t->d.cols[i], json_string(v));
		}
		jbuild_set(&b, row, "settings", settings_list(db, t->kind, db_col_int(st, 0)));
		if (keep)
			jbuild_append(&b, rows, row);
		else
			json_decref(row);
	}
	db_finalize(st);
	if (jbuild_failed(&b)) {
		json_decref(rows);
		err_set(msg, msglen, "out of memory");
		return ERR_NOMEM;
	}
	if (rc < 0) {
		json_decref(rows);
		err_set(msg, msglen, "cannot read %s", t->d.json_key);
		return ERR_IO;
	}
	if (id && json_array_size(rows) == 0) {
		json_decref(rows);
		err_set(msg, msglen, "%s %lld does not exist", t->d.json_key, (long long)id);
		return ERR_NOT_FOUND;
	}
	*out = rows;
	return 0;
}

static int write_settings(struct db *db, const char *kind, int64_t id, const json_t *settings)
{
	const char *key;
	json_t *v;
	int rc = db_exec(db, "DELETE FROM table_settings WHERE kind = ? AND owner_id = ?", "ti", kind, id);

	if (rc < 0)
		return rc;
	json_object_foreach((json_t *)settings, key, v) {
		rc = db_exec(db, "INSERT INTO table_settings (kind, owner_id, key, value) VALUES (?, ?, ?, ?)", "titt",
			     kind, id, key, json_string_value(v));
		if (rc < 0)
			return rc;
	}
	return 0;
}

int tables_write(struct db *db, enum tables_kind kind, int64_t id, const char *const *vals, const json_t *settings,
		 int64_t *new_id, char *msg, size_t msglen)
{
	const struct table *t = &tables[kind];
	struct db_stmt *st = NULL;
	size_t n = ncols(t), i;
	int rc;

	for (i = 0; i < n; i++) {
		size_t max = strcmp(t->d.cols[i], "description") ? LIMIT_TABLE_VALUE : LIMIT_TABLE_TEXT;
		if (vals[i] && strlen(vals[i]) > max) {
			err_set(msg, msglen, "%s: '%s' is over %zu bytes", t->d.json_key, t->d.cols[i], max);
			return ERR_INVALID;
		}
	}
	{
		const char *key;
		json_t *v;
		json_object_foreach((json_t *)settings, key, v) {
			if (strlen(key) > LIMIT_TABLE_VALUE) {
				err_set(msg, msglen, "%s: a setting's name is over %d bytes", t->d.json_key, LIMIT_TABLE_VALUE);
				return ERR_INVALID;
			}
			if (json_string_length(v) > LIMIT_TABLE_SETTING) {
				err_set(msg, msglen, "%s: setting '%.64s' is over %u bytes", t->d.json_key, key,
					LIMIT_TABLE_SETTING);
				return ERR_INVALID;
			}
		}
	}
	if (id) {
		int64_t found;
		if (db_query_int(db, &found, t->sql_select, "ii", id, id)) {
			err_set(msg, msglen, "%s %lld does not exist", t->d.json_key, (long long)id);
			return ERR_NOT_FOUND;
		}
	}
	if (db_begin(db)) {
		err_set(msg, msglen, "cannot start a transaction");
		return ERR_IO;
	}
	rc = db_prepare(db, &st, id ? t->sql_update : t->sql_insert, NULL);
	for (i = 0; !rc && i < n; i++)
		rc = db_bind_text(st, (int)i + 1, vals[i] ? vals[i] : (t->d.required & (1u << i)) ? "" : NULL);
	if (!rc && id)
		rc = db_bind_int(st, (int)n + 1, id);
	if (!rc)
		rc = db_step(st);
	db_finalize(st);
	if (rc == 0 && !id)
		id = db_last_id(db);
	if (rc == 0)
		rc = write_settings(db, t->kind, id, settings);
	if (rc < 0) {
		db_rollback(db);
		if (rc == ERR_INVALID) {
			err_set(msg, msglen, "%s: an entry with these values already exists", t->d.json_key);
			return ERR_INVALID;
		}
		err_set(msg, msglen, "cannot write %s: %s", t->d.json_key, db_errmsg(db));
		return ERR_IO;
	}
	if (db_commit(db)) {
		err_set(msg, msglen, "cannot commit");
		return ERR_IO;
	}
	*new_id = id;
	return 0;
}

int tables_delete(struct db *db, enum tables_kind kind, int64_t id, char *msg, size_t msglen)
{
	const struct table *t = &tables[kind];
	int rc;

	if (db_begin(db)) {
		err_set(msg, msglen, "cannot start a transaction");
		return ERR_IO;
	}
	rc = db_exec(db, t->sql_delete, "i", id);
	/* A row without settings deletes none of them: that is no error. */
	if (rc > 0 && (rc = db_exec(db, "DELETE FROM table_settings WHERE kind = ? AND owner_id = ?", "ti",
				    t->kind, id)) >= 0)
		rc = 1;
	if (rc <= 0) {
		db_rollback(db);
		if (rc == 0) {
			err_set(msg, msglen, "%s %lld does not exist", t->d.json_key, (long long)id);
			return ERR_NOT_FOUND;
		}
		err_set(msg, msglen, "cannot delete: %s", db_errmsg(db));
		return ERR_IO;
	}
	if (db_commit(db)) {
		err_set(msg, msglen, "cannot commit");
		return ERR_IO;
	}
	return 0;
}
