/* SPDX-License-Identifier: MIT */
/* review.c - the review queue (jobs.review_todo, its partial index), the
 * carry-over of bug references between jobs of a scenario and RETRY=N, as
 * openQA's Jobs.pm does them when a job is done. Comments are read and
 * written through comments.h; restarts through jobs.h. */
#define LOG_MODULE "review"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "server/store/artefacts.h"
#include "server/store/bugref.h"
#include "server/store/comments.h"
#include "server/db/db.h"
#include "server/store/jobs.h"
#include "server/store/review.h"
#include "server/store/jbuild.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/log.h"
#include "util/str.h"
#include "util/banned.h" /* last: after every system header */

/* A new formatted string, NULL on OOM. */
static char *fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
static char *fmt(const char *f, ...)
{
	va_list ap;
	char *s = NULL;

	va_start(ap, f);
	if (vasprintf(&s, f, ap) < 0)
		s = NULL;
	va_end(ap);
	return s;
}

/* openQA's NOT_COMPLETE results and the failed one: always worth a look. */
static bool result_failed(const char *r)
{
	return !strcmp(r, "failed") || !strcmp(r, "incomplete") || !strcmp(r, "timeout_exceeded");
}

/* Worth a look only when a module failed (openQA's should_skip_review). */
static bool result_soft(const char *r)
{
	static const char *const soft[] = { "softfailed", "skipped", "obsoleted", "parallel_failed",
					    "parallel_restarted", "user_cancelled", "user_restarted", NULL };
	const char *const *s;

	for (s = soft; *s; s++)
		if (!strcmp(*s, r))
			return true;
	return false;
}

int review_refresh(struct db *db, int64_t job_id)
{
	struct db_stmt *st;
	char state[16] = "", result[32] = "";
	bool todo = false, reviewed;
	int64_t n;
	int rc;

	if ((rc = db_prepare(db, &st, "SELECT state, result FROM jobs WHERE id = ?", "i", job_id)))
		return rc;
	rc = db_step(st);
	if (rc == 1) {
		snprintf(state, sizeof(state), "%s", db_col_text(st, 0));
		snprintf(result, sizeof(result), "%s", db_col_text(st, 1));
	}
	db_finalize(st);
	if (rc != 1)
		return rc == 0 ? ERR_NOT_FOUND : rc;
	if (!strcmp(state, "done")) {
		todo = result_failed(result);
		if (!todo && result_soft(result) &&
		    !db_query_int(db, &n, "SELECT COUNT(*) FROM job_modules WHERE job_id = ? AND result = 'failed'",
				  "i", job_id))
			todo = n > 0;
	}
	if (todo) {
		if ((rc = comments_job_reviewed(db, job_id, &reviewed)))
			return rc;
		todo = !reviewed;
	}
	rc = db_exec(db, "UPDATE jobs SET review_todo = ? WHERE id = ? AND review_todo <> ?", "iii", (int64_t)todo,
		     job_id, (int64_t)todo);
	return rc < 0 ? rc : 0;
}

/* How many times the job's clone chain was restarted before it. */
static int ancestors(struct db *db, int64_t job_id, int64_t *n)
{
	return db_query_int(db, n,
			    "WITH RECURSIVE a(id, n) AS (SELECT ?, 0 UNION ALL"
			    " SELECT j.id, a.n + 1 FROM jobs j JOIN a ON j.clone_id = a.id WHERE a.n < 1000)"
			    " SELECT MAX(n) FROM a", "i", job_id);
}

/* The names, or NULL: out of memory. */
static json_t *failed_modules(struct db *db, int64_t job_id)
{
	struct jbuild b = JBUILD_INIT;
	struct db_stmt *st;
	json_t *a = jbuild_take(&b, json_array(), "failed_modules");

	if (!a || db_prepare(db, &st, "SELECT name FROM job_modules WHERE job_id = ? AND result = 'failed' ORDER BY id",
			     "i", job_id))
		return a;
	while (!jbuild_failed(&b) && db_step(st) == 1)
		jbuild_append(&b, a, json_string(db_col_text(st, 0)));
	db_finalize(st);
	return jbuild_done(&b, a);
}

static json_t *text_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

int review_list(struct db *db, int64_t after, long limit, json_t **out)
{
	struct jbuild b = JBUILD_INIT;
	struct db_stmt *st;
	json_t *jobs = jbuild_take(&b, json_array(), "jobs");
	int64_t last = 0, n;
	long count = 0;
	int rc;

	*out = NULL;
	if (limit < 1 || limit > REVIEW_PAGE_MAX)
		limit = limit < 1 ? 50 : REVIEW_PAGE_MAX;
	rc = db_prepare(db, &st,
			"SELECT j.id, j.test, j.distri, j.version, j.flavor, j.arch, j.machine, j.build, j.group_id,"
			" g.name, j.result, j.needs_review, j.t_finished FROM jobs j"
			" LEFT JOIN job_groups g ON g.id = j.group_id"
			" WHERE j.review_todo = 1 AND j.clone_id IS NULL AND j.id < ? ORDER BY j.id DESC LIMIT ?",
			"ii", after > 0 ? after : INT64_MAX, (int64_t)limit);
	if (rc || !jobs) {
		if (!rc)
			db_finalize(st);
		json_decref(jobs);
		return rc ? rc : ERR_NOMEM;
	}
	while (!jbuild_failed(&b) && (rc = db_step(st)) == 1) {
		json_t *settings = json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:s}", "TEST", db_col_text(st, 1), "DISTRI",
					     db_col_text(st, 2), "VERSION", db_col_text(st, 3), "FLAVOR",
					     db_col_text(st, 4), "ARCH", db_col_text(st, 5), "MACHINE",
					     db_col_text(st, 6), "BUILD", db_col_text(st, 7));
		char *name = settings ? jobs_name(settings) : NULL;
		last = db_col_int(st, 0);
		if (!name)
			jbuild_take(&b, NULL, "name"); /* "s?" would show null */
		jbuild_append(
			&b, jobs, json_pack("{s:I,s:s?,s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:o,s:o,s:s,s:b,s:o}", "id",
					(json_int_t)last, "name", name, "test", db_col_text(st, 1), "distri",
					db_col_text(st, 2), "version", db_col_text(st, 3), "flavor",
					db_col_text(st, 4), "arch", db_col_text(st, 5), "machine", db_col_text(st, 6),
					"build", db_col_text(st, 7), "group_id",
					db_col_null(st, 8) ? json_null() : json_integer(db_col_int(st, 8)), "group",
					text_or_null(db_col_text(st, 9)), "result", db_col_text(st, 10),
					"needs_review", (int)db_col_int(st, 11), "t_finished",
					text_or_null(db_col_text(st, 12))));
		free(name);
		json_decref(settings);
		count++;
	}
	db_finalize(st);
	/* A page's own facts after its rows: each a lookup by primary key or index. */
	for (size_t i = 0; rc >= 0 && !jbuild_failed(&b) && i < json_array_size(jobs); i++) {
		json_t *j = json_array_get(jobs, i);
		int64_t id = json_integer_value(json_object_get(j, "id"));
		jbuild_set(&b, j, "failed_modules", failed_modules(db, id));
		jbuild_set(&b, j, "restarts", json_integer(ancestors(db, id, &n) ? 0 : n));
	}
	if (rc < 0 || jbuild_failed(&b)) {
		json_decref(jobs);
		return rc < 0 ? rc : ERR_NOMEM;
	}
	*out = json_pack("{s:o,s:o}", "jobs", jobs, "next", count == limit ? json_integer(last) : json_null());
	return *out ? 0 : ERR_NOMEM;
}

/* The bug references in the titles of a module's steps, joined without
 * separator as openQA's _failure_reason does; "" when none, NULL when out
 * of memory. */
static char *title_bugrefs(const char *data_dir, int64_t job_id, const char *module)
{
	struct buf b;
	char *fn = NULL, *path = NULL;
	json_t *res = NULL, *d;
	bool bad = false;
	size_t i;

	buf_init(&b, 4096);
	(void)buf_puts(&b, "");
	if (!data_dir || !artefact_name_valid(module, strlen(module)))
		goto out;
	if (!(fn = fmt("result-%s.json", module)) || !(path = artefact_path(data_dir, job_id, fn))) {
		bad = true;
		goto out;
	}
	res = json_load_file(path, 0, NULL);
	json_array_foreach(json_object_get(res, "details"), i, d) {
		const char *title = json_string_value(json_object_get(d, "title"));
		json_t *refs = title ? bugref_find_all(title) : NULL;
		if ((title && !refs) || (json_array_size(refs) && buf_puts(&b, json_string_value(json_array_get(refs, 0))))) {
			json_decref(refs); /* a reason without a bug: another reason */
			bad = true;
			goto out;
		}
		json_decref(refs);
	}
out:
	json_decref(res);
	free(path);
	free(fn);
	if (bad) {
		buf_release(&b);
		return NULL;
	}
	return buf_steal(&b);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int review_failure_reason(struct db *db, const char *data_dir, int64_t job_id, char **out)
{
	struct db_stmt *st;
	char *keys[256];
	size_t n = 0, i;
	struct buf b;
	int rc;

	*out = NULL;
	buf_init(&b, 64 * 1024);
	if ((rc = db_prepare(db, &st, "SELECT name, result FROM job_modules WHERE job_id = ?"
			     " AND result IN ('failed', 'softfailed', 'none') ORDER BY id", "i", job_id)))
		return rc;
	while (n < sizeof(keys) / sizeof(keys[0]) && (rc = db_step(st)) == 1) {
		char *refs = title_bugrefs(data_dir, job_id, db_col_text(st, 0));
		keys[n] = refs ? fmt("%s:%s", *refs ? refs : db_col_text(st, 0), db_col_text(st, 1)) : NULL;
		free(refs);
		if (!keys[n]) { /* a module left out would make another reason */
			rc = ERR_NOMEM;
			break;
		}
		n++;
	}
	db_finalize(st);
	qsort(keys, n, sizeof(keys[0]), cmp_str);
	rc = rc < 0 ? rc : 0;
	/* A set: equal keys (two modules with the same bug) count once. */
	for (i = 0; i < n; i++)
		if (!rc && (i == 0 || strcmp(keys[i], keys[i - 1])))
			rc = buf_printf(&b, "%s%s", b.len ? "," : "", keys[i]);
	for (i = 0; i < n; i++)
		free(keys[i]);
	if (!rc && n == 0)
		rc = buf_puts(&b, "GOOD");
	if (rc) {
		buf_release(&b);
		return rc;
	}
	*out = buf_steal(&b);
	return 0;
}

/* The scenario of a job and facts carry-over and retry need. */
struct scenario {
	char *key[6]; /* distri, version, flavor, arch, test, machine */
	char result[32];
	int64_t group_id;
};

static void scenario_release(struct scenario *s)
{
	for (int i = 0; i < 6; i++)
		free(s->key[i]);
}

static int scenario_of(struct db *db, int64_t job_id, struct scenario *s)
{
	struct db_stmt *st;
	int rc;

	memset(s, 0, sizeof(*s));
	if ((rc = db_prepare(db, &st, "SELECT distri, version, flavor, arch, test, machine, result, group_id"
			     " FROM jobs WHERE id = ?", "i", job_id)))
		return rc;
	rc = db_step(st);
	if (rc == 1) {
		for (int i = 0; i < 6; i++)
			s->key[i] = str_dup(db_col_text(st, i)); /* NULL: out of memory, below */
		snprintf(s->result, sizeof(s->result), "%s", db_col_text(st, 6));
		s->group_id = db_col_null(st, 7) ? 0 : db_col_int(st, 7);
		rc = 0;
		for (int i = 0; i < 6; i++)
			if (!s->key[i])
				rc = ERR_NOMEM;
	} else if (rc == 0) {
		rc = ERR_NOT_FOUND;
	}
	db_finalize(st);
	return rc;
}

int review_carry_over(struct db *db, const char *data_dir, int64_t job_id, int64_t *from)
{
	struct scenario s;
	struct db_stmt *st = NULL;
	char *mine = NULL, *prev = NULL, *theirs = NULL;
	int64_t found = 0, cid = 0;
	int changes = 0, rc;
	bool on = true;

	*from = 0;
	if ((rc = scenario_of(db, job_id, &s)))
		goto out;
	if (s.group_id && (rc = review_group_carry_over(db, s.group_id, &on)))
		goto out;
	if (!on)
		goto out;
	if (!(prev = str_dup(""))) { /* no carry-over would be a guess: the caller logs it */
		rc = ERR_NOMEM;
		goto out;
	}
	if ((rc = review_failure_reason(db, data_dir, job_id, &mine)) || !strcmp(mine, "GOOD"))
		goto out;
	/* openQA's _previous_scenario_jobs: complete jobs before this one. */
	rc = db_prepare(db, &st,
			"SELECT id FROM jobs WHERE distri = ? AND version = ? AND flavor = ? AND arch = ? AND test = ?"
			" AND machine = ? AND state = 'done' AND result IN ('passed', 'softfailed', 'failed')"
			" AND id < ? ORDER BY id DESC LIMIT ?",
			"ttttttii", s.key[0], s.key[1], s.key[2], s.key[3], s.key[4], s.key[5], job_id,
			(int64_t)REVIEW_LOOKUP_DEPTH);
	if (rc)
		goto out;
	while (!found && (rc = db_step(st)) == 1) {
		int64_t id = db_col_int(st, 0);
		free(theirs);
		theirs = NULL;
		if ((rc = review_failure_reason(db, data_dir, id, &theirs)))
			goto out;
		if (!strcmp(theirs, mine)) {
			found = id;
		} else if (strcmp(theirs, prev)) {
			free(prev);
			prev = theirs;
			theirs = NULL;
			if (++changes > REVIEW_STATE_CHANGES) {
				log_debug("job %lld: failure reason changed more than %d times, no carry-over",
					  (long long)job_id, REVIEW_STATE_CHANGES);
				break;
			}
		}
	}
	rc = rc < 0 ? rc : 0;
	db_finalize(st);
	st = NULL;
	if (rc || !found)
		goto out;
	if ((rc = comments_carry_over(db, found, job_id, &cid)))
		goto out;
	if (cid) {
		*from = found;
		log_info("job %lld: bug reference carried over from job %lld", (long long)job_id, (long long)found);
	}
out:
	db_finalize(st);
	scenario_release(&s);
	free(mine);
	free(prev);
	free(theirs);
	return rc;
}

/* RETRY's number: "3" or "3:bsc#1 flaky"; 0 when unset or not a number. */
static long retry_limit(struct db *db, int64_t job_id)
{
	struct db_stmt *st;
	long n = 0;

	if (db_prepare(db, &st, "SELECT value FROM job_settings WHERE job_id = ? AND key = 'RETRY'", "i", job_id))
		return 0;
	if (db_step(st) == 1) {
		char v[32];
		snprintf(v, sizeof(v), "%s", db_col_text(st, 0));
		v[strcspn(v, ":")] = '\0';
		if (str_to_long(v, &n) || n < 0)
			n = 0;
	}
	db_finalize(st);
	return n;
}

int review_retry(struct db *db, int64_t job_id, int64_t *clone)
{
	struct scenario s;
	char msg[256], *text = NULL;
	int64_t done = 0, cid;
	long limit;
	int rc;

	*clone = 0;
	if ((rc = scenario_of(db, job_id, &s)))
		goto out;
	/* openQA's is_ok_to_retry: not when it passed or was aborted. */
	if (!strcmp(s.result, "passed") || (strcmp(s.result, "failed") && !result_failed(s.result)))
		goto out;
	if ((limit = retry_limit(db, job_id)) <= 0 || (rc = ancestors(db, job_id, &done)) || done >= limit)
		goto out;
	if (!(text = fmt("Restarting because RETRY is set to %ld (and only restarted %lld times so far)", limit,
				(long long)done))) {
		rc = ERR_NOMEM;
		goto out;
	}
	if ((rc = comments_add_system(db, job_id, text, &cid)))
		goto out;
	if ((rc = jobs_restart(db, job_id, clone, msg, sizeof(msg)))) {
		log_warn("job %lld: RETRY restart failed: %s", (long long)job_id, msg);
		goto out;
	}
	log_info("job %lld: retried as job %lld (RETRY=%ld, run %lld)", (long long)job_id, (long long)*clone, limit,
		 (long long)done + 2);
out:
	scenario_release(&s);
	free(text);
	return rc;
}

int review_job_done(struct db *db, const char *data_dir, int64_t job_id)
{
	int64_t clone = 0, from = 0;
	int rc = review_retry(db, job_id, &clone), rc2;

	if (rc)
		log_warn("job %lld: RETRY not handled: %s", (long long)job_id, err_str(rc));
	if ((rc2 = review_carry_over(db, data_dir, job_id, &from)))
		log_warn("job %lld: carry-over failed: %s", (long long)job_id, err_str(rc2));
	rc = rc ? rc : rc2;
	if ((rc2 = review_refresh(db, job_id)))
		log_warn("job %lld: review queue not updated: %s", (long long)job_id, err_str(rc2));
	return rc ? rc : rc2;
}

/* The clone chain the job belongs to, oldest first, as [{"id", "result"}]. */
static int chain(struct db *db, int64_t job_id, json_t **out)
{
	struct jbuild b = JBUILD_INIT;
	struct db_stmt *st;
	int rc;

	rc = db_prepare(db, &st,
			"WITH RECURSIVE up(id, n) AS (SELECT ?, 0 UNION ALL"
			"  SELECT j.id, up.n - 1 FROM jobs j JOIN up ON j.clone_id = up.id WHERE up.n > -1000),"
			" down(id, n) AS (SELECT ?, 0 UNION ALL"
			"  SELECT j.clone_id, down.n + 1 FROM jobs j JOIN down ON j.id = down.id"
			"  WHERE j.clone_id IS NOT NULL AND down.n < 1000)"
			" SELECT c.id, j.result, j.state FROM (SELECT id, n FROM up UNION SELECT id, n FROM down) c"
			" JOIN jobs j ON j.id = c.id ORDER BY c.n",
			"ii", job_id, job_id);
	if (rc)
		return rc;
	*out = jbuild_take(&b, json_array(), "runs");
	while (*out && !jbuild_failed(&b) && (rc = db_step(st)) == 1)
		jbuild_append(&b, *out, json_pack("{s:I,s:s,s:s}", "id", (json_int_t)db_col_int(st, 0), "result",
						     db_col_text(st, 1), "state", db_col_text(st, 2)));
	db_finalize(st);
	if (rc < 0 || !jbuild_done(&b, *out)) { /* a run missing would change the verdict */
		if (rc < 0)
			json_decref(*out);
		*out = NULL;
		return rc < 0 ? rc : ERR_NOMEM;
	}
	return 0;
}

/* "passed on retry 2 of 3" / "failed 3 of 3" for the last run of a chain
 * that RETRY drove, from the view of the final job; NULL while it runs. */
static char *verdict(const json_t *runs, long limit)
{
	size_t n = json_array_size(runs);
	const json_t *last = json_array_get(runs, n - 1);
	const char *r = json_string_value(json_object_get(last, "result"));
	const char *state = json_string_value(json_object_get(last, "state"));

	if (n == 0 || !r || !state || strcmp(state, "done"))
		return NULL;
	if (!strcmp(r, "passed") || !strcmp(r, "softfailed"))
		return n == 1 ? fmt("%s at once (RETRY=%ld)", r, limit)
			      : fmt("%s on retry %zu of %ld: flaky", r, n - 1, limit);
	return fmt("%s %zu of %zu runs (RETRY=%ld)", r, n, n, limit);
}

int review_job_json(struct db *db, const char *data_dir, int64_t job_id, json_t **out)
{
	json_t *runs = NULL;
	char *reason = NULL, *v = NULL;
	int64_t todo = 0, restarts = 0;
	long limit;
	int rc;

	*out = NULL;
	if ((rc = db_query_int(db, &todo, "SELECT review_todo FROM jobs WHERE id = ?", "i", job_id)))
		return rc;
	if ((rc = review_failure_reason(db, data_dir, job_id, &reason)) || (rc = ancestors(db, job_id, &restarts)) ||
	    (rc = chain(db, job_id, &runs)))
		goto out;
	limit = retry_limit(db, job_id);
	v = limit > 0 ? verdict(runs, limit) : NULL;
	*out = json_pack("{s:b,s:s,s:I,s:o,s:O,s:o}", "todo", (int)todo, "reason", reason, "restarts",
			 (json_int_t)restarts, "retry", limit > 0 ? json_integer(limit) : json_null(), "runs", runs,
			 "retry_verdict", v ? json_string(v) : json_null());
	rc = *out ? 0 : ERR_NOMEM;
out:
	json_decref(runs);
	free(reason);
	free(v);
	return rc;
}

int review_group_carry_over(struct db *db, int64_t group_id, bool *on)
{
	int64_t v = 1;
	int rc = db_query_int(db, &v, "SELECT carry_over_bugrefs FROM job_groups WHERE id = ?", "i", group_id);

	*on = v != 0;
	return rc;
}

int review_group_set_carry_over(struct db *db, int64_t group_id, bool on)
{
	int rc = db_exec(db, "UPDATE job_groups SET carry_over_bugrefs = ? WHERE id = ?", "ii", (int64_t)on, group_id);

	return rc < 0 ? rc : rc == 0 ? ERR_NOT_FOUND : 0;
}
