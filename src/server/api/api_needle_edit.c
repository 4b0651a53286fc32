/* SPDX-License-Identifier: MIT */
/* api_needle_edit.c - the needle editor's routes: the step to edit, the
 * live match of a draft needle on the step's stored screenshot, and the
 * save at openQA's URL. The work is needle_edit.c; this file parses,
 * checks who asks, and answers.
 *
 *   method path                                  level     what
 *   GET    /api/v1/jobs/<id>/needle_edit         public    module, step → {job: {id, name, distri},
 *                                                          module, step, screenshot, width, height,
 *                                                          tags, candidates: [{name, json, dir,
 *                                                          file_name, matched, needle, areas}]}
 *   POST   /api/v1/jobs/<id>/needle_match        public    JSON {module, step, needle: {tags, area,
 *                                                          properties}, image: a candidate's json
 *                                                          path (its PNG as the needle's image;
 *                                                          absent: the screenshot)} (or form module, step, image,
 *                                                          needle=JSON text) → {match, similarity,
 *                                                          areas: [{index, x, y, w, h, similarity,
 *                                                          required, result}], ms, cached}
 *   POST   /tests/<id>/modules/<m>/steps/<n>     operator  form json (the needle), needlename, dir
 *                                                          (below needles/), overwrite=1,
 *                                                          commit_message → {success, name, json,
 *                                                          png, replaced, commit}; 409
 *                                                          {error, requires_overwrite: true}
 *
 * The live match is public like every read of openQA (the edit page is),
 * costs at most a few ms of one handler thread, takes no writer token and
 * is bounded: a needle text of LIMIT_NEEDLE_EDIT_BODY bytes and
 * NEEDLE_EDIT_MAX_AREAS areas; the step must exist. */
#define LOG_MODULE "api"
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "server/http/api.h"
#include "server/store/jbuild.h"
#include "server/store/audit.h"
#include "server/store/jobs.h"
#include "server/store/needle_edit.h"
#include "server/store/users.h"
#include "util/err.h"
#include "util/log.h"
#include "util/str.h"
#include "util/banned.h" /* last: after every system header */

/* The decoded screenshots of the live match, shared by the handler threads. */
static struct needle_edit_cache cache;
static pthread_once_t cache_once = PTHREAD_ONCE_INIT;

static void cache_make(void)
{
	needle_edit_cache_init(&cache);
}

/* The job's DISTRI and name (new strings), answering 404 itself. */
static bool job_facts(struct api_req *req, struct api_resp *out, int64_t id, char **distri, char **name)
{
	json_t *j = NULL;
	const char *d;
	int rc = jobs_to_json(req->db, id, false, &j);

	*distri = *name = NULL;
	if (rc) {
		api_error_code(out, rc, rc == ERR_NOT_FOUND ? "Job does not exist" : "cannot read the job");
		return false;
	}
	d = json_string_value(json_object_get(json_object_get(j, "settings"), "DISTRI"));
	*distri = strdup(d ? d : "");
	*name = strdup(json_string_value(json_object_get(j, "name")) ? json_string_value(json_object_get(j, "name")) : "");
	json_decref(j);
	if (!*distri || !*name) {
		free(*distri);
		free(*name);
		api_error(out, 500, "out of memory");
		return false;
	}
	return true;
}

/* module and step from the JSON body or the form; answers 400 itself. */
static bool step_of(struct api_req *req, struct api_resp *out, const char **module, long *step)
{
	const json_t *js = req->json ? json_object_get(req->json, "step") : NULL;
	const char *s = req->json ? NULL : params_get(&req->params, "step");

	*module = req->json ? json_string_value(json_object_get(req->json, "module"))
			    : params_get(&req->params, "module");
	if (js && json_is_integer(js))
		*step = (long)json_integer_value(js);
	else if (!s || str_to_long(s, step))
		*step = 0;
	if (!*module || *step < 1) {
		api_error(out, 400, "module and step (from 1) are required");
		return false;
	}
	return true;
}

static void edit_get(struct api_req *req, struct api_resp *out)
{
	char msg[512], *distri = NULL, *name = NULL, *png = NULL;
	const char *module;
	struct jbuild b = JBUILD_INIT;
	json_t *o = NULL;
	long step;
	int rc, w = 0, h = 0;

	pthread_once(&cache_once, cache_make);
	if (!step_of(req, out, &module, &step) || !job_facts(req, out, req->id, &distri, &name))
		goto out;
	if ((rc = needle_edit_step(req->data_dir, req->id, distri, module, step, &o, msg, sizeof(msg))) ||
	    (rc = needle_edit_step_png(req->data_dir, req->id, module, step, &png, msg, sizeof(msg))) ||
	    (rc = needle_edit_shot_size(&cache, png, &w, &h, msg, sizeof(msg)))) {
		api_error_code(out, rc == ERR_INVALID || rc == ERR_NOMEM ? rc : ERR_NOT_FOUND, msg);
		goto out;
	}
	jbuild_set(&b, o, "job", json_pack("{s:I,s:s,s:s}", "id", (json_int_t)req->id, "name", name, "distri",
					       distri));
	jbuild_set(&b, o, "width", json_integer(w));
	jbuild_set(&b, o, "height", json_integer(h));
	api_json_built(&b, out, o);
	o = NULL;
out:
	json_decref(o);
	free(distri);
	free(name);
	free(png);
}

static void match_post(struct api_req *req, struct api_resp *out)
{
	char msg[512], *png = NULL, *ipng = NULL, *distri = NULL, *jname = NULL;
	const char *module, *text, *image;
	json_t *draft = NULL, *res = NULL;
	json_error_t je;
	long step;
	int rc;

	pthread_once(&cache_once, cache_make);
	out->audited = true; /* a read: nothing to record */
	if (!step_of(req, out, &module, &step))
		goto out;
	if (req->json) {
		draft = json_incref(json_object_get(req->json, "needle"));
		text = NULL;
		if (json_is_object(draft)) {
			char *dump = json_dumps(draft, JSON_COMPACT);
			size_t l = dump ? strlen(dump) : 0;
			free(dump);
			if (l > LIMIT_NEEDLE_EDIT_BODY) {
				api_error(out, 413, "the needle is over %u bytes", LIMIT_NEEDLE_EDIT_BODY);
				goto out;
			}
		}
	} else if ((text = params_get(&req->params, "needle"))) {
		if (strlen(text) > LIMIT_NEEDLE_EDIT_BODY) {
			api_error(out, 413, "the needle is over %u bytes", LIMIT_NEEDLE_EDIT_BODY);
			goto out;
		}
		draft = json_loads(text, JSON_REJECT_DUPLICATES, &je);
	}
	if (!json_is_object(draft)) {
		api_error(out, 400, "needle (a JSON object) is required");
		goto out;
	}
	image = req->json ? json_string_value(json_object_get(req->json, "image")) : params_get(&req->params, "image");
	if (image && *image && !job_facts(req, out, req->id, &distri, &jname))
		goto out;
	if ((rc = needle_edit_step_png(req->data_dir, req->id, module, step, &png, msg, sizeof(msg))) ||
	    (image && *image && (rc = needle_edit_needle_png(req->data_dir, distri, image, &ipng, msg, sizeof(msg)))) ||
	    (rc = needle_edit_match(&cache, png, ipng, draft, &res, msg, sizeof(msg)))) {
		api_error_code(out, rc == ERR_INVALID || rc == ERR_NOMEM ? rc : ERR_NOT_FOUND, msg);
		goto out;
	}
	api_json(out, res);
out:
	json_decref(draft);
	free(png);
	free(ipng);
	free(distri);
	free(jname);
}

/* The job id of /tests/<id>/modules/... (the route's '#' holds the step). */
static int64_t path_job(const char *path)
{
	int64_t id = 0;
	const char *p = path + strlen("/tests/");
	char num[24];
	size_t n = strspn(p, "0123456789");

	if (!str_starts_with(path, "/tests/") || n == 0 || n >= sizeof(num))
		return 0;
	memcpy(num, p, n);
	num[n] = '\0';
	return api_parse_id(num, &id) ? 0 : id;
}

static void save_post(struct api_req *req, struct api_resp *out)
{
	const char *text = params_get(&req->params, "json"), *ow = params_get(&req->params, "overwrite");
	char msg[1024], actor[USERS_NAME_MAX + 24], author[USERS_NAME_MAX * 2 + 32], *distri = NULL, *jname = NULL;
	char *png = NULL;
	struct needle_edit_save s = { 0 };
	int64_t job = path_job(req->path);
	struct jbuild b = JBUILD_INIT;
	json_t *draft = NULL, *res = NULL, *d = NULL;
	json_error_t je;
	int rc;

	if (job <= 0 || !req->name) {
		api_error(out, 404, "no such step");
		goto out;
	}
	if (!text || strlen(text) > LIMIT_NEEDLE_EDIT_BODY || !json_is_object(draft = json_loads(text, JSON_REJECT_DUPLICATES, &je))) {
		api_error(out, 400, "json (the needle, a JSON object of at most %u bytes) is required",
			  LIMIT_NEEDLE_EDIT_BODY);
		goto out;
	}
	if (!job_facts(req, out, job, &distri, &jname))
		goto out;
	if ((rc = needle_edit_step_png(req->data_dir, job, req->name, (long)req->id, &png, msg, sizeof(msg)))) {
		api_error_code(out, rc == ERR_INVALID || rc == ERR_NOMEM ? rc : ERR_NOT_FOUND, msg);
		goto out;
	}
	/* The author as openQA writes it, "Name <email>"; users have no
	 * e-mail address here, so the address is left empty. */
	api_actor(req, actor, sizeof(actor));
	snprintf(author, sizeof(author), "%s <>", actor);
	s.data_dir = req->data_dir;
	s.distri = distri;
	s.subdir = params_get(&req->params, "dir");
	s.name = params_get(&req->params, "needlename");
	s.draft = draft;
	s.png_path = png;
	s.overwrite = ow && !strcmp(ow, "1");
	s.author = author;
	s.message = params_get(&req->params, "commit_message");
	s.job_name = jname;
	if (s.message && (strlen(s.message) > NEEDLE_EDIT_TEXT_MAX)) {
		api_error(out, 400, "commit_message is over %d bytes", NEEDLE_EDIT_TEXT_MAX);
		goto out;
	}
	rc = needle_edit_save(&s, &res, msg, sizeof(msg));
	if (rc == ERR_BADSTATE) {
		out->json = json_pack("{s:s,s:b}", "error", msg, "requires_overwrite", 1);
		out->status = 409;
		goto out;
	}
	if (rc) {
		api_error_code(out, rc == ERR_INVALID || rc == ERR_NOT_FOUND || rc == ERR_NOMEM ? rc : ERR_IO, msg);
		goto out;
	}
	snprintf(msg, sizeof(msg), "Needle %s created/updated", s.name);
	jbuild_set(&b, res, "success", json_string(msg));
	d = json_pack("{s:I,s:s,s:I,s:O,s:O,s:O,s:O}", "job", (json_int_t)job, "module", req->name, "step",
		      (json_int_t)req->id, "needle", json_object_get(res, "name"), "json", json_object_get(res, "json"),
		      "replaced", json_object_get(res, "replaced"), "commit", json_object_get(res, "commit"));
	if (!d || audit_record(req->db, actor, "needle_save", d))
		log_err("cannot record the save of needle '%s' in the audit log", s.name);
	out->audited = true;
	api_json_built(&b, out, res);
out:
	json_decref(draft);
	json_decref(d);
	free(distri);
	free(jname);
	free(png);
}

const struct api_route api_needle_edit_routes[] = {
	{ "GET", "/api/v1/jobs/#/needle_edit", AUTH_PUBLIC, edit_get, NULL },
	{ "POST", "/api/v1/jobs/#/needle_match", AUTH_PUBLIC, match_post, NULL },
	{ "POST", "/tests/#/modules/*/steps/#", AUTH_OPERATOR, save_post, NULL },
	{ NULL, NULL, 0, NULL, NULL },
};
