/* SPDX-License-Identifier: MIT */
/* web_ssr_lists.c - the list pages (web_ssr.h), built once here from the
 * domain layer (builds.h, groups.h, comments.h): the build dashboard (/),
 * a job group's page (/group_overview/<id>) and a build's test x machine
 * matrix (/tests/overview). Their scripts (web/page-dashboard.js,
 * page-group.js, page-overview.js) only size the count bars. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "server/store/builds.h"
#include "server/store/comments.h"
#include "server/store/groups.h"
#include "server/pages/web_ssr.h"
#include "util/err.h"
#include "util/str.h"
#include "util/banned.h" /* last: after every system header */

/* The cells a test x machine matrix may have before the page is left to
 * its script. */
#define LISTS_MAX_CELLS (4u << 20)
/* The comments a group's page shows (the API's default limit). */
#define GROUP_COMMENTS 1000

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

/* web/lists.js's countBar(): the element with countText(), and a segment
 * per non-zero count whose share of the total (percent) is in data-share:
 * the CSP allows no inline style, so web/lists.js's sizeBars() sets each
 * width from it. */
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
	HTML(h, ">");
	for (k = 0; k < NCAT && c->total; k++) {
		if (!c->n[k])
			continue;
		HTML(h, "<span");
		HTML_ATTRF(h, "class", "cbar-%s", categories[k][2]);
		HTML_ATTRF(h, "data-share", "%.2f", 100.0 * (double)c->n[k] / (double)c->total);
		HTML(h, "></span>");
	}
	HTML(h, "</div>");
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

/* A count parameter as the API reads it (GET /dashboard_build_results):
 * absent keeps *out; 0, or -1 when it is not a count. */
static int count_param(const char *v, long *out)
{
	long n;

	if (!v)
		return 0;
	if (str_to_long(v, &n) || n < 0)
		return -1;
	*out = n;
	return 0;
}

/* / : the page, built once (web/page-dashboard.js only sizes the bars). */
void web_ssr_dashboard(struct web_ssr *s)
{
	struct html *h = &s->main;
	const char *limit = web_ssr_param(s, "limit_builds"), *days = web_ssr_param(s, "time_limit_days");
	long nlimit = 3, ndays = 14;
	json_t *answer = NULL;
	const json_t *results, *r;
	size_t i;

	if (count_param(limit, &nlimit) || count_param(days, &ndays)) {
		web_ssr_error(s, "limit_builds and time_limit_days must be counts");
		return;
	}
	if (!limit)
		limit = "3";
	if (!days)
		days = "14";
	if (builds_dashboard(s->req->db, nlimit, ndays, &answer) || !web_ssr_keep(s, answer)) {
		web_ssr_error(s, "cannot read the builds");
		return;
	}
	results = json_object_get(answer, "results");
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

/* key=value onto url as URLSearchParams keeps it, an empty value too. */
static int query_keep(struct buf *url, const char *key, const char *value)
{
	if (*value)
		return html_query_add(url, key, value);
	return buf_puts(url, strchr(url->data, '?') ? "&" : "?") || html_uri_component(url, key) ||
	       buf_puts(url, "=");
}

/* web/page-group.js's limit links: "show " then each limit, the current
 * one bold, the others linking to this page with limit_builds changed
 * (lists.js's pageUrl(): the first limit_builds replaced in place, the
 * others dropped, appended when absent; the default removes it). */
static void limit_links(struct web_ssr *s, const char *const *limits, size_t n, const char *limit)
{
	const struct params *p = &s->req->params;
	struct html *h = &s->main;
	struct buf url;
	size_t i, k;

	buf_init(&url, 1u << 16);
	HTML(h, "<span class=\"limit-links\">show ");
	for (i = 0; i < n; i++) {
		const char *v = i ? limits[i] : NULL;
		bool put = false;
		int rc;

		if (!strcmp(limits[i], limit)) {
			HTML(h, "<b>");
			html_text(h, limits[i]);
			HTML(h, "</b>");
			continue;
		}
		buf_reset(&url);
		rc = buf_puts(&url, s->req->path ? s->req->path : "/");
		for (k = 0; k < p->n && !rc; k++) {
			if (strcmp(p->v[k].key, "limit_builds")) {
				rc = query_keep(&url, p->v[k].key, p->v[k].value);
			} else if (!put) {
				put = true;
				rc = html_query_add(&url, "limit_builds", v);
			}
		}
		if (!put && !rc)
			rc = html_query_add(&url, "limit_builds", v);
		if (rc && !h->err)
			h->err = rc;
		HTML(h, "<a");
		html_href(h, url.data);
		HTML(h, ">");
		html_text(h, limits[i]);
		HTML(h, "</a>");
	}
	HTML(h, "</span>");
	buf_release(&url);
}

/* /group_overview/<id>: the page, built once (web/page-group.js only
 * sizes the bars). */
void web_ssr_group(struct web_ssr *s)
{
	/* the page's limits; its default is the first */
	static const char *const limits[] = { "10", "20", "50", "100", "400" };
	static const char prefix[] = "/group_overview/";
	struct html *h = &s->main;
	const char *p = s->req->path ? s->req->path : "", *limit = web_ssr_param(s, "limit_builds");
	json_t *groups = NULL, *builds = NULL, *comments = NULL;
	const json_t *g, *c;
	char id[32], msg[256];
	size_t n, i;
	int64_t gid;
	int rc;

	/* the id as app.js's route matches it: /group_overview/(\d+)/? */
	if (strncmp(p, prefix, sizeof(prefix) - 1))
		return;
	p += sizeof(prefix) - 1;
	n = strspn(p, "0123456789");
	if (!n || n >= sizeof(id) || (p[n] && strcmp(p + n, "/")))
		return;
	memcpy(id, p, n);
	id[n] = '\0';
	gid = strtoll(id, NULL, 10);
	for (i = 0; limit && i < sizeof(limits) / sizeof(limits[0]) && strcmp(limit, limits[i]); i++)
		;
	if (!limit || i == sizeof(limits) / sizeof(limits[0]))
		limit = limits[0];
	msg[0] = '\0';
	if ((rc = groups_list(s->req->db, gid, &groups, msg, sizeof(msg))) || !web_ssr_keep(s, groups) ||
	    !(g = json_array_get(groups, 0))) {
		web_ssr_error(s, "%s", *msg ? msg : "cannot read the job group");
		return;
	}
	rc = builds_group(s->req->db, gid, strtol(limit, NULL, 10), 0, &builds, NULL);
	if (rc || !web_ssr_keep(s, builds)) {
		if (rc == ERR_NOT_FOUND)
			web_ssr_error(s, "Job group %s does not exist", id);
		else
			web_ssr_error(s, "cannot read the builds of job group %s", id);
		return;
	}
	/* comments that cannot be read show as none, as before */
	if (comments_list(s->req->db, COMMENTS_GROUP, gid, GROUP_COMMENTS, false, &comments, msg, sizeof(msg)))
		comments = NULL;
	comments = web_ssr_keep(s, comments);
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
	HTML(h, "<div class=\"section-head\"><h2>Builds</h2>");
	limit_links(s, limits, sizeof(limits) / sizeof(limits[0]), limit);
	HTML(h, "</div>");
	builds_table(h, builds, json_object_get(g, "id"));
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

/* An id parameter as the API takes one (decimal, > 0) into *out. */
static bool group_id(const char *v, int64_t *out)
{
	size_t n = strspn(v, "0123456789");

	if (!n || v[n] || n > 18)
		return false;
	*out = strtoll(v, NULL, 10);
	return *out > 0;
}

/* /tests/overview: the page, built once (web/page-overview.js only sizes
 * the count bar). */
void web_ssr_overview(struct web_ssr *s)
{
	struct html *h = &s->main;
	const char *groupid = web_ssr_param(s, "groupid"), *distri, *version, *build;
	struct builds_overview_q q = { 0 };
	json_t *answer = NULL;
	const json_t *jobs, *groups = NULL, *group, *first, *j;
	struct ov_job *js = NULL;
	struct counts c;
	struct buf title;
	char tmp[3][64];
	size_t i, n, start, nparts = 0;
	int rc = 0;

	/* the API's parameters (GET /api/v1/jobs/overview), as the script passed them */
	q.distri = web_ssr_param(s, "distri");
	q.version = web_ssr_param(s, "version");
	q.flavor = web_ssr_param(s, "flavor");
	q.arch = web_ssr_param(s, "arch");
	q.machine = web_ssr_param(s, "machine");
	q.test = web_ssr_param(s, "test");
	q.build = web_ssr_param(s, "build");
	q.todo = web_ssr_param(s, "todo") && strcmp(web_ssr_param(s, "todo"), "0");
	if (groupid && !group_id(groupid, &q.group)) {
		web_ssr_error(s, "groupid must be a job group id");
		return;
	}
	if (builds_overview(s->req->db, &q, &answer, NULL) || !(jobs = web_ssr_keep(s, answer))) {
		web_ssr_error(s, "cannot read jobs");
		return;
	}
	/* the group's name and link; none when it cannot be read */
	if (q.group && !groups_list(s->req->db, q.group, &answer, tmp[0], sizeof(tmp[0])))
		groups = web_ssr_keep(s, answer);
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
