/* SPDX-License-Identifier: MIT */
/* api_needles.c - the needles' last matches for /admin/needles (vigil's
 * JSON; openQA serves the same facts as a DataTables answer at
 * /admin/needles/ajax). The model is needles.c; the rows are recorded
 * when a job's set_done arrives (api_workers.c).
 *
 *   method path              level   what
 *   GET    /api/v1/needles   public  sort=last_match|last_seen|name, limit (1..1000, default 100),
 *                                    after=<"next" of the previous page>, search=<part of the name>
 *                                    → {"needles": [{id, distri, name, file, last_match,
 *                                    last_match_job, last_match_module, last_match_step, last_seen,
 *                                    last_seen_job, last_seen_module, last_seen_step}], "next": cursor|null}
 */
#define LOG_MODULE "api"
#include <string.h>
#include "server/http/api.h"
#include "server/store/needles.h"
#include "util/err.h"
#include "util/str.h"
#include "util/banned.h" /* last: after every system header */

static void needles_get(struct api_req *req, struct api_resp *out)
{
	const char *s = params_get(&req->params, "sort"), *lim = params_get(&req->params, "limit");
	enum needles_sort sort = NEEDLES_BY_LAST_MATCH;
	long limit = NEEDLES_LIST_DEFAULT_LIMIT;
	char msg[256];
	json_t *list;
	int rc;

	if (s && !strcmp(s, "last_seen"))
		sort = NEEDLES_BY_LAST_SEEN;
	else if (s && !strcmp(s, "name"))
		sort = NEEDLES_BY_NAME;
	else if (s && *s && strcmp(s, "last_match")) {
		api_error(out, 400, "sort '%s': expected last_match, last_seen or name", s);
		return;
	}
	if (lim && (str_to_long(lim, &limit) || limit <= 0 || limit > NEEDLES_LIST_MAX_LIMIT)) {
		api_error(out, 400, "limit '%s': expected 1..%d", lim, NEEDLES_LIST_MAX_LIMIT);
		return;
	}
	rc = needles_list(req->db, sort, params_get(&req->params, "after"), params_get(&req->params, "search"), limit,
			  &list, msg, sizeof(msg));
	if (rc)
		api_error_code(out, rc, rc == ERR_INVALID ? msg : "cannot read the needles");
	else
		api_json(out, list);
}

const struct api_route api_needles_routes[] = {
	{ "GET", "/api/v1/needles", AUTH_PUBLIC, needles_get, NULL },
	{ NULL, NULL, AUTH_PUBLIC, NULL, NULL },
};
