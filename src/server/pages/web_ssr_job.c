/* SPDX-License-Identifier: MIT */
/* web_ssr_job.c - the job page, /tests/<id> and /tests/latest?distri=…,
 * built once (web.c's web_page.once; docs/web.md "Pages built once"): its
 * header (name, result, times, worker, group, build, machine), its tabs
 * as links and the #details tab: each module with its result and its
 * steps as thumbnails with their similarity. The job comes from the
 * domain as the API's handler reads it (jobs_details_json), its comments
 * (comments_list), its worker (workers_list_json) and /tests/latest's job
 * (joblist_openqa); the steps from the job's result-<module>.json, read
 * where the artefact route (/tests/<id>/file/<name>) finds them.
 * web/page-job.js adds the behaviour on this markup: the buttons, the
 * areas drawn over the thumbnails (placed by inline style, which the CSP
 * allows scripts only), the opened step, the other tabs and the live view. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "server/store/artefacts.h"
#include "server/store/comments.h"
#include "server/store/joblist.h"
#include "server/store/jobs.h"
#include "server/store/workers.h"
#include "server/pages/web_ssr.h"
#include "util/err.h"
#include "util/banned.h" /* last: after every system header */

/* web/page-job.js's LATEST_KEYS. */
static const char *const latest_keys[] = { "distri", "version", "flavor", "arch",
					   "test",   "machine", "build",  "groupid" };

/* What the first view reads of the job. */
struct job_view {
	long long id;
	json_t *job;      /* details' "job" */
	json_t *logs;     /* its artefact names as a set (object) */
	json_t *pngs;     /* its screenshots as a set */
	json_t *results;  /* name -> result-<name>.json read, owned */
	json_t *overall;  /* results.json, owned, or NULL */
	size_t ncomments;
	double sw, sh;    /* the screen size (XRES x YRES) */
};

/* A JS number as `${n}` writes it (shortest round trip; plain notation
 * for the values met here). */
static void number_text(struct html *h, double v)
{
	char tmp[40];
	int p;

	if (isnan(v)) {
		html_text(h, "NaN");
		return;
	}
	if (v == floor(v) && fabs(v) < 1e15) {
		html_textf(h, "%lld", (long long)v);
		return;
	}
	for (p = 1; p <= 17; p++) {
		snprintf(tmp, sizeof(tmp), "%.*g", p, v);
		if (strtod(tmp, NULL) == v)
			break;
	}
	html_text(h, tmp);
}

/* JS's Number(v) of a JSON value: a number, or a string holding one. */
static double js_number(const json_t *v)
{
	const char *s;
	char *end;
	double d;

	if (json_is_number(v))
		return json_number_value(v);
	if (json_is_true(v))
		return 1;
	if (!v || json_is_null(v) || json_is_false(v))
		return 0;
	if (!json_is_string(v))
		return NAN;
	s = json_string_value(v);
	while (*s == ' ' || *s == '\t' || *s == '\n')
		s++;
	if (!*s)
		return 0;
	d = strtod(s, &end);
	while (*end == ' ' || *end == '\t' || *end == '\n')
		end++;
	return *end ? NAN : d;
}

/* JS truthiness of a JSON value (absent: false). */
static bool js_truthy(const json_t *v)
{
	if (!v || json_is_null(v) || json_is_false(v))
		return false;
	if (json_is_string(v))
		return *json_string_value(v) != '\0';
	if (json_is_number(v))
		return json_number_value(v) != 0;
	return true;
}

/* A set (object of true) of the strings of array a; NULL: out of memory. */
static json_t *string_set(const json_t *a)
{
	json_t *set = json_object(), *v;
	size_t i;

	json_array_foreach(a, i, v)
		if (set && json_is_string(v) && json_object_set_new(set, json_string_value(v), json_true())) {
			json_decref(set);
			set = NULL;
		}
	return set;
}

static bool has(const json_t *set, const char *name)
{
	return name && *name && json_object_get(set, name);
}

/* The artefact name of the job as JSON, when the job lists it (job-data.js's
 * optional()); NULL otherwise. */
static json_t *result_file(struct web_ssr *s, struct job_view *v, const char *name)
{
	char *path;
	json_t *j;
	json_error_t err;

	if (!has(v->logs, name) || !artefact_name_valid(name, strlen(name)))
		return NULL;
	path = artefact_kind_path(s->req->data_dir, v->id, ARTEFACT_FILE, name);
	if (!path)
		return NULL;
	j = json_load_file(path, JSON_DECODE_ANY, &err);
	free(path);
	return j;
}

/* An API time as page-job.js's timeFact: <time datetime> with dom.js's ago(). */
static void time_fact(struct html *h, const char *label, const char *iso)
{
	struct tm tm;
	time_t t;
	char when[40];

	if (!web_ssr_time(iso, &t) || !gmtime_r(&t, &tm))
		return;
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S.000Z", &tm);
	HTML(h, "<div class=\"job-fact\"><dt>");
	html_text(h, label);
	HTML(h, "</dt><dd><time");
	HTML_ATTR(h, "datetime", when);
	HTML(h, ">");
	web_ssr_ago(h, iso);
	HTML(h, "</time></dd></div>");
}

/* "host:instance" of the job's worker ("worker <id>" when it is gone). */
static void worker_text(struct web_ssr *s, struct html *h, long long wid)
{
	json_t *answer = web_ssr_keep(s, workers_list_json(s->req->db, 0, 0)), *w;
	size_t i;

	json_array_foreach(json_object_get(answer, "workers"), i, w)
		if (json_integer_value(json_object_get(w, "id")) == wid) {
			web_ssr_text(h, w, "host");
			HTML(h, ":");
			web_ssr_text(h, w, "instance");
			return;
		}
	html_textf(h, "worker %lld", wid);
}

static void header(struct web_ssr *s, struct job_view *v)
{
	struct html *h = &s->main;
	const json_t *j = v->job, *set = json_object_get(j, "settings");
	const char *state = web_ssr_str(j, "state"), *result = web_ssr_str(j, "result");
	const char *status = strcmp(state, "done") ? state : result, *name = web_ssr_str(j, "name");
	const char *build = web_ssr_str(set, "BUILD"), *machine = web_ssr_str(set, "MACHINE");
	long long clone = json_integer_value(json_object_get(j, "clone_id"));
	long long wid = json_integer_value(json_object_get(j, "assigned_worker_id"));
	long long gid = json_integer_value(json_object_get(j, "group_id"));
	const char *reason = v->overall ? json_string_value(json_object_get(v->overall, "reason")) : NULL;
	bool review = v->overall && json_is_true(json_object_get(v->overall, "needs_review"));
	time_t t0 = 0, t1 = 0;
	char cls[64];

	web_ssr_result_class(cls, sizeof(cls), result, state);
	HTML(h, "<header class=\"job-head\"><div class=\"job-title\"><span");
	HTML_ATTRF(h, "class", "job-badge %s", cls);
	HTML(h, ">");
	html_text(h, *status ? status : "none");
	HTML(h, "</span><h1><a");
	html_hreff(h, "/tests/%lld", v->id);
	HTML(h, " class=\"job-id\">");
	html_textf(h, "#%lld", v->id);
	HTML(h, "</a> ");
	html_text(h, *name ? name : web_ssr_str(j, "test"));
	HTML(h, "</h1></div>");
	if (clone) {
		HTML(h, "<p class=\"job-clone\">Restarted as <a");
		html_hreff(h, "/tests/%lld", clone);
		HTML(h, ">");
		html_textf(h, "#%lld", clone);
		HTML(h, "</a>.</p>");
	}
	if (reason && *reason) {
		HTML(h, "<p class=\"job-reason\">Reason: ");
		html_text(h, reason);
		HTML(h, "</p>");
	}
	HTML(h, "<dl class=\"job-facts\"><div class=\"job-fact\"><dt>Result</dt><dd><span");
	HTML_ATTR(h, "class", cls);
	HTML(h, ">");
	html_text(h, *status ? status : "none");
	HTML(h, "</span>");
	if (review)
		HTML(h, "<span class=\"job-tag job-review\">needs review</span>");
	HTML(h, "</dd></div>");
	time_fact(h, "Started", web_ssr_str(j, "t_started"));
	time_fact(h, "Finished", web_ssr_str(j, "t_finished"));
	if (web_ssr_time(web_ssr_str(j, "t_started"), &t0) && web_ssr_time(web_ssr_str(j, "t_finished"), &t1)) {
		HTML(h, "<div class=\"job-fact\"><dt>Duration</dt><dd>");
		web_ssr_duration(h, difftime(t1, t0));
		HTML(h, "</dd></div>");
	}
	if (wid) {
		HTML(h, "<div class=\"job-fact\"><dt>Worker</dt><dd><a href=\"/admin/workers\" class=\"job-worker\">");
		worker_text(s, h, wid);
		HTML(h, "</a></dd></div>");
	}
	if (gid) {
		const char *group = web_ssr_str(j, "group");

		HTML(h, "<div class=\"job-fact\"><dt>Group</dt><dd><a");
		html_hreff(h, "/group_overview/%lld", gid);
		HTML(h, ">");
		if (*group)
			html_text(h, group);
		else
			html_textf(h, "group %lld", gid);
		HTML(h, "</a></dd></div>");
	}
	if (*build) {
		struct buf url;
		char g[24];

		snprintf(g, sizeof(g), "%lld", gid);
		buf_init(&url, 8192);
		if (!buf_puts(&url, "/tests/overview") && !html_query_add(&url, "distri", web_ssr_str(set, "DISTRI")) &&
		    !html_query_add(&url, "version", web_ssr_str(set, "VERSION")) &&
		    !html_query_add(&url, "build", build) && !html_query_add(&url, "groupid", gid ? g : NULL)) {
			HTML(h, "<div class=\"job-fact\"><dt>Build</dt><dd><a");
			html_href(h, url.data);
			HTML(h, " class=\"job-build\">");
			html_text(h, build);
			HTML(h, "</a></dd></div>");
		}
		buf_release(&url);
	}
	if (*machine) {
		HTML(h, "<div class=\"job-fact\"><dt>Machine</dt><dd>");
		html_text(h, machine);
		HTML(h, "</dd></div>");
	}
	HTML(h, "</dl></header>");
}

/* page-job.js's TABS as links, #details selected. */
static void tabs(struct html *h, const struct job_view *v)
{
	static const char *const all[][2] = {
		{ "details", "Details" },	 { "live", "Live view" },
		{ "video", "Video" },		 { "logs", "Logs & assets" },
		{ "source", "Source" },		 { "settings", "Settings" },
		{ "comments", "Comments" },	 { "dependencies", "Dependencies" },
		{ "next_previous", "Next & previous" }, { "investigation", "Investigation" },
	};
	const char *state = web_ssr_str(v->job, "state");
	bool done = !strcmp(state, "done") || !strcmp(state, "cancelled");
	size_t i;

	HTML(h, "<nav class=\"job-tabs\" aria-label=\"Job tabs\">");
	for (i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		bool on = !strcmp(all[i][0], "details");

		if ((!strcmp(all[i][0], "live") && done) || (!strcmp(all[i][0], "video") && !has(v->logs, "video.webm")))
			continue;
		HTML(h, "<a");
		html_hreff(h, "#%s", all[i][0]);
		HTML_ATTRF(h, "class", "job-tab%s", on ? " job-tab-on" : "");
		HTML_ATTRF(h, "id", "job-tab-%s", all[i][0]);
		HTML_ATTR(h, "aria-selected", on ? "true" : "false");
		HTML_ATTRF(h, "aria-controls", "job-panel-%s", all[i][0]);
		HTML(h, ">");
		html_text(h, all[i][1]);
		if (!strcmp(all[i][0], "comments") && v->ncomments)
			html_textf(h, " (%zu)", v->ncomments);
		HTML(h, "</a>");
	}
	HTML(h, "</nav>");
}

/* job-data.js's stepResult() */
static const char *step_result(const char *r)
{
	return !strcmp(r, "ok") ? "passed" : !strcmp(r, "fail") ? "failed" : !strcmp(r, "softfail") ? "softfailed" : "none";
}

/* job-details.js's stepLabel() */
static const char *step_label(const json_t *d)
{
	const char *r = web_ssr_str(d, "result");

	if (js_truthy(json_object_get(d, "text")))
		return js_truthy(json_object_get(d, "title")) ? web_ssr_str(d, "title") : "text";
	if (!strcmp(r, "unk"))
		return "no match";
	if (js_truthy(json_object_get(d, "needle")))
		return web_ssr_str(d, "needle");
	return !strcmp(r, "ok") ? "screenshot" : !strcmp(r, "fail") ? "failed" : !strcmp(r, "softfail") ? "soft failure" : r;
}

/* job-data.js's stepSimilarity(): false when it has none. */
static bool step_similarity(const json_t *d, double *out)
{
	const json_t *areas = json_object_get(d, "area"), *a;
	const json_t *first = json_array_get(json_object_get(d, "needles"), 0);
	size_t i;

	if (!js_truthy(areas))
		areas = js_truthy(first) ? json_object_get(first, "area") : NULL;
	if (!json_array_size(areas))
		return false;
	*out = INFINITY;
	json_array_foreach(areas, i, a) {
		double x = js_number(json_object_get(a, "similarity"));

		if (isnan(x) || isnan(*out))
			*out = NAN;
		else if (x < *out)
			*out = x;
	}
	return true;
}

/* A step's tile; job-details.js adds the areas over the picture and the video's button. */
static void tile(struct html *h, const struct job_view *v, const char *mod, size_t n, const json_t *d)
{
	const char *shot = web_ssr_str(d, "screenshot"), *label = step_label(d);
	double sim;
	char cls[64];
	struct buf url;

	web_ssr_result_class(cls, sizeof(cls), step_result(web_ssr_str(d, "result")), NULL);
	buf_init(&url, 8192);
	HTML(h, "<div");
	HTML_ATTRF(h, "class", "job-step %s", cls);
	HTML_ATTR(h, "data-module", mod);
	HTML_ATTRF(h, "data-step", "%zu", n);
	HTML(h, "><a class=\"job-thumb\"");
	if (!buf_puts(&url, "#step/") && !html_uri_component(&url, mod) && !buf_printf(&url, "/%zu", n))
		html_href(h, url.data);
	HTML_ATTRF(h, "title", "%s step %zu: %s", mod, n, label);
	HTML(h, ">");
	if (has(v->pngs, shot)) {
		buf_reset(&url);
		HTML(h, "<div class=\"job-shot job-thumb-shot\"><img");
		if (!buf_printf(&url, "/tests/%lld/images/thumb/", v->id) && !html_uri_component(&url, shot))
			HTML_ATTR(h, "src", url.data); /* a same-site path: our own, its name encoded */
		HTML_ATTRF(h, "alt", "%s step %zu", mod, n);
		HTML(h, " loading=\"lazy\" decoding=\"async\" width=\"");
		number_text(h, v->sw);
		HTML(h, "\" height=\"");
		number_text(h, v->sh);
		HTML(h, "\"></div>");
	} else if (js_truthy(json_object_get(d, "text"))) {
		HTML(h, "<div class=\"job-thumb-text\"><span class=\"job-thumb-icon\" aria-hidden=\"true\">≡</span>");
		html_text(h, js_truthy(json_object_get(d, "title")) ? web_ssr_str(d, "title") : "text");
		HTML(h, "</div>");
	} else {
		HTML(h, "<div class=\"job-thumb-text\">");
		html_text(h, label);
		HTML(h, "</div>");
	}
	HTML(h, "</a><div class=\"job-step-foot\"><span class=\"job-step-n\">");
	html_textf(h, "%zu", n);
	HTML(h, "</span>");
	if (step_similarity(d, &sim)) {
		HTML(h, "<span class=\"job-sim\" title=\"similarity\">");
		number_text(h, sim);
		HTML(h, "%</span>");
	}
	HTML(h, "</div></div>");
	buf_release(&url);
}

/* A module: its head (result, flags, time, where a re-run copied it
 * from), its failure and its steps; job-rerun.js adds the re-run button. */
static void module_section(struct html *h, const struct job_view *v, const json_t *m)
{
	const char *name = web_ssr_str(m, "name"), *result = web_ssr_str(m, "result");
	const json_t *r = json_object_get(v->results, name), *flag, *steps, *d;
	const json_t *t = json_object_get(r, "execution_time");
	const char *fail = web_ssr_str(r, "fail_message");
	char cls[64];
	size_t i;

	web_ssr_result_class(cls, sizeof(cls), result, NULL);
	HTML(h, "<section class=\"job-module\"");
	HTML_ATTR(h, "data-module", name);
	HTML(h, "><div class=\"job-module-head\"><h3 class=\"job-module-name\">");
	html_text(h, name);
	HTML(h, "</h3><span");
	HTML_ATTRF(h, "class", "job-module-result %s", cls);
	HTML(h, ">");
	html_text(h, *result ? result : "none");
	HTML(h, "</span>");
	if (json_is_true(json_object_get(r, "needs_review")))
		HTML(h, "<span class=\"job-tag job-review\">near miss: needs review</span>");
	json_array_foreach(json_object_get(m, "flags"), i, flag)
		if (json_is_string(flag) && strcmp(json_string_value(flag), "important")) {
			HTML(h, "<span class=\"job-tag\">");
			html_text(h, json_string_value(flag));
			HTML(h, "</span>");
		}
	if (json_is_integer(json_object_get(r, "copied_from"))) { /* a re-run from a milestone */
		long long from = json_integer_value(json_object_get(r, "copied_from"));

		HTML(h, "<span class=\"job-tag job-copied\" title=\"this module was not run again: its results come from "
			"that job\">copied from <a");
		html_hreff(h, "/tests/%lld", from);
		HTML(h, ">");
		html_textf(h, "t#%lld", from);
		HTML(h, "</a></span>");
	}
	if (json_is_number(t)) {
		HTML(h, "<span class=\"muted job-module-time\">");
		number_text(h, json_number_value(t));
		HTML(h, " s</span>");
	}
	if (js_truthy(json_object_get(r, "source"))) {
		struct buf url;

		buf_init(&url, 8192);
		if (!buf_puts(&url, "#source/") && !html_uri_component(&url, name)) {
			HTML(h, "<a");
			html_href(h, url.data);
			HTML(h, " class=\"job-module-src\">source</a>");
		}
		buf_release(&url);
	}
	HTML(h, "</div>");
	if (*fail) {
		HTML(h, "<p class=\"job-fail-msg\">");
		html_text(h, fail);
		HTML(h, "</p>");
	}
	steps = json_object_get(r, "details");
	if (json_array_size(steps)) {
		HTML(h, "<div class=\"job-steps\">");
		json_array_foreach(steps, i, d)
			tile(h, v, name, i + 1, d);
		HTML(h, "</div>");
	} else if (json_is_object(r) || json_is_array(r)) {
		HTML(h, "<p class=\"muted job-nosteps\">No steps recorded.</p>");
	} else if (!json_is_null(r)) { /* null: there, but not read (the script adds its steps) */
		HTML(h, "<p class=\"muted job-nosteps\">Not run.</p>");
	}
	HTML(h, "</section>");
}

/* The id of /tests/latest's job: the newest of the scenario's jobs (as
 * GET /api/v1/jobs?latest=1&limit=1000 with the query's scenario keys
 * lists them); 0 when none matches, -1 when the query names no scenario
 * or the groupid is no number, ERR_* when they could not be read. */
static long long latest_id(struct web_ssr *s)
{
	struct joblist_filter f;
	json_t *jobs = NULL, *j;
	const char *grp = web_ssr_param(s, "groupid");
	long long id = 0;
	bool any = false;
	size_t i;
	int rc;

	for (i = 0; i < sizeof(latest_keys) / sizeof(latest_keys[0]); i++)
		any = any || web_ssr_param(s, latest_keys[i]);
	if (!any)
		return -1;
	memset(&f, 0, sizeof(f));
	f.distri = web_ssr_param(s, "distri");
	f.version = web_ssr_param(s, "version");
	f.flavor = web_ssr_param(s, "flavor");
	f.arch = web_ssr_param(s, "arch");
	f.test = web_ssr_param(s, "test");
	f.machine = web_ssr_param(s, "machine");
	f.build = web_ssr_param(s, "build");
	if (grp) {
		char *end;

		f.group = strtoll(grp, &end, 10);
		if (*end || f.group < 0)
			return -1;
		f.no_group = f.group == 0;
	}
	rc = joblist_openqa(s->req->db, &f, 1000, 0, true, &jobs);
	if (rc)
		return rc;
	json_array_foreach(jobs, i, j)
		if (json_integer_value(json_object_get(j, "id")) > id)
			id = json_integer_value(json_object_get(j, "id"));
	json_decref(jobs);
	return id;
}

void web_ssr_job(struct web_ssr *s)
{
	struct html *h = &s->main;
	struct job_view v;
	json_t *comments = NULL, *mods, *m, *set;
	char msg[256];
	size_t i;
	double x;
	int rc;

	memset(&v, 0, sizeof(v));
	if (!strcmp(s->req->path, "/tests/latest")) {
		v.id = latest_id(s);
		if (v.id == -1) {
			web_ssr_error(s, "Name a scenario: /tests/latest?distri=…&version=…&flavor=…&arch=…&test=…&machine=…");
			return;
		}
		if (v.id == 0) {
			const char *q = strchr(s->req->target, '?');

			web_ssr_error(s, "No job matches %s.", q ? q + 1 : "");
			return;
		}
		if (v.id < 0) {
			web_ssr_error(s, "the jobs could not be read (%lld)", v.id);
			return;
		}
	} else {
		v.id = (long long)s->req->id;
	}
	rc = jobs_details_json(s->req->db, s->req->data_dir, v.id, true, &v.job);
	if (rc == ERR_NOT_FOUND) {
		web_ssr_error(s, "Job %lld does not exist.", v.id);
		return;
	}
	if (rc) {
		web_ssr_error(s, "job %lld could not be read (%d)", v.id, rc);
		return;
	}
	web_ssr_keep(s, v.job);
	if (!comments_list(s->req->db, COMMENTS_JOB, v.id, COMMENTS_DEFAULT_LIMIT, false, &comments, msg, sizeof(msg)))
		v.ncomments = json_array_size(web_ssr_keep(s, comments));
	/* the page's own path: its tab and step links stay on it */
	set = json_object_get(v.job, "settings");
	x = js_number(json_object_get(set, "XRES"));
	v.sw = isnan(x) || !x ? 1024 : x;
	x = js_number(json_object_get(set, "YRES"));
	v.sh = isnan(x) || !x ? 768 : x;
	v.logs = string_set(json_object_get(v.job, "logs"));
	v.pngs = string_set(json_object_get(v.job, "screenshots"));
	v.results = json_object();
	v.overall = result_file(s, &v, "results.json");
	mods = json_object_get(v.job, "testresults");
	if (!js_truthy(mods))
		mods = json_object_get(v.job, "modules");
	json_array_foreach(mods, i, m) {
		char file[300];
		const char *name = web_ssr_str(m, "name");
		json_t *r;

		if (!*name || json_object_get(v.results, name))
			continue;
		snprintf(file, sizeof(file), "result-%s.json", name);
		r = result_file(s, &v, file);
		if (r && json_object_set_new(v.results, name, r))
			h->err = h->err ? h->err : ERR_NOMEM;
	}
	if (!v.logs || !v.pngs || !v.results)
		h->err = h->err ? h->err : ERR_NOMEM;

	HTML(h, "<div class=\"job-page\"");
	HTML_ATTRF(h, "data-job", "%lld", v.id);
	HTML(h, ">");
	header(s, &v);
	tabs(h, &v);
	HTML(h, "<div class=\"job-panels\"><section class=\"job-panel\" id=\"job-panel-details\" "
		"aria-labelledby=\"job-tab-details\">");
	if (!json_array_size(mods)) {
		const char *state = web_ssr_str(v.job, "state");

		HTML(h, "<p class=\"muted\">");
		if (!strcmp(state, "done") || !strcmp(state, "cancelled"))
			HTML(h, "This job recorded no test modules.");
		else
			html_textf(h, "This job is %s: no results yet.", state);
		HTML(h, "</p>");
	} else {
		HTML(h, "<p class=\"job-keys muted\">Keys: <kbd>j</kbd> or <kbd>→</kbd> next step · <kbd>k</kbd> or "
			"<kbd>←</kbd> previous step · <kbd>n</kbd> next failed step · <kbd>Esc</kbd> close the step</p>");
		json_array_foreach(mods, i, m)
			module_section(h, &v, m);
	}
	HTML(h, "</section></div></div>");
	json_decref(v.logs);
	json_decref(v.pngs);
	json_decref(v.results);
	json_decref(v.overall);
}
