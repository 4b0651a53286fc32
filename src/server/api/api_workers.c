/* SPDX-License-Identifier: MIT */
/* api_workers.c - the worker protocol routes: registration, the long poll
 * for work, job status, artefact upload, set_done, artefact download and
 * test distribution archives. The model is workers.c, sched.c, artefacts.c
 * and distri.c.
 *
 *   method path                               level     what
 *   POST   /api/v1/workers                    operator  register host, instance, worker_class, cpu_arch, mem_max
 *                                                       → {"id"} (openQA)
 *   GET    /api/v1/workers                    public    {"workers": [...]} (openQA: properties WORKER_CLASS,
 *                                                       CPU_ARCH, MEM_MAX; vigil adds "snapshots":
 *                                                       the jobs whose disks each keeps)
 *   GET    /api/v1/workers/<id>/work?timeout=S operator long poll (vigil): {"job": {...}} or {"job": null}
 *                                                       after S s (default 30, at most 60); a job reserved
 *                                                       for it with its parallel cluster first (sched.c);
 *                                                       snapshots=ID,...
 *                                                       the jobs whose disks the worker keeps (rerun.c); a
 *                                                       re-run pinned to it comes with "resume": {"module",
 *                                                       "job_id"}
 *   POST   /api/v1/jobs/<id>/status           operator  JSON {"status": {worker_id, test_order, result,
 *                                                       uploading}} → {"result": 1, "command": "cancel"|...} (openQA)
 *   POST   /api/v1/jobs/<id>/artefact?file=N  operator  raw body (streamed to disk) stored as
 *                                                       testresults/<id>/N → "OK" (vigil; openQA sends multipart);
 *                                                       with thumb=1 a screenshot's thumbnail (.thumbs/N, N a .png),
 *                                                       with ulog=1 an uploaded log (ulogs/N), as openQA's flags;
 *                                                       with asset=public|private: factory/<type>/N →
 *                                                       {"status": "ok", "id", "type", "name"};
 *                                                       multipart with asset=: one chunk of openQA's
 *                                                       chunked upload (oqcompat_chunk.c) → {"status": "ok"}
 *   POST   /api/v1/jobs/<id>/set_done         operator  result, reason, worker_id → {"result", "reason"} (openQA)
 *   GET    /tests/<id>/file/<name>            public    an artefact's bytes, else the uploaded log's (openQA)
 *   GET    /tests/<id>/images/<name>.png      public    a screenshot (openQA)
 *   GET    /tests/<id>/images/thumb/<name>.png public   its thumbnail; the screenshot itself for a job
 *                                                       whose worker sent none (openQA, less the fallback)
 *   GET    /api/v1/distributions/<name>       public    {"name", "hash", "git_hash"} of DATA/tests/<name> (vigil)
 *   GET    /api/v1/distributions/<name>/archive operator its tar, header X-Vigil-Hash (vigil)
 */
#define LOG_MODULE "api"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>
#include "server/http/api.h"
#include "server/store/jbuild.h"
#include "server/store/locks.h"
#include "server/api/api_live.h"
#include "server/store/artefacts.h"
#include "server/store/assets.h"
#include "server/db/db.h"
#include "server/store/distri.h"
#include "server/store/jobs.h"
#include "server/store/needles.h"
#include "server/store/rerun.h"
#include "server/store/review.h"
#include "server/sched/sched.h"
#include "server/store/workers.h"
#include "server/api/wshub.h"
#include "server/oqcompat/oqcompat.h"
#include "util/err.h"
#include "util/file.h"
#include "util/log.h"
#include "util/path.h"
#include "util/str.h"
#include "util/time.h"
#include "util/banned.h" /* last: after every system header */

#define WORK_POLL_DEFAULT_S 30
#define WORK_POLL_MAX_S 60

static int64_t now_s(void)
{
	return (int64_t)time(NULL);
}

/* Worker routes act only for the key the worker registered with: 0, or
 * 403 (or 500) set in out. job: req->id is a job (else a worker). */
static int key_may_act(struct api_req *req, struct api_resp *out, bool job)
{
	char msg[256];
	int rc = job ? workers_job_key_check(req->db, req->id, req->key, msg, sizeof(msg))
		     : workers_key_check(req->db, req->id, req->key, msg, sizeof(msg));

	if (rc == ERR_INVALID) {
		log_warn("%s %s refused: %s", req->method, req->path, msg);
		api_error(out, 403, "%s", msg);
		return -1;
	}
	if (rc && rc != ERR_NOT_FOUND) {
		api_error(out, 500, "cannot read the workers");
		return -1;
	}
	return 0;
}

static void worker_register(struct api_req *req, struct api_resp *out)
{
	const char *host = params_get(&req->params, "host");
	const char *inst = params_get(&req->params, "instance");
	const char *cls = params_get(&req->params, "worker_class");
	const char *wsv, *arch, *mem;
	char wsbuf[32] = "", membuf[32] = "", bound[64];
	int64_t id;
	long n = 0, mem_max = -1;
	int rc;

	if (req->json) {
		host = host ? host : json_string_value(json_object_get(req->json, "host"));
		cls = cls ? cls : json_string_value(json_object_get(req->json, "worker_class"));
		if (!inst && json_is_integer(json_object_get(req->json, "instance")))
			n = (long)json_integer_value(json_object_get(req->json, "instance"));
	}
	if (!host || !*host) {
		api_error(out, 400, "Erroneous parameters (host missing)");
		return;
	}
	if (strlen(host) > LIMIT_WORKER_HOST || (cls && strlen(cls) > LIMIT_WORKER_CLASS)) {
		api_error(out, 400, "Erroneous parameters (%s over %d bytes)",
			  strlen(host) > LIMIT_WORKER_HOST ? "host" : "worker_class",
			  strlen(host) > LIMIT_WORKER_HOST ? LIMIT_WORKER_HOST : LIMIT_WORKER_CLASS);
		return;
	}
	/* openQA's worker: it holds a WebSocket for its jobs (wshub.c). */
	wsv = params_get(&req->params, "websocket_api_version");
	if (!wsv && req->json) {
		const json_t *v = json_object_get(req->json, "websocket_api_version");
		if (json_is_integer(v))
			snprintf(wsbuf, sizeof(wsbuf), "%lld", (long long)json_integer_value(v));
		else if (json_is_string(v))
			snprintf(wsbuf, sizeof(wsbuf), "%s", json_string_value(v));
		wsv = wsbuf[0] ? wsbuf : NULL;
	}
	if (wsv && strcmp(wsv, "1")) {
		api_error(out, 426, "Incompatible websocket API version");
		return;
	}
	if (inst && (str_to_long(inst, &n) || n < 0)) {
		api_error(out, 400, "Erroneous parameters (instance '%s' is not a number)", inst);
		return;
	}
	/* Another key may not take a worker over; an admin key may. */
	if (!workers_bound_key(req->db, host, n, bound, sizeof(bound)) && bound[0] &&
	    (!req->key || strcmp(bound, req->key)) && req->level < AUTH_ADMIN) {
		api_error(out, 403, "worker %s:%ld is registered with another API key: only that key (or an admin key) "
			  "may register it again", host, n);
		return;
	}
	/* openQA requires cpu_arch and mem_max; vigil takes them when given. */
	arch = params_get(&req->params, "cpu_arch");
	mem = params_get(&req->params, "mem_max");
	if (req->json) {
		const json_t *v = json_object_get(req->json, "mem_max");
		arch = arch ? arch : json_string_value(json_object_get(req->json, "cpu_arch"));
		if (!mem && json_is_integer(v))
			snprintf(membuf, sizeof(membuf), "%lld", (long long)json_integer_value(v));
		else if (!mem && json_is_string(v))
			snprintf(membuf, sizeof(membuf), "%.30s", json_string_value(v));
		mem = mem ? mem : membuf[0] ? membuf : NULL;
	}
	if (arch && (!*arch || strlen(arch) > WORKERS_CPU_ARCH_MAX)) {
		api_error(out, 400, "Erroneous parameters (cpu_arch: 1..%d characters)", WORKERS_CPU_ARCH_MAX);
		return;
	}
	if (mem && (str_to_long(mem, &mem_max) || mem_max < 0)) {
		api_error(out, 400, "Erroneous parameters (mem_max '%s' is not a number of MiB)", mem);
		return;
	}
	rc = workers_register(req->db, host, n, cls, now_s(), &id);
	if (!rc)
		rc = workers_set_key(req->db, id, req->key);
	if (!rc)
		rc = workers_set_caps(req->db, id, arch, mem ? (int64_t)mem_max : -1);
	if (rc) {
		api_error(out, 500, "Failed: %s", db_errmsg(req->db));
		return;
	}
	if (req->wshub)
		wshub_expect(req->wshub, id, wsv != NULL);
	/* openQA's worker gets jobs only over its WebSocket: offline until it connects. */
	if (wsv && workers_set_error(req->db, id, "no WebSocket connection yet (/api/v1/ws/<id>)"))
		log_warn("worker %lld: state not recorded: %s", (long long)id, db_errmsg(req->db));
	api_json(out, json_pack("{s:I,s:i}", "id", (json_int_t)id, "service_port_delta", 2));
}

static void workers_list(struct api_req *req, struct api_resp *out)
{
	api_json(out, workers_list_all(req->db, now_s(), req->worker_timeout_s, req->wshub ? wshub_missing_cb : NULL,
				       req->wshub));
}

static void worker_work(struct api_req *req, struct api_resp *out)
{
	const char *t = params_get(&req->params, "timeout");
	long timeout = WORK_POLL_DEFAULT_S;
	int64_t job_id;
	json_t *job;
	int rc;

	if (t && (str_to_long(t, &timeout) || timeout < 0 || timeout > WORK_POLL_MAX_S)) {
		api_error(out, 400, "timeout '%s': expected 0..%d seconds", t, WORK_POLL_MAX_S);
		return;
	}
	if (key_may_act(req, out, false))
		return;
	/* Seen; asking anew (not a parked poll handled again), its error cleared too. */
	rc = *req->poll_deadline_ms == 0 ? workers_seen_asking(req->db, req->id, now_s()) :
		workers_seen(req->db, req->id, now_s());
	if (rc == ERR_NOT_FOUND) {
		api_error(out, 404, "worker %lld is not registered", (long long)req->id);
		return;
	}
	/* It asks for work the vigil way: it needs no WebSocket. */
	if (req->wshub)
		wshub_expect(req->wshub, req->id, false);
	if (*req->poll_deadline_ms == 0) {
		const char *held = params_get(&req->params, "snapshots");
		int n = 0;
		char reason[128];
		if (held && rerun_record_held(req->db, req->id, held))
			log_warn("worker %lld: snapshots '%s' not recorded", (long long)req->id, held);
		/* A worker asking for work holds none: whatever the database still
		 * gives it was lost on the way (a crash between jobs), except a
		 * job reserved for it with its parallel cluster, not handed yet. */
		snprintf(reason, sizeof(reason), "abandoned: worker %lld asked for new work", (long long)req->id);
		(void)workers_abandon_jobs(req->db, req->id, reason, true, &n);
		*req->poll_deadline_ms = time_mono_ms() + timeout * 1000;
	}
	rc = sched_pick(req->db, req->id, &job_id);
	if (rc == 0) {
		struct jbuild b = JBUILD_INIT;
		char *module = NULL;
		int64_t from = 0;
		if (jobs_to_json(req->db, job_id, false, &job)) {
			api_error(out, 500, "cannot read job %lld", (long long)job_id);
			return;
		}
		if (!rerun_resume_of(req->db, job_id, &module, &from) && module)
			jbuild_set(&b, job, "resume", json_pack("{s:s,s:I}", "module", module, "job_id", (json_int_t)from));
		/* JOBTOKEN, as openQA: the job's test process signs its lock
		 * calls with it (locks.c), and its command server's URLs. */
		{
			char token[LOCKS_TOKEN_LEN + 1];
			json_t *settings = json_object_get(job, "settings");
			if (locks_token_issue(req->db, job_id, token) == 0 && json_is_object(settings))
				jbuild_set(&b, settings, "JOBTOKEN", json_string(token));
			else
				log_warn("job %lld: no job token issued: %s", (long long)job_id, db_errmsg(req->db));
		}
		free(module);
		rc = sched_job_network(req->db, job_id, json_object_get(job, "settings"), req->port);
		if (rc == ERR_NOMEM)
			jbuild_take(&b, NULL, "NICVLAN");
		else if (rc)
			log_warn("job %lld: no network allocated: %s", (long long)job_id, db_errmsg(req->db));
		/* A job sent without its resume point or token would run wrong:
		 * 503, and the job, assigned already, is abandoned as any a
		 * worker does not take up. */
		api_json_built(&b, out, json_pack("{s:o}", "job", job));
		return;
	}
	if (rc == ERR_NOMEM) {
		api_nomem(out); /* no job assigned: the next poll tries again */
		return;
	}
	if (rc != ERR_NOT_FOUND) {
		api_error(out, 500, "scheduler: %s", db_errmsg(req->db));
		return;
	}
	if (!req->stopping && time_mono_ms() < *req->poll_deadline_ms) {
		out->suspend = true;
		return;
	}
	api_json(out, json_pack("{s:n}", "job"));
}

/* Answers a failed job update: unknown job 404, bad input 400 (msg),
 * else 500 naming the verb. Returns 1 when an error was sent. */
static int reply_job_error(struct api_req *req, struct api_resp *out, int rc, const char *msg,
			   const char *verb)
{
	if (rc == ERR_NOT_FOUND)
		api_error(out, 404, "Job %lld does not exist", (long long)req->id);
	else if (rc == ERR_INVALID)
		api_error(out, 400, "%s", msg);
	else if (rc)
		api_error(out, 500, "cannot %s job %lld: %s", verb, (long long)req->id, db_errmsg(req->db));
	return rc != 0;
}

static void job_status_post(struct api_req *req, struct api_resp *out)
{
	const json_t *status = json_object_get(req->json, "status");
	const char *cmd = NULL;
	char msg[256], res[24] = "none";
	json_t *outcome;
	int rc;

	if (key_may_act(req, out, true))
		return;
	if (!json_is_object(status)) {
		api_error(out, 400, "No status information provided");
		return;
	}
	if (json_is_integer(json_object_get(status, "worker_id")))
		(void)workers_seen(req->db, json_integer_value(json_object_get(status, "worker_id")), now_s());
	rc = workers_job_status(req->db, req->id, status, &cmd, msg, sizeof(msg));
	if (reply_job_error(req, out, rc, msg, "update"))
		return;
	if (!jobs_outcome_json(req->db, req->id, &outcome)) {
		snprintf(res, sizeof(res), "%s", json_string_value(json_object_get(outcome, "result")));
		json_decref(outcome);
	}
	/* openQA's worker sends the steps inside the status: vigil's result-<module>.json. */
	if ((rc = oqcompat_store_details(req->data_dir, req->id, status)))
		log_warn("job %lld: step details not stored: %s", (long long)req->id, err_str(rc));
	api_json(out, json_pack("{s:i,s:s,s:s?,s:o,s:o}", "result", cmd && !strcmp(cmd, "abort") ? 0 : 1, "job_result",
				res, "command", cmd, "known_images", oqcompat_known_images(req->data_dir, req->id),
				"known_files", artefact_list(req->data_dir, req->id, ARTEFACT_FILE, false)));
	if (out->json && api_live_status(req, status, out->json))
		api_nomem(out); /* the status is stored; "live" lost would stop the frames */
}

/* The job accepts uploads while a worker holds it. 0, or an error set in out. */
static int job_uploadable(struct api_req *req, struct api_resp *out)
{
	int64_t w;
	int rc = workers_job_holder(req->db, req->id, &w);

	if (rc == ERR_NOT_FOUND || (!rc && w == 0)) {
		api_error(out, 404, "Job %lld does not exist or is not running on a worker", (long long)req->id);
		return -1;
	}
	if (rc) {
		api_error(out, 500, "cannot read job %lld", (long long)req->id);
		return -1;
	}
	(void)workers_seen(req->db, w, now_s());
	return 0;
}

/* An upload with asset=public|private: a disk or ISO a job made, stored
 * as DATA/factory/<type>/<name> (private ones prefixed with the job id, as
 * openQA does) for later jobs. */
static void job_asset_store(struct api_req *req, struct api_resp *out, const char *name, const char *scope,
			    const char *tmp, const char *sha256)
{
	char stored[LIMIT_ARTEFACT_NAME + 16];
	const char *type = asset_type_of_name(name);
	int64_t id;
	int rc;

	if (strcmp(scope, "public") && strcmp(scope, "private")) {
		api_error(out, 400, "asset '%s': expected public or private", scope);
		return;
	}
	if (!strcmp(scope, "private"))
		snprintf(stored, sizeof(stored), "%08lld-%s", (long long)req->id, name);
	else
		snprintf(stored, sizeof(stored), "%s", name);
	if (!asset_name_valid(stored)) {
		api_error(out, 400, "asset name '%s' refused: too long", stored);
		return;
	}
	rc = assets_store(req->db, req->data_dir, type, stored, tmp, sha256, req->id, &id);
	if (rc) {
		log_err("job %lld: storing asset %s/%s: %s", (long long)req->id, type, stored, err_str(rc));
		api_error(out, rc == -ENOSPC ? 507 : 500, "Failed receiving asset: %s", err_str(rc));
		return;
	}
	api_json(out, json_pack("{s:s,s:I,s:s,s:s}", "status", "ok", "id", (json_int_t)id, "type", type, "name", stored));
}

static void job_asset_upload(struct api_req *req, struct api_resp *out, const char *name, const char *scope)
{
	job_asset_store(req, out, name, scope, req->upload, req->upload_sha256);
}

/* One chunk of openQA's worker's chunked asset upload (multipart, field
 * asset=public|private, the file part a Storable record): {"status": "ok"}
 * for each, the asset stored and registered with the last. */
static void job_asset_chunk(struct api_req *req, struct api_resp *out, const struct oqcompat_upload *up,
			    const char *scope)
{
	char msg[300], sha[ARTEFACTS_HASH_HEX] = "", *whole = NULL;
	int rc;

	if (strcmp(scope, "public") && strcmp(scope, "private")) {
		api_error(out, 400, "asset '%s': expected public or private", scope);
		return;
	}
	if (!asset_name_valid(up->filename)) {
		api_error(out, 400, "asset name '%s' refused", up->filename);
		return;
	}
	/* openQA's "local" upload names a path on the server's host: vigil
	 * reads no path a client names. */
	if (params_get(&up->fields, "local")) {
		log_warn("job %lld: asset %s: a local upload (a path) refused; set LOCAL_UPLOAD = 0 in the worker's"
			 " workers.ini", (long long)req->id, up->filename);
		api_error(out, 400, "asset '%s': local uploads (local=PATH) are not taken by vigil serve; set LOCAL_UPLOAD"
			  " = 0 in the worker's workers.ini to upload in chunks", up->filename);
		return;
	}
	rc = oqcompat_chunk(req->data_dir, req->id, up->filename, up->path, &whole, sha, msg, sizeof(msg));
	if (rc) {
		log_warn("job %lld: asset %s: chunk refused: %s", (long long)req->id, up->filename,
			 rc == ERR_PROTO || rc == ERR_TOO_BIG ? msg : err_str(rc));
		/* openQA answers 500 so that the worker retries a chunk. */
		api_error(out, rc == ERR_PROTO || rc == ERR_TOO_BIG ? 400 : 500, "Failed receiving asset: %s",
			  rc == ERR_PROTO || rc == ERR_TOO_BIG ? msg : err_str(rc));
		return;
	}
	if (!whole) {
		api_json(out, json_pack("{s:s}", "status", "ok"));
		return;
	}
	job_asset_store(req, out, up->filename, scope, whole, sha);
	(void)unlink(whole); /* gone already when it was stored */
	free(whole);
}

/* Whether a flag parameter is set (present and not "0" or empty). */
static bool flag(const struct api_req *req, const char *key)
{
	const char *v = params_get(&req->params, key);

	return v && *v && strcmp(v, "0");
}

/* Whether a multipart field is set (as flag()). */
static bool field_flag(const struct params *p, const char *key)
{
	const char *v = params_get(p, key);

	return v && *v && strcmp(v, "0");
}

/* openQA's worker: a multipart/form-data body with the file part named
 * "file" (its filename the artefact's name) and image, thumb, md5, ulog,
 * asset fields. Screenshots are remembered by md5 (known_images). */
static void job_artefact_multipart(struct api_req *req, struct api_resp *out)
{
	struct oqcompat_upload up;
	char msg[256], *dir = NULL;
	const char *name, *md5;
	enum artefact_kind kind;
	bool image;
	int rc;

	if (!req->upload) {
		api_error(out, 400, "no file in the request body");
		return;
	}
	dir = path_dir(req->upload);
	rc = dir ? oqcompat_multipart(req->con, req->upload, dir, &up, msg, sizeof(msg)) : ERR_NOMEM;
	free(dir);
	if (rc) {
		if (rc == ERR_PROTO)
			api_error(out, 400, "%s", msg);
		else
			api_error(out, 500, "cannot read the upload: %s", err_str(rc));
		return;
	}
	name = up.filename;
	kind = field_flag(&up.fields, "thumb") ? ARTEFACT_THUMB : field_flag(&up.fields, "ulog") ? ARTEFACT_ULOG
											       : ARTEFACT_FILE;
	image = field_flag(&up.fields, "image");
	md5 = params_get(&up.fields, "md5");
	if (!artefact_name_valid(name, strlen(name))) {
		api_error(out, 400, "artefact name '%s' refused: use 1..%d characters of [A-Za-z0-9._+@-], not starting"
			  " with '.'", name, LIMIT_ARTEFACT_NAME);
		goto out;
	}
	if (kind == ARTEFACT_THUMB && !str_ends_with(name, ".png")) {
		api_error(out, 400, "thumbnail '%s' refused: a thumbnail is a .png", name);
		goto out;
	}
	if (job_uploadable(req, out))
		goto out;
	if (params_get(&up.fields, "asset")) {
		job_asset_chunk(req, out, &up, params_get(&up.fields, "asset"));
		goto out;
	}
	rc = artefact_store(req->data_dir, req->id, kind, name, up.path);
	if (rc) {
		log_err("job %lld: storing artefact '%s': %s", (long long)req->id, name, err_str(rc));
		api_error(out, rc == -ENOSPC ? 507 : 500, "cannot store artefact '%s': %s", name, err_str(rc));
		goto out;
	}
	if (image && md5 && (rc = oqcompat_note_image(req->data_dir, req->id, name, md5, kind == ARTEFACT_THUMB)))
		log_warn("job %lld: screenshot '%s' md5 '%s' not recorded: %s", (long long)req->id, name, md5,
			 err_str(rc));
	/* isotovideo 4.6's Theora video: a WebM beside it for the browsers. */
	if (kind == ARTEFACT_FILE && !strcmp(name, "video.ogv") &&
	    (rc = oqcompat_video_webm(req->data_dir, req->id, msg, sizeof(msg))))
		log_warn("job %lld: video.ogv not transcoded to WebM: %s", (long long)req->id, msg);
	out->status = 200;
	out->text = strdup("OK");
out:
	oqcompat_upload_release(&up);
}

static void job_artefact(struct api_req *req, struct api_resp *out)
{
	const char *name = params_get(&req->params, "file");
	const char *asset = params_get(&req->params, "asset");
	const char *ctype = api_header(req, "Content-Type");
	enum artefact_kind kind = flag(req, "thumb") ? ARTEFACT_THUMB : flag(req, "ulog") ? ARTEFACT_ULOG : ARTEFACT_FILE;
	int rc;

	if (key_may_act(req, out, true))
		return;
	if (!name && ctype && !strncasecmp(ctype, "multipart/form-data", 19)) {
		job_artefact_multipart(req, out);
		return;
	}
	if (!name || !artefact_name_valid(name, strlen(name))) {
		api_error(out, 400, "artefact name '%s' refused: use 1..%d characters of [A-Za-z0-9._+@-], not starting"
			  " with '.'", name ? name : "", LIMIT_ARTEFACT_NAME);
		return;
	}
	if (!req->upload) {
		api_error(out, 400, "no file in the request body");
		return;
	}
	if (kind == ARTEFACT_THUMB && !str_ends_with(name, ".png")) {
		api_error(out, 400, "thumbnail '%s' refused: a thumbnail is a .png", name);
		return;
	}
	if (job_uploadable(req, out))
		return;
	if (asset) {
		job_asset_upload(req, out, name, asset);
		return;
	}
	rc = artefact_store(req->data_dir, req->id, kind, name, req->upload);
	if (rc) {
		log_err("job %lld: storing artefact '%s': %s", (long long)req->id, name, err_str(rc));
		api_error(out, rc == -ENOSPC ? 507 : 500, "cannot store artefact '%s': %s", name, err_str(rc));
		return;
	}
	out->status = 200;
	out->text = strdup("OK");
}

/* The runner's results.json (uploaded before set_done) says whether every
 * failure of the job was a near miss; the lists count those apart. */
static void note_review(struct api_req *req)
{
	char *path = artefact_path(req->data_dir, req->id, "results.json");
	json_t *r = path ? json_load_file(path, 0, NULL) : NULL;

	if (json_is_true(json_object_get(r, "needs_review")) && jobs_set_needs_review(req->db, req->id))
		log_warn("job %lld: cannot mark it as needing review", (long long)req->id);
	json_decref(r);
	free(path);
}

static void job_set_done(struct api_req *req, struct api_resp *out)
{
	const char *result = params_get(&req->params, "result");
	const char *reason = params_get(&req->params, "reason");
	const char *wid = params_get(&req->params, "worker_id");
	int64_t worker = 0;
	char msg[256], folded[32];
	const char *why;
	json_t *outcome;
	int rc;

	if (key_may_act(req, out, true))
		return;
	if (result && !*result)
		result = NULL;
	if (wid && api_parse_id(wid, &worker)) {
		api_error(out, 400, "worker_id '%s' is not an id", wid);
		return;
	}
	if (worker)
		(void)workers_seen(req->db, worker, now_s());
	/* A re-run from a milestone: its earlier modules come from the old job. */
	snprintf(folded, sizeof(folded), "%s", result ? result : "");
	if ((rc = rerun_finish(req->db, req->data_dir, req->id, folded, sizeof(folded))))
		log_warn("job %lld: modules not copied from the job it resumed: %s", (long long)req->id, err_str(rc));
	else if (result)
		result = folded;
	rc = workers_job_done(req->db, req->id, worker, result, reason, msg, sizeof(msg));
	if (reply_job_error(req, out, rc, msg, "finish"))
		return;
	/* Its results are all uploaded now: which needles it used. */
	if ((rc = needles_record_job(req->db, req->data_dir, req->id)))
		log_warn("job %lld: needle matches not recorded: %s", (long long)req->id, err_str(rc));
	note_review(req);
	/* RETRY, carry-over of bug references, the review queue (review.h). */
	(void)review_job_done(req->db, req->data_dir, req->id); /* logs its own failures */
	if (jobs_outcome_json(req->db, req->id, &outcome)) {
		api_error(out, 500, "cannot read job %lld", (long long)req->id);
		return;
	}
	why = json_string_value(json_object_get(outcome, "reason"));
	log_info("job %lld done: %s%s%s", (long long)req->id, json_string_value(json_object_get(outcome, "result")),
		 why ? ", " : "", why ? why : "");
	api_json(out, outcome);
}

/* Where the artefact routes look for a name, in turn (route argument). */
static const enum artefact_kind look_file[] = { ARTEFACT_FILE, ARTEFACT_ULOG };
static const enum artefact_kind look_image[] = { ARTEFACT_FILE, ARTEFACT_FILE };
static const enum artefact_kind look_thumb[] = { ARTEFACT_THUMB, ARTEFACT_FILE };

static void test_file(struct api_req *req, struct api_resp *out)
{
	const enum artefact_kind *look = req->arg;
	char *path = NULL;
	size_t i;

	if (!req->name || !artefact_name_valid(req->name, strlen(req->name)) ||
	    (look != look_file && !str_ends_with(req->name, ".png"))) {
		api_error(out, 400, "bad file name");
		return;
	}
	for (i = 0; i < 2 && !path; i++) {
		path = artefact_kind_path(req->data_dir, req->id, look[i], req->name);
		if (path && !file_exists(path)) {
			free(path);
			path = NULL;
		}
	}
	if (!path) {
		api_error(out, 404, "no file '%s' for job %lld", req->name, (long long)req->id);
		return;
	}
	out->status = 200;
	out->file = path;
	out->ctype = str_ends_with(req->name, ".png")    ? "image/png"
		     : str_ends_with(req->name, ".json") ? "application/json"
		     : str_ends_with(req->name, ".webm") ? "video/webm"
		     : str_ends_with(req->name, ".txt")  ? "text/plain; charset=utf-8"
		     : str_ends_with(req->name, ".lua")  ? "text/plain; charset=utf-8"
							 : "application/octet-stream";
}

static void distri_show(struct api_req *req, struct api_resp *out)
{
	char hash[ARTEFACTS_HASH_HEX];
	int rc;

	if (!distri_name_valid(req->name)) {
		api_error(out, 400, "bad distribution name");
		return;
	}
	rc = distri_hash(req->data_dir, req->name, hash);
	if (rc == ERR_NOT_FOUND)
		api_error(out, 404, "no test distribution '%s' under the server's tests/ directory", req->name);
	else if (rc)
		api_error(out, rc == ERR_TOO_BIG ? 413 : 500, "test distribution '%s': %s", req->name, err_str(rc));
	else {
		char head[GIT_HASH_MAX];
		json_t *j = json_pack("{s:s,s:s}", "name", req->name, "hash", hash);
		/* vigil: the commit, when the distribution is a git work tree (TEST_GIT_HASH). */
		struct jbuild b = JBUILD_INIT;
		if (j && !distri_git_head(req->data_dir, req->name, head))
			jbuild_set(&b, j, "git_hash", json_string(head));
		api_json_built(&b, out, j);
	}
}

static void distri_get_archive(struct api_req *req, struct api_resp *out)
{
	char hash[ARTEFACTS_HASH_HEX], *path = NULL;
	int rc;

	if (!distri_name_valid(req->name)) {
		api_error(out, 400, "bad distribution name");
		return;
	}
	rc = distri_archive(req->data_dir, req->name, &path, hash);
	if (rc == ERR_NOT_FOUND) {
		api_error(out, 404, "no test distribution '%s' under the server's tests/ directory", req->name);
		return;
	}
	if (rc) {
		api_error(out, rc == ERR_TOO_BIG ? 413 : 500, "test distribution '%s': %s", req->name, err_str(rc));
		return;
	}
	out->status = 200;
	out->file = path;
	out->ctype = "application/x-tar";
	out->hdr_name = "X-Vigil-Hash";
	snprintf(out->hdr_value, sizeof(out->hdr_value), "%s", hash);
}

const struct api_route api_workers_routes[] = {
	{ "POST", "/api/v1/workers", AUTH_OPERATOR, worker_register, NULL },
	{ "GET", "/api/v1/workers", AUTH_PUBLIC, workers_list, NULL },
	{ "GET", "/api/v1/workers/#/work", AUTH_OPERATOR, worker_work, NULL },
	{ "POST", "/api/v1/jobs/#/status", AUTH_OPERATOR, job_status_post, NULL },
	{ "POST", "/api/v1/jobs/#/artefact", AUTH_OPERATOR, job_artefact, NULL },
	{ "POST", "/api/v1/jobs/#/set_done", AUTH_OPERATOR, job_set_done, NULL },
	{ "GET", "/tests/#/file/*", AUTH_PUBLIC, test_file, look_file },
	{ "GET", "/tests/#/images/*", AUTH_PUBLIC, test_file, look_image },
	{ "GET", "/tests/#/images/thumb/*", AUTH_PUBLIC, test_file, look_thumb },
	{ "GET", "/api/v1/distributions/*", AUTH_PUBLIC, distri_show, NULL },
	{ "GET", "/api/v1/distributions/*/archive", AUTH_OPERATOR, distri_get_archive, NULL },
	{ NULL, NULL, AUTH_PUBLIC, NULL, NULL },
};
