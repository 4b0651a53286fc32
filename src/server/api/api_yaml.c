/* SPDX-License-Identifier: MIT */
/* api_yaml.c - openQA's job_templates_scheduling routes: a job group's
 * templates as YAML (the stored document, else one written from the
 * job_templates rows) and their replacement from a posted document, with
 * preview, expand and reference as JobTemplate.pm offers them. Parsing
 * and writing YAML is jt_yaml.c, the rows templates.c and groups.c; this
 * file checks the request and answers errors as {"error": [...]}. */
#define LOG_MODULE "api"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "server/http/api.h"
#include "server/store/jbuild.h"
#include "server/store/groups.h"
#include "server/store/jobs.h"
#include "server/store/jt_yaml.h"
#include "server/store/templates.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/str.h"
#include "util/banned.h" /* last: after every system header */

#define JT_SCHEMA "JobTemplates-01.yaml"
#define JT_DIFF_MAX_LINES 2000

static bool want_json(const struct api_req *req)
{
	const char *f = params_get(&req->params, "format");

	if (f)
		return !strcmp(f, "json");
	return req->accept && strstr(req->accept, "application/json");
}

/* yaml (taken; NULL: it could not be made for want of memory, 503). */
static void answer_yaml(struct api_req *req, struct api_resp *out, char *yaml)
{
	if (!yaml) {
		api_nomem(out);
		return;
	}
	if (want_json(req)) {
		/* A bare JSON string: server.c only dumps objects and arrays. */
		json_t *j = json_string(yaml);
		char *text = j ? json_dumps(j, JSON_ENCODE_ANY) : NULL;
		bool utf8 = j || str_utf8_valid(yaml, strlen(yaml), NULL);
		json_decref(j);
		free(yaml);
		if (!text) {
			if (utf8)
				api_nomem(out);
			else
				api_error(out, 500, "the template is not valid UTF-8");
			return;
		}
		out->status = 200;
		out->text = text;
		out->ctype = "application/json";
		return;
	}
	out->status = 200;
	out->text = yaml;
	out->ctype = "text/yaml;charset=UTF-8";
}

static void schedules_one(struct api_req *req, struct api_resp *out)
{
	int64_t id = req->id;
	char *yaml;
	int rc;

	if (!id && (!req->name || groups_by_name(req->db, req->name, &id))) {
		api_error(out, 404, "Job group '%s' does not exist", req->name ? req->name : "");
		return;
	}
	if (groups_exists(req->db, id)) {
		api_error(out, 404, "Job group %lld does not exist", (long long)id);
		return;
	}
	if ((rc = templates_group_yaml(req->db, id, &yaml))) {
		if (rc == ERR_NOMEM)
			api_nomem(out);
		else
			api_error(out, 500, "cannot write the templates of job group %lld", (long long)id);
		return;
	}
	answer_yaml(req, out, yaml);
}

/* All groups: {"name": "yaml", ...} as JSON, or a YAML mapping of the same. */
static void schedules_all(struct api_req *req, struct api_resp *out)
{
	json_t *all, *v;
	struct buf b;
	const char *name;
	char msg[256];

	int rc = templates_all_yaml(req->db, &all, msg, sizeof(msg));

	if (rc) {
		api_error_code(out, rc, msg);
		return;
	}
	if (want_json(req)) {
		api_json(out, all);
		return;
	}
	/* Each group's document as a literal block under its name. */
	buf_init(&b, 64u << 20);
	json_object_foreach(all, name, v) {
		const char *p = json_string_value(v), *c;
		int brc = buf_printf(&b, "'");
		/* name itself must stay untouched: json_object_foreach steps on from it. */
		for (c = name; !brc && *c; c++)
			brc = *c == '\'' ? buf_puts(&b, "''") : buf_append(&b, c, 1);
		if (!brc)
			brc = buf_puts(&b, "': |-\n");
		while (!brc && *p) {
			size_t n = strcspn(p, "\n");
			if (!(brc = buf_puts(&b, "  ")) && !(brc = buf_append(&b, p, n)))
				brc = buf_puts(&b, "\n");
			p += n + (p[n] == '\n');
		}
		if (brc) {
			buf_release(&b);
			json_decref(all);
			if (brc == ERR_NOMEM)
				api_nomem(out);
			else
				api_error(out, 500, "the job groups' templates are too large");
			return;
		}
	}
	json_decref(all);
	answer_yaml(req, out, b.data ? buf_steal(&b) : str_dup("{}\n"));
}

static void schedules_get(struct api_req *req, struct api_resp *out)
{
	if (req->id || req->name)
		schedules_one(req, out);
	else
		schedules_all(req, out);
}

/* A line diff of old and new: "-" and "+" lines of what changed (LCS).
 * New string, or NULL when memory ran out (a diff with lines missing
 * would tell the wrong change). */
static char *text_diff(const char *a, const char *b)
{
	const char *la[JT_DIFF_MAX_LINES], *lb[JT_DIFF_MAX_LINES];
	size_t na = 0, nb = 0, i, j, *t = NULL;
	struct buf out;
	const char *p;
	int rc = 0;

	for (p = a; *p && na < JT_DIFF_MAX_LINES; p += strcspn(p, "\n"), p += *p == '\n')
		la[na++] = p;
	for (p = b; *p && nb < JT_DIFF_MAX_LINES; p += strcspn(p, "\n"), p += *p == '\n')
		lb[nb++] = p;
	if (na >= JT_DIFF_MAX_LINES || nb >= JT_DIFF_MAX_LINES)
		return str_dup("(the templates differ; too long to compare line by line)");
	t = calloc((na + 1) * (nb + 1), sizeof(*t));
	if (!t)
		return NULL;
#define LEN(x) strcspn(x, "\n")
#define SAME(x, y) (LEN(x) == LEN(y) && !strncmp(x, y, LEN(x)))
#define T(i, j) t[(i) * (nb + 1) + (j)]
	for (i = na; i-- > 0;)
		for (j = nb; j-- > 0;)
			T(i, j) = SAME(la[i], lb[j]) ? T(i + 1, j + 1) + 1 : T(i + 1, j) > T(i, j + 1) ? T(i + 1, j) : T(i, j + 1);
	buf_init(&out, 8 * LIMIT_JT_YAML);
	i = j = 0;
	while (!rc && (i < na || j < nb)) {
		if (i < na && j < nb && SAME(la[i], lb[j])) {
			i++;
			j++;
		} else if (j < nb && (i == na || T(i, j + 1) >= T(i + 1, j))) {
			rc = buf_printf(&out, "+%.*s\n", (int)LEN(lb[j]), lb[j]);
			j++;
		} else {
			rc = buf_printf(&out, "-%.*s\n", (int)LEN(la[i]), la[i]);
			i++;
		}
	}
#undef T
#undef SAME
#undef LEN
	free(t);
	if (rc == ERR_TOO_BIG) {
		buf_release(&out);
		return str_dup("(the templates differ; too long to compare line by line)");
	}
	if (rc) {
		buf_release(&out);
		return NULL;
	}
	if (out.len && out.data[out.len - 1] == '\n')
		out.data[--out.len] = '\0';
	return out.data ? buf_steal(&out) : str_dup("");
}

/* Append one error text to errors. */
static void add_error(struct jbuild *ab, json_t *errors, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void add_error(struct jbuild *ab, json_t *errors, const char *fmt, ...)
{
	char msg[800];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	jbuild_append(ab, errors, json_string(msg));
}

static void schedules_post(struct api_req *req, struct api_resp *out)
{
	const char *tmpl = params_get(&req->params, "template"), *schema = params_get(&req->params, "schema");
	const char *preview_s = params_get(&req->params, "preview"), *expand_s = params_get(&req->params, "expand");
	const char *reference = params_get(&req->params, "reference"), *name = params_get(&req->params, "name");
	struct jbuild ab = JBUILD_INIT;
	json_t *resp = jbuild_take(&ab, json_object(), "answer"), *ids = jbuild_take(&ab, json_array(), "ids");
	json_t *errors = jbuild_take(&ab, json_array(), "error");
	struct jt_list l;
	char err[1024], *current = NULL, *diff = NULL;
	long preview = 0, expand = 0;
	int64_t group = req->id;
	int rc = 0, status = 400;
	bool applied, had_yaml, answered = false;

	jt_list_init(&l);
	if (req->json) {
		add_error(&ab, errors, "send template=... (and schema=" JT_SCHEMA ") as form parameters");
		goto out;
	}
	if (!tmpl)
		add_error(&ab, errors, "Erroneous parameters (template missing)");
	if (!req->id && !name)
		add_error(&ab, errors, "Erroneous parameters (name missing: give a job group id in the path or name=)");
	if (schema && (strchr(schema, '/') || strchr(schema, '.') != strrchr(schema, '.') || !str_ends_with(schema, ".yaml")))
		add_error(&ab, errors, "Erroneous parameters (schema invalid: '%s')", schema);
	else if (schema && strcmp(schema, JT_SCHEMA))
		add_error(&ab, errors, "Erroneous parameters (schema '%s' unknown: this server knows " JT_SCHEMA ")", schema);
	if ((preview_s && (str_to_long(preview_s, &preview) || preview > 1)) ||
	    (expand_s && (str_to_long(expand_s, &expand) || expand > 1)))
		add_error(&ab, errors, "Erroneous parameters (preview and expand must be 0 or 1)");
	if (json_array_size(errors))
		goto out;
	if ((rc = jt_yaml_parse(tmpl, strlen(tmpl), &l, err, sizeof(err)))) {
		if (rc == ERR_NOMEM)
			jbuild_take(&ab, NULL, "template"); /* 503, not a 400 for a document that may be right */
		else
			add_error(&ab, errors, "%s", err);
		goto out;
	}
	if (!group && groups_by_name(req->db, name, &group)) {
		add_error(&ab, errors, "Job group %s not found", name);
		goto out;
	}
	if (groups_exists(req->db, group)) {
		add_error(&ab, errors, "Job group %lld not found", (long long)group);
		goto out;
	}
	jbuild_set(&ab, resp, "job_group_id", json_integer(group));
	jbuild_set(&ab, resp, "id", json_integer(group));
	if (templates_group_yaml(req->db, group, &current) == ERR_NOMEM) {
		jbuild_take(&ab, NULL, "template"); /* "Template was modified" would be a guess */
		goto out;
	}
	if (reference) {
		size_t a = current ? strlen(current) : 0, b = strlen(reference);
		jbuild_set(&ab, resp, "template", current ? json_string(current) : json_null());
		if (a && current[a - 1] == '\n')
			a--;
		if (b && reference[b - 1] == '\n')
			b--;
		if (!current || a != b || strncmp(current, reference, a)) {
			add_error(&ab, errors, "Template was modified");
			goto out;
		}
	}
	if (expand) {
		struct buf b;
		buf_init(&b, 4 * LIMIT_JT_YAML);
		int drc = jt_yaml_dump(&l, JOBS_DEFAULT_PRIORITY, false, &b);
		if (!drc && b.data)
			jbuild_set(&ab, resp, "result", json_string(b.data));
		else if (drc == ERR_NOMEM || (!drc && !b.data))
			jbuild_take(&ab, NULL, "result"); /* expand=1 answered without it */
		buf_release(&b);
	}
	/* The whole answer is made before anything is stored (the diff and
	 * every member it may carry; what does not apply is taken out after,
	 * which allocates nothing): when memory does not allow it, the answer
	 * is 503 and the templates stay as they were. */
	if (current && strcmp(current, tmpl) && !(diff = text_diff(current, tmpl)))
		jbuild_take(&ab, NULL, "changes");
	else if (diff)
		jbuild_set(&ab, resp, "changes", json_string(diff));
	jbuild_set_ref(&ab, resp, "ids", ids);
	if (preview)
		jbuild_set(&ab, resp, "preview", json_integer(1));
	if (jbuild_failed(&ab))
		goto out;
	rc = templates_replace(req->db, group, &l, tmpl, preview, ids, errors, &applied, &had_yaml);
	if (rc == ERR_NOMEM)
		jbuild_take(&ab, NULL, "templates"); /* nothing changed: 503 */
	if (!applied || !had_yaml)
		json_object_del(resp, "changes");
	if (!applied)
		json_object_del(resp, "ids");
	if (rc) {
		json_object_del(resp, "preview");
		status = rc < 0 ? 500 : 400;
		goto out;
	}
	api_json_built(&ab, out, resp);
	resp = NULL;
	answered = true;
out:
	if (answered) {
		/* api_json_built answered */
	} else if (!resp || jbuild_failed(&ab)) { /* the answer itself could not be made */
		json_decref(resp);
		api_nomem(out);
	} else if (json_object_set(resp, "error", errors)) {
		json_decref(resp);
		api_nomem(out); /* an error answer without its errors */
	} else {
		json_decref(out->json);
		out->json = resp;
		out->status = status;
	}
	json_decref(ids);
	json_decref(errors);
	jt_list_release(&l);
	free(current);
	free(diff);
}

const struct api_route api_yaml_routes[] = {
	{ "GET", "/api/v1/job_templates_scheduling", AUTH_PUBLIC, schedules_get, NULL },
	{ "GET", "/api/v1/job_templates_scheduling/#", AUTH_PUBLIC, schedules_get, NULL },
	{ "GET", "/api/v1/job_templates_scheduling/*", AUTH_PUBLIC, schedules_get, NULL },
	{ "POST", "/api/v1/job_templates_scheduling", AUTH_ADMIN, schedules_post, NULL },
	{ "POST", "/api/v1/job_templates_scheduling/#", AUTH_ADMIN, schedules_post, NULL },
	{ "GET", "/api/v1/experimental/job_templates_scheduling", AUTH_PUBLIC, schedules_get, NULL },
	{ "GET", "/api/v1/experimental/job_templates_scheduling/#", AUTH_PUBLIC, schedules_get, NULL },
	{ "GET", "/api/v1/experimental/job_templates_scheduling/*", AUTH_PUBLIC, schedules_get, NULL },
	{ "POST", "/api/v1/experimental/job_templates_scheduling/#", AUTH_ADMIN, schedules_post, NULL },
	{ NULL, NULL, AUTH_PUBLIC, NULL, NULL },
};
