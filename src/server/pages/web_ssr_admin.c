/* SPDX-License-Identifier: MIT */
/* web_ssr_admin.c - first views of the admin pages (web_ssr.h): the rows
 * of /admin/machines, /admin/products and /admin/test_suites as
 * web/admin-tables.js shows them, the workers as web/admin-workers.js
 * does, under web/admin-common.js's navigation; a job group's template
 * matrices as web/page-templates.js and the audit log as
 * web/page-auditlog.js show them, and /admin/assets and /admin/needles
 * as web/admin-assets.js and web/admin-needles.js do. The controls
 * (sorting, filter, edit, the YAML editor) come with the scripts. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "server/pages/web_ssr.h"
#include "util/err.h"
#include "util/banned.h" /* last: after every system header */

/* web/admin-common.js's SECTIONS, in its order. */
static const char *const sections[][2] = {
	{ "/admin/groups", "Job groups" },   { "/admin/machines", "Machines" }, { "/admin/products", "Products" },
	{ "/admin/test_suites", "Test suites" }, { "/admin/workers", "Workers" }, { "/admin/assets", "Assets" },
	{ "/admin/needles", "Needles" },     { "/admin/auditlog", "Audit log" },
};

void web_ssr_admin_nav(struct html *h, const char *active)
{
	size_t i;

	HTML(h, "<nav class=\"adm-nav\" aria-label=\"Administration\">");
	for (i = 0; i < sizeof(sections) / sizeof(sections[0]); i++) {
		bool cur = active && !strcmp(active, sections[i][0]);

		HTML(h, "<a");
		html_href(h, sections[i][0]);
		if (cur)
			HTML(h, " class=\"current\" aria-current=\"page\"");
		HTML(h, ">");
		html_text(h, sections[i][1]);
		HTML(h, "</a>");
	}
	HTML(h, "</nav>");
}

/* web/admin-tables.js's TABLES: path, API, key of the rows, columns. */
static const struct {
	const char *path, *title, *api, *key, *empty;
	const char *cols[5][2];
} tables[] = {
	{ "/admin/machines", "Machines", "/api/v1/machines", "Machines", "No machines yet.",
	  { { "name", "Name" }, { "backend", "Backend" }, { "description", "Description" } } },
	{ "/admin/products", "Products", "/api/v1/products", "Products", "No products yet.",
	  { { "distri", "Distri" }, { "version", "Version" }, { "flavor", "Flavor" }, { "arch", "Arch" },
	    { "description", "Description" } } },
	{ "/admin/test_suites", "Test suites", "/api/v1/test_suites", "TestSuites", "No test suites yet.",
	  { { "name", "Name" }, { "description", "Description" } } },
};

/* A row's settings ([{key, value}] as the API lists them) as the script's
 * list; the script sorts them by key, as the API does already. */
static void settings_cell(struct html *h, const json_t *settings)
{
	size_t i;
	const json_t *kv;

	if (!json_array_size(settings)) {
		HTML(h, "<span class=\"muted\">—</span>");
		return;
	}
	HTML(h, "<ul class=\"adm-settings\">");
	json_array_foreach(settings, i, kv) {
		HTML(h, "<li><span class=\"k\">");
		web_ssr_text(h, kv, "key");
		HTML(h, "</span>=<span class=\"v\">");
		web_ssr_text(h, kv, "value");
		HTML(h, "</span></li>");
	}
	HTML(h, "</ul>");
}

void web_ssr_admin_table(struct web_ssr *s)
{
	struct html *h = &s->main;
	const char *name = s->req->path;
	size_t t, c, i;
	json_t *answer, *rows, *row;

	for (t = 0; t < sizeof(tables) / sizeof(tables[0]) && strcmp(tables[t].path, name); t++)
		;
	if (t == sizeof(tables) / sizeof(tables[0]) || !(answer = web_ssr_get(s, tables[t].api)))
		return;
	rows = json_object_get(answer, tables[t].key);
	web_ssr_admin_nav(h, tables[t].path);
	HTML(h, "<h1>");
	html_textf(h, "%s (%zu)", tables[t].title, json_array_size(rows));
	HTML(h, "</h1><div class=\"scroll\"><table");
	HTML_ATTRF(h, "class", "adm-table adm-%s", tables[t].path + 7);
	HTML(h, "><thead><tr><th scope=\"col\" class=\"num\">ID</th>");
	for (c = 0; c < 5 && tables[t].cols[c][0]; c++) {
		HTML(h, "<th scope=\"col\"");
		if (!strcmp(tables[t].cols[c][0], "description"))
			HTML(h, " class=\"adm-desc\"");
		HTML(h, ">");
		html_text(h, tables[t].cols[c][1]);
		HTML(h, "</th>");
	}
	HTML(h, "<th scope=\"col\" class=\"adm-settings-col\">Settings</th></tr></thead><tbody>");
	json_array_foreach(rows, i, row) {
		HTML(h, "<tr");
		HTML_ATTRF(h, "data-id", "%lld", (long long)json_integer_value(json_object_get(row, "id")));
		HTML(h, "><td class=\"num\">");
		web_ssr_text(h, row, "id");
		HTML(h, "</td>");
		for (c = 0; c < 5 && tables[t].cols[c][0]; c++) {
			HTML(h, "<td");
			if (!strcmp(tables[t].cols[c][0], "description"))
				HTML(h, " class=\"adm-desc\"");
			HTML(h, ">");
			web_ssr_text(h, row, tables[t].cols[c][0]);
			HTML(h, "</td>");
		}
		HTML(h, "<td class=\"adm-settings-col\">");
		settings_cell(h, json_object_get(row, "settings"));
		HTML(h, "</td></tr>");
	}
	if (!json_array_size(rows)) {
		HTML(h, "<tr><td class=\"muted\"");
		HTML_ATTRF(h, "colspan", "%zu", c + 2);
		HTML(h, ">");
		html_text(h, tables[t].empty);
		HTML(h, "</td></tr>");
	}
	HTML(h, "</tbody></table></div>");
}

/* A JSON value as a JavaScript template literal shows it (`${v}`): a
 * string as is, numbers in decimal, null and absent by name; into tmp
 * when it is not a string of v. */
static const char *js_string(const json_t *v, char *tmp, size_t len)
{
	if (json_is_string(v))
		return json_string_value(v);
	if (json_is_integer(v))
		snprintf(tmp, len, "%lld", (long long)json_integer_value(v));
	else if (json_is_real(v))
		snprintf(tmp, len, "%.17g", json_real_value(v));
	else if (json_is_boolean(v))
		snprintf(tmp, len, "%s", json_is_true(v) ? "true" : "false");
	else if (json_is_null(v))
		snprintf(tmp, len, "null");
	else if (!v)
		snprintf(tmp, len, "undefined");
	else
		snprintf(tmp, len, "[object Object]");
	return tmp;
}

/* A string made with printf, on the heap (NULL when out of memory). */
static char *str_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *str_printf(const char *fmt, ...)
{
	va_list ap;
	int n;
	char *s;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || !(s = malloc((size_t)n + 1)))
		return NULL;
	va_start(ap, fmt);
	vsnprintf(s, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return s;
}

/* ---- /admin/workers (web/admin-workers.js) ---- */

/* admin-workers.js's OFFLINE_S. */
#define WORKER_OFFLINE_S 60

/* admin-workers.js's workerState(w). */
static const char *worker_state(const json_t *w, time_t now)
{
	time_t seen;
	const char *status;

	if (!json_integer_value(json_object_get(w, "jobid")) &&
	    (!web_ssr_time(web_ssr_str(w, "t_seen"), &seen) || difftime(now, seen) > WORKER_OFFLINE_S))
		return "offline";
	/* Silent for the server's worker timeout (the API's "dead"). */
	if (!strcmp(web_ssr_str(w, "status"), "dead"))
		return "offline";
	if (*web_ssr_str(w, "error"))
		return "broken";
	if (json_integer_value(json_object_get(w, "jobid")))
		return "running";
	status = web_ssr_str(w, "status");
	return *status ? status : "idle";
}

struct worker_row {
	const json_t *w;
	const char *state;
	char key[192]; /* the sort key: "host:000001" */
	size_t i;      /* the API's order, which a stable sort keeps among equals */
};

/* The class of a character in a browser's collation: spaces and
 * punctuation before digits before letters (anything else after). */
static int collate_rank(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return 1;
	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))
		return 2;
	return c < 0x80 ? 0 : 3;
}

/* localeCompare(b, undefined, {numeric: true}) as near as ASCII names
 * need: digit runs by value, letters without case, punctuation first. */
static int collate(const char *a, const char *b)
{
	const unsigned char *p = (const unsigned char *)a, *q = (const unsigned char *)b;

	while (*p && *q) {
		if (collate_rank(*p) == 1 && collate_rank(*q) == 1) {
			size_t lp, lq;
			int c;

			while (*p == '0' && collate_rank(p[1]) == 1)
				p++;
			while (*q == '0' && collate_rank(q[1]) == 1)
				q++;
			for (lp = 0; collate_rank(p[lp]) == 1; lp++)
				;
			for (lq = 0; collate_rank(q[lq]) == 1; lq++)
				;
			if (lp != lq)
				return lp < lq ? -1 : 1;
			if ((c = memcmp(p, q, lp)))
				return c;
			p += lp;
			q += lq;
			continue;
		}
		if (collate_rank(*p) != collate_rank(*q))
			return collate_rank(*p) - collate_rank(*q);
		{
			int cp = *p >= 'A' && *p <= 'Z' ? *p + 32 : *p, cq = *q >= 'A' && *q <= 'Z' ? *q + 32 : *q;

			if (cp != cq)
				return cp - cq;
		}
		p++;
		q++;
	}
	return (*p != 0) - (*q != 0);
}

static int worker_cmp(const void *a, const void *b)
{
	const struct worker_row *x = a, *y = b;
	int c = collate(x->key, y->key);

	return c ? c : x->i < y->i ? -1 : x->i > y->i;
}

/* admin-common.js's when(iso): "never", or the time ago with the exact time as its title. */
static void when_cell(struct html *h, const char *iso)
{
	const char *t;

	if (!*iso) {
		HTML(h, "<span class=\"muted\">never</span>");
		return;
	}
	t = strchr(iso, 'T');
	HTML(h, "<time");
	HTML_ATTRF(h, "datetime", "%sZ", iso);
	if (t)
		HTML_ATTRF(h, "title", "%.*s %s UTC", (int)(t - iso), iso, t + 1);
	else
		HTML_ATTRF(h, "title", "%s UTC", iso);
	HTML(h, ">");
	web_ssr_ago(h, iso);
	HTML(h, "</time>");
}

/* The names of the running jobs (the script's GET /api/v1/jobs?ids=&limit=),
 * NULL when no worker runs one or the API did not answer. */
static const json_t *worker_jobs(struct web_ssr *s, const json_t *workers)
{
	struct buf ids, url;
	const json_t *w, *ans = NULL;
	size_t i, n = 0;
	char num[32];

	buf_init(&ids, 1u << 20);
	buf_init(&url, 1u << 21);
	json_array_foreach(workers, i, w) {
		long long id = (long long)json_integer_value(json_object_get(w, "jobid"));

		if (id) {
			(void)buf_printf(&ids, n ? ",%lld" : "%lld", id);
			n++;
		}
	}
	snprintf(num, sizeof(num), "%zu", n);
	if (n && !buf_puts(&url, "/api/v1/jobs") && !html_query_add(&url, "ids", ids.data) &&
	    !html_query_add(&url, "limit", num))
		ans = json_object_get(web_ssr_get(s, url.data), "jobs");
	buf_release(&ids);
	buf_release(&url);
	return ans;
}

void web_ssr_admin_workers(struct web_ssr *s)
{
	struct html *h = &s->main;
	json_t *answer = web_ssr_get(s, "/api/v1/workers");
	const json_t *workers = json_object_get(answer, "workers"), *jobs, *w;
	struct worker_row *rows;
	size_t n = json_array_size(workers), i, j;
	time_t now = time(NULL);

	if (!answer || !json_is_array(workers))
		return;
	jobs = worker_jobs(s, workers);
	if (!(rows = calloc(n ? n : 1, sizeof(*rows))))
		return;
	json_array_foreach(workers, i, w) {
		const json_t *inst = json_object_get(w, "instance");
		char tmp[32], htmp[32];
		const char *is = js_string(inst, tmp, sizeof(tmp));
		size_t il = strlen(is);

		rows[i].w = w;
		rows[i].i = i;
		rows[i].state = worker_state(w, now);
		/* `${w.host}:${String(w.instance).padStart(6, '0')}` */
		snprintf(rows[i].key, sizeof(rows[i].key), "%s:%.*s%s",
			 js_string(json_object_get(w, "host"), htmp, sizeof(htmp)), il < 6 ? (int)(6 - il) : 0, "000000",
			 is);
	}
	web_ssr_admin_nav(h, "/admin/workers");
	HTML(h, "<h1>");
	html_textf(h, "Workers (%zu)", n);
	HTML(h, "</h1><p class=\"adm-summary\">");
	/* Each state once, in the order the workers first show it. */
	for (i = 0; i < n; i++) {
		size_t count = 0;

		for (j = 0; j < i && strcmp(rows[j].state, rows[i].state); j++)
			;
		if (j < i)
			continue;
		for (j = i; j < n; j++)
			count += !strcmp(rows[j].state, rows[i].state);
		HTML(h, "<span");
		HTML_ATTRF(h, "class", "adm-state ws-%s", rows[i].state);
		HTML(h, ">");
		html_textf(h, "%zu %s", count, rows[i].state);
		HTML(h, "</span>");
	}
	if (!n)
		html_text(h, "No worker has registered yet.");
	HTML(h, "</p><div class=\"scroll\"><table class=\"adm-table adm-workers\"><thead><tr>"
		"<th scope=\"col\">Worker</th><th scope=\"col\">State</th><th scope=\"col\">Current job</th>"
		"<th scope=\"col\" class=\"adm-classes\">Classes</th><th scope=\"col\">Last seen</th>"
		"<th scope=\"col\" class=\"adm-desc\">Error</th></tr></thead><tbody>");
	qsort(rows, n, sizeof(*rows), worker_cmp);
	for (i = 0; i < n; i++) {
		long long jobid = (long long)json_integer_value(json_object_get(rows[i].w, "jobid"));
		const char *classes = json_string_value(
			json_object_get(json_object_get(rows[i].w, "properties"), "WORKER_CLASS"));
		const json_t *job = NULL;
		char tmp[32];

		w = rows[i].w;
		HTML(h, "<tr");
		HTML_ATTR(h, "data-id", js_string(json_object_get(w, "id"), tmp, sizeof(tmp)));
		HTML(h, "><td><span class=\"adm-worker\">");
		html_text(h, js_string(json_object_get(w, "host"), tmp, sizeof(tmp)));
		HTML(h, ":");
		html_text(h, js_string(json_object_get(w, "instance"), tmp, sizeof(tmp)));
		HTML(h, "</span></td><td><span");
		HTML_ATTRF(h, "class", "adm-state ws-%s", rows[i].state);
		HTML(h, ">");
		html_text(h, rows[i].state);
		HTML(h, "</span></td><td>");
		if (jobid) {
			json_array_foreach(jobs, j, job)
				if (json_integer_value(json_object_get(job, "id")) == jobid)
					break;
			if (j == json_array_size(jobs))
				job = NULL;
			HTML(h, "<a");
			html_hreff(h, "/tests/%lld", jobid);
			HTML(h, ">");
			if (job) {
				html_text(h, js_string(json_object_get(job, "name"), tmp, sizeof(tmp)));
				html_textf(h, " (#%lld)", jobid);
			} else {
				html_textf(h, "#%lld", jobid);
			}
			HTML(h, "</a>");
		} else {
			HTML(h, "<span class=\"muted\">—</span>");
		}
		HTML(h, "</td><td class=\"adm-classes\">");
		/* WORKER_CLASS split at commas, empty parts left out */
		for (const char *c = classes ? classes : ""; *c; c += strcspn(c, ","), c += *c == ',') {
			size_t len = strcspn(c, ",");

			if (!len)
				continue;
			HTML(h, "<span class=\"adm-tag\">");
			html_textf(h, "%.*s", (int)len, c);
			HTML(h, "</span>");
		}
		HTML(h, "</td><td>");
		when_cell(h, web_ssr_str(w, "t_seen"));
		HTML(h, "</td><td class=\"adm-desc\">");
		html_text(h, web_ssr_str(w, "error"));
		HTML(h, "</td></tr>");
	}
	if (!n)
		HTML(h, "<tr><td colspan=\"6\" class=\"muted\">No workers.</td></tr>");
	HTML(h, "</tbody></table></div>");
	free(rows);
}

/* ---- /admin/job_templates/<group> (web/page-templates.js) ---- */

/* One of the group's templates: its product's key (distri, version,
 * flavor, arch), the label of its row (test suite, or "name (suite)")
 * and its machine. */
struct tpl {
	const json_t *t;
	char *product, *label;
	const char *machine;
	size_t i; /* its place in the API's list */
};

static int str_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The distinct strings of v[0..n), sorted as JavaScript's sort() does
 * (code units; bytes of UTF-8 order the same for all but astral
 * characters): into out, returning how many. */
static size_t distinct_sorted(const char **v, size_t n, const char **out)
{
	size_t i, j, m = 0;

	for (i = 0; i < n; i++) {
		for (j = 0; j < m && strcmp(out[j], v[i]); j++)
			;
		if (j == m)
			out[m++] = v[i];
	}
	qsort(out, m, sizeof(*out), str_cmp);
	return m;
}

/* page-templates.js's productTable(): the templates of one product
 * (list, n of them) as test suites × machines, priorities in the cells. */
static void product_table(struct html *h, const struct tpl *list, size_t n, const char **scratch)
{
	const json_t *p = json_object_get(list[0].t, "product");
	const char **machines = scratch, **suites = scratch + n, **tmp = scratch + 2 * n;
	size_t nm, ns, i, k, c;
	char t1[32], t2[32], t3[32], t4[32];

	for (i = 0; i < n; i++)
		tmp[i] = list[i].machine;
	nm = distinct_sorted(tmp, n, machines);
	for (i = 0; i < n; i++)
		tmp[i] = list[i].label;
	ns = distinct_sorted(tmp, n, suites);
	HTML(h, "<div class=\"scroll jt-product\"><table class=\"adm-table jt-matrix\"><caption>");
	html_textf(h, "%s-%s-%s-%s", js_string(json_object_get(p, "distri"), t1, sizeof(t1)),
		   js_string(json_object_get(p, "version"), t2, sizeof(t2)),
		   js_string(json_object_get(p, "flavor"), t3, sizeof(t3)),
		   js_string(json_object_get(p, "arch"), t4, sizeof(t4)));
	HTML(h, "</caption><thead><tr><th scope=\"col\">Test suite</th>");
	for (c = 0; c < nm; c++) {
		HTML(h, "<th scope=\"col\" class=\"num\">");
		html_text(h, machines[c]);
		HTML(h, "</th>");
	}
	HTML(h, "</tr></thead><tbody>");
	for (k = 0; k < ns; k++) {
		HTML(h, "<tr><th scope=\"row\">");
		html_text(h, suites[k]);
		HTML(h, "</th>");
		for (c = 0; c < nm; c++) {
			const json_t *t = NULL, *prio;

			/* the last template of the row and machine, as the script's map keeps it */
			for (i = 0; i < n; i++)
				if (!strcmp(list[i].label, suites[k]) && !strcmp(list[i].machine, machines[c]))
					t = list[i].t;
			HTML(h, "<td class=\"num\">");
			if (!t) {
				HTML(h, "<span class=\"muted\" aria-label=\"none\">·</span></td>");
				continue;
			}
			prio = json_object_get(t, "prio");
			HTML(h, "<span");
			if (prio && !json_is_null(prio))
				HTML_ATTRF(h, "title", "job template %s, priority %s",
					   js_string(json_object_get(t, "id"), t1, sizeof(t1)), js_string(prio, t2, sizeof(t2)));
			else
				HTML_ATTRF(h, "title", "job template %s, priority default",
					   js_string(json_object_get(t, "id"), t1, sizeof(t1)));
			HTML(h, ">");
			html_text(h, prio && !json_is_null(prio) ? js_string(prio, t2, sizeof(t2)) : "—");
			HTML(h, "</span></td>");
		}
		HTML(h, "</tr>");
	}
	HTML(h, "</tbody></table></div>");
}

static int tpl_cmp(const void *a, const void *b)
{
	const struct tpl *x = a, *y = b;
	int c = strcmp(x->product, y->product);

	/* the script lists a product's templates in the API's order */
	return c ? c : x->i < y->i ? -1 : x->i > y->i;
}

void web_ssr_templates(struct web_ssr *s)
{
	struct html *h = &s->main;
	long long group = (long long)s->req->id;
	char url[64], t1[32], t2[32], t3[32], t4[32];
	json_t *groups, *all;
	const json_t *g, *list, *t;
	struct tpl *tpls = NULL;
	const char **scratch = NULL;
	size_t n = 0, i, j;

	snprintf(url, sizeof(url), "/api/v1/job_groups/%lld", group);
	if (!(groups = web_ssr_get(s, url)) || !(all = web_ssr_get(s, "/api/v1/job_templates")))
		return;
	list = json_object_get(all, "JobTemplates");
	g = json_is_array(groups) ? json_array_get(groups, 0) : groups;
	if (!(tpls = calloc(json_array_size(list) + 1, sizeof(*tpls))) ||
	    !(scratch = calloc(3 * json_array_size(list) + 1, sizeof(*scratch))))
		goto out;
	/* the group's templates (the script keeps the API's order) */
	json_array_foreach(list, i, t) {
		const json_t *p = json_object_get(t, "product"), *suite = json_object_get(t, "test_suite");
		const char *name = web_ssr_str(t, "name"), *sname = web_ssr_str(suite, "name");

		if (!json_is_integer(json_object_get(t, "group_id")) ||
		    json_integer_value(json_object_get(t, "group_id")) != group)
			continue;
		tpls[n].t = t;
		tpls[n].i = i;
		tpls[n].machine = web_ssr_str(json_object_get(t, "machine"), "name");
		/* the script's key joins them with NUL, which sorts first: \1 does the same here */
		tpls[n].product = str_printf("%s\1%s\1%s\1%s", js_string(json_object_get(p, "distri"), t1, sizeof(t1)),
					     js_string(json_object_get(p, "version"), t2, sizeof(t2)),
					     js_string(json_object_get(p, "flavor"), t3, sizeof(t3)),
					     js_string(json_object_get(p, "arch"), t4, sizeof(t4)));
		tpls[n].label = *name && strcmp(name, sname) ? str_printf("%s (%s)", name, sname) : str_printf("%s", sname);
		if (!tpls[n].product || !tpls[n].label) {
			n++;
			goto out;
		}
		n++;
	}
	web_ssr_admin_nav(h, "/admin/groups");
	HTML(h, "<h1>Job templates of <a");
	html_hreff(h, "/group_overview/%lld", group);
	HTML(h, ">");
	if (g)
		web_ssr_text(h, g, "name");
	else
		html_textf(h, "group %lld", group);
	HTML(h, "</a></h1><section class=\"jt-section\"><h2>");
	html_textf(h, "Templates (%zu)", n);
	HTML(h, "</h2>");
	if (!n)
		HTML(h, "<p class=\"muted\">This group has no job templates yet.</p>");
	/* one table per product, in the order of their keys */
	qsort(tpls, n, sizeof(*tpls), tpl_cmp);
	for (i = 0; i < n; i = j) {
		for (j = i + 1; j < n && !strcmp(tpls[j].product, tpls[i].product); j++)
			;
		product_table(h, tpls + i, j - i, scratch);
	}
	HTML(h, "</section>");
out:
	for (i = 0; i < n; i++) {
		free(tpls[i].product);
		free(tpls[i].label);
	}
	free(tpls);
	free(scratch);
}

/* ---- /admin/auditlog (web/page-auditlog.js) ---- */

/* page-auditlog.js's PAGE. */
#define AUDIT_PAGE "50"

/* A key JavaScript orders first among an object's keys: an array index
 * ("0", "17", below 2^32 - 1, no leading zero), its value into n. */
static bool js_index(const char *k, unsigned long long *n)
{
	const char *p;

	if (!*k || (k[0] == '0' && k[1]) || strlen(k) > 10)
		return false;
	for (p = k, *n = 0; *p; p++) {
		if (*p < '0' || *p > '9')
			return false;
		*n = *n * 10 + (unsigned)(*p - '0');
	}
	return *n < 4294967295ull;
}

/* One "key: value" of the details: a nested value as compact JSON. */
static void detail_text(struct html *h, const char *key, const json_t *v, bool first)
{
	char tmp[32];

	if (!first)
		HTML(h, "; ");
	html_text(h, key);
	HTML(h, ": ");
	if (json_is_object(v) || json_is_array(v)) {
		char *j = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);

		if (!j) {
			h->err = h->err ? h->err : ERR_NOMEM; /* the script shows the page */
			return;
		}
		html_text(h, j);
		free(j);
	} else {
		html_text(h, js_string(v, tmp, sizeof(tmp)));
	}
}

/* page-auditlog.js's details(d): "key: value; ..." in the order of
 * Object.entries (array indexes first, ascending, then the rest as written). */
static void details_text(struct html *h, const json_t *d)
{
	const char *k;
	const json_t *v;
	size_t i;
	bool first = true, first_index = true;
	unsigned long long last = 0;
	char tmp[32];

	if (json_is_array(d)) {
		json_array_foreach(d, i, v) {
			snprintf(tmp, sizeof(tmp), "%zu", i);
			detail_text(h, tmp, v, first);
			first = false;
		}
		return;
	}
	if (!json_is_object(d)) {
		if (d && !json_is_null(d))
			html_text(h, js_string(d, tmp, sizeof(tmp)));
		return;
	}
	/* the index keys, smallest first: picked one by one, as there are few */
	for (;;) {
		const char *next = NULL;
		unsigned long long n, best = 0;

		json_object_foreach((json_t *)d, k, v) {
			if (js_index(k, &n) && (first_index || n > last) && (!next || n < best)) {
				next = k;
				best = n;
			}
		}
		if (!next)
			break;
		detail_text(h, next, json_object_get(d, next), first);
		first = first_index = false;
		last = best;
	}
	json_object_foreach((json_t *)d, k, v) {
		unsigned long long n;

		if (!js_index(k, &n)) {
			detail_text(h, k, v, first);
			first = false;
		}
	}
}

void web_ssr_auditlog(struct web_ssr *s)
{
	struct html *h = &s->main;
	const char *limit = web_ssr_param(s, "limit");
	json_t *page, *ev;
	struct buf url;
	bool keep;
	size_t i, n;
	const json_t *e;

	/* the log is for administrators: a signed-in user (the script asks
	 * the session) whose level reads it (else the API does not answer) */
	if (!s->req->session)
		return;
	keep = limit && strlen(limit) <= 3 && strspn(limit, "0123456789") == strlen(limit);
	if (!keep)
		limit = AUDIT_PAGE;
	buf_init(&url, 4096);
	if (buf_puts(&url, "/api/v1/audit_log") || html_query_add(&url, "limit", limit) ||
	    html_query_add(&url, "before", web_ssr_param(s, "before")) ||
	    html_query_add(&url, "after", web_ssr_param(s, "after")) || !(page = web_ssr_get(s, url.data))) {
		buf_release(&url);
		return;
	}
	buf_release(&url);
	ev = json_object_get(page, "events");
	n = json_array_size(ev);
	HTML(h, "<h1>Audit log</h1>");
	if (n) {
		HTML(h, "<div class=\"scroll\"><table class=\"audit\"><thead><tr><th>Time (UTC)</th><th>User</th>"
			"<th>Event</th><th>Details</th></tr></thead><tbody>");
		json_array_foreach(ev, i, e) {
			const char *t = web_ssr_str(e, "time"), *sep = strchr(t, 'T');
			char tmp[32];

			HTML(h, "<tr");
			HTML_ATTR(h, "data-id", js_string(json_object_get(e, "id"), tmp, sizeof(tmp)));
			HTML(h, "><td class=\"audit-time\">");
			if (sep)
				html_textf(h, "%.*s %s", (int)(sep - t), t, sep + 1);
			else
				html_text(h, t);
			HTML(h, "</td><td class=\"audit-user\">");
			web_ssr_text(h, e, "user");
			HTML(h, "</td><td class=\"audit-event\">");
			web_ssr_text(h, e, "event");
			HTML(h, "</td><td class=\"audit-details\">");
			details_text(h, json_object_get(e, "details"));
			HTML(h, "</td></tr>");
		}
		HTML(h, "</tbody></table></div>");
	} else {
		HTML(h, "<p class=\"muted\">No events.</p>");
	}
	HTML(h, "<nav class=\"audit-paging\">");
	if (n && json_is_true(json_object_get(page, "newer"))) {
		HTML(h, "<a");
		html_hreff(h, "/admin/auditlog?after=%lld%s%s",
			   (long long)json_integer_value(json_object_get(json_array_get(ev, 0), "id")),
			   keep ? "&limit=" : "", keep ? limit : "");
		HTML(h, " class=\"audit-newer\">← Newer</a>");
	}
	if (n && json_is_true(json_object_get(page, "older"))) {
		HTML(h, "<a");
		html_hreff(h, "/admin/auditlog?before=%lld%s%s",
			   (long long)json_integer_value(json_object_get(json_array_get(ev, n - 1), "id")),
			   keep ? "&limit=" : "", keep ? limit : "");
		HTML(h, " class=\"audit-older\">Older →</a>");
	}
	HTML(h, "</nav>");
}

/* ---- /admin/needles (web/admin-needles.js) ---- */

/* admin-needles.js's PAGE and the keys of its SORTS. */
#define NEEDLES_PAGE "100"
static const char *const needle_sorts[] = { "last_match", "last_seen", "name" };

/* admin-needles.js's jobLink(job, module, step): "#12 boot step 3" to the step. */
static void needle_job(struct html *h, const json_t *n, const char *job_key, const char *module_key,
		       const char *step_key)
{
	long long job = (long long)json_integer_value(json_object_get(n, job_key));
	const char *module = web_ssr_str(n, module_key);
	const json_t *step = json_object_get(n, step_key);
	bool has_step = json_is_integer(step) ? json_integer_value(step) != 0 : json_is_string(step) && *json_string_value(step);
	char tmp[32];
	struct buf href;

	if (!job)
		return;
	buf_init(&href, 1u << 16);
	if (buf_printf(&href, "/tests/%lld", job) ||
	    (*module && has_step && (buf_puts(&href, "#step/") || html_uri_component(&href, module) ||
				     buf_printf(&href, "/%s", js_string(step, tmp, sizeof(tmp)))))) {
		buf_release(&href);
		h->err = h->err ? h->err : ERR_NOMEM;
		return;
	}
	HTML(h, "<a");
	html_href(h, href.data);
	HTML(h, " class=\"adm-joblink\">");
	html_textf(h, "#%lld", job);
	if (*module) {
		HTML(h, " ");
		html_text(h, module);
	}
	if (has_step) {
		HTML(h, " step ");
		html_text(h, js_string(step, tmp, sizeof(tmp)));
	}
	HTML(h, "</a>");
	buf_release(&href);
}

void web_ssr_admin_needles(struct web_ssr *s)
{
	struct html *h = &s->main;
	const char *sort = web_ssr_param(s, "sort"), *search = web_ssr_param(s, "search");
	json_t *ans;
	const json_t *list, *n;
	struct buf url;
	size_t i, k, shown;

	for (k = 0; k < sizeof(needle_sorts) / sizeof(needle_sorts[0]) && (!sort || strcmp(sort, needle_sorts[k])); k++)
		;
	if (k == sizeof(needle_sorts) / sizeof(needle_sorts[0]))
		sort = "last_match";
	buf_init(&url, 1u << 16);
	if (buf_puts(&url, "/api/v1/needles") || html_query_add(&url, "sort", sort) ||
	    html_query_add(&url, "search", search) || html_query_add(&url, "limit", NEEDLES_PAGE) ||
	    !(ans = web_ssr_get(s, url.data)) || !json_is_array(list = json_object_get(ans, "needles"))) {
		buf_release(&url);
		return;
	}
	buf_release(&url);
	shown = json_array_size(list);
	web_ssr_admin_nav(h, "/admin/needles");
	HTML(h, "<h1>Needles</h1><div class=\"scroll\"><table class=\"adm-table adm-needles\"><thead><tr>"
		"<th scope=\"col\">Needle</th><th scope=\"col\">Distri</th><th scope=\"col\">Last match</th>"
		"<th scope=\"col\">Last seen</th></tr></thead><tbody>");
	json_array_foreach(list, i, n) {
		const char *name = web_ssr_str(n, "name"), *file = web_ssr_str(n, "file");
		size_t nl = strlen(name);
		char tmp[32];

		HTML(h, "<tr");
		HTML_ATTR(h, "data-id", js_string(json_object_get(n, "id"), tmp, sizeof(tmp)));
		HTML_ATTR(h, "data-name", js_string(json_object_get(n, "name"), tmp, sizeof(tmp)));
		HTML(h, "><td class=\"adm-needle\"><span class=\"name\">");
		web_ssr_text(h, n, "name");
		HTML(h, "</span>");
		/* the file when it is not "<name>.json" */
		if (*file && !(strlen(file) == nl + 5 && !strncmp(file, name, nl) && !strcmp(file + nl, ".json"))) {
			HTML(h, "<span class=\"muted file\">");
			html_textf(h, " %s", file);
			HTML(h, "</span>");
		}
		HTML(h, "</td><td>");
		web_ssr_text(h, n, "distri");
		HTML(h, "</td><td class=\"adm-match\">");
		when_cell(h, web_ssr_str(n, "last_match"));
		HTML(h, " ");
		needle_job(h, n, "last_match_job", "last_match_module", "last_match_step");
		HTML(h, "</td><td class=\"adm-seen\">");
		when_cell(h, web_ssr_str(n, "last_seen"));
		HTML(h, " ");
		needle_job(h, n, "last_seen_job", "last_seen_module", "last_seen_step");
		HTML(h, "</td></tr>");
	}
	HTML(h, "</tbody></table></div><p class=\"adm-message muted\" role=\"status\">");
	if (shown)
		html_textf(h, "%zu needle%s shown%s.", shown, shown == 1 ? "" : "s",
			   json_is_string(json_object_get(ans, "next")) && *web_ssr_str(ans, "next") ? ", more below" : "");
	else if (search)
		html_textf(h, "No needle name contains “%s”.", search);
	else
		html_text(h, "No job has reported needles yet.");
	HTML(h, "</p>");
}

/* ---- /admin/assets (web/admin-assets.js) ---- */

/* admin-common.js's humanSize(n): "512 B", "1.4 KiB", "3.2 GiB". */
static void human_size(struct html *h, double n)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
	size_t i = 0;

	if (!isfinite(n) || n < 0)
		return;
	while (n >= 1024 && i < sizeof(units) / sizeof(units[0]) - 1) {
		n /= 1024;
		i++;
	}
	if (i == 0)
		html_textf(h, "%.17g B", n);
	else if (n < 10) /* toFixed(1): a tie goes up */
		html_textf(h, "%.1f %s", floor(n * 10 + 0.5) / 10, units[i]);
	else
		html_textf(h, "%.0f %s", floor(n + 0.5), units[i]);
}

/* Number(v) of the API's sizes (NaN for what is no number). */
static double js_number(const json_t *v)
{
	if (json_is_number(v))
		return json_number_value(v);
	if (json_is_null(v) || json_is_false(v))
		return 0;
	if (json_is_true(v))
		return 1;
	if (json_is_string(v)) {
		char *end;
		double d = strtod(json_string_value(v), &end);

		return *json_string_value(v) && !*end ? d : NAN;
	}
	return NAN;
}

struct asset_row {
	const json_t *a;
	size_t i;
};

static int asset_cmp(const void *x, const void *y)
{
	const struct asset_row *a = x, *b = y;
	const char *na = web_ssr_str(a->a, "name"), *nb = web_ssr_str(b->a, "name");
	int c;

	/* sortableTable's cmp: equal, empty names last, else as a browser collates */
	if (!strcmp(na, nb))
		c = 0;
	else if (!*na || !*nb)
		c = *na ? -1 : 1;
	else
		c = collate(na, nb);
	return c ? c : a->i < b->i ? -1 : a->i > b->i;
}

void web_ssr_admin_assets(struct web_ssr *s)
{
	struct html *h = &s->main;
	json_t *ans = web_ssr_get(s, "/api/v1/assets");
	const json_t *list = json_object_get(ans, "assets"), *a, *id;
	struct asset_row *rows;
	size_t n = json_array_size(list), i, k;
	double total = 0;

	if (!ans || !json_is_array(list) || !(rows = calloc(n ? n : 1, sizeof(*rows))))
		return;
	json_array_foreach(list, i, a) {
		double v = js_number(json_object_get(a, "size"));

		total += isnan(v) ? 0 : v;
		rows[i].a = a;
		rows[i].i = i;
	}
	qsort(rows, n, sizeof(*rows), asset_cmp);
	web_ssr_admin_nav(h, "/admin/assets");
	HTML(h, "<h1>");
	html_textf(h, "Assets (%zu)", n);
	HTML(h, "</h1><div class=\"adm-tools\"><span class=\"adm-summary\">");
	human_size(h, total);
	HTML(h, " in all</span></div><p class=\"adm-message\" role=\"status\"></p>"
		"<div class=\"scroll\"><table class=\"adm-table adm-assets\"><thead><tr><th scope=\"col\">Type</th>"
		"<th scope=\"col\">Name</th><th scope=\"col\" class=\"num\">Size</th><th scope=\"col\">Jobs using it</th>"
		"<th scope=\"col\">Last use</th><th scope=\"col\">Registered</th></tr></thead><tbody>");
	for (i = 0; i < n; i++) {
		const json_t *size, *last;
		long long jobs, last_use;
		struct buf href;
		char tmp[32], t_created[64];

		a = rows[i].a;
		HTML(h, "<tr");
		HTML_ATTR(h, "data-id", js_string(json_object_get(a, "id"), tmp, sizeof(tmp)));
		HTML(h, "><td>");
		web_ssr_text(h, a, "type");
		HTML(h, "</td><td><a");
		buf_init(&href, 1u << 16);
		if (buf_puts(&href, "/assets/") || html_uri_component(&href, js_string(json_object_get(a, "type"), tmp, sizeof(tmp))) ||
		    buf_puts(&href, "/") || html_uri_component(&href, js_string(json_object_get(a, "name"), tmp, sizeof(tmp))))
			h->err = h->err ? h->err : ERR_NOMEM;
		else
			html_href(h, href.data);
		buf_release(&href);
		HTML(h, ">");
		web_ssr_text(h, a, "name");
		HTML(h, "</a></td><td class=\"num\">");
		size = json_object_get(a, "size");
		if (!size || json_is_null(size)) {
			HTML(h, "<span class=\"muted\">unknown</span>");
		} else {
			HTML(h, "<span");
			HTML_ATTRF(h, "title", "%s bytes", js_string(size, tmp, sizeof(tmp)));
			HTML(h, ">");
			if (!json_is_string(size) || *json_string_value(size))
				human_size(h, js_number(size));
			HTML(h, "</span>");
		}
		HTML(h, "</td><td>");
		/* jobsCell(a) */
		jobs = (long long)js_number(json_object_get(a, "jobs"));
		if (jobs <= 0) {
			HTML(h, "<span class=\"muted\">none</span>");
		} else {
			last = json_object_get(a, "last_jobs");
			HTML(h, "<span class=\"adm-jobs\">");
			html_textf(h, "%lld: ", jobs);
			json_array_foreach(last, k, id) {
				if (k)
					HTML(h, " ");
				HTML(h, "<a");
				html_hreff(h, "/tests/%s", js_string(id, tmp, sizeof(tmp)));
				HTML(h, ">");
				html_textf(h, "#%s", js_string(id, tmp, sizeof(tmp)));
				HTML(h, "</a>");
			}
			if ((size_t)jobs > json_array_size(last))
				HTML(h, " …");
			HTML(h, "</span>");
		}
		HTML(h, "</td><td>");
		last_use = (long long)json_integer_value(json_object_get(a, "last_use_job_id"));
		if (last_use) {
			HTML(h, "<a");
			html_hreff(h, "/tests/%lld", last_use);
			HTML(h, ">");
			html_textf(h, "#%lld", last_use);
			HTML(h, "</a>");
		}
		HTML(h, "</td><td>");
		/* when(isoTime(t_created)): "2026-12-04 10:34:24" as an ISO time */
		snprintf(t_created, sizeof(t_created), "%s", web_ssr_str(a, "t_created"));
		if (strchr(t_created, ' '))
			*strchr(t_created, ' ') = 'T';
		when_cell(h, t_created);
		HTML(h, "</td></tr>");
	}
	if (!n)
		HTML(h, "<tr><td colspan=\"6\" class=\"muted\">No assets under factory/ yet.</td></tr>");
	HTML(h, "</tbody></table></div>");
	free(rows);
}
