/* SPDX-License-Identifier: MIT */
/* workers.c - worker rows, lost and restarted workers (their jobs ended
 * incomplete and cloned once), job status updates from workers, job modules
 * and set_done. The pick of a worker's next job is sched.c. Portable SQL
 * with bound parameters; never called with a transaction open by the caller. */
#define LOG_MODULE "workers"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "server/db/db.h"
#include "server/store/deps.h"
#include "server/store/jobs.h"
#include "server/store/rerun.h"
#include "server/store/workers.h"
#include "server/store/jbuild.h"
#include "util/err.h"
#include "util/log.h"
#include "util/banned.h" /* last: after every system header */

#define EXEC_STATES "('assigned', 'setup', 'running', 'uploading')"

static void now_text(char out[DB_TIME_LEN])
{
	db_now(out);
}

int workers_register(struct db *db, const char *host, long instance, const char *classes, int64_t now_s,
		     int64_t *id)
{
	char now[DB_TIME_LEN], reason[512];
	int rc, n = 0;

	if (!host || !*host)
		return ERR_INVALID;
	if (!classes || !*classes)
		classes = WORKERS_DEFAULT_CLASS;
	now_text(now);
	rc = db_query_int(db, id, "SELECT id FROM workers WHERE host = ? AND instance = ?", "ti", host,
			  (int64_t)instance);
	if (rc == ERR_NOT_FOUND) {
		rc = db_exec(db, "INSERT INTO workers (host, instance, worker_class, t_seen, t_seen_s, t_created)"
			     " VALUES (?, ?, ?, ?, ?, ?)", "tittit", host, (int64_t)instance, classes, now, now_s, now);
		if (rc < 0)
			return rc;
		*id = db_last_id(db);
		log_info("worker %lld registered: %s:%ld, classes %s", (long long)*id, host, instance, classes);
		return 0;
	}
	if (rc)
		return rc;
	rc = db_exec(db, "UPDATE workers SET worker_class = ?, t_seen = ?, t_seen_s = ?, error = NULL WHERE id = ?",
		     "ttii", classes, now, now_s, *id);
	if (rc < 0)
		return rc;
	snprintf(reason, sizeof(reason), "abandoned: associated worker %s:%ld re-connected but abandoned the job",
		 host, instance);
	rc = workers_abandon_jobs(db, *id, reason, false, &n);
	log_info("worker %lld re-registered: %s:%ld, classes %s, %d job(s) abandoned", (long long)*id, host,
		 instance, classes, n);
	return rc;
}

int workers_set_caps(struct db *db, int64_t worker_id, const char *cpu_arch, int64_t mem_max)
{
	int rc = mem_max >= 0 ? db_exec(db, "UPDATE workers SET cpu_arch = ?, mem_max = ? WHERE id = ?", "tii", cpu_arch,
					mem_max, worker_id)
			      : db_exec(db, "UPDATE workers SET cpu_arch = ?, mem_max = NULL WHERE id = ?", "ti", cpu_arch,
					worker_id);

	return rc < 0 ? rc : 0;
}

int workers_grace(struct db *db, int64_t now_s)
{
	int rc = db_exec(db, "UPDATE workers SET t_seen_s = ? WHERE t_seen_s < ?", "ii", now_s, now_s);

	return rc < 0 ? rc : 0;
}

int workers_seen(struct db *db, int64_t worker_id, int64_t now_s)
{
	char now[DB_TIME_LEN];
	int rc;

	now_text(now);
	rc = db_exec(db, "UPDATE workers SET t_seen = ?, t_seen_s = ? WHERE id = ?", "tii", now, now_s, worker_id);
	if (rc < 0)
		return rc;
	return rc == 0 ? ERR_NOT_FOUND : 0;
}

int workers_seen_asking(struct db *db, int64_t worker_id, int64_t now_s)
{
	char now[DB_TIME_LEN];
	int rc;

	now_text(now);
	rc = db_exec(db, "UPDATE workers SET t_seen = ?, t_seen_s = ?, error = NULL WHERE id = ?", "tii", now, now_s,
		     worker_id);
	if (rc < 0)
		return rc;
	return rc == 0 ? ERR_NOT_FOUND : 0;
}

int workers_set_error(struct db *db, int64_t worker_id, const char *error)
{
	int rc = db_exec(db, "UPDATE workers SET error = ? WHERE id = ?", "ti", error, worker_id);

	if (rc < 0)
		return rc;
	return rc == 0 ? ERR_NOT_FOUND : 0;
}

int workers_abandon_jobs(struct db *db, int64_t worker_id, const char *reason, bool keep_reserved, int *n)
{
	struct db_stmt *st = NULL;
	int64_t ids[64];
	size_t count = 0, i;
	char now[DB_TIME_LEN], msg[256];
	int rc;

	*n = 0;
	/* A reserved job (assigned with its parallel cluster, not handed out
	 * yet: the worker's job_id is not it) is kept when asked to. */
	rc = db_prepare(db, &st, "SELECT id FROM jobs WHERE assigned_worker_id = ? AND state IN " EXEC_STATES
			" AND NOT (? = 1 AND state = 'assigned' AND id <> COALESCE((SELECT job_id FROM workers"
			" WHERE id = ?), 0)) ORDER BY id", "iii", worker_id, (int64_t)keep_reserved, worker_id);
	if (rc)
		return rc;
	while ((rc = db_step(st)) == 1 && count < sizeof(ids) / sizeof(ids[0]))
		ids[count++] = db_col_int(st, 0);
	db_finalize(st);
	if (rc < 0)
		return rc;
	now_text(now);
	for (i = 0; i < count; i++) {
		int64_t clone;
		/* A job never started goes back to the queue, as openQA does. */
		rc = db_exec(db, "UPDATE jobs SET state = 'scheduled', assigned_worker_id = NULL, t_updated = ?"
			     " WHERE id = ? AND state = 'assigned'", "ti", now, ids[i]);
		if (rc < 0)
			return rc;
		if (rc == 0) {
			rc = db_exec(db, "UPDATE jobs SET state = 'done', t_finished = ?, t_updated = ?,"
				     " result = CASE WHEN result = 'none' THEN 'incomplete' ELSE result END,"
				     " reason = CASE WHEN result = 'none' THEN ? ELSE COALESCE(reason, ?) END"
				     " WHERE id = ?", "tttti", now, now, reason, reason, ids[i]);
			if (rc < 0)
				return rc;
			/* Clone only what ended incomplete here, not a cancelled job. */
			if (db_query_int(db, &clone, "SELECT id FROM jobs WHERE id = ? AND result = 'incomplete'"
					 " AND clone_id IS NULL", "i", ids[i]) == 0) {
				rc = jobs_restart(db, ids[i], &clone, msg, sizeof(msg));
				if (rc && rc != ERR_BADSTATE)
					return rc;
				if (!rc)
					log_info("job %lld: %s; cloned as %lld", (long long)ids[i], reason, (long long)clone);
			}
			if ((rc = deps_job_final(db, ids[i])))
				return rc;
		} else {
			log_info("job %lld: back to scheduled (%s)", (long long)ids[i], reason);
		}
		(*n)++;
	}
	rc = db_exec(db, "UPDATE workers SET job_id = NULL WHERE id = ?", "i", worker_id);
	return rc < 0 ? rc : 0;
}

int workers_reap(struct db *db, int64_t now_s, int timeout_s, int *n)
{
	return workers_reap_but(db, now_s, timeout_s, NULL, 0, n);
}

static bool in_contact(int64_t id, const int64_t *contact, size_t ncontact)
{
	size_t i;

	for (i = 0; i < ncontact; i++)
		if (contact[i] == id)
			return true;
	return false;
}

int workers_reap_but(struct db *db, int64_t now_s, int timeout_s, const int64_t *contact, size_t ncontact, int *n)
{
	struct db_stmt *st = NULL;
	struct { int64_t id; char host[128]; int64_t inst; } w[32];
	size_t count = 0, i;
	int rc;

	*n = 0;
	rc = db_prepare(db, &st, "SELECT DISTINCT w.id, w.host, w.instance FROM workers w JOIN jobs j"
			" ON j.assigned_worker_id = w.id WHERE j.state IN " EXEC_STATES " AND w.t_seen_s < ?"
			" ORDER BY w.id", "i", now_s - timeout_s);
	if (rc)
		return rc;
	while ((rc = db_step(st)) == 1 && count < sizeof(w) / sizeof(w[0])) {
		w[count].id = db_col_int(st, 0);
		snprintf(w[count].host, sizeof(w[count].host), "%s", db_col_text(st, 1));
		w[count].inst = db_col_int(st, 2);
		count++;
	}
	db_finalize(st);
	if (rc < 0)
		return rc;
	for (i = 0; i < count; i++) {
		char reason[300];
		int k = 0;
		if (in_contact(w[i].id, contact, ncontact)) {
			/* Its request waits in the server: contact, not loss. */
			if ((rc = workers_seen(db, w[i].id, now_s)) && rc != ERR_NOT_FOUND)
				return rc;
			continue;
		}
		snprintf(reason, sizeof(reason), "abandoned: worker %lld (%s:%lld) lost, no status for %d s",
			 (long long)w[i].id, w[i].host, (long long)w[i].inst, timeout_s);
		log_warn("worker %lld (%s:%lld): no request for %d s, abandoning its jobs", (long long)w[i].id,
			 w[i].host, (long long)w[i].inst, timeout_s);
		if ((rc = workers_abandon_jobs(db, w[i].id, reason, false, &k)))
			return rc;
		*n += k;
	}
	return 0;
}

static const char *module_result(const char *raw, int64_t dents)
{
	if (!raw)
		return "none";
	if (!strcmp(raw, "ok") || !strcmp(raw, "passed"))
		return dents > 0 ? "softfailed" : "passed";
	if (!strcmp(raw, "fail") || !strcmp(raw, "failed"))
		return "failed";
	if (!strcmp(raw, "softfail") || !strcmp(raw, "softfailed"))
		return "softfailed";
	if (!strcmp(raw, "skip") || !strcmp(raw, "skipped"))
		return "skipped";
	if (!strcmp(raw, "running"))
		return "running";
	if (!strcmp(raw, "cancelled"))
		return "cancelled";
	return "none";
}

static int flag_of(const json_t *flags, const char *k)
{
	const json_t *v = json_object_get(flags, k);
	return json_is_true(v) || (json_is_integer(v) && json_integer_value(v) != 0);
}

static int apply_modules(struct db *db, int64_t job_id, const json_t *status)
{
	const json_t *order = json_object_get(status, "test_order");
	const json_t *res = json_object_get(status, "result");
	const char *key;
	json_t *m;
	size_t i;
	int rc;

	json_array_foreach((json_t *)order, i, m) {
		const json_t *flags = json_object_get(m, "flags");
		const char *name = json_string_value(json_object_get(m, "name"));
		const char *cat = json_string_value(json_object_get(m, "category"));
		const char *script = json_string_value(json_object_get(m, "script"));
		if (!name)
			continue;
		rc = db_exec(db, "INSERT INTO job_modules (job_id, name, category, script, milestone, important, fatal)"
			     " VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (job_id, name) DO NOTHING", "itttiii",
			     job_id, name, cat ? cat : "", script ? script : "", (int64_t)flag_of(flags, "milestone"),
			     (int64_t)!flag_of(flags, "ignore_failure"), (int64_t)flag_of(flags, "fatal"));
		if (rc < 0)
			return rc;
	}
	json_object_foreach((json_t *)res, key, m) {
		const json_t *d = json_object_get(m, "dents");
		const char *r = module_result(json_string_value(json_object_get(m, "result")),
					      json_is_integer(d) ? json_integer_value(d) : 0);
		rc = db_exec(db, "UPDATE job_modules SET result = ? WHERE job_id = ? AND name = ?", "tit", r, job_id,
			     key);
		if (rc < 0)
			return rc;
	}
	return 0;
}

int workers_job_status(struct db *db, int64_t job_id, const json_t *status, const char **command, char *msg,
		       size_t msglen)
{
	struct db_stmt *st = NULL;
	char state[16], result[24], now[DB_TIME_LEN];
	int64_t assigned = 0, wid;
	const json_t *w = json_object_get(status, "worker_id");
	int rc;

	*command = NULL;
	if (!json_is_integer(w)) {
		snprintf(msg, msglen, "status.worker_id missing or not a number");
		return ERR_INVALID;
	}
	wid = json_integer_value(w);
	rc = db_prepare(db, &st, "SELECT state, result, assigned_worker_id FROM jobs WHERE id = ?", "i", job_id);
	if (rc)
		return rc;
	rc = db_step(st);
	if (rc == 1) {
		snprintf(state, sizeof(state), "%s", db_col_text(st, 0));
		snprintf(result, sizeof(result), "%s", db_col_text(st, 1));
		assigned = db_col_null(st, 2) ? 0 : db_col_int(st, 2);
	}
	db_finalize(st);
	if (rc != 1)
		return rc == 0 ? ERR_NOT_FOUND : rc;
	if (assigned != wid) {
		snprintf(msg, msglen, "Got status update for job %lld with unexpected worker ID %lld (expected %lld, job is %s)",
			 (long long)job_id, (long long)wid, (long long)assigned, state);
		return ERR_INVALID;
	}
	if (!strcmp(state, "done") || !strcmp(state, "cancelled") || !strcmp(state, "scheduled")) {
		*command = "abort";
		return 0;
	}
	now_text(now);
	if (json_is_true(json_object_get(status, "uploading")) ||
	    json_integer_value(json_object_get(status, "uploading")) == 1)
		rc = db_exec(db, "UPDATE jobs SET state = 'uploading', t_updated = ? WHERE id = ?", "ti", now, job_id);
	else
		rc = db_exec(db, "UPDATE jobs SET state = 'running', t_updated = ?,"
			     " t_started = COALESCE(t_started, ?) WHERE id = ? AND state IN ('assigned', 'setup')",
			     "tti", now, now, job_id);
	if (rc < 0)
		return rc;
	if ((rc = apply_modules(db, job_id, status)))
		return rc;
	/* Cancelled by a user, or stopped with its parallel cluster. */
	if (!strcmp(result, "user_cancelled") || !strcmp(result, "parallel_failed") ||
	    !strcmp(result, "parallel_restarted"))
		*command = "cancel";
	return 0;
}

static const char *computed_result(struct db *db, int64_t job_id)
{
	int64_t n;

	if (db_query_int(db, &n, "SELECT COUNT(*) FROM job_modules WHERE job_id = ?", "i", job_id) || n == 0)
		return "incomplete";
	if (!db_query_int(db, &n, "SELECT COUNT(*) FROM job_modules WHERE job_id = ? AND result = 'failed'", "i",
			  job_id) && n > 0)
		return "failed";
	if (!db_query_int(db, &n, "SELECT COUNT(*) FROM job_modules WHERE job_id = ? AND result IN ('none',"
			  " 'running', 'cancelled')", "i", job_id) && n > 0)
		return "incomplete";
	if (!db_query_int(db, &n, "SELECT COUNT(*) FROM job_modules WHERE job_id = ? AND result = 'softfailed'", "i",
			  job_id) && n > 0)
		return "softfailed";
	return "passed";
}

int workers_job_done(struct db *db, int64_t job_id, int64_t worker_id, const char *result, const char *reason,
		     char *msg, size_t msglen)
{
	char now[DB_TIME_LEN], why[301];
	int64_t assigned = 0;
	int rc;

	if (result && !jobs_result_valid(result)) {
		snprintf(msg, msglen, "invalid result '%s'", result);
		return ERR_INVALID;
	}
	rc = db_query_int(db, &assigned, "SELECT COALESCE(assigned_worker_id, 0) FROM jobs WHERE id = ?", "i", job_id);
	if (rc)
		return rc;
	if (worker_id && assigned != worker_id) {
		snprintf(msg, msglen, "Refusing to set result because job %lld is currently assigned to worker %lld",
			 (long long)job_id, (long long)assigned);
		return ERR_INVALID;
	}
	if (!result)
		result = computed_result(db, job_id);
	if (reason)
		snprintf(why, sizeof(why), "%s", reason); /* openQA keeps 300 characters */
	now_text(now);
	/* As openQA's _compute_result_and_reason: the reason is taken when the
	 * result or the reason is still unknown (a job stopped with its parallel
	 * cluster keeps the reason naming the job that failed). */
	rc = db_exec(db, "UPDATE jobs SET state = 'done', t_finished = COALESCE(t_finished, ?), t_updated = ?,"
		     " reason = CASE WHEN result = 'none' OR reason IS NULL THEN COALESCE(?, reason) ELSE reason END,"
		     " result = CASE WHEN result = 'none' THEN ? ELSE result END"
		     " WHERE id = ? AND state NOT IN ('done', 'cancelled')", "tttti", now, now, reason ? why : NULL,
		     result, job_id);
	if (rc < 0)
		return rc;
	if (assigned) {
		rc = db_exec(db, "UPDATE workers SET job_id = NULL WHERE id = ? AND job_id = ?", "ii", assigned, job_id);
		if (rc < 0)
			return rc;
	}
	/* Its chained children may run now, or are skipped. */
	return deps_job_final(db, job_id);
}

json_t *workers_job_modules(struct db *db, int64_t job_id)
{
	struct jbuild b = JBUILD_INIT;
	json_t *a = jbuild_take(&b, json_array(), "modules");
	struct db_stmt *st;

	if (!a || db_prepare(db, &st, "SELECT name, category, script, result, milestone, important, fatal FROM job_modules"
			     " WHERE job_id = ? ORDER BY id", "i", job_id))
		return a;
	while (!jbuild_failed(&b) && db_step(st) == 1) {
		json_t *flags = jbuild_take(&b, json_array(), "flags");
		if (db_col_int(st, 4))
			jbuild_append(&b, flags, json_string("milestone"));
		if (db_col_int(st, 5))
			jbuild_append(&b, flags, json_string("important"));
		if (db_col_int(st, 6))
			jbuild_append(&b, flags, json_string("fatal"));
		/* "o" takes flags even when json_pack fails. */
		jbuild_append(&b, a, flags ? json_pack("{s:s,s:s,s:s,s:s,s:o}", "name", db_col_text(st, 0), "category",
							  db_col_text(st, 1), "script", db_col_text(st, 2), "result",
							  db_col_text(st, 3), "flags", flags)
					      : NULL);
	}
	db_finalize(st);
	return jbuild_done(&b, a);
}

json_t *workers_list_json(struct db *db, int64_t now_s, int timeout_s)
{
	struct jbuild b = JBUILD_INIT;
	json_t *a = jbuild_take(&b, json_array(), "workers");
	struct db_stmt *st;

	if (!a || db_prepare(db, &st, "SELECT id, host, instance, worker_class, job_id, error, t_seen, cpu_arch, mem_max,"
			     " t_seen_s FROM workers ORDER BY id", ""))
		return a ? json_pack("{s:o}", "workers", a) : NULL;
	while (!jbuild_failed(&b) && db_step(st) == 1) {
		json_t *w = json_pack("{s:I,s:s,s:I,s:s,s:{s:s}}", "id", (json_int_t)db_col_int(st, 0), "host",
				      db_col_text(st, 1), "instance", (json_int_t)db_col_int(st, 2), "name",
				      db_col_text(st, 1), "properties", "WORKER_CLASS", db_col_text(st, 3));
		json_t *props = json_object_get(w, "properties");
		if (!jbuild_take(&b, w, "worker"))
			break;
		/* openQA lists a worker's capabilities as upper-case properties. */
		if (!db_col_null(st, 7))
			jbuild_set(&b, props, "CPU_ARCH", json_string(db_col_text(st, 7)));
		if (!db_col_null(st, 8)) {
			char mem[24];
			snprintf(mem, sizeof(mem), "%lld", (long long)db_col_int(st, 8));
			jbuild_set(&b, props, "MEM_MAX", json_string(mem));
		}
		jbuild_set(&b, w, "jobid", db_col_null(st, 4) ? json_null() : json_integer(db_col_int(st, 4)));
		/* An error (only openQA's workers have one: no WebSocket, or
		 * broken) keeps a worker without a job from counting as idle. */
		jbuild_set(&b, w, "status", json_string(timeout_s > 0 && db_col_int(st, 9) < now_s - timeout_s ? "dead"
							   : !db_col_null(st, 4)			    ? "running"
							   : db_col_text(st, 5)				    ? "offline"
												    : "idle"));
		jbuild_set(&b, w, "error", db_col_text(st, 5) ? json_string(db_col_text(st, 5)) : json_null());
		jbuild_set(&b, w, "t_seen", db_col_text(st, 6) ? json_string(db_col_text(st, 6)) : json_null());
		jbuild_append(&b, a, w);
	}
	db_finalize(st);
	if (jbuild_failed(&b)) {
		json_decref(a);
		return NULL;
	}
	return jbuild_done(&b, json_pack("{s:o}", "workers", a));
}

json_t *workers_list_all(struct db *db, int64_t now_s, int timeout_s, workers_missing_fn missing, void *ctx)
{
	struct jbuild b = JBUILD_INIT;
	json_t *all = workers_list_json(db, now_s, timeout_s), *w;
	size_t i;

	json_array_foreach(json_object_get(all, "workers"), i, w) {
		int64_t id = json_integer_value(json_object_get(w, "id"));
		const char *status = json_string_value(json_object_get(w, "status"));

		/* vigil: the jobs whose disks each worker keeps (re-run from a milestone). */
		jbuild_set(&b, w, "snapshots", rerun_held_json(db, id));
		/* An openQA worker gets its jobs over its WebSocket: without one it is not idle. */
		if (missing && missing(ctx, id) && (!status || strcmp(status, "dead"))) {
			jbuild_set(&b, w, "status", json_string("offline"));
			if (json_is_null(json_object_get(w, "error")))
				jbuild_set(&b, w, "error", json_string("no WebSocket connection (/api/v1/ws/<id>)"));
		}
	}
	return all ? jbuild_done(&b, all) : NULL;
}

int workers_job_holder(struct db *db, int64_t job_id, int64_t *worker_id)
{
	return db_query_int(db, worker_id, "SELECT COALESCE(assigned_worker_id, 0) FROM jobs WHERE id = ?"
			    " AND state IN " EXEC_STATES, "i", job_id);
}

int workers_key_check(struct db *db, int64_t worker_id, const char *key, char *msg, size_t msglen)
{
	struct db_stmt *st = NULL;
	int rc = db_prepare(db, &st, "SELECT api_key FROM workers WHERE id = ?", "i", worker_id);

	if (!rc && (rc = db_step(st)) == 1) {
		const char *bound = db_col_text(st, 0);
		rc = 0;
		if (bound && (!key || strcmp(bound, key))) {
			snprintf(msg, msglen, "worker %lld is registered with another API key: only that key may act for it",
				 (long long)worker_id);
			rc = ERR_INVALID;
		}
	} else if (rc == 0) {
		rc = ERR_NOT_FOUND;
	}
	db_finalize(st);
	return rc;
}

int workers_job_key_check(struct db *db, int64_t job_id, const char *key, char *msg, size_t msglen)
{
	int64_t w = 0;
	int rc = db_query_int(db, &w, "SELECT COALESCE(assigned_worker_id, 0) FROM jobs WHERE id = ?", "i", job_id);

	if (rc == ERR_NOT_FOUND || (!rc && w == 0))
		return 0;
	if (rc)
		return rc;
	rc = workers_key_check(db, w, key, msg, msglen);
	if (rc == ERR_INVALID)
		snprintf(msg, msglen, "job %lld belongs to worker %lld, registered with another API key: only that key "
			 "may act for it", (long long)job_id, (long long)w);
	return rc == ERR_NOT_FOUND ? 0 : rc;
}

int workers_bound_key(struct db *db, const char *host, long instance, char *key, size_t keylen)
{
	struct db_stmt *st = NULL;
	int rc = db_prepare(db, &st, "SELECT api_key FROM workers WHERE host = ? AND instance = ?", "ti", host,
			    (int64_t)instance);

	key[0] = '\0';
	if (!rc && (rc = db_step(st)) == 1) {
		snprintf(key, keylen, "%s", db_col_text(st, 0) ? db_col_text(st, 0) : "");
		rc = 0;
	} else if (rc == 0) {
		rc = ERR_NOT_FOUND;
	}
	db_finalize(st);
	return rc;
}

int workers_set_key(struct db *db, int64_t id, const char *key)
{
	int rc = key ? db_exec(db, "UPDATE workers SET api_key = ? WHERE id = ?", "ti", key, id)
		     : db_exec(db, "UPDATE workers SET api_key = NULL WHERE id = ?", "i", id);

	return rc < 0 ? rc : 0;
}
