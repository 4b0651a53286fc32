/* SPDX-License-Identifier: MIT */
/* api_review.c - the review routes: the review queue, a job's review facts
 * (failure reason, RETRY runs), openQA's investigation of a failed job and
 * (the carry-over switch: below). Parses and answers; the work is
 * review.c and investigate.c.
 *   GET /api/v1/review?limit=&after=      the queue, newest first (keyset paging)
 *   GET /api/v1/jobs/<id>/review          {"todo", "reason", "restarts", "retry", "runs", "retry_verdict"}
 *   GET /tests/<id>/investigation_ajax    openQA's investigation hash (investigate.h)
 * (openQA's carry_over_bugrefs is set by PUT /api/v1/job_groups/<id>, api_tables.c) */
#define LOG_MODULE "api"
#include <stdio.h>
#include <string.h>
#include "server/http/api.h"
#include "server/store/investigate.h"
#include "server/store/review.h"
#include "util/err.h"
#include "util/str.h"
#include "util/banned.h" /* last: after every system header */

static void review_queue(struct api_req *req, struct api_resp *out)
{
	const char *lim = params_get(&req->params, "limit"), *after = params_get(&req->params, "after");
	long limit = 50;
	int64_t from = 0;
	json_t *page;
	int rc;

	if (lim && (str_to_long(lim, &limit) || limit < 1 || limit > REVIEW_PAGE_MAX)) {
		api_error(out, 400, "limit must be a count from 1 to %d", REVIEW_PAGE_MAX);
		return;
	}
	if (after && *after && api_parse_id(after, &from)) {
		api_error(out, 400, "after must be a job id");
		return;
	}
	rc = review_list(req->db, from, limit, &page);
	if (rc)
		api_error_code(out, rc, "cannot read the review queue");
	else
		api_json(out, page);
}

/* What a job route answers: review_job_json or investigate_job. */
typedef int (*job_view_fn)(struct db *db, const char *data_dir, int64_t job_id, json_t **out);
static const job_view_fn view_review = review_job_json, view_investigation = investigate_job;

static void job_view(struct api_req *req, struct api_resp *out)
{
	job_view_fn fn = *(const job_view_fn *)req->arg;
	json_t *j;
	int rc = fn(req->db, req->data_dir, req->id, &j);

	if (rc == ERR_NOT_FOUND)
		api_error(out, 404, "Job %lld does not exist", (long long)req->id);
	else if (rc == ERR_NOMEM)
		api_nomem(out);
	else if (rc)
		api_error(out, 500, "cannot read job %lld: %s", (long long)req->id, err_str(rc));
	else
		api_json(out, j);
}

const struct api_route api_review_routes[] = {
	{ "GET", "/api/v1/review", AUTH_PUBLIC, review_queue, NULL },
	{ "GET", "/api/v1/jobs/#/review", AUTH_PUBLIC, job_view, &view_review },
	{ "GET", "/tests/#/investigation_ajax", AUTH_PUBLIC, job_view, &view_investigation },
	{ NULL, NULL, AUTH_PUBLIC, NULL, NULL },
};
