/* SPDX-License-Identifier: MIT */
/* jobs_hash.c - jobs as openQA's JSON (its to_hash shape), read for a
 * batch of jobs at once in a few queries and written as JSON text
 * straight from the rows (util/jsonw.c): the job list; or, from the same
 * rows, as jansson objects (jobs_to_json_many: the pages' lists, and one
 * job, jobs_to_json, a batch of one), no text parsed back. */
#define LOG_MODULE "jobs"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "server/store/assets.h"
#include "server/db/db.h"
#include "server/store/jobs.h"
#include "server/store/jobs_int.h"
#include "util/array.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/jsonw.h"
#include "util/str.h"
#include "util/banned.h" /* last: after every system header */

static const char *const dep_names[] = { "", "Chained", "Parallel", "Directly chained" };

static json_t *hash_deps_new(void)
{
	return json_pack("{s:[],s:[],s:[]}", "Chained", "Directly chained", "Parallel");
}

/* 0 or ERR_NOMEM */
static int hash_deps_add(json_t *d, int64_t other, int64_t type)
{
	if (type >= 1 && type <= 3 && json_array_append_new(json_object_get(d, dep_names[type]), json_integer(other)))
		return ERR_NOMEM;
	return 0;
}

/* What a job's hash holds besides its jobs row, read for a batch of jobs
 * at once (jobs_to_json is a batch of one). */
/* One setting of a batch: offsets of its key and value in the batch's
 * text (rows are added while the text grows). */
struct setting {
	size_t key, value;
};

/* The settings read for a batch of jobs, in job_settings order: a job's
 * rows are next to each other (the query orders them by job). */
struct batch_settings {
	struct buf text; /* NUL-terminated keys and values */
	struct setting *v;
	size_t n, cap;
};

struct job_parts {
	size_t first, nsettings;   /* its job_settings rows in the batch's */
	json_t *parents, *children; /* by dependency type; NULL: none */
	int64_t origin;            /* the job it is a clone of; 0: none */
	int parents_ok;
};

static void parts_init(struct job_parts *p)
{
	p->first = p->nsettings = 0;
	p->parents = p->children = NULL;
	p->origin = 0;
	p->parents_ok = 1;
}

static void parts_release(struct job_parts *p)
{
	json_decref(p->parents);
	json_decref(p->children);
	memset(p, 0, sizeof(*p));
}

static int text_add(struct buf *t, const char *s, size_t *off)
{
	*off = t->len;
	return buf_append(t, s ? s : "", (s ? strlen(s) : 0) + 1);
}

/* One job_settings row of p's job: a repeated key (one row per
 * WORKER_CLASS) is joined with ',' as openQA does. */
static int batch_setting_add(struct batch_settings *bs, struct job_parts *p, const char *k, const char *v)
{
	size_t i;
	int rc;

	if (!p->nsettings)
		p->first = bs->n;
	for (i = p->first; i < p->first + p->nsettings; i++) {
		if (strcmp(bs->text.data + bs->v[i].key, k))
			continue;
		char *was = str_dup(bs->text.data + bs->v[i].value); /* the text may move as it grows */
		if (!was)
			return ERR_NOMEM;
		bs->v[i].value = bs->text.len;
		rc = buf_puts(&bs->text, was);
		free(was);
		if (!rc)
			rc = buf_append(&bs->text, ",", 1);
		return rc ? rc : buf_append(&bs->text, v, strlen(v) + 1);
	}
	if (array_grow(&bs->v, &bs->cap, bs->n, sizeof(*bs->v), 256))
		return ERR_NOMEM;
	if ((rc = text_add(&bs->text, k, &bs->v[bs->n].key)) || (rc = text_add(&bs->text, v, &bs->v[bs->n].value)))
		return rc;
	bs->n++;
	p->nsettings++;
	return 0;
}

/* 0 or ERR_NOMEM */
static int parts_dep(json_t **d, int64_t other, int64_t type)
{
	if (!*d && !(*d = hash_deps_new()))
		return ERR_NOMEM;
	return hash_deps_add(*d, other, type);
}

static size_t deps_count(const json_t *d)
{
	size_t i, n = 0;

	for (i = 1; i < sizeof(dep_names) / sizeof(dep_names[0]); i++)
		n += json_array_size(json_object_get(d, dep_names[i]));
	return n;
}

#define JOB_ROW_SQL                                                                                          \
	"SELECT j.id, j.priority, j.state, j.result, j.reason, j.clone_id, j.blocked_by_id, j.group_id,"     \
	" g.name, j.assigned_worker_id, j.test, j.distri, j.version, j.flavor, j.arch, j.build, j.machine,"  \
	" j.t_started, j.t_finished, j.needs_review"                                                          \
	" FROM jobs j LEFT JOIN job_groups g ON g.id = j.group_id WHERE j.id "

/* Where a hash is written: JSON text appended to b (o NULL), or the
 * members of the jansson object o (the pages' form of the same rows, no
 * text parsed back). rc keeps the first error. */
struct hw {
	struct buf *b;
	json_t *o;
	int rc;
};

/* A member of a fixed name: its text ",\"key\":" written at once, and the
 * key for a jansson object (two arguments). */
#define MEMBER(key) ",\"" key "\":", key

/* s as a jansson string; invalid UTF-8 replaced as jsonw_str replaces it
 * (vigil's own text of one string parsed: the rare path). NULL: no memory. */
static json_t *hw_string(const char *s)
{
	json_t *v = json_string(s), *a;
	struct buf t;

	if (v || !s)
		return v;
	buf_init(&t, strlen(s) * 3 + 16);
	if (buf_append(&t, "[", 1) || jsonw_str(&t, s) || buf_append(&t, "]", 1)) {
		buf_release(&t);
		return NULL;
	}
	a = json_loadb(t.data, t.len, 0, NULL);
	buf_release(&t);
	v = json_incref(json_array_get(a, 0));
	json_decref(a);
	return v;
}

/* o[key] = v (taken; NULL: out of memory) */
static void hw_set(struct hw *h, json_t *o, const char *key, json_t *v)
{
	if (!h->rc && (!v || json_object_set_new(o, key, v)))
		h->rc = ERR_NOMEM;
	else if (h->rc)
		json_decref(v);
}

/* Writers of the hash's members: each appends ",\"key\":value" (first:
 * without the comma) or sets the member. */
static void w_key(struct buf *b, int *rc, const char *key, bool first)
{
	if (!*rc && !first)
		*rc = buf_append(b, ",", 1);
	if (!*rc)
		*rc = jsonw_key(b, key);
}

static void w_str(struct hw *h, const char *member, const char *key, const char *v)
{
	if (h->o) {
		hw_set(h, h->o, key, v ? hw_string(v) : json_null());
		return;
	}
	if (!h->rc)
		h->rc = buf_puts(h->b, member);
	if (!h->rc)
		h->rc = jsonw_str(h->b, v);
}

static void w_int(struct hw *h, const char *member, const char *key, int64_t v)
{
	if (h->o) {
		hw_set(h, h->o, key, json_integer(v));
		return;
	}
	if (!h->rc)
		h->rc = buf_puts(h->b, member);
	if (!h->rc)
		h->rc = jsonw_int(h->b, v);
}

static void w_col_int(struct hw *h, const char *member, const char *key, struct db_stmt *st, int c)
{
	if (db_col_null(st, c))
		w_str(h, member, key, NULL);
	else
		w_int(h, member, key, db_col_int(st, c));
}

/* {"Chained":[...],"Directly chained":[...],"Parallel":[...]} of d (NULL:
 * all empty), in that order as openQA writes it. */
static void w_deps(struct hw *h, const char *member, const char *key, const json_t *d)
{
	static const int order[] = { 1, 3, 2 };
	struct buf *b = h->b;
	int *rc = &h->rc;
	size_t i, k;

	if (h->o) { /* d is built in that order (hash_deps_new) */
		hw_set(h, h->o, key, d ? json_deep_copy(d) : hash_deps_new());
		return;
	}
	if (!*rc)
		*rc = buf_puts(b, member);
	if (!d) { /* most jobs */
		if (!*rc)
			*rc = buf_puts(b, "{\"Chained\":[],\"Directly chained\":[],\"Parallel\":[]}");
		return;
	}
	for (i = 0; i < 3 && !*rc; i++) {
		const json_t *a = json_object_get(d, dep_names[order[i]]);
		*rc = buf_append(b, i ? "]," : "{", 1 + (i > 0));
		if (!*rc)
			*rc = jsonw_key(b, dep_names[order[i]]);
		if (!*rc)
			*rc = buf_append(b, "[", 1);
		for (k = 0; k < json_array_size(a) && !*rc; k++) {
			if (k)
				*rc = buf_append(b, ",", 1);
			if (!*rc)
				*rc = jsonw_int(b, json_integer_value(json_array_get(a, k)));
		}
	}
	if (!*rc)
		*rc = buf_append(b, "]}", 2);
}

/* A job's settings as its hash lists them: its rows, then the columns and
 * NAME (replacing a row of that key in its place, else added at the end). */
struct job_settings_view {
	struct { const char *key, *value; } *v;
	size_t n;
};

static const char *view_get(const void *ctx, const char *key)
{
	const struct job_settings_view *w = ctx;
	size_t i;

	for (i = 0; i < w->n; i++)
		if (!strcmp(w->v[i].key, key))
			return *w->v[i].value ? w->v[i].value : NULL;
	return NULL;
}

static void view_set(struct job_settings_view *w, const char *key, const char *value)
{
	size_t i;

	for (i = 0; i < w->n && strcmp(w->v[i].key, key); i++)
		;
	w->v[i].key = key;
	w->v[i].value = value;
	if (i == w->n)
		w->n++;
}

/* "assets": the files the settings name, by type in the order of their
 * first setting, as openQA's parse_assets_from_settings. */
struct asset_ref {
	const char *type, *file;
};

static void w_assets(struct hw *h, const struct job_settings_view *w)
{
	struct asset_ref stack[64], *a = stack;
	struct buf *b = h->b;
	int *rc = &h->rc;
	json_t *obj = NULL, *files = NULL;
	size_t n = 0, i, k;
	bool first = true;

	if (w->n > sizeof(stack) / sizeof(stack[0]) && !(a = malloc(w->n * sizeof(*a)))) {
		*rc = ERR_NOMEM;
		return;
	}
	for (i = 0; i < w->n; i++) {
		const char *s = w->v[i].value, *type;
		if (!*s || strchr(s, '/') || !(type = asset_type_of_setting(w->v[i].key)))
			continue;
		a[n].type = type;
		a[n++].file = s;
	}
	if (h->o) {
		obj = json_object();
		hw_set(h, h->o, "assets", json_incref(obj));
	} else if (!*rc) {
		*rc = buf_puts(b, ",\"assets\":{");
	}
	for (i = 0; i < n && !*rc; i++) {
		bool seen = false;
		for (k = 0; k < i && !seen; k++)
			seen = !strcmp(a[k].type, a[i].type);
		if (seen)
			continue; /* listed with the first of its type */
		if (obj) {
			files = json_array();
			hw_set(h, obj, a[i].type, json_incref(files));
		} else {
			w_key(b, rc, a[i].type, first);
		}
		first = false;
		for (k = i; k < n; k++) {
			if (strcmp(a[k].type, a[i].type))
				continue;
			if (obj) {
				json_t *f = hw_string(a[k].file);
				if (!*rc && (!f || json_array_append_new(files, f)))
					*rc = ERR_NOMEM;
				continue;
			}
			if (!*rc)
				*rc = buf_append(b, k == i ? "[" : ",", 1);
			if (!*rc)
				*rc = jsonw_str(b, a[k].file);
		}
		json_decref(files);
		files = NULL;
		if (!obj && !*rc)
			*rc = buf_append(b, "]", 1);
	}
	if (!obj && !*rc)
		*rc = buf_append(b, "}", 1);
	json_decref(obj);
	if (a != stack)
		free(a);
}

static void w_settings(struct hw *h, const struct job_settings_view *w)
{
	json_t *obj = NULL;
	size_t i;

	if (h->o) {
		obj = json_object();
		hw_set(h, h->o, "settings", json_incref(obj));
		for (i = 0; i < w->n && !h->rc; i++)
			hw_set(h, obj, w->v[i].key, hw_string(w->v[i].value));
		json_decref(obj);
		return;
	}
	if (!h->rc)
		h->rc = buf_puts(h->b, ",\"settings\":{");
	for (i = 0; i < w->n; i++) {
		w_key(h->b, &h->rc, w->v[i].key, i == 0);
		if (!h->rc)
			h->rc = jsonw_str(h->b, w->v[i].value);
	}
	if (!h->rc)
		h->rc = buf_append(h->b, "}", 1);
}

/* The hash of the job in row st (JOB_ROW_SQL) with its parts written to
 * h (text or jansson), its members in openQA's order; extra (JSON members,
 * or NULL; text only) before the closing brace. 0, ERR_NOMEM or
 * ERR_TOO_BIG. */
static int job_write(struct hw *h, struct db_stmt *st, const struct batch_settings *bs, struct job_parts *p,
		     bool details, const char *extra)
{
	static const char *const cols[] = { "TEST", "DISTRI", "VERSION", "FLAVOR", "ARCH", "BUILD", "MACHINE" };
	int64_t id = db_col_int(st, 0);
	struct job_settings_view w;
	char *name, *fullname = NULL;
	const char *reason = db_col_text(st, 4);
	size_t i, cap = p->nsettings + sizeof(cols) / sizeof(cols[0]) + 1;
	struct buf *b = h->b;

	w.n = 0;
	if (!(w.v = malloc(cap * sizeof(*w.v))))
		return ERR_NOMEM;
	for (i = 0; i < p->nsettings; i++) {
		w.v[i].key = bs->text.data + bs->v[p->first + i].key;
		w.v[i].value = bs->text.data + bs->v[p->first + i].value;
	}
	w.n = p->nsettings;
	/* The settings: the job_settings rows, then the non-empty columns. */
	for (i = 0; i < sizeof(cols) / sizeof(cols[0]); i++) {
		const char *v = db_col_text(st, 10 + (int)i);
		if (v && *v)
			view_set(&w, cols[i], v);
	}
	if (!(name = jobs__name_of(view_get, &w))) {
		free(w.v);
		return ERR_NOMEM;
	}
	if (h->o)
		w_int(h, "", "id", id);
	else if (!(h->rc = buf_puts(b, "{\"id\":")))
		h->rc = jsonw_int(b, id);
	w_str(h, MEMBER("name"), name);
	w_int(h, MEMBER("priority"), db_col_int(st, 1));
	w_str(h, MEMBER("state"), db_col_text(st, 2));
	w_str(h, MEMBER("result"), db_col_text(st, 3));
	w_col_int(h, MEMBER("clone_id"), st, 5);
	w_str(h, MEMBER("t_started"), db_col_text(st, 17));
	w_str(h, MEMBER("t_finished"), db_col_text(st, 18));
	w_col_int(h, MEMBER("group_id"), st, 7);
	w_col_int(h, MEMBER("blocked_by_id"), st, 6);
	if (db_col_text(st, 8))
		w_str(h, MEMBER("group"), db_col_text(st, 8));
	if (!db_col_null(st, 9))
		w_int(h, MEMBER("assigned_worker_id"), db_col_int(st, 9));
	if (reason && *reason)
		w_str(h, MEMBER("reason"), reason);
	w_str(h, MEMBER("test"), db_col_text(st, 10));
	if (db_col_int(st, 19)) {
		if (h->o) /* vigil: see jobs_set_needs_review */
			hw_set(h, h->o, "needs_review", json_true());
		else if (!h->rc)
			h->rc = buf_puts(b, ",\"needs_review\":true");
	}
	if (p->origin)
		w_int(h, MEMBER("origin_id"), p->origin);
	if ((fullname = malloc(strlen(name) + 24))) {
		snprintf(fullname, strlen(name) + 24, "%08lld-%s", (long long)id, name);
		view_set(&w, "NAME", fullname);
	} else if (!h->rc) {
		h->rc = ERR_NOMEM; /* the settings without NAME: not a 200 */
	}
	free(name);
	w_assets(h, &w);
	w_settings(h, &w);
	free(fullname);
	free(w.v);
	w_int(h, MEMBER("has_parents"), deps_count(p->parents) > 0);
	w_int(h, MEMBER("parents_ok"), p->parents_ok);
	w_deps(h, MEMBER("parents"), p->parents);
	w_deps(h, MEMBER("children"), p->children);
	if (h->o) {
		if (details) {
			hw_set(h, h->o, "testresults", json_array());
			hw_set(h, h->o, "logs", json_array());
			hw_set(h, h->o, "ulogs", json_array());
		}
		return h->rc;
	}
	if (details && !h->rc)
		h->rc = buf_puts(b, ",\"testresults\":[],\"logs\":[],\"ulogs\":[]");
	if (extra && !h->rc)
		h->rc = buf_puts(b, extra);
	return h->rc ? h->rc : buf_append(b, "}", 1);
}

/* Ids per batch query: a few SQL texts for every page (a short batch is
 * padded with id 0, which no job has, to the next of these sizes). */
static const size_t batch_sizes[] = { 1, 50, 500 };
#define JOBS_BATCH 500

/* sql made of the template with every "@IDS" replaced by the list
 * "(?1, ?2, ..., ?size)" (one set of parameters for each use). */
static int batch_sql(struct buf *sql, size_t size, const char *template)
{
	const char *t = template, *at;
	size_t i;
	int rc = 0;

	buf_reset(sql);
	while (!rc && (at = strstr(t, "@IDS"))) {
		rc = buf_append(sql, t, (size_t)(at - t));
		for (i = 1; i <= size && !rc; i++)
			rc = buf_printf(sql, i == 1 ? "(?%zu" : ", ?%zu", i);
		if (!rc)
			rc = buf_append(sql, ")", 1);
		t = at + 4;
	}
	return rc ? rc : buf_puts(sql, t);
}

static int batch_prepare(struct db *db, struct db_stmt **st, struct buf *sql, size_t size, const int64_t *ids,
			 const char *template)
{
	size_t i;
	int rc = batch_sql(sql, size, template);

	*st = NULL;
	if (!rc)
		rc = db_prepare(db, st, sql->data, NULL);
	for (i = 0; !rc && i < size; i++)
		rc = db_bind_int(*st, (int)i + 1, ids[i]);
	if (rc) {
		db_finalize(*st);
		*st = NULL;
	}
	return rc;
}

/* ids[k] and k, sorted by id (then k) to find a row's job by its id. */
struct batch_ix {
	int64_t id;
	size_t k;
};

static int ix_cmp(const void *a, const void *b)
{
	const struct batch_ix *x = a, *y = b;

	return x->id != y->id ? (x->id < y->id ? -1 : 1) : (x->k > y->k) - (x->k < y->k);
}

/* The index in the batch of the job id (the first, if listed twice); -1 if none. */
static int batch_index(const struct batch_ix *ix, size_t n, int64_t id)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (ix[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && ix[lo].id == id ? (int)ix[lo].k : -1;
}

/* One batch of up to JOBS_BATCH ids: three queries for all of them. Each
 * job's hash is appended to out, span[k] its place there (len 0: no such
 * job); or (objs not NULL) objs[k] is its hash as a new jansson object
 * (NULL: no such job). */
static int to_batch(struct db *db, const int64_t *ids, size_t n, bool details, const char *extra,
		    struct buf *out, struct jobs_span *span, json_t **objs)
{
	struct batch_ix *ix = calloc(n, sizeof(*ix));
	int64_t *padded = NULL;
	struct job_parts *p = calloc(n, sizeof(*p));
	struct db_stmt *st = NULL;
	struct batch_settings bs = { .v = NULL };
	struct buf sql;
	size_t i, size = batch_sizes[0];
	int k, rc = 0;

	buf_init(&sql, 4 * JOBS_BATCH * 8 + 4096);
	buf_init(&bs.text, LIMIT_SETTING_TEXT * 64);
	for (i = 0; i < sizeof(batch_sizes) / sizeof(batch_sizes[0]) && size < n; i++)
		size = batch_sizes[i];
	padded = calloc(size, sizeof(*padded));
	if (!ix || !p || !padded) {
		free(ix);
		free(p);
		free(padded);
		return ERR_NOMEM;
	}
	memcpy(padded, ids, n * sizeof(*ids));
	for (i = 0; i < n; i++) {
		parts_init(&p[i]);
		ix[i].id = ids[i];
		ix[i].k = i;
		if (objs)
			objs[i] = NULL;
		else
			span[i].off = span[i].len = 0;
	}
	qsort(ix, n, sizeof(*ix), ix_cmp);
	rc = batch_prepare(db, &st, &sql, size, padded,
			   "SELECT job_id, key, value FROM job_settings WHERE job_id IN @IDS ORDER BY job_id, id");
	while (st && (rc = db_step(st)) == 1)
		if ((k = batch_index(ix, n, db_col_int(st, 0))) >= 0)
			if ((rc = batch_setting_add(&bs, &p[k], db_col_text(st, 1), db_col_text(st, 2))))
				break;
	db_finalize(st);
	if (rc)
		goto out;
	/* The rest in one query (on PostgreSQL each is a round trip): a job's
	 * parents (0) and children (1) by dependency type, its origin (2: the
	 * oldest job cloned as it) and parents_ok (3, as deps_parents_ok: no
	 * chained parent short of passed). */
	rc = batch_prepare(db, &st, &sql, size, padded,
			   "SELECT 0, child_job_id, parent_job_id, dependency FROM job_dependencies"
			   " WHERE child_job_id IN @IDS"
			   " UNION ALL SELECT 1, parent_job_id, child_job_id, dependency FROM job_dependencies"
			   " WHERE parent_job_id IN @IDS"
			   " UNION ALL SELECT 2, clone_id, id, 0 FROM jobs WHERE clone_id IN @IDS"
			   " UNION ALL SELECT 3, d.child_job_id, COUNT(*), 0 FROM job_dependencies d"
			   " JOIN jobs p ON p.id = d.parent_job_id WHERE d.dependency IN (1, 3)"
			   " AND (p.state NOT IN ('done', 'cancelled') OR p.result NOT IN ('passed', 'softfailed'))"
			   " AND d.child_job_id IN @IDS GROUP BY d.child_job_id"
			   " ORDER BY 1, 2, 3");
	while (st && (rc = db_step(st)) == 1) {
		int64_t kind = db_col_int(st, 0), other = db_col_int(st, 2);
		if ((k = batch_index(ix, n, db_col_int(st, 1))) < 0)
			continue;
		if ((kind == 0 && parts_dep(&p[k].parents, other, db_col_int(st, 3))) ||
		    (kind == 1 && parts_dep(&p[k].children, other, db_col_int(st, 3)))) {
			rc = ERR_NOMEM;
			break;
		}
		if (kind == 2 && !p[k].origin)
			p[k].origin = other;
		else if (kind == 3)
			p[k].parents_ok = other == 0;
	}
	db_finalize(st);
	if (rc)
		goto out;
	rc = batch_prepare(db, &st, &sql, size, padded, JOB_ROW_SQL "IN @IDS");
	while (st && (rc = db_step(st)) == 1) {
		struct hw h = { .b = out, .o = NULL, .rc = 0 };
		if ((k = batch_index(ix, n, db_col_int(st, 0))) < 0 || (objs ? objs[k] != NULL : span[k].len > 0))
			continue;
		if (objs && !(h.o = objs[k] = json_object())) {
			rc = ERR_NOMEM;
			break;
		}
		if (!objs)
			span[k].off = out->len;
		if ((rc = job_write(&h, st, &bs, &p[k], details, extra)))
			break;
		if (!objs)
			span[k].len = out->len - span[k].off;
	}
	db_finalize(st);
out:
	for (i = 0; i < n; i++)
		parts_release(&p[i]);
	free(p);
	free(ix);
	free(padded);
	buf_release(&sql);
	buf_release(&bs.text);
	free(bs.v);
	return rc;
}

int jobs_to_text_many(struct db *db, const int64_t *ids, size_t n, bool details, const char *extra,
		      struct buf *out, struct jobs_span *span)
{
	size_t i, m;
	int rc = 0;

	for (i = 0; i < n && !rc; i += m) {
		m = n - i < JOBS_BATCH ? n - i : JOBS_BATCH;
		rc = to_batch(db, ids + i, m, details, extra, out, span + i, NULL);
	}
	return rc;
}

int jobs_to_json_many(struct db *db, const int64_t *ids, size_t n, bool details, json_t **objs)
{
	size_t i, m;
	int rc = 0;

	for (i = 0; i < n; i++)
		objs[i] = NULL; /* a batch that fails before its rows leaves its own unset */
	for (i = 0; i < n && !rc; i += m) {
		m = n - i < JOBS_BATCH ? n - i : JOBS_BATCH;
		rc = to_batch(db, ids + i, m, details, NULL, NULL, NULL, objs + i);
	}
	if (rc)
		for (i = 0; i < n; i++) {
			json_decref(objs[i]);
			objs[i] = NULL;
		}
	return rc;
}

int jobs_to_json(struct db *db, int64_t id, bool details, json_t **out)
{
	int rc = jobs_to_json_many(db, &id, 1, details, out);

	return !rc && !*out ? ERR_NOT_FOUND : rc;
}
