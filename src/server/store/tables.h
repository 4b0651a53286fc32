/* SPDX-License-Identifier: MIT */
/* tables.h - the admin tables as openQA's Table.pm keeps them: machines,
 * products and test suites, each row with its settings (table_settings).
 * One descriptor per table; reads as openQA's JSON, writes in one
 * transaction. Errors come with the text to answer in msg. */
#ifndef VIGIL_TABLES_H
#define VIGIL_TABLES_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

struct db;

#define TABLES_MAX_COLS 5

enum tables_kind {
	TABLES_MACHINES,
	TABLES_PRODUCTS,
	TABLES_TEST_SUITES,
};

/* What a caller needs to read a row's fields from a request. */
struct tables_desc {
	const char *json_key;                /* "Machines" */
	const char *cols[TABLES_MAX_COLS + 1]; /* column names, NULL-ended */
	unsigned required;                   /* bit i: cols[i] must be given, not empty */
};

/* The descriptor of a table. Borrowed, static. */
const struct tables_desc *tables_desc(enum tables_kind kind);

/* The rows (one when id > 0, else all) whose columns equal want[i] where
 * want[i] is not NULL, with their settings, as openQA's array. 0 and *out
 * (new array); ERR_NOT_FOUND (id > 0 and no such row); ERR_IO; the text in msg. */
int tables_list(struct db *db, enum tables_kind kind, int64_t id, const char *const *want, json_t **out, char *msg,
		size_t msglen);

/* Bounds of what a row holds (bytes). */
#define LIMIT_TABLE_VALUE   1024          /* a column (name, backend, distri, ...) and a setting's name */
#define LIMIT_TABLE_TEXT    (64u << 10)   /* the description column */
#define LIMIT_TABLE_SETTING (1u << 20)    /* a setting's value (as one job setting) */

/* Insert (id 0) or replace (id > 0) a row from vals[i] (NULL: empty for a
 * required column, else NULL) and replace its settings by settings (an
 * object of strings), all in one transaction. 0 and *new_id (the row's id);
 * ERR_NOT_FOUND (no row id); ERR_INVALID (an entry with these values
 * exists, or a value over its LIMIT_TABLE_* bound, named in msg); ERR_IO;
 * the text in msg. */
int tables_write(struct db *db, enum tables_kind kind, int64_t id, const char *const *vals, const json_t *settings,
		 int64_t *new_id, char *msg, size_t msglen);

/* Delete row id with its settings in one transaction. 0, ERR_NOT_FOUND or
 * ERR_IO, the text in msg. */
int tables_delete(struct db *db, enum tables_kind kind, int64_t id, char *msg, size_t msglen);

#endif
