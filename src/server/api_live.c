/* SPDX-License-Identifier: MIT */
/* api_live.c - the live view of a running job: viewers ask for the newest
 * frame, which marks the job watched (watch.c); the worker's status reply
 * then says "live": true and the worker sends frames inside its status
 * posts (openQA's status.screen.png, base64), stored here as
 * testresults/<id>/.live.png (a dot name: never listed or served as an
 * artefact).
 *
 *   method path                     level   what
 *   GET    /api/v1/jobs/<id>/live   public  {"job_id", "state", "watching", "frame", "frame_age_s"}
 *   GET    /tests/<id>/live.png     public  the newest frame (404 before the first), no-store
 */
#define LOG_MODULE "api"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "server/api.h"
#include "server/api_live.h"
#include "server/artefacts.h"
#include "server/db.h"
#include "server/jobs.h"
#include "server/watch.h"
#include "util/base64.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/file.h"
#include "util/log.h"
#include "util/time.h"
#include "util/banned.h" /* last: after every system header */

/* A PNG frame's largest decoded size accepted from a worker. */
#define LIVE_FRAME_MAX (4u << 20)

/* Look up the job, mark it watched while it runs; 0 or an error sent. */
static int watch(struct api_req *req, struct api_resp *out, char *state, size_t len)
{
	int rc = jobs_state_of(req->db, req->id, state, len);

	if (rc == ERR_NOT_FOUND) {
		api_error(out, 404, "Job %lld does not exist", (long long)req->id);
		return -1;
	}
	if (rc) {
		api_error(out, 500, "cannot read job %lld", (long long)req->id);
		return -1;
	}
	if (jobs_state_executing(state) && req->live)
		watch_mark(req->live, req->id, time_mono());
	return 0;
}

static void live_show(struct api_req *req, struct api_resp *out)
{
	char state[32], url[64];
	char *path;
	struct stat st;
	json_t *j;

	if (watch(req, out, state, sizeof(state)))
		return;
	path = artefact_path(req->data_dir, req->id, WATCH_FRAME_NAME);
	j = json_pack("{s:I,s:s,s:b}", "job_id", (json_int_t)req->id, "state", state, "watching",
		      jobs_state_executing(state));
	if (path && jobs_state_executing(state) && stat(path, &st) == 0) {
		snprintf(url, sizeof(url), "/tests/%lld/live.png", (long long)req->id);
		json_object_set_new(j, "frame", json_string(url));
		json_object_set_new(j, "frame_age_s", json_real(difftime(time(NULL), st.st_mtime)));
	} else {
		json_object_set_new(j, "frame", json_null());
	}
	free(path);
	api_json(out, j);
}

static void live_png(struct api_req *req, struct api_resp *out)
{
	char state[32];
	char *path;

	if (watch(req, out, state, sizeof(state)))
		return;
	path = artefact_path(req->data_dir, req->id, WATCH_FRAME_NAME);
	if (!path || !jobs_state_executing(state) || !file_exists(path)) {
		free(path);
		api_error(out, 404, "no live frame for job %lld (%s)", (long long)req->id,
			  jobs_state_executing(state) ? "none sent yet: try again in a second" : "it is not running");
		return;
	}
	out->status = 200;
	out->file = path;
	out->ctype = "image/png";
	out->hdr_name = "Cache-Control";
	snprintf(out->hdr_value, sizeof(out->hdr_value), "no-store");
}

/* Store status.screen.png (base64) as the job's live frame (file_write_all
 * replaces it atomically). */
static void store_frame(struct api_req *req, const char *b64)
{
	char *dir = artefact_path(req->data_dir, req->id, NULL);
	char *path = artefact_path(req->data_dir, req->id, WATCH_FRAME_NAME);
	struct buf png;
	int rc;

	buf_init(&png, LIVE_FRAME_MAX);
	if (!dir || !path) {
		rc = ERR_NOMEM;
	} else if ((rc = base64_decode(b64, strlen(b64), &png)) == 0 &&
		   (png.len < 8 || memcmp(png.data, "\x89PNG\r\n\x1a\n", 8))) {
		rc = ERR_PROTO;
	}
	if (rc)
		log_warn("job %lld: live frame ignored: %s", (long long)req->id,
			 rc == ERR_PROTO ? "not base64 of a PNG" : err_str(rc));
	else if ((rc = file_mkdir_p(dir, 0755)) || (rc = file_write_all(path, png.data, png.len)))
		log_warn("job %lld: cannot store the live frame: %s", (long long)req->id, err_str(rc));
	buf_release(&png);
	free(dir);
	free(path);
}

void api_live_status(struct api_req *req, const json_t *status, json_t *reply)
{
	const char *b64 = json_string_value(json_object_get(json_object_get(status, "screen"), "png"));
	bool watched = req->live && watch_active(req->live, req->id, time_mono());

	if (b64 && watched)
		store_frame(req, b64);
	json_object_set_new(reply, "live", json_boolean(watched));
}

const struct api_route api_live_routes[] = {
	{ "GET", "/api/v1/jobs/#/live", AUTH_PUBLIC, live_show, NULL },
	{ "GET", "/tests/#/live.png", AUTH_PUBLIC, live_png, NULL },
	{ NULL, NULL, 0, NULL, NULL },
};
