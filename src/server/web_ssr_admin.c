/* SPDX-License-Identifier: MIT */
/* web_ssr_admin.c - first views of the admin pages (web_ssr.h): the rows
 * of /admin/machines, /admin/products and /admin/test_suites as
 * web/admin-tables.js shows them, under web/admin-common.js's navigation.
 * The controls (sorting, filter, edit) come with the script. */
#include <string.h>
#include "server/web_ssr.h"
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
