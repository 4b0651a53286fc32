/* SPDX-License-Identifier: MIT */
/* review.h - what happens to a finished job for its reviewers, as openQA
 * does it: the review queue (the todo=1 of openQA's overview: failed jobs
 * no bug reference or label marks as reviewed), bug references carried
 * over from an earlier job of the scenario that failed the same way, and
 * RETRY=N re-runs. Reads jobs and job_modules; comments through comments.h. */
#ifndef VIGIL_REVIEW_H
#define VIGIL_REVIEW_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

struct db;

/* openQA's carry_over defaults: earlier jobs looked at, and the changes of
 * failure reason after which the search gives up. */
#define REVIEW_LOOKUP_DEPTH 10
#define REVIEW_STATE_CHANGES 3
/* Most jobs one page of the queue lists. */
#define REVIEW_PAGE_MAX 200

/* Recompute whether the job waits for review: finished, failed (failed,
 * incomplete, timeout_exceeded; softfailed or aborted only with a failed
 * module), and no comment holding a bug reference or a label. A retried
 * job leaves the queue by its clone. 0, ERR_NOT_FOUND, or a db error. */
int review_refresh(struct db *db, int64_t job_id);

/* One page of the queue, newest job first, jobs with ids below after
 * (0: from the newest): {"jobs": [{"id", "name", "test", "distri",
 * "version", "flavor", "arch", "machine", "build", "group_id", "group",
 * "result", "needs_review", "t_finished", "failed_modules", "restarts"}],
 * "next": the after of the next page or null}. limit 1..REVIEW_PAGE_MAX.
 * 0 and *out (new object) or a db error. */
int review_list(struct db *db, int64_t after, long limit, json_t **out);

/* openQA's failure reason of a job: the sorted "name:result" of its
 * failed, softfailed and unfinished modules, a module's name replaced by
 * the bug references in its steps' titles (result-<module>.json under
 * data_dir, NULL: none read), joined by ','; "GOOD" when there is none.
 * 0 and *out (new string), or an error. */
int review_failure_reason(struct db *db, const char *data_dir, int64_t job_id, char **out);

/* openQA's carry_over_bugrefs for a failed or softfailed job whose group
 * allows it: among the last REVIEW_LOOKUP_DEPTH finished jobs of the same
 * scenario before it, the first with the same failure reason, unless the
 * reason changed more than REVIEW_STATE_CHANGES times before; its newest
 * comment with a bug reference is copied (comments_carry_over). *from the
 * job taken from, 0 when none. 0 or an error. */
int review_carry_over(struct db *db, const char *data_dir, int64_t job_id, int64_t *from);

/* openQA's handle_retry: a job with RETRY=N[:text] that did not pass or
 * softfail (nor was cancelled, skipped or obsoleted) and was restarted
 * fewer than N times in its clone chain is cloned as a restart, with a
 * comment saying why. *clone the new job, 0 when none. 0 or an error. */
int review_retry(struct db *db, int64_t job_id, int64_t *clone);

/* All three for a job that just finished (set_done): retry, carry-over,
 * then its place in the queue. 0 or the first error (the others still run). */
int review_job_done(struct db *db, const char *data_dir, int64_t job_id);

/* The job's review facts: {"todo", "reason" (failure reason), "restarts"
 * (its clone ancestors), "retry" (N or null), "runs": [{"id", "result"}]
 * of its clone chain oldest first, "retry_verdict" (text or null: "passed
 * on retry 2 of 3", "failed 3 of 3")}. 0 and *out, ERR_NOT_FOUND, or an error. */
int review_job_json(struct db *db, const char *data_dir, int64_t job_id, json_t **out);

/* A group's carry_over_bugrefs switch. 0, ERR_NOT_FOUND, or a db error. */
int review_group_carry_over(struct db *db, int64_t group_id, bool *on);
int review_group_set_carry_over(struct db *db, int64_t group_id, bool on);

#endif
