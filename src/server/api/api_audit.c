/* SPDX-License-Identifier: MIT */
/* api_audit.c - the audit log seen from HTTP: the record server.c makes of
 * every successful write (who, method, route, path, target id, form
 * parameters without secrets), and the admin's read of the log. The rows
 * themselves are audit.c.
 *
 *   method path                 level   what
 *   GET    /api/v1/audit_log    admin   ?limit=N&before=ID | &after=ID: a page of events, newest first
 */
#define LOG_MODULE "api"
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include "server/http/api.h"
#include "server/store/audit.h"
#include "server/store/auth.h"
#include "server/store/users.h"
#include "util/log.h"
#include "util/str.h"
#include "util/banned.h" /* last: after every system header */

#define AUDIT_PARAMS_MAX 32     /* form parameters kept per event */
#define AUDIT_VALUE_MAX 256     /* bytes of each value kept */

void api_actor(const struct api_req *req, char *out, size_t outlen)
{
	if (req->session)
		snprintf(out, outlen, "%s", req->session->user.name);
	else if (req->key && auth_key_owner(req->db, req->key, out, outlen) == 0)
		return;
	else if (req->key)
		snprintf(out, outlen, "key:%s", req->key);
	else
		snprintf(out, outlen, "anonymous");
}

static bool is_in(const struct api_route *table, const struct api_route *route)
{
	const struct api_route *r;

	for (r = table; r->method; r++)
		if (r == route)
			return true;
	return false;
}

/* Whether a parameter name may hold a secret (never logged). */
static bool secret_name(const char *k)
{
	return strcasestr(k, "password") || strcasestr(k, "secret") || strcasestr(k, "token");
}

/* The value cut to AUDIT_VALUE_MAX bytes on a UTF-8 character boundary. */
static json_t *short_text(const char *v)
{
	size_t n = strlen(v);

	if (n <= AUDIT_VALUE_MAX)
		return json_string(v);
	n = AUDIT_VALUE_MAX;
	while (n > 0 && ((unsigned char)v[n] & 0xc0) == 0x80)
		n--;
	return json_stringn(v, n);
}

void api_audit_request(const struct api_req *req, const struct api_route *route, const struct api_resp *out)
{
	char actor[USERS_NAME_MAX + 8], event[LIMIT_API_NAME];
	json_t *d = json_object(), *params = json_object(), *rid;
	size_t i, kept = 0;

	/* The workers' own traffic (registration, status every few seconds,
	 * uploads, set_done) and the lock calls of running tests are the
	 * machinery, not a change anyone made. */
	if (!strcmp(req->method, "GET") || is_in(api_workers_routes, route) || is_in(api_locks_routes, route))
		goto out;
	if (!d || !params)
		goto fail;
	api_actor(req, actor, sizeof(actor));
	snprintf(event, sizeof(event), "%s %s", req->method, route->pattern);
	/* The details below are a log's (docs/hardening.md: an audit detail
	 * may be lost when memory runs out; the event, actor and time stay). */
	json_object_set_new(d, "path", json_string(req->path));
	if (req->id)
		json_object_set_new(d, "id", json_integer(req->id));
	else if (out->json && (rid = json_object_get(out->json, "id")) && json_is_integer(rid))
		json_object_set(d, "id", rid); /* the object the write created */
	if (req->name)
		json_object_set_new(d, "name", json_string(req->name));
	for (i = 0; i < req->params.n && kept < AUDIT_PARAMS_MAX; i++) {
		const struct param *p = &req->params.v[i];
		json_t *v = secret_name(p->key) ? json_string("(hidden)") : short_text(p->value);
		if (v && !json_object_set_new(params, p->key, v))
			kept++;
	}
	if (kept)
		json_object_set(d, "params", params);
	if (audit_record(req->db, actor, event, d))
		goto fail;
	goto out;
fail:
	log_err("cannot record %s %s in the audit log", req->method, req->path);
out:
	json_decref(d);
	json_decref(params);
}

static void audit_get(struct api_req *req, struct api_resp *out)
{
	const char *lim = params_get(&req->params, "limit"), *before = params_get(&req->params, "before"),
		   *after = params_get(&req->params, "after");
	long limit = AUDIT_LIST_DEFAULT, b = 0, a = 0;
	json_t *j;

	if ((lim && (str_to_long(lim, &limit) || limit <= 0)) || (before && (str_to_long(before, &b) || b <= 0)) ||
	    (after && (str_to_long(after, &a) || a <= 0))) {
		api_error(out, 400, "limit, before and after are positive integers");
		return;
	}
	if (limit > AUDIT_LIST_MAX)
		limit = AUDIT_LIST_MAX;
	if (audit_list(req->db, b, a, limit, &j)) {
		api_error(out, 500, "cannot read the audit log");
		return;
	}
	api_json(out, j);
}

/* openQA shows its audit log to administrators only. */
const struct api_route api_audit_routes[] = {
	{ "GET", "/api/v1/audit_log", AUTH_ADMIN, audit_get, NULL },
	{ NULL, NULL, 0, NULL, NULL },
};
