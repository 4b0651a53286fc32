/* SPDX-License-Identifier: MIT */
/* api_fields.c - the fields of every writing route (type, presence,
 * bounds) and the one check server.c runs on them before a handler: a
 * request with a field of the wrong type, missing or out of bounds is
 * answered 400 "NAME: ..." and reaches no handler, so nothing is
 * changed. Routes are found by method and pattern; the lists mirror what
 * the handlers in api_*.c read (see each handler for what a value means). */
#define LOG_MODULE "api"
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include "server/api/api_fields.h"
#include "server/store/bugref.h"
#include "server/store/groups.h"
#include "server/store/jt_yaml.h"
#include "server/store/needle_edit.h"
#include "server/store/retention.h"
#include "server/store/tables.h"
#include "server/store/users.h"
#include "server/store/workers.h"
#include "util/str.h"
#include "util/jsonv.h"
#include "util/banned.h" /* last: after every system header */

#define I32_MIN (-2147483647LL - 1)
#define I32_MAX 2147483647LL
#define ID_MAX  LLONG_MAX
#define END     { NULL, API_F_STR, 0, 0, 0 }

/* Lengths not named elsewhere. */
#define F_REASON_MAX  (64u << 10)  /* a job's reason (a worker's may quote an answer) */
#define F_WORD_MAX    64           /* a result, a command, an action, a type */
#define F_MODULE_MAX  256          /* a test module's name */
#define F_PATH_MAX    1024         /* a file name, a needle directory, a return_to URL */

#define F_STR(n, fl, mx)       { n, API_F_STR, fl, 0, mx }
#define F_INT(n, fl, lo, hi)   { n, API_F_INT, fl, lo, hi }
#define F_ID(n, fl)            { n, API_F_INT, fl, 1, ID_MAX }
#define F_BOOL(n, fl)          { n, API_F_BOOL, fl, 0, 1 }
#define F_OBJ(n, fl)           { n, API_F_OBJECT, fl, 0, 0 }
#define RETENTION_FIELDS                                                        \
	F_INT("keep_logs_in_days", 0, 0, RETENTION_MAX_DAYS),                   \
	F_INT("keep_important_logs_in_days", 0, 0, RETENTION_MAX_DAYS),         \
	F_INT("keep_results_in_days", 0, 0, RETENTION_MAX_DAYS),                \
	F_INT("keep_important_results_in_days", 0, 0, RETENTION_MAX_DAYS),      \
	F_INT("size_limit_gb", 0, 0, RETENTION_MAX_GB)

static const struct api_field none[] = { END };

/* Free-form settings (jobs, isos, bulk cancel): the names are the user's;
 * jobs.c bounds them (and their %VAR% expansion). reason is not a setting. */
static const struct api_field f_cancel_bulk[] = { F_STR("reason", 0, F_REASON_MAX), END };
static const struct api_field f_cancel[] = { F_STR("reason", 0, F_REASON_MAX), END };
static const struct api_field f_restart[] = { F_INT("prio", 0, I32_MIN, I32_MAX), END };
static const struct api_field f_prio[] = { F_INT("prio", API_F_REQUIRED, I32_MIN, I32_MAX), END };
static const struct api_field f_restart_bulk[] = {
	F_STR("jobs", 0, LIMIT_API_BODY), F_STR("jobs[]", 0, LIMIT_API_BODY), F_INT("prio", 0, I32_MIN, I32_MAX), END
};

static const struct api_field f_machine[] = {
	F_STR("name", API_F_REQUIRED, LIMIT_TABLE_VALUE), F_STR("backend", API_F_REQUIRED, LIMIT_TABLE_VALUE),
	F_STR("description", 0, LIMIT_TABLE_TEXT), END
};
static const struct api_field f_product[] = {
	F_STR("distri", API_F_REQUIRED, LIMIT_TABLE_VALUE), F_STR("version", API_F_REQUIRED, LIMIT_TABLE_VALUE),
	F_STR("flavor", API_F_REQUIRED, LIMIT_TABLE_VALUE), F_STR("arch", API_F_REQUIRED, LIMIT_TABLE_VALUE),
	F_STR("description", 0, LIMIT_TABLE_TEXT), END
};
static const struct api_field f_test_suite[] = {
	F_STR("name", API_F_REQUIRED, LIMIT_TABLE_VALUE), F_STR("description", 0, LIMIT_TABLE_TEXT), END
};
static const struct api_field f_group_post[] = {
	F_STR("name", API_F_REQUIRED, LIMIT_GROUP_NAME), F_STR("description", 0, LIMIT_GROUP_TEXT),
	F_INT("default_priority", API_F_NONE_OK, I32_MIN, I32_MAX), F_INT("parent_id", API_F_NONE_OK, 0, ID_MAX),
	F_INT("sort_order", API_F_NONE_OK, I32_MIN, I32_MAX), RETENTION_FIELDS, END
};
static const struct api_field f_group_put[] = {
	F_STR("name", 0, LIMIT_GROUP_NAME), F_STR("description", 0, LIMIT_GROUP_TEXT),
	F_INT("default_priority", API_F_NONE_OK, I32_MIN, I32_MAX), F_BOOL("carry_over_bugrefs", 0), RETENTION_FIELDS,
	END
};
static const struct api_field f_template[] = {
	F_ID("group_id", 0), F_STR("group_name", 0, LIMIT_GROUP_NAME), F_ID("machine_id", 0),
	F_STR("machine_name", 0, LIMIT_TABLE_VALUE), F_ID("test_suite_id", 0),
	F_STR("test_suite_name", 0, LIMIT_TABLE_VALUE), F_ID("product_id", 0), F_STR("distri", 0, LIMIT_TABLE_VALUE),
	F_STR("version", 0, LIMIT_TABLE_VALUE), F_STR("flavor", 0, LIMIT_TABLE_VALUE),
	F_STR("arch", 0, LIMIT_TABLE_VALUE), F_INT("prio", 0, I32_MIN, I32_MAX), F_STR("name", 0, LIMIT_TABLE_VALUE),
	F_STR("description", 0, LIMIT_TABLE_TEXT), END
};

static const struct api_field f_worker[] = {
	F_STR("host", API_F_REQUIRED, LIMIT_WORKER_HOST), F_INT("instance", 0, 0, I32_MAX),
	F_STR("worker_class", 0, LIMIT_WORKER_CLASS), F_INT("websocket_api_version", 0, 0, I32_MAX),
	F_STR("cpu_arch", 0, WORKERS_CPU_ARCH_MAX), F_INT("mem_max", 0, 0, LLONG_MAX), END
};
/* Not required here: a status from another key's worker is refused 403
 * first (api_workers.c), one without the object 400 there. */
static const struct api_field f_status[] = { F_OBJ("status", 0), END };
/* The body is the file: these come in the query string. */
static const struct api_field f_artefact[] = {
	F_STR("file", 0, F_PATH_MAX), F_STR("asset", 0, F_WORD_MAX), F_STR("md5", 0, F_WORD_MAX),
	F_STR("image", 0, F_WORD_MAX), F_STR("thumb", 0, F_WORD_MAX), F_STR("ulog", 0, F_WORD_MAX), END
};
static const struct api_field f_set_done[] = {
	F_STR("result", 0, F_WORD_MAX), F_STR("reason", 0, F_REASON_MAX), F_ID("worker_id", 0), END
};

static const struct api_field f_asset[] = {
	F_STR("type", API_F_REQUIRED, F_WORD_MAX), F_STR("name", API_F_REQUIRED, F_PATH_MAX), END
};
static const struct api_field f_comment[] = { F_STR("text", API_F_REQUIRED, LIMIT_COMMENT_TEXT), END };
static const struct api_field f_comments[] = {
	F_STR("text", API_F_REQUIRED, LIMIT_COMMENT_TEXT), F_ID("job_id", API_F_REQUIRED), END
};
static const struct api_field f_comments_delete[] = { F_ID("id", API_F_REQUIRED), END };
static const struct api_field f_developer[] = {
	F_STR("command", 0, F_WORD_MAX), F_STR("cmd", 0, F_WORD_MAX), F_OBJ("args", 0), END
};
static const struct api_field f_live[] = {
	/* The runner's note: a longer module or what is left out of the view (api_live.c). */
	F_STR("module", 0, 0), F_STR("what", 0, 0), F_INT("step", 0, I32_MIN, I32_MAX),
	F_INT("line", 0, I32_MIN, I32_MAX), F_STR("log", 0, 0), F_OBJ("frame", 0), F_OBJ("developer", 0), END
};
static const struct api_field f_mutex[] = { F_STR("name", API_F_REQUIRED, 255), END };
static const struct api_field f_mutex_action[] = {
	F_STR("action", API_F_REQUIRED, F_WORD_MAX), F_INT("where", 0, 0, LLONG_MAX), END
};
static const struct api_field f_barrier[] = {
	F_STR("name", API_F_REQUIRED, 255), F_INT("tasks", API_F_REQUIRED, 0, 999999999), END
};
static const struct api_field f_barrier_wait[] = {
	F_INT("where", 0, 0, LLONG_MAX), F_INT("check_dead_job", 0, 0, LLONG_MAX), END
};
/* a relay hub's HOST:PORT (a DNS name is at most 253 bytes) */
static const struct api_field f_relay[] = { F_STR("addr", API_F_REQUIRED, 300), END };
static const struct api_field f_barrier_destroy[] = { F_INT("where", 0, 0, LLONG_MAX), END };
static const struct api_field f_needle_match[] = {
	F_STR("module", API_F_REQUIRED, F_MODULE_MAX), F_INT("step", API_F_REQUIRED, 1, I32_MAX), END
};
static const struct api_field f_needle_save[] = {
	F_STR("json", API_F_REQUIRED, LIMIT_NEEDLE_EDIT_BODY), F_STR("overwrite", 0, F_WORD_MAX),
	F_STR("dir", 0, F_PATH_MAX), F_STR("needlename", 0, NEEDLE_EDIT_NAME_MAX),
	F_STR("commit_message", 0, NEEDLE_EDIT_TEXT_MAX), END
};
static const struct api_field f_rerun[] = { F_STR("module", 0, F_MODULE_MAX), END };
static const struct api_field f_login[] = {
	F_STR("user", API_F_REQUIRED, USERS_NAME_MAX), F_STR("password", API_F_REQUIRED, USERS_PASSWORD_MAX),
	F_STR("return_to", 0, F_PATH_MAX), END
};
static const struct api_field f_key_put[] = { F_BOOL("refuse_legacy", API_F_REQUIRED), END };
static const struct api_field f_schedule[] = {
	F_STR("template", 0, LIMIT_JT_YAML), F_STR("schema", 0, F_WORD_MAX), F_INT("preview", 0, 0, 1),
	F_INT("expand", 0, 0, 1), F_STR("reference", 0, LIMIT_JT_YAML), F_STR("name", 0, LIMIT_GROUP_NAME), END
};

static const struct {
	const char *method, *pattern;
	const struct api_field *f;
} routes[] = {
	{ "POST", "/api/v1/jobs", none },
	{ "DELETE", "/api/v1/jobs/#", none },
	{ "POST", "/api/v1/jobs/#/cancel", f_cancel },
	{ "POST", "/api/v1/jobs/#/restart", f_restart },
	{ "POST", "/api/v1/jobs/#/prio", f_prio },
	{ "POST", "/api/v1/jobs/cancel", f_cancel_bulk },
	{ "POST", "/api/v1/jobs/restart", f_restart_bulk },
	{ "POST", "/api/v1/isos", none },
#define TABLE_FIELDS(path, f)                          \
	{ "POST", "/api/v1/" path, f },                \
	{ "PUT", "/api/v1/" path "/#", f },            \
	{ "POST", "/api/v1/" path "/#", f },           \
	{ "DELETE", "/api/v1/" path "/#", none }
	TABLE_FIELDS("machines", f_machine),
	TABLE_FIELDS("products", f_product),
	TABLE_FIELDS("test_suites", f_test_suite),
	{ "POST", "/api/v1/job_groups", f_group_post },
	{ "PUT", "/api/v1/job_groups/#", f_group_put },
	{ "POST", "/api/v1/job_templates", f_template },
	{ "DELETE", "/api/v1/job_templates/#", none },
	{ "POST", "/api/v1/workers", f_worker },
	{ "POST", "/api/v1/jobs/#/status", f_status },
	{ "POST", "/api/v1/jobs/#/artefact", f_artefact },
	{ "POST", "/api/v1/jobs/#/set_done", f_set_done },
	{ "POST", "/api/v1/assets", f_asset },
	{ "DELETE", "/api/v1/assets/#", none },
	{ "DELETE", "/api/v1/assets/iso/*", none },
	{ "DELETE", "/api/v1/assets/hdd/*", none },
	{ "DELETE", "/api/v1/assets/repo/*", none },
	{ "DELETE", "/api/v1/assets/other/*", none },
	{ "POST", "/api/v1/cleanup", none },
#define COMMENT_FIELDS(path)                                  \
	{ "POST", "/api/v1/" path "/#/comments", f_comment },  \
	{ "PUT", "/api/v1/" path "/#/comments/*", f_comment }, \
	{ "DELETE", "/api/v1/" path "/#/comments/*", none }
	COMMENT_FIELDS("jobs"),
	COMMENT_FIELDS("groups"),
	{ "POST", "/api/v1/comments", f_comments },
	{ "DELETE", "/api/v1/comments", f_comments_delete },
	{ "POST", "/api/v1/jobs/#/developer", f_developer },
	{ "POST", "/api/v1/jobs/#/live", f_live },
	{ "POST", "/api/v1/mutex", f_mutex },
	{ "POST", "/api/v1/mutex/*", f_mutex_action },
	{ "POST", "/api/v1/barrier", f_barrier },
	{ "POST", "/api/v1/barrier/*", f_barrier_wait },
	{ "DELETE", "/api/v1/barrier/*", f_barrier_destroy },
	{ "POST", "/api/v1/mm/relay", f_relay },
	{ "POST", "/api/v1/jobs/#/needle_match", f_needle_match },
	{ "POST", "/tests/#/modules/*/steps/#", f_needle_save },
	{ "POST", "/api/v1/jobs/#/rejudge", none },
	{ "POST", "/api/v1/jobs/#/rerun_from", f_rerun },
	{ "POST", "/login", f_login },
	{ "POST", "/logout", none },
	{ "POST", "/api/v1/user/api_keys", none },
	{ "DELETE", "/api/v1/user/api_keys/#", none },
	{ "PUT", "/api/v1/api_keys/*", f_key_put },
	{ "POST", "/api/v1/job_templates_scheduling", f_schedule },
	{ "POST", "/api/v1/job_templates_scheduling/#", f_schedule },
	{ "POST", "/api/v1/experimental/job_templates_scheduling/#", f_schedule },
};

const struct api_field *api_fields_of(const struct api_route *route)
{
	size_t i;

	for (i = 0; i < sizeof(routes) / sizeof(routes[0]); i++)
		if (!strcmp(routes[i].method, route->method) && !strcmp(routes[i].pattern, route->pattern))
			return routes[i].f;
	return NULL;
}

/* One text value s of field f (from a form, or a JSON string): 0, or -1
 * with the answer given. */
static int check_text(const struct api_field *f, const char *s, struct api_resp *out)
{
	long n;

	if (!*s) {
		if (f->flags & API_F_REQUIRED) {
			api_error(out, 400, "%s: missing (it must not be empty)", f->name);
			return -1;
		}
		return 0;
	}
	switch (f->type) {
	case API_F_STR:
		if (f->max > 0 && strlen(s) > (size_t)f->max) {
			api_error(out, 400, "%s: %zu bytes, over the limit of %lld", f->name, strlen(s), f->max);
			return -1;
		}
		return 0;
	case API_F_INT:
		if ((f->flags & API_F_NONE_OK) && !strcmp(s, "none"))
			return 0;
		if (str_to_long(s, &n)) {
			api_error(out, 400, "%s: '%.40s' is not an integer", f->name, s);
			return -1;
		}
		if (n < f->min || n > f->max) {
			api_error(out, 400, "%s: %ld is out of bounds (%lld to %lld)", f->name, n, f->min, f->max);
			return -1;
		}
		return 0;
	case API_F_BOOL:
		if (strcmp(s, "0") && strcmp(s, "1")) {
			api_error(out, 400, "%s: '%.40s' is not 0 or 1", f->name, s);
			return -1;
		}
		return 0;
	case API_F_OBJECT:
		break;
	}
	api_error(out, 400, "%s: must be a JSON object (send the body as application/json)", f->name);
	return -1;
}

/* One JSON value v of field f: 0, or -1 with the answer given. */
static int check_json(const struct api_field *f, const json_t *v, struct api_resp *out)
{
	static const char *const want[] = { "a string", "an integer", "a boolean", "an object" };
	char num[32];

	if (json_is_string(v) && f->type != API_F_OBJECT)
		return check_text(f, json_string_value(v), out);
	switch (f->type) {
	case API_F_STR:
		break;
	case API_F_INT:
		if (!json_is_integer(v))
			break;
		snprintf(num, sizeof(num), "%lld", (long long)json_integer_value(v));
		return check_text(f, num, out);
	case API_F_BOOL:
		if (json_is_boolean(v))
			return 0;
		if (json_is_integer(v) && (json_integer_value(v) == 0 || json_integer_value(v) == 1))
			return 0;
		break;
	case API_F_OBJECT:
		if (json_is_object(v))
			return 0;
		break;
	}
	api_error(out, 400, "%s: must be %s, not %s", f->name, want[f->type], jsonv_kind(v));
	return -1;
}

int api_fields_check(const struct api_req *req, const struct api_field *f, struct api_resp *out)
{
	const json_t *body = json_is_object(req->json) ? req->json : NULL;

	for (; f->name; f++) {
		const json_t *v = body ? json_object_get(body, f->name) : NULL;
		bool seen = false;
		size_t i;

		for (i = 0; i < req->params.n; i++) {
			if (strcmp(req->params.v[i].key, f->name))
				continue;
			if (check_text(f, req->params.v[i].value, out))
				return -1;
			seen = seen || *req->params.v[i].value;
		}
		if (v && !json_is_null(v)) {
			if (check_json(f, v, out))
				return -1;
			seen = seen || !json_is_string(v) || *json_string_value(v);
		}
		if ((f->flags & API_F_REQUIRED) && !seen) {
			api_error(out, 400, "%s: missing", f->name);
			return -1;
		}
	}
	return 0;
}
