/* SPDX-License-Identifier: MIT */
/* builds.c - the builds of job groups and their counts (openQA's
 * BuildResults.pm), and the latest jobs of one build (the overview). A
 * group's builds are found by walking its jobs newest first on the
 * covering index jobs_list_group until enough distinct builds are seen, so
 * the work follows the builds shown, not the jobs stored. */
#define LOG_MODULE "builds"
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "server/store/jbuild.h"
#include "server/store/bugref.h"
#include "server/store/builds.h"
#include "server/db/db.h"
#include "server/store/jobs.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/banned.h" /* last: after every system header */

#define LIMIT_BUILDS_SQL 4096
#define BUILDS_TEXT 256
#define BUILDS_PLAN_LEN 1024
#define STR_(x) #x
#define STR(x) STR_(x)

struct build {
	char version[BUILDS_TEXT], build[BUILDS_TEXT];
};

/* Append sql's plan to plans (when asked for: the unit tests' check of
 * the query plans, never an answer; a plan lost to no memory only makes
 * that list shorter, as the policy allows for a diagnostic). */
static void note_plan(struct db *db, json_t *plans, const char *sql)
{
	char plan[BUILDS_PLAN_LEN];

	if (plans && !db_plan(db, sql, plan, sizeof(plan)))
		(void)json_array_append_new(plans, json_string(plan));
}

/* "YYYY-MM-DDTHH:MM:SS" of now minus days. */
static void cutoff_time(long days, char out[DB_TIME_LEN])
{
	time_t t = time(NULL) - (time_t)days * 86400;
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(out, DB_TIME_LEN, "%Y-%m-%dT%H:%M:%S", &tm);
}

/* The group's newest builds (by their newest job), at most max. */
static int newest_builds(struct db *db, int64_t group, long max, long days, struct build **out, size_t *n,
			 json_t *plans)
{
	static const char sql[] = "SELECT id, build, version FROM jobs WHERE group_id = ? ORDER BY id DESC";
	static const char created[] = "SELECT t_created FROM jobs WHERE id = ?";
	struct build *b = NULL;
	struct db_stmt *st;
	char cut[DB_TIME_LEN];
	size_t i;
	int rc;

	*out = NULL;
	*n = 0;
	if (max <= 0)
		return 0;
	if (!(b = calloc((size_t)max, sizeof(*b))))
		return ERR_NOMEM;
	if (days > 0)
		cutoff_time(days, cut);
	note_plan(db, plans, sql);
	if ((rc = db_prepare(db, &st, sql, "i", group))) {
		free(b);
		return rc;
	}
	while ((long)*n < max && (rc = db_step(st)) == 1) {
		const char *bl = db_col_text(st, 1), *ver = db_col_text(st, 2);
		bool seen = false;
		for (i = 0; i < *n && !seen; i++)
			seen = !strcmp(b[i].build, bl) && !strcmp(b[i].version, ver);
		if (seen)
			continue;
		if (days > 0) {
			/* Builds come newest first: once one is too old, all the rest are. */
			struct db_stmt *t;
			bool old = false;
			if (!db_prepare(db, &t, created, "i", db_col_int(st, 0))) {
				old = db_step(t) == 1 && strcmp(db_col_text(t, 0), cut) < 0;
				db_finalize(t);
			}
			if (old)
				break;
		}
		snprintf(b[*n].build, BUILDS_TEXT, "%s", bl);
		snprintf(b[*n].version, BUILDS_TEXT, "%s", ver);
		(*n)++;
	}
	db_finalize(st);
	if (rc < 0) {
		free(b);
		*n = 0;
		return rc;
	}
	*out = b;
	return 0;
}

static char *escaped(const char *s)
{
	char *e = strdup(s), *c;

	for (c = e; c && *c; c++)
		if (!isalnum((unsigned char)*c) && *c != '_')
			*c = '_';
	return e;
}

static void add(struct jbuild *ab, json_t *o, const char *key, json_int_t d)
{
	jbuild_set(ab, o, key, json_integer(json_integer_value(json_object_get(o, key)) + d));
}

static bool in(const char *s, const char *const *l)
{
	for (; *l; l++)
		if (!strcmp(s, *l))
			return true;
	return false;
}

/* comments / labeled of one failed job: any comment, one with a bug reference. */
static void note_comments(struct jbuild *ab, struct db *db, int64_t job, json_t *jr)
{
	struct db_stmt *st;
	bool any = false, label = false;

	if (db_prepare(db, &st, "SELECT text FROM comments WHERE job_id = ?", "i", job))
		return;
	while (db_step(st) == 1) {
		json_t *refs = jbuild_take(ab, bugref_find_all(db_col_text(st, 0)), "labeled");
		any = true;
		label = label || json_array_size(refs) > 0 || strstr(db_col_text(st, 0), "label:");
		json_decref(refs);
	}
	db_finalize(st);
	if (label)
		add(ab, jr, "labeled", 1);
	if (any || label)
		add(ab, jr, "comments", 1);
}

/* One build's counts over its latest jobs (openQA's categories). */
static int build_counts(struct jbuild *ab, struct db *db, int64_t group, const struct build *b, json_t *jr,
			json_t *plans)
{
	static const char sql[] =
		"SELECT id, state, result, needs_review, distri, t_created FROM jobs WHERE id IN"
		" (SELECT max(id) FROM jobs WHERE group_id = ? AND build = ? AND version = ? AND clone_id IS NULL"
		" GROUP BY test, arch, flavor, machine)";
	static const char *const aborted[] = { "skipped", "obsoleted", "parallel_failed", "parallel_restarted",
					       "user_cancelled", "user_restarted", NULL };
	static const char *const not_ok[] = { "failed", "incomplete", "timeout_exceeded", NULL };
	static const char *const cats[] = { "passed", "softfailed", "failed", "skipped", "unfinished", "labeled",
					    "comments", "total", "needs_review", "running", "scheduled", NULL };
	json_t *distris = jbuild_take(ab, json_object(), "distris");
	char date[DB_TIME_LEN] = "";
	struct db_stmt *st;
	size_t i;
	int rc;

	for (i = 0; cats[i]; i++)
		jbuild_set(ab, jr, cats[i], json_integer(0));
	note_plan(db, plans, sql);
	if ((rc = db_prepare(db, &st, sql, "itt", group, b->build, b->version))) {
		json_decref(distris);
		return rc;
	}
	while ((rc = db_step(st)) == 1) {
		const char *state = db_col_text(st, 1), *res = db_col_text(st, 2), *t = db_col_text(st, 5);
		add(ab, jr, "total", 1);
		if (distris)
			jbuild_set(ab, distris, db_col_text(st, 4), json_integer(1));
		if (t && strcmp(t, date) > 0)
			snprintf(date, sizeof(date), "%s", t);
		if (!strcmp(state, "done")) {
			if (!strcmp(res, "passed"))
				add(ab, jr, "passed", 1);
			else if (!strcmp(res, "softfailed"))
				add(ab, jr, "softfailed", 1);
			else if (in(res, aborted))
				add(ab, jr, "skipped", 1);
			else if (in(res, not_ok)) {
				add(ab, jr, "failed", 1);
				if (db_col_int(st, 3))
					add(ab, jr, "needs_review", 1);
				note_comments(ab, db, db_col_int(st, 0), jr);
			} else
				add(ab, jr, "unfinished", 1);
		} else if (!strcmp(state, "cancelled")) {
			add(ab, jr, "skipped", 1);
		} else {
			add(ab, jr, "unfinished", 1);
			add(ab, jr, !strcmp(state, "scheduled") ? "scheduled" : "running", 1);
		}
	}
	db_finalize(st);
	jbuild_set(ab, jr, "distris", distris);
	jbuild_set(ab, jr, "date", date[0] ? json_string(date) : json_null());
	return rc < 0 ? rc : jbuild_failed(ab) ? ERR_NOMEM : 0;
}

static json_int_t iget(const json_t *o, const char *k)
{
	return json_integer_value(json_object_get(o, k));
}

int builds_group(struct db *db, int64_t id, long limit_builds, long time_limit_days, json_t **out, json_t *plans)
{
	struct jbuild ab = JBUILD_INIT;
	struct build *b = NULL;
	struct db_stmt *st;
	json_t *res = NULL, *list;
	json_int_t max_jobs = 0;
	size_t n = 0, i, k;
	int rc;

	*out = NULL;
	if ((rc = db_prepare(db, &st, "SELECT name FROM job_groups WHERE id = ?", "i", id)))
		return rc;
	if ((rc = db_step(st)) == 1)
		res = json_pack("{s:[],s:i,s:i,s:[],s:{s:I,s:s,s:i}}", "build_results", "max_jobs", 0, "limit_exceeded", 0,
				"children", "group", "id", (json_int_t)id, "name", db_col_text(st, 0),
				"always_show_version", 0);
	db_finalize(st);
	if (rc != 1)
		return rc == 0 ? ERR_NOT_FOUND : rc;
	if (!res)
		return ERR_NOMEM;
	if (limit_builds > BUILDS_MAX)
		limit_builds = BUILDS_MAX;
	if ((rc = newest_builds(db, id, limit_builds, time_limit_days, &b, &n, plans)))
		goto out;
	list = json_object_get(res, "build_results");
	for (i = 0; i < n; i++) {
		json_t *jr = json_object();
		char key[2 * BUILDS_TEXT + 2];
		if (!jr) {
			rc = ERR_NOMEM;
			goto out;
		}
		char *ev = escaped(b[i].version), *eb = escaped(b[i].build), *eid = NULL;
		json_int_t versions = 0;
		for (k = 0; k < n; k++)
			versions += !strcmp(b[k].build, b[i].build);
		snprintf(key, sizeof(key), "%s-%s", b[i].version, b[i].build);
		if (ev && eb && (eid = malloc(strlen(ev) + strlen(eb) + 2)))
			snprintf(eid, strlen(ev) + strlen(eb) + 2, "%s-%s", ev, eb);
		jbuild_set(&ab, jr, "key", json_string(key));
		jbuild_set(&ab, jr, "build", json_string(b[i].build));
		jbuild_set(&ab, jr, "version", json_string(b[i].version));
		jbuild_set(&ab, jr, "version_count", json_integer(versions));
		jbuild_set(&ab, jr, "escaped_version", ev ? json_string(ev) : NULL);
		jbuild_set(&ab, jr, "escaped_build", eb ? json_string(eb) : NULL);
		jbuild_set(&ab, jr, "escaped_id", eid ? json_string(eid) : NULL);
		free(ev);
		free(eb);
		free(eid);
		rc = build_counts(&ab, db, id, &b[i], jr, plans);
		if (rc) {
			json_decref(jr);
			goto out;
		}
		jbuild_set(&ab, jr, "all_passed", json_integer(iget(jr, "passed") + iget(jr, "softfailed") >=
								 iget(jr, "total")));
		jbuild_set(&ab, jr, "reviewed", json_integer(iget(jr, "labeled") >= iget(jr, "failed")));
		jbuild_set(&ab, jr, "commented", json_integer(iget(jr, "comments") >= iget(jr, "failed")));
		if (iget(jr, "total") > max_jobs)
			max_jobs = iget(jr, "total");
		jbuild_append(&ab, list, jr);
	}
	jbuild_set(&ab, res, "max_jobs", json_integer(max_jobs));
	if (jbuild_failed(&ab)) {
		rc = ERR_NOMEM;
		goto out;
	}
	*out = res;
	res = NULL;
out:
	free(b);
	json_decref(res);
	return rc;
}

int builds_dashboard(struct db *db, long limit_builds, long time_limit_days, json_t **out)
{
	struct db_stmt *st;
	json_t *results = json_array();
	int64_t *groups = NULL;
	size_t n = 0, cap = 0, i;
	int rc;

	*out = NULL;
	if (!results)
		return ERR_NOMEM;
	if ((rc = db_prepare(db, &st, "SELECT id FROM job_groups ORDER BY COALESCE(sort_order, 0), name, id", NULL))) {
		json_decref(results);
		return rc;
	}
	while ((rc = db_step(st)) == 1) {
		if (n == cap) {
			size_t c = cap ? cap * 2 : 16;
			int64_t *g = realloc(groups, c * sizeof(*g));
			if (!g) {
				rc = ERR_NOMEM;
				break;
			}
			groups = g;
			cap = c;
		}
		groups[n++] = db_col_int(st, 0);
	}
	db_finalize(st);
	for (i = 0; rc >= 0 && i < n; i++) {
		json_t *g;
		rc = builds_group(db, groups[i], limit_builds, time_limit_days, &g, NULL);
		if (rc == ERR_NOT_FOUND) { /* deleted meanwhile */
			rc = 0;
			continue;
		}
		if (!rc && json_array_size(json_object_get(g, "build_results")))
			rc = json_array_append_new(results, g) ? ERR_NOMEM : 0;
		else
			json_decref(g);
	}
	free(groups);
	if (rc < 0) {
		json_decref(results);
		return rc;
	}
	*out = json_pack("{s:o,s:i}", "results", results, "limit_exceeded", 0);
	return *out ? 0 : ERR_NOMEM;
}

/* " AND <cond>" for each set field of q, values bound in order later. */
static void overview_where(struct buf *sql, const struct builds_overview_q *q, const char *vals[8], int *nv,
			   bool with_build)
{
	static const struct {
		const char *cond;
		size_t off;
	} conds[] = {
		{ " AND build = ?", offsetof(struct builds_overview_q, build) },
		{ " AND version = ?", offsetof(struct builds_overview_q, version) },
		{ " AND lower(distri) = lower(?)", offsetof(struct builds_overview_q, distri) },
		{ " AND flavor = ?", offsetof(struct builds_overview_q, flavor) },
		{ " AND arch = ?", offsetof(struct builds_overview_q, arch) },
		{ " AND machine = ?", offsetof(struct builds_overview_q, machine) },
		{ " AND test = ?", offsetof(struct builds_overview_q, test) },
	};
	size_t i;

	*nv = 0;
	for (i = with_build ? 0 : 1; i < sizeof(conds) / sizeof(conds[0]); i++) {
		const char *v = *(const char *const *)((const char *)q + conds[i].off);
		if (!v)
			continue;
		(void)buf_puts(sql, conds[i].cond);
		vals[(*nv)++] = v;
	}
	if (q->group)
		(void)buf_puts(sql, " AND group_id = ?");
}

static int overview_prepare(struct db *db, struct db_stmt **st, const char *sql, const struct builds_overview_q *q,
			    const char *vals[8], int nv)
{
	int rc = db_prepare(db, st, sql, NULL), i;

	for (i = 0; !rc && i < nv; i++)
		rc = db_bind_text(*st, i + 1, vals[i]);
	if (!rc && q->group)
		rc = db_bind_int(*st, nv + 1, q->group);
	if (rc && *st) {
		db_finalize(*st);
		*st = NULL;
	}
	return rc;
}

int builds_overview(struct db *db, const struct builds_overview_q *q0, json_t **out, json_t *plans)
{
	struct builds_overview_q q = *q0;
	struct db_stmt *st = NULL;
	struct buf sql;
	const char *vals[8];
	char build[BUILDS_TEXT];
	struct jbuild ab = JBUILD_INIT;
	json_t *a = NULL;
	int nv, rc;

	*out = NULL;
	buf_init(&sql, LIMIT_BUILDS_SQL);
	if (!q.build) {
		(void)buf_puts(&sql, "SELECT build FROM jobs WHERE 1 = 1");
		overview_where(&sql, &q, vals, &nv, false);
		if (buf_puts(&sql, " ORDER BY id DESC LIMIT 1")) {
			rc = ERR_NOMEM;
			goto out;
		}
		note_plan(db, plans, sql.data);
		if ((rc = overview_prepare(db, &st, sql.data, &q, vals, nv)))
			goto out;
		rc = db_step(st);
		if (rc == 1)
			snprintf(build, sizeof(build), "%s", db_col_text(st, 0));
		db_finalize(st);
		st = NULL;
		if (rc < 0)
			goto out;
		if (rc == 0) {
			*out = json_array();
			rc = *out ? 0 : ERR_NOMEM;
			goto out;
		}
		q.build = build;
		buf_reset(&sql);
	}
	(void)buf_puts(&sql, "SELECT j.id, j.test, j.distri, j.version, j.flavor, j.arch, j.machine, j.build,"
		       " j.group_id, j.state, j.result, j.needs_review,"
		       " (SELECT value FROM job_settings s WHERE s.job_id = j.id AND s.key = 'JOB_TEMPLATE_NAME')"
		       " FROM jobs j WHERE j.id IN (SELECT max(id) FROM jobs WHERE 1 = 1");
	overview_where(&sql, &q, vals, &nv, true);
	(void)buf_puts(&sql, " GROUP BY distri, version, flavor, arch, test, machine)");
	if (q.todo) /* openQA's todo=1: only those waiting for review (review.h) */
		(void)buf_puts(&sql, " AND j.review_todo = 1");
	if (buf_puts(&sql, " ORDER BY j.test, j.machine, j.id LIMIT " STR(BUILDS_OVERVIEW_MAX_JOBS))) {
		rc = ERR_NOMEM;
		goto out;
	}
	note_plan(db, plans, sql.data);
	if ((rc = overview_prepare(db, &st, sql.data, &q, vals, nv)))
		goto out;
	if (!(a = json_array())) {
		rc = ERR_NOMEM;
		goto out;
	}
	while ((rc = db_step(st)) == 1) {
		json_t *s = json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:s}", "TEST", db_col_text(st, 1), "DISTRI",
				      db_col_text(st, 2), "VERSION", db_col_text(st, 3), "FLAVOR", db_col_text(st, 4),
				      "ARCH", db_col_text(st, 5), "MACHINE", db_col_text(st, 6), "BUILD",
				      db_col_text(st, 7));
		char *name;
		if (s && db_col_text(st, 12))
			jbuild_set(&ab, s, "JOB_TEMPLATE_NAME", json_string(db_col_text(st, 12)));
		name = s ? jobs_name(s) : NULL;
		json_decref(s);
		if (!name)
			jbuild_take(&ab, NULL, "name");
		jbuild_append(
			&ab, a, json_pack("{s:I,s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:o,s:s,s:s,s:b}", "id",
				     (json_int_t)db_col_int(st, 0), "name", name ? name : "", "test", db_col_text(st, 1),
				     "distri", db_col_text(st, 2), "version", db_col_text(st, 3), "flavor",
				     db_col_text(st, 4), "arch", db_col_text(st, 5), "machine", db_col_text(st, 6),
				     "build", db_col_text(st, 7), "group_id",
				     db_col_null(st, 8) ? json_null() : json_integer(db_col_int(st, 8)), "state",
				     db_col_text(st, 9), "result", db_col_text(st, 10), "needs_review",
				     (int)db_col_int(st, 11)));
		free(name);
		if (jbuild_failed(&ab))
			break;
	}
	db_finalize(st);
	st = NULL;
	if (rc < 0)
		goto out;
	if (jbuild_failed(&ab)) {
		rc = ERR_NOMEM;
		goto out;
	}
	*out = a;
	a = NULL;
	rc = 0;
out:
	db_finalize(st);
	buf_release(&sql);
	json_decref(a);
	return rc;
}
