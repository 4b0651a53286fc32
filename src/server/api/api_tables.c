/* SPDX-License-Identifier: MIT */
/* api_tables.c - the routes of the admin tables as openQA's Table.pm serves
 * them (machines, products, test_suites with their settings), job groups and
 * job templates. One route set per table descriptor instead of copied
 * handlers. Reads are public, writes need an admin key. The rows are
 * tables.c, groups.c and templates.c; this file parses requests. */
#define LOG_MODULE "api"
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "server/http/api.h"
#include "server/store/jbuild.h"
#include "server/store/groups.h"
#include "server/store/jobs.h"
#include "server/store/retention.h"
#include "server/store/review.h"
#include "server/store/tables.h"
#include "server/store/templates.h"
#include "util/err.h"
#include "util/str.h"
#include "util/banned.h" /* last: after every system header */

/* Route arguments: which table a route serves. */
static const enum tables_kind t_machines = TABLES_MACHINES;
static const enum tables_kind t_products = TABLES_PRODUCTS;
static const enum tables_kind t_test_suites = TABLES_TEST_SUITES;

static size_t ncols(const struct tables_desc *t)
{
	size_t n = 0;

	while (t->cols[n])
		n++;
	return n;
}

static void table_list(struct api_req *req, struct api_resp *out)
{
	enum tables_kind kind = *(const enum tables_kind *)req->arg;
	const struct tables_desc *t = tables_desc(kind);
	const char *want[TABLES_MAX_COLS] = { NULL };
	size_t n = ncols(t), i;
	char msg[256];
	json_t *rows;
	int rc;

	for (i = 0; i < n; i++)
		want[i] = params_get(&req->params, t->cols[i]);
	rc = tables_list(req->db, kind, req->id, want, &rows, msg, sizeof(msg));
	if (rc)
		api_error_code(out, rc, msg);
	else
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
static int table_input(struct api_req *req, const struct tables_desc *t, const char **vals, json_t *settings,
		       struct api_resp *out)
{
	struct jbuild b = JBUILD_INIT; /* a setting lost would be stored missing */
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
						jbuild_set_ref(&b, settings, sk, sv);
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
						jbuild_set_ref(&b, settings, sk, sv);
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
					jbuild_set(&b, settings, sk, json_string(req->params.v[i].value));
				else
					jbuild_take(&b, NULL, "settings");
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
	if (jbuild_failed(&b)) {
		api_nomem(out);
		return -1;
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

static void table_write(struct api_req *req, struct api_resp *out)
{
	enum tables_kind kind = *(const enum tables_kind *)req->arg;
	const char *vals[TABLES_MAX_COLS] = { NULL };
	json_t *settings = json_object();
	char msg[1024];
	int64_t id;
	int rc;

	if (!settings) {
		api_nomem(out);
		return;
	}
	if (table_input(req, tables_desc(kind), vals, settings, out))
		goto done;
	rc = tables_write(req->db, kind, req->id, vals, settings, &id, msg, sizeof(msg));
	if (rc)
		api_error_code(out, rc, msg);
	else
		api_json(out, req->id ? json_pack("{s:i}", "result", 1) : json_pack("{s:I}", "id", (json_int_t)id));
done:
	json_decref(settings);
}

static void table_delete(struct api_req *req, struct api_resp *out)
{
	char msg[1024];
	int rc = tables_delete(req->db, *(const enum tables_kind *)req->arg, req->id, msg, sizeof(msg));

	if (rc)
		api_error_code(out, rc, msg);
	else
		api_json(out, json_pack("{s:i}", "result", 1));
}

/* --- job groups (JobGroup.pm) */

static void get_groups(struct api_req *req, struct api_resp *out)
{
	char msg[256];
	json_t *a;
	int rc = groups_list(req->db, req->id, &a, msg, sizeof(msg));

	if (rc)
		api_error_code(out, rc, msg);
	else
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

/* The retention parameters of a group's POST or PUT (keep_*_in_days,
 * size_limit_gb), checked by group_retention_check first, applied to
 * group id (empty: the server's default). 0, or -1 with 500 answered. */
static int group_retention(struct api_req *req, struct api_resp *out, int64_t id)
{
	size_t k;

	for (k = 0; groups_retention_keys[k]; k++) {
		const char *key = groups_retention_keys[k], *v = params_get(&req->params, key);
		long n = 0;
		if (!v)
			continue;
		if (*v)
			(void)str_to_long(v, &n); /* checked by group_retention_check */
		if (groups_set_retention(req->db, id, key, *v != '\0', n)) {
			api_error(out, 500, "cannot set %s of job group %lld", key, (long long)id);
			return -1;
		}
	}
	return 0;
}

/* Whether every retention parameter given is well formed, before anything is written. */
static int group_retention_check(struct api_req *req, struct api_resp *out)
{
	size_t k;

	for (k = 0; groups_retention_keys[k]; k++) {
		const char *key = groups_retention_keys[k], *v = params_get(&req->params, key);
		long max = strcmp(key, "size_limit_gb") ? RETENTION_MAX_DAYS : RETENTION_MAX_GB, n;
		if (v && *v && (str_to_long(v, &n) || n < 0 || n > max)) {
			api_error(out, 400, "Erroneous parameters (%s must be an integer from 0 to %ld, or empty for the default)",
				  key, max);
			return -1;
		}
	}
	return 0;
}

static void put_group(struct api_req *req, struct api_resp *out)
{
	const char *name = params_get(&req->params, "name");
	long prio = 0;
	char msg[512] = "";
	int rc;

	const char *carry = params_get(&req->params, "carry_over_bugrefs");
	size_t i, k;

	if (req->json) {
		api_error(out, 400, "send job group fields as form parameters");
		return;
	}
	for (i = 0; i < req->params.n; i++) {
		static const char *const plain[] = { "name", "description", "default_priority", "carry_over_bugrefs", NULL };
		const char *key = req->params.v[i].key;
		bool known = false;
		for (k = 0; plain[k] && !known; k++)
			known = !strcmp(plain[k], key);
		for (k = 0; groups_retention_keys[k] && !known; k++)
			known = !strcmp(groups_retention_keys[k], key);
		if (!known) {
			api_error(out, 400, "Erroneous parameters (%s: not a job group field that can be changed)", key);
			return;
		}
	}
	if (name && !*name) {
		api_error(out, 400, "Erroneous parameters (name must not be empty)");
		return;
	}
	if (carry && strcmp(carry, "0") && strcmp(carry, "1")) {
		api_error(out, 400, "Erroneous parameters (carry_over_bugrefs must be 0 or 1)");
		return;
	}
	if (opt_long(&req->params, "default_priority", 0, &prio)) {
		api_error(out, 400, "Erroneous parameters (default_priority must be an integer)");
		return;
	}
	if (group_retention_check(req, out))
		return;
	rc = groups_update(req->db, req->id, name, params_get(&req->params, "description"),
			   params_get(&req->params, "default_priority") != NULL, prio, msg, sizeof(msg));
	if (rc == ERR_NOT_FOUND) {
		api_error(out, 404, "Group %lld does not exist", (long long)req->id);
		return;
	}
	if (rc) {
		api_error(out, rc == ERR_INVALID ? 400 : 500, "%s", msg[0] ? msg : "cannot update the job group");
		return;
	}
	if (carry && review_group_set_carry_over(req->db, req->id, !strcmp(carry, "1"))) {
		api_error(out, 500, "cannot update group %lld", (long long)req->id);
		return;
	}
	if (group_retention(req, out, req->id))
		return;
	api_json(out, json_pack("{s:I}", "id", (json_int_t)req->id));
}

static void post_group(struct api_req *req, struct api_resp *out)
{
	const char *name = params_get(&req->params, "name");
	long prio, parent, sort;
	char msg[512];
	int64_t id;
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
	if (group_retention_check(req, out))
		return;
	rc = groups_add(req->db, name, parent, prio, sort, params_get(&req->params, "description"), &id, msg,
			sizeof(msg));
	if (rc) {
		api_error(out, 400, "%s", msg); /* openQA answers 400 either way */
		return;
	}
	if (group_retention(req, out, id))
		return;
	api_json(out, json_pack("{s:I}", "id", (json_int_t)id));
}

/* --- job templates (JobTemplate.pm) */

static void get_templates(struct api_req *req, struct api_resp *out)
{
	char msg[256];
	json_t *a;
	int rc = templates_list(req->db, req->id, &a, msg, sizeof(msg));

	if (rc)
		api_error_code(out, rc, msg);
	else
		api_json(out, json_pack("{s:o}", "JobTemplates", a));
}

/* A row's id parameter: 0 when absent, -1 when not an id. */
static int64_t id_param(const struct api_req *req, const char *key)
{
	const char *v = params_get(&req->params, key);
	int64_t id;

	if (!v)
		return 0;
	return api_parse_id(v, &id) ? -1 : id;
}

static void post_template(struct api_req *req, struct api_resp *out)
{
	static const char *const known[] = { "group_id", "group_name", "machine_id", "machine_name", "test_suite_id",
					     "test_suite_name", "product_id", "distri", "version", "flavor", "arch",
					     "prio", "name", "description", NULL };
	const struct params *p = &req->params;
	struct templates_new t = {
		id_param(req, "group_id"), params_get(p, "group_name"),
		id_param(req, "machine_id"), params_get(p, "machine_name"),
		id_param(req, "test_suite_id"), params_get(p, "test_suite_name"),
		id_param(req, "product_id"), params_get(p, "distri"), params_get(p, "version"), params_get(p, "flavor"),
		params_get(p, "arch"), params_get(p, "prio"), params_get(p, "name"), params_get(p, "description"),
	};
	char msg[512];
	int64_t id;
	size_t i;

	for (i = 0; i < p->n; i++) {
		const char *const *k;
		for (k = known; *k && strcmp(*k, p->v[i].key); k++)
			;
		if (!*k) {
			api_error(out, 400, "Erroneous parameters (%s unknown)", p->v[i].key);
			return;
		}
	}
	if (templates_add(req->db, &t, &id, msg, sizeof(msg))) {
		api_error(out, 400, "%s", msg); /* every failure is the request's, as openQA answers */
		return;
	}
	api_json(out, json_pack("{s:I}", "id", (json_int_t)id));
}

static void delete_template(struct api_req *req, struct api_resp *out)
{
	char msg[256];
	int rc = templates_delete(req->db, req->id, msg, sizeof(msg));

	if (rc)
		api_error_code(out, rc, msg);
	else
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
	{ "GET", "/api/v1/job_groups", AUTH_PUBLIC, get_groups, NULL },
	{ "GET", "/api/v1/job_groups/#", AUTH_PUBLIC, get_groups, NULL },
	{ "POST", "/api/v1/job_groups", AUTH_ADMIN, post_group, NULL },
	{ "PUT", "/api/v1/job_groups/#", AUTH_ADMIN, put_group, NULL },
	{ "GET", "/api/v1/job_templates", AUTH_PUBLIC, get_templates, NULL },
	{ "GET", "/api/v1/job_templates/#", AUTH_PUBLIC, get_templates, NULL },
	{ "POST", "/api/v1/job_templates", AUTH_ADMIN, post_template, NULL },
	{ "DELETE", "/api/v1/job_templates/#", AUTH_ADMIN, delete_template, NULL },
	{ NULL, NULL, AUTH_PUBLIC, NULL, NULL },
};
