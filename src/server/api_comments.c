/* SPDX-License-Identifier: MIT */
/* api_comments.c - comments on jobs and job groups as openQA's
 * Comment.pm serves them: list, show, create (one job or many), update by
 * the author, delete by an admin; bug references found in the text, bug
 * tracker URLs stored in their short form. Owns the comments table. */
#define LOG_MODULE "api"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "server/api.h"
#include "server/bugref.h"
#include "server/db.h"
#include "server/jobs.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/util.h"

#define COMMENTS_DEFAULT_LIMIT 1000
#define COMMENTS_MAX_LIMIT 10000

/* What a comment hangs on: a job or a job group. The statements below come
 * in pairs indexed by which(): the job's, then the group's. */
struct comment_owner {
	const char *exists;    /* SQL: 1 when the owner id exists */
	const char *label;     /* "Job", "Job group" in messages */
};

static const struct comment_owner owner_job = { "SELECT 1 FROM jobs WHERE id = ?", "Job" };
static const struct comment_owner owner_group = { "SELECT 1 FROM job_groups WHERE id = ?", "Job group" };

static bool owner_exists(struct api_req *req, const struct comment_owner *o, struct api_resp *out)
{
	int64_t one;
	int rc = db_query_int(req->db, &one, o->exists, "i", req->id);

	if (rc == ERR_NOT_FOUND) {
		api_error(out, 404, "%s %lld does not exist", o->label, (long long)req->id);
		return false;
	}
	if (rc) {
		api_error(out, 500, "cannot read %s %lld", o->label, (long long)req->id);
		return false;
	}
	return true;
}

/* "YYYY-MM-DDTHH:MM:SS" as openQA's comment time "YYYY-MM-DD HH:MM:SS +0000". */
static json_t *comment_time(const char *t)
{
	char s[40];

	snprintf(s, sizeof(s), "%.10s %.8s +0000", t ? t : "", t && strlen(t) > 11 ? t + 11 : "");
	return json_string(s);
}

/* renderedMarkdown, kept small: the text HTML-escaped in paragraphs (no
 * markdown, no links). New string or NULL. */
static char *render_html(const char *text)
{
	struct buf b;
	const char *p;

	buf_init(&b, 8 * LIMIT_COMMENT_TEXT);
	if (buf_puts(&b, "<p>"))
		goto fail;
	for (p = text; *p; p++) {
		int rc;
		switch (*p) {
		case '<': rc = buf_puts(&b, "&lt;"); break;
		case '>': rc = buf_puts(&b, "&gt;"); break;
		case '&': rc = buf_puts(&b, "&amp;"); break;
		case '"': rc = buf_puts(&b, "&quot;"); break;
		case '\n':
			/* A blank line ends a paragraph, as in markdown. */
			if (p[1] == '\n') {
				rc = buf_puts(&b, "</p>\n<p>");
				p++;
			} else {
				rc = buf_puts(&b, "\n");
			}
			break;
		default: rc = buf_append(&b, p, 1); break;
		}
		if (rc)
			goto fail;
	}
	if (buf_puts(&b, "</p>\n"))
		goto fail;
	return buf_steal(&b);
fail:
	buf_release(&b);
	return NULL;
}

/* Columns: id, text, user_name, t_created, t_updated. */
static json_t *comment_json(struct db_stmt *st, bool markdown)
{
	const char *text = db_col_text(st, 1);
	char *html = markdown ? render_html(text) : NULL;
	json_t *j = json_pack("{s:I,s:s,s:o,s:o,s:o,s:o,s:s}", "id", (json_int_t)db_col_int(st, 0), "text", text,
			      "renderedMarkdown", html ? json_string(html) : json_null(), "bugrefs",
			      bugref_find_all(text), "created", comment_time(db_col_text(st, 3)), "updated",
			      comment_time(db_col_text(st, 4)), "userName", db_col_text(st, 2));

	free(html);
	return j;
}

static const char *const sql_list[2] = {
	"SELECT id, text, user_name, t_created, t_updated FROM comments WHERE job_id = ? ORDER BY id LIMIT ?",
	"SELECT id, text, user_name, t_created, t_updated FROM comments WHERE group_id = ? ORDER BY id LIMIT ?",
};
static const char *const sql_one[2] = {
	"SELECT id, text, user_name, t_created, t_updated, api_key FROM comments WHERE job_id = ? AND id = ?",
	"SELECT id, text, user_name, t_created, t_updated, api_key FROM comments WHERE group_id = ? AND id = ?",
};
static const char *const sql_insert[2] = {
	"INSERT INTO comments (job_id, text, user_name, api_key, t_created, t_updated) VALUES (?, ?, ?, ?, ?, ?)",
	"INSERT INTO comments (group_id, text, user_name, api_key, t_created, t_updated) VALUES (?, ?, ?, ?, ?, ?)",
};

static int which(const struct comment_owner *o)
{
	return o == &owner_job ? 0 : 1;
}

static void comments_list(struct api_req *req, struct api_resp *out)
{
	const struct comment_owner *o = req->arg;
	const char *lim = params_get(&req->params, "limit"), *md = params_get(&req->params, "render_markdown");
	long limit = COMMENTS_DEFAULT_LIMIT;
	struct db_stmt *st;
	json_t *a;
	int rc;

	if (lim && (str_to_long(lim, &limit) || limit <= 0)) {
		api_error(out, 400, "Erroneous parameters (limit must be a positive integer)");
		return;
	}
	if (limit > COMMENTS_MAX_LIMIT)
		limit = COMMENTS_MAX_LIMIT;
	if (!owner_exists(req, o, out))
		return;
	if (db_prepare(req->db, &st, sql_list[which(o)], "ii", req->id, (int64_t)limit)) {
		api_error(out, 500, "cannot read comments");
		return;
	}
	a = json_array();
	while ((rc = db_step(st)) == 1)
		json_array_append_new(a, comment_json(st, md && strcmp(md, "0")));
	db_finalize(st);
	if (rc < 0) {
		json_decref(a);
		api_error(out, 500, "cannot read comments");
		return;
	}
	api_json(out, a);
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

static void comments_show(struct api_req *req, struct api_resp *out)
{
	const struct comment_owner *o = req->arg;
	struct db_stmt *st;
	int64_t cid;

	if (!comment_id(req, out, &cid) || !owner_exists(req, o, out))
		return;
	if (db_prepare(req->db, &st, sql_one[which(o)], "ii", req->id, cid)) {
		api_error(out, 500, "cannot read comments");
		return;
	}
	if (db_step(st) == 1)
		api_json(out, comment_json(st, true));
	else
		api_error(out, 404, "Comment %lld does not exist", (long long)cid);
	db_finalize(st);
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

/* vigil has API keys, not users: a comment is signed by the key's row. */
static void user_name(struct api_req *req, char out[48])
{
	int64_t id = 0;

	if (req->key && !db_query_int(req->db, &id, "SELECT id FROM api_keys WHERE key = ?", "t", req->key))
		snprintf(out, 48, "apikey-%lld", (long long)id);
	else
		snprintf(out, 48, "anonymous");
}

/* A "label:force_result:RESULT" in a job comment: check it may apply (a
 * known result, a finished job) before anything is stored. 0 with
 * result[0] set when it applies, result[0] = 0 when there is no label;
 * nonzero after answering 400. */
static int force_result_check(struct api_req *req, int64_t job, const char *text, char result[32],
			      struct api_resp *out)
{
	char state[32];

	result[0] = '\0';
	if (!bugref_force_result(text, result, 32))
		return 0;
	if (!jobs_result_valid(result)) {
		api_error(out, 400, "Invalid result '%s' for force_result", result);
		return -1;
	}
	if (jobs_state_of(req->db, job, state, sizeof(state)) ||
	    (strcmp(state, "done") && strcmp(state, "cancelled"))) {
		api_error(out, 400, "force_result only allowed on finished jobs");
		return -1;
	}
	return 0;
}

/* Set the job's result as the label says (openQA also marks it done). */
static int force_result_apply(struct api_req *req, int64_t job, const char *result)
{
	char now[DB_TIME_LEN];

	if (!result[0])
		return 0;
	db_now(now);
	return db_exec(req->db, "UPDATE jobs SET result = ?, state = 'done', t_updated = ? WHERE id = ?", "tti", result,
		       now, job) < 0 ? ERR_IO : 0;
}

static int insert(struct api_req *req, int owner, int64_t owner_id, const char *text, int64_t *id)
{
	char now[DB_TIME_LEN], user[48];
	char *stored = bugref_from_urls(text);
	int rc;

	if (!stored)
		return ERR_NOMEM;
	db_now(now);
	user_name(req, user);
	rc = db_exec(req->db, sql_insert[owner], "itttt" "t", owner_id, stored, user, req->key, now, now);
	free(stored);
	if (rc < 0)
		return rc;
	*id = db_last_id(req->db);
	return 0;
}

static void comments_create(struct api_req *req, struct api_resp *out)
{
	const struct comment_owner *o = req->arg;
	const char *text = text_param(req, out);
	int64_t id;

	char result[32] = "";

	if (!text || !owner_exists(req, o, out))
		return;
	if (o == &owner_job && force_result_check(req, req->id, text, result, out))
		return;
	if (db_begin(req->db)) {
		api_error(out, 500, "cannot start a transaction");
		return;
	}
	if (insert(req, which(o), req->id, text, &id) || force_result_apply(req, req->id, result) ||
	    db_commit(req->db)) {
		db_rollback(req->db);
		api_error(out, 500, "cannot store the comment: %s", db_errmsg(req->db));
		return;
	}
	api_json(out, json_pack("{s:I}", "id", (json_int_t)id));
}

/* POST /api/v1/comments: text= and job_id= (repeated) - one comment per job. */
static void comments_create_many(struct api_req *req, struct api_resp *out)
{
	const char *text = text_param(req, out);
	json_t *created, *failed;
	size_t i, njobs = 0;

	if (!text)
		return;
	created = json_array();
	failed = json_array();
	for (i = 0; i < req->params.n; i++) {
		int64_t job, one, id;
		struct api_resp why;
		char result[32];
		bool bad;
		if (strcmp(req->params.v[i].key, "job_id"))
			continue;
		njobs++;
		memset(&why, 0, sizeof(why));
		bad = api_parse_id(req->params.v[i].value, &job) ||
		      db_query_int(req->db, &one, "SELECT 1 FROM jobs WHERE id = ?", "i", job) ||
		      force_result_check(req, job, text, result, &why) || insert(req, 0, job, text, &id) ||
		      force_result_apply(req, job, result);
		json_decref(why.json);
		if (bad) {
			json_array_append_new(failed, json_pack("{s:s}", "job_id", req->params.v[i].value));
			continue;
		}
		json_array_append_new(created, json_pack("{s:I,s:I}", "id", (json_int_t)id, "job_id", (json_int_t)job));
	}
	if (!njobs) {
		json_decref(created);
		json_decref(failed);
		api_error(out, 400, "Erroneous parameters (job_id missing)");
		return;
	}
	api_json(out, json_pack("{s:o,s:o}", "created", created, "failed", failed));
	if (json_array_size(json_object_get(out->json, "failed"))) {
		json_object_set_new(out->json, "error", json_string("Not all comments could be created."));
		out->status = 400;
	}
}

static void comments_update(struct api_req *req, struct api_resp *out)
{
	const struct comment_owner *o = req->arg;
	const char *text = text_param(req, out);
	char now[DB_TIME_LEN], *stored = NULL, *author = NULL, result[32] = "";
	struct db_stmt *st;
	int64_t cid;
	int rc;

	if (!text || !comment_id(req, out, &cid) || !owner_exists(req, o, out))
		return;
	if (db_prepare(req->db, &st, sql_one[which(o)], "ii", req->id, cid)) {
		api_error(out, 500, "cannot read comments");
		return;
	}
	rc = db_step(st);
	if (rc == 1 && db_col_text(st, 5))
		author = strdup(db_col_text(st, 5));
	db_finalize(st);
	if (rc != 1) {
		api_error(out, 404, "Comment %lld does not exist", (long long)cid);
		goto out;
	}
	if (!author || !req->key || strcmp(author, req->key)) {
		api_error(out, 403, "Forbidden (must be author)");
		goto out;
	}
	if (o == &owner_job && force_result_check(req, req->id, text, result, out))
		goto out;
	if (!(stored = bugref_from_urls(text))) {
		api_error(out, 500, "out of memory");
		goto out;
	}
	db_now(now);
	if (db_begin(req->db)) {
		api_error(out, 500, "cannot start a transaction");
		goto out;
	}
	if (db_exec(req->db, "UPDATE comments SET text = ?, t_updated = ? WHERE id = ?", "tti", stored, now, cid) < 0 ||
	    force_result_apply(req, req->id, result) || db_commit(req->db)) {
		db_rollback(req->db);
		api_error(out, 500, "cannot update comment %lld", (long long)cid);
		goto out;
	}
	api_json(out, json_pack("{s:I}", "id", (json_int_t)cid));
out:
	free(stored);
	free(author);
}

static void comments_delete(struct api_req *req, struct api_resp *out)
{
	const struct comment_owner *o = req->arg;
	static const char *const sql[2] = {
		"DELETE FROM comments WHERE job_id = ? AND id = ?",
		"DELETE FROM comments WHERE group_id = ? AND id = ?",
	};
	int64_t cid;
	int rc;

	struct db_stmt *st;
	char result[32];
	bool forced = false;

	if (!comment_id(req, out, &cid) || !owner_exists(req, o, out))
		return;
	if (!db_prepare(req->db, &st, sql_one[which(o)], "ii", req->id, cid)) {
		if (db_step(st) == 1)
			forced = bugref_force_result(db_col_text(st, 1), result, sizeof(result));
		db_finalize(st);
	}
	if (forced) {
		api_error(out, 403, "Comment %lld has 'force_result' label, deleting not allowed", (long long)cid);
		return;
	}
	rc = db_exec(req->db, sql[which(o)], "ii", req->id, cid);
	if (rc < 0)
		api_error(out, 500, "cannot delete comment %lld", (long long)cid);
	else if (rc == 0)
		api_error(out, 404, "Comment %lld does not exist", (long long)cid);
	else
		api_json(out, json_pack("{s:I}", "id", (json_int_t)cid));
}

/* DELETE /api/v1/comments: id= (repeated). */
static void comments_delete_many(struct api_req *req, struct api_resp *out)
{
	json_t *ids = json_array();
	size_t i;
	long deleted = 0;

	for (i = 0; i < req->params.n; i++) {
		int64_t id;
		int rc;
		if (strcmp(req->params.v[i].key, "id"))
			continue;
		if (api_parse_id(req->params.v[i].value, &id)) {
			json_decref(ids);
			api_error(out, 400, "Erroneous parameters (id invalid: '%s')", req->params.v[i].value);
			return;
		}
		json_array_append_new(ids, json_integer(id));
		/* As openQA: comments carrying a force_result label stay. */
		rc = db_exec(req->db, "DELETE FROM comments WHERE id = ? AND text NOT LIKE '%label:force_result:%'", "i", id);
		if (rc > 0)
			deleted += rc;
	}
	if (json_array_size(ids) == 0) {
		json_decref(ids);
		api_error(out, 400, "Erroneous parameters (id missing)");
		return;
	}
	api_json(out, json_pack("{s:o,s:i}", "ids", ids, "deleted", (int)deleted));
	if ((size_t)deleted != json_array_size(json_object_get(out->json, "ids"))) {
		json_object_set_new(out->json, "error", json_string("Not all comments could be deleted."));
		out->status = 400;
	}
}

#define COMMENT_ROUTES(path, owner) \
	{ "GET", "/api/v1/" path "/#/comments", AUTH_PUBLIC, comments_list, &owner }, \
	{ "GET", "/api/v1/" path "/#/comments/*", AUTH_PUBLIC, comments_show, &owner }, \
	{ "POST", "/api/v1/" path "/#/comments", AUTH_OPERATOR, comments_create, &owner }, \
	{ "PUT", "/api/v1/" path "/#/comments/*", AUTH_OPERATOR, comments_update, &owner }, \
	{ "DELETE", "/api/v1/" path "/#/comments/*", AUTH_ADMIN, comments_delete, &owner }

const struct api_route api_comments_routes[] = {
	COMMENT_ROUTES("jobs", owner_job),
	COMMENT_ROUTES("groups", owner_group),
	{ "POST", "/api/v1/comments", AUTH_OPERATOR, comments_create_many, NULL },
	{ "DELETE", "/api/v1/comments", AUTH_ADMIN, comments_delete_many, NULL },
	{ NULL, NULL, AUTH_PUBLIC, NULL, NULL },
};
