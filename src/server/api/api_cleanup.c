/* SPDX-License-Identifier: MIT */
/* api_cleanup.c - retention seen from HTTP: what a cleanup would remove,
 * and running one now. The rules and the removal are retention.c; the
 * server also runs it every --cleanup-interval seconds (server.c).
 *
 *   method path               level   what
 *   GET    /api/v1/cleanup    admin   the plan: jobs, logs, assets to remove, each with its reason;
 *                                     ?at=EPOCH previews a later day
 *   POST   /api/v1/cleanup    admin   remove what the plan lists now; the plan with what failed
 */
#define LOG_MODULE "api"
#include <stdio.h>
#include <time.h>
#include "server/http/api.h"
#include "server/store/retention.h"
#include "util/err.h"
#include "util/str.h"
#include "util/banned.h" /* last: after every system header */

static void get_cleanup(struct api_req *req, struct api_resp *out)
{
	const char *at = params_get(&req->params, "at");
	long now = (long)time(NULL);
	json_t *plan;
	int rc;

	if (at && (str_to_long(at, &now) || now < 0)) {
		api_error(out, 400, "Erroneous parameters (at must be a time in seconds since 1970)");
		return;
	}
	if ((rc = retention_plan(req->db, req->data_dir, (int64_t)now, &plan))) {
		if (rc == ERR_NOMEM)
			api_nomem(out);
		else
			api_error(out, 500, "cannot plan the cleanup");
		return;
	}
	api_json(out, plan);
}

static void post_cleanup(struct api_req *req, struct api_resp *out)
{
	json_t *done;
	int rc;

	if ((rc = retention_run(req->db, req->data_dir, (int64_t)time(NULL), &done))) {
		if (rc == ERR_NOMEM) /* a plan that could not be made removed nothing */
			api_nomem(out);
		else
			api_error(out, 500, "cannot run the cleanup");
		return;
	}
	api_json(out, done);
}

const struct api_route api_cleanup_routes[] = {
	{ "GET", "/api/v1/cleanup", AUTH_ADMIN, get_cleanup, NULL },
	{ "POST", "/api/v1/cleanup", AUTH_ADMIN, post_cleanup, NULL },
	{ NULL, NULL, AUTH_PUBLIC, NULL, NULL },
};
