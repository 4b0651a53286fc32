/* SPDX-License-Identifier: MIT */
/* jbuild.h - building a JSON answer (or a handler's JSON from a
 * request) without losing a part silently: jansson's json_object_set_new
 * and json_array_append_new fail when memory runs out (or when the value
 * given is NULL because making it failed), and a handler that ignored that
 * would answer 200 with a field missing. These calls record the first
 * failure in a struct jbuild; the handler then answers 503 (api_nomem,
 * the out-of-memory policy of docs/hardening.md) instead of the
 * incomplete JSON, or refuses to store what it built. Domain modules
 * (jobs.c) use it too for what they build for an answer, and jbuild_rows
 * for a query's rows listed whole. */
#ifndef VIGIL_JBUILD_H
#define VIGIL_JBUILD_H

#include <jansson.h>
#include <stdbool.h>

struct jbuild {
	bool failed;
	char what[64]; /* the key (or "[]" for an array element) of the first failure */
};

#define JBUILD_INIT { false, "" }

/* json_object_set_new(o, key, v): v (NULL counts as a failure) is owned by o or freed. */
void jbuild_set(struct jbuild *b, json_t *o, const char *key, json_t *v);
/* json_object_set(o, key, v): v borrowed (NULL counts as a failure). */
void jbuild_set_ref(struct jbuild *b, json_t *o, const char *key, json_t *v);
/* json_array_append_new(a, v): v (NULL counts as a failure) is owned by a or freed. */
void jbuild_append(struct jbuild *b, json_t *a, json_t *v);
/* Whatever made v: NULL records a failure (what names it). v. */
json_t *jbuild_take(struct jbuild *b, json_t *v, const char *what);
static inline bool jbuild_failed(const struct jbuild *b)
{
	return b->failed;
}
/* What a domain module returns from what it built: j, or NULL (j freed)
 * when b recorded a failure; the caller takes NULL as out of memory. */
json_t *jbuild_done(struct jbuild *b, json_t *j);

struct db_stmt;
/* Makes one element of a list from the row st is on (NULL: out of memory). */
typedef json_t *jbuild_row_fn(struct db_stmt *st);
/* The rows of st, a prepared query of the domain module that wrote it, as
 * a JSON array, row() making each element: st is stepped to its end and
 * finalized. 0 and *out (new array, every row in it), or ERR_NOMEM or
 * ERR_IO (a failed step) with *out NULL: never a list with a row left out. */
int jbuild_rows(struct db_stmt *st, jbuild_row_fn *row, json_t **out);

#endif
