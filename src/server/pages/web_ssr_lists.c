/* SPDX-License-Identifier: MIT */
/* web_ssr_lists.c - first views of the list pages (web_ssr.h): the build
 * dashboard (/, web/page-dashboard.js), a job group's page
 * (/group_overview/<id>, web/page-group.js), both with web/lists.js's
 * table of builds, and a build's test x machine matrix (/tests/overview,
 * web/page-overview.js). Count bars are left empty (their widths are set
 * by the script); the build limit links come with the script. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "server/pages/web_ssr.h"
#include "util/banned.h" /* last: after every system header */

/* The cells a test x machine matrix may have before the page is left to
 * its script. */
#define LISTS_MAX_CELLS (4u << 20)

/* web/lists.js's CATEGORIES: key, label, class. */
enum { CAT_PASSED, CAT_SOFTFAILED, CAT_FAILED, CAT_NEEDS_REVIEW, CAT_RUNNING, CAT_SCHEDULED, CAT_SKIPPED, NCAT };
static const char *const categories[NCAT][3] = {
	{ "passed", "passed", "r-passed" },
	{ "softfailed", "softfailed", "r-softfailed" },
	{ "failed", "failed", "r-failed" },
	{ "needs_review", "needs review", "r-needs_review" },
	{ "running", "running", "st-running" },
	{ "scheduled", "scheduled", "st-scheduled" },
	{ "skipped", "skipped", "r-skipped" },
};

struct counts {
	long long n[NCAT];
	long long total;
};

/* A JSON value as the scripts' String(): a string as is, a number in
 * decimal, true/false; "" for null or absent. tmp holds a number's text. */
static const char *value_str(const json_t *v, char *tmp, size_t len)
{
	if (json_is_string(v))
		return json_string_value(v);
	if (json_is_integer(v))
		snprintf(tmp, len, "%lld", (long long)json_integer_value(v));
	else if (json_is_real(v))
		snprintf(tmp, len, "%g", json_real_value(v));
	else if (json_is_boolean(v))
		snprintf(tmp, len, "%s", json_is_true(v) ? "true" : "false");
	else
		tmp[0] = '\0';
	return tmp;
}

/* Number(o[key]) || 0 of a count. */
static long long count_of(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);
	const char *s;
	char *end;
	long long n;

	if (json_is_integer(v))
		return (long long)json_integer_value(v);
	if (json_is_real(v))
		return (long long)json_real_value(v);
	if (json_is_true(v))
		return 1;
	if (!json_is_string(v) || !*(s = json_string_value(v)))
		return 0;
	n = strtoll(s, &end, 10);
	return *end ? 0 : n;
}

/* web/lists.js's buildCounts(). */
static void build_counts(const json_t *b, struct counts *c)
{
	size_t k;

	for (k = 0; k < NCAT; k++)
		c->n[k] = count_of(b, categories[k][0]);
	c->n[CAT_FAILED] = c->n[CAT_FAILED] > c->n[CAT_NEEDS_REVIEW] ? c->n[CAT_FAILED] - c->n[CAT_NEEDS_REVIEW] : 0;
	if (!json_object_get(b, "running") && count_of(b, "unfinished"))
		c->n[CAT_RUNNING] = count_of(b, "unfinished");
	c->total = count_of(b, "total");
}

/* web/lists.js's countBar() without its segments (their widths are
 * inline styles, set by the script): the element with countText(). */
static void count_bar(struct html *h, const struct counts *c)
{
	struct buf text;
	size_t k;
	int rc = 0;

	buf_init(&text, 4096);
	for (k = 0; k < NCAT; k++)
		if (c->n[k])
			rc = rc || buf_printf(&text, "%s%lld %s", text.len ? ", " : "", c->n[k], categories[k][1]);
	HTML(h, "<div class=\"cbar\" role=\"img\"");
	HTML_ATTR(h, "aria-label", text.len ? text.data : "no jobs");
	HTML(h, "></div>");
	if (rc && !h->err)
		h->err = rc;
	buf_release(&text);
}

/* web/lists.js's countFigures(). */
static void count_figures(struct html *h, const struct counts *c)
{
	size_t k;
	bool any = false;

	HTML(h, "<span class=\"counts\">");
	for (k = 0; k < NCAT; k++) {
		if (!c->n[k])
			continue;
		any = true;
		HTML(h, "<span");
		HTML_ATTRF(h, "class", "count %s", categories[k][2]);
		HTML_ATTR(h, "data-count", categories[k][0]);
		HTML_ATTR(h, "title", categories[k][1]);
		HTML(h, "><b>");
		html_textf(h, "%lld", c->n[k]);
		HTML(h, "</b> ");
		html_text(h, categories[k][1]);
		HTML(h, "</span>");
	}
	if (!any)
		HTML(h, "<span class=\"muted\">no jobs</span>");
	HTML(h, "</span>");
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* web/lists.js's overviewUrl(): /tests/overview of build b of group
 * group_id ("" for none), its distris sorted, into out. */
static int overview_url(struct buf *out, const json_t *b, const char *group_id)
{
	const json_t *distris = json_object_get(b, "distris");
	const char **names = NULL, *key;
	const json_t *v;
	char tmp[64];
	size_t n = 0, i;
	int rc;

	rc = buf_puts(out, "/tests/overview");
	if (json_object_size(distris)) {
		names = calloc(json_object_size(distris), sizeof(*names));
		if (!names)
			return -1;
		json_object_foreach((json_t *)distris, key, v)
			names[n++] = key;
		qsort(names, n, sizeof(*names), cmp_str);
	}
	for (i = 0; i < n; i++)
		rc = rc || html_query_add(out, "distri", names[i]);
	free(names);
	rc = rc || html_query_add(out, "version", value_str(json_object_get(b, "version"), tmp, sizeof(tmp)));
	rc = rc || html_query_add(out, "build", value_str(json_object_get(b, "build"), tmp, sizeof(tmp)));
	rc = rc || html_query_add(out, "groupid", group_id);
	return rc;
}

/* web/lists.js's buildsTable(): the builds of a build_results answer,
 * each linking to its overview, when, its (empty) bar and counts. */
static void builds_table(struct html *h, const json_t *results, const json_t *group_id)
{
	const json_t *builds = json_object_get(results, "build_results"), *b;
	char gid[64], tmp[64];
	struct buf url;
	size_t i;

	if (!json_array_size(builds)) {
		HTML(h, "<p class=\"muted\">No builds.</p>");
		return;
	}
	value_str(group_id, gid, sizeof(gid));
	if (json_is_integer(group_id) && !json_integer_value(group_id))
		gid[0] = '\0'; /* 0 is no group to the script */
	buf_init(&url, 1u << 16);
	HTML(h, "<div class=\"scroll\"><table class=\"builds\"><tbody>");
	json_array_foreach(builds, i, b) {
		struct counts c;
		const char *version = value_str(json_object_get(b, "version"), tmp, sizeof(tmp));
		char bt[64];
		int rc;

		build_counts(b, &c);
		HTML(h, "<tr");
		HTML_ATTR(h, "data-build", value_str(json_object_get(b, "build"), bt, sizeof(bt)));
		HTML_ATTR(h, "data-version", version);
		HTML(h, "><td class=\"b-name\"");
		HTML_ATTRF(h, "title", "version %s", version);
		HTML(h, "><a");
		buf_reset(&url);
		rc = overview_url(&url, b, gid);
		if (rc && !h->err)
			h->err = rc;
		html_href(h, url.data);
		HTML(h, ">Build ");
		web_ssr_text(h, b, "build");
		HTML(h, "</a>");
		if (count_of(b, "version_count") > 1) {
			HTML(h, "<span class=\"muted b-ver\"> · ");
			html_text(h, version);
			HTML(h, "</span>");
		}
		HTML(h, "</td><td class=\"b-when muted\">");
		web_ssr_ago(h, web_ssr_str(b, "date"));
		HTML(h, "</td><td class=\"b-bar\">");
		count_bar(h, &c);
		HTML(h, "</td><td class=\"b-counts\">");
		count_figures(h, &c);
		HTML(h, "</td></tr>");
	}
	HTML(h, "</tbody></table></div>");
	buf_release(&url);
}

void web_ssr_dashboard(struct web_ssr *s)
{
	struct html *h = &s->main;
	const char *limit = web_ssr_param(s, "limit_builds"), *days = web_ssr_param(s, "time_limit_days");
	const json_t *answer, *results, *r;
	struct buf url;
	size_t i;
	int rc;

	/* the script's defaults, its values unchecked: the API checks them */
	if (!limit)
		limit = "3";
	if (!days)
		days = "14";
	buf_init(&url, 4096);
	rc = buf_puts(&url, "/dashboard_build_results");
	rc = rc || html_query_add(&url, "limit_builds", limit);
	rc = rc || html_query_add(&url, "time_limit_days", days);
	answer = rc ? NULL : web_ssr_get(s, url.data);
	buf_release(&url);
	results = json_object_get(answer, "results");
	if (!json_is_array(results))
		return;
	HTML(h, "<div class=\"lp lp-dashboard\"><div class=\"page-head\"><h1>Build dashboard</h1><span class=\"muted\">");
	html_textf(h, "newest %s build%s of each group, last %s days", limit, strcmp(limit, "1") ? "s" : "", days);
	HTML(h, "</span><a class=\"head-link\" href=\"/tests\">All tests</a></div>");
	json_array_foreach(results, i, r) {
		const json_t *group = json_object_get(r, "group");
		char id[64];

		value_str(json_object_get(group, "id"), id, sizeof(id));
		HTML(h, "<section class=\"dash-group\"");
		HTML_ATTR(h, "data-group", id);
		HTML(h, "><h2><a");
		html_hreff(h, "/group_overview/%s", id);
		HTML(h, ">");
		web_ssr_text(h, group, "name");
		HTML(h, "</a></h2>");
		builds_table(h, r, json_object_get(group, "id"));
		HTML(h, "</section>");
	}
	if (!json_array_size(results)) {
		HTML(h, "<p class=\"muted empty\">");
		html_textf(h, "No builds of a job group in the last %s days.", days);
		HTML(h, "</p>");
	}
	HTML(h, "</div>");
}

/* web/page-group.js's comment(). */
static void group_comment(struct html *h, const json_t *c)
{
	const char *user = web_ssr_str(c, "userName");

	HTML(h, "<article class=\"comment\"><div class=\"comment-head\"><b>");
	html_text(h, *user ? user : "unknown");
	HTML(h, "</b> <span class=\"muted\">");
	web_ssr_ago(h, web_ssr_str(c, "created"));
	HTML(h, "</span></div><div class=\"comment-text\">");
	web_ssr_text(h, c, "text");
	HTML(h, "</div></article>");
}

void web_ssr_group(struct web_ssr *s)
{
	/* web/page-group.js's LIMITS; its default is the first */
	static const char *const limits[] = { "10", "20", "50", "100", "400" };
	static const char prefix[] = "/group_overview/";
	struct html *h = &s->main;
	const char *p = s->req->path ? s->req->path : "", *limit = web_ssr_param(s, "limit_builds");
	const json_t *groups, *builds, *comments, *g, *c;
	char id[32], url[128];
	size_t n, i;

	/* the id as the script's route matches it: /group_overview/(\d+)/? */
	if (strncmp(p, prefix, sizeof(prefix) - 1))
		return;
	p += sizeof(prefix) - 1;
	n = strspn(p, "0123456789");
	if (!n || n >= sizeof(id) || (p[n] && strcmp(p + n, "/")))
		return;
	memcpy(id, p, n);
	id[n] = '\0';
	for (i = 0; limit && i < sizeof(limits) / sizeof(limits[0]) && strcmp(limit, limits[i]); i++)
		;
	if (!limit || i == sizeof(limits) / sizeof(limits[0]))
		limit = limits[0];
	snprintf(url, sizeof(url), "/api/v1/job_groups/%s", id);
	groups = web_ssr_get(s, url);
	snprintf(url, sizeof(url), "/api/v1/job_groups/%s/build_results?limit_builds=%s", id, limit);
	builds = web_ssr_get(s, url);
	snprintf(url, sizeof(url), "/api/v1/groups/%s/comments", id);
	comments = web_ssr_get(s, url);
	if (!(g = json_array_get(groups, 0)) || !builds)
		return;
	HTML(h, "<div class=\"lp lp-group\"><div class=\"page-head\"><h1>");
	web_ssr_text(h, g, "name");
	HTML(h, "</h1><a class=\"head-link\"");
	html_hreff(h, "/tests?groupid=%s", id);
	HTML(h, ">Jobs of this group</a><a class=\"head-link\"");
	html_hreff(h, "/admin/job_templates/%s", id);
	HTML(h, ">Job templates</a></div>");
	if (json_is_string(json_object_get(g, "description")) && *web_ssr_str(g, "description")) {
		HTML(h, "<div class=\"group-desc\">");
		web_ssr_text(h, g, "description");
		HTML(h, "</div>");
	}
	/* the limit links (show 10 20 …) come with the script */
	HTML(h, "<div class=\"section-head\"><h2>Builds</h2></div>");
	builds_table(h, builds, json_object_get(g, "id"));
	/* comments the server could not read are left to the script */
	if (json_is_array(comments)) {
		HTML(h, "<h2>");
		html_textf(h, "Comments (%zu)", json_array_size(comments));
		HTML(h, "</h2>");
		if (json_array_size(comments)) {
			HTML(h, "<div class=\"comments\">");
			json_array_foreach(comments, i, c)
				group_comment(h, c);
			HTML(h, "</div>");
		} else {
			HTML(h, "<p class=\"muted\">No comments.</p>");
		}
	}
	HTML(h, "</div>");
}

/* A JSON value as the scripts' truthiness. */
static bool truthy(const json_t *v)
{
	return json_is_true(v) || (json_is_number(v) && json_number_value(v) != 0) ||
	       (json_is_string(v) && *json_string_value(v));
}

/* web/page-overview.js's category(). */
static size_t job_category(const json_t *j)
{
	const char *state = web_ssr_str(j, "state"), *result = web_ssr_str(j, "result");

	if (!strcmp(state, "done")) {
		if (!strcmp(result, "passed"))
			return CAT_PASSED;
		if (!strcmp(result, "softfailed"))
			return CAT_SOFTFAILED;
		if (!strcmp(result, "failed") && truthy(json_object_get(j, "needs_review")))
			return CAT_NEEDS_REVIEW;
		if (!strcmp(result, "failed") || !strcmp(result, "incomplete") || !strcmp(result, "timeout_exceeded"))
			return CAT_FAILED;
		return CAT_SKIPPED;
	}
	if (!strcmp(state, "cancelled"))
		return CAT_SKIPPED;
	return !strcmp(state, "scheduled") ? CAT_SCHEDULED : CAT_RUNNING;
}

/* web/lists.js's jobOutcome(): the text shown, its class into cls. */
static const char *job_outcome(const json_t *j, char *cls, size_t len)
{
	const char *state = web_ssr_str(j, "state"), *result = web_ssr_str(j, "result");

	if (!strcmp(state, "done") || !strcmp(state, "cancelled")) {
		if (!strcmp(result, "failed") && truthy(json_object_get(j, "needs_review"))) {
			snprintf(cls, len, "r-needs_review");
			return "needs review";
		}
		web_ssr_result_class(cls, len, result, "done");
		return result;
	}
	web_ssr_result_class(cls, len, result, state);
	return state;
}

/* A job of the overview: its matrix part ("distri version flavor"), test
 * and machine, and its place in the API's answer. */
struct ov_job {
	const json_t *j;
	char *part;
	const char *test, *machine;
	size_t idx;
};

/* The order of the script's [...parts.entries()].sort(): entries compare
 * as the text "part,…", then (one part) as the API gave the jobs. */
static int cmp_ov_part(const void *a, const void *b)
{
	const struct ov_job *x = a, *y = b;
	const unsigned char *p = (const unsigned char *)x->part, *q = (const unsigned char *)y->part;

	for (; *p && *p == *q; p++, q++)
		;
	if (*p != *q)
		return (*p ? *p : ',') - (*q ? *q : ',');
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* The sorted distinct values of n strings in v (sorted in place): their count. */
static size_t uniq_sorted(const char **v, size_t n)
{
	size_t i, k = 0;

	qsort(v, n, sizeof(*v), cmp_str);
	for (i = 0; i < n; i++)
		if (!k || strcmp(v[k - 1], v[i]))
			v[k++] = v[i];
	return k;
}

static size_t find_str(const char *const *v, size_t n, const char *s)
{
	const char *const *at = bsearch(&s, v, n, sizeof(*v), cmp_str);

	return at ? (size_t)(at - v) : 0;
}

/* web/page-overview.js's matrix() of the n jobs js (in the API's order). */
static void ov_matrix(struct html *h, const struct ov_job *js, size_t n)
{
	const char **machines = calloc(n, sizeof(*machines)), **tests = calloc(n, sizeof(*tests));
	const json_t **cell = NULL, **arch = NULL;
	size_t nm, nt, i, t, m;

	if (!machines || !tests)
		goto fail;
	for (i = 0; i < n; i++) {
		machines[i] = js[i].machine;
		tests[i] = js[i].test;
	}
	nm = uniq_sorted(machines, n);
	nt = uniq_sorted(tests, n);
	if (nm * nt > LISTS_MAX_CELLS || !(cell = calloc(nm * nt, sizeof(*cell))) || !(arch = calloc(nm, sizeof(*arch))))
		goto fail;
	/* later jobs win, as the script's new Map() of them */
	for (i = 0; i < n; i++) {
		m = find_str(machines, nm, js[i].machine);
		cell[find_str(tests, nt, js[i].test) * nm + m] = js[i].j;
		arch[m] = json_object_get(js[i].j, "arch");
	}
	HTML(h, "<div class=\"scroll\"><table class=\"matrix\"><thead><tr><th class=\"m-test\">Test</th>");
	for (m = 0; m < nm; m++) {
		char tmp[64];
		const char *a = value_str(arch[m], tmp, sizeof(tmp));

		HTML(h, "<th class=\"m-machine\" scope=\"col\">");
		html_text(h, *machines[m] ? machines[m] : "(none)");
		if (*a) {
			HTML(h, "<span class=\"muted m-arch\">");
			html_text(h, a);
			HTML(h, "</span>");
		}
		HTML(h, "</th>");
	}
	HTML(h, "</tr></thead><tbody>");
	for (t = 0; t < nt; t++) {
		HTML(h, "<tr");
		HTML_ATTR(h, "data-test", tests[t]);
		HTML(h, "><th class=\"m-test\" scope=\"row\">");
		html_text(h, tests[t]);
		HTML(h, "</th>");
		for (m = 0; m < nm; m++) {
			const json_t *j = cell[t * nm + m];
			char cls[64], id[64];
			const char *text;

			if (!j) {
				HTML(h, "<td class=\"m-empty\"></td>");
				continue;
			}
			text = job_outcome(j, cls, sizeof(cls));
			value_str(json_object_get(j, "id"), id, sizeof(id));
			HTML(h, "<td class=\"m-cell\"><a");
			HTML_ATTRF(h, "class", "cell %s", cls);
			html_hreff(h, "/tests/%s", id);
			if (json_is_string(json_object_get(j, "name")))
				HTML_ATTR(h, "title", web_ssr_str(j, "name"));
			HTML_ATTR(h, "data-id", id);
			HTML(h, ">");
			html_text(h, text);
			HTML(h, "</a></td>");
		}
		HTML(h, "</tr>");
	}
	HTML(h, "</tbody></table></div>");
	free(machines);
	free(tests);
	free(cell);
	free(arch);
	return;
fail:
	if (!h->err)
		h->err = -1; /* the page is left to its script */
	free(machines);
	free(tests);
	free(cell);
	free(arch);
}

/* "a b c" of the values of keys of o (the script's [..].join(' ')), malloc'd. */
static char *ov_part(const json_t *o)
{
	static const char *const keys[] = { "distri", "version", "flavor" };
	char tmp[3][64];
	const char *v[3];
	size_t k, len = 0;
	char *out;

	for (k = 0; k < 3; k++) {
		v[k] = value_str(json_object_get(o, keys[k]), tmp[k], sizeof(tmp[k]));
		len += strlen(v[k]) + 1;
	}
	out = malloc(len);
	if (out)
		snprintf(out, len, "%s %s %s", v[0], v[1], v[2]);
	return out;
}

/* The text of the script's [a, b, "Build " + c].filter(Boolean).join(' '). */
static int ov_title(struct buf *out, const char *distri, const char *version, const char *build)
{
	int rc = 0;

	if (*distri)
		rc = buf_puts(out, distri);
	if (*version)
		rc = rc || buf_printf(out, "%s%s", out->len ? " " : "", version);
	if (*build)
		rc = rc || buf_printf(out, "%sBuild %s", out->len ? " " : "", build);
	return rc;
}

void web_ssr_overview(struct web_ssr *s)
{
	/* web/page-overview.js's PARAMS, each taken when the page has it */
	static const char *const params[] = { "distri", "version", "flavor", "arch", "machine",
					      "test",   "build",   "groupid", "todo" };
	struct html *h = &s->main;
	const char *groupid = web_ssr_param(s, "groupid"), *distri, *version, *build;
	const json_t *jobs, *groups = NULL, *group, *first, *j;
	struct ov_job *js = NULL;
	struct counts c;
	struct buf url, title;
	char tmp[3][64];
	size_t i, n, start, nparts = 0;
	int rc = 0;

	buf_init(&url, 1u << 16);
	rc = buf_puts(&url, "/api/v1/jobs/overview");
	for (i = 0; i < sizeof(params) / sizeof(params[0]); i++)
		rc = rc || html_query_add(&url, params[i], web_ssr_param(s, params[i]));
	jobs = rc ? NULL : web_ssr_get(s, url.data);
	/* the group as the script asks for it (encodeURIComponent of the
	 * value): only a number can name one */
	if (json_is_array(jobs) && groupid && strspn(groupid, "0123456789") == strlen(groupid)) {
		buf_reset(&url);
		if (!buf_printf(&url, "/api/v1/job_groups/%s", groupid))
			groups = web_ssr_get(s, url.data);
	}
	buf_release(&url);
	if (!json_is_array(jobs))
		return;
	n = json_array_size(jobs);
	memset(&c, 0, sizeof(c));
	c.total = (long long)n;
	if (n && !(js = calloc(n, sizeof(*js)))) {
		h->err = -1;
		return;
	}
	json_array_foreach(jobs, i, j) {
		c.n[job_category(j)]++;
		js[i].j = j;
		js[i].idx = i;
		js[i].test = web_ssr_str(j, "test");
		js[i].machine = web_ssr_str(j, "machine");
		if (!(js[i].part = ov_part(j)))
			rc = -1;
	}
	first = json_array_get(jobs, 0);
	distri = web_ssr_param(s, "distri");
	version = web_ssr_param(s, "version");
	build = web_ssr_param(s, "build");
	if (!distri)
		distri = value_str(json_object_get(first, "distri"), tmp[0], sizeof(tmp[0]));
	if (!version)
		version = value_str(json_object_get(first, "version"), tmp[1], sizeof(tmp[1]));
	if (!build)
		build = value_str(json_object_get(first, "build"), tmp[2], sizeof(tmp[2]));
	buf_init(&title, 1u << 16);
	rc = rc || ov_title(&title, distri, version, build);

	HTML(h, "<div class=\"lp lp-overview\"><div class=\"page-head\"><h1>Test result overview</h1>");
	if ((group = json_array_get(groups, 0))) {
		char id[64];

		value_str(json_object_get(group, "id"), id, sizeof(id));
		HTML(h, "<a class=\"head-link\"");
		html_hreff(h, "/group_overview/%s", id);
		HTML(h, ">");
		web_ssr_text(h, group, "name");
		HTML(h, "</a>");
	}
	HTML(h, "</div><p class=\"ov-summary\"><b>");
	html_text(h, title.len ? title.data : "No build");
	HTML(h, "</b> · ");
	html_textf(h, "%zu job%s", n, n == 1 ? "" : "s");
	HTML(h, "</p>");
	buf_release(&title);
	if (n) {
		HTML(h, "<div class=\"ov-counts\">");
		count_bar(h, &c);
		count_figures(h, &c);
		HTML(h, "</div>");
		if (!rc)
			qsort(js, n, sizeof(*js), cmp_ov_part);
		for (i = 0; i < n; i++)
			nparts += !i || rc || strcmp(js[i - 1].part, js[i].part);
		/* one matrix per distri, version and flavor, as openQA groups them */
		for (start = 0; !rc && start < n; start = i) {
			for (i = start + 1; i < n && !strcmp(js[i].part, js[start].part); i++)
				;
			HTML(h, "<section class=\"ov-part\">");
			if (nparts > 1)
				HTML(h, "<h2>");
			else
				HTML(h, "<h2 class=\"ov-flavor\">");
			html_text(h, js[start].part);
			HTML(h, "</h2>");
			ov_matrix(h, js + start, i - start);
			HTML(h, "</section>");
		}
	} else {
		HTML(h, "<p class=\"muted empty\">No jobs match.</p>");
	}
	HTML(h, "</div>");
	if (rc && !h->err)
		h->err = rc;
	for (i = 0; i < n; i++)
		free(js[i].part);
	free(js);
}
