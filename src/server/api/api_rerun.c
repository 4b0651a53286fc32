/* SPDX-License-Identifier: MIT */
/* api_rerun.c - "re-run from here" (vigil): a new job resuming from the last
 * milestone before a module, from the disks a worker kept. The model is
 * rerun.c; the worker's side (snapshots reported with the work poll, the
 * resume in the job it gets) is in api_workers.c.
 *
 *   method path                          level     what
 *   POST   /api/v1/jobs/<id>/rerun_from  operator  module=NAME (default: the first failed module) →
 *                                                  {"id", "test_url", "resume_from", "milestone", "worker_id"};
 *                                                  resume_from null: a full re-run (no worker keeps the
 *                                                  disks, or no passed milestone before the module)
 */
#define LOG_MODULE "api"
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "server/http/api.h"
#include "server/store/jbuild.h"
#include "server/store/rerun.h"
#include "util/err.h"
#include "util/banned.h" /* last: after every system header */

static void job_rerun_from(struct api_req *req, struct api_resp *out)
{
	const char *module = params_get(&req->params, "module");
	char msg[256] = "", url[48];
	struct jbuild b = JBUILD_INIT;
	json_t *j = NULL;
	int rc;

	if (module && !*module)
		module = NULL;
	rc = rerun_create(req->db, req->id, module, (int64_t)time(NULL), req->rerun_wait_s, &j, msg, sizeof(msg));
	if (rc == ERR_NOT_FOUND) {
		api_error(out, 404, "Job %lld does not exist", (long long)req->id);
		return;
	}
	if (rc == ERR_INVALID || rc == ERR_BADSTATE) {
		api_error(out, rc == ERR_BADSTATE ? 409 : 400, "%s", msg);
		return;
	}
	if (rc) {
		api_error(out, 500, "cannot re-run job %lld", (long long)req->id);
		return;
	}
	snprintf(url, sizeof(url), "/tests/%lld", (long long)json_integer_value(json_object_get(j, "id")));
	jbuild_set(&b, j, "test_url", json_string(url));
	api_json_built(&b, out, j);
}

const struct api_route api_rerun_routes[] = {
	{ "POST", "/api/v1/jobs/#/rerun_from", AUTH_OPERATOR, job_rerun_from, NULL },
	{ NULL, NULL, AUTH_PUBLIC, NULL, NULL },
};
