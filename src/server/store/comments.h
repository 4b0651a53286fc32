/* SPDX-License-Identifier: MIT */
/* comments.h - comments on jobs and job groups as openQA's Comment.pm keeps
 * them: listed and read as its JSON, stored with bug tracker URLs in their
 * short form, a label:force_result:RESULT applied to its job, changed only
 * by their author (the user who wrote it, signed in or with one of their
 * API keys; else the key that wrote it), deleted unless they force a
 * result. Owns the comments table. Errors come with the text to answer in
 * msg. */
#ifndef VIGIL_COMMENTS_H
#define VIGIL_COMMENTS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct db;

/* What a comment hangs on. */
enum comments_owner {
	COMMENTS_JOB = 0,
	COMMENTS_GROUP = 1,
};

/* Who writes: the signed-in user (user_id > 0, with user_name), else the
 * API key that signed the request (NULL when unsigned); a key that belongs
 * to a user writes as that user. Borrowed. */
struct comments_author {
	int64_t user_id;
	const char *user_name;
	const char *key;
};

/* 0 when the job or group id exists; ERR_NOT_FOUND ("Job 5 does not
 * exist") or ERR_IO ("cannot read Job 5"), the text in msg. */
int comments_owner_check(struct db *db, enum comments_owner owner, int64_t id, char *msg, size_t msglen);

/* GET .../comments' limit when it names none (the job page's too). */
#define COMMENTS_DEFAULT_LIMIT 1000

/* The owner's first limit comments (by id) as openQA's JSON array;
 * markdown adds the rendered HTML. 0 and *out (new array), ERR_NOT_FOUND
 * (no such owner) or ERR_IO, the text in msg. */
int comments_list(struct db *db, enum comments_owner owner, int64_t id, long limit, bool markdown, json_t **out,
		  char *msg, size_t msglen);

/* Comment cid of the owner as openQA's JSON (rendered HTML included).
 * 0 and *out (new object), ERR_NOT_FOUND (owner or comment) or ERR_IO, the
 * text in msg. */
int comments_get(struct db *db, enum comments_owner owner, int64_t id, int64_t cid, json_t **out, char *msg,
		 size_t msglen);

/* Store text (checked by the caller: not blank, within LIMIT_COMMENT_TEXT)
 * as a new comment of the owner written by `by`: its userName is the
 * user's name, "apikey-<id>" for a key of no user, or "anonymous". On a
 * job, a force_result label sets the job's result in the same
 * transaction. 0 and *cid; ERR_NOT_FOUND (no such owner); ERR_INVALID (a
 * force_result label that cannot apply); ERR_IO; the text in msg. */
int comments_add(struct db *db, enum comments_owner owner, int64_t id, const char *text,
		 const struct comments_author *by, int64_t *cid, char *msg, size_t msglen);

/* Replace the text of comment cid, as comments_add; only its author may:
 * the user who wrote it, or for a comment of no user the key that wrote
 * it. 0; ERR_NOT_FOUND; ERR_BADSTATE (not the author); ERR_INVALID;
 * ERR_NOMEM; ERR_IO; the text in msg. */
int comments_edit(struct db *db, enum comments_owner owner, int64_t id, int64_t cid, const char *text,
		  const struct comments_author *by, char *msg, size_t msglen);

/* Delete comment cid of the owner. 0; ERR_NOT_FOUND; ERR_BADSTATE (it
 * carries a force_result label); ERR_IO; the text in msg. */
int comments_delete(struct db *db, enum comments_owner owner, int64_t id, int64_t cid, char *msg, size_t msglen);

/* Delete comment cid (of any owner) unless it carries a force_result label,
 * as openQA's bulk delete. 1 when deleted, 0 when not, or a db error. */
int comments_delete_unlabelled(struct db *db, int64_t cid);

/* --- for the review queue and carry-over (review.c) */

/* The author name of comments the server writes itself (RETRY). */
#define COMMENTS_SYSTEM_USER "system"

/* *reviewed: a comment of the job holds a bug reference or a label, what
 * takes a failed job off openQA's review list. 0 or a db error. */
int comments_job_reviewed(struct db *db, int64_t job_id, bool *reviewed);

/* The job comment cid hangs on. 0 and *job_id, ERR_NOT_FOUND (none or a
 * group's), or a db error. */
int comments_job_of(struct db *db, int64_t cid, int64_t *job_id);

/* openQA's carry-over: the newest comment of from_job holding a bug
 * reference (or "flag:carryover") copied onto to_job with its author,
 * followed by "(Automatic takeover from t#FROM)" unless the text already
 * says it was taken over; a force_result label in it applies. 0 and *cid
 * (0 when from_job has no such comment), or a db error. */
int comments_carry_over(struct db *db, int64_t from_job, int64_t to_job, int64_t *cid);

/* A comment the server writes on a job as COMMENTS_SYSTEM_USER. 0 and
 * *cid, or a db error. */
int comments_add_system(struct db *db, int64_t job_id, const char *text, int64_t *cid);

#endif
