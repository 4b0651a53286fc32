/* SPDX-License-Identifier: MIT */
/* sched.c - the scheduler: which scheduled, unblocked job a worker gets
 * (WORKER_CLASS values all offered, lowest priority number first, then
 * lowest id) and its assignment. A re-run pinned to a worker (rerun.c) is
 * offered only to that worker until its pin is released. A job of a
 * parallel cluster goes only with the whole cluster, each job reserved for
 * a distinct free worker at once (openQA's all-or-nothing), or alone when a
 * relative already runs (openQA's _pick_siblings_of_running); a reserved
 * job is handed to its worker at that worker's next poll; a cluster with
 * PARALLEL_ONE_HOST_ONLY takes workers of one host only; a cluster short of
 * workers gains openQA's priority bonus (jobs.sched_bonus) and, once its
 * priority with the bonus reaches 0, holds the workers that ask. A job
 * directly chained after another (START_DIRECTLY_AFTER_TEST) goes to the
 * worker that ran its parent, first, while that worker is alive. Reads
 * worker and job rows, writes the assignment, bonuses and released pins;
 * never called with a transaction open by the caller. */
#define LOG_MODULE "sched"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "server/db/db.h"
#include "server/store/deps.h"
#include "server/store/jobs.h"
#include "server/store/rerun.h"
#include "server/sched/sched.h"
#include "server/store/workers.h"
#include "util/err.h"
#include "util/log.h"
#include "util/banned.h" /* last: after every system header */

#define SCHED_MAX_CLASSES 32
#define SCHED_MAX_FREE 256 /* free workers looked at for one parallel cluster */
#define SCHED_FIRST_READ 16 /* candidates read first; the rest of the scan only when none was taken */

static bool class_offered(const char *offered, const char *cls)
{
	size_t n = strlen(cls);
	const char *p = offered;

	while (p && *p) {
		size_t len = strcspn(p, ",");
		if (len == n && !strncmp(p, cls, n))
			return true;
		p += len + (p[len] == ',');
	}
	return false;
}

bool sched_classes_match(const char *offered, const char *const *needed, size_t n)
{
	size_t i;

	if (!offered || n == 0)
		return false;
	for (i = 0; i < n; i++)
		if (!needed[i] || !*needed[i] || !class_offered(offered, needed[i]))
			return false;
	return true;
}

/* Classes of one job (one job_settings row each) into cls (strings owned).
 * All of them or none: a class left out would match a worker that lacks it
 * (docs/hardening.md, out of memory). 0, ERR_NOMEM or a db error. */
static int job_classes(struct db *db, int64_t job_id, char **cls, size_t *n)
{
	struct db_stmt *st;
	int rc;

	*n = 0;
	rc = db_prepare(db, &st, "SELECT value FROM job_settings WHERE job_id = ? AND key = 'WORKER_CLASS'", "i",
			job_id);
	if (rc)
		return rc;
	while ((rc = db_step(st)) == 1) {
		if (*n >= SCHED_MAX_CLASSES)
			continue; /* more classes than any worker offers: cannot match anyway */
		if (!(cls[*n] = strdup(db_col_text(st, 0)))) {
			rc = ERR_NOMEM;
			break;
		}
		(*n)++;
	}
	db_finalize(st);
	if (rc < 0) {
		while (*n)
			free(cls[--*n]);
		return rc;
	}
	return 0;
}

/* Whether worker_id offers every class of job_id. 1, 0 or a db error. */
static int worker_fits(struct db *db, const char *offered, int64_t job_id)
{
	char *cls[SCHED_MAX_CLASSES];
	size_t n = 0, k;
	bool match;
	int rc = job_classes(db, job_id, cls, &n);

	if (rc)
		return rc;
	match = sched_classes_match(offered, (const char *const *)cls, n);
	for (k = 0; k < n; k++)
		free(cls[k]);
	return match;
}

/* Assign job_id to worker_id; handed: the worker has it now (its job_id
 * set), else it is reserved for the worker's next poll. 1 assigned, 0 the
 * job was no longer scheduled, or a db error. */
static int assign(struct db *db, int64_t job_id, int64_t worker_id, bool handed)
{
	char now[DB_TIME_LEN];
	int rc;

	db_now(now);
	rc = db_exec_whole(db, "UPDATE jobs SET state = 'assigned', assigned_worker_id = ?, t_started = NULL,"
			   " t_updated = ? WHERE id = ? AND state = 'scheduled'", "iti", worker_id, now, job_id);
	if (rc <= 0 || !handed)
		return rc;
	rc = db_exec_whole(db, "UPDATE workers SET job_id = ? WHERE id = ?", "ii", job_id, worker_id);
	return rc < 0 ? rc : 1;
}

/* Where a candidate's parallel cluster stands. */
enum cluster_kind {
	CLUSTER_NONE,    /* no parallel relatives: the job alone */
	CLUSTER_READY,   /* every job scheduled, unblocked, not pinned: all at once */
	CLUSTER_RUNNING, /* a relative executes already: this job joins it */
	CLUSTER_WAIT,    /* some job is blocked, pinned or not schedulable */
};

/* job_id's parallel cluster into ids/n and where it stands. 0 or a db error. */
static int cluster_of(struct db *db, int64_t job_id, int64_t ids[DEPS_MAX_CLUSTER], size_t *n,
		      enum cluster_kind *kind)
{
	size_t i;
	int rc;

	*kind = CLUSTER_NONE;
	if ((rc = deps_cluster(db, job_id, ids, n)))
		return rc;
	if (*n <= 1)
		return 0;
	*kind = CLUSTER_READY;
	for (i = 0; i < *n; i++) {
		struct db_stmt *st;
		if (ids[i] == job_id)
			continue;
		if ((rc = db_prepare(db, &st, "SELECT state, blocked_by_id IS NULL AND resume_worker_id IS NULL"
				     " FROM jobs WHERE id = ?", "i", ids[i])))
			return rc;
		if ((rc = db_step(st)) == 1) {
			const char *state = db_col_text(st, 0);
			if (jobs_state_executing(state))
				*kind = CLUSTER_RUNNING;
			else if (*kind == CLUSTER_READY && (strcmp(state, "scheduled") || !db_col_int(st, 1)))
				*kind = CLUSTER_WAIT;
		}
		db_finalize(st);
		if (rc < 0)
			return rc;
		if (*kind == CLUSTER_RUNNING)
			return 0;
	}
	return 0;
}

/* Reserve a distinct free worker (online, idle, nothing assigned, not
 * worker_id) for every job of the cluster but first, in id order, each
 * offering the job's classes: workers[i] for ids[i] (0 for first); with
 * one_host only workers on worker_id's host; with busy_too busy ones count
 * as free (could the cluster ever run?). *taken: how many jobs got a
 * worker before one found none. 1 when every job got one, 0 when not, or a
 * db error. */
static int pick_workers(struct db *db, int64_t worker_id, const int64_t *ids, size_t n, int64_t first,
			bool one_host, bool busy_too, int64_t *workers, size_t *taken)
{
	struct { int64_t id; char *cls; } free_w[SCHED_MAX_FREE];
	size_t nf = 0, i, k;
	bool used[SCHED_MAX_FREE] = { false }, ok = true;
	struct db_stmt *st;
	int rc;

	if ((rc = db_prepare(db, &st, "SELECT w.id, w.worker_class FROM workers w WHERE w.id <> ? AND w.t_seen_s >= ?"
			     " AND (? = 1 OR (w.job_id IS NULL AND NOT EXISTS (SELECT 1 FROM jobs j"
			     " WHERE j.assigned_worker_id = w.id AND j.state IN ('assigned', 'setup', 'running', 'uploading'))))"
			     " AND (? = 0 OR w.host = (SELECT host FROM workers WHERE id = ?)) ORDER BY w.id",
			     "iiiii", worker_id, (int64_t)time(NULL) - WORKERS_DEFAULT_TIMEOUT_S, (int64_t)busy_too,
			     (int64_t)one_host, worker_id)))
		return rc;
	while ((rc = db_step(st)) == 1 && nf < SCHED_MAX_FREE) {
		free_w[nf].id = db_col_int(st, 0);
		/* A free worker left out could starve the cluster: none or all. */
		if (!(free_w[nf].cls = strdup(db_col_text(st, 1)))) {
			rc = ERR_NOMEM;
			break;
		}
		nf++;
	}
	db_finalize(st);
	for (i = 0; rc >= 0 && ok && i < n; i++) {
		workers[i] = 0;
		if (ids[i] == first)
			continue;
		for (k = 0; k < nf && !workers[i]; k++) {
			if (used[k])
				continue;
			if ((rc = worker_fits(db, free_w[k].cls, ids[i])) < 0)
				break;
			if (rc == 1) {
				used[k] = true;
				workers[i] = free_w[k].id;
			}
		}
		ok = workers[i] != 0; /* never half a cluster */
		if (ok)
			(*taken)++;
	}
	for (k = 0; k < nf; k++)
		free(free_w[k].cls);
	return rc < 0 ? rc : ok;
}

/* Whether some job of the cluster sets PARALLEL_ONE_HOST_ONLY true. 1, 0 or a db error. */
static int one_host_only(struct db *db, const int64_t *ids, size_t n)
{
	size_t i;
	int rc;

	for (i = 0; i < n; i++) {
		int64_t hit = 0;
		rc = db_query_int(db, &hit, "SELECT COUNT(*) FROM job_settings WHERE job_id = ?"
				  " AND key = 'PARALLEL_ONE_HOST_ONLY' AND value NOT IN ('', '0')", "i", ids[i]);
		if (rc)
			return rc;
		if (hit)
			return 1;
	}
	return 0;
}

/* A cluster that found too few free workers for first: openQA's protection
 * of large clusters against starvation. While first's priority less its
 * bonus is above 0, the bonus grows by the number of jobs that did get a
 * worker (so it sorts earlier next time); from 0 on, the asking worker is
 * held for the cluster (1: give it nothing else) when the live workers
 * could run it at all. 0 or 1, or a db error. */
static int starving(struct db *db, int64_t worker_id, int64_t first, const int64_t *ids, size_t n, bool one_host,
		    size_t taken)
{
	int64_t eff = 0, workers[DEPS_MAX_CLUSTER];
	size_t all = 1;
	int rc = db_query_int(db, &eff, "SELECT priority - sched_bonus FROM jobs WHERE id = ?", "i", first);

	if (rc)
		return rc == ERR_NOT_FOUND ? 0 : rc;
	if (eff <= 0) {
		/* Held only for a cluster the live workers could run, busy or not. */
		if ((rc = pick_workers(db, worker_id, ids, n, first, one_host, true, workers, &all)) <= 0)
			return rc;
		log_debug("worker held for job %lld: its parallel cluster waits for workers (priority %lld with bonus)",
			 (long long)first, (long long)eff);
		return 1;
	}
	if (taken == 0)
		return 0;
	rc = db_exec(db, "UPDATE jobs SET sched_bonus = sched_bonus + ? WHERE id = ?", "ii", (int64_t)taken, first);
	return rc < 0 ? rc : 0;
}

/* Assign first to worker_id and the rest of its ready cluster to the
 * workers picked, in one transaction. 1 done, 0 nothing (the cluster
 * changed meanwhile, or too few free workers), 2 too few and worker_id is
 * held for the cluster (starving), or a db error. */
static int assign_cluster(struct db *db, int64_t worker_id, int64_t first, const int64_t *ids, size_t n)
{
	int64_t workers[DEPS_MAX_CLUSTER];
	size_t i, taken = 1; /* first has worker_id */
	bool one_host;
	int rc;

	/* Serial: the free workers are read and then reserved, and no other
	 * assignment (of any server) may take one of them in between. */
	if ((rc = db_begin_serial(db)))
		return rc;
	rc = one_host_only(db, ids, n);
	one_host = rc == 1;
	if (rc >= 0)
		rc = pick_workers(db, worker_id, ids, n, first, one_host, false, workers, &taken);
	if (rc == 0) {
		rc = starving(db, worker_id, first, ids, n, one_host, taken);
		if (rc < 0 || db_commit(db)) {
			db_rollback(db);
			return rc < 0 ? rc : ERR_IO;
		}
		return rc == 1 ? 2 : 0;
	}
	for (i = 0; i < n && rc >= 0; i++) {
		rc = assign(db, ids[i], ids[i] == first ? worker_id : workers[i], ids[i] == first);
		if (rc > 0 && db_exec(db, "UPDATE jobs SET sched_bonus = 0 WHERE id = ?", "i", ids[i]) < 0)
			rc = -2;
		if (rc == 0)
			rc = -1; /* not scheduled any more: undo */
	}
	if (rc < 0) {
		db_rollback(db);
		return rc == -1 ? 0 : rc == -2 ? ERR_IO : rc;
	}
	if ((rc = db_commit(db))) {
		db_rollback(db);
		return rc;
	}
	for (i = 0; i < n; i++)
		log_info("job %lld assigned to worker %lld with its parallel cluster of %zu (job %lld)",
			 (long long)ids[i], (long long)(ids[i] == first ? worker_id : workers[i]), n, (long long)first);
	return 1;
}

/* The job reserved for worker_id with its parallel cluster and not handed
 * yet (by this or another server), into *reserved. 0, ERR_NOT_FOUND or a
 * db error. */
static int reserved_for(struct db *db, int64_t worker_id, int64_t *reserved)
{
	return db_query_int(db, reserved, "SELECT j.id FROM jobs j JOIN workers w ON w.id = j.assigned_worker_id"
			    " WHERE j.assigned_worker_id = ? AND j.state = 'assigned' AND w.job_id IS NULL ORDER BY j.id LIMIT 1",
			    "i", worker_id);
}

/* A job whose cluster runs already joins it on worker_id: with
 * PARALLEL_ONE_HOST_ONLY only when worker_id is on the host of a running
 * relative's worker. 1 yes, 0 no, or a db error. */
static int joins_host(struct db *db, int64_t worker_id, const int64_t *ids, size_t n)
{
	size_t i;
	int rc = one_host_only(db, ids, n);

	if (rc <= 0)
		return rc == 0 ? 1 : rc;
	for (i = 0; i < n; i++) {
		int64_t same = 0;
		rc = db_query_int(db, &same, "SELECT COUNT(*) FROM jobs j JOIN workers rw ON rw.id = j.assigned_worker_id"
				  " JOIN workers w ON w.id = ? WHERE j.id = ? AND j.state IN ('assigned', 'setup', 'running',"
				  " 'uploading') AND rw.host = w.host", "ii", worker_id, ids[i]);
		if (rc)
			return rc;
		if (same)
			return 1;
	}
	return 0;
}

/* Tries cand[0..count) in turn for worker_id (offering offered), inside
 * the serial transaction the caller opened (*in_tx), which read them: no
 * other assignment ran since, so a job read as scheduled is still so (a
 * poll that read its candidates outside the lock lost the race to every
 * poll queued before it for the same first jobs: issue 39). A job alone,
 * or joining its running cluster, is assigned in that transaction, left
 * open for the caller to commit; a ready cluster is assigned by
 * assign_cluster in its own, after this one is rolled back (nothing was
 * written in it), and when that fails the transaction is opened again.
 * 0 and *job_id when one was assigned, ERR_NOT_FOUND when none could be,
 * 1 when the worker gets nothing now (held for a starving cluster, or
 * reserved for one meanwhile), or a db error. */
static int try_candidates(struct db *db, int64_t worker_id, const char *offered, const int64_t *cand, size_t count,
			  int64_t *job_id, bool *in_tx)
{
	size_t i;

	for (i = 0; i < count; i++) {
		int64_t ids[DEPS_MAX_CLUSTER], held = 0;
		enum cluster_kind kind;
		size_t n = 0;
		int r2 = worker_fits(db, offered, cand[i]);
		if (r2 == 0)
			continue;
		if (r2 > 0)
			r2 = cluster_of(db, cand[i], ids, &n, &kind);
		if (r2 < 0)
			return r2;
		if (kind == CLUSTER_WAIT)
			continue;
		if (kind == CLUSTER_RUNNING && (r2 = joins_host(db, worker_id, ids, n)) <= 0) {
			if (r2 == 0)
				continue;
			return r2;
		}
		if (kind != CLUSTER_READY) {
			if ((r2 = assign(db, cand[i], worker_id, true)) < 0)
				return r2;
			if (r2 == 0)
				continue; /* not scheduled (cannot be under the lock, but harmless) */
			*job_id = cand[i];
			log_info("job %lld assigned to worker %lld%s", (long long)cand[i], (long long)worker_id,
				 kind == CLUSTER_RUNNING ? " (joins its running parallel cluster)" : "");
			return 0;
		}
		db_rollback(db);
		*in_tx = false;
		r2 = assign_cluster(db, worker_id, cand[i], ids, n);
		if (r2 < 0)
			return r2;
		if (r2 == 2)
			return 1; /* held for a starving cluster: nothing */
		if (r2 == 1) {
			*job_id = cand[i];
			return 0;
		}
		if ((r2 = db_begin_serial(db)))
			return r2;
		*in_tx = true;
		/* Reserved for a cluster (by another server) meanwhile: nothing
		 * else; the next poll hands that job. */
		if ((r2 = reserved_for(db, worker_id, &held)) != ERR_NOT_FOUND)
			return r2 ? r2 : 1;
	}
	return ERR_NOT_FOUND;
}

/* The scheduled jobs ready for a worker (?1) in the order they are offered,
 * read in the order of the index jobs_sched (migration 20) as far as
 * LIMIT ?5 OFFSET ?6 go: unblocked, not pinned to another worker, not
 * directly chained after a job of another worker still alive (?2
 * DEPS_DIRECTLY_CHAINED, ?3 the worker, ?4 the oldest t_seen_s alive). */
#define SCHED_READY_SQL \
	"SELECT id FROM jobs WHERE state = 'scheduled' AND blocked_by_id IS NULL" \
	" AND (resume_worker_id IS NULL OR resume_worker_id = ?)" \
	" AND NOT EXISTS (SELECT 1 FROM job_dependencies d JOIN jobs p ON p.id = d.parent_job_id" \
	" JOIN workers pw ON pw.id = p.assigned_worker_id WHERE d.child_job_id = jobs.id" \
	" AND d.dependency = ? AND pw.id <> ? AND pw.t_seen_s >= ?)" \
	" ORDER BY priority - sched_bonus, id LIMIT ? OFFSET ?"

/* Appends the ids the prepared st reads to cand[*count..SCHED_SCAN_LIMIT)
 * and finalizes it. 0 or a db error (rc: db_prepare's). */
static int candidates(int rc, struct db_stmt *st, int64_t *cand, size_t *count)
{
	if (rc)
		return rc;
	while ((rc = db_step(st)) == 1 && *count < SCHED_SCAN_LIMIT)
		cand[(*count)++] = db_col_int(st, 0);
	db_finalize(st);
	return rc < 0 ? rc : 0;
}

int sched_pick(struct db *db, int64_t worker_id, int64_t *job_id)
{
	struct db_stmt *st = NULL;
	char *offered = NULL;
	int64_t cand[SCHED_SCAN_LIMIT], reserved = 0;
	size_t count = 0, first;
	bool in_tx = false;
	int rc;

	rc = db_prepare(db, &st, "SELECT worker_class FROM workers WHERE id = ?", "i", worker_id);
	if (rc)
		return rc;
	if ((rc = db_step(st)) == 1)
		offered = strdup(db_col_text(st, 0));
	db_finalize(st);
	if (rc != 1)
		return rc == 0 ? ERR_NOT_FOUND : rc;
	if (!offered)
		return ERR_NOMEM;
	{
		int released = 0;
		if ((rc = rerun_release_due(db, (int64_t)time(NULL), &released)))
			goto out;
	}
	/* The candidates are read and taken under the serial lock (see
	 * try_candidates): one transaction a poll, none lost to a race. */
	if ((rc = db_begin_serial(db)))
		goto out;
	in_tx = true;
	/* A job reserved for this worker with its parallel cluster comes first. */
	rc = reserved_for(db, worker_id, &reserved);
	if (rc == 0) {
		rc = db_exec_whole(db, "UPDATE workers SET job_id = ? WHERE id = ?", "ii", reserved, worker_id);
		if (rc >= 0) {
			*job_id = reserved;
			log_info("job %lld handed to worker %lld (reserved with its parallel cluster)", (long long)reserved,
				 (long long)worker_id);
			rc = 0;
		}
		goto out;
	}
	if (rc != ERR_NOT_FOUND)
		goto out;
	/* A job directly chained after a job this worker ran goes to it before
	 * anything else (openQA's sequence on one worker): read from this
	 * worker's own jobs, not from every scheduled one. */
	rc = db_prepare(db, &st, "SELECT c.id FROM jobs p CROSS JOIN job_dependencies d CROSS JOIN jobs c"
			" WHERE p.assigned_worker_id = ? AND d.parent_job_id = p.id AND d.dependency = ?"
			" AND c.id = d.child_job_id AND c.state = 'scheduled' AND c.blocked_by_id IS NULL"
			" AND (c.resume_worker_id IS NULL OR c.resume_worker_id = ?)"
			" ORDER BY c.priority - c.sched_bonus, c.id LIMIT ?", "iiii", worker_id,
			(int64_t)DEPS_DIRECTLY_CHAINED, worker_id, (int64_t)SCHED_SCAN_LIMIT);
	rc = candidates(rc, st, cand, &count);
	/* Then the lowest priority number less the cluster bonus, read in the
	 * order of the index jobs_sched (migration 20): only as far as the
	 * scan goes. A job directly chained after a job of another worker
	 * still alive is that worker's. */
	first = count;
	if (rc == 0 && count < SCHED_SCAN_LIMIT) {
		rc = db_prepare(db, &st, SCHED_READY_SQL, "iiiiii", worker_id, (int64_t)DEPS_DIRECTLY_CHAINED, worker_id,
				(int64_t)time(NULL) - WORKERS_DEFAULT_TIMEOUT_S,
				(int64_t)(SCHED_SCAN_LIMIT - count < SCHED_FIRST_READ ? SCHED_SCAN_LIMIT - count :
					  SCHED_FIRST_READ), (int64_t)0);
		rc = candidates(rc, st, cand, &count);
	}
	if (rc)
		goto out;
	/* The first few candidates usually give the job: the rest of the scan
	 * is read only when they did not (in a transaction opened again when a
	 * cluster's took its place: the candidates are read under the lock). */
	rc = try_candidates(db, worker_id, offered, cand, count, job_id, &in_tx);
	if (rc == ERR_NOT_FOUND && count == first + SCHED_FIRST_READ) {
		count = 0;
		rc = db_prepare(db, &st, SCHED_READY_SQL, "iiiiii", worker_id, (int64_t)DEPS_DIRECTLY_CHAINED, worker_id,
				(int64_t)time(NULL) - WORKERS_DEFAULT_TIMEOUT_S,
				(int64_t)(SCHED_SCAN_LIMIT - first - SCHED_FIRST_READ), (int64_t)SCHED_FIRST_READ);
		rc = candidates(rc, st, cand, &count);
		if (rc == 0)
			rc = try_candidates(db, worker_id, offered, cand, count, job_id, &in_tx);
	}
	if (rc == 1)
		rc = ERR_NOT_FOUND;
out:
	if (in_tx) {
		/* Not flushed under the serial lock: the poll's answer waits for
		 * the job token's durable commit, which flushes this one (db.h). */
		if (rc == 0 && db_commit_unflushed(db))
			rc = ERR_IO;
		if (rc)
			db_rollback(db);
	}
	free(offered);
	return rc;
}

int sched_job_network(struct db *db, int64_t job_id, json_t *settings, unsigned port)
{
	const char *type = json_string_value(json_object_get(settings, "NICTYPE"));
	char v[32];
	int64_t ids[DEPS_MAX_CLUSTER];
	size_t n = 0;
	int rc;

	if (!type || strcmp(type, "tap"))
		return 0;
	if (!json_object_get(settings, "NICVLAN")) {
		if ((rc = deps_cluster(db, job_id, ids, &n)))
			return rc;
		snprintf(v, sizeof(v), "%lld", (long long)(n ? ids[0] : job_id));
		if (json_object_set_new(settings, "NICVLAN", json_string(v)))
			return ERR_NOMEM; /* the job would run on another network */
	}
	if (!json_object_get(settings, "NICMAC")) {
		snprintf(v, sizeof(v), "52:54:00:%02x:%02x:%02x", (unsigned)(job_id >> 16) & 255,
			 (unsigned)(job_id >> 8) & 255, (unsigned)job_id & 255);
		if (json_object_set_new(settings, "NICMAC", json_string(v)))
			return ERR_NOMEM;
	}
	if (!json_object_get(settings, "NICMCAST_PORT") && port) {
		snprintf(v, sizeof(v), "%u", port);
		if (json_object_set_new(settings, "NICMCAST_PORT", json_string(v)))
			return ERR_NOMEM;
	}
	return 0;
}
