/* SPDX-License-Identifier: MIT */
/* deps.c - dependencies between jobs: the verdict rule, edges (cycles
 * refused with a recursive query), blocking (jobs.blocked_by_id, which the
 * scheduler honours), parallel clusters, and the consequences of a job
 * ending: waiting children moved to its clone when it was cloned, else
 * unblocked when it passed or softfailed, else ended cancelled/skipped as
 * openQA does, down the whole chain; a job that ended not ok stops the rest
 * of its parallel cluster. Portable SQL with bound parameters. */
#define LOG_MODULE "deps"
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "server/db/db.h"
#include "server/store/deps.h"
#include "util/err.h"
#include "util/log.h"
#include "util/banned.h" /* last: after every system header */

bool deps_state_final(const char *state)
{
	return state && (!strcmp(state, "done") || !strcmp(state, "cancelled"));
}

bool deps_result_ok(const char *result)
{
	return result && (!strcmp(result, "passed") || !strcmp(result, "softfailed"));
}

enum deps_verdict deps_parent_verdict(const char *state, const char *result)
{
	if (!deps_state_final(state))
		return DEPS_WAIT;
	return deps_result_ok(result) ? DEPS_READY : DEPS_SKIP;
}

/* Copy s[0..n) without surrounding spaces; ERR_INVALID when empty or too long. */
static int trimmed(const char *s, size_t n, char out[DEPS_MAX_ENTRY])
{
	while (n && isspace((unsigned char)*s)) {
		s++;
		n--;
	}
	while (n && isspace((unsigned char)s[n - 1]))
		n--;
	if (n == 0 || n >= DEPS_MAX_ENTRY || memchr(s, '\0', n))
		return ERR_INVALID;
	memcpy(out, s, n);
	out[n] = '\0';
	return 0;
}

int deps_parse_entry(const char *entry, size_t len, const char *def_machine, char test[DEPS_MAX_ENTRY],
		     char machine[DEPS_MAX_ENTRY])
{
	const char *sep = memchr(entry, '@', len);

	if (!sep)
		sep = memchr(entry, ':', len); /* the legacy form test:machine */
	if (!sep) {
		if (trimmed(entry, len, test))
			return ERR_INVALID;
		return def_machine && *def_machine ? trimmed(def_machine, strlen(def_machine), machine) : ERR_INVALID;
	}
	if (trimmed(entry, (size_t)(sep - entry), test) ||
	    trimmed(sep + 1, len - (size_t)(sep - entry) - 1, machine))
		return ERR_INVALID;
	return 0;
}

/* State and result of a job into the caller's buffers. 1 found, 0 not, or a db error. */
static int job_state(struct db *db, int64_t id, char state[16], char result[24], int64_t *clone)
{
	struct db_stmt *st;
	int rc = db_prepare(db, &st, "SELECT state, result, clone_id FROM jobs WHERE id = ?", "i", id);

	if (rc)
		return rc;
	rc = db_step(st);
	if (rc == 1) {
		snprintf(state, 16, "%s", db_col_text(st, 0));
		snprintf(result, 24, "%s", db_col_text(st, 1));
		if (clone)
			*clone = db_col_null(st, 2) ? 0 : db_col_int(st, 2);
	}
	db_finalize(st);
	return rc;
}

int deps_add(struct db *db, int64_t parent, int64_t child, int type, char *msg, size_t msglen)
{
	char state[16], result[24];
	int64_t n = 0;
	int rc;

	if (parent == child) {
		snprintf(msg, msglen, "job %lld cannot depend on itself", (long long)child);
		return ERR_INVALID;
	}
	/* In a transaction the parent's row stays locked until its end: the
	 * parent cannot end (and release its children, not seeing this one
	 * yet) between the state read here and the commit. */
	if ((rc = db_lock_row(db, "jobs", parent)) < 0)
		return rc;
	rc = job_state(db, parent, state, result, NULL);
	if (rc <= 0) {
		snprintf(msg, msglen, "parent job %lld does not exist", (long long)parent);
		return rc == 0 ? ERR_NOT_FOUND : rc;
	}
	/* The child must not already be an ancestor of the parent. */
	rc = db_query_int(db, &n,
			  "WITH RECURSIVE anc(id) AS (SELECT ? UNION SELECT d.parent_job_id FROM job_dependencies d"
			  " JOIN anc ON d.child_job_id = anc.id) SELECT COUNT(*) FROM anc WHERE id = ?",
			  "ii", parent, child);
	if (rc)
		return rc;
	if (n > 0) {
		snprintf(msg, msglen, "job %lld after job %lld would close a dependency cycle", (long long)child,
			 (long long)parent);
		return ERR_INVALID;
	}
	rc = db_exec(db, "INSERT INTO job_dependencies (parent_job_id, child_job_id, dependency) VALUES (?, ?, ?)"
		     " ON CONFLICT DO NOTHING", "iii", parent, child, (int64_t)type);
	if (rc < 0)
		return rc;
	if (type != DEPS_CHAINED && type != DEPS_DIRECTLY_CHAINED)
		return 0;
	return deps_update_child(db, child);
}

static int update_child(struct db *db, int64_t child, int depth);

/* End the scheduled job child as cancelled/skipped because parent ended
 * with result (the caller then handles the child's own children). */
static int skip(struct db *db, int64_t child, int64_t parent, const char *result)
{
	char now[DB_TIME_LEN], reason[128];
	int rc;

	db_now(now);
	snprintf(reason, sizeof(reason), "skipped: parent job %lld ended %s", (long long)parent, result);
	rc = db_exec(db, "UPDATE jobs SET state = 'cancelled', result = 'skipped', reason = ?, blocked_by_id = NULL,"
		     " t_finished = ?, t_updated = ? WHERE id = ? AND state = 'scheduled'", "ttti", reason, now, now, child);
	if (rc <= 0)
		return rc;
	log_info("job %lld: %s", (long long)child, reason);
	return 0;
}

int deps_children(struct db *db, int64_t job_id, enum deps_which which, int64_t **ids, size_t *n)
{
	static const char *const sql[] = {
		"SELECT DISTINCT child_job_id FROM job_dependencies WHERE parent_job_id = ? ORDER BY 1",
		"SELECT DISTINCT d.child_job_id FROM job_dependencies d JOIN jobs j ON j.id = d.child_job_id"
		" WHERE d.parent_job_id = ? AND d.dependency IN (1, 3) AND j.state = 'scheduled' ORDER BY 1",
		"SELECT DISTINCT d.child_job_id FROM job_dependencies d JOIN jobs j ON j.id = d.child_job_id"
		" WHERE d.parent_job_id = ? AND d.dependency IN (1, 3) AND j.result = 'skipped'"
		" AND j.clone_id IS NULL ORDER BY 1",
	};
	struct db_stmt *st;
	size_t cap = 0;
	int rc;

	*ids = NULL;
	*n = 0;
	if ((rc = db_prepare(db, &st, sql[which], "i", job_id)))
		return rc;
	while ((rc = db_step(st)) == 1 && *n < DEPS_MAX_CHILDREN) {
		if (*n == cap) {
			size_t ncap = cap ? 2 * cap : 16;
			int64_t *v = realloc(*ids, ncap * sizeof(*v));
			if (!v) {
				rc = ERR_NOMEM;
				break;
			}
			*ids = v;
			cap = ncap;
		}
		(*ids)[(*n)++] = db_col_int(st, 0);
	}
	db_finalize(st);
	if (rc < 0) {
		free(*ids);
		*ids = NULL;
		*n = 0;
		return rc;
	}
	return 0;
}

static int cmp_id(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

int deps_cluster(struct db *db, int64_t job_id, int64_t ids[DEPS_MAX_CLUSTER], size_t *n)
{
	size_t head, i;
	int rc = 0;

	ids[0] = job_id;
	*n = 1;
	for (head = 0; head < *n; head++) {
		struct db_stmt *st;
		if ((rc = db_prepare(db, &st, "SELECT child_job_id FROM job_dependencies WHERE parent_job_id = ?"
				     " AND dependency = ? UNION SELECT parent_job_id FROM job_dependencies"
				     " WHERE child_job_id = ? AND dependency = ?", "iiii", ids[head],
				     (int64_t)DEPS_PARALLEL, ids[head], (int64_t)DEPS_PARALLEL)))
			return rc;
		while ((rc = db_step(st)) == 1) {
			int64_t id = db_col_int(st, 0);
			bool seen = false;
			for (i = 0; i < *n && !seen; i++)
				seen = ids[i] == id;
			if (!seen && *n < DEPS_MAX_CLUSTER)
				ids[(*n)++] = id;
		}
		db_finalize(st);
		if (rc < 0)
			return rc;
	}
	qsort(ids, *n, sizeof(ids[0]), cmp_id);
	return 0;
}

static int job_final(struct db *db, int64_t job_id, int depth);

/* deps_stop_cluster for job_id, which ended with result. */
static int stop_cluster(struct db *db, int64_t job_id, const char *result, int depth, int *stopped)
{
	int64_t ids[DEPS_MAX_CLUSTER], skipped[DEPS_MAX_CLUSTER];
	char now[DB_TIME_LEN], reason[160];
	size_t n = 0, ns = 0, i;
	int rc;

	if ((rc = deps_cluster(db, job_id, ids, &n)))
		return rc;
	db_now(now);
	/* Every relative first, then the consequences: a skipped relative's own
	 * stop must not re-stop the others with itself as the reason. */
	for (i = 0; i < n; i++) {
		if (ids[i] == job_id)
			continue;
		snprintf(reason, sizeof(reason), "skipped: parallel job %lld ended %s", (long long)job_id, result);
		rc = db_exec(db, "UPDATE jobs SET state = 'cancelled', result = 'skipped', reason = ?, blocked_by_id = NULL,"
			     " t_finished = ?, t_updated = ? WHERE id = ? AND result = 'none'"
			     " AND state IN ('scheduled', 'assigned')", "ttti", reason, now, now, ids[i]);
		if (rc > 0) {
			log_info("job %lld: %s", (long long)ids[i], reason);
			skipped[ns++] = ids[i];
			rc = db_exec(db, "UPDATE workers SET job_id = NULL WHERE job_id = ?", "i", ids[i]);
		} else if (rc == 0) {
			snprintf(reason, sizeof(reason), "parallel job %lld ended %s", (long long)job_id, result);
			rc = db_exec(db, "UPDATE jobs SET result = 'parallel_failed', reason = COALESCE(reason, ?),"
				     " t_updated = ? WHERE id = ? AND result = 'none' AND state IN ('setup', 'running',"
				     " 'uploading')", "tti", reason, now, ids[i]);
			if (rc > 0)
				log_info("job %lld: parallel_failed (%s)", (long long)ids[i], reason);
		}
		if (rc < 0)
			return rc;
		if (rc > 0 && stopped)
			(*stopped)++;
	}
	for (i = 0; i < ns; i++)
		if ((rc = job_final(db, skipped[i], depth + 1)) < 0)
			return rc;
	return 0;
}

int deps_stop_cluster(struct db *db, int64_t job_id, int *stopped)
{
	char state[16], result[24];
	int rc = job_state(db, job_id, state, result, NULL);

	if (stopped)
		*stopped = 0;
	if (rc <= 0)
		return rc == 0 ? ERR_NOT_FOUND : rc;
	return stop_cluster(db, job_id, result, 0, stopped);
}

static int job_final(struct db *db, int64_t job_id, int depth)
{
	int64_t *kids = NULL, clone = 0;
	char state[16], result[24];
	size_t n = 0, i;
	int rc;

	if (depth > DEPS_MAX_DEPTH)
		return 0; /* deeper than any real chain: leave the rest blocked */
	rc = job_state(db, job_id, state, result, &clone);
	if (rc <= 0)
		return rc;
	if (!deps_state_final(state) && !clone)
		return 0;
	/* openQA's cancel_other_jobs_in_cluster: a job that did not end ok
	 * takes its parallel relatives with it. */
	if (deps_state_final(state) && !deps_result_ok(result) && (rc = stop_cluster(db, job_id, result, depth, NULL)))
		return rc;
	if ((rc = deps_children(db, job_id, DEPS_WAITING, &kids, &n)))
		return rc;
	for (i = 0; i < n && !rc; i++) {
		if (clone) {
			/* A cloned (restarted) parent: its waiting children wait for the
			 * clone, as openQA reroutes them on duplicate. */
			rc = db_exec(db, "UPDATE job_dependencies SET parent_job_id = ? WHERE parent_job_id = ?"
				     " AND child_job_id = ? AND NOT EXISTS (SELECT 1 FROM job_dependencies e WHERE"
				     " e.parent_job_id = ? AND e.child_job_id = ? AND e.dependency = job_dependencies.dependency)",
				     "iiiii", clone, job_id, kids[i], clone, kids[i]);
			if (rc >= 0)
				rc = db_exec(db, "DELETE FROM job_dependencies WHERE parent_job_id = ? AND child_job_id = ?",
					     "ii", job_id, kids[i]);
			if (rc < 0)
				break;
			log_info("job %lld: now waits for job %lld, the clone of job %lld", (long long)kids[i],
				 (long long)clone, (long long)job_id);
		}
		rc = update_child(db, kids[i], depth + 1);
	}
	free(kids);
	return rc < 0 ? rc : 0;
}

static int update_child(struct db *db, int64_t child, int depth)
{
	struct db_stmt *st;
	int64_t wait_on = 0, skip_on = 0;
	char skip_result[24] = "";
	int rc, seen = 0;

	rc = db_prepare(db, &st,
			"SELECT p.id, p.state, p.result FROM job_dependencies d JOIN jobs p ON p.id = d.parent_job_id"
			" WHERE d.child_job_id = ? AND d.dependency IN (1, 3) ORDER BY p.id", "i", child);
	if (rc)
		return rc;
	while ((rc = db_step(st)) == 1 && seen++ < DEPS_MAX_PARENTS) {
		enum deps_verdict v = deps_parent_verdict(db_col_text(st, 1), db_col_text(st, 2));
		if (v == DEPS_SKIP && !skip_on) {
			skip_on = db_col_int(st, 0);
			snprintf(skip_result, sizeof(skip_result), "%s", db_col_text(st, 2));
		} else if (v == DEPS_WAIT && !wait_on) {
			wait_on = db_col_int(st, 0);
		}
	}
	db_finalize(st);
	if (rc < 0)
		return rc;
	if (skip_on) {
		if ((rc = skip(db, child, skip_on, skip_result)) < 0)
			return rc;
		return job_final(db, child, depth + 1);
	}
	rc = db_exec(db, "UPDATE jobs SET blocked_by_id = ? WHERE id = ? AND state = 'scheduled'", "Ii", wait_on, child);
	return rc < 0 ? rc : 0;
}

int deps_update_child(struct db *db, int64_t child)
{
	return update_child(db, child, 0);
}

int deps_job_final(struct db *db, int64_t job_id)
{
	return job_final(db, job_id, 0);
}

int deps_parents_ok(struct db *db, int64_t job_id)
{
	int64_t bad = 0;

	if (db_query_int(db, &bad,
			 "SELECT COUNT(*) FROM job_dependencies d JOIN jobs p ON p.id = d.parent_job_id"
			 " WHERE d.child_job_id = ? AND d.dependency IN (1, 3)"
			 " AND (p.state NOT IN ('done', 'cancelled') OR p.result NOT IN ('passed', 'softfailed'))",
			 "i", job_id))
		return 1;
	return bad == 0;
}
