/* SPDX-License-Identifier: MIT */
/* web_ssr_tests.c - /tests, built once (web_ssr.h): the running,
 * scheduled and finished jobs (or the one list of ?state=…), each a
 * keyset page of the domain's joblist_page_json for the page query's
 * filters, sort, limit and cursor; the filter form (a GET form of the
 * same query), the sort, "more" and paging links. web/page-tests.js
 * only tidies the form's query and opens the form on a wide screen. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "server/store/groups.h"
#include "server/store/joblist.h"
#include "server/store/jobs.h"
#include "server/pages/web_ssr.h"
#include "util/err.h"
#include "util/str.h"
#include "util/banned.h" /* last: after every system header */

#define TESTS_RUNNING "assigned,setup,running,uploading"
#define TESTS_FINISHED "done,cancelled"
#define TESTS_DEFAULT_LIMIT "50"
#define TESTS_MAX_URL 4096
/* The most jobs one list shows (GET /api/v1/jobs's bound). */
#define TESTS_MAX_LIMIT 10000

/* page-tests.js's TEXT_FILTERS, then the other API filters of filterParams(). */
static const char *const filters[] = { "distri", "version", "flavor", "arch", "build", "test", "machine",
				       "groupid", "result" };
/* The page query's other keys (what pageUrl() may carry along). */
static const char *const others[] = { "state", "sort", "limit", "next", "prev" };
/* SECTIONS: title, states. */
static const char *const sections[][2] = {
	{ "Running", TESTS_RUNNING }, { "Scheduled", "scheduled" }, { "Finished", TESTS_FINISHED } };
/* STATES (without "all"): states, label. */
static const char *const states[][2] = {
	{ TESTS_RUNNING, "running" }, { "scheduled", "scheduled" }, { TESTS_FINISHED, "finished" } };
/* The results the filter offers. */
static const char *const results[] = { "passed", "softfailed", "failed", "incomplete", "skipped", "obsoleted",
				       "parallel_failed", "parallel_restarted", "user_cancelled", "user_restarted",
				       "timeout_exceeded", "none" };
/* The page sizes offered. */
static const char *const limits[] = { "25", "50", "100", "200", "500" };

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* sortOf() */
static const char *sort_of(const struct web_ssr *s)
{
	const char *v = web_ssr_param(s, "sort");

	return v && (!strcmp(v, "id") || !strcmp(v, "result") || !strcmp(v, "test")) ? v : "id";
}

/* limitOf(): /^[1-9][0-9]{0,3}$/ or the default. */
static const char *limit_of(const struct web_ssr *s)
{
	const char *v = web_ssr_param(s, "limit");
	size_t i;

	if (!v || v[0] < '1' || v[0] > '9' || strlen(v) > 4)
		return TESTS_DEFAULT_LIMIT;
	for (i = 1; v[i]; i++)
		if (v[i] < '0' || v[i] > '9')
			return TESTS_DEFAULT_LIMIT;
	return v;
}

/* The values of v, comma-separated, as a new array of strings (NULL: out
 * of memory); false in *ok when one is not valid(). */
static json_t *list_of(const char *v, bool (*valid)(const char *), bool *ok)
{
	json_t *a = json_array();

	while (a && v && *v) {
		size_t n = strcspn(v, ",");
		char one[64];

		if (n) {
			snprintf(one, sizeof(one), "%.*s", (int)n, v);
			*ok = *ok && n < sizeof(one) && valid(one);
			if (json_array_append_new(a, json_string(one))) {
				json_decref(a);
				return NULL;
			}
		}
		v += n + (v[n] == ',');
	}
	return a;
}

/* A decimal id > 0 of the query into *out (0 when absent); false when not one. */
static bool id_of(const struct web_ssr *s, const char *key, int64_t *out)
{
	const char *v = web_ssr_param(s, key);
	long n;

	*out = 0;
	if (!v)
		return true;
	if (str_to_long(v, &n) || n <= 0)
		return false;
	*out = n;
	return true;
}

/* One list of the page: the jobs of the query's filters in states,
 * sorted, limited, and (paged) from the query's cursor; kept in s.
 * NULL after web_ssr_error said why. */
static json_t *get_list(struct web_ssr *s, const char *state, bool paged)
{
	const char *sort = sort_of(s);
	struct joblist_filter f = {
		.build = web_ssr_param(s, "build"), .distri = web_ssr_param(s, "distri"),
		.version = web_ssr_param(s, "version"), .flavor = web_ssr_param(s, "flavor"),
		.arch = web_ssr_param(s, "arch"), .test = web_ssr_param(s, "test"),
		.machine = web_ssr_param(s, "machine"),
	};
	struct joblist_page pg = { .sort = !strcmp(sort, "result") ? JOBLIST_SORT_RESULT
					   : !strcmp(sort, "test") ? JOBLIST_SORT_TEST : JOBLIST_SORT_ID };
	json_t *st, *res, *page = NULL;
	bool ok = true;
	long limit = atol(limit_of(s));
	int rc = 0;

	pg.limit = limit > TESTS_MAX_LIMIT ? TESTS_MAX_LIMIT : limit;
	st = list_of(state, jobs_state_valid, &ok);
	res = list_of(web_ssr_param(s, "result"), jobs_result_valid, &ok);
	f.states = st;
	f.results = res;
	if (!id_of(s, "groupid", &f.group) && strcmp(web_ssr_param(s, "groupid"), "0"))
		ok = false;
	f.no_group = web_ssr_param(s, "groupid") && !f.group;
	if (paged && !(web_ssr_param(s, "next") ? id_of(s, "next", &pg.next) : id_of(s, "prev", &pg.prev)))
		ok = false;
	if (!st || !res) {
		web_ssr_error(s, "out of memory");
	} else if (!ok) {
		web_ssr_error(s, "unknown state or result, or a group, next or prev that is no id");
	} else if ((rc = joblist_page_json(s->req->db, &f, &pg, &page))) {
		web_ssr_error(s, "%s", rc == ERR_NOT_FOUND ? "the job this page starts from no longer exists"
							 : "cannot read the jobs");
		page = NULL;
	} else if (!web_ssr_keep(s, page)) {
		web_ssr_error(s, "out of memory");
		page = NULL;
	}
	json_decref(st);
	json_decref(res);
	return page;
}

/* One change of pageUrl(): value NULL deletes key. */
struct change {
	const char *key, *value;
};

/* pageUrl(query, changes) as an href: the page's query with each key of
 * changes set (its first place, the others dropped) or deleted, new keys
 * appended in changes' order. Keys the page does not read, and empty
 * values, are left out. */
static void page_href(struct web_ssr *s, const struct change *ch, size_t nch)
{
	const struct params *p = &s->req->params;
	bool done[4] = { false };
	struct buf url;
	size_t i, k, c;
	int rc;

	if (nch > COUNT(done))
		return;
	buf_init(&url, TESTS_MAX_URL);
	rc = buf_puts(&url, "/tests");
	for (i = 0; i < p->n && !rc; i++) {
		const char *key = NULL;

		for (k = 0; k < COUNT(filters) && !key; k++)
			if (!strcmp(p->v[i].key, filters[k]))
				key = filters[k];
		for (k = 0; k < COUNT(others) && !key; k++)
			if (!strcmp(p->v[i].key, others[k]))
				key = others[k];
		if (!key || !*p->v[i].value)
			continue; /* nothing the page reads */
		for (c = 0; c < nch && strcmp(key, ch[c].key); c++)
			;
		if (c == nch)
			rc = html_query_add(&url, key, p->v[i].value);
		else if (!done[c])
			rc = html_query_add(&url, key, ch[c].value);
		if (c < nch)
			done[c] = true;
	}
	for (c = 0; c < nch && !rc; c++)
		if (!done[c])
			rc = html_query_add(&url, ch[c].key, ch[c].value);
	if (!rc)
		html_href(&s->main, url.data);
	buf_release(&url);
}

/* A page's cursor (its "next" or "prev") as text; "" for null. */
static void cursor_text(char *out, size_t len, const json_t *v)
{
	if (json_is_integer(v))
		snprintf(out, len, "%lld", (long long)json_integer_value(v));
	else if (json_is_string(v))
		snprintf(out, len, "%s", json_string_value(v));
	else
		snprintf(out, len, "%s", "");
}

/* sortHeader() */
static void sort_header(struct web_ssr *s, const char *key, const char *label)
{
	struct html *h = &s->main;
	bool current = !strcmp(sort_of(s), key);
	struct change ch[] = { { "sort", strcmp(key, "id") ? key : NULL }, { "next", NULL }, { "prev", NULL } };

	HTML(h, "<th");
	if (current) {
		HTML(h, " class=\"sorted\"");
		HTML_ATTR(h, "aria-sort", strcmp(key, "id") ? "ascending" : "descending");
	}
	HTML(h, "><a");
	page_href(s, ch, COUNT(ch));
	HTML(h, ">");
	html_text(h, label);
	HTML(h, "</a></th>");
}

/* The name of group id in the job_groups answer, NULL when not there. */
static const char *group_name(const json_t *groups, json_int_t id)
{
	size_t i;
	const json_t *g;

	json_array_foreach(groups, i, g) {
		const json_t *gid = json_object_get(g, "id");

		if (json_is_integer(gid) && json_integer_value(gid) == id)
			return json_string_value(json_object_get(g, "name"));
	}
	return NULL;
}

/* A JSON value as JavaScript finds it true. */
static bool truthy(const json_t *v)
{
	return json_is_true(v) || (json_is_integer(v) && json_integer_value(v)) ||
	       (json_is_real(v) && json_real_value(v) != 0) || (json_is_string(v) && *json_string_value(v)) ||
	       json_is_array(v) || json_is_object(v);
}

/* jobRow() */
static void job_row(struct html *h, const json_t *j, const json_t *groups)
{
	const json_t *st = json_object_get(j, "settings");
	const char *state = web_ssr_str(j, "state"), *result = web_ssr_str(j, "result");
	const char *machine = web_ssr_str(st, "MACHINE"), *when = web_ssr_str(j, "t_finished");
	const char *medium[] = { web_ssr_str(st, "DISTRI"), web_ssr_str(st, "VERSION"), web_ssr_str(st, "FLAVOR"),
				 web_ssr_str(st, "ARCH") };
	const json_t *gid = json_object_get(j, "group_id");
	char cls[64];
	size_t i;
	bool first = true;

	if (!*when)
		when = web_ssr_str(j, "t_started");
	HTML(h, "<tr");
	HTML_ATTRF(h, "data-id", "%lld", (long long)json_integer_value(json_object_get(j, "id")));
	HTML(h, "><td class=\"t-id muted\">");
	web_ssr_text(h, j, "id");
	HTML(h, "</td><td class=\"t-test\"><a");
	html_hreff(h, "/tests/%lld", (long long)json_integer_value(json_object_get(j, "id")));
	if (json_is_string(json_object_get(j, "name")))
		HTML_ATTR(h, "title", web_ssr_str(j, "name"));
	HTML(h, ">");
	web_ssr_text(h, j, "test");
	if (*machine) {
		HTML(h, "@");
		html_text(h, machine);
	}
	HTML(h, "</a></td>");
	/* jobOutcome() */
	if (!strcmp(state, "done") || !strcmp(state, "cancelled")) {
		if (!strcmp(result, "failed") && truthy(json_object_get(j, "needs_review"))) {
			HTML(h, "<td class=\"t-result r-needs_review\">needs review</td>");
		} else {
			web_ssr_result_class(cls, sizeof(cls), result, "done");
			HTML(h, "<td");
			HTML_ATTRF(h, "class", "t-result %s", cls);
			HTML(h, ">");
			web_ssr_text(h, j, "result");
			HTML(h, "</td>");
		}
	} else {
		web_ssr_result_class(cls, sizeof(cls), result, state);
		HTML(h, "<td");
		HTML_ATTRF(h, "class", "t-result %s", cls);
		HTML(h, ">");
		web_ssr_text(h, j, "state");
		HTML(h, "</td>");
	}
	HTML(h, "<td class=\"t-time muted\"");
	HTML_ATTR(h, "title", when);
	HTML(h, ">");
	web_ssr_ago(h, when);
	HTML(h, "</td><td class=\"t-build\">");
	for (i = 0; i < COUNT(medium); i++)
		if (*medium[i]) {
			if (!first)
				HTML(h, "-");
			html_text(h, medium[i]);
			first = false;
		}
	if (*web_ssr_str(st, "BUILD")) {
		HTML(h, "<span class=\"muted\"> Build ");
		html_text(h, web_ssr_str(st, "BUILD"));
		HTML(h, "</span>");
	}
	HTML(h, "</td><td class=\"t-group\">");
	if (json_is_integer(gid) && json_integer_value(gid)) {
		const char *name = web_ssr_str(j, "group");

		if (!*name)
			name = group_name(groups, json_integer_value(gid));
		HTML(h, "<a");
		html_hreff(h, "/group_overview/%lld", (long long)json_integer_value(gid));
		HTML(h, ">");
		if (name && *name)
			html_text(h, name);
		else
			html_textf(h, "%lld", (long long)json_integer_value(gid));
		HTML(h, "</a>");
	}
	HTML(h, "</td></tr>");
}

/* jobTable() */
static void job_table(struct web_ssr *s, const json_t *jobs, const json_t *groups)
{
	struct html *h = &s->main;
	size_t i;
	const json_t *j;

	if (!json_array_size(jobs)) {
		HTML(h, "<p class=\"muted empty\">None.</p>");
		return;
	}
	HTML(h, "<div class=\"scroll\"><table class=\"jobs\"><thead><tr>");
	sort_header(s, "id", "#");
	sort_header(s, "test", "Test");
	sort_header(s, "result", "Result");
	HTML(h, "<th>When</th><th>Build</th><th>Group</th></tr></thead><tbody>");
	json_array_foreach(jobs, i, j)
		job_row(h, j, groups);
	HTML(h, "</tbody></table></div>");
}

/* heading(): "Title (n)" or "(n+)" when there is a next page, then the
 * section's "more" link to the one list of its states. */
static void heading(struct web_ssr *s, const char *title, const json_t *page, const char *more_state)
{
	struct html *h = &s->main;
	const json_t *next = json_object_get(page, "next");
	char cursor[64];

	HTML(h, "<h2>");
	html_text(h, title);
	HTML(h, " <span class=\"muted\">");
	html_textf(h, json_is_null(next) ? "(%zu)" : "(%zu+)", json_array_size(json_object_get(page, "jobs")));
	HTML(h, "</span>");
	if (more_state && !json_is_null(next)) {
		struct change ch[] = { { "state", more_state }, { "next", cursor } };

		cursor_text(cursor, sizeof(cursor), next);
		HTML(h, " <a class=\"more\"");
		page_href(s, ch, COUNT(ch));
		HTML(h, ">more</a>");
	}
	HTML(h, "</h2>");
}

/* pager(): the newest/newer/older links of a paged list. */
static void pager(struct web_ssr *s, const json_t *page)
{
	struct html *h = &s->main;
	const json_t *next = json_object_get(page, "next"), *prev = json_object_get(page, "prev");
	bool cursor = web_ssr_param(s, "next") || web_ssr_param(s, "prev");
	char c[64];

	if (!cursor && json_is_null(next))
		return;
	HTML(h, "<nav class=\"pager\" aria-label=\"pages\">");
	if (cursor) {
		struct change ch[] = { { "next", NULL }, { "prev", NULL } };

		HTML(h, "<a class=\"p-first\"");
		page_href(s, ch, COUNT(ch));
		HTML(h, ">« Newest</a>");
	}
	if (!json_is_null(prev)) {
		struct change ch[] = { { "next", NULL }, { "prev", c } };

		cursor_text(c, sizeof(c), prev);
		HTML(h, "<a class=\"p-prev\"");
		page_href(s, ch, COUNT(ch));
		HTML(h, ">‹ Newer</a>");
	}
	if (!json_is_null(next)) {
		struct change ch[] = { { "prev", NULL }, { "next", c } };

		cursor_text(c, sizeof(c), next);
		HTML(h, "<a class=\"p-next\"");
		page_href(s, ch, COUNT(ch));
		HTML(h, ">Older ›</a>");
	}
	HTML(h, "</nav>");
}

/* A text field of the filter form. */
static void form_field(struct web_ssr *s, const char *name)
{
	struct html *h = &s->main;
	const char *v = web_ssr_param(s, name);

	HTML(h, "<label class=\"f-field\"><span>");
	html_text(h, name);
	HTML(h, "</span><input");
	HTML_ATTR(h, "name", name);
	HTML_ATTR(h, "value", v ? v : "");
	HTML(h, " type=\"text\" autocomplete=\"off\" spellcheck=\"false\"></label>");
}

/* One <option> of a select of the filter form. */
static void form_option(struct html *h, const char *value, const char *text, const char *current)
{
	HTML(h, "<option");
	HTML_ATTR(h, "value", value);
	if (!strcmp(value, current ? current : ""))
		HTML(h, " selected");
	HTML(h, ">");
	html_text(h, text);
	HTML(h, "</option>");
}

/* The filter form: a GET form of the page's query (its sort kept), open
 * when something is filtered (web/page-tests.js opens it where there is
 * room). */
static void filter_form(struct web_ssr *s, const json_t *groups)
{
	struct html *h = &s->main;
	const char *gid = web_ssr_param(s, "groupid"), *limit = limit_of(s);
	size_t i, set = 0;
	const json_t *g;
	bool known = false;

	for (i = 0; i < COUNT(filters); i++)
		set += web_ssr_param(s, filters[i]) != NULL;
	set += web_ssr_param(s, "state") != NULL;
	HTML(h, "<details class=\"filter-box\"");
	if (set)
		HTML(h, " open");
	HTML(h, "><summary>");
	if (set)
		html_textf(h, "Filters (%zu set)", set);
	else
		html_text(h, "Filters");
	HTML(h, "</summary><form class=\"filters\" role=\"search\" action=\"/tests\">");
	for (i = 0; i < 7; i++) /* TEXT_FILTERS */
		form_field(s, filters[i]);
	HTML(h, "<label class=\"f-field\"><span>group</span><select name=\"groupid\">");
	form_option(h, "", "any", gid);
	json_array_foreach(groups, i, g) {
		char id[32];

		snprintf(id, sizeof(id), "%lld", (long long)json_integer_value(json_object_get(g, "id")));
		form_option(h, id, web_ssr_str(g, "name"), gid);
	}
	HTML(h, "</select></label><label class=\"f-field\"><span>result</span><select name=\"result\">");
	form_option(h, "", "any", web_ssr_param(s, "result"));
	for (i = 0; i < COUNT(results); i++)
		form_option(h, results[i], results[i], web_ssr_param(s, "result"));
	HTML(h, "</select></label><label class=\"f-field\"><span>state</span><select name=\"state\">");
	form_option(h, "", "all", web_ssr_param(s, "state"));
	for (i = 0; i < COUNT(states); i++)
		form_option(h, states[i][0], states[i][1], web_ssr_param(s, "state"));
	HTML(h, "</select></label><label class=\"f-field\"><span>per page</span><select name=\"limit\">");
	for (i = 0; i < COUNT(limits); i++)
		known = known || !strcmp(limits[i], limit);
	if (!known)
		form_option(h, limit, limit, limit);
	for (i = 0; i < COUNT(limits); i++)
		form_option(h, limits[i], limits[i], limit);
	HTML(h, "</select></label>");
	if (strcmp(sort_of(s), "id")) {
		HTML(h, "<input type=\"hidden\" name=\"sort\"");
		HTML_ATTR(h, "value", sort_of(s));
		HTML(h, ">");
	}
	HTML(h, "<div class=\"f-buttons\"><button type=\"submit\">Filter</button><a href=\"/tests\">Reset</a></div>"
		"</form></details>");
}

void web_ssr_tests(struct web_ssr *s)
{
	struct html *h = &s->main;
	const char *state = web_ssr_param(s, "state");
	bool cursor = web_ssr_param(s, "next") || web_ssr_param(s, "prev");
	json_t *pages[COUNT(sections)] = { NULL }, *groups = NULL;
	size_t first = cursor ? 2 : 0, i;
	char title[64], msg[256];

	if (state) {
		/* One list, paged; its title is STATES' label or the states as given. */
		const char *label = state;

		for (i = 0; i < COUNT(states); i++)
			if (!strcmp(state, states[i][0]))
				label = states[i][1];
		snprintf(title, sizeof(title), "%s", label);
		if (title[0] >= 'a' && title[0] <= 'z')
			title[0] = (char)(title[0] - 'a' + 'A');
		if (!(pages[0] = get_list(s, state, true)))
			return;
	} else {
		for (i = first; i < COUNT(sections); i++)
			if (!(pages[i] = get_list(s, sections[i][1], i == 2)))
				return;
	}
	/* the groups name the jobs' groups and fill the form's select; none when unreadable */
	if (groups_list(s->req->db, 0, &groups, msg, sizeof(msg)))
		groups = NULL;
	groups = web_ssr_keep(s, groups);
	HTML(h, "<div class=\"lp lp-tests\"><div class=\"page-head\"><h1>Tests</h1></div>");
	filter_form(s, groups);
	if (state) {
		heading(s, title, pages[0], NULL);
		job_table(s, json_object_get(pages[0], "jobs"), groups);
		pager(s, pages[0]);
	} else {
		if (cursor) {
			struct change ch[] = { { "next", NULL }, { "prev", NULL } };

			HTML(h, "<p class=\"muted\">Running and scheduled jobs are on the <a");
			page_href(s, ch, COUNT(ch));
			HTML(h, ">first page</a>.</p>");
		}
		for (i = first; i < COUNT(sections); i++) {
			HTML(h, "<section class=\"tests-section\"");
			HTML_ATTR(h, "data-section", i == 0 ? "running" : i == 1 ? "scheduled" : "finished");
			HTML(h, ">");
			heading(s, sections[i][0], pages[i], i < 2 ? sections[i][1] : NULL);
			job_table(s, json_object_get(pages[i], "jobs"), groups);
			if (i == 2)
				pager(s, pages[i]);
			HTML(h, "</section>");
		}
	}
	HTML(h, "</div>");
}
