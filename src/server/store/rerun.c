/* SPDX-License-Identifier: MIT */
/* rerun.c - "re-run from here": the clone that resumes from a kept
 * milestone snapshot, pinned to the worker keeping it until a deadline,
 * the snapshots workers report, and the copy of the old job's earlier
 * modules into the new one when it is done. Never formats SQL; writes
 * files only under DATA/testresults/<new id>/. */
#define LOG_MODULE "rerun"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "server/store/artefacts.h"
#include "server/db/db.h"
#include "server/store/deps.h"
#include "server/store/jobs.h"
#include "server/store/rerun.h"
#include "server/store/jbuild.h"
#include "util/err.h"
#include "util/file.h"
#include "util/log.h"
#include "util/str.h"
#include "util/banned.h" /* last: after every system header */

#define RERUN_MAX_MODULES 1000

int rerun_record_held(struct db *db, int64_t worker_id, const char *list)
{
	int64_t ids[RERUN_MAX_HELD];
	size_t n = 0, i;
	const char *p = list;
	int rc;

	while (p && *p) {
		size_t len = strcspn(p, ",");
		char num[24];
		long v;
		if (len == 0 || len >= sizeof(num) || n >= RERUN_MAX_HELD)
			return ERR_INVALID;
		memcpy(num, p, len);
		num[len] = '\0';
		if (str_to_long(num, &v) || v <= 0)
			return ERR_INVALID;
		ids[n++] = v;
		p += len + (p[len] == ',');
	}
	if ((rc = db_begin(db)))
		return rc;
	rc = db_exec(db, "DELETE FROM worker_snapshots WHERE worker_id = ?", "i", worker_id);
	for (i = 0; rc >= 0 && i < n; i++)
		rc = db_exec(db, "INSERT INTO worker_snapshots (worker_id, job_id) VALUES (?, ?) ON CONFLICT DO NOTHING",
			     "ii", worker_id, ids[i]);
	if (rc < 0) {
		db_rollback(db);
		return rc;
	}
	return db_commit(db);
}

json_t *rerun_held_json(struct db *db, int64_t worker_id)
{
	struct jbuild b = JBUILD_INIT;
	json_t *a = jbuild_take(&b, json_array(), "snapshots");
	struct db_stmt *st;

	if (!a || db_prepare(db, &st, "SELECT job_id FROM worker_snapshots WHERE worker_id = ? ORDER BY job_id", "i",
			     worker_id))
		return a;
	while (!jbuild_failed(&b) && db_step(st) == 1)
		jbuild_append(&b, a, json_integer(db_col_int(st, 0)));
	db_finalize(st);
	return jbuild_done(&b, a);
}

/* Where the re-run of job id starts: the module after the last passed
 * milestone before module (NULL: the first failed one). resume and
 * milestone get the names ("" when there is no such milestone). 0,
 * ERR_INVALID with msg, or a db error. */
static int plan(struct db *db, int64_t id, const char *module, char *resume, char *milestone, size_t len, char *msg,
		size_t msglen)
{
	struct db_stmt *st;
	char prev_ms[256] = "";
	bool after_ms = false, found = false;
	int rc, count = 0;

	resume[0] = milestone[0] = '\0';
	if ((rc = db_prepare(db, &st, "SELECT name, result, milestone FROM job_modules WHERE job_id = ? ORDER BY id",
			     "i", id)))
		return rc;
	while ((rc = db_step(st)) == 1 && count++ < RERUN_MAX_MODULES) {
		const char *name = db_col_text(st, 0), *res = db_col_text(st, 1);
		if (module ? !strcmp(name, module) : !strcmp(res, "failed")) {
			found = true;
			break;
		}
		/* The module right after a passed milestone is where a resume starts. */
		if (after_ms) {
			snprintf(milestone, len, "%s", prev_ms);
			snprintf(resume, len, "%s", name);
			after_ms = false;
		}
		if (db_col_int(st, 2) && (!strcmp(res, "passed") || !strcmp(res, "softfailed"))) {
			snprintf(prev_ms, sizeof(prev_ms), "%s", name);
			after_ms = true;
		}
	}
	/* The chosen module itself follows the milestone. */
	if (found && after_ms) {
		snprintf(milestone, len, "%s", prev_ms);
		snprintf(resume, len, "%s", db_col_text(st, 0));
	}
	db_finalize(st);
	if (rc < 0)
		return rc;
	if (!found) {
		snprintf(msg, msglen, module ? "the job has no module '%s'" : "the job has no failed module%s",
			 module ? module : "");
		return ERR_INVALID;
	}
	return 0;
}

int rerun_create(struct db *db, int64_t id, const char *module, int64_t now_s, int64_t wait_s, json_t **out,
		 char *msg, size_t msglen)
{
	char state[16], resume[256], milestone[256];
	int64_t new_id = 0, worker = 0;
	json_t *clones = NULL;
	int rc;

	*out = NULL;
	if ((rc = jobs_state_of(db, id, state, sizeof(state))))
		return rc;
	if (strcmp(state, "done")) {
		snprintf(msg, msglen, "job %lld is %s: only a finished job can be re-run from a module", (long long)id,
			 state);
		return ERR_INVALID;
	}
	/* Relatives run from their start: one resumed from a milestone would meet
	 * their locks and barriers out of step. */
	{
		int64_t ids[DEPS_MAX_CLUSTER];
		size_t n = 0;
		if ((rc = deps_cluster(db, id, ids, &n)))
			return rc;
		if (n > 1) {
			snprintf(msg, msglen, "job %lld is one of %zu parallel jobs: re-run from a module would resume it"
				 " alone; restart it (the cluster restarts with it)", (long long)id, n);
			return ERR_INVALID;
		}
	}
	if ((rc = plan(db, id, module, resume, milestone, sizeof(resume), msg, msglen)))
		return rc;
	/* The newest worker that said it keeps the job's disks. */
	if (resume[0] && db_query_int(db, &worker, "SELECT worker_id FROM worker_snapshots WHERE job_id = ?"
				      " ORDER BY worker_id DESC LIMIT 1", "i", id))
		worker = 0;
	if ((rc = jobs_restart_clones(db, id, &new_id, &clones, msg, msglen)))
		return rc;
	json_decref(clones); /* only new_id is answered: a lost map changes nothing */
	if (worker) {
		rc = db_exec(db, "UPDATE jobs SET resume_from = ?, resume_job_id = ?, resume_worker_id = ?,"
			     " resume_deadline = ? WHERE id = ?", "tiiii", resume, id, worker, now_s + wait_s, new_id);
		if (rc < 0)
			return rc;
		log_info("job %lld: re-run of %lld from '%s' (milestone '%s'), pinned to worker %lld for %lld s",
			 (long long)new_id, (long long)id, resume, milestone, (long long)worker, (long long)wait_s);
	} else {
		log_info("job %lld: full re-run of %lld (%s)", (long long)new_id, (long long)id,
			 resume[0] ? "no worker keeps its disks" : "no passed milestone before the module");
	}
	*out = json_pack("{s:I,s:s?,s:s?,s:o}", "id", (json_int_t)new_id, "resume_from", worker ? resume : NULL,
			 "milestone", worker ? milestone : NULL, "worker_id",
			 worker ? json_integer(worker) : json_null());
	return *out ? 0 : ERR_NOMEM;
}

int rerun_release_due(struct db *db, int64_t now_s, int *n)
{
	int rc = db_exec(db,
			 "UPDATE jobs SET resume_from = NULL, resume_worker_id = NULL, resume_deadline = NULL"
			 " WHERE state = 'scheduled' AND resume_worker_id IS NOT NULL AND (resume_deadline <= ?"
			 " OR NOT EXISTS (SELECT 1 FROM worker_snapshots s WHERE s.worker_id = jobs.resume_worker_id"
			 " AND s.job_id = jobs.resume_job_id))", "i", now_s);

	*n = rc > 0 ? rc : 0;
	if (rc > 0)
		log_info("%d pinned re-run(s) released to any worker as full re-runs", rc);
	return rc < 0 ? rc : 0;
}

int rerun_resume_of(struct db *db, int64_t job_id, char **module, int64_t *from)
{
	struct db_stmt *st;
	int rc;

	*module = NULL;
	*from = 0;
	if ((rc = db_prepare(db, &st, "SELECT resume_from, resume_job_id FROM jobs WHERE id = ?"
			     " AND resume_worker_id IS NOT NULL AND resume_from IS NOT NULL", "i", job_id)))
		return rc;
	if ((rc = db_step(st)) == 1) {
		*module = strdup(db_col_text(st, 0));
		*from = db_col_int(st, 1);
	}
	db_finalize(st);
	if (rc < 0)
		return rc;
	return rc == 1 && !*module ? ERR_NOMEM : 0;
}

/* Hard-link artefact name of that kind of job from to job to (an existing
 * link is replaced). 0 or -errno; a file the old job lacks is no error. */
static int link_one(const char *data_dir, int64_t from, int64_t to, enum artefact_kind kind, const char *name)
{
	char *src = artefact_kind_path(data_dir, from, kind, name), *dst = artefact_kind_path(data_dir, to, kind, name);
	char *dir = artefact_kind_path(data_dir, to, kind, NULL);
	int rc = 0;

	if (!src || !dst || !dir) {
		rc = ERR_NOMEM;
		goto out;
	}
	if (access(src, F_OK))
		goto out;
	(void)file_mkdir_p(dir, 0700);
	(void)unlink(dst);
	if (link(src, dst))
		rc = -errno;
out:
	free(src);
	free(dst);
	free(dir);
	return rc;
}

/* Copy module name of job from into job to: its result file (with
 * copied_from) and the files its steps name. 0 or an error. */
static int copy_module(const char *data_dir, int64_t from, int64_t to, const char *name)
{
	char fn[LIMIT_ARTEFACT_NAME + 16], *src, *dst;
	json_t *r, *d;
	size_t i;
	int rc = 0;

	snprintf(fn, sizeof(fn), "result-%s.json", name);
	src = artefact_path(data_dir, from, fn);
	dst = artefact_path(data_dir, to, fn);
	r = src ? json_load_file(src, 0, NULL) : NULL;
	if (!r || !dst) {
		rc = r || !src || !dst ? ERR_NOMEM : ERR_NOT_FOUND;
		goto out;
	}
	/* A module the old job had copied itself names where it came from. */
	if (!json_is_integer(json_object_get(r, "copied_from")) &&
	    json_object_set_new(r, "copied_from", json_integer(from))) {
		rc = ERR_NOMEM; /* written without it, the module would pass as its own */
		goto out;
	}
	json_array_foreach(json_object_get(r, "details"), i, d) {
		const char *shot = json_string_value(json_object_get(d, "screenshot"));
		const char *text = json_string_value(json_object_get(d, "text"));
		if (shot && artefact_name_valid(shot, strlen(shot))) {
			(void)link_one(data_dir, from, to, ARTEFACT_FILE, shot);
			(void)link_one(data_dir, from, to, ARTEFACT_THUMB, shot);
		}
		if (text && artefact_name_valid(text, strlen(text)))
			(void)link_one(data_dir, from, to, ARTEFACT_FILE, text);
	}
	(void)unlink(dst);
	if (json_dump_file(r, dst, JSON_COMPACT))
		rc = ERR_IO;
out:
	json_decref(r);
	free(src);
	free(dst);
	return rc;
}

/* The worse of two job results (failed > softfailed > passed). */
static const char *worse(const char *a, const char *b)
{
	static const char *const order[] = { "failed", "softfailed", "passed" };
	size_t i;

	for (i = 0; i < 3; i++)
		if (!strcmp(a, order[i]) || !strcmp(b, order[i]))
			return order[i];
	return a;
}

int rerun_finish(struct db *db, const char *data_dir, int64_t id, char *result, size_t resultlen)
{
	struct db_stmt *st = NULL;
	char *resume = NULL, *path = NULL, *old_path = NULL;
	json_t *res = NULL, *old = NULL, *m;
	int64_t from = 0;
	int rc, copied = 0;
	size_t i;

	if ((rc = db_prepare(db, &st, "SELECT resume_from, resume_job_id FROM jobs WHERE id = ? AND resume_from IS NOT"
			     " NULL AND resume_job_id IS NOT NULL", "i", id)))
		return rc;
	if ((rc = db_step(st)) == 1) {
		resume = strdup(db_col_text(st, 0));
		from = db_col_int(st, 1);
	}
	db_finalize(st);
	if (rc != 1 || !resume)
		return rc < 0 ? rc : rc == 1 ? ERR_NOMEM : 0;
	path = artefact_path(data_dir, id, "results.json");
	old_path = artefact_path(data_dir, from, "results.json");
	res = path ? json_load_file(path, 0, NULL) : NULL;
	old = old_path ? json_load_file(old_path, 0, NULL) : NULL;
	if (!res || !old) {
		rc = 0; /* nothing to merge: the job keeps what it has */
		goto out;
	}
	/* The modules before the resume point the runner reported skipped. */
	json_array_foreach(json_object_get(res, "modules"), i, m) {
		const char *mname = json_string_value(json_object_get(m, "name"));
		json_t *o = json_array_get(json_object_get(old, "modules"), i);
		char name[LIMIT_ARTEFACT_NAME + 1];
		const char *oname = json_string_value(json_object_get(o, "name"));
		const char *ores = json_string_value(json_object_get(o, "result"));
		if (!mname || !strcmp(mname, resume))
			break;
		/* m goes when the old module takes its place: its name is kept. */
		snprintf(name, sizeof(name), "%s", mname);
		const char *now = json_string_value(json_object_get(m, "result"));
		if (!now || strcmp(now, "skip") || !oname || strcmp(oname, name))
			continue;
		if (copy_module(data_dir, from, id, name))
			continue;
		if (json_object_set_new(o, "copied_from", json_integer(from)) ||
		    json_array_set(json_object_get(res, "modules"), i, o)) {
			rc = ERR_NOMEM; /* results.json is not written: the job keeps what it has */
			goto out;
		}
		rc = db_exec(db, "UPDATE job_modules SET result = (SELECT o.result FROM job_modules o WHERE o.job_id = ?"
			     " AND o.name = ?) WHERE job_id = ? AND name = ?", "itit", from, name, id, name);
		if (rc < 0)
			goto out;
		if (result && result[0] && ores)
			snprintf(result, resultlen, "%s",
				 worse(result, !strcmp(ores, "fail") ? "failed" : !strcmp(ores, "softfail") ? "softfailed"
													: "passed"));
		copied++;
	}
	rc = 0;
	if (copied) {
		if (result && result[0] && json_object_set_new(res, "result", json_string(result)))
			rc = ERR_NOMEM;
		else if (json_dump_file(res, path, JSON_INDENT(1)))
			rc = ERR_IO;
		log_info("job %lld: %d module(s) copied from job %lld", (long long)id, copied, (long long)from);
	}
out:
	json_decref(res);
	json_decref(old);
	free(resume);
	free(path);
	free(old_path);
	return rc;
}
