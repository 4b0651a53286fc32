/* SPDX-License-Identifier: MIT */
/* api_live.c - the live view of a running job: viewers ask for the newest
 * frame, which marks the job watched (live.c); the worker's status reply
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
#include <openssl/evp.h>
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
#include "server/live.h"
#include "util/err.h"
#include "util/log.h"
#include "util/util.h"

/* A PNG frame's largest decoded size accepted from a worker. */
#define LIVE_FRAME_MAX (4u << 20)

static bool running_state(const char *s)
{
	return s && (!strcmp(s, "assigned") || !strcmp(s, "setup") || !strcmp(s, "running") ||
		     !strcmp(s, "uploading"));
}

/* The job's state into buf; 0 or ERR_NOT_FOUND / ERR_IO. */
static int job_state(struct db *db, int64_t id, char *buf, size_t len)
{
	struct db_stmt *st;
	int rc;

	if ((rc = db_prepare(db, &st, "SELECT state FROM jobs WHERE id = ?", "i", id)))
		return rc;
	rc = db_step(st);
	if (rc == 1)
		snprintf(buf, len, "%s", db_col_text(st, 0));
	db_finalize(st);
	return rc == 1 ? 0 : rc == 0 ? ERR_NOT_FOUND : rc;
}

/* Look up the job, mark it watched while it runs; 0 or an error sent. */
static int watch(struct api_req *req, struct api_resp *out, char *state, size_t len)
{
	int rc = job_state(req->db, req->id, state, len);

	if (rc == ERR_NOT_FOUND) {
		api_error(out, 404, "Job %lld does not exist", (long long)req->id);
		return -1;
	}
	if (rc) {
		api_error(out, 500, "cannot read job %lld", (long long)req->id);
		return -1;
	}
	if (running_state(state) && req->live)
		live_watch(req->live, req->id, time_mono());
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
	path = artefact_path(req->data_dir, req->id, LIVE_FRAME_NAME);
	j = json_pack("{s:I,s:s,s:b}", "job_id", (json_int_t)req->id, "state", state, "watching",
		      running_state(state));
	if (path && running_state(state) && stat(path, &st) == 0) {
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
	path = artefact_path(req->data_dir, req->id, LIVE_FRAME_NAME);
	if (!path || !running_state(state) || !file_exists(path)) {
		free(path);
		api_error(out, 404, "no live frame for job %lld (%s)", (long long)req->id,
			  running_state(state) ? "none sent yet: try again in a second" : "it is not running");
		return;
	}
	out->status = 200;
	out->file = path;
	out->ctype = "image/png";
	out->hdr_name = "Cache-Control";
	snprintf(out->hdr_value, sizeof(out->hdr_value), "no-store");
}

/* Store status.screen.png (base64) as the job's live frame, atomically. */
static void store_frame(struct api_req *req, const char *b64)
{
	size_t n = strlen(b64), cap;
	unsigned char *png = NULL;
	char *dir = NULL, *path = NULL, *tmp = NULL;
	int len;

	if (n == 0 || n % 4 || n / 4 * 3 > LIVE_FRAME_MAX) {
		log_warn("job %lld: live frame of %zu base64 bytes ignored", (long long)req->id, n);
		return;
	}
	cap = n / 4 * 3 + 1;
	png = malloc(cap);
	path = artefact_path(req->data_dir, req->id, LIVE_FRAME_NAME);
	tmp = artefact_path(req->data_dir, req->id, LIVE_FRAME_NAME ".tmp");
	dir = artefact_path(req->data_dir, req->id, NULL);
	if (!png || !path || !tmp || !dir)
		goto out;
	len = EVP_DecodeBlock(png, (const unsigned char *)b64, (int)n);
	if (len < 8 || memcmp(png, "\x89PNG\r\n\x1a\n", 8)) {
		log_warn("job %lld: live frame is not base64 of a PNG: ignored", (long long)req->id);
		goto out;
	}
	/* EVP_DecodeBlock counts the '=' padding as zero bytes. */
	if (b64[n - 1] == '=')
		len--;
	if (b64[n - 2] == '=')
		len--;
	if (mkdir_p(dir, 0755) ||
	    file_write_all(tmp, png, (size_t)len) || rename(tmp, path) != 0) {
		log_warn("job %lld: cannot store the live frame: %s", (long long)req->id, strerror(errno));
		unlink(tmp);
	}
out:
	free(png);
	free(dir);
	free(path);
	free(tmp);
}

void api_live_status(struct api_req *req, const json_t *status, json_t *reply)
{
	const char *b64 = json_string_value(json_object_get(json_object_get(status, "screen"), "png"));
	bool watched = req->live && live_watched(req->live, req->id, time_mono());

	if (b64 && watched)
		store_frame(req, b64);
	json_object_set_new(reply, "live", json_boolean(watched));
}

const struct api_route api_live_routes[] = {
	{ "GET", "/api/v1/jobs/#/live", AUTH_PUBLIC, live_show, NULL },
	{ "GET", "/tests/#/live.png", AUTH_PUBLIC, live_png, NULL },
	{ NULL, NULL, 0, NULL, NULL },
};
