/* SPDX-License-Identifier: MIT */
/* api_jobs.c - the /api/v1/jobs routes (Job.pm): list with filters, show,
 * details, status, direct creation from settings (one job, or several
 * chained ones as openqa-clone-job posts them), delete, cancel, restart.
 * The job model is jobs.c; this file parses and validates requests. */
#define LOG_MODULE "api"
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "server/api.h"
#include "server/db.h"
#include "server/artefacts.h"
#include "server/assets.h"
#include "server/deps.h"
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

/* check_assets=1: the job's assets not (or no longer) under factory/, as "type/name". */
static json_t *missing_assets(struct api_req *req, const json_t *assets)
{
	json_t *missing = json_array(), *names, *v;
	const char *type;
	size_t i;

	json_object_foreach((json_t *)assets, type, names)
		json_array_foreach(names, i, v) {
			char *path = asset_path(req->data_dir, type, json_string_value(v));
			if (!path || !file_exists(path)) {
				char both[300];
				snprintf(both, sizeof(both), "%s/%s", type, json_string_value(v));
				json_array_append_new(missing, json_string(both));
			}
			free(path);
		}
	return missing;
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
		if (params_get(&req->params, "check_assets"))
			json_object_set_new(j, "missing_assets", missing_assets(req, json_object_get(j, "assets")));
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

/* Limits of one POST /api/v1/jobs. */
#define JOBS_POST_MAX 64

/* Settings of one posted job (keys uppercased, '_' controls included)
 * completed from the tables unless clone, then inserted. 0 and *id, or an
 * HTTP status with the reason in msg. */
static int create_one(struct api_req *req, const json_t *post, bool clone, int64_t *id, char *msg, size_t msglen)
{
	json_t *s = json_object(), *keep = json_object(), *val;
	const char *v, *key;
	int64_t group = 0, prio = JOBS_DEFAULT_PRIORITY, rowid;
	int status = 0;

	v = json_string_value(json_object_get(post, "TEST"));
	if (!v || !*v) {
		snprintf(msg, msglen, "TEST field mandatory");
		status = 400;
		goto out;
	}
	if ((v = json_string_value(json_object_get(post, "_PRIORITY")))) {
		long p;
		if (str_to_long(v, &p)) {
			snprintf(msg, msglen, "_PRIORITY must be an integer, not '%s'", v);
			status = 400;
			goto out;
		}
		prio = p;
	}
	if ((v = json_string_value(json_object_get(post, "_GROUP_ID")))) {
		if (api_parse_id(v, &group) || db_query_int(req->db, &rowid, "SELECT id FROM job_groups WHERE id = ?", "i", group)) {
			snprintf(msg, msglen, "_GROUP_ID: job group '%s' does not exist", v);
			status = 400;
			goto out;
		}
	} else if ((v = json_string_value(json_object_get(post, "_GROUP")))) {
		if (db_query_int(req->db, &group, "SELECT id FROM job_groups WHERE name = ?", "t", v)) {
			snprintf(msg, msglen, "_GROUP: job group '%s' does not exist", v);
			status = 400;
			goto out;
		}
	}
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
			struct db_stmt *st;
			(void)jobs_table_settings(req->db, "machine", rowid, s);
			if (!db_prepare(req->db, &st, "SELECT backend FROM machines WHERE id = ?", "i", rowid)) {
				if (db_step(st) == 1 && !json_object_get(s, "BACKEND"))
					json_object_set_new(s, "BACKEND", json_string(db_col_text(st, 0)));
				db_finalize(st);
			}
		}
		if (!db_query_int(req->db, &rowid, "SELECT id FROM test_suites WHERE name = ?", "t",
				  json_string_value(json_object_get(post, "TEST"))))
			(void)jobs_table_settings(req->db, "test_suite", rowid, s);
	}
	json_object_foreach((json_t *)post, key, val)
		if (key[0] != '_')
			json_object_set(keep, key, val);
	jobs_settings_merge(s, keep);
	if (!clone) {
		jobs_settings_default_class(s);
		jobs_settings_expand(s);
	}
	if (jobs_insert(req->db, s, prio, group, 0, id)) {
		snprintf(msg, msglen, "cannot create the job: %s", db_errmsg(req->db));
		status = 500;
	}
out:
	json_decref(s);
	json_decref(keep);
	return status;
}

/* The dependencies one posted job names: _START_AFTER / _START_DIRECTLY_AFTER
 * (suffixes of this post) and _START_AFTER_JOBS / _START_DIRECTLY_AFTER_JOBS
 * (ids of existing jobs). 0 or an HTTP status with msg. */
static int link_one(struct api_req *req, const json_t *post, int64_t child, const json_t *ids, char *msg, size_t msglen)
{
	static const struct { const char *key; int type; bool existing; } kinds[] = {
		{ "_START_AFTER", DEPS_CHAINED, false },
		{ "_START_DIRECTLY_AFTER", DEPS_DIRECTLY_CHAINED, false },
		{ "_START_AFTER_JOBS", DEPS_CHAINED, true },
		{ "_START_DIRECTLY_AFTER_JOBS", DEPS_DIRECTLY_CHAINED, true },
	};
	size_t k;

	if (json_object_get(post, "_PARALLEL") || json_object_get(post, "_PARALLEL_JOBS")) {
		snprintf(msg, msglen, "parallel jobs (_PARALLEL, _PARALLEL_JOBS) are not supported");
		return 400;
	}
	for (k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		const char *p = json_string_value(json_object_get(post, kinds[k].key));
		while (p && *p) {
			size_t n = strcspn(p, ",");
			char ref[64];
			int64_t parent = 0;
			int rc;
			if (n == 0 || n >= sizeof(ref)) {
				snprintf(msg, msglen, "%s: bad entry '%.*s'", kinds[k].key, (int)(n < 64 ? n : 64), p);
				return 400;
			}
			memcpy(ref, p, n);
			ref[n] = '\0';
			if (kinds[k].existing) {
				if (api_parse_id(ref, &parent)) {
					snprintf(msg, msglen, "%s: '%s' is not a job id", kinds[k].key, ref);
					return 400;
				}
			} else if (!json_is_integer(json_object_get(ids, ref))) {
				snprintf(msg, msglen, "Specified dependency '%s' does not relate to a present job-suffix.", ref);
				return 400;
			} else {
				parent = json_integer_value(json_object_get(ids, ref));
			}
			rc = deps_add(req->db, parent, child, kinds[k].type, msg, msglen);
			if (rc == ERR_NOT_FOUND || rc == ERR_INVALID)
				return 400;
			if (rc) {
				snprintf(msg, msglen, "cannot record the dependency: %s", db_errmsg(req->db));
				return 500;
			}
			p += n + (p[n] == ',');
		}
	}
	return 0;
}

/* POST /api/v1/jobs: one job from KEY=VALUE, or several from KEY:SUFFIX=VALUE
 * (split at the last ':'; keys without a suffix apply to every job), as
 * openqa-clone-job posts a job with its parents. All in one transaction. */
static void job_create(struct api_req *req, struct api_resp *out)
{
	json_t *global = json_object(), *per = json_object(), *ids = json_object(), *post, *v;
	const char *suffix;
	char msg[512];
	bool clone, multi;
	size_t i;
	int status;

	if (req->json) {
		api_error(out, 400, "send job settings as form parameters (KEY=VALUE)");
		goto out;
	}
	for (i = 0; i < req->params.n; i++) {
		char *u = api_upper(req->params.v[i].key), *colon;
		json_t *into = global;
		if (!u) {
			api_error(out, 500, "out of memory");
			goto out;
		}
		colon = strrchr(u, ':');
		if (colon) {
			const char *sfx = req->params.v[i].key + (colon - u) + 1;
			*colon = '\0';
			if (*sfx) {
				into = json_object_get(per, sfx);
				if (!into) {
					if (json_object_size(per) >= JOBS_POST_MAX) {
						api_error(out, 400, "more than %d jobs in one post", JOBS_POST_MAX);
						free(u);
						goto out;
					}
					json_object_set_new(per, sfx, json_object());
					into = json_object_get(per, sfx);
				}
			}
		}
		if (*u)
			json_object_set_new(into, u, json_string(req->params.v[i].value));
		free(u);
	}
	v = json_object_get(global, "IS_CLONE_JOB");
	clone = v && strcmp(json_string_value(v), "0");
	json_object_del(global, "IS_CLONE_JOB");
	multi = json_object_size(per) > 0;
	if (!multi)
		json_object_set(per, "", global);
	if (db_begin(req->db)) {
		api_error(out, 500, "cannot start a transaction");
		goto out;
	}
	json_object_foreach(per, suffix, post) {
		json_t *all = json_deep_copy(global);
		int64_t id = 0;
		json_object_update(all, post);
		json_object_del(all, "IS_CLONE_JOB");
		status = create_one(req, all, clone, &id, msg, sizeof(msg));
		json_decref(all);
		if (status) {
			db_rollback(req->db);
			api_error(out, status, "%s%s%s", multi ? suffix : "", multi ? ": " : "", msg);
			goto out;
		}
		json_object_set_new(ids, suffix, json_integer(id));
	}
	json_object_foreach(per, suffix, post) {
		json_t *all = json_deep_copy(global);
		json_object_update(all, post);
		status = link_one(req, all, json_integer_value(json_object_get(ids, suffix)), ids, msg, sizeof(msg));
		json_decref(all);
		if (status) {
			db_rollback(req->db);
			api_error(out, status, "%s", msg);
			goto out;
		}
	}
	if (db_commit(req->db)) {
		db_rollback(req->db);
		api_error(out, 500, "cannot create the jobs: %s", db_errmsg(req->db));
		goto out;
	}
	if (multi)
		api_json(out, json_pack("{s:O}", "ids", ids));
	else
		api_json(out, json_pack("{s:O}", "id", json_object_get(ids, "")));
out:
	json_decref(global);
	json_decref(per);
	json_decref(ids);
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
	int64_t new_id, before = 0;
	json_t *map, *urls;
	struct db_stmt *st;
	int rc;

	/* The clones made by this restart (the job and the chained children it
	 * skipped) are those with ids above the highest one now. */
	(void)db_query_int(req->db, &before, "SELECT COALESCE(MAX(id), 0) FROM jobs", NULL);
	rc = jobs_restart(req->db, req->id, &new_id, msg, sizeof(msg));
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
	map = json_object();
	urls = json_object();
	if (!db_prepare(req->db, &st, "SELECT id, clone_id FROM jobs WHERE clone_id > ? ORDER BY id", "i", before)) {
		while (db_step(st) == 1) {
			snprintf(key, sizeof(key), "%lld", (long long)db_col_int(st, 0));
			snprintf(url, sizeof(url), "/tests/%lld", (long long)db_col_int(st, 1));
			json_object_set_new(map, key, json_integer(db_col_int(st, 1)));
			json_object_set_new(urls, key, json_string(url));
		}
		db_finalize(st);
	}
	snprintf(key, sizeof(key), "%lld", (long long)req->id);
	snprintf(url, sizeof(url), "/tests/%lld", (long long)new_id);
	json_object_set_new(map, key, json_integer(new_id));
	json_object_set_new(urls, key, json_string(url));
	api_json(out, json_pack("{s:[o],s:[o]}", "result", map, "test_url", urls));
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
