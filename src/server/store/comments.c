/* SPDX-License-Identifier: MIT */
/* comments.c - the comments table: comments on jobs and job groups as
 * openQA's JSON (text, bug references, rendered HTML, author), their
 * storage with short bug references and force_result labels applied to the
 * job in the same transaction. Every statement with bound parameters. */
#define LOG_MODULE "comments"
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "server/store/bugref.h"
#include "server/store/comments.h"
#include "server/db/db.h"
#include "server/store/jobs.h"
#include "server/store/users.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/banned.h" /* last: after every system header */

/* Statements come in pairs indexed by enum comments_owner: the job's, then the group's. */
static const char *const sql_exists[2] = {
	"SELECT 1 FROM jobs WHERE id = ?",
	"SELECT 1 FROM job_groups WHERE id = ?",
};
static const char *const label[2] = { "Job", "Job group" };
static const char *const sql_list[2] = {
	"SELECT id, text, user_name, t_created, t_updated FROM comments WHERE job_id = ? ORDER BY id LIMIT ?",
	"SELECT id, text, user_name, t_created, t_updated FROM comments WHERE group_id = ? ORDER BY id LIMIT ?",
};
static const char *const sql_one[2] = {
	"SELECT id, text, user_name, t_created, t_updated, api_key, user_id FROM comments WHERE job_id = ? AND id = ?",
	"SELECT id, text, user_name, t_created, t_updated, api_key, user_id FROM comments WHERE group_id = ? AND id = ?",
};
static const char *const sql_insert[2] = {
	"INSERT INTO comments (job_id, text, user_name, api_key, user_id, t_created, t_updated)"
	" VALUES (?, ?, ?, ?, ?, ?, ?)",
	"INSERT INTO comments (group_id, text, user_name, api_key, user_id, t_created, t_updated)"
	" VALUES (?, ?, ?, ?, ?, ?, ?)",
};
static const char *const sql_delete[2] = {
	"DELETE FROM comments WHERE job_id = ? AND id = ?",
	"DELETE FROM comments WHERE group_id = ? AND id = ?",
};

int comments_owner_check(struct db *db, enum comments_owner owner, int64_t id, char *msg, size_t msglen)
{
	int64_t one;
	int rc = db_query_int(db, &one, sql_exists[owner], "i", id);

	if (rc == ERR_NOT_FOUND) {
		err_set(msg, msglen, "%s %lld does not exist", label[owner], (long long)id);
		return ERR_NOT_FOUND;
	}
	if (rc) {
		err_set(msg, msglen, "cannot read %s %lld", label[owner], (long long)id);
		return ERR_IO;
	}
	return 0;
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
	json_t *j = markdown && !html ? NULL /* shown unrendered: out of memory */
		  : json_pack("{s:I,s:s,s:o,s:o,s:o,s:o,s:s}", "id", (json_int_t)db_col_int(st, 0), "text", text,
			      "renderedMarkdown", html ? json_string(html) : json_null(), "bugrefs",
			      bugref_find_all(text), "created", comment_time(db_col_text(st, 3)), "updated",
			      comment_time(db_col_text(st, 4)), "userName", db_col_text(st, 2));

	free(html);
	return j;
}

int comments_list(struct db *db, enum comments_owner owner, int64_t id, long limit, bool markdown, json_t **out,
		  char *msg, size_t msglen)
{
	struct db_stmt *st;
	json_t *a;
	int rc;

	*out = NULL;
	if ((rc = comments_owner_check(db, owner, id, msg, msglen)))
		return rc;
	if (db_prepare(db, &st, sql_list[owner], "ii", id, (int64_t)limit)) {
		err_set(msg, msglen, "cannot read comments");
		return ERR_IO;
	}
	a = json_array();
	while (a && (rc = db_step(st)) == 1)
		if (json_array_append_new(a, comment_json(st, markdown))) {
			rc = ERR_NOMEM; /* a comment missing */
			break;
		}
	db_finalize(st);
	if (!a || rc == ERR_NOMEM) {
		json_decref(a);
		err_set(msg, msglen, "out of memory");
		return ERR_NOMEM;
	}
	if (rc < 0) {
		json_decref(a);
		err_set(msg, msglen, "cannot read comments");
		return ERR_IO;
	}
	*out = a;
	return 0;
}

/* Prepare the row of comment cid of the owner (which must exist): columns
 * id, text, user_name, t_created, t_updated, api_key, user_id. 0 and *st, or
 * ERR_NOT_FOUND / ERR_IO with the text in msg. */
static int select_one(struct db *db, enum comments_owner owner, int64_t id, int64_t cid, struct db_stmt **st,
		      char *msg, size_t msglen)
{
	int rc;

	if ((rc = comments_owner_check(db, owner, id, msg, msglen)))
		return rc;
	if (db_prepare(db, st, sql_one[owner], "ii", id, cid)) {
		err_set(msg, msglen, "cannot read comments");
		return ERR_IO;
	}
	return 0;
}

int comments_get(struct db *db, enum comments_owner owner, int64_t id, int64_t cid, json_t **out, char *msg,
		 size_t msglen)
{
	struct db_stmt *st;
	int rc;

	*out = NULL;
	if ((rc = select_one(db, owner, id, cid, &st, msg, msglen)))
		return rc;
	if (db_step(st) == 1)
		*out = comment_json(st, true);
	db_finalize(st);
	if (!*out) {
		err_set(msg, msglen, "Comment %lld does not exist", (long long)cid);
		return ERR_NOT_FOUND;
	}
	return 0;
}

/* A "label:force_result:RESULT" in a job comment: check it may apply (a
 * known result, a finished job) before anything is stored. 0 with
 * result[0] set when it applies, result[0] = 0 when there is no label;
 * ERR_INVALID with the reason in msg. */
static int force_result_check(struct db *db, int64_t job, const char *text, char result[32], char *msg,
			      size_t msglen)
{
	char state[32];

	result[0] = '\0';
	if (!bugref_force_result(text, result, 32))
		return 0;
	if (!jobs_result_valid(result)) {
		err_set(msg, msglen, "Invalid result '%s' for force_result", result);
		return ERR_INVALID;
	}
	if (jobs_state_of(db, job, state, sizeof(state)) || (strcmp(state, "done") && strcmp(state, "cancelled"))) {
		err_set(msg, msglen, "force_result only allowed on finished jobs");
		return ERR_INVALID;
	}
	return 0;
}

/* Set the job's result as the label says (openQA also marks it done). */
static int force_result_apply(struct db *db, int64_t job, const char *result)
{
	char now[DB_TIME_LEN];

	if (!result[0])
		return 0;
	db_now(now);
	return db_exec(db, "UPDATE jobs SET result = ?, state = 'done', t_updated = ? WHERE id = ?", "tti", result, now,
		       job) < 0 ? ERR_IO : 0;
}

/* The name a comment shows and the user it belongs to (0: none). */
struct author {
	int64_t user_id;
	char name[USERS_NAME_MAX + 1];
};

/* Who `by` is: the signed-in user, the user owning the key, the key
 * itself ("apikey-<id>", as vigil named key authors before users), or
 * nobody. */
static void author_of(struct db *db, const struct comments_author *by, struct author *a)
{
	struct db_stmt *st = NULL;

	a->user_id = 0;
	snprintf(a->name, sizeof(a->name), "anonymous");
	if (by->user_id > 0) {
		a->user_id = by->user_id;
		snprintf(a->name, sizeof(a->name), "%s", by->user_name ? by->user_name : "");
		return;
	}
	if (!by->key || db_prepare(db, &st, "SELECT api_keys.id, users.id, users.name FROM api_keys"
				   " LEFT JOIN users ON users.id = api_keys.user_id WHERE api_keys.key = ?", "t", by->key))
		return;
	if (db_step(st) == 1) {
		if (!db_col_null(st, 1)) {
			a->user_id = db_col_int(st, 1);
			snprintf(a->name, sizeof(a->name), "%s", db_col_text(st, 2));
		} else {
			snprintf(a->name, sizeof(a->name), "apikey-%lld", (long long)db_col_int(st, 0));
		}
	}
	db_finalize(st);
}

static int insert(struct db *db, enum comments_owner owner, int64_t id, const char *text,
		  const struct comments_author *by, int64_t *cid)
{
	char now[DB_TIME_LEN];
	char *stored = bugref_from_urls(text);
	struct author a;
	int rc;

	if (!stored)
		return ERR_NOMEM;
	db_now(now);
	author_of(db, by, &a);
	/* A user's comment keeps no key: any of their keys, or their session, may edit it. */
	rc = db_exec(db, sql_insert[owner], "ittt" "Itt", id, stored, a.name, a.user_id ? NULL : by->key, a.user_id, now,
		     now);
	free(stored);
	if (rc < 0)
		return rc;
	*cid = db_last_id(db);
	return 0;
}

int comments_add(struct db *db, enum comments_owner owner, int64_t id, const char *text,
		 const struct comments_author *by, int64_t *cid, char *msg, size_t msglen)
{
	char result[32] = "";
	int rc;

	if ((rc = comments_owner_check(db, owner, id, msg, msglen)))
		return rc;
	if (owner == COMMENTS_JOB && (rc = force_result_check(db, id, text, result, msg, msglen)))
		return rc;
	if (db_begin(db)) {
		err_set(msg, msglen, "cannot start a transaction");
		return ERR_IO;
	}
	if (insert(db, owner, id, text, by, cid) || force_result_apply(db, id, result) || db_commit(db)) {
		db_rollback(db);
		err_set(msg, msglen, "cannot store the comment: %s", db_errmsg(db));
		return ERR_IO;
	}
	return 0;
}

int comments_edit(struct db *db, enum comments_owner owner, int64_t id, int64_t cid, const char *text,
		  const struct comments_author *by, char *msg, size_t msglen)
{
	char now[DB_TIME_LEN], *stored = NULL, *author_key = NULL, result[32] = "";
	int64_t author_user = 0;
	struct author me;
	struct db_stmt *st;
	bool mine;
	int rc;

	if ((rc = select_one(db, owner, id, cid, &st, msg, msglen)))
		return rc;
	rc = db_step(st);
	if (rc == 1 && db_col_text(st, 5))
		author_key = strdup(db_col_text(st, 5));
	if (rc == 1)
		author_user = db_col_int(st, 6);
	db_finalize(st);
	if (rc != 1) {
		err_set(msg, msglen, "Comment %lld does not exist", (long long)cid);
		rc = ERR_NOT_FOUND;
		goto out;
	}
	author_of(db, by, &me);
	mine = author_user ? me.user_id == author_user : author_key && by->key && !strcmp(author_key, by->key);
	if (!mine) {
		err_set(msg, msglen, "Forbidden (must be author)");
		rc = ERR_BADSTATE;
		goto out;
	}
	if (owner == COMMENTS_JOB && (rc = force_result_check(db, id, text, result, msg, msglen)))
		goto out;
	if (!(stored = bugref_from_urls(text))) {
		err_set(msg, msglen, "out of memory");
		rc = ERR_NOMEM;
		goto out;
	}
	db_now(now);
	if (db_begin(db)) {
		err_set(msg, msglen, "cannot start a transaction");
		rc = ERR_IO;
		goto out;
	}
	if (db_exec(db, "UPDATE comments SET text = ?, t_updated = ? WHERE id = ?", "tti", stored, now, cid) < 0 ||
	    force_result_apply(db, id, result) || db_commit(db)) {
		db_rollback(db);
		err_set(msg, msglen, "cannot update comment %lld", (long long)cid);
		rc = ERR_IO;
		goto out;
	}
	rc = 0;
out:
	free(stored);
	free(author_key);
	return rc;
}

int comments_delete(struct db *db, enum comments_owner owner, int64_t id, int64_t cid, char *msg, size_t msglen)
{
	struct db_stmt *st;
	char result[32];
	bool forced = false;
	int rc;

	if ((rc = comments_owner_check(db, owner, id, msg, msglen)))
		return rc;
	if (!db_prepare(db, &st, sql_one[owner], "ii", id, cid)) {
		if (db_step(st) == 1)
			forced = bugref_force_result(db_col_text(st, 1), result, sizeof(result));
		db_finalize(st);
	}
	if (forced) {
		err_set(msg, msglen, "Comment %lld has 'force_result' label, deleting not allowed", (long long)cid);
		return ERR_BADSTATE;
	}
	rc = db_exec(db, sql_delete[owner], "ii", id, cid);
	if (rc < 0) {
		err_set(msg, msglen, "cannot delete comment %lld", (long long)cid);
		return ERR_IO;
	}
	if (rc == 0) {
		err_set(msg, msglen, "Comment %lld does not exist", (long long)cid);
		return ERR_NOT_FOUND;
	}
	return 0;
}

int comments_delete_unlabelled(struct db *db, int64_t cid)
{
	/* As openQA: comments carrying a force_result label stay. */
	return db_exec(db, "DELETE FROM comments WHERE id = ? AND text NOT LIKE '%label:force_result:%'", "i", cid);
}

/* --- review (review.c): what marks a job as reviewed, carry-over */

/* A "label:NAME" in text (openQA's find_labels): at the start or after a
 * character that is no word character, NAME starting with a word character. */
static bool has_label(const char *text)
{
	const char *p;

	for (p = strstr(text, "label:"); p; p = strstr(p + 1, "label:")) {
		bool start = p == text || !(isalnum((unsigned char)p[-1]) || p[-1] == '_');
		if (start && (isalnum((unsigned char)p[6]) || p[6] == '_'))
			return true;
	}
	return false;
}

/* 1 when text holds a bug reference, 0 when not, ERR_NOMEM. */
static int has_bugref(const char *text)
{
	json_t *refs = bugref_find_all(text);
	int any = refs ? json_array_size(refs) > 0 : ERR_NOMEM;

	json_decref(refs);
	return any;
}

int comments_job_reviewed(struct db *db, int64_t job_id, bool *reviewed)
{
	struct db_stmt *st;
	int rc;

	*reviewed = false;
	if ((rc = db_prepare(db, &st, "SELECT text FROM comments WHERE job_id = ?", "i", job_id)))
		return rc;
	while (!*reviewed && (rc = db_step(st)) == 1) {
		int refs = has_bugref(db_col_text(st, 0));
		if (refs < 0) { /* "not reviewed" would be a guess */
			rc = refs;
			*reviewed = false;
			break;
		}
		*reviewed = refs || has_label(db_col_text(st, 0));
	}
	db_finalize(st);
	return rc < 0 ? rc : 0;
}

int comments_job_of(struct db *db, int64_t cid, int64_t *job_id)
{
	return db_query_int(db, job_id, "SELECT job_id FROM comments WHERE id = ? AND job_id IS NOT NULL", "i", cid);
}

int comments_carry_over(struct db *db, int64_t from_job, int64_t to_job, int64_t *cid)
{
	struct db_stmt *st = NULL;
	struct buf text;
	char now[DB_TIME_LEN], result[32] = "";
	int rc;

	*cid = 0;
	buf_init(&text, LIMIT_COMMENT_TEXT + 64);
	if ((rc = db_prepare(db, &st, "SELECT text, user_name, api_key, user_id FROM comments WHERE job_id = ?"
			     " ORDER BY id DESC", "i", from_job)))
		goto out;
	while ((rc = db_step(st)) == 1) {
		const char *t = db_col_text(st, 0);
		if (has_bugref(t) || strstr(t, "flag:carryover"))
			break;
	}
	if (rc != 1)
		goto out; /* none (0) or an error */
	rc = buf_puts(&text, db_col_text(st, 0));
	if (!rc && !strstr(text.data, "Automatic takeover") && !strstr(text.data, "Automatic carryover"))
		rc = buf_printf(&text, "\n\n(Automatic takeover from t#%lld)", (long long)from_job);
	if (!rc && text.data[text.len - 1] != '\n')
		rc = buf_puts(&text, "\n");
	if (rc)
		goto out;
	(void)bugref_force_result(text.data, result, sizeof(result));
	if (result[0] && !jobs_result_valid(result))
		result[0] = '\0';
	db_now(now);
	if ((rc = db_begin(db)))
		goto out;
	rc = db_exec(db, sql_insert[COMMENTS_JOB], "ittt" "Itt", to_job, text.data, db_col_text(st, 1),
		     db_col_text(st, 2), db_col_int(st, 3), now, now);
	if (rc >= 0) {
		*cid = db_last_id(db);
		rc = force_result_apply(db, to_job, result);
	}
	if (rc < 0 || (rc = db_commit(db))) {
		db_rollback(db);
		*cid = 0;
		rc = rc < 0 ? rc : ERR_IO;
		goto out;
	}
	rc = 0;
out:
	db_finalize(st);
	buf_release(&text);
	return rc;
}

int comments_add_system(struct db *db, int64_t job_id, const char *text, int64_t *cid)
{
	char now[DB_TIME_LEN];
	int rc;

	db_now(now);
	rc = db_exec(db, sql_insert[COMMENTS_JOB], "ittt" "Itt", job_id, text, COMMENTS_SYSTEM_USER, NULL,
		     (int64_t)0, now, now);
	if (rc < 0)
		return rc;
	*cid = db_last_id(db);
	return 0;
}
