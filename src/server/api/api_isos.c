/* SPDX-License-Identifier: MIT */
/* api_isos.c - POST /api/v1/isos (Iso.pm create) and GET /api/v1/isos/<id>:
 * request parsing and response shapes; the expansion is isos.c. */
#define LOG_MODULE "api"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "server/http/api.h"
#include "server/store/isos.h"
#include "util/buf.h"
#include "util/banned.h" /* last: after every system header */

static void isos_create(struct api_req *req, struct api_resp *out)
{
	static const char *const required[] = { "DISTRI", "VERSION", "FLAVOR", "ARCH" };
	json_t *params = json_object(), *resp = NULL;
	struct buf missing;
	size_t i;
	int status;

	buf_init(&missing, 256);
	if (req->json) {
		api_error(out, 400, "send the product as form parameters (DISTRI=... VERSION=...)");
		goto out;
	}
	for (i = 0; i < req->params.n; i++) {
		const char *k = req->params.v[i].key;
		char *u;
		if (!strcmp(k, "async") || !strcmp(k, "scheduled_product_clone_id"))
			continue;
		u = api_upper(k);
		/* A parameter lost for want of memory: nothing is scheduled. */
		if (!u || !params || json_object_set_new(params, u, json_string(req->params.v[i].value))) {
			free(u);
			api_nomem(out);
			goto out;
		}
		free(u);
	}
	for (i = 0; i < 4; i++) {
		const char *v = json_string_value(json_object_get(params, required[i]));
		/* A name not noted would schedule the product without it. */
		if ((!v || !*v) && buf_printf(&missing, " %s", required[i])) {
			api_nomem(out);
			goto out;
		}
	}
	if (missing.len) {
		/* openQA answers this one in plain text. */
		struct buf t;

		buf_init(&t, 512);
		if (buf_printf(&t, "Error: missing parameters:%s\n", missing.data)) {
			buf_release(&t);
			api_nomem(out);
			goto out;
		}
		out->status = 400;
		out->text = buf_steal(&t);
		goto out;
	}
	status = isos_schedule(req->db, params, &resp);
	api_json(out, resp);
	if (resp)
		out->status = status;
out:
	buf_release(&missing);
	json_decref(params);
}

static void isos_show(struct api_req *req, struct api_resp *out)
{
	char msg[256];
	json_t *j;
	int rc = isos_get(req->db, req->id, params_get(&req->params, "include_job_ids") != NULL, &j, msg, sizeof(msg));

	if (rc)
		api_error_code(out, rc, msg);
	else
		api_json(out, j);
}

const struct api_route api_isos_routes[] = {
	{ "POST", "/api/v1/isos", AUTH_OPERATOR, isos_create, NULL },
	{ "GET", "/api/v1/isos/#", AUTH_OPERATOR, isos_show, NULL },
	{ NULL, NULL, AUTH_PUBLIC, NULL, NULL },
};
