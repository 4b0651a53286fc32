/* SPDX-License-Identifier: MIT */
/* api_jobs.c - the /api/v1/jobs routes (Job.pm): list with filters, show,
 * details, status, direct creation from settings (one job, or several
 * chained ones as openqa-clone-job posts them), delete, cancel, restart.
 * The job model is jobs.c; this file parses and validates requests. */
#define LOG_MODULE "api"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "server/api.h"
#include "server/artefacts.h"
#include "server/assets.h"
#include "server/jobs.h"
#include "server/workers.h"
#include "util/err.h"
#include "util/file.h"
#include "util/str.h"
#include "util/banned.h" /* last: after every system header */

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

static void jobs_get(struct api_req *req, struct api_resp *out)
{
	const struct params *p = &req->params;
	json_t *states = list_param(p, "state"), *res = list_param(p, "result"), *ids = list_param(p, "ids");
	json_t *jobs = NULL;
	const char *lim = params_get(p, "limit"), *off = params_get(p, "offset"), *grp = params_get(p, "groupid");
	const char *scope = params_get(p, "scope");
	struct jobs_filter f = {
		params_get(p, "build"), params_get(p, "distri"), params_get(p, "version"), params_get(p, "flavor"),
		params_get(p, "arch"), params_get(p, "test"), params_get(p, "machine"), params_get(p, "iso"),
		0, states, res, ids,
		scope && (!strcmp(scope, "current") || !strcmp(scope, "relevant")),
		params_get(p, "latest") && strcmp(params_get(p, "latest"), "0"),
		JOBS_LIST_DEFAULT_LIMIT, 0,
	};
	long group = 0;
	size_t i;
	json_t *v;

	if (lim && (str_to_long(lim, &f.limit) || f.limit <= 0 || f.limit > JOBS_LIST_MAX_LIMIT)) {
		api_error(out, 400, "Limit exceeds maximum (or is not a positive integer): %s", lim);
		goto out;
	}
	if ((off && (str_to_long(off, &f.offset) || f.offset < 0)) || (grp && str_to_long(grp, &group))) {
		api_error(out, 400, "Erroneous parameters (offset and groupid must be integers)");
		goto out;
	}
	f.group = group;
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
	if (jobs_list(req->db, &f, &jobs)) {
		api_error(out, 500, "cannot read jobs");
		goto out;
	}
	api_json(out, json_pack("{s:o}", "jobs", jobs));
out:
	json_decref(states);
	json_decref(res);
	json_decref(ids);
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
			json_object_set_new(j, "logs", artefact_list(req->data_dir, req->id, ARTEFACT_FILE, false));
			json_object_set_new(j, "screenshots", artefact_list(req->data_dir, req->id, ARTEFACT_FILE, true));
			json_object_set_new(j, "ulogs", artefact_list(req->data_dir, req->id, ARTEFACT_ULOG, false));
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
	json_t *j;
	int rc = jobs_status_json(req->db, req->id, &j);

	if (rc == ERR_NOT_FOUND)
		not_found(out, req->id);
	else if (rc)
		api_error(out, 500, "cannot read job %lld", (long long)req->id);
	else
		api_json(out, j);
}

/* Limits of one POST /api/v1/jobs. */
#define JOBS_POST_MAX 64

/* POST /api/v1/jobs: one job from KEY=VALUE, or several from KEY:SUFFIX=VALUE
 * (split at the last ':'; keys without a suffix apply to every job), as
 * openqa-clone-job posts a job with its parents. All in one transaction. */
static void job_create(struct api_req *req, struct api_resp *out)
{
	json_t *global = json_object(), *per = json_object(), *ids = json_object(), *v;
	char msg[1024];
	bool clone, multi;
	size_t i;
	int rc;

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
	rc = jobs_create_posted(req->db, global, per, clone, multi, ids, msg, sizeof(msg));
	if (rc) {
		api_error(out, rc == ERR_INVALID ? 400 : 500, "%s", msg);
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
	int64_t new_id;
	json_t *map, *urls, *clones, *v;
	const char *old;
	int rc = jobs_restart_clones(req->db, req->id, &new_id, &clones, msg, sizeof(msg));

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
	json_object_foreach(clones, old, v) {
		snprintf(url, sizeof(url), "/tests/%lld", (long long)json_integer_value(v));
		json_object_set(map, old, v);
		json_object_set_new(urls, old, json_string(url));
	}
	json_decref(clones);
	snprintf(key, sizeof(key), "%lld", (long long)req->id);
	snprintf(url, sizeof(url), "/tests/%lld", (long long)new_id);
	json_object_set_new(map, key, json_integer(new_id));
	json_object_set_new(urls, key, json_string(url));
	api_json(out, json_pack("{s:[o],s:[o]}", "result", map, "test_url", urls));
}

const struct api_route api_jobs_routes[] = {
	{ "GET", "/api/v1/jobs", AUTH_PUBLIC, jobs_get, NULL },
	{ "POST", "/api/v1/jobs", AUTH_OPERATOR, job_create, NULL },
	{ "GET", "/api/v1/jobs/#", AUTH_PUBLIC, job_show, NULL },
	{ "GET", "/api/v1/jobs/#/details", AUTH_PUBLIC, job_details, NULL },
	{ "GET", "/api/v1/experimental/jobs/#/status", AUTH_PUBLIC, job_status, NULL },
	{ "DELETE", "/api/v1/jobs/#", AUTH_OPERATOR, job_delete, NULL },
	{ "POST", "/api/v1/jobs/#/cancel", AUTH_OPERATOR, job_cancel, NULL },
	{ "POST", "/api/v1/jobs/#/restart", AUTH_OPERATOR, job_restart, NULL },
	{ NULL, NULL, AUTH_PUBLIC, NULL, NULL },
};
