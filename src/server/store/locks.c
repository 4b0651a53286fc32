/* SPDX-License-Identifier: MIT */
/* locks.c - openQA's lock and multi-machine API for running jobs, as
 * os-autoinst's lockapi and mmapi call it: job tokens (X-API-JobToken), mutexes and barriers in
 * job_locks with openQA's rules (a lock is found among the job's own and
 * its parents', or its children's too, or one named job's; locking is
 * optimistic: a conditional UPDATE, retried when another job changed the
 * row first); a job's parallel relatives; the relay network's hub
 * addresses and per-cluster secret. Portable SQL with bound
 * parameters. */
#define LOG_MODULE "locks"
#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "server/db/db.h"
#include "server/store/deps.h"
#include "server/store/locks.h"
#include "util/err.h"
#include "util/log.h"
#include "util/banned.h" /* last: after every system header */

#define LOCKS_RETRIES 16 /* conditional updates lost to other jobs before giving up */

int locks_token_issue(struct db *db, int64_t job_id, char token[LOCKS_TOKEN_LEN + 1])
{
	unsigned char raw[LOCKS_TOKEN_LEN / 2];
	size_t i;
	int rc;

	if (RAND_bytes(raw, (int)sizeof(raw)) != 1)
		return ERR_IO;
	for (i = 0; i < sizeof(raw); i++)
		snprintf(token + 2 * i, 3, "%02x", raw[i]);
	rc = db_exec(db, "DELETE FROM job_tokens WHERE job_id = ?", "i", job_id);
	if (rc >= 0)
		rc = db_exec(db, "INSERT INTO job_tokens (job_id, token) VALUES (?, ?)", "it", job_id, token);
	return rc < 0 ? rc : 0;
}

int locks_token_job(struct db *db, const char *token, int64_t *job_id)
{
	if (!token || strlen(token) != LOCKS_TOKEN_LEN)
		return ERR_NOT_FOUND;
	return db_query_int(db, job_id,
			    "SELECT t.job_id FROM job_tokens t JOIN jobs j ON j.id = t.job_id"
			    " WHERE t.token = ? AND j.state NOT IN ('done', 'cancelled')",
			    "t", token);
}

bool locks_name_valid(const char *name)
{
	const char *p;

	if (!name || !*name || strlen(name) > 255)
		return false;
	for (p = name; *p; p++)
		if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || *p == '_'))
			return false;
	return true;
}

/* A lock row as found. */
struct lock_row {
	int64_t id, owner, count;
	char *locked_by; /* owned, NULL when not locked */
};

/* The first lock named name among the owners where says (see locks.h):
 * 1 and *row, 0 when there is none, or an error. */
static int find(struct db *db, const char *name, int64_t job_id, const char *where, struct lock_row *row)
{
	struct db_stmt *st = NULL;
	int rc;

	memset(row, 0, sizeof(*row));
	if (where && *where && strcmp(where, "all")) {
		char *end;
		long long w = strtoll(where, &end, 10);
		if (*end || w <= 0)
			return ERR_INVALID;
		rc = db_prepare(db, &st,
				"SELECT id, owner, count, locked_by FROM job_locks WHERE name = ? AND owner = ?"
				" ORDER BY id LIMIT 1",
				"ti", name, (int64_t)w);
	} else {
		bool all = where && !strcmp(where, "all");
		rc = db_prepare(db, &st,
				"SELECT id, owner, count, locked_by FROM job_locks WHERE name = ? AND (owner = ?"
				" OR owner IN (SELECT parent_job_id FROM job_dependencies WHERE child_job_id = ?)"
				" OR (? = 1 AND owner IN (SELECT child_job_id FROM job_dependencies"
				" WHERE parent_job_id = ?))) ORDER BY id LIMIT 1",
				"tiiii", name, job_id, job_id, (int64_t)all, job_id);
	}
	if (rc)
		return rc;
	rc = db_step(st);
	if (rc == 1) {
		const char *lb = db_col_text(st, 3);
		row->id = db_col_int(st, 0);
		row->owner = db_col_int(st, 1);
		row->count = db_col_int(st, 2);
		if (lb && *lb && !(row->locked_by = strdup(lb)))
			rc = ERR_NOMEM;
	}
	db_finalize(st);
	return rc;
}

/* Set locked_by (NULL: unlocked) when it is still old: rows changed (0 when
 * another job changed it first) or an error. */
static int swap(struct db *db, int64_t id, const char *old, const char *val)
{
	return db_exec(db, "UPDATE job_locks SET locked_by = ? WHERE id = ? AND COALESCE(locked_by, '') = ?", "tit",
		       val, id, old ? old : "");
}

int locks_mutex_create(struct db *db, const char *name, int64_t job_id)
{
	struct lock_row row;
	int rc = find(db, name, job_id, "all", &row);

	free(row.locked_by);
	if (rc != 0)
		return rc == 1 ? 0 : rc;
	rc = db_exec(db, "INSERT INTO job_locks (name, owner) VALUES (?, ?)", "ti", name, job_id);
	return rc == ERR_INVALID ? 0 : rc < 0 ? rc : 1; /* a unique conflict: another created it first */
}

/* Whether the job where names has ended (its lock can never come). */
static int where_ended(struct db *db, const char *where)
{
	struct db_stmt *st = NULL;
	int rc;

	if (!where || !*where || !strcmp(where, "all"))
		return 0;
	if ((rc = db_prepare(db, &st, "SELECT state FROM jobs WHERE id = ?", "i", (int64_t)strtoll(where, NULL, 10))))
		return rc;
	rc = db_step(st);
	if (rc == 1)
		rc = deps_state_final(db_col_text(st, 0)) ? 1 : 0;
	db_finalize(st);
	return rc;
}

int locks_mutex_lock(struct db *db, const char *name, int64_t job_id, const char *where)
{
	char me[24];
	int tries, rc = 0;

	snprintf(me, sizeof(me), "%lld", (long long)job_id);
	for (tries = 0; tries < LOCKS_RETRIES; tries++) {
		struct lock_row row;
		if ((rc = find(db, name, job_id, where, &row)) < 0)
			return rc;
		if (rc == 0) {
			rc = where_ended(db, where);
			return rc < 0 ? rc : rc ? -1 : 0;
		}
		if (row.locked_by) {
			rc = !strcmp(row.locked_by, me);
			free(row.locked_by);
			return rc;
		}
		rc = swap(db, row.id, NULL, me);
		if (rc != 0)
			return rc < 0 ? rc : 1;
	}
	return 0; /* lost every race: try later */
}

int locks_mutex_unlock(struct db *db, const char *name, int64_t job_id, const char *where)
{
	char me[24];
	struct lock_row row;
	int rc = find(db, name, job_id, where, &row);

	if (rc <= 0)
		return rc;
	snprintf(me, sizeof(me), "%lld", (long long)job_id);
	if (!row.locked_by)
		rc = 1;
	else if (strcmp(row.locked_by, me))
		rc = 0;
	else
		rc = swap(db, row.id, me, NULL) < 0 ? ERR_IO : 1;
	free(row.locked_by);
	return rc;
}

int locks_barrier_create(struct db *db, const char *name, int64_t job_id, int64_t tasks)
{
	struct lock_row row;
	int rc;

	if (tasks <= 0)
		return 0;
	rc = find(db, name, job_id, "all", &row);
	free(row.locked_by);
	if (rc != 0)
		return rc == 1 ? 0 : rc;
	rc = db_exec(db, "INSERT INTO job_locks (name, owner, count) VALUES (?, ?, ?)", "tii", name, job_id, tasks);
	return rc == ERR_INVALID ? 0 : rc < 0 ? rc : 1;
}

/* How many of the comma-separated ids in list; whether id is among them. */
static int64_t list_count(const char *list, const char *id, bool *has)
{
	int64_t n = 0;
	size_t il = strlen(id);
	const char *p = list;

	*has = false;
	while (p && *p) {
		const char *c = strchr(p, ',');
		size_t l = c ? (size_t)(c - p) : strlen(p);
		if (l) {
			n++;
			if (l == il && !strncmp(p, id, l))
				*has = true;
		}
		p = c ? c + 1 : NULL;
	}
	return n;
}

/* Whether one of the jobs is over with a result that is not ok: the
 * waiting job, those that reached the barrier, the owner's parents and
 * children (check_dead_job). 1, 0 or an error. */
static int any_dead(struct db *db, int64_t job_id, int64_t owner, const char *waiting)
{
	struct db_stmt *st = NULL;
	int rc;

	rc = db_prepare(db, &st,
			"SELECT result FROM jobs WHERE id = ? OR (',' || ? || ',') LIKE ('%,' || id || ',%')"
			" OR id IN (SELECT parent_job_id FROM job_dependencies WHERE child_job_id = ?)"
			" OR id IN (SELECT child_job_id FROM job_dependencies WHERE parent_job_id = ?)",
			"itii", job_id, waiting ? waiting : "", owner, owner);
	if (rc)
		return rc;
	while ((rc = db_step(st)) == 1) {
		const char *res = db_col_text(st, 0);
		if (res && (!strcmp(res, "failed") || !strcmp(res, "incomplete") || !strcmp(res, "timeout_exceeded") ||
			    !strcmp(res, "skipped") || !strcmp(res, "parallel_failed") ||
			    !strcmp(res, "parallel_restarted") || !strcmp(res, "user_cancelled") ||
			    !strcmp(res, "user_restarted") || !strcmp(res, "obsoleted"))) {
			rc = 1;
			break;
		}
	}
	db_finalize(st);
	return rc;
}

int locks_barrier_wait(struct db *db, const char *name, int64_t job_id, const char *where, bool check_dead_job)
{
	char me[24];
	int tries, rc = 0;

	snprintf(me, sizeof(me), "%lld", (long long)job_id);
	for (tries = 0; tries < LOCKS_RETRIES; tries++) {
		struct lock_row row;
		bool has;
		int64_t n;
		char *joined;
		size_t len;

		if ((rc = find(db, name, job_id, where, &row)) <= 0)
			return rc < 0 ? rc : -1;
		if (check_dead_job) {
			rc = any_dead(db, job_id, row.owner, row.locked_by);
			if (rc == 1)
				rc = db_exec(db, "DELETE FROM job_locks WHERE id = ?", "i", row.id) < 0 ? ERR_IO : -1;
			if (rc != 0) {
				free(row.locked_by);
				return rc;
			}
		}
		n = list_count(row.locked_by, me, &has);
		if (has) {
			free(row.locked_by);
			return n == row.count;
		}
		len = (row.locked_by ? strlen(row.locked_by) : 0) + sizeof(me) + 2;
		if (!(joined = malloc(len))) {
			free(row.locked_by);
			return ERR_NOMEM;
		}
		snprintf(joined, len, "%s%s%s", row.locked_by ? row.locked_by : "", row.locked_by ? "," : "", me);
		rc = swap(db, row.id, row.locked_by, joined);
		free(joined);
		free(row.locked_by);
		if (rc < 0)
			return rc;
		if (rc > 0)
			return n + 1 == row.count;
	}
	return 0;
}

int locks_barrier_destroy(struct db *db, const char *name, int64_t job_id, const char *where)
{
	struct lock_row row;
	int rc = find(db, name, job_id, where, &row);

	free(row.locked_by);
	if (rc <= 0)
		return rc;
	rc = db_exec(db, "DELETE FROM job_locks WHERE id = ?", "i", row.id);
	return rc < 0 ? rc : rc > 0;
}

/* The rows of a prepared statement (finalized here) into a new array of
 * ids, or with a second text column, a new object {"id": text}. */
static int id_rows(struct db_stmt *st, bool as_map, json_t **out)
{
	json_t *o = as_map ? json_object() : json_array();
	int rc;

	*out = NULL;
	if (!o) {
		db_finalize(st);
		return ERR_NOMEM;
	}
	while ((rc = db_step(st)) == 1) {
		int64_t id = db_col_int(st, 0);
		if (as_map) {
			char key[24];
			const char *v = db_col_text(st, 1);
			snprintf(key, sizeof(key), "%lld", (long long)id);
			if (json_object_set_new(o, key, json_string(v ? v : "")))
				rc = ERR_NOMEM; /* a job missing from the answer */
		} else if (json_array_append_new(o, json_integer((json_int_t)id))) {
			rc = ERR_NOMEM;
		}
		if (rc < 0)
			break;
	}
	db_finalize(st);
	if (rc < 0) {
		json_decref(o);
		return rc;
	}
	*out = o;
	return 0;
}

int locks_mm_children_in(struct db *db, int64_t job_id, const char *state, json_t **out)
{
	const char *s = state && (!strcmp(state, "running") || !strcmp(state, "scheduled")) ? state : "done";
	struct db_stmt *st = NULL;
	int rc = db_prepare(db, &st,
			    "SELECT DISTINCT j.id FROM jobs j JOIN job_dependencies d ON d.child_job_id = j.id"
			    " WHERE d.parent_job_id = ? AND j.state = ? ORDER BY j.id",
			    "it", job_id, s);

	*out = NULL;
	return rc ? rc : id_rows(st, false, out);
}

int locks_mm_children(struct db *db, int64_t job_id, json_t **out)
{
	struct db_stmt *st = NULL;
	int rc = db_prepare(db, &st,
			    "SELECT j.id, j.state FROM jobs j JOIN job_dependencies d ON d.child_job_id = j.id"
			    " WHERE d.parent_job_id = ? AND d.dependency = ? ORDER BY j.id",
			    "ii", job_id, (int64_t)DEPS_PARALLEL);

	*out = NULL;
	return rc ? rc : id_rows(st, true, out);
}

int locks_mm_parents(struct db *db, int64_t job_id, json_t **out)
{
	struct db_stmt *st = NULL;
	int rc = db_prepare(db, &st,
			    "SELECT d.parent_job_id FROM job_dependencies d WHERE d.child_job_id = ? AND d.dependency = ?"
			    " ORDER BY d.parent_job_id",
			    "ii", job_id, (int64_t)DEPS_PARALLEL);

	*out = NULL;
	return rc ? rc : id_rows(st, false, out);
}

int locks_relay_set(struct db *db, int64_t job_id, const char *addr)
{
	int rc = db_begin(db);

	if (rc)
		return rc;
	/* The job's row serialises writers of its address: a delete and insert
	 * of two at once would leave two rows. */
	rc = db_lock_row(db, "jobs", job_id);
	if (rc >= 0)
		rc = db_exec(db, "DELETE FROM job_settings WHERE job_id = ? AND key = 'NICRELAY_ADDR'", "i", job_id);
	if (rc >= 0)
		rc = db_exec(db, "INSERT INTO job_settings (job_id, key, value) VALUES (?, 'NICRELAY_ADDR', ?)", "it",
			     job_id, addr);
	if (rc < 0) {
		(void)db_rollback(db);
		return rc;
	}
	return db_commit(db);
}

int locks_relay_peers(struct db *db, int64_t job_id, json_t **out)
{
	int64_t ids[DEPS_MAX_CLUSTER];
	size_t n = 0;
	json_t *o;
	int rc;

	*out = NULL;
	if ((rc = deps_cluster(db, job_id, ids, &n)))
		return rc;
	if (!(o = json_object()))
		return ERR_NOMEM;
	for (size_t i = 0; i < n && rc >= 0; i++) {
		struct db_stmt *st = NULL;
		if (ids[i] == job_id)
			continue;
		rc = db_prepare(db, &st, "SELECT value FROM job_settings WHERE job_id = ? AND key = 'NICRELAY_ADDR'",
				"i", ids[i]);
		if (!rc && (rc = db_step(st)) == 1) {
			char key[24];
			const char *v = db_col_text(st, 0);
			snprintf(key, sizeof(key), "%lld", (long long)ids[i]);
			rc = json_object_set_new(o, key, json_string(v ? v : "")) ? ERR_NOMEM : 0; /* a peer lost */
		}
		db_finalize(st);
	}
	if (rc < 0) {
		json_decref(o);
		return rc;
	}
	*out = o;
	return 0;
}

int locks_relay_secret(struct db *db, int64_t job_id, char out[LOCKS_RELAY_SECRET_LEN + 1])
{
	int64_t ids[DEPS_MAX_CLUSTER];
	unsigned char raw[LOCKS_RELAY_SECRET_LEN / 2];
	char fresh[LOCKS_RELAY_SECRET_LEN + 1];
	struct db_stmt *st = NULL;
	size_t n = 0;
	int rc;

	out[0] = '\0';
	if ((rc = deps_cluster(db, job_id, ids, &n)))
		return rc;
	if (n == 0)
		ids[0] = job_id;
	if (RAND_bytes(raw, (int)sizeof(raw)) != 1)
		return ERR_IO;
	for (size_t i = 0; i < sizeof(raw); i++)
		snprintf(fresh + 2 * i, 3, "%02x", raw[i]);
	/* Members asking at once: the first insert wins, all read it. */
	rc = db_exec(db, "INSERT INTO relay_secrets (job_id, secret) VALUES (?, ?) ON CONFLICT DO NOTHING", "it",
		     ids[0], fresh);
	OPENSSL_cleanse(fresh, sizeof(fresh));
	OPENSSL_cleanse(raw, sizeof(raw));
	if (rc < 0)
		return rc;
	if ((rc = db_prepare(db, &st, "SELECT secret FROM relay_secrets WHERE job_id = ?", "i", ids[0])))
		return rc;
	if ((rc = db_step(st)) == 1) {
		const char *v = db_col_text(st, 0);
		if (v && strlen(v) == LOCKS_RELAY_SECRET_LEN) {
			memcpy(out, v, LOCKS_RELAY_SECRET_LEN + 1);
			rc = 0;
		} else {
			rc = ERR_PROTO;
		}
	} else if (rc == 0) {
		rc = ERR_NOT_FOUND;
	}
	db_finalize(st);
	return rc;
}
