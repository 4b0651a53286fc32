/* SPDX-License-Identifier: MIT */
/* api_jobs.c - the /api/v1/jobs routes (Job.pm): list with filters, show,
 * details, status, direct creation from settings, delete, cancel, restart.
 * The job model is jobs.c; this file parses and validates requests. */
#define LOG_MODULE "api"
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "server/api.h"
#include "server/db.h"
#include "server/artefacts.h"
#include "server/jobs.h"
#include "server/workers.h"
#include "util/err.h"
#include "util/util.h"

#define JOBS_LIST_DEFAULT_LIMIT 1000
#define JOBS_LIST_MAX_LIMIT 10000

static void not_found(struct api_resp *out, int64_t id)
{
	api_error(out, 404, "Job %lld does not exist", (long long)id);
}

/* Every value of a list parameter (repeated and/or comma-separated). */
static json_t *list_param(const struct params *p, const char *key)
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; i < p->n; i++) {
		const char *s = p->v[i].value;
		if (strcmp(p->v[i].key, key))
			continue;
		while (*s) {
			size_t n = strcspn(s, ",");
			if (n) {
				char *one = strndup(s, n);
				if (one)
					json_array_append_new(a, json_string(one));
				free(one);
			}
			s += n + (s[n] == ',');
		}
	}
	return a;
}

static bool in_array(const json_t *a, const char *s)
{
	size_t i;
	json_t *v;

	json_array_foreach(a, i, v)
		if (!strcmp(json_string_value(v), s))
			return true;
	return false;
}

static void jobs_list(struct api_req *req, struct api_resp *out)
{
	const struct params *p = &req->params;
	json_t *states = list_param(p, "state"), *res = list_param(p, "result"), *ids = list_param(p, "ids");
	json_t *jobs = NULL, *seen = json_object();
	const char *lim = params_get(p, "limit"), *off = params_get(p, "offset"), *grp = params_get(p, "groupid");
	bool latest = params_get(p, "latest") && strcmp(params_get(p, "latest"), "0");
	const char *scope = params_get(p, "scope");
	long limit = JOBS_LIST_DEFAULT_LIMIT, offset = 0, group = 0, skipped = 0;
	struct db_stmt *st = NULL;
	size_t i;
	json_t *v;
	int rc;

	if (lim && (str_to_long(lim, &limit) || limit <= 0 || limit > JOBS_LIST_MAX_LIMIT)) {
		api_error(out, 400, "Limit exceeds maximum (or is not a positive integer): %s", lim);
		goto out;
	}
	if ((off && (str_to_long(off, &offset) || offset < 0)) || (grp && str_to_long(grp, &group))) {
		api_error(out, 400, "Erroneous parameters (offset and groupid must be integers)");
		goto out;
	}
	json_array_foreach(ids, i, v) {
		int64_t id;
		if (api_parse_id(json_string_value(v), &id)) {
			api_error(out, 400, "ids must be integers");
			goto out;
		}
	}
	json_array_foreach(states, i, v)
		if (!jobs_state_valid(json_string_value(v))) {
			api_error(out, 400, "unknown state '%s'", json_string_value(v));
			goto out;
		}
	json_array_foreach(res, i, v)
		if (!jobs_result_valid(json_string_value(v))) {
			api_error(out, 400, "unknown result '%s'", json_string_value(v));
			goto out;
		}
	rc = db_prepare(req->db, &st,
			"SELECT id, state, result, clone_id, distri, version, flavor, arch, test, machine FROM jobs"
			" WHERE (? IS NULL OR build = ?) AND (? IS NULL OR lower(distri) = lower(?))"
			" AND (? IS NULL OR version = ?) AND (? IS NULL OR flavor = ?) AND (? IS NULL OR arch = ?)"
			" AND (? IS NULL OR test = ?) AND (? IS NULL OR machine = ?) AND (? = 0 OR group_id = ?)"
			" AND (? IS NULL OR id IN (SELECT job_id FROM job_settings WHERE key = 'ISO' AND value = ?))"
			" ORDER BY id DESC",
			"ttttttttttttttiitt", params_get(p, "build"), params_get(p, "build"), params_get(p, "distri"),
			params_get(p, "distri"), params_get(p, "version"), params_get(p, "version"), params_get(p, "flavor"),
			params_get(p, "flavor"), params_get(p, "arch"), params_get(p, "arch"), params_get(p, "test"),
			params_get(p, "test"), params_get(p, "machine"), params_get(p, "machine"), (int64_t)group,
			(int64_t)group, params_get(p, "iso"), params_get(p, "iso"));
	if (rc) {
		api_error(out, 500, "cannot read jobs");
		goto out;
	}
	jobs = json_array();
	while ((rc = db_step(st)) == 1 && (long)json_array_size(jobs) < limit) {
		char idtext[24], scenario[1024];
		json_t *j;
		snprintf(idtext, sizeof(idtext), "%lld", (long long)db_col_int(st, 0));
		if (json_array_size(states) && !in_array(states, db_col_text(st, 1)))
			continue;
		if (json_array_size(res) && !in_array(res, db_col_text(st, 2)))
			continue;
		if (json_array_size(ids) && !in_array(ids, idtext))
			continue;
		if (scope && (!strcmp(scope, "current") || !strcmp(scope, "relevant")) && !db_col_null(st, 3))
			continue;
		if (latest) {
			snprintf(scenario, sizeof(scenario), "%s\x1f%s\x1f%s\x1f%s\x1f%s\x1f%s", db_col_text(st, 4),
				 db_col_text(st, 5), db_col_text(st, 6), db_col_text(st, 7), db_col_text(st, 8),
				 db_col_text(st, 9));
			if (json_object_get(seen, scenario))
				continue;
			json_object_set_new(seen, scenario, json_true());
		}
		if (skipped < offset) {
			skipped++;
			continue;
		}
		if (jobs_to_json(req->db, db_col_int(st, 0), false, &j) == 0) {
			json_object_set_new(j, "modules", json_array());
			/* Rows arrive newest first; openQA lists oldest first. */
			json_array_insert_new(jobs, 0, j);
		}
	}
	db_finalize(st);
	if (rc < 0) {
		api_error(out, 500, "cannot read jobs");
		goto out;
	}
	api_json(out, json_pack("{s:O}", "jobs", jobs));
out:
	json_decref(jobs);
	json_decref(seen);
	json_decref(states);
	json_decref(res);
	json_decref(ids);
}

/* The artefact names of a job (screenshots or the others), sorted. */
static json_t *job_logs(struct api_req *req, bool png)
{
	json_t *a = json_array();
	char *dir = artefact_path(req->data_dir, req->id, NULL);
	struct dirent **ents = NULL;
	int n, i;

	if (!dir)
		return a;
	n = scandir(dir, &ents, NULL, alphasort);
	for (i = 0; i < n; i++) {
		const char *nm = ents[i]->d_name;
		if (nm[0] != '.' && str_ends_with(nm, ".png") == png)
			json_array_append_new(a, json_string(nm));
		free(ents[i]);
	}
	free(ents);
	free(dir);
	return a;
}

static void show(struct api_req *req, struct api_resp *out, bool details)
{
	json_t *j;
	int rc = jobs_to_json(req->db, req->id, details, &j);

	if (rc == ERR_NOT_FOUND)
		not_found(out, req->id);
	else if (rc)
		api_error(out, 500, "cannot read job %lld", (long long)req->id);
	else {
		json_t *mods = workers_job_modules(req->db, req->id);
		if (details) {
			json_object_set(j, "testresults", mods);
			json_object_set_new(j, "logs", job_logs(req, false));
			json_object_set_new(j, "screenshots", job_logs(req, true));
		}
		json_object_set_new(j, "modules", mods);
		api_json(out, json_pack("{s:o}", "job", j));
	}
}

static void job_show(struct api_req *req, struct api_resp *out)
{
	show(req, out, false);
}

static void job_details(struct api_req *req, struct api_resp *out)
{
	show(req, out, true);
}

static void job_status(struct api_req *req, struct api_resp *out)
{
	struct db_stmt *st;

	if (db_prepare(req->db, &st, "SELECT state, result, blocked_by_id FROM jobs WHERE id = ?", "i", req->id)) {
		api_error(out, 500, "cannot read job %lld", (long long)req->id);
		return;
	}
	if (db_step(st) != 1) {
		db_finalize(st);
		not_found(out, req->id);
		return;
	}
	api_json(out, json_pack("{s:I,s:s,s:s,s:o}", "id", (json_int_t)req->id, "state", db_col_text(st, 0), "result",
				db_col_text(st, 1),
				"blocked_by_id", db_col_null(st, 2) ? json_null() : json_integer(db_col_int(st, 2))));
	db_finalize(st);
}

static void job_create(struct api_req *req, struct api_resp *out)
{
	json_t *post = json_object(), *s = json_object();
	const char *v;
	int64_t id, group = 0, prio = JOBS_DEFAULT_PRIORITY, rowid;
	bool clone;
	size_t i;
	int rc;

	if (req->json) {
		api_error(out, 400, "send job settings as form parameters (KEY=VALUE)");
		goto out;
	}
	for (i = 0; i < req->params.n; i++) {
		char *u = api_upper(req->params.v[i].key);
		if (strchr(u, ':')) {
			api_error(out, 400, "multi-job posts (KEY:SUFFIX) are not supported yet: '%s'", req->params.v[i].key);
			free(u);
			goto out;
		}
		json_object_set_new(post, u, json_string(req->params.v[i].value));
		free(u);
	}
	v = json_string_value(json_object_get(post, "TEST"));
	if (!v || !*v) {
		api_error(out, 400, "TEST field mandatory");
		goto out;
	}
	v = json_string_value(json_object_get(post, "_PRIORITY"));
	if (v) {
		long p;
		if (str_to_long(v, &p)) {
			api_error(out, 400, "_PRIORITY must be an integer");
			goto out;
		}
		prio = p;
	}
	if ((v = json_string_value(json_object_get(post, "_GROUP_ID")))) {
		if (api_parse_id(v, &group) || db_query_int(req->db, &rowid, "SELECT id FROM job_groups WHERE id = ?", "i", group)) {
			api_error(out, 400, "job group '%s' does not exist", v);
			goto out;
		}
	} else if ((v = json_string_value(json_object_get(post, "_GROUP")))) {
		if (db_query_int(req->db, &group, "SELECT id FROM job_groups WHERE name = ?", "t", v)) {
			api_error(out, 400, "job group '%s' does not exist", v);
			goto out;
		}
	}
	clone = (v = json_string_value(json_object_get(post, "IS_CLONE_JOB"))) && strcmp(v, "0");
	json_object_del(post, "IS_CLONE_JOB");
	if (!clone) {
		/* Settings from the tables under the posted ones, as generate_settings. */
		const char *d = json_string_value(json_object_get(post, "DISTRI"));
		const char *ver = json_string_value(json_object_get(post, "VERSION"));
		const char *f = json_string_value(json_object_get(post, "FLAVOR"));
		const char *a = json_string_value(json_object_get(post, "ARCH"));
		const char *m = json_string_value(json_object_get(post, "MACHINE"));
		if (d && ver && f && a && !db_query_int(req->db, &rowid, "SELECT id FROM products WHERE lower(distri) ="
							" lower(?) AND version = ? AND flavor = ? AND arch = ?",
							"tttt", d, ver, f, a))
			(void)jobs_table_settings(req->db, "product", rowid, s);
		if (m && !db_query_int(req->db, &rowid, "SELECT id FROM machines WHERE name = ?", "t", m)) {
			(void)jobs_table_settings(req->db, "machine", rowid, s);
			if (!db_query_int(req->db, &rowid, "SELECT id FROM machines WHERE name = ?", "t", m)) {
				struct db_stmt *st;
				if (!db_prepare(req->db, &st, "SELECT backend FROM machines WHERE id = ?", "i", rowid)) {
					if (db_step(st) == 1 && !json_object_get(s, "BACKEND"))
						json_object_set_new(s, "BACKEND", json_string(db_col_text(st, 0)));
					db_finalize(st);
				}
			}
		}
		if (!db_query_int(req->db, &rowid, "SELECT id FROM test_suites WHERE name = ?", "t",
				  json_string_value(json_object_get(post, "TEST"))))
			(void)jobs_table_settings(req->db, "test_suite", rowid, s);
	}
	{
		const char *key;
		json_t *val, *keep = json_object();
		json_object_foreach(post, key, val)
			if (key[0] != '_')
				json_object_set(keep, key, val);
		jobs_settings_merge(s, keep);
		json_decref(keep);
	}
	if (!clone) {
		jobs_settings_default_class(s);
		jobs_settings_expand(s);
	}
	if (db_begin(req->db)) {
		api_error(out, 500, "cannot start a transaction");
		goto out;
	}
	rc = jobs_insert(req->db, s, prio, group, 0, &id);
	if (rc || db_commit(req->db)) {
		db_rollback(req->db);
		api_error(out, 500, "cannot create the job: %s", db_errmsg(req->db));
		goto out;
	}
	api_json(out, json_pack("{s:I}", "id", (json_int_t)id));
out:
	json_decref(post);
	json_decref(s);
}

static void job_delete(struct api_req *req, struct api_resp *out)
{
	int rc = jobs_delete(req->db, req->id);

	if (rc == ERR_NOT_FOUND)
		not_found(out, req->id);
	else if (rc)
		api_error(out, 500, "cannot delete job %lld", (long long)req->id);
	else
		api_json(out, json_pack("{s:i}", "result", 1));
}

static void job_cancel(struct api_req *req, struct api_resp *out)
{
	int changed = 0;
	int rc = jobs_cancel(req->db, req->id, params_get(&req->params, "reason"), &changed);

	if (rc == ERR_NOT_FOUND)
		not_found(out, req->id);
	else if (rc)
		api_error(out, 500, "cannot cancel job %lld", (long long)req->id);
	else
		api_json(out, json_pack("{s:i}", "result", changed));
}

static void job_restart(struct api_req *req, struct api_resp *out)
{
	char msg[256], key[24], url[48];
	int64_t new_id;
	int rc = jobs_restart(req->db, req->id, &new_id, msg, sizeof(msg));

	if (rc == ERR_NOT_FOUND) {
		not_found(out, req->id);
		return;
	}
	if (rc == ERR_BADSTATE) {
		api_json(out, json_pack("{s:[],s:[],s:[s]}", "result", "test_url", "errors", msg));
		return;
	}
	if (rc) {
		api_error(out, 500, "cannot restart job %lld", (long long)req->id);
		return;
	}
	snprintf(key, sizeof(key), "%lld", (long long)req->id);
	snprintf(url, sizeof(url), "/tests/%lld", (long long)new_id);
	api_json(out, json_pack("{s:[{s:I}],s:[{s:s}]}", "result", key, (json_int_t)new_id, "test_url", key, url));
}

const struct api_route api_jobs_routes[] = {
	{ "GET", "/api/v1/jobs", AUTH_PUBLIC, jobs_list, NULL },
	{ "POST", "/api/v1/jobs", AUTH_OPERATOR, job_create, NULL },
	{ "GET", "/api/v1/jobs/#", AUTH_PUBLIC, job_show, NULL },
	{ "GET", "/api/v1/jobs/#/details", AUTH_PUBLIC, job_details, NULL },
	{ "GET", "/api/v1/experimental/jobs/#/status", AUTH_PUBLIC, job_status, NULL },
	{ "DELETE", "/api/v1/jobs/#", AUTH_OPERATOR, job_delete, NULL },
	{ "POST", "/api/v1/jobs/#/cancel", AUTH_OPERATOR, job_cancel, NULL },
	{ "POST", "/api/v1/jobs/#/restart", AUTH_OPERATOR, job_restart, NULL },
	{ NULL, NULL, AUTH_PUBLIC, NULL, NULL },
};
