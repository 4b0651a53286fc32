/* SPDX-License-Identifier: MIT */
/* joblist.c - filtered, ordered, keyset-paged lists of jobs. Each page is
 * read by statements that each walk one index range (the jobs_list_*
 * indexes) in list order and stop after the page: one filter, the
 * "driver", is written so the index can serve it, the others so it cannot
 * (col || '' = ?), which keeps the planner on the driver's range whatever
 * it guesses. A filter of several values (state=a,b) is one statement per
 * value, merged. The statements are composed from fixed fragments; every
 * value is bound. */
#define LOG_MODULE "joblist"
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "server/db/db.h"
#include "server/store/joblist.h"
#include "server/store/jobs.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/jsonw.h"
#include "util/banned.h" /* last: after every system header */

#define LIMIT_JOBLIST_SQL (1u << 20)
#define JOBLIST_PLAN_LEN 1024

/* The filters a statement can be driven by. */
enum fkind { F_BUILD, F_TEST, F_MACHINE, F_VERSION, F_FLAVOR, F_ARCH, F_DISTRI, F_STATE, F_RESULT, F_GROUP,
	     F_NONE };

/* The single-valued text filters: the indexable form of the column, the
 * same made opaque to the planner, and the right-hand side. */
static const struct fcol {
	const char *col, *opaque, *rhs;
	size_t off;
} fcols[] = {
	[F_BUILD] = { "build", "(build || '')", "?", offsetof(struct joblist_filter, build) },
	[F_TEST] = { "test", "(test || '')", "?", offsetof(struct joblist_filter, test) },
	[F_MACHINE] = { "machine", "(machine || '')", "?", offsetof(struct joblist_filter, machine) },
	[F_VERSION] = { "version", "(version || '')", "?", offsetof(struct joblist_filter, version) },
	[F_FLAVOR] = { "flavor", "(flavor || '')", "?", offsetof(struct joblist_filter, flavor) },
	[F_ARCH] = { "arch", "(arch || '')", "?", offsetof(struct joblist_filter, arch) },
	[F_DISTRI] = { "lower(distri)", "(lower(distri) || '')", "lower(?)", offsetof(struct joblist_filter, distri) },
};

static const char *ftext(const struct joblist_filter *f, enum fkind k)
{
	return *(const char *const *)((const char *)f + fcols[k].off);
}

enum op { OP_NONE, OP_EQ, OP_GT, OP_LT };

/* One statement: the filters of f, the driver's condition, the keyset
 * bound on id, its order and limit. */
struct spec {
	enum fkind drv;      /* served by the index; F_NONE: the primary key */
	enum op drv_op;      /* drv compared with drv_val; OP_NONE: drv only orders */
	const char *drv_val; /* text value (group: unused, taken from f) */
	enum op id_op;       /* OP_LT / OP_GT id_val, or OP_NONE */
	int64_t id_val;
	bool sorted_by_drv;  /* ORDER BY the driver's column first (sort key) */
	bool reverse;        /* key descending, id ascending (a page read backwards) */
	long limit;
};

struct bindv {
	const char *s;
	int64_t i;
	bool is_int;
};

struct stmt {
	struct buf sql;
	struct bindv *v;
	size_t n, cap;
	int err;
};

static void put(struct stmt *q, const char *s)
{
	if (!q->err)
		q->err = buf_puts(&q->sql, s);
}

static void bind(struct stmt *q, const char *s, int64_t i, bool is_int)
{
	if (q->err)
		return;
	if (q->n == q->cap) {
		size_t cap = q->cap ? q->cap * 2 : 32;
		struct bindv *v = realloc(q->v, cap * sizeof(*v));
		if (!v) {
			q->err = ERR_NOMEM;
			return;
		}
		q->v = v;
		q->cap = cap;
	}
	q->v[q->n++] = (struct bindv){ s, i, is_int };
}

/* " AND lhs IN (?, ?...)" over the strings of a. */
static void put_in(struct stmt *q, const char *lhs, const json_t *a)
{
	size_t i;
	json_t *v;

	put(q, " AND ");
	put(q, lhs);
	put(q, " IN (");
	json_array_foreach(a, i, v) {
		put(q, i ? ", ?" : "?");
		bind(q, json_string_value(v), 0, false);
	}
	put(q, ")");
}

static bool has(const json_t *a)
{
	return a && json_array_size(a) > 0;
}

static void put_filters(struct stmt *q, const struct joblist_filter *f, const struct spec *s)
{
	static const char *const op_text[] = { "", " = ", " > ", " < " };
	enum fkind k;

	for (k = F_BUILD; k <= F_DISTRI; k++) {
		const char *v = ftext(f, k);
		if (k == s->drv) {
			if (s->drv_op == OP_NONE)
				continue;
			put(q, " AND ");
			put(q, fcols[k].col);
			put(q, op_text[s->drv_op]);
			put(q, fcols[k].rhs);
			bind(q, s->drv_val, 0, false);
		} else if (v) {
			put(q, " AND ");
			put(q, fcols[k].opaque);
			put(q, " = ");
			put(q, fcols[k].rhs);
			bind(q, v, 0, false);
		}
	}
	if (s->drv == F_STATE || s->drv == F_RESULT) {
		if (s->drv_op != OP_NONE) {
			put(q, s->drv == F_STATE ? " AND state" : " AND result");
			put(q, op_text[s->drv_op]);
			put(q, "?");
			bind(q, s->drv_val, 0, false);
		}
	}
	if (s->drv != F_STATE && has(f->states))
		put_in(q, "(state || '')", f->states);
	if (s->drv != F_RESULT && has(f->results))
		put_in(q, "(result || '')", f->results);
	if (f->no_group) {
		put(q, s->drv == F_GROUP ? " AND group_id IS NULL" : " AND (group_id + 0) IS NULL");
	} else if (f->group) {
		put(q, s->drv == F_GROUP ? " AND group_id = ?" : " AND (group_id + 0) = ?");
		bind(q, NULL, f->group, true);
	}
	if (has(f->ids)) {
		size_t i;
		json_t *v;
		put(q, " AND id IN (");
		json_array_foreach(f->ids, i, v) {
			long long id = strtoll(json_string_value(v), NULL, 10);
			put(q, i ? ", ?" : "?");
			bind(q, NULL, (int64_t)id, true);
		}
		put(q, ")");
	}
	if (f->iso) {
		put(q, " AND id IN (SELECT job_id FROM job_settings WHERE key = 'ISO' AND value = ?)");
		bind(q, f->iso, 0, false);
	}
	if (f->current)
		put(q, " AND clone_id IS NULL");
	if (f->before) {
		put(q, " AND id < ?");
		bind(q, NULL, f->before, true);
	}
	if (f->after) {
		put(q, " AND id > ?");
		bind(q, NULL, f->after, true);
	}
}

/* The sort key's column as the ORDER BY names it. */
static const char *drv_order_col(enum fkind k)
{
	return k == F_STATE ? "state" : k == F_RESULT ? "result" : k <= F_DISTRI ? fcols[k].col : "id";
}

/* Run spec s, appending the ids it yields to *ids. 0 or an error. */
static int run(struct db *db, const struct joblist_filter *f, const struct spec *s, int64_t **ids, size_t *n,
	       size_t *cap, json_t *plans)
{
	struct stmt q = { .err = 0 };
	struct db_stmt *st = NULL;
	size_t i;
	int rc;

	if (s->limit <= 0)
		return 0;
	buf_init(&q.sql, LIMIT_JOBLIST_SQL);
	put(&q, "SELECT id FROM jobs WHERE 1 = 1");
	put_filters(&q, f, s);
	if (s->id_op != OP_NONE) {
		put(&q, s->id_op == OP_LT ? " AND id < ?" : " AND id > ?");
		bind(&q, NULL, s->id_val, true);
	}
	put(&q, " ORDER BY ");
	if (s->sorted_by_drv && s->drv_op != OP_EQ) {
		put(&q, drv_order_col(s->drv));
		put(&q, s->reverse ? " DESC, " : " ASC, ");
	}
	put(&q, s->reverse ? "id ASC LIMIT ?" : "id DESC LIMIT ?");
	bind(&q, NULL, s->limit, true);
	if ((rc = q.err))
		goto out;
	if (plans) {
		char plan[JOBLIST_PLAN_LEN];
		if (!db_plan(db, q.sql.data, plan, sizeof(plan)) && json_array_append_new(plans, json_string(plan))) {
			rc = ERR_NOMEM;
			goto out;
		}
	}
	if ((rc = db_prepare(db, &st, q.sql.data, NULL)))
		goto out;
	for (i = 0; i < q.n && !rc; i++)
		rc = q.v[i].is_int ? db_bind_int(st, (int)i + 1, q.v[i].i) : db_bind_text(st, (int)i + 1, q.v[i].s);
	if (rc)
		goto out;
	while ((rc = db_step(st)) == 1) {
		if (*n == *cap) {
			size_t c = *cap ? *cap * 2 : 64;
			int64_t *a = realloc(*ids, c * sizeof(*a));
			if (!a) {
				rc = ERR_NOMEM;
				break;
			}
			*ids = a;
			*cap = c;
		}
		(*ids)[(*n)++] = db_col_int(st, 0);
	}
out:
	db_finalize(st);
	buf_release(&q.sql);
	free(q.v);
	return rc;
}

static bool prefinal_states(const json_t *states)
{
	size_t i;
	json_t *v;

	json_array_foreach(states, i, v) {
		const char *s = json_string_value(v);
		if (!strcmp(s, "done") || !strcmp(s, "cancelled"))
			return false;
	}
	return true;
}

/* The filter to drive a newest-first list by: the one likely to match
 * the fewest jobs (a build has few jobs; pending states are few beside
 * the finished ones; a result fewer than a distri). */
static enum fkind id_driver(const struct joblist_filter *f)
{
	if (has(f->ids))
		return F_NONE; /* the primary key serves the ids */
	if (f->build)
		return F_BUILD;
	if (f->test)
		return F_TEST;
	if (has(f->states) && prefinal_states(f->states))
		return F_STATE;
	if (f->machine)
		return F_MACHINE;
	if (has(f->results))
		return F_RESULT;
	if (f->group || f->no_group)
		return F_GROUP;
	if (f->version)
		return F_VERSION;
	if (f->flavor)
		return F_FLAVOR;
	if (f->arch)
		return F_ARCH;
	if (f->distri)
		return F_DISTRI;
	if (has(f->states))
		return F_STATE;
	return F_NONE;
}

static int cmp_text(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The distinct strings of a, sorted (borrowed from a). *v new array. */
static int sorted_values(const json_t *a, const char ***v, size_t *n)
{
	size_t i, k = 0, m = json_array_size(a);
	const char **out = m ? calloc(m, sizeof(*out)) : NULL;

	*v = NULL;
	*n = 0;
	if (m && !out)
		return ERR_NOMEM;
	for (i = 0; i < m; i++)
		out[i] = json_string_value(json_array_get(a, i));
	if (m)
		qsort(out, m, sizeof(*out), cmp_text);
	for (i = 0; i < m; i++)
		if (!k || strcmp(out[k - 1], out[i]))
			out[k++] = out[i];
	*v = out;
	*n = k;
	return 0;
}

static int cmp_id_desc(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? 1 : x > y ? -1 : 0;
}

static int cmp_id_asc(const void *a, const void *b)
{
	return -cmp_id_desc(a, b);
}

/* Up to need ids in list order (reverse: backwards) from the cursor
 * (cursor_id 0: from the start; cursor_key its sort key). */
static int collect(struct db *db, const struct joblist_filter *f, enum joblist_sort sort, bool reverse,
		   int64_t cursor_id, const char *cursor_key, long need, int64_t **ids, size_t *n, json_t *plans)
{
	struct spec s = { .drv = F_NONE, .reverse = reverse, .limit = need };
	const char **vals = NULL;
	size_t nvals = 0, cap = 0, i;
	int rc = 0;

	*ids = NULL;
	*n = 0;
	if (cursor_id) {
		s.id_op = reverse ? OP_GT : OP_LT;
		s.id_val = cursor_id;
	}
	if (sort == JOBLIST_SORT_ID) {
		s.drv = id_driver(f);
		if (s.drv == F_STATE || s.drv == F_RESULT) {
			/* One statement per value, each newest first; merged. */
			if ((rc = sorted_values(s.drv == F_STATE ? f->states : f->results, &vals, &nvals)))
				return rc;
			s.drv_op = OP_EQ;
			for (i = 0; i < nvals && !rc; i++) {
				s.drv_val = vals[i];
				rc = run(db, f, &s, ids, n, &cap, plans);
			}
			if (!rc && *n > 1)
				qsort(*ids, *n, sizeof(**ids), reverse ? cmp_id_asc : cmp_id_desc);
			if (*n > (size_t)need)
				*n = (size_t)need;
		} else {
			if (s.drv <= F_DISTRI) {
				s.drv_op = OP_EQ;
				s.drv_val = ftext(f, s.drv);
			}
			rc = run(db, f, &s, ids, n, &cap, plans);
		}
		free(vals);
		return rc;
	}
	/* By a key, newest first among equals: the key's values in order. */
	s.drv = sort == JOBLIST_SORT_RESULT ? F_RESULT : F_TEST;
	s.sorted_by_drv = true;
	if (sort == JOBLIST_SORT_RESULT ? has(f->results) : f->test != NULL) {
		json_t *one = sort == JOBLIST_SORT_TEST ? json_pack("[s]", f->test) : NULL;
		rc = sorted_values(one ? one : f->results, &vals, &nvals);
		s.drv_op = OP_EQ;
		for (i = 0; !rc && i < nvals && *n < (size_t)need; i++) {
			const char *v = vals[reverse ? nvals - 1 - i : i];
			int c = cursor_key ? strcmp(v, cursor_key) : 1;
			if (reverse && cursor_key)
				c = -c;
			if (c < 0)
				continue;
			s.drv_val = v;
			s.id_op = c == 0 ? (reverse ? OP_GT : OP_LT) : OP_NONE;
			s.limit = need - (long)*n;
			rc = run(db, f, &s, ids, n, &cap, plans);
		}
		json_decref(one);
		free(vals);
		return rc;
	}
	if (cursor_key) {
		/* The rest of the cursor's key, then the keys after it. */
		s.drv_op = OP_EQ;
		s.drv_val = cursor_key;
		if ((rc = run(db, f, &s, ids, n, &cap, plans)))
			return rc;
		s.drv_op = reverse ? OP_LT : OP_GT;
		s.id_op = OP_NONE;
		s.limit = need - (long)*n;
	}
	return run(db, f, &s, ids, n, &cap, plans);
}

static void reverse_ids(int64_t *a, size_t n)
{
	size_t i;

	for (i = 0; i < n / 2; i++) {
		int64_t t = a[i];
		a[i] = a[n - 1 - i];
		a[n - 1 - i] = t;
	}
}

int joblist_page_ids(struct db *db, const struct joblist_filter *f, const struct joblist_page *p, int64_t **ids,
		     size_t *n, int64_t *next, int64_t *prev, json_t *plans)
{
	int64_t cursor = p->next ? p->next : p->prev;
	bool back = !p->next && p->prev;
	char key[256] = "";
	const char *cursor_key = NULL;
	long limit = p->limit > 0 ? p->limit : 1;
	int rc;

	*ids = NULL;
	*n = 0;
	*next = *prev = 0;
	if (cursor && p->sort != JOBLIST_SORT_ID) {
		struct db_stmt *st;
		rc = db_prepare(db, &st, p->sort == JOBLIST_SORT_RESULT ? "SELECT result FROM jobs WHERE id = ?"
									 : "SELECT test FROM jobs WHERE id = ?",
				"i", cursor);
		if (rc)
			return rc;
		rc = db_step(st);
		if (rc == 1)
			snprintf(key, sizeof(key), "%s", db_col_text(st, 0));
		db_finalize(st);
		if (rc != 1)
			return rc == 0 ? ERR_NOT_FOUND : rc;
		cursor_key = key;
	}
	if (back) {
		rc = collect(db, f, p->sort, true, cursor, cursor_key, limit + 1, ids, n, plans);
		if (rc)
			return rc;
		if (*n > (size_t)limit) {
			*n = (size_t)limit;
			reverse_ids(*ids, *n);
			*prev = (*ids)[0];
			*next = (*ids)[*n - 1];
			return 0;
		}
		/* At the start: the first page, full. */
		free(*ids);
		*ids = NULL;
		*n = 0;
		cursor = 0;
		cursor_key = NULL;
	}
	rc = collect(db, f, p->sort, false, cursor, cursor_key, limit + 1, ids, n, plans);
	if (rc)
		return rc;
	if (*n > (size_t)limit) {
		*n = (size_t)limit;
		*next = (*ids)[*n - 1];
	}
	if (cursor && *n)
		*prev = (*ids)[0];
	if (!*n) {
		free(*ids);
		*ids = NULL;
	}
	return 0;
}

/* The job hashes of ids in that order, as GET /api/v1/jobs lists them,
 * appended to out as a JSON array. */
static int hashes(struct db *db, const int64_t *ids, size_t n, bool oldest_first, struct buf *out)
{
	struct jobs_span *span = n ? calloc(n, sizeof(*span)) : NULL;
	struct buf text;
	size_t i;
	bool first = true;
	int rc;

	if (n && !span)
		return ERR_NOMEM;
	buf_init(&text, out->max);
	/* Three queries per 500 jobs, written as text (jobs_to_text_many). */
	rc = jobs_to_text_many(db, ids, n, false, ",\"modules\":[]", &text, span);
	if (!rc)
		rc = buf_append(out, "[", 1);
	for (i = 0; i < n && !rc; i++) {
		const struct jobs_span *sp = &span[oldest_first ? n - 1 - i : i];
		if (!sp->len)
			continue; /* deleted meanwhile */
		if (!first)
			rc = buf_append(out, ",", 1);
		first = false;
		if (!rc)
			rc = buf_append(out, text.data + sp->off, sp->len);
	}
	if (!rc)
		rc = buf_append(out, "]", 1);
	buf_release(&text);
	free(span);
	return rc;
}

int joblist_page_text(struct db *db, const struct joblist_filter *f, const struct joblist_page *p, struct buf *out)
{
	int64_t *ids = NULL, next, prev;
	size_t n;
	int rc;

	if ((rc = joblist_page_ids(db, f, p, &ids, &n, &next, &prev, NULL)))
		return rc;
	rc = buf_puts(out, "{\"jobs\":");
	if (!rc)
		rc = hashes(db, ids, n, false, out);
	free(ids);
	if (!rc)
		rc = buf_puts(out, ",\"next\":");
	if (!rc)
		rc = next ? jsonw_int(out, next) : buf_puts(out, "null");
	if (!rc)
		rc = buf_puts(out, ",\"prev\":");
	if (!rc)
		rc = prev ? jsonw_int(out, prev) : buf_puts(out, "null");
	return rc ? rc : buf_puts(out, "}");
}

/* The job hashes of ids in that order (oldest_first: backwards) as a new
 * jansson array, with the empty "modules" the list's text has; read in
 * the list's batches (jobs_to_json_many), a job deleted meanwhile left
 * out. */
static int hashes_json(struct db *db, const int64_t *ids, size_t n, bool oldest_first, json_t **out)
{
	json_t **objs = n ? calloc(n, sizeof(*objs)) : NULL;
	json_t *a = json_array();
	size_t i;
	int rc = 0;

	*out = NULL;
	if ((n && !objs) || !a)
		rc = ERR_NOMEM;
	if (!rc)
		rc = jobs_to_json_many(db, ids, n, false, objs);
	for (i = 0; i < n && !rc; i++) {
		json_t *j = objs[oldest_first ? n - 1 - i : i];
		if (!j)
			continue; /* deleted meanwhile */
		if (json_object_set_new(j, "modules", json_array()) || json_array_append(a, j))
			rc = ERR_NOMEM;
	}
	for (i = 0; i < n && objs; i++)
		json_decref(objs[i]);
	free(objs);
	if (rc)
		json_decref(a);
	else
		*out = a;
	return rc;
}

int joblist_page_json(struct db *db, const struct joblist_filter *f, const struct joblist_page *p, json_t **out)
{
	int64_t *ids = NULL, next, prev;
	json_t *jobs = NULL;
	size_t n;
	int rc;

	*out = NULL;
	if ((rc = joblist_page_ids(db, f, p, &ids, &n, &next, &prev, NULL)))
		return rc;
	rc = hashes_json(db, ids, n, false, &jobs);
	free(ids);
	if (rc)
		return rc;
	*out = json_pack("{s:o,s:o,s:o}", "jobs", jobs, "next", next ? json_integer(next) : json_null(), "prev",
			 prev ? json_integer(prev) : json_null());
	return *out ? 0 : ERR_NOMEM;
}

/* latest=1: every matching job newest first, the first of each scenario
 * kept (openQA's latest_jobs); offset of them skipped, limit listed:
 * their ids newest first into *ids (new), *n of them. */
static int latest(struct db *db, const struct joblist_filter *f, long limit, long offset, int64_t **ids_out,
		  size_t *n_out)
{
	struct spec s = { .drv = F_NONE };
	struct stmt q = { .err = 0 };
	struct db_stmt *st = NULL;
	json_t *seen = json_object();
	int64_t *ids = NULL;
	size_t n = 0, i;
	long skipped = 0;
	int rc;

	s.drv = id_driver(f);
	buf_init(&q.sql, LIMIT_JOBLIST_SQL);
	put(&q, "SELECT id, distri, version, flavor, arch, test, machine FROM jobs WHERE 1 = 1");
	if (s.drv <= F_DISTRI) {
		s.drv_op = OP_EQ;
		s.drv_val = ftext(f, s.drv);
	} else if (s.drv != F_GROUP) {
		s.drv = F_NONE;
	}
	put_filters(&q, f, &s);
	put(&q, " ORDER BY id DESC");
	if ((rc = q.err) || (!seen && (rc = ERR_NOMEM))) /* was 0: an empty answer */
		goto out;
	if ((rc = db_prepare(db, &st, q.sql.data, NULL)))
		goto out;
	for (i = 0; i < q.n && !rc; i++)
		rc = q.v[i].is_int ? db_bind_int(st, (int)i + 1, q.v[i].i) : db_bind_text(st, (int)i + 1, q.v[i].s);
	if (rc)
		goto out;
	if (limit > 0 && !(ids = calloc((size_t)limit, sizeof(*ids)))) {
		rc = ERR_NOMEM;
		goto out;
	}
	while ((long)n < limit && (rc = db_step(st)) == 1) {
		char scenario[1024];
		snprintf(scenario, sizeof(scenario), "%s\x1f%s\x1f%s\x1f%s\x1f%s\x1f%s", db_col_text(st, 1),
			 db_col_text(st, 2), db_col_text(st, 3), db_col_text(st, 4), db_col_text(st, 5),
			 db_col_text(st, 6));
		if (json_object_get(seen, scenario))
			continue;
		if (json_object_set_new(seen, scenario, json_true())) {
			rc = ERR_NOMEM; /* the scenario would be listed twice */
			break;
		}
		if (skipped < offset) {
			skipped++;
			continue;
		}
		ids[n++] = db_col_int(st, 0);
	}
	if (rc < 0)
		goto out;
	rc = 0;
	*ids_out = ids;
	*n_out = n;
	ids = NULL;
out:
	db_finalize(st);
	buf_release(&q.sql);
	free(q.v);
	free(ids);
	json_decref(seen);
	return rc;
}

/* The ids of openQA's list, newest first (*ids new, *n of them). */
static int openqa_ids(struct db *db, const struct joblist_filter *f, long limit, long offset, bool latest_only,
		      int64_t **ids, size_t *n)
{
	int rc;

	*ids = NULL;
	*n = 0;
	if (latest_only)
		return latest(db, f, limit, offset, ids, n);
	/* openQA's offset: the rows before it are read and dropped. */
	if ((rc = collect(db, f, JOBLIST_SORT_ID, false, 0, NULL, limit + offset, ids, n, NULL)))
		return rc;
	if ((long)*n <= offset) {
		*n = 0;
		return 0;
	}
	memmove(*ids, *ids + offset, (*n - (size_t)offset) * sizeof(**ids));
	*n -= (size_t)offset;
	return 0;
}

int joblist_openqa_text(struct db *db, const struct joblist_filter *f, long limit, long offset, bool latest_only,
			struct buf *out)
{
	int64_t *ids = NULL;
	size_t n = 0;
	int rc;

	if ((rc = buf_puts(out, "{\"jobs\":")))
		return rc;
	if (!(rc = openqa_ids(db, f, limit, offset, latest_only, &ids, &n)))
		rc = hashes(db, ids, n, true, out);
	free(ids);
	return rc ? rc : buf_puts(out, "}");
}

int joblist_openqa(struct db *db, const struct joblist_filter *f, long limit, long offset, bool latest_only,
		   json_t **out)
{
	int64_t *ids = NULL;
	size_t n = 0;
	int rc;

	*out = NULL;
	if (!(rc = openqa_ids(db, f, limit, offset, latest_only, &ids, &n)))
		rc = hashes_json(db, ids, n, true, out);
	free(ids);
	return rc;
}
