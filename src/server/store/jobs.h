/* SPDX-License-Identifier: MIT */
/* jobs.h - the job model: creation from settings, openQA's job JSON
 * (Jobs.pm to_hash), name, settings merge, cancel, restart (clone), delete.
 * States and results are openQA's (reference §4.8). */
#ifndef VIGIL_JOBS_H
#define VIGIL_JOBS_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include "util/buf.h"

struct db;

#define JOBS_DEFAULT_PRIORITY 50

/* Merge the string settings of src into dst, src winning, except that
 * WORKER_CLASS values are united (comma-separated, first seen first, no
 * duplicates), as openQA composes job settings. Non-string values of src are
 * converted (integers, reals, booleans as 0/1); others are skipped. 0, or
 * ERR_NOMEM when a setting could not be stored (dst is then incomplete). */
int jobs_settings_merge(json_t *dst, const json_t *src);

/* Replace %KEY% in every value by KEY's value (one pass, unknown kept).
 * 0, or ERR_TOO_BIG with err naming the setting when one value would grow
 * past 1 MiB or all of them together past LIMIT_JOB_SETTINGS (the settings
 * are then half expanded: the caller drops them); ERR_NOMEM. */
#define LIMIT_JOB_SETTINGS (4u << 20)
int jobs_settings_expand(json_t *settings, char *err, size_t errlen);

/* openQA's job name: DISTRI-VERSION-FLAVOR-ARCH-Build<BUILD>-TEST@MACHINE
 * (empty parts skipped, TEST replaced by JOB_TEMPLATE_NAME when set), every
 * character outside [a-zA-Z0-9@._+:-] turned into '_'. New string, NULL
 * when out of memory. */
char *jobs_name(const json_t *settings);

/* Default WORKER_CLASS qemu_<ARCH> when settings has none and BACKEND is
 * qemu or unset. 0 or ERR_NOMEM. */
int jobs_settings_default_class(json_t *settings);

/* Settings of one admin table row merged into into (kind: machine, product, test_suite). 0,
 * ERR_NOMEM or a db error. */
int jobs_table_settings(struct db *db, const char *kind, int64_t owner_id, json_t *into);
/* Settings of one job template row merged into into, as jobs_table_settings. */
int jobs_template_settings(struct db *db, int64_t template_id, json_t *into);

/* Insert a scheduled job. settings (string values) must hold TEST. group_id
 * and scheduled_product_id 0 for none. 0 and *id, ERR_INVALID, or a db error. */
int jobs_insert(struct db *db, const json_t *settings, int64_t priority, int64_t group_id,
		int64_t scheduled_product_id, int64_t *id);

/* The job hash of GET /api/v1/jobs/<id> (without the {"job":...} wrapper);
 * details adds testresults/logs/ulogs; "needs_review": true (vigil) when
 * set. 0, ERR_NOT_FOUND, or a db error. */
int jobs_to_json(struct db *db, int64_t id, bool details, json_t **out);
/* GET /api/v1/jobs/<id>[/details]'s job hash, the one the job page
 * reads too: jobs_to_json with "modules" (workers_job_modules) and, with
 * details, "testresults" (the same), "logs" and "screenshots" (the job's
 * files under data_dir, artefacts.h) and "ulogs". 0 and *out (new
 * object), ERR_NOT_FOUND, ERR_NOMEM, or a db error. */
int jobs_details_json(struct db *db, const char *data_dir, int64_t id, bool details, json_t **out);
/* The hashes of jobs_to_json for ids at once, as JSON text appended to out
 * (three queries per 500 jobs instead of six per job; no jansson tree, which
 * cost the job list most of its time): span[i] is the place of ids[i]'s
 * hash in out, len 0 where no such job (deleted meanwhile). extra (more
 * members, such as ",\"modules\":[]", or NULL) ends every hash. 0 or a db
 * error, ERR_NOMEM, ERR_TOO_BIG (out's limit). */
struct jobs_span {
	size_t off, len;
};
int jobs_to_text_many(struct db *db, const int64_t *ids, size_t n, bool details, const char *extra,
		      struct buf *out, struct jobs_span *span);
/* The same hashes as jansson objects, read as jobs_to_text_many reads
 * them: objs[i] (n of them) a new object, NULL where no such job. 0 or a
 * db error, ERR_NOMEM (every objs[i] NULL then). */
int jobs_to_json_many(struct db *db, const int64_t *ids, size_t n, bool details, json_t **objs);

/* Cancel a job whose result is still none: result user_cancelled, a
 * scheduled/assigned job becomes cancelled. *changed 0 when nothing to do.
 * 0, ERR_NOT_FOUND, or a db error. */
int jobs_cancel(struct db *db, int64_t id, const char *reason, int *changed);

/* openQA's set_prio: the job's priority (any state). 0, ERR_NOT_FOUND, or a db error. */
int jobs_set_prio(struct db *db, int64_t id, int64_t prio);

/* openQA's cancel_by_settings: cancel (jobs_cancel, reason) every job not
 * ended (scheduled up to uploading) matching every pair of the object
 * filter: DISTRI, VERSION, FLAVOR, MACHINE, ARCH, BUILD, TEST against the
 * job's columns, any other key against its settings. *n: how many changed.
 * 0, ERR_INVALID (an empty filter, or a value not a string), or a db error. */
int jobs_cancel_by_settings(struct db *db, const json_t *filter, const char *reason, int *n);

/* Clone the job (a new scheduled job with its settings, priority and group),
 * linking it by clone_id; a scheduled original is cancelled as
 * user_restarted. In a chain, the clone waits for the newest clones of the
 * original's parents, the original's waiting children wait for the clone,
 * and children it had skipped are cloned after it. A job of a parallel
 * cluster restarts the whole cluster (openQA's auto_duplicate): relatives
 * still executing end parallel_restarted, waiting ones cancelled/skipped,
 * each gets a clone, the clones linked in parallel as the originals. 0 and *new_id;
 * ERR_NOT_FOUND; ERR_BADSTATE (already cloned, message in msg); or a db error. */
int jobs_restart(struct db *db, int64_t id, int64_t *new_id, char *msg, size_t msglen);

/* Delete a job with its settings and dependencies. 0, ERR_NOT_FOUND, or a db error. */
int jobs_delete(struct db *db, int64_t id);

/* Mark a failed job as needing review: every failure was a near miss of
 * a needle (the runner's results.json says so). A job whose result is not
 * failed is left as it is. 0 or a db error. */
int jobs_set_needs_review(struct db *db, int64_t id);

/* {"id", "state", "result", "blocked_by_id"} of a job. 0 and *out (new
 * object), ERR_NOT_FOUND, or an error. */
int jobs_status_json(struct db *db, int64_t id, json_t **out);

/* {"result", "reason"} of a job (reason null when unset). 0 and *out (new
 * object), ERR_NOT_FOUND, or an error. */
int jobs_outcome_json(struct db *db, int64_t id, json_t **out);

/* *named: a setting of the job names the asset type/name. 0 or a db error. */
int jobs_names_asset(struct db *db, int64_t id, const char *type, const char *name, bool *named);

/* Create the jobs of one POST /api/v1/jobs in one transaction: for each
 * suffix of per (an object of objects), global's settings under per's,
 * completed from the tables unless clone, each job's id set under its
 * suffix in ids; then the dependencies they name (_START_AFTER..., _PARALLEL of
 * suffixes or of existing job ids). 0; ERR_INVALID (a bad setting or
 * dependency) or ERR_IO, nothing created, the text in msg (a job's
 * problem prefixed by "SUFFIX: " when multi). */
int jobs_create_posted(struct db *db, const json_t *global, const json_t *per, bool clone, bool multi, json_t *ids,
		       char *msg, size_t msglen);

/* jobs_restart, and in *clones (new object, on success) the jobs cloned
 * with it (skipped chained children) as {"old id": new id}; *clones NULL
 * when out of memory after the restart was stored (answer 503). */
int jobs_restart_clones(struct db *db, int64_t id, int64_t *new_id, json_t **clones, char *msg, size_t msglen);

/* True for the states / results openQA knows. */
bool jobs_state_valid(const char *s);
bool jobs_result_valid(const char *s);
/* True while a worker holds a job in state s (assigned, setup, running,
 * uploading). */
bool jobs_state_executing(const char *s);
/* The state of job id into buf. 0, ERR_NOT_FOUND, or a db error. */
int jobs_state_of(struct db *db, int64_t id, char *buf, size_t len);

#endif
