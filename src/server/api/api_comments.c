/* SPDX-License-Identifier: MIT */
/* api_comments.c - the comment routes of openQA's Comment.pm on jobs and
 * job groups: list, show, create (one job or many), update by the author,
 * delete by an admin. Parses and checks the request and names its author
 * (the signed-in user, else the signing key); the comments themselves are
 * comments.c. */
#define LOG_MODULE "api"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "server/http/api.h"
#include "server/store/jbuild.h"
#include "server/store/bugref.h"
#include "server/store/comments.h"
#include "server/store/review.h"
#include "server/store/users.h"
#include "util/err.h"
#include "util/log.h"
#include "util/str.h"
#include "util/banned.h" /* last: after every system header */

#define COMMENTS_MAX_LIMIT 10000

/* Route arguments: what the comments of a route hang on. */
static const enum comments_owner owner_job = COMMENTS_JOB;
static const enum comments_owner owner_group = COMMENTS_GROUP;

static enum comments_owner owner_of(const struct api_req *req)
{
	return *(const enum comments_owner *)req->arg;
}

/* A job's comments changed: its place in the review queue may have too. */
static void requeue(struct api_req *req, enum comments_owner owner, int64_t job)
{
	if (owner == COMMENTS_JOB && review_refresh(req->db, job))
		log_warn("job %lld: review queue not updated", (long long)job);
}

static void get_comments(struct api_req *req, struct api_resp *out)
{
	const char *lim = params_get(&req->params, "limit"), *md = params_get(&req->params, "render_markdown");
	long limit = COMMENTS_DEFAULT_LIMIT;
	char msg[256];
	json_t *a;
	int rc;

	if (lim && (str_to_long(lim, &limit) || limit <= 0)) {
		api_error(out, 400, "Erroneous parameters (limit must be a positive integer)");
		return;
	}
	if (limit > COMMENTS_MAX_LIMIT)
		limit = COMMENTS_MAX_LIMIT;
	rc = comments_list(req->db, owner_of(req), req->id, limit, md && strcmp(md, "0"), &a, msg, sizeof(msg));
	if (rc)
		api_error_code(out, rc, msg);
	else
		api_json(out, a);
}

/* Who writes in req: the session's user, else the key that signed it. */
static struct comments_author author(const struct api_req *req)
{
	struct comments_author by = { 0, NULL, req->key };

	if (req->session) {
		by.user_id = req->session->user.id;
		by.user_name = req->session->user.name;
	}
	return by;
}

/* The comment id of the '*' segment; answers 404 itself when it is not a number. */
static bool comment_id(struct api_req *req, struct api_resp *out, int64_t *cid)
{
	if (api_parse_id(req->name, cid)) {
		api_error(out, 404, "Comment %s does not exist", req->name ? req->name : "");
		return false;
	}
	return true;
}

static void get_comment(struct api_req *req, struct api_resp *out)
{
	char msg[256];
	int64_t cid;
	json_t *j;
	int rc;

	if (!comment_id(req, out, &cid))
		return;
	rc = comments_get(req->db, owner_of(req), req->id, cid, &j, msg, sizeof(msg));
	if (rc)
		api_error_code(out, rc, msg);
	else
		api_json(out, j);
}

/* The text parameter: present, not blank, within the limit; NULL after answering 400. */
static const char *text_param(struct api_req *req, struct api_resp *out)
{
	const char *t = params_get(&req->params, "text"), *p;

	if (req->json) {
		api_error(out, 400, "send the comment as form parameters (text=...)");
		return NULL;
	}
	if (!t) {
		api_error(out, 400, "Erroneous parameters (text missing)");
		return NULL;
	}
	for (p = t; *p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'; p++)
		;
	if (!*p) {
		api_error(out, 400, "Erroneous parameters (text invalid: it is empty)");
		return NULL;
	}
	if (strlen(t) > LIMIT_COMMENT_TEXT) {
		api_error(out, 400, "Erroneous parameters (text: %zu bytes, over the limit of %u)", strlen(t),
			  LIMIT_COMMENT_TEXT);
		return NULL;
	}
	return t;
}

static void post_comment(struct api_req *req, struct api_resp *out)
{
	const char *text = text_param(req, out);
	struct comments_author by = author(req);
	char msg[1024];
	int64_t id;
	int rc;

	if (!text)
		return;
	rc = comments_add(req->db, owner_of(req), req->id, text, &by, &id, msg, sizeof(msg));
	if (!rc)
		requeue(req, owner_of(req), req->id);
	if (rc)
		api_error_code(out, rc, msg);
	else
		api_json(out, json_pack("{s:I}", "id", (json_int_t)id));
}

/* POST /api/v1/comments: text= and job_id= (repeated) - one comment per job. */
static void post_comments(struct api_req *req, struct api_resp *out)
{
	const char *text = text_param(req, out);
	struct comments_author by = author(req);
	struct jbuild ab = JBUILD_INIT;
	json_t *created, *failed;
	size_t i, njobs = 0;

	if (!text)
		return;
	created = jbuild_take(&ab, json_array(), "created");
	failed = jbuild_take(&ab, json_array(), "failed");
	for (i = 0; i < req->params.n; i++) {
		int64_t job, id;
		char msg[1024];
		if (strcmp(req->params.v[i].key, "job_id"))
			continue;
		njobs++;
		if (api_parse_id(req->params.v[i].value, &job) ||
		    comments_add(req->db, COMMENTS_JOB, job, text, &by, &id, msg, sizeof(msg))) {
			jbuild_append(&ab, failed, json_pack("{s:s}", "job_id", req->params.v[i].value));
			continue;
		}
		requeue(req, COMMENTS_JOB, job);
		jbuild_append(&ab, created, json_pack("{s:I,s:I}", "id", (json_int_t)id, "job_id", (json_int_t)job));
	}
	if (!njobs) {
		json_decref(created);
		json_decref(failed);
		api_error(out, 400, "Erroneous parameters (job_id missing)");
		return;
	}
	api_json_built(&ab, out, json_pack("{s:o,s:o}", "created", created, "failed", failed));
	if (out->status == 200 && json_array_size(json_object_get(out->json, "failed"))) {
		if (json_object_set_new(out->json, "error", json_string("Not all comments could be created.")))
			api_nomem(out);
		else
			out->status = 400;
	}
}

static void put_comment(struct api_req *req, struct api_resp *out)
{
	const char *text = text_param(req, out);
	struct comments_author by = author(req);
	char msg[256];
	int64_t cid;
	int rc;

	if (!text || !comment_id(req, out, &cid))
		return;
	rc = comments_edit(req->db, owner_of(req), req->id, cid, text, &by, msg, sizeof(msg));
	if (!rc)
		requeue(req, owner_of(req), req->id);
	if (rc)
		api_error_code(out, rc, msg);
	else
		api_json(out, json_pack("{s:I}", "id", (json_int_t)cid));
}

static void delete_comment(struct api_req *req, struct api_resp *out)
{
	char msg[256];
	int64_t cid;
	int rc;

	if (!comment_id(req, out, &cid))
		return;
	rc = comments_delete(req->db, owner_of(req), req->id, cid, msg, sizeof(msg));
	if (!rc)
		requeue(req, owner_of(req), req->id);
	if (rc)
		api_error_code(out, rc, msg);
	else
		api_json(out, json_pack("{s:I}", "id", (json_int_t)cid));
}

/* DELETE /api/v1/comments: id= (repeated). */
static void delete_comments(struct api_req *req, struct api_resp *out)
{
	struct jbuild ab = JBUILD_INIT;
	json_t *ids = jbuild_take(&ab, json_array(), "ids");
	size_t i;
	long deleted = 0;

	for (i = 0; i < req->params.n; i++) {
		int64_t id, job = 0;
		int rc;
		if (strcmp(req->params.v[i].key, "id"))
			continue;
		if (api_parse_id(req->params.v[i].value, &id)) {
			json_decref(ids);
			api_error(out, 400, "Erroneous parameters (id invalid: '%s')", req->params.v[i].value);
			return;
		}
		jbuild_append(&ab, ids, json_integer(id));
		if (comments_job_of(req->db, id, &job))
			job = 0;
		rc = comments_delete_unlabelled(req->db, id);
		if (rc > 0)
			deleted += rc;
		if (rc > 0 && job)
			requeue(req, COMMENTS_JOB, job);
	}
	if (json_array_size(ids) == 0 && !jbuild_failed(&ab)) {
		json_decref(ids);
		api_error(out, 400, "Erroneous parameters (id missing)");
		return;
	}
	api_json_built(&ab, out, json_pack("{s:o,s:i}", "ids", ids, "deleted", (int)deleted));
	if (out->status == 200 && (size_t)deleted != json_array_size(json_object_get(out->json, "ids"))) {
		if (json_object_set_new(out->json, "error", json_string("Not all comments could be deleted.")))
			api_nomem(out);
		else
			out->status = 400;
	}
}

#define COMMENT_ROUTES(path, owner) \
	{ "GET", "/api/v1/" path "/#/comments", AUTH_PUBLIC, get_comments, &owner }, \
	{ "GET", "/api/v1/" path "/#/comments/*", AUTH_PUBLIC, get_comment, &owner }, \
	{ "POST", "/api/v1/" path "/#/comments", AUTH_OPERATOR, post_comment, &owner }, \
	{ "PUT", "/api/v1/" path "/#/comments/*", AUTH_OPERATOR, put_comment, &owner }, \
	{ "DELETE", "/api/v1/" path "/#/comments/*", AUTH_ADMIN, delete_comment, &owner }

const struct api_route api_comments_routes[] = {
	COMMENT_ROUTES("jobs", owner_job),
	COMMENT_ROUTES("groups", owner_group),
	{ "POST", "/api/v1/comments", AUTH_OPERATOR, post_comments, NULL },
	{ "DELETE", "/api/v1/comments", AUTH_ADMIN, delete_comments, NULL },
	{ NULL, NULL, AUTH_PUBLIC, NULL, NULL },
};
