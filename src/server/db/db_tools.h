/* SPDX-License-Identifier: MIT */
/* db_tools.h - whole-database work for `vigil db`: the schema as
 * dialect-neutral text, and the copy of a SQLite database into PostgreSQL. */
#ifndef VIGIL_DB_TOOLS_H
#define VIGIL_DB_TOOLS_H

#include <stddef.h>
#include <stdio.h>

struct db;

/* The schema as sorted lines "TABLE column NAME integer|text notnull|null
 * default|nodefault", "TABLE primary COLS", "TABLE unique COLS", "TABLE
 * foreign COL TABLE ON_DELETE", "TABLE index NAME unique|plain
 * partial|whole COLS" (an expression's column is "expr"; schema_version left out), the same for both dialects when
 * their schemas agree. *out is the caller's. 0 or an error code. */
int db_schema_text(struct db *db, char **out);
/* Copy every row of every table of from (SQLite) into to (PostgreSQL, same
 * schema version, every table empty) in one transaction, ids kept, each
 * identity sequence moved past the largest id; a line per table to report
 * (NULL: none). 0, or an error code with the reason in err (nothing copied). */
int db_copy(struct db *from, struct db *to, FILE *report, char *err, size_t errlen);

#endif
