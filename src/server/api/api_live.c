/* SPDX-License-Identifier: MIT */
/* api_live.c - the live view of a running job. A viewer opens the event
 * stream (livestream.c), which keeps the job watched (watch.c); the
 * worker's replies then say "live": true and it posts each new frame, the
 * runner's note (module, step, line, what) and new output lines as they
 * come (POST jobs/<id>/live, a reader: no writer token). The frame is
 * stored as testresults/<id>/.live.png (a dot name: never listed or served
 * as an artefact) and handed to the streams with the rest; the
 * housekeeping thread (api_live_tick) adds the job's state and its end.
 * openQA's worker, told livelog_start over its WebSocket while the job is
 * watched (wshub.c), sends status.screen.png (base64) and status.log
 * with its status posts: taken as a frame and output lines, and
 * status.serial_log / serial_terminal / serial_terminal_user as serial
 * output (event "serial").
 *
 *   method path                     level     what
 *   GET    /tests/<id>/streaming    public    text/event-stream (openQA's URL): events "status",
 *                                             "log", "serial", "frame", "end" (docs/design.md)
 *   POST   /api/v1/jobs/<id>/live   operator  the worker's {"frame": {"png", "seq", "t", "w"}, "module",
 *                                             "step", "line", "what", "log", "developer": the runner's
 *                                             developer state} (all optional) → {"live", "developer":
 *                                             [commands waiting, api_devmode.c], only when some wait}
 *   GET    /api/v1/jobs/<id>/live   public    {"job_id", "state", "watching", "frame", "frame_age_s", "stream",
 *                                             "viewers": the streams open}
 *   GET    /tests/<id>/live.png     public    the newest frame (404 before the first), no-store
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
#include "server/http/api.h"
#include "server/store/jbuild.h"
#include "server/api/api_live.h"
#include "server/store/artefacts.h"
#include "server/db/db.h"
#include "server/store/developer.h"
#include "server/store/jobs.h"
#include "server/api/livestream.h"
#include "server/api/watch.h"
#include "server/store/workers.h"
#include "util/base64.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/file.h"
#include "util/log.h"
#include "util/time.h"
#include "util/banned.h" /* last: after every system header */

/* A PNG frame's largest decoded size accepted from a worker. */
#define LIVE_FRAME_MAX (4u << 20)
#define LIVE_JOBS_MAX LIVESTREAM_MAX

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
	struct jbuild b = JBUILD_INIT;
	json_t *j;

	if (watch(req, out, state, sizeof(state)))
		return;
	path = artefact_path(req->data_dir, req->id, WATCH_FRAME_NAME);
	snprintf(url, sizeof(url), "/tests/%lld/streaming", (long long)req->id);
	j = json_pack("{s:I,s:s,s:b,s:s,s:I}", "job_id", (json_int_t)req->id, "state", state, "watching",
		      jobs_state_executing(state), "stream", url, "viewers",
		      (json_int_t)(req->streams ? livestream_viewers(req->streams, req->id) : 0));
	if (path && jobs_state_executing(state) && stat(path, &st) == 0) {
		snprintf(url, sizeof(url), "/tests/%lld/live.png", (long long)req->id);
		jbuild_set(&b, j, "frame", json_string(url));
		jbuild_set(&b, j, "frame_age_s", json_real(difftime(time(NULL), st.st_mtime)));
	} else {
		jbuild_set(&b, j, "frame", json_null());
	}
	free(path);
	api_json_built(&b, out, j);
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

/* Store a base64 PNG as the job's live frame (file_write_all replaces it
 * atomically). 0, or negative when it is no PNG or cannot be stored. */
static int store_frame(struct api_req *req, const char *b64)
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
	return rc;
}

/* A frame a worker sent: stored, and streamed with its times. */
static void take_frame(struct api_req *req, const json_t *frame)
{
	const char *raw = json_string_value(json_object_get(frame, "png"));
	char *b64 = NULL;
	int64_t now = (int64_t)(time_wall() * 1000);
	json_int_t t = json_integer_value(json_object_get(frame, "t"));
	json_int_t w = json_integer_value(json_object_get(frame, "w"));

	json_int_t seq = json_integer_value(json_object_get(frame, "seq"));
	size_t i, n = 0;

	/* openQA's worker sends Perl's MIME base64: lines of 76 characters. */
	if (!raw || !(b64 = malloc(strlen(raw) + 1)))
		return;
	for (i = 0; raw[i]; i++)
		if (raw[i] != '\n' && raw[i] != '\r')
			b64[n++] = raw[i];
	b64[n] = '\0';
	/* openQA's screen has no sequence number: its time then. */
	if (!store_frame(req, b64) && req->streams)
		livestream_frame(req->streams, req->id, (uint64_t)(seq > 0 ? seq : now), t > 0 ? t : now, w > 0 ? w : now,
				 b64, n);
	free(b64);
}

int api_live_status(struct api_req *req, const json_t *status, json_t *reply)
{
	const json_t *screen = json_object_get(status, "screen");
	const json_t *order = json_object_get(status, "test_order"), *res = json_object_get(status, "result"), *m;
	bool watched = req->live && watch_active(req->live, req->id, time_mono());
	size_t i;

	if (watched && json_object_get(screen, "png"))
		take_frame(req, screen);
	/* openQA's worker while its live log is on: the new output of its
	 * autoinst-log.txt as status.log.data. */
	if (watched && req->streams) {
		static const char *const serial[] = { "serial_log", "serial_terminal", "serial_terminal_user" };
		const json_t *data = json_object_get(json_object_get(status, "log"), "data");
		if (json_is_string(data) && json_string_length(data))
			livestream_log(req->streams, req->id, json_string_value(data), json_string_length(data));
		/* Its serial0 and its serial terminals' new output (openQA keeps all
		 * three in serial-terminal-live.txt): event "serial". */
		for (i = 0; i < sizeof(serial) / sizeof(serial[0]); i++) {
			data = json_object_get(json_object_get(status, serial[i]), "data");
			if (json_is_string(data) && json_string_length(data))
				livestream_serial(req->streams, req->id, json_string_value(data),
						  json_string_length(data));
		}
	}
	/* The modules and their results so far, for the streams' status. */
	if (req->streams && json_is_array(order) && livestream_watched(req->streams, req->id)) {
		struct jbuild b = JBUILD_INIT;
		json_t *mods = jbuild_take(&b, json_array(), "modules"), *f;
		json_array_foreach(order, i, m) {
			const char *name = json_string_value(json_object_get(m, "name"));
			const char *r = json_string_value(json_object_get(json_object_get(res, name ? name : ""), "result"));
			if (name && !jbuild_failed(&b))
				jbuild_append(&b, mods, json_pack("{s:s,s:s}", "name", name, "result", r ? r : "none"));
		}
		/* A list with a module missing is not streamed: the next status brings it whole. */
		if (jbuild_failed(&b))
			json_decref(mods);
		else if ((f = json_pack("{s:o}", "modules", mods))) {
			livestream_status(req->streams, req->id, f);
			json_decref(f);
		}
	}
	/* Without it the worker would stop sending frames: answer 503 instead. */
	return json_object_set_new(reply, "live", json_boolean(watched)) ? ERR_NOMEM : 0;
}

/* POST jobs/<id>/live from the job's worker. */
static void live_post(struct api_req *req, struct api_resp *out)
{
	static const char *const strs[] = { "module", "what" }, *const ints[] = { "step", "line" };
	const json_t *body = req->json, *log = json_object_get(body, "log");
	int64_t worker = 0;
	json_t *note;
	bool watched;
	size_t i;
	int rc = workers_job_holder(req->db, req->id, &worker);

	if (rc == ERR_NOT_FOUND || (!rc && worker == 0)) {
		api_error(out, 404, "Job %lld does not exist or is not running on a worker", (long long)req->id);
		return;
	}
	if (rc) {
		api_error(out, 500, "cannot read job %lld", (long long)req->id);
		return;
	}
	watched = req->live && watch_active(req->live, req->id, time_mono());
	/* Developer mode's state, streamed as the status' "developer" field. */
	if (json_is_object(json_object_get(body, "developer")) && req->developer) {
		json_t *f = json_pack("{s:O}", "developer", json_object_get(body, "developer"));
		developer_set_state(req->developer, req->id, json_object_get(body, "developer"));
		if (f && req->streams)
			livestream_status(req->streams, req->id, f);
		json_decref(f);
	}
	if (watched && json_is_object(body) && req->streams) {
		if (json_is_object(json_object_get(body, "frame")))
			take_frame(req, json_object_get(body, "frame"));
		struct jbuild b = JBUILD_INIT;
		note = json_object();
		for (i = 0; note && i < 2; i++) {
			const json_t *v = json_object_get(body, strs[i]);
			if (json_is_string(v) && json_string_length(v) <= 256)
				jbuild_set_ref(&b, note, strs[i], (json_t *)v);
			v = json_object_get(body, ints[i]);
			if (json_is_integer(v))
				jbuild_set_ref(&b, note, ints[i], (json_t *)v);
		}
		/* A note missing its module or step is not streamed (the next one comes soon). */
		if (json_object_size(note) && !jbuild_failed(&b))
			livestream_status(req->streams, req->id, note);
		json_decref(note);
		if (json_is_string(log))
			livestream_log(req->streams, req->id, json_string_value(log), json_string_length(log));
	}
	api_json(out, json_pack("{s:b,s:o*}", "live", watched, "developer",
				req->developer ? developer_take(req->developer, req->id) : NULL));
}

/* GET /tests/<id>/streaming: the event stream, off the handler threads. */
static void live_stream(struct api_req *req, struct api_resp *out)
{
	json_t *st = NULL;
	const char *state;
	char *path = NULL;
	int rc = jobs_status_json(req->db, req->id, &st);

	if (rc == ERR_NOT_FOUND) {
		api_error(out, 404, "Job %lld does not exist", (long long)req->id);
		return;
	}
	if (rc || !req->streams || !req->con) {
		api_error(out, 500, "cannot read job %lld", (long long)req->id);
		json_decref(st);
		return;
	}
	rc = livestream_open(req->streams, req->id, req->client, req->con, &out->stream);
	if (rc) {
		if (rc == ERR_TOO_BIG)
			api_error(out, 429, "too many live streams from your address (at most %d): close some",
				  LIVESTREAM_PER_CLIENT);
		else
			api_error(out, 503, "too many live streams (at most %d): try again later", LIVESTREAM_MAX);
		json_decref(st);
		return;
	}
	out->status = 200;
	state = json_string_value(json_object_get(st, "state"));
	if (jobs_state_executing(state)) {
		watch_mark(req->live, req->id, time_mono());
		/* A new viewer sees the last frame stored at once, its age in t. */
		path = artefact_path(req->data_dir, req->id, WATCH_FRAME_NAME);
		if (path && !livestream_has_frame(req->streams, req->id)) {
			struct buf png;
			struct stat sb;
			char *b64;
			buf_init(&png, LIVE_FRAME_MAX);
			if (stat(path, &sb) == 0 && file_read_all(path, &png) == 0 && png.len &&
			    (b64 = malloc((png.len + 2) / 3 * 4 + 1))) {
				int64_t t = (int64_t)sb.st_mtim.tv_sec * 1000 + sb.st_mtim.tv_nsec / 1000000;
				int n = EVP_EncodeBlock((unsigned char *)b64, (const unsigned char *)png.data, (int)png.len);
				livestream_frame(req->streams, req->id, 0, t, t, b64, n > 0 ? (size_t)n : 0);
				free(b64);
			}
			buf_release(&png);
		}
	}
	if (req->developer && jobs_state_executing(state)) {
		json_t *dev = developer_state(req->developer, req->id), *f = dev ? json_pack("{s:o}", "developer", dev) : NULL;
		if (f)
			livestream_status(req->streams, req->id, f);
		json_decref(f);
	}
	api_live_state(req->streams, req->id, st);
	free(path);
	json_decref(st);
}

void api_live_state(struct livestream *h, int64_t job, const json_t *status)
{
	const char *state = json_string_value(json_object_get(status, "state"));
	json_t *f = json_pack("{s:s?,s:O?}", "state", state, "result", json_object_get(status, "result"));

	if (!f)
		return;
	livestream_status(h, job, f);
	/* Done or cancelled: nothing more will come. */
	if (state && (!strcmp(state, "done") || !strcmp(state, "cancelled")))
		livestream_end(h, job, f);
	json_decref(f);
}

void api_live_tick(struct db *db, struct livestream *h, struct watch_map *watched)
{
	int64_t ids[LIVE_JOBS_MAX];
	size_t n = livestream_jobs(h, ids, LIVE_JOBS_MAX), i;
	double now = time_mono();

	for (i = 0; i < n; i++) {
		json_t *st = NULL;
		int rc = jobs_status_json(db, ids[i], &st);
		if (rc == ERR_NOT_FOUND) {
			json_t *f = json_pack("{s:s}", "state", "deleted");
			livestream_end(h, ids[i], f);
			json_decref(f);
			continue;
		}
		if (rc)
			continue;
		if (jobs_state_executing(json_string_value(json_object_get(st, "state"))))
			watch_mark(watched, ids[i], now);
		api_live_state(h, ids[i], st);
		json_decref(st);
	}
	livestream_sweep(h, now);
}

const struct api_route api_live_routes[] = {
	{ "GET", "/tests/#/streaming", AUTH_PUBLIC, live_stream, NULL },
	{ "POST", "/api/v1/jobs/#/live", AUTH_OPERATOR, live_post, NULL },
	{ "GET", "/api/v1/jobs/#/live", AUTH_PUBLIC, live_show, NULL },
	{ "GET", "/tests/#/live.png", AUTH_PUBLIC, live_png, NULL },
	{ NULL, NULL, 0, NULL, NULL },
};
