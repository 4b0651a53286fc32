/* SPDX-License-Identifier: MIT */
/* jbuild.c - the checked insertions of jbuild.h: the first one that fails
 * is recorded (and logged once); api_json_built (http/params.c) turns a
 * recorded failure into the 503 of the out-of-memory policy. And a
 * query's rows as a list (jbuild_rows): the SQL stays in the domain
 * module that asks. */
#define LOG_MODULE "jbuild"
#include <stdio.h>
#include "server/db/db.h"
#include "server/store/jbuild.h"
#include "util/err.h"
#include "util/log.h"
#include "util/banned.h" /* last: after every system header */

static void failed(struct jbuild *b, const char *what)
{
	if (b->failed)
		return;
	b->failed = true;
	snprintf(b->what, sizeof(b->what), "%s", what ? what : "?");
	log_warn("JSON left incomplete at '%s': out of memory", b->what);
}

void jbuild_set(struct jbuild *b, json_t *o, const char *key, json_t *v)
{
	if (!v || json_object_set_new(o, key, v))
		failed(b, key);
}

void jbuild_set_ref(struct jbuild *b, json_t *o, const char *key, json_t *v)
{
	if (!v || json_object_set(o, key, v))
		failed(b, key);
}

void jbuild_append(struct jbuild *b, json_t *a, json_t *v)
{
	if (!v || json_array_append_new(a, v))
		failed(b, "[]");
}

json_t *jbuild_take(struct jbuild *b, json_t *v, const char *what)
{
	if (!v)
		failed(b, what);
	return v;
}

json_t *jbuild_done(struct jbuild *b, json_t *j)
{
	if (b->failed || !j) {
		if (!j)
			failed(b, "?");
		json_decref(j);
		return NULL;
	}
	return j;
}

int jbuild_rows(struct db_stmt *st, jbuild_row_fn *row, json_t **out)
{
	json_t *a = json_array();
	int rc = a ? 0 : ERR_NOMEM;

	*out = NULL;
	while (!rc && (rc = db_step(st)) == 1)
		rc = json_array_append_new(a, row(st)) ? ERR_NOMEM : 0; /* a NULL row fails too */
	db_finalize(st);
	if (rc) {
		json_decref(a);
		return rc == ERR_NOMEM ? rc : ERR_IO;
	}
	*out = a;
	return 0;
}
