/* SPDX-License-Identifier: MIT */
/* api_tables.c - the admin tables as openQA's Table.pm serves them
 * (machines, products, test_suites with their settings), job groups and job
 * templates. One descriptor per table instead of copied handlers. Reads are
 * public, writes need an admin key. */
#define LOG_MODULE "api"
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "server/api.h"
#include "server/db.h"
#include "server/jobs.h"
#include "util/err.h"
#include "util/util.h"

#define TABLE_MAX_COLS 5

struct table {
	const char *json_key;   /* "Machines" */
	const char *kind;       /* table_settings.kind */
	const char *cols[TABLE_MAX_COLS + 1];
	unsigned required;      /* bit i: cols[i] required */
	const char *sql_select; /* id, cols...; one '?' for "id or all" twice */
	const char *sql_insert;
	const char *sql_update; /* cols..., id */
	const char *sql_delete;
};

static const struct table t_machines = {
	"Machines", "machine", { "name", "backend", "description", NULL }, 3,
	"SELECT id, name, backend, description FROM machines WHERE (? = 0 OR id = ?) ORDER BY id",
	"INSERT INTO machines (name, backend, description) VALUES (?, ?, ?)",
	"UPDATE machines SET name = ?, backend = ?, description = ? WHERE id = ?",
	"DELETE FROM machines WHERE id = ?",
};
static const struct table t_products = {
	"Products", "product", { "distri", "version", "flavor", "arch", "description", NULL }, 15,
	"SELECT id, distri, version, flavor, arch, description FROM products WHERE (? = 0 OR id = ?) ORDER BY id",
	"INSERT INTO products (distri, version, flavor, arch, description) VALUES (?, ?, ?, ?, ?)",
	"UPDATE products SET distri = ?, version = ?, flavor = ?, arch = ?, description = ? WHERE id = ?",
	"DELETE FROM products WHERE id = ?",
};
static const struct table t_test_suites = {
	"TestSuites", "test_suite", { "name", "description", NULL }, 1,
	"SELECT id, name, description FROM test_suites WHERE (? = 0 OR id = ?) ORDER BY id",
	"INSERT INTO test_suites (name, description) VALUES (?, ?)",
	"UPDATE test_suites SET name = ?, description = ? WHERE id = ?",
	"DELETE FROM test_suites WHERE id = ?",
};

static size_t ncols(const struct table *t)
{
	size_t n = 0;
	while (t->cols[n])
		n++;
	return n;
}

static json_t *settings_list(struct db *db, const char *kind, int64_t id)
{
	json_t *a = json_array();
	struct db_stmt *st;

	if (db_prepare(db, &st, "SELECT key, value FROM table_settings WHERE kind = ? AND owner_id = ? ORDER BY key",
		       "ti", kind, id))
		return a;
	while (db_step(st) == 1)
		json_array_append_new(a, json_pack("{s:s,s:s}", "key", db_col_text(st, 0), "value", db_col_text(st, 1)));
	db_finalize(st);
	return a;
}

static void table_list(struct api_req *req, struct api_resp *out)
{
	const struct table *t = req->arg;
	size_t n = ncols(t), i;
	struct db_stmt *st;
	json_t *rows;
	int rc;

	if (db_prepare(req->db, &st, t->sql_select, "ii", req->id, req->id)) {
		api_error(out, 500, "cannot read %s", t->json_key);
		return;
	}
	rows = json_array();
	while ((rc = db_step(st)) == 1) {
		json_t *row = json_object();
		bool keep = true;
		json_object_set_new(row, "id", json_integer(db_col_int(st, 0)));
		for (i = 0; i < n; i++) {
			const char *v = db_col_text(st, (int)i + 1);
			const char *want = params_get(&req->params, t->cols[i]);
			if (want && (!v || strcmp(want, v)))
				keep = false;
			if (v && *v) /* falsy columns are omitted, as openQA */
				json_object_set_new(row, t->cols[i], json_string(v));
		}
		json_object_set_new(row, "settings", settings_list(req->db, t->kind, db_col_int(st, 0)));
		if (keep)
			json_array_append_new(rows, row);
		else
			json_decref(row);
	}
	db_finalize(st);
	if (rc < 0) {
		json_decref(rows);
		api_error(out, 500, "cannot read %s", t->json_key);
		return;
	}
	if (req->id && json_array_size(rows) == 0) {
		json_decref(rows);
		api_error(out, 404, "%s %lld does not exist", t->json_key, (long long)req->id);
		return;
	}
	api_json(out, json_pack("{s:o}", t->json_key, rows));
}

static bool setting_key_ok(const char *k)
{
	if (!*k)
		return false;
	for (; *k; k++)
		if (!isalnum((unsigned char)*k) && !strchr("[]_+", *k))
			return false;
	return true;
}

/* Gather columns (vals) and settings from a JSON body or form parameters;
 * nonzero after filling out on bad input. */
static int table_input(struct api_req *req, const struct table *t, const char **vals, json_t *settings,
		       struct api_resp *out)
{
	size_t n = ncols(t), i;

	if (req->json) {
		const char *key;
		json_t *v;
		if (!json_is_object(req->json)) {
			api_error(out, 400, "the JSON body must be an object");
			return -1;
		}
		json_object_foreach(req->json, key, v) {
			if (!strcmp(key, "settings")) {
				if (json_is_object(v)) {
					const char *sk;
					json_t *sv;
					json_object_foreach(v, sk, sv) {
						if (!json_is_string(sv)) {
							api_error(out, 400, "setting '%s' must be a string", sk);
							return -1;
						}
						json_object_set(settings, sk, sv);
					}
				} else if (json_is_array(v)) {
					size_t k;
					json_t *e;
					json_array_foreach(v, k, e) {
						const char *sk = json_string_value(json_object_get(e, "key"));
						json_t *sv = json_object_get(e, "value");
						if (!sk || !json_is_string(sv)) {
							api_error(out, 400, "settings[%zu] must be {\"key\": ..., \"value\": \"...\"}", k);
							return -1;
						}
						json_object_set(settings, sk, sv);
					}
				} else {
					api_error(out, 400, "'settings' must be an object of strings");
					return -1;
				}
				continue;
			}
			for (i = 0; i < n && strcmp(t->cols[i], key); i++)
				;
			if (i == n || !strcmp(key, "id")) {
				api_error(out, 400, "unknown field '%s' for %s", key, t->json_key);
				return -1;
			}
			if (!json_is_string(v)) {
				api_error(out, 400, "field '%s' must be a string", key);
				return -1;
			}
			vals[i] = json_string_value(v);
		}
	} else {
		for (i = 0; i < req->params.n; i++) {
			const char *k = req->params.v[i].key;
			size_t c;
			if (str_starts_with(k, "settings[") && str_ends_with(k, "]") && strlen(k) > 10) {
				char *sk = strndup(k + 9, strlen(k) - 10);
				if (sk)
					json_object_set_new(settings, sk, json_string(req->params.v[i].value));
				free(sk);
				continue;
			}
			for (c = 0; c < n && strcmp(t->cols[c], k); c++)
				;
			if (c == n) {
				api_error(out, 400, "unknown parameter '%s' for %s", k, t->json_key);
				return -1;
			}
			vals[c] = req->params.v[i].value;
		}
	}
	{
		const char *key;
		json_t *v;
		json_object_foreach(settings, key, v) {
			if (!setting_key_ok(key)) {
				api_error(out, 400, "invalid setting key '%s' (allowed: A-Z a-z 0-9 _ + [ ])", key);
				return -1;
			}
		}
	}
	for (i = 0; i < n; i++)
		if ((t->required & (1u << i)) && (!vals[i] || !*vals[i])) {
			api_error(out, 400, "Missing parameter: %s", t->cols[i]);
			return -1;
		}
	return 0;
}

static int write_settings(struct db *db, const char *kind, int64_t id, json_t *settings)
{
	const char *key;
	json_t *v;
	int rc = db_exec(db, "DELETE FROM table_settings WHERE kind = ? AND owner_id = ?", "ti", kind, id);

	if (rc < 0)
		return rc;
	json_object_foreach(settings, key, v) {
		rc = db_exec(db, "INSERT INTO table_settings (kind, owner_id, key, value) VALUES (?, ?, ?, ?)", "titt",
			     kind, id, key, json_string_value(v));
		if (rc < 0)
			return rc;
	}
	return 0;
}

static void table_write(struct api_req *req, struct api_resp *out)
{
	const struct table *t = req->arg;
	const char *vals[TABLE_MAX_COLS] = { NULL };
	json_t *settings = json_object();
	struct db_stmt *st = NULL;
	size_t n = ncols(t), i;
	int64_t id = req->id;
	int rc;

	if (table_input(req, t, vals, settings, out))
		goto done;
	if (id) {
		int64_t found;
		if (db_query_int(req->db, &found, t->sql_select, "ii", id, id)) {
			api_error(out, 404, "%s %lld does not exist", t->json_key, (long long)id);
			goto done;
		}
	}
	if (db_begin(req->db)) {
		api_error(out, 500, "cannot start a transaction");
		goto done;
	}
	rc = db_prepare(req->db, &st, id ? t->sql_update : t->sql_insert, NULL);
	for (i = 0; !rc && i < n; i++)
		rc = db_bind_text(st, (int)i + 1, vals[i] ? vals[i] : (t->required & (1u << i)) ? "" : NULL);
	if (!rc && id)
		rc = db_bind_int(st, (int)n + 1, id);
	if (!rc)
		rc = db_step(st);
	db_finalize(st);
	if (rc == 0 && !id)
		id = db_last_id(req->db);
	if (rc == 0)
		rc = write_settings(req->db, t->kind, id, settings);
	if (rc < 0) {
		db_rollback(req->db);
		if (rc == ERR_INVALID)
			api_error(out, 400, "%s: an entry with these values already exists", t->json_key);
		else
			api_error(out, 500, "cannot write %s: %s", t->json_key, db_errmsg(req->db));
		goto done;
	}
	if (db_commit(req->db)) {
		api_error(out, 500, "cannot commit");
		goto done;
	}
	api_json(out, req->id ? json_pack("{s:i}", "result", 1) : json_pack("{s:I}", "id", (json_int_t)id));
done:
	json_decref(settings);
}

static void table_delete(struct api_req *req, struct api_resp *out)
{
	const struct table *t = req->arg;
	int rc;

	if (db_begin(req->db)) {
		api_error(out, 500, "cannot start a transaction");
		return;
	}
	rc = db_exec(req->db, t->sql_delete, "i", req->id);
	if (rc > 0)
		rc = db_exec(req->db, "DELETE FROM table_settings WHERE kind = ? AND owner_id = ?", "ti", t->kind, req->id);
	if (rc <= 0) {
		db_rollback(req->db);
		if (rc == 0)
			api_error(out, 404, "%s %lld does not exist", t->json_key, (long long)req->id);
		else
			api_error(out, 500, "cannot delete: %s", db_errmsg(req->db));
		return;
	}
	if (db_commit(req->db)) {
		api_error(out, 500, "cannot commit");
		return;
	}
	api_json(out, json_pack("{s:i}", "result", 1));
}

/* --- job groups (JobGroup.pm) */

static void groups_list(struct api_req *req, struct api_resp *out)
{
	struct db_stmt *st;
	json_t *a;

	if (db_prepare(req->db, &st, "SELECT id, name, parent_id, default_priority, sort_order, description,"
		       " template FROM job_groups WHERE (? = 0 OR id = ?) ORDER BY id", "ii", req->id, req->id)) {
		api_error(out, 500, "cannot read job groups");
		return;
	}
	a = json_array();
	while (db_step(st) == 1) {
		json_t *g = json_object();
		json_object_set_new(g, "id", json_integer(db_col_int(st, 0)));
		json_object_set_new(g, "name", json_string(db_col_text(st, 1)));
		json_object_set_new(g, "parent_id", db_col_null(st, 2) ? json_null() : json_integer(db_col_int(st, 2)));
		json_object_set_new(g, "default_priority", json_integer(db_col_int(st, 3)));
		json_object_set_new(g, "sort_order", db_col_null(st, 4) ? json_null() : json_integer(db_col_int(st, 4)));
		json_object_set_new(g, "description", db_col_text(st, 5) ? json_string(db_col_text(st, 5)) : json_null());
		json_object_set_new(g, "template", db_col_text(st, 6) ? json_string(db_col_text(st, 6)) : json_null());
		json_object_set_new(g, "build_version_sort", json_integer(1));
		json_object_set_new(g, "carry_over_bugrefs", json_integer(1));
		json_array_append_new(a, g);
	}
	db_finalize(st);
	if (req->id && json_array_size(a) == 0) {
		json_decref(a);
		api_error(out, 404, "Group %lld does not exist", (long long)req->id);
		return;
	}
	api_json(out, a);
}

static int opt_long(const struct params *p, const char *key, long dflt, long *out)
{
	const char *v = params_get(p, key);

	*out = dflt;
	if (!v || !*v || !strcmp(v, "none"))
		return 0;
	return str_to_long(v, out);
}

static void groups_create(struct api_req *req, struct api_resp *out)
{
	const char *name = params_get(&req->params, "name");
	long prio, parent, sort;
	char now[DB_TIME_LEN];
	int rc;

	if (req->json) {
		api_error(out, 400, "send job group fields as form parameters");
		return;
	}
	if (!name || !*name) {
		api_error(out, 400, "Erroneous parameters (name missing)");
		return;
	}
	if (opt_long(&req->params, "default_priority", JOBS_DEFAULT_PRIORITY, &prio) ||
	    opt_long(&req->params, "parent_id", 0, &parent) || opt_long(&req->params, "sort_order", 0, &sort)) {
		api_error(out, 400, "Erroneous parameters (default_priority, parent_id and sort_order must be integers)");
		return;
	}
	db_now(now);
	rc = db_exec(req->db, "INSERT INTO job_groups (name, parent_id, default_priority, sort_order, description, t_created)"
		     " VALUES (?, ?, ?, ?, ?, ?)", "tIiItt", name, (int64_t)parent, (int64_t)prio, (int64_t)sort,
		     params_get(&req->params, "description"), now);
	if (rc < 0) {
		api_error(out, 400, rc == ERR_INVALID ? "a job group named '%s' already exists" : "cannot create job group '%s'",
			  name);
		return;
	}
	api_json(out, json_pack("{s:I}", "id", (json_int_t)db_last_id(req->db)));
}

/* --- job templates (JobTemplate.pm) */

static void templates_list(struct api_req *req, struct api_resp *out)
{
	struct db_stmt *st;
	json_t *a;

	if (db_prepare(req->db, &st,
		       "SELECT jt.id, jt.prio, g.name, jt.group_id, p.id, p.distri, p.version, p.flavor, p.arch,"
		       " m.id, m.name, ts.id, ts.name, jt.name, jt.description"
		       " FROM job_templates jt JOIN job_groups g ON g.id = jt.group_id"
		       " JOIN products p ON p.id = jt.product_id JOIN machines m ON m.id = jt.machine_id"
		       " JOIN test_suites ts ON ts.id = jt.test_suite_id WHERE (? = 0 OR jt.id = ?) ORDER BY jt.id",
		       "ii", req->id, req->id)) {
		api_error(out, 500, "cannot read job templates");
		return;
	}
	a = json_array();
	while (db_step(st) == 1) {
		json_array_append_new(a, json_pack(
			"{s:I,s:I,s:s,s:I,s:{s:I,s:s,s:s,s:s,s:s},s:{s:I,s:s},s:{s:I,s:s},s:s,s:s,s:[]}",
			"id", (json_int_t)db_col_int(st, 0), "prio", (json_int_t)db_col_int(st, 1),
			"group_name", db_col_text(st, 2), "group_id", (json_int_t)db_col_int(st, 3),
			"product", "id", (json_int_t)db_col_int(st, 4), "distri", db_col_text(st, 5),
			"version", db_col_text(st, 6), "flavor", db_col_text(st, 7), "arch", db_col_text(st, 8),
			"machine", "id", (json_int_t)db_col_int(st, 9), "name", db_col_text(st, 10),
			"test_suite", "id", (json_int_t)db_col_int(st, 11), "name", db_col_text(st, 12),
			"name", db_col_text(st, 13), "description", db_col_text(st, 14), "settings"));
	}
	db_finalize(st);
	if (req->id && json_array_size(a) == 0) {
		json_decref(a);
		api_error(out, 404, "Job template %lld does not exist", (long long)req->id);
		return;
	}
	api_json(out, json_pack("{s:o}", "JobTemplates", a));
}

/* An id given directly (NAME_id) or looked up by sql with the given text. */
static int lookup_id(struct api_req *req, const char *id_param, const char *name_param, const char *sql,
		     int64_t *out)
{
	const char *v = params_get(&req->params, id_param);

	if (v)
		return api_parse_id(v, out);
	v = params_get(&req->params, name_param);
	if (!v)
		return ERR_NOT_FOUND;
	return db_query_int(req->db, out, sql, "t", v) ? ERR_INVALID : 0;
}

static void templates_create(struct api_req *req, struct api_resp *out)
{
	static const char *const known[] = { "group_id", "group_name", "machine_id", "machine_name", "test_suite_id",
					     "test_suite_name", "product_id", "distri", "version", "flavor", "arch",
					     "prio", "name", "description", NULL };
	int64_t group = 0, machine = 0, suite = 0, product = 0, prio;
	char now[DB_TIME_LEN];
	const char *prio_s = params_get(&req->params, "prio");
	size_t i;
	int rc;

	for (i = 0; i < req->params.n; i++) {
		const char *const *k;
		for (k = known; *k && strcmp(*k, req->params.v[i].key); k++)
			;
		if (!*k) {
			api_error(out, 400, "Erroneous parameters (%s unknown)", req->params.v[i].key);
			return;
		}
	}
	if (lookup_id(req, "group_id", "group_name", "SELECT id FROM job_groups WHERE name = ?", &group)) {
		api_error(out, 400, "Erroneous parameters (group_id or group_name missing or unknown)");
		return;
	}
	{
		int64_t yaml;
		/* openQA: a group whose templates came from YAML changes only through its YAML. */
		if (!db_query_int(req->db, &yaml, "SELECT id FROM job_groups WHERE id = ? AND template IS NOT NULL", "i",
				  group)) {
			api_error(out, 400, "Group %lld must be updated through the YAML template (job_templates_scheduling)",
				  (long long)group);
			return;
		}
	}
	if (lookup_id(req, "machine_id", "machine_name", "SELECT id FROM machines WHERE name = ?", &machine)) {
		api_error(out, 400, "Erroneous parameters (machine_id or machine_name missing or unknown)");
		return;
	}
	if (lookup_id(req, "test_suite_id", "test_suite_name", "SELECT id FROM test_suites WHERE name = ?", &suite)) {
		api_error(out, 400, "Erroneous parameters (test_suite_id or test_suite_name missing or unknown)");
		return;
	}
	if (params_get(&req->params, "product_id")) {
		rc = api_parse_id(params_get(&req->params, "product_id"), &product);
	} else {
		const char *d = params_get(&req->params, "distri"), *v = params_get(&req->params, "version"),
			   *f = params_get(&req->params, "flavor"), *a = params_get(&req->params, "arch");
		rc = d && v && f && a ? db_query_int(req->db, &product, "SELECT id FROM products WHERE distri = ? AND"
				     " version = ? AND flavor = ? AND arch = ?", "tttt", d, v, f, a) : ERR_INVALID;
	}
	if (rc) {
		api_error(out, 400, "Erroneous parameters (product_id or distri/version/flavor/arch missing or unknown)");
		return;
	}
	if (prio_s) {
		long p;
		if (str_to_long(prio_s, &p)) {
			api_error(out, 400, "Erroneous parameters (prio invalid)");
			return;
		}
		prio = p;
	} else if (db_query_int(req->db, &prio, "SELECT default_priority FROM job_groups WHERE id = ?", "i", group)) {
		prio = JOBS_DEFAULT_PRIORITY;
	}
	db_now(now);
	rc = db_exec(req->db, "INSERT INTO job_templates (product_id, machine_id, test_suite_id, group_id, prio, name,"
		     " description, t_created) VALUES (?, ?, ?, ?, ?, ?, ?, ?)", "iiiiitt" "t", product, machine, suite,
		     group, prio, params_get(&req->params, "name") ? params_get(&req->params, "name") : "",
		     params_get(&req->params, "description") ? params_get(&req->params, "description") : "", now);
	if (rc < 0) {
		api_error(out, 400, rc == ERR_INVALID ? "this job template already exists (or names an unknown row)"
						      : "cannot create the job template");
		return;
	}
	api_json(out, json_pack("{s:I}", "id", (json_int_t)db_last_id(req->db)));
}

static void templates_delete(struct api_req *req, struct api_resp *out)
{
	int64_t group;
	int rc;

	if (!db_query_int(req->db, &group, "SELECT g.id FROM job_templates jt JOIN job_groups g ON g.id = jt.group_id"
			  " WHERE jt.id = ? AND g.template IS NOT NULL", "i", req->id)) {
		api_error(out, 400, "Test suites in group %lld must be updated through the YAML template"
			  " (job_templates_scheduling)", (long long)group);
		return;
	}
	rc = db_exec(req->db, "DELETE FROM job_templates WHERE id = ?", "i", req->id);

	if (rc <= 0) {
		api_error(out, rc == 0 ? 404 : 500, "Job template %lld does not exist", (long long)req->id);
		return;
	}
	api_json(out, json_pack("{s:i}", "result", 1));
}

#define TABLE_ROUTES(path, t) \
	{ "GET", "/api/v1/" path, AUTH_PUBLIC, table_list, &t }, \
	{ "GET", "/api/v1/" path "/#", AUTH_PUBLIC, table_list, &t }, \
	{ "POST", "/api/v1/" path, AUTH_ADMIN, table_write, &t }, \
	{ "PUT", "/api/v1/" path "/#", AUTH_ADMIN, table_write, &t }, \
	{ "POST", "/api/v1/" path "/#", AUTH_ADMIN, table_write, &t }, \
	{ "DELETE", "/api/v1/" path "/#", AUTH_ADMIN, table_delete, &t }

const struct api_route api_tables_routes[] = {
	TABLE_ROUTES("machines", t_machines),
	TABLE_ROUTES("products", t_products),
	TABLE_ROUTES("test_suites", t_test_suites),
	{ "GET", "/api/v1/job_groups", AUTH_PUBLIC, groups_list, NULL },
	{ "GET", "/api/v1/job_groups/#", AUTH_PUBLIC, groups_list, NULL },
	{ "POST", "/api/v1/job_groups", AUTH_ADMIN, groups_create, NULL },
	{ "GET", "/api/v1/job_templates", AUTH_PUBLIC, templates_list, NULL },
	{ "GET", "/api/v1/job_templates/#", AUTH_PUBLIC, templates_list, NULL },
	{ "POST", "/api/v1/job_templates", AUTH_ADMIN, templates_create, NULL },
	{ "DELETE", "/api/v1/job_templates/#", AUTH_ADMIN, templates_delete, NULL },
	{ NULL, NULL, AUTH_PUBLIC, NULL, NULL },
};
