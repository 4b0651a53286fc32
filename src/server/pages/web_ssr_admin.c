/* SPDX-License-Identifier: MIT */
/* web_ssr_admin.c - first views of the admin pages (web_ssr.h): the rows
 * of /admin/machines, /admin/products and /admin/test_suites as
 * web/admin-tables.js shows them, the workers as web/admin-workers.js
 * does, under web/admin-common.js's navigation; a job group's template
 * matrices as web/page-templates.js shows them, and /admin/assets and
 * /admin/needles as web/admin-assets.js and web/admin-needles.js do. The
 * controls (sorting, filter, edit, the YAML editor) come with the
 * scripts. And the audit log (/admin/auditlog), built once here from
 * audit.h: its script adds nothing. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "server/store/assets.h"
#include "server/store/audit.h"
#include "server/store/jobs.h"
#include "server/store/needles.h"
#include "server/store/tables.h"
#include "server/store/templates.h"
#include "server/store/groups.h"
#include "server/store/users.h"
#include "server/store/workers.h"
#include "server/pages/web_ssr.h"
#include "util/err.h"
#include "util/str.h"
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

/* The admin tables (tables.h) by page: path, title, what a row is called,
 * the table, and the columns' labels (tables_desc's columns, in order). */
static const struct {
	const char *path, *title, *plural, *empty;
	enum tables_kind kind;
	const char *labels[TABLES_MAX_COLS];
} tables[] = {
	{ "/admin/machines", "Machines", "machines", "No machines yet.", TABLES_MACHINES,
	  { "Name", "Backend", "Description" } },
	{ "/admin/products", "Products", "products", "No products yet.", TABLES_PRODUCTS,
	  { "Distri", "Version", "Flavor", "Arch", "Description" } },
	{ "/admin/test_suites", "Test suites", "test suites", "No test suites yet.", TABLES_TEST_SUITES,
	  { "Name", "Description" } },
};

/* A row's settings ([{key, value}] as tables_list gives them, sorted by key). */
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

/* A column head that sorts the rows (web/admin-common.js's sortRows). */
static void sort_head(struct html *h, const char *label, const char *cls)
{
	HTML(h, "<th scope=\"col\"");
	if (cls)
		HTML_ATTR(h, "class", cls);
	HTML(h, " aria-sort=\"none\"><button type=\"button\" class=\"adm-sort\">");
	html_text(h, label);
	HTML(h, "</button></th>");
}

/* The filter box (web/admin-common.js's filterRows) and, for anyone but
 * an administrator, why there are no write controls; the script adds
 * them for an administrator. */
static void admin_tools(struct web_ssr *s, const char *label, bool hint)
{
	struct html *h = &s->main;
	const struct users_session *who = s->req->session;

	HTML(h, "<div class=\"adm-tools\"><input type=\"search\" class=\"adm-filter\"");
	HTML_ATTR(h, "placeholder", label);
	HTML_ATTR(h, "aria-label", label);
	HTML(h, ">");
	if (hint && !(who && who->user.role == AUTH_ADMIN))
		HTML(h, "<span class=\"muted adm-hint\">Sign in as an administrator to edit.</span>");
}

/* /admin/machines, /admin/products, /admin/test_suites: built once from
 * tables_list (web/admin-tables.js adds sorting, the filter and, for an
 * administrator, the editor). */
void web_ssr_admin_table(struct web_ssr *s)
{
	struct html *h = &s->main;
	const char *name = s->req->path;
	const struct tables_desc *d;
	const char *want[TABLES_MAX_COLS] = { NULL };
	size_t t, c, i;
	json_t *rows = NULL, *row;
	char msg[256], label[64];

	for (t = 0; t < sizeof(tables) / sizeof(tables[0]) && strcmp(tables[t].path, name); t++)
		;
	if (t == sizeof(tables) / sizeof(tables[0]))
		return;
	d = tables_desc(tables[t].kind);
	if (tables_list(s->req->db, tables[t].kind, 0, want, &rows, msg, sizeof(msg)) || !web_ssr_keep(s, rows)) {
		web_ssr_error(s, "cannot read the %s", tables[t].plural);
		return;
	}
	web_ssr_admin_nav(h, tables[t].path);
	HTML(h, "<h1>");
	html_textf(h, "%s (%zu)", tables[t].title, json_array_size(rows));
	HTML(h, "</h1>");
	snprintf(label, sizeof(label), "Filter %s", tables[t].plural);
	admin_tools(s, label, true);
	HTML(h, "</div><p class=\"adm-message\" role=\"status\"></p><div class=\"scroll\"><table");
	HTML_ATTRF(h, "class", "adm-table adm-%s", tables[t].path + 7);
	HTML(h, "><thead><tr>");
	sort_head(h, "ID", "num");
	for (c = 0; d->cols[c]; c++)
		sort_head(h, tables[t].labels[c], strcmp(d->cols[c], "description") ? NULL : "adm-desc");
	HTML(h, "<th scope=\"col\" class=\"adm-settings-col\">Settings</th></tr></thead><tbody>");
	json_array_foreach(rows, i, row) {
		HTML(h, "<tr");
		HTML_ATTRF(h, "data-id", "%lld", (long long)json_integer_value(json_object_get(row, "id")));
		HTML(h, "><td class=\"num\">");
		web_ssr_text(h, row, "id");
		HTML(h, "</td>");
		for (c = 0; d->cols[c]; c++) {
			HTML(h, "<td");
			if (!strcmp(d->cols[c], "description"))
				HTML(h, " class=\"adm-desc\"");
			HTML(h, ">");
			web_ssr_text(h, row, d->cols[c]);
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

/* /admin/workers: built once from workers_list_all (web/admin-workers.js
 * adds sorting), a running job named from jobs_to_json. */
void web_ssr_admin_workers(struct web_ssr *s)
{
	struct html *h = &s->main;
	json_t *answer = web_ssr_keep(s, workers_list_all(s->req->db, (int64_t)time(NULL), s->req->worker_timeout_s,
							   s->req->ws_missing, s->req->wshub));
	const json_t *workers = json_object_get(answer, "workers"), *w;
	struct worker_row *rows;
	size_t n = json_array_size(workers), i, j;
	time_t now = time(NULL);

	if (!answer || !json_is_array(workers) || !(rows = calloc(n ? n : 1, sizeof(*rows)))) {
		web_ssr_error(s, "cannot read the workers");
		return;
	}
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
		"<th scope=\"col\" aria-sort=\"ascending\"><button type=\"button\" class=\"adm-sort\">Worker</button></th>");
	sort_head(h, "State", NULL);
	sort_head(h, "Current job", NULL);
	sort_head(h, "Classes", "adm-classes");
	sort_head(h, "Last seen", NULL);
	HTML(h, "<th scope=\"col\" class=\"adm-desc\">Error</th></tr></thead><tbody>");
	qsort(rows, n, sizeof(*rows), worker_cmp);
	for (i = 0; i < n; i++) {
		long long jobid = (long long)json_integer_value(json_object_get(rows[i].w, "jobid"));
		const char *classes = json_string_value(
			json_object_get(json_object_get(rows[i].w, "properties"), "WORKER_CLASS"));
		char tmp[32];

		w = rows[i].w;
		HTML(h, "<tr");
		HTML_ATTR(h, "data-id", js_string(json_object_get(w, "id"), tmp, sizeof(tmp)));
		HTML(h, "><td");
		HTML_ATTR(h, "data-sort", rows[i].key);
		HTML(h, "><span class=\"adm-worker\">");
		html_text(h, js_string(json_object_get(w, "host"), tmp, sizeof(tmp)));
		HTML(h, ":");
		html_text(h, js_string(json_object_get(w, "instance"), tmp, sizeof(tmp)));
		HTML(h, "</span></td><td><span");
		HTML_ATTRF(h, "class", "adm-state ws-%s", rows[i].state);
		HTML(h, ">");
		html_text(h, rows[i].state);
		HTML(h, "</span></td><td");
		HTML_ATTRF(h, "data-sort", "%lld", jobid);
		HTML(h, ">");
		if (jobid) {
			json_t *job = NULL;

			HTML(h, "<a");
			html_hreff(h, "/tests/%lld", jobid);
			HTML(h, ">");
			if (!jobs_to_json(s->req->db, jobid, false, &job) && json_is_string(json_object_get(job, "name"))) {
				web_ssr_text(h, job, "name");
				html_textf(h, " (#%lld)", jobid);
			} else {
				html_textf(h, "#%lld", jobid);
			}
			json_decref(job);
			HTML(h, "</a>");
		} else {
			HTML(h, "<span class=\"muted\">—</span>");
		}
		HTML(h, "</td><td class=\"adm-classes\"");
		HTML_ATTR(h, "data-sort", classes ? classes : "");
		HTML(h, ">");
		/* WORKER_CLASS split at commas, empty parts left out */
		for (const char *c = classes ? classes : ""; *c; c += strcspn(c, ","), c += *c == ',') {
			size_t len = strcspn(c, ",");

			if (!len)
				continue;
			HTML(h, "<span class=\"adm-tag\">");
			html_textf(h, "%.*s", (int)len, c);
			HTML(h, "</span>");
		}
		HTML(h, "</td><td");
		HTML_ATTR(h, "data-sort", web_ssr_str(w, "t_seen"));
		HTML(h, ">");
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

/* The YAML section of a group's templates page: the text in a read-only
 * textarea (an administrator's session may edit it), its line numbers
 * beside it; web/page-templates.js adds the buttons, the marks of errors
 * and the posting. */
static void yaml_section(struct web_ssr *s, const json_t *g, const char *yaml)
{
	struct html *h = &s->main;
	const struct users_session *who = s->req->session;
	bool admin = who && who->user.role == AUTH_ADMIN;
	const json_t *tpl = json_object_get(g, "template");
	size_t lines = 1, i;

	for (i = 0; yaml[i]; i++)
		lines += yaml[i] == '\n';
	HTML(h, "<section class=\"jt-section\"><h2>YAML</h2><p class=\"muted\">");
	if ((json_is_string(tpl) && *json_string_value(tpl)) || json_is_true(tpl))
		html_text(h, "Edited as YAML (openQA schema JobTemplates-01).");
	else
		html_text(h, "Written from the templates above; saving it makes this group YAML-managed.");
	HTML(h, "</p><div class=\"jt-editor\"><div class=\"jt-gutter\" aria-hidden=\"true\">");
	for (i = 1; i <= lines; i++) {
		HTML(h, "<div class=\"jt-ln\"");
		HTML_ATTRF(h, "data-line", "%zu", i);
		HTML(h, ">");
		html_textf(h, "%zu", i);
		HTML(h, "</div>");
	}
	HTML(h, "</div><div class=\"jt-textwrap\"><div class=\"jt-marks\" aria-hidden=\"true\"></div>"
		"<textarea class=\"jt-text\" wrap=\"off\" spellcheck=\"false\" autocomplete=\"off\" autocapitalize=\"off\"");
	HTML_ATTRF(h, "aria-label", "YAML job templates of %s", web_ssr_str(g, "name"));
	if (!admin)
		HTML(h, " readonly");
	/* the parser drops one newline right after the tag: this one */
	HTML(h, ">\n");
	html_text(h, yaml);
	HTML(h, "</textarea></div></div>");
	if (!admin)
		HTML(h, "<p class=\"muted adm-hint\">Sign in as an administrator to change the templates.</p>");
	HTML(h, "<div class=\"jt-result\" role=\"status\" aria-live=\"polite\"></div></section>");
}

/* /admin/job_templates/<group>: built once from groups_list,
 * templates_list and templates_group_yaml. */
void web_ssr_templates(struct web_ssr *s)
{
	struct html *h = &s->main;
	long long group = (long long)s->req->id;
	char t1[32], t2[32], t3[32], t4[32], msg[256];
	json_t *groups = NULL, *all = NULL;
	const json_t *g, *list, *t;
	struct tpl *tpls = NULL;
	const char **scratch = NULL;
	char *yaml = NULL;
	size_t n = 0, i, j;

	if (groups_list(s->req->db, group, &groups, msg, sizeof(msg)) || !web_ssr_keep(s, groups)) {
		web_ssr_error(s, "no job group %lld", group);
		return;
	}
	if (templates_list(s->req->db, 0, &all, msg, sizeof(msg)) || !web_ssr_keep(s, all) ||
	    templates_group_yaml(s->req->db, group, &yaml)) {
		web_ssr_error(s, "cannot read the job templates");
		return;
	}
	list = all;
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
	yaml_section(s, g, yaml);
out:
	for (i = 0; i < n; i++) {
		free(tpls[i].product);
		free(tpls[i].label);
	}
	free(tpls);
	free(scratch);
	free(yaml);
	if (!tpls || !scratch)
		web_ssr_error(s, "out of memory");
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

/* The sign-in link of a page: /login?return_to=<this page> (web/session.js's
 * loginHref(): a same-site path, else "/"). */
static void login_link(struct web_ssr *s)
{
	const char *back = s->req->target ? s->req->target : "/";
	struct buf url;

	if (back[0] != '/' || back[1] == '/' || strchr(back, '\\'))
		back = "/";
	buf_init(&url, 1u << 16);
	if ((buf_puts(&url, "/login") || html_query_add(&url, "return_to", back)) && !s->main.err)
		s->main.err = ERR_NOMEM;
	HTML(&s->main, "<a");
	html_href(&s->main, url.data);
	HTML(&s->main, ">Sign in</a>");
	buf_release(&url);
}

/* A positive count parameter of the audit log (absent: 0); -1 when not one. */
static int audit_param(const char *v, long *out)
{
	*out = 0;
	if (!v)
		return 0;
	return str_to_long(v, out) || *out <= 0 ? -1 : 0;
}

/* /admin/auditlog: the page, built once (web/page-auditlog.js adds nothing). */
void web_ssr_auditlog(struct web_ssr *s)
{
	struct html *h = &s->main;
	const char *limit = web_ssr_param(s, "limit");
	const struct users_session *who = s->req->session;
	json_t *page = NULL, *ev;
	long nlimit, before, after;
	bool keep;
	size_t i, n;
	const json_t *e;

	/* the log is for administrators, as in openQA */
	if (!who || who->user.role != AUTH_ADMIN) {
		HTML(h, "<h1>Audit log</h1><p class=\"audit-denied\">");
		if (who)
			html_textf(h, "The audit log is for administrators; %s is %s %s.", who->user.name,
				   who->user.role == AUTH_OPERATOR ? "an" : "a", auth_level_name(who->user.role));
		else
			HTML(h, "Sign in as an administrator to read the audit log: ");
		if (!who)
			login_link(s);
		HTML(h, "</p>");
		return;
	}
	keep = limit && strlen(limit) <= 3 && strspn(limit, "0123456789") == strlen(limit);
	if (!keep)
		limit = AUDIT_PAGE;
	if (audit_param(limit, &nlimit) || audit_param(web_ssr_param(s, "before"), &before) ||
	    audit_param(web_ssr_param(s, "after"), &after)) {
		web_ssr_error(s, "limit, before and after are positive integers");
		return;
	}
	if (nlimit > AUDIT_LIST_MAX)
		nlimit = AUDIT_LIST_MAX;
	if (audit_list(s->req->db, before, after, nlimit, &page) || !web_ssr_keep(s, page)) {
		web_ssr_error(s, "cannot read the audit log");
		return;
	}
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

/* The orders of the needles' page: the key in its URL, the column's
 * label, the domain's order (in needles_sort's order). */
static const struct {
	const char *key, *label;
} needle_sorts[] = {
	[NEEDLES_BY_LAST_MATCH] = { "last_match", "Last match" },
	[NEEDLES_BY_LAST_SEEN] = { "last_seen", "Last seen" },
	[NEEDLES_BY_NAME] = { "name", "Needle" },
};

/* A column head of the needles that orders them: a submit button of the
 * search form (the order is the server's, in the URL). */
static void needle_head(struct html *h, enum needles_sort k, enum needles_sort cur)
{
	HTML(h, "<th scope=\"col\"");
	HTML_ATTR(h, "aria-sort", k != cur ? "none" : k == NEEDLES_BY_NAME ? "ascending" : "descending");
	HTML(h, "><button type=\"submit\" form=\"adm-needles-search\" name=\"sort\" class=\"adm-sort\"");
	HTML_ATTR(h, "value", needle_sorts[k].key);
	HTML(h, ">");
	html_text(h, needle_sorts[k].label);
	HTML(h, "</button></th>");
}

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

/* /admin/needles: built once from needles_list, a page of
 * NEEDLES_LIST_DEFAULT_LIMIT at a time (?after=, the "More" link);
 * ordering and searching are the search form's, so the page needs no
 * script; web/admin-needles.js shows the next page under this one. */
void web_ssr_admin_needles(struct web_ssr *s)
{
	struct html *h = &s->main;
	const char *sort = web_ssr_param(s, "sort"), *search = web_ssr_param(s, "search"),
		   *after = web_ssr_param(s, "after");
	enum needles_sort k;
	json_t *ans = NULL;
	const json_t *list, *n;
	struct buf more;
	size_t i, shown;
	char msg[256];
	int rc;

	for (k = NEEDLES_BY_LAST_MATCH; k <= NEEDLES_BY_NAME && (!sort || strcmp(sort, needle_sorts[k].key)); k++)
		;
	if (k > NEEDLES_BY_NAME)
		k = NEEDLES_BY_LAST_MATCH;
	rc = needles_list(s->req->db, k, after, search, NEEDLES_LIST_DEFAULT_LIMIT, &ans, msg, sizeof(msg));
	if (rc || !web_ssr_keep(s, ans) || !json_is_array(list = json_object_get(ans, "needles"))) {
		web_ssr_error(s, "%s", rc == ERR_INVALID ? msg : "cannot read the needles");
		return;
	}
	shown = json_array_size(list);
	web_ssr_admin_nav(h, "/admin/needles");
	HTML(h, "<h1>Needles</h1><form class=\"adm-tools\" role=\"search\" id=\"adm-needles-search\""
		" action=\"/admin/needles\"><input type=\"search\" name=\"search\" class=\"adm-filter\""
		" placeholder=\"Needle name contains…\" aria-label=\"Needle name contains\"");
	HTML_ATTR(h, "value", search ? search : "");
	/* the form's first submit button: Enter in the box sends the order along */
	HTML(h, "><button type=\"submit\" name=\"sort\"");
	HTML_ATTR(h, "value", needle_sorts[k].key);
	HTML(h, ">Search</button><span class=\"muted adm-hint\">");
	html_textf(h, "Sorted by %s.", k == NEEDLES_BY_NAME ? "needle" : k == NEEDLES_BY_LAST_SEEN ? "last seen" : "last match");
	HTML(h, "</span></form><div class=\"scroll\"><table class=\"adm-table adm-needles\"><thead><tr>");
	needle_head(h, NEEDLES_BY_NAME, k);
	HTML(h, "<th scope=\"col\">Distri</th>");
	needle_head(h, NEEDLES_BY_LAST_MATCH, k);
	needle_head(h, NEEDLES_BY_LAST_SEEN, k);
	HTML(h, "</tr></thead><tbody>");
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
	HTML(h, "</tbody></table></div>");
	if (json_is_string(json_object_get(ans, "next")) && *web_ssr_str(ans, "next")) {
		buf_init(&more, 1u << 16);
		if (buf_puts(&more, "/admin/needles") ||
		    html_query_add(&more, "sort", k == NEEDLES_BY_LAST_MATCH ? NULL : needle_sorts[k].key) ||
		    html_query_add(&more, "search", search) || html_query_add(&more, "after", web_ssr_str(ans, "next")))
			h->err = h->err ? h->err : ERR_NOMEM;
		HTML(h, "<a class=\"adm-more\"");
		html_href(h, more.data);
		HTML(h, ">More</a>");
		buf_release(&more);
	}
	HTML(h, "<p class=\"adm-message muted\" role=\"status\">");
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

/* /admin/assets: built once from assets_list_json (web/admin-assets.js
 * adds sorting, the filter and, for an administrator, delete buttons). */
void web_ssr_admin_assets(struct web_ssr *s)
{
	struct html *h = &s->main;
	json_t *ans = web_ssr_keep(s, assets_list_json(s->req->db, ASSETS_LIST_DEFAULT, 0));
	const json_t *list = json_object_get(ans, "assets"), *a, *id;
	struct asset_row *rows;
	size_t n = json_array_size(list), i, k;
	double total = 0;

	if (!ans || !json_is_array(list) || !(rows = calloc(n ? n : 1, sizeof(*rows)))) {
		web_ssr_error(s, "cannot read the assets");
		return;
	}
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
	HTML(h, "</h1>");
	admin_tools(s, "Filter assets", false);
	HTML(h, "<span class=\"adm-summary\">");
	human_size(h, total);
	HTML(h, " in all</span></div><p class=\"adm-message\" role=\"status\"></p>"
		"<div class=\"scroll\"><table class=\"adm-table adm-assets\"><thead><tr>");
	sort_head(h, "Type", NULL);
	HTML(h, "<th scope=\"col\" aria-sort=\"ascending\"><button type=\"button\" class=\"adm-sort\">Name</button></th>");
	sort_head(h, "Size", "num");
	sort_head(h, "Jobs using it", NULL);
	sort_head(h, "Last use", NULL);
	sort_head(h, "Registered", NULL);
	HTML(h, "</tr></thead><tbody>");
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
		HTML(h, "</a></td><td class=\"num\"");
		size = json_object_get(a, "size");
		HTML_ATTRF(h, "data-sort", "%.17g", !size || json_is_null(size) ? -1 : js_number(size));
		HTML(h, ">");
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
		/* jobsCell(a) */
		jobs = (long long)js_number(json_object_get(a, "jobs"));
		HTML(h, "</td><td");
		HTML_ATTRF(h, "data-sort", "%lld", jobs > 0 ? jobs : 0);
		HTML(h, ">");
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
		last_use = (long long)json_integer_value(json_object_get(a, "last_use_job_id"));
		HTML(h, "</td><td");
		HTML_ATTRF(h, "data-sort", "%lld", last_use);
		HTML(h, ">");
		if (last_use) {
			HTML(h, "<a");
			html_hreff(h, "/tests/%lld", last_use);
			HTML(h, ">");
			html_textf(h, "#%lld", last_use);
			HTML(h, "</a>");
		}
		/* when(isoTime(t_created)): "2026-12-04 10:34:24" as an ISO time */
		snprintf(t_created, sizeof(t_created), "%s", web_ssr_str(a, "t_created"));
		if (strchr(t_created, ' '))
			*strchr(t_created, ' ') = 'T';
		HTML(h, "</td><td");
		{
			time_t tc;

			if (web_ssr_time(t_created, &tc))
				HTML_ATTRF(h, "data-sort", "%lld", (long long)tc);
			else
				HTML(h, " data-sort=\"\"");
		}
		HTML(h, ">");
		when_cell(h, t_created);
		HTML(h, "</td></tr>");
	}
	if (!n)
		HTML(h, "<tr><td colspan=\"6\" class=\"muted\">No assets under factory/ yet.</td></tr>");
	HTML(h, "</tbody></table></div>");
	free(rows);
}
