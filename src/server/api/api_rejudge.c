/* SPDX-License-Identifier: MIT */
/* api_rejudge.c - re-judging without re-running (vigil's own routes; the
 * model is rejudge.c). A re-judge reads and computes only, so it runs
 * beside the writer (server.c's route_writes lets it) and changes no
 * stored result; its answers are kept in memory per job.
 *
 *   method path                                   level     what
 *   POST   /api/v1/jobs/<id>/rejudge               operator  judge the job's failed screen checks and those
 *                                                            of its build's failed jobs asking the same tags
 *                                                            against the stored screenshots with the
 *                                                            distribution's needles now → {"job_id", "build",
 *                                                            "tags", "needles", "ms", "stats", "jobs": [{"id",
 *                                                            "test", "machine", "arch", "result", "needs_review",
 *                                                            "steps": [...], "would_pass", "still_failing",
 *                                                            "verdict", "summary", "failed_module",
 *                                                            "failed_step"}]} (see rejudge.h)
 *   GET    /api/v1/jobs/<id>/rejudge               public    the job's entry of the last re-judge that
 *                                                            covered it, with "time"; 404 when none since
 *                                                            the server started
 *   GET    /tests/<id>/images/diff/<shot>.png      public    ?needle=NAME&area=N: the difference heat-map of
 *                                                            match area N (0-based) of the distribution's
 *                                                            needle NAME as it is now on the screenshot
 */
#define LOG_MODULE "api"
#include <string.h>
#include "server/http/api.h"
#include "server/db/db.h"
#include "server/store/rejudge.h"
#include "util/err.h"
#include "util/log.h"
#include "util/str.h"
#include "util/banned.h" /* last: after every system header */

static void rejudge_post(struct api_req *req, struct api_resp *out)
{
	char msg[512], now[DB_TIME_LEN];
	json_t *res = NULL, *job;
	size_t i;
	int rc = rejudge_build(req->db, req->data_dir, req->id, &res, msg, sizeof(msg));

	if (rc) {
		if (rc == ERR_BADSTATE)
			api_error(out, 409, "%s", msg);
		else
			api_error_code(out, rc, msg);
		return;
	}
	db_now(now);
	json_array_foreach(json_object_get(res, "jobs"), i, job)
		if (req->rejudge && rejudge_store_put(req->rejudge, job, now))
			log_warn("job %lld: the re-judge could not be kept", (long long)req->id);
	api_json(out, res);
}

static void rejudge_get(struct api_req *req, struct api_resp *out)
{
	json_t *last = req->rejudge ? rejudge_store_get(req->rejudge, req->id) : NULL;

	if (!last) {
		api_error(out, 404, "job %lld has not been re-judged since the server started", (long long)req->id);
		return;
	}
	api_json(out, last);
}

static void heatmap_get(struct api_req *req, struct api_resp *out)
{
	const char *needle = params_get(&req->params, "needle"), *area = params_get(&req->params, "area");
	char msg[512], *path = NULL;
	long k = 0;
	int rc;

	if (!needle || (area && str_to_long(area, &k))) {
		api_error(out, 400, "want ?needle=NAME&area=N (N: the match area, from 0)");
		return;
	}
	rc = rejudge_heatmap(req->db, req->data_dir, req->id, req->name ? req->name : "", needle, k, &path, msg,
			     sizeof(msg));
	if (rc) {
		api_error_code(out, rc, msg);
		return;
	}
	out->status = 200;
	out->file = path;
	out->ctype = "image/png";
}

const struct api_route api_rejudge_routes[] = {
	{ "POST", "/api/v1/jobs/#/rejudge", AUTH_OPERATOR, rejudge_post, NULL },
	{ "GET", "/api/v1/jobs/#/rejudge", AUTH_PUBLIC, rejudge_get, NULL },
	{ "GET", "/tests/#/images/diff/*", AUTH_PUBLIC, heatmap_get, NULL },
	{ NULL, NULL, AUTH_PUBLIC, NULL, NULL },
};
