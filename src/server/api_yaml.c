/* SPDX-License-Identifier: MIT */
/* api_yaml.c - openQA's job_templates_scheduling routes: a job group's
 * templates as YAML (the stored document, else one written from the
 * job_templates rows) and their replacement from a posted document, with
 * preview, expand and reference as JobTemplate.pm offers them. Parsing
 * and writing YAML is jt_yaml.c; this file maps names to rows in one
 * transaction and answers errors as {"error": [...]}. */
#define LOG_MODULE "api"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "server/api.h"
#include "server/db.h"
#include "server/jobs.h"
#include "server/jt_yaml.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/util.h"

#define JT_SCHEMA "JobTemplates-01.yaml"
#define JT_DIFF_MAX_LINES 2000

static bool want_json(const struct api_req *req)
{
	const char *f = params_get(&req->params, "format");

	if (f)
		return !strcmp(f, "json");
	return req->accept && strstr(req->accept, "application/json");
}

/* The group's templates from the tables, ordered as scenarios are listed. */
static int load_list(struct db *db, int64_t group, struct jt_list *l)
{
	struct db_stmt *st = NULL, *ss = NULL;
	int rc;

	rc = db_prepare(db, &st,
			"SELECT jt.id, p.distri, p.version, p.flavor, p.arch, m.name, ts.name, jt.name, jt.prio,"
			" jt.description FROM job_templates jt JOIN products p ON p.id = jt.product_id"
			" JOIN machines m ON m.id = jt.machine_id JOIN test_suites ts ON ts.id = jt.test_suite_id"
			" WHERE jt.group_id = ? ORDER BY p.arch, p.distri, p.version, p.flavor, ts.name, m.name, jt.id",
			"i", group);
	while (rc >= 0 && (rc = db_step(st)) == 1) {
		struct jt_entry e;
		int r;
		char product[512];
		json_t *settings = json_object();
		memset(&e, 0, sizeof(e));
		snprintf(product, sizeof(product), "%s-%s-%s-%s", db_col_text(st, 1), db_col_text(st, 2),
			 db_col_text(st, 3), db_col_text(st, 4));
		e.distri = (char *)db_col_text(st, 1);
		e.version = (char *)db_col_text(st, 2);
		e.flavor = (char *)db_col_text(st, 3);
		e.arch = (char *)db_col_text(st, 4);
		e.product = product;
		e.machine = (char *)db_col_text(st, 5);
		e.testsuite = (char *)db_col_text(st, 6);
		e.name = *db_col_text(st, 7) ? (char *)db_col_text(st, 7) : NULL;
		e.has_prio = !db_col_null(st, 8);
		e.prio = (long)db_col_int(st, 8);
		e.description = (char *)db_col_text(st, 9);
		e.settings = settings;
		r = db_prepare(db, &ss, "SELECT key, value FROM job_template_settings WHERE job_template_id = ? ORDER BY key",
			       "i", db_col_int(st, 0));
		while (r >= 0 && (r = db_step(ss)) == 1)
			json_object_set_new(settings, db_col_text(ss, 0), json_string(db_col_text(ss, 1)));
		db_finalize(ss);
		ss = NULL;
		if (r == 0)
			r = jt_list_add(l, &e);
		json_decref(settings);
		if (r < 0) {
			rc = r;
			break;
		}
	}
	db_finalize(st);
	return rc < 0 ? rc : 0;
}

/* The YAML of a group: as posted when stored, else written from the rows. New string or NULL. */
static char *group_yaml(struct db *db, int64_t group)
{
	struct db_stmt *st;
	struct jt_list l;
	struct buf b;
	char *stored = NULL;
	long prio = JOBS_DEFAULT_PRIORITY;

	if (db_prepare(db, &st, "SELECT template, default_priority FROM job_groups WHERE id = ?", "i", group))
		return NULL;
	if (db_step(st) == 1) {
		if (db_col_text(st, 0))
			stored = strdup(db_col_text(st, 0));
		prio = (long)db_col_int(st, 1);
	}
	db_finalize(st);
	if (stored)
		return stored;
	jt_list_init(&l);
	buf_init(&b, 4 * LIMIT_JT_YAML);
	if (load_list(db, group, &l) || jt_yaml_dump(&l, prio, true, &b)) {
		jt_list_release(&l);
		buf_release(&b);
		return NULL;
	}
	jt_list_release(&l);
	return buf_steal(&b);
}

static void answer_yaml(struct api_req *req, struct api_resp *out, char *yaml)
{
	if (want_json(req)) {
		/* A bare JSON string: server.c only dumps objects and arrays. */
		json_t *j = json_string(yaml);
		char *text = j ? json_dumps(j, JSON_ENCODE_ANY) : NULL;
		json_decref(j);
		free(yaml);
		if (!text) {
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

static int group_by_name(struct db *db, const char *name, int64_t *id)
{
	return db_query_int(db, id, "SELECT id FROM job_groups WHERE name = ?", "t", name);
}

static void schedules_one(struct api_req *req, struct api_resp *out)
{
	int64_t id = req->id, one;
	char *yaml;

	if (!id && (!req->name || group_by_name(req->db, req->name, &id))) {
		api_error(out, 404, "Job group '%s' does not exist", req->name ? req->name : "");
		return;
	}
	if (db_query_int(req->db, &one, "SELECT 1 FROM job_groups WHERE id = ?", "i", id)) {
		api_error(out, 404, "Job group %lld does not exist", (long long)id);
		return;
	}
	if (!(yaml = group_yaml(req->db, id))) {
		api_error(out, 500, "cannot write the templates of job group %lld", (long long)id);
		return;
	}
	answer_yaml(req, out, yaml);
}

/* All groups: {"name": "yaml", ...} as JSON, or a YAML mapping of the same. */
static void schedules_all(struct api_req *req, struct api_resp *out)
{
	struct db_stmt *st;
	json_t *all = json_object();
	struct buf b;
	const char *name;
	json_t *v;
	int rc;

	if (db_prepare(req->db, &st, "SELECT id, name FROM job_groups ORDER BY name", NULL)) {
		json_decref(all);
		api_error(out, 500, "cannot read job groups");
		return;
	}
	while ((rc = db_step(st)) == 1) {
		char *yaml = group_yaml(req->db, db_col_int(st, 0));
		if (!yaml) {
			rc = ERR_IO;
			break;
		}
		json_object_set_new(all, db_col_text(st, 1), json_string(yaml));
		free(yaml);
	}
	db_finalize(st);
	if (rc < 0) {
		json_decref(all);
		api_error(out, 500, "cannot write the job groups' templates");
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
		bool bad = buf_printf(&b, "'") != 0;
		/* name itself must stay untouched: json_object_foreach steps on from it. */
		for (c = name; !bad && *c; c++)
			bad = *c == '\'' ? buf_puts(&b, "''") != 0 : buf_append(&b, c, 1) != 0;
		bad = bad || buf_puts(&b, "': |-\n");
		while (!bad && *p) {
			size_t n = strcspn(p, "\n");
			bad = buf_puts(&b, "  ") || buf_append(&b, p, n) || buf_puts(&b, "\n");
			p += n + (p[n] == '\n');
		}
		if (bad) {
			buf_release(&b);
			json_decref(all);
			api_error(out, 500, "the job groups' templates are too large");
			return;
		}
	}
	json_decref(all);
	answer_yaml(req, out, b.data ? buf_steal(&b) : xstrdup("{}\n"));
}

static void schedules_get(struct api_req *req, struct api_resp *out)
{
	if (req->id || req->name)
		schedules_one(req, out);
	else
		schedules_all(req, out);
}

/* A line diff of old and new: "-" and "+" lines of what changed (LCS). */
static char *text_diff(const char *a, const char *b)
{
	const char *la[JT_DIFF_MAX_LINES], *lb[JT_DIFF_MAX_LINES];
	size_t na = 0, nb = 0, i, j, *t = NULL;
	struct buf out;
	const char *p;

	for (p = a; *p && na < JT_DIFF_MAX_LINES; p += strcspn(p, "\n"), p += *p == '\n')
		la[na++] = p;
	for (p = b; *p && nb < JT_DIFF_MAX_LINES; p += strcspn(p, "\n"), p += *p == '\n')
		lb[nb++] = p;
	if (na >= JT_DIFF_MAX_LINES || nb >= JT_DIFF_MAX_LINES)
		return xstrdup("(the templates differ; too long to compare line by line)");
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
	while (i < na || j < nb) {
		if (i < na && j < nb && SAME(la[i], lb[j])) {
			i++;
			j++;
		} else if (j < nb && (i == na || T(i, j + 1) >= T(i + 1, j))) {
			(void)buf_printf(&out, "+%.*s\n", (int)LEN(lb[j]), lb[j]);
			j++;
		} else {
			(void)buf_printf(&out, "-%.*s\n", (int)LEN(la[i]), la[i]);
			i++;
		}
	}
#undef T
#undef SAME
#undef LEN
	free(t);
	if (out.len && out.data[out.len - 1] == '\n')
		out.data[--out.len] = '\0';
	return out.data ? buf_steal(&out) : xstrdup("");
}

struct update {
	struct api_req *req;
	int64_t group;
	json_t *ids;
	json_t *errors;
};

static void user_error(struct update *u, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void user_error(struct update *u, int line, const char *fmt, ...)
{
	char msg[768], full[800];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (line > 0)
		snprintf(full, sizeof(full), "line %d: %s", line, msg);
	else
		snprintf(full, sizeof(full), "%s", msg);
	json_array_append_new(u->errors, json_string(full));
}

/* Create or update the row of one entry; 0, 1 after a user error, or a db error. */
static int apply_entry(struct update *u, const struct jt_entry *e)
{
	struct db *db = u->req->db;
	int64_t machine, product, suite, jt = 0, owner = 0;
	struct db_stmt *st;
	char now[DB_TIME_LEN];
	const char *key;
	json_t *v;
	int rc;

	if (db_query_int(db, &machine, "SELECT id FROM machines WHERE name = ?", "t", e->machine)) {
		user_error(u, e->line, "Machine '%s' is invalid", e->machine);
		return 1;
	}
	if (db_query_int(db, &product, "SELECT id FROM products WHERE arch = ? AND distri = ? AND flavor = ? AND version = ?",
			 "tttt", e->arch, e->distri, e->flavor, e->version)) {
		user_error(u, e->line, "Product '%s' not found in database (arch: '%s', distri: '%s', flavor: '%s',"
			   " version: '%s')", e->product, e->arch, e->distri, e->flavor, e->version);
		return 1;
	}
	db_now(now);
	if (e->testsuite) {
		if (db_query_int(db, &suite, "SELECT id FROM test_suites WHERE name = ?", "t", e->testsuite)) {
			user_error(u, e->line, "Testsuite '%s' is invalid", e->testsuite);
			return 1;
		}
	} else if (db_query_int(db, &suite, "SELECT id FROM test_suites WHERE name = '-'", NULL)) {
		/* openQA's stand-in for "testsuite: null": a suite that sets nothing. */
		if ((rc = db_exec(db, "INSERT INTO test_suites (name, description) VALUES ('-', ?)", "t",
				  "empty test suite for job templates without one")) < 0)
			return rc;
		suite = db_last_id(db);
	}
	if ((rc = db_prepare(db, &st, "SELECT id, group_id FROM job_templates WHERE product_id = ? AND machine_id = ?"
			     " AND test_suite_id = ? AND name = ?", "iiit", product, machine, suite,
			     e->name ? e->name : "")))
		return rc;
	if ((rc = db_step(st)) == 1) {
		jt = db_col_int(st, 0);
		owner = db_col_int(st, 1);
	}
	db_finalize(st);
	if (rc < 0)
		return rc;
	if (jt && owner != u->group) {
		char gname[256] = "?";
		if (!db_prepare(db, &st, "SELECT name FROM job_groups WHERE id = ?", "i", owner)) {
			if (db_step(st) == 1)
				snprintf(gname, sizeof(gname), "%s", db_col_text(st, 0));
			db_finalize(st);
		}
		user_error(u, e->line, "Job template name '%s' with %s and %s is already used in job group '%s'",
			   e->name ? e->name : e->testsuite ? e->testsuite : "-", e->product, e->machine, gname);
		return 1;
	}
	if (jt) {
		rc = e->has_prio ? db_exec(db, "UPDATE job_templates SET prio = ?, description = ? WHERE id = ?", "iti",
					   (int64_t)e->prio, e->description, jt)
				 : db_exec(db, "UPDATE job_templates SET description = ? WHERE id = ?", "ti",
					   e->description, jt);
	} else {
		rc = db_exec(db, "INSERT INTO job_templates (product_id, machine_id, test_suite_id, group_id, prio, name,"
			     " description, t_created) VALUES (?, ?, ?, ?, ?, ?, ?, ?)", "iiii" "ittt", product, machine,
			     suite, u->group, (int64_t)e->prio, e->name ? e->name : "", e->description, now);
		jt = db_last_id(db);
		if (rc >= 0 && !e->has_prio)
			rc = db_exec(db, "UPDATE job_templates SET prio = NULL WHERE id = ?", "i", jt);
	}
	if (rc < 0)
		return rc;
	if ((rc = db_exec(db, "DELETE FROM job_template_settings WHERE job_template_id = ?", "i", jt)) < 0)
		return rc;
	json_object_foreach(e->settings, key, v)
		if ((rc = db_exec(db, "INSERT INTO job_template_settings (job_template_id, key, value) VALUES (?, ?, ?)",
				  "itt", jt, key, json_string_value(v))) < 0)
			return rc;
	json_array_append_new(u->ids, json_integer(jt));
	return 0;
}

static bool in_ids(const json_t *ids, int64_t id)
{
	size_t i;
	json_t *v;

	json_array_foreach(ids, i, v)
		if (json_integer_value(v) == id)
			return true;
	return false;
}

/* Delete the group's rows the document no longer names. */
static int drop_untouched(struct update *u)
{
	struct db_stmt *st;
	json_t *gone = json_array();
	size_t i;
	json_t *v;
	int rc = db_prepare(u->req->db, &st, "SELECT id FROM job_templates WHERE group_id = ?", "i", u->group);

	while (rc >= 0 && (rc = db_step(st)) == 1)
		if (!in_ids(u->ids, db_col_int(st, 0)))
			json_array_append_new(gone, json_integer(db_col_int(st, 0)));
	db_finalize(st);
	json_array_foreach(gone, i, v)
		if (rc >= 0)
			rc = db_exec(u->req->db, "DELETE FROM job_templates WHERE id = ?", "i", (int64_t)json_integer_value(v));
	json_decref(gone);
	return rc < 0 ? rc : 0;
}

static void schedules_post(struct api_req *req, struct api_resp *out)
{
	const char *tmpl = params_get(&req->params, "template"), *schema = params_get(&req->params, "schema");
	const char *preview_s = params_get(&req->params, "preview"), *expand_s = params_get(&req->params, "expand");
	const char *reference = params_get(&req->params, "reference"), *name = params_get(&req->params, "name");
	struct update u = { req, req->id, json_array(), json_array() };
	json_t *resp = json_object();
	struct jt_list l;
	char err[1024], *current = NULL;
	long preview = 0, expand = 0;
	size_t i;
	int rc = 0, status = 400;
	bool in_tx = false;

	jt_list_init(&l);
	if (req->json) {
		user_error(&u, 0, "send template=... (and schema=" JT_SCHEMA ") as form parameters");
		goto out;
	}
	if (!tmpl)
		user_error(&u, 0, "Erroneous parameters (template missing)");
	if (!req->id && !name)
		user_error(&u, 0, "Erroneous parameters (name missing: give a job group id in the path or name=)");
	if (schema && (strchr(schema, '/') || strchr(schema, '.') != strrchr(schema, '.') || !str_ends_with(schema, ".yaml")))
		user_error(&u, 0, "Erroneous parameters (schema invalid: '%s')", schema);
	else if (schema && strcmp(schema, JT_SCHEMA))
		user_error(&u, 0, "Erroneous parameters (schema '%s' unknown: this server knows " JT_SCHEMA ")", schema);
	if ((preview_s && (str_to_long(preview_s, &preview) || preview > 1)) ||
	    (expand_s && (str_to_long(expand_s, &expand) || expand > 1)))
		user_error(&u, 0, "Erroneous parameters (preview and expand must be 0 or 1)");
	if (json_array_size(u.errors))
		goto out;
	if ((rc = jt_yaml_parse(tmpl, strlen(tmpl), &l, err, sizeof(err)))) {
		user_error(&u, 0, "%s", rc == ERR_NOMEM ? "out of memory" : err);
		goto out;
	}
	if (!u.group && group_by_name(req->db, name, &u.group)) {
		user_error(&u, 0, "Job group %s not found", name);
		goto out;
	}
	{
		int64_t one;
		if (db_query_int(req->db, &one, "SELECT 1 FROM job_groups WHERE id = ?", "i", u.group)) {
			user_error(&u, 0, "Job group %lld not found", (long long)u.group);
			goto out;
		}
	}
	json_object_set_new(resp, "job_group_id", json_integer(u.group));
	json_object_set_new(resp, "id", json_integer(u.group));
	current = group_yaml(req->db, u.group);
	if (reference) {
		size_t a = current ? strlen(current) : 0, b = strlen(reference);
		json_object_set_new(resp, "template", current ? json_string(current) : json_null());
		if (a && current[a - 1] == '\n')
			a--;
		if (b && reference[b - 1] == '\n')
			b--;
		if (!current || a != b || strncmp(current, reference, a)) {
			user_error(&u, 0, "Template was modified");
			goto out;
		}
	}
	if (expand) {
		struct buf b;
		buf_init(&b, 4 * LIMIT_JT_YAML);
		if (!jt_yaml_dump(&l, JOBS_DEFAULT_PRIORITY, false, &b) && b.data)
			json_object_set_new(resp, "result", json_string(b.data));
		buf_release(&b);
	}
	if (db_begin(req->db)) {
		status = 500;
		user_error(&u, 0, "Internal server error occurred");
		goto out;
	}
	in_tx = true;
	for (i = 0; i < l.n && rc == 0; i++)
		rc = apply_entry(&u, &l.v[i]);
	if (rc == 0)
		rc = drop_untouched(&u);
	if (rc < 0) {
		status = 500;
		user_error(&u, 0, "Internal server error occurred: %s", db_errmsg(req->db));
	}
	if (rc)
		goto out;
	json_object_set(resp, "ids", u.ids);
	{
		int64_t stored;
		bool has_stored = !db_query_int(req->db, &stored, "SELECT 1 FROM job_groups WHERE id = ? AND template IS"
						" NOT NULL", "i", u.group);
		if (has_stored && current && strcmp(current, tmpl)) {
			char *d = text_diff(current, tmpl);
			if (d)
				json_object_set_new(resp, "changes", json_string(d));
			free(d);
		}
	}
	if (preview) {
		json_object_set_new(resp, "preview", json_integer(1));
		db_rollback(req->db);
		in_tx = false;
	} else if (db_exec(req->db, "UPDATE job_groups SET template = ? WHERE id = ?", "ti", tmpl, u.group) < 0 ||
		   db_commit(req->db)) {
		status = 500;
		user_error(&u, 0, "Internal server error occurred: %s", db_errmsg(req->db));
		goto out;
	} else {
		in_tx = false;
	}
	api_json(out, resp);
	resp = NULL;
out:
	if (in_tx)
		db_rollback(req->db);
	if (resp) {
		json_object_set(resp, "error", u.errors);
		json_decref(out->json);
		out->json = resp;
		out->status = status;
	}
	json_decref(u.ids);
	json_decref(u.errors);
	jt_list_release(&l);
	free(current);
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
