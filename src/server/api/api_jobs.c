/* SPDX-License-Identifier: MIT */
/* api_jobs.c - the /api/v1/jobs routes (Job.pm): list with filters (and
 * vigil's keyset pages), show, details, status, direct creation from
 * settings (one job, or several chained ones as openqa-clone-job posts
 * them), delete, cancel, restart; and the lists' aggregates: the overview
 * of a build, the build results of a group and of the dashboard. The job
 * model is jobs.c, the lists joblist.c and builds.c; this file parses and
 * validates requests.
 *
 *   method path                                   what
 *   GET    /api/v1/jobs                           openQA's filters, limit, offset, latest, before, after;
 *                                                 vigil: sort=id|result|test, next=ID | prev=ID (keyset)
 *   GET    /api/v1/jobs/overview                  latest job of each scenario of a build (openQA)
 *   POST   /api/v1/jobs/<id>/prio                 prio=N (openQA's set_prio)
 *   POST   /api/v1/jobs/cancel                    KEY=VALUE filter, reason= (openQA's cancel_by_settings)
 *   POST   /api/v1/jobs/restart                   jobs=ID... (also jobs[]=), prio= (openQA's apiv1_restart_jobs)
 *   GET    /api/v1/job_groups/<id>/build_results  a group's builds with counts (openQA)
 *   GET    /dashboard_build_results[.json]        every group's newest builds (openQA's, JSON only)
 */
#define LOG_MODULE "api"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "server/http/api.h"
#include "server/store/jbuild.h"
#include "server/store/artefacts.h"
#include "server/store/assets.h"
#include "server/store/builds.h"
#include "server/store/groups.h"
#include "server/store/joblist.h"
#include "server/store/jobs.h"
#include "server/store/workers.h"
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

/* Every value of a list parameter (repeated and/or comma-separated); a
 * value lost for want of memory is recorded in b. */
static json_t *list_param(struct jbuild *b, const struct params *p, const char *key)
{
	json_t *a = jbuild_take(b, json_array(), key);
	size_t i;

	for (i = 0; i < p->n; i++) {
		const char *s = p->v[i].value;
		if (strcmp(p->v[i].key, key))
			continue;
		while (*s) {
			size_t n = strcspn(s, ",");
			if (n) {
				char *one = strndup(s, n);
				jbuild_append(b, a, one ? json_string(one) : NULL);
				free(one);
			}
			s += n + (s[n] == ',');
		}
	}
	return a;
}

/* A parameter's value, NULL when absent or empty (openQA ignores empty filters). */
static const char *param(const struct params *p, const char *key)
{
	const char *v = params_get(p, key);
	return v && *v ? v : NULL;
}

/* An optional id parameter (> 0). 0 when absent; ERR_INVALID. */
static int id_param(const struct params *p, const char *key, int64_t *out)
{
	const char *v = param(p, key);

	*out = 0;
	return v ? api_parse_id(v, out) : 0;
}

/* An optional count parameter >= 0 into *out (unchanged when absent). 0 or ERR_INVALID. */
static int count_param(const struct params *p, const char *key, long *out)
{
	const char *v = param(p, key);
	long n;

	if (!v)
		return 0;
	if (str_to_long(v, &n) || n < 0)
		return ERR_INVALID;
	*out = n;
	return 0;
}

/* GET /api/v1/jobs: openQA's filters (build iso distri version flavor
 * arch test machine group groupid state result ids scope before after),
 * and either openQA's limit/offset/latest (the newest jobs, listed oldest
 * first) or, when sort, next or prev is given, vigil's keyset page
 * (joblist.h): {"jobs": [in list order], "next": id|null, "prev": id|null}. */
static void jobs_get(struct api_req *req, struct api_resp *out)
{
	const struct params *p = &req->params;
	struct jbuild lists = JBUILD_INIT;
	json_t *states = list_param(&lists, p, "state"), *res = list_param(&lists, p, "result");
	json_t *ids = list_param(&lists, p, "ids");
	struct buf text;
	const char *scope = param(p, "scope"), *sort = param(p, "sort"), *grp = param(p, "groupid");
	const char *gname = param(p, "group");
	struct joblist_filter f = {
		.build = param(p, "build"), .distri = param(p, "distri"), .version = param(p, "version"),
		.flavor = param(p, "flavor"), .arch = param(p, "arch"), .test = param(p, "test"),
		.machine = param(p, "machine"), .iso = param(p, "iso"), .states = states, .results = res, .ids = ids,
		.current = scope && (!strcmp(scope, "current") || !strcmp(scope, "relevant")),
	};
	struct joblist_page pg = { .sort = JOBLIST_SORT_ID, .limit = JOBS_LIST_DEFAULT_LIMIT };
	bool latest = param(p, "latest") && strcmp(param(p, "latest"), "0");
	bool keyset = sort || param(p, "next") || param(p, "prev");
	long offset = 0, group = 0;
	size_t i;
	json_t *v;
	int rc;

	if (jbuild_failed(&lists)) { /* a filter would be lost */
		api_nomem(out);
		goto out;
	}
	if (count_param(p, "limit", &pg.limit) || pg.limit == 0 || pg.limit > JOBS_LIST_MAX_LIMIT) {
		api_error(out, 400, "Limit exceeds maximum (or is not a positive integer): %s", param(p, "limit"));
		goto out;
	}
	if (count_param(p, "offset", &offset) || (grp && (str_to_long(grp, &group) || group < 0))) {
		api_error(out, 400, "Erroneous parameters (offset and groupid must be integers)");
		goto out;
	}
	if (id_param(p, "before", &f.before) || id_param(p, "after", &f.after) || id_param(p, "next", &pg.next) ||
	    id_param(p, "prev", &pg.prev)) {
		api_error(out, 400, "before, after, next and prev must be job ids");
		goto out;
	}
	if (sort && strcmp(sort, "id") && strcmp(sort, "result") && strcmp(sort, "test")) {
		api_error(out, 400, "unknown sort '%s' (id, result or test)", sort);
		goto out;
	}
	if (keyset && (offset || latest || (pg.next && pg.prev))) {
		api_error(out, 400, "a keyset page (sort, next, prev) takes one of next and prev, and no offset or latest");
		goto out;
	}
	if (sort)
		pg.sort = !strcmp(sort, "result") ? JOBLIST_SORT_RESULT
			  : !strcmp(sort, "test") ? JOBLIST_SORT_TEST : JOBLIST_SORT_ID;
	f.group = group;
	f.no_group = grp && group == 0;
	if (json_array_size(ids) > JOBLIST_MAX_IDS) {
		api_error(out, 400, "more than %d ids", JOBLIST_MAX_IDS);
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
	if (gname && !grp) {
		int64_t gid;
		rc = groups_by_name(req->db, gname, &gid);
		if (rc == ERR_NOT_FOUND) { /* no such group: no jobs */
			api_json(out, keyset ? json_pack("{s:[],s:n,s:n}", "jobs", "next", "prev")
					     : json_pack("{s:[]}", "jobs"));
			goto out;
		}
		if (rc) {
			api_error(out, 500, "cannot read job groups");
			goto out;
		}
		f.group = gid;
	}
	/* The list is written as JSON text straight from the rows (the
	 * uncached list's cost was mostly building and dumping a jansson tree). */
	buf_init(&text, LIMIT_JOBLIST_TEXT);
	if (keyset) {
		rc = joblist_page_text(req->db, &f, &pg, &text);
		if (rc == ERR_NOT_FOUND)
			api_error(out, 400, "job %lld (the page's cursor) no longer exists",
				  (long long)(pg.next ? pg.next : pg.prev));
		else if (rc == ERR_NOMEM)
			api_nomem(out);
		else if (rc)
			api_error(out, 500, "cannot read jobs");
	} else if ((rc = joblist_openqa_text(req->db, &f, pg.limit, offset, latest, &text))) {
		if (rc == ERR_NOMEM)
			api_nomem(out);
		else
			api_error(out, 500, "cannot read jobs");
	}
	if (!rc)
		api_json_text(out, buf_steal(&text));
	buf_release(&text);
out:
	json_decref(states);
	json_decref(res);
	json_decref(ids);
}

/* GET /api/v1/jobs/overview (openQA): the latest job of each scenario of
 * one build, [{"id", "name", ...}] (builds.h). */
static void jobs_overview(struct api_req *req, struct api_resp *out)
{
	const struct params *p = &req->params;
	struct builds_overview_q q = {
		param(p, "distri"), param(p, "version"), param(p, "flavor"), param(p, "arch"), param(p, "machine"),
		param(p, "test"), param(p, "build"), 0, false,
	};
	json_t *a;
	int rc;

	if (id_param(p, "groupid", &q.group)) {
		api_error(out, 400, "groupid must be a job group id");
		return;
	}
	q.todo = param(p, "todo") && strcmp(param(p, "todo"), "0");
	if ((rc = builds_overview(req->db, &q, &a, NULL)) == ERR_NOMEM)
		api_nomem(out);
	else if (rc)
		api_error(out, 500, "cannot read jobs");
	else
		api_json(out, a);
}

/* limit_builds and time_limit_days of the build results routes. 0 or an answered error. */
static int build_params(struct api_req *req, struct api_resp *out, long *limit, long *days)
{
	if (count_param(&req->params, "limit_builds", limit) || count_param(&req->params, "time_limit_days", days)) {
		api_error(out, 400, "limit_builds and time_limit_days must be counts");
		return ERR_INVALID;
	}
	return 0;
}

/* GET /api/v1/job_groups/<id>/build_results (openQA): limit_builds
 * (default 10), time_limit_days (default 0: any). */
static void group_builds(struct api_req *req, struct api_resp *out)
{
	long limit = 10, days = 0;
	json_t *j;
	int rc;

	if (build_params(req, out, &limit, &days))
		return;
	rc = builds_group(req->db, req->id, limit, days, &j, NULL);
	if (rc == ERR_NOT_FOUND)
		api_error(out, 404, "Job group %lld does not exist", (long long)req->id);
	else if (rc == ERR_NOMEM)
		api_nomem(out);
	else if (rc)
		api_error(out, 500, "cannot read the builds of job group %lld", (long long)req->id);
	else
		api_json(out, j);
}

/* GET /dashboard_build_results (openQA's, as JSON): limit_builds (default
 * 3) and time_limit_days (default 14) as openQA's front page. */
static void dashboard_builds(struct api_req *req, struct api_resp *out)
{
	long limit = 3, days = 14;
	json_t *j;
	int rc;

	if (build_params(req, out, &limit, &days))
		return;
	if ((rc = builds_dashboard(req->db, limit, days, &j)) == ERR_NOMEM)
		api_nomem(out);
	else if (rc)
		api_error(out, 500, "cannot read the builds");
	else
		api_json(out, j);
}

/* check_assets=1: the job's assets not (or no longer) under factory/, as "type/name". */
static json_t *missing_assets(struct api_req *req, struct jbuild *b, const json_t *assets)
{
	json_t *missing = jbuild_take(b, json_array(), "missing_assets"), *names, *v;
	const char *type;
	size_t i;

	json_object_foreach((json_t *)assets, type, names)
		json_array_foreach(names, i, v) {
			char *path = asset_path(req->data_dir, type, json_string_value(v));
			if (!path || !file_exists(path)) {
				char both[300];
				snprintf(both, sizeof(both), "%s/%s", type, json_string_value(v));
				jbuild_append(b, missing, json_string(both));
			}
			free(path);
		}
	return missing;
}

static void show(struct api_req *req, struct api_resp *out, bool details)
{
	json_t *j;
	int rc = jobs_details_json(req->db, req->data_dir, req->id, details, &j);

	if (rc == ERR_NOT_FOUND)
		not_found(out, req->id);
	else if (rc == ERR_NOMEM)
		api_nomem(out);
	else if (rc)
		api_error(out, 500, "cannot read job %lld", (long long)req->id);
	else {
		struct jbuild b = JBUILD_INIT;
		if (params_get(&req->params, "check_assets"))
			jbuild_set(&b, j, "missing_assets", missing_assets(req, &b, json_object_get(j, "assets")));
		api_json_built(&b, out, json_pack("{s:o}", "job", j));
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
	struct jbuild b = JBUILD_INIT;
	json_t *global = jbuild_take(&b, json_object(), "settings"), *per = jbuild_take(&b, json_object(), "jobs");
	json_t *ids = jbuild_take(&b, json_object(), "ids"), *v, *ans = NULL;
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
		if (!u || jbuild_failed(&b)) {
			free(u);
			api_nomem(out);
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
					jbuild_set(&b, per, sfx, json_object());
					into = json_object_get(per, sfx);
				}
			}
		}
		if (*u && into)
			jbuild_set(&b, into, u, json_string(req->params.v[i].value));
		free(u);
	}
	/* A setting lost for want of memory: nothing is stored. */
	if (jbuild_failed(&b)) {
		api_nomem(out);
		goto out;
	}
	v = json_object_get(global, "IS_CLONE_JOB");
	clone = v && strcmp(json_string_value(v), "0");
	json_object_del(global, "IS_CLONE_JOB");
	multi = json_object_size(per) > 0;
	if (!multi && json_object_set(per, "", global)) {
		api_nomem(out);
		goto out;
	}
	/* The answer is made before the jobs: once they are stored, answering
	 * needs no memory (a 503 then would make the client post them again). */
	ans = multi ? json_pack("{s:O}", "ids", ids) : json_pack("{s:i}", "id", 0);
	if (!ans) {
		api_nomem(out);
		goto out;
	}
	rc = jobs_create_posted(req->db, global, per, clone, multi, ids, msg, sizeof(msg));
	if (rc == ERR_NOMEM) {
		api_nomem(out);
		goto out;
	}
	if (rc) {
		api_error(out, rc == ERR_INVALID || rc == ERR_TOO_BIG ? 400 : 500, "%s", msg);
		goto out;
	}
	if (!multi)
		json_integer_set(json_object_get(ans, "id"), json_integer_value(json_object_get(ids, "")));
	api_json(out, ans);
	ans = NULL;
out:
	json_decref(ans);
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

/* Restart one job into the arrays of openQA's answer: result gets
 * {"old id": new id, ...} (the job and the relatives cloned with it),
 * test_url their /tests/ links, errors a message; with prio (has_prio) the
 * clones get that priority. 0, ERR_NOT_FOUND (the message in errors), or a
 * db error. */
static int restart_into(struct api_req *req, struct jbuild *b, int64_t id, bool has_prio, int64_t prio,
			json_t *result, json_t *test_url, json_t *errors)
{
	char msg[256], key[24], url[48];
	int64_t new_id;
	json_t *map, *urls, *clones, *v;
	const char *old;
	int rc = jobs_restart_clones(req->db, id, &new_id, &clones, msg, sizeof(msg));

	if (rc == ERR_NOT_FOUND) {
		snprintf(msg, sizeof(msg), "Job %lld does not exist", (long long)id);
		jbuild_append(b, errors, json_string(msg));
		return rc;
	}
	if (rc == ERR_BADSTATE) {
		jbuild_append(b, errors, json_string(msg));
		return 0;
	}
	if (rc)
		return rc;
	map = jbuild_take(b, json_object(), "result");
	urls = jbuild_take(b, json_object(), "test_url");
	snprintf(key, sizeof(key), "%lld", (long long)id);
	jbuild_set(b, clones, key, json_integer(new_id));
	json_object_foreach(clones, old, v) {
		snprintf(url, sizeof(url), "/tests/%lld", (long long)json_integer_value(v));
		jbuild_set_ref(b, map, old, v);
		jbuild_set(b, urls, old, json_string(url));
		if (has_prio && !rc)
			rc = jobs_set_prio(req->db, json_integer_value(v), prio);
	}
	json_decref(clones);
	jbuild_append(b, result, map);
	jbuild_append(b, test_url, urls);
	return rc;
}

/* openQA's optional prio parameter: 0 (absent: *has false), ERR_INVALID (answered 400). */
static int prio_param(struct api_req *req, struct api_resp *out, bool required, bool *has, int64_t *prio)
{
	const char *v = params_get(&req->params, "prio");
	long n;

	*has = v != NULL;
	if (!v && !required)
		return 0;
	if (!v || str_to_long(v, &n)) {
		api_error(out, 400, "prio: %s%s%s", v ? "'" : "", v ? v : "missing", v ? "' is not an integer" : "");
		return ERR_INVALID;
	}
	*prio = n;
	return 0;
}

/* The restart answer over ids: 200 with result/test_url (and errors when
 * some job could not be restarted), as openQA's _restart. */
static void restart_ids(struct api_req *req, struct api_resp *out, const int64_t *ids, size_t n, bool single)
{
	struct jbuild b = JBUILD_INIT;
	json_t *result = jbuild_take(&b, json_array(), "result"), *urls = jbuild_take(&b, json_array(), "test_url");
	json_t *errors = jbuild_take(&b, json_array(), "errors"), *ans;
	int64_t prio = 0, failed = 0;
	bool has_prio;
	size_t i;
	int rc = prio_param(req, out, false, &has_prio, &prio);

	if (rc) { /* answered */
		json_decref(result);
		json_decref(urls);
		json_decref(errors);
		return;
	}
	for (i = 0; !rc && i < n; i++) {
		rc = restart_into(req, &b, ids[i], has_prio, prio, result, urls, errors);
		if (rc == ERR_NOT_FOUND && !single)
			rc = 0;
		failed = ids[i];
	}
	if (n == 0)
		jbuild_append(&b, errors, json_string("No job IDs specified"));
	if (rc == ERR_NOT_FOUND)
		not_found(out, failed);
	else if (rc)
		api_error(out, 500, "cannot restart job %lld", (long long)failed);
	if (rc) {
		json_decref(result);
		json_decref(urls);
		json_decref(errors);
		return;
	}
	/* The restarts are done: an answer that could not be built whole is a
	 * 503 nonetheless (the jobs show their clones). */
	ans = json_pack("{s:o,s:o}", "result", result, "test_url", urls);
	if (ans && json_array_size(errors))
		jbuild_set_ref(&b, ans, "errors", errors);
	json_decref(errors);
	api_json_built(&b, out, ans);
}

static void job_restart(struct api_req *req, struct api_resp *out)
{
	restart_ids(req, out, &req->id, 1, true);
}

/* POST /api/v1/jobs/restart jobs=ID... (also jobs[]=, comma-separated): openQA's apiv1_restart_jobs. */
static void jobs_restart_bulk(struct api_req *req, struct api_resp *out)
{
	struct jbuild bl = JBUILD_INIT;
	json_t *a = list_param(&bl, &req->params, "jobs"), *b = list_param(&bl, &req->params, "jobs[]"), *v;
	int64_t *ids;
	size_t i, n = 0;

	if (a && b && json_array_extend(a, b))
		jbuild_take(&bl, NULL, "jobs");
	json_decref(b);
	ids = jbuild_failed(&bl) ? NULL : calloc(json_array_size(a) + 1, sizeof(*ids));
	if (!ids) {
		json_decref(a);
		api_nomem(out);
		return;
	}
	json_array_foreach(a, i, v) {
		if (api_parse_id(json_string_value(v), &ids[n])) {
			api_error(out, 400, "jobs: '%s' is not a job id", json_string_value(v));
			free(ids);
			json_decref(a);
			return;
		}
		n++;
	}
	json_decref(a);
	restart_ids(req, out, ids, n, false);
	free(ids);
}

/* POST /api/v1/jobs/<id>/prio prio=N: openQA's set_prio. */
static void job_prio(struct api_req *req, struct api_resp *out)
{
	int64_t prio = 0;
	bool has;
	int rc;

	if (prio_param(req, out, true, &has, &prio))
		return;
	rc = jobs_set_prio(req->db, req->id, prio);
	if (rc == ERR_NOT_FOUND)
		not_found(out, req->id);
	else if (rc)
		api_error(out, 500, "cannot set the priority of job %lld", (long long)req->id);
	else
		api_json(out, json_pack("{s:b}", "result", 1));
}

/* POST /api/v1/jobs/cancel KEY=VALUE...: openQA's cancel_by_settings over
 * jobs not ended; reason= is the reason, not a setting. An empty filter is
 * refused (openQA would cancel every job). */
static void jobs_cancel_bulk(struct api_req *req, struct api_resp *out)
{
	struct jbuild b = JBUILD_INIT;
	json_t *filter = jbuild_take(&b, json_object(), "filter");
	size_t i;
	int n = 0, rc;

	for (i = 0; filter && i < req->params.n; i++)
		if (strcmp(req->params.v[i].key, "reason"))
			jbuild_set(&b, filter, req->params.v[i].key, json_string(req->params.v[i].value));
	if (jbuild_failed(&b)) { /* a smaller filter would cancel more */
		json_decref(filter);
		api_nomem(out);
		return;
	}
	if (!json_object_size(filter)) {
		json_decref(filter);
		api_error(out, 400, "cancel: no settings given (e.g. BUILD=...): refusing to cancel every job");
		return;
	}
	rc = jobs_cancel_by_settings(req->db, filter, params_get(&req->params, "reason"), &n);
	json_decref(filter);
	if (rc)
		api_error(out, 500, "cannot cancel jobs");
	else
		api_json(out, json_pack("{s:i}", "result", n));
}

const struct api_route api_jobs_routes[] = {
	{ "GET", "/api/v1/jobs", AUTH_PUBLIC, jobs_get, NULL },
	{ "GET", "/api/v1/jobs/overview", AUTH_PUBLIC, jobs_overview, NULL },
	{ "GET", "/api/v1/job_groups/#/build_results", AUTH_PUBLIC, group_builds, NULL },
	{ "GET", "/dashboard_build_results", AUTH_PUBLIC, dashboard_builds, NULL },
	{ "GET", "/dashboard_build_results.json", AUTH_PUBLIC, dashboard_builds, NULL },
	{ "POST", "/api/v1/jobs", AUTH_OPERATOR, job_create, NULL },
	{ "GET", "/api/v1/jobs/#", AUTH_PUBLIC, job_show, NULL },
	{ "GET", "/api/v1/jobs/#/details", AUTH_PUBLIC, job_details, NULL },
	{ "GET", "/api/v1/experimental/jobs/#/status", AUTH_PUBLIC, job_status, NULL },
	{ "DELETE", "/api/v1/jobs/#", AUTH_OPERATOR, job_delete, NULL },
	{ "POST", "/api/v1/jobs/#/cancel", AUTH_OPERATOR, job_cancel, NULL },
	{ "POST", "/api/v1/jobs/#/restart", AUTH_OPERATOR, job_restart, NULL },
	{ "POST", "/api/v1/jobs/#/prio", AUTH_OPERATOR, job_prio, NULL },
	{ "POST", "/api/v1/jobs/cancel", AUTH_OPERATOR, jobs_cancel_bulk, NULL },
	{ "POST", "/api/v1/jobs/restart", AUTH_OPERATOR, jobs_restart_bulk, NULL },
	{ NULL, NULL, AUTH_PUBLIC, NULL, NULL },
};
