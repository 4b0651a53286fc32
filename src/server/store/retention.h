/* SPDX-License-Identifier: MIT */
/* retention.h - what the server keeps, as openQA's job groups say: the
 * logs and the results of finished jobs for keep_*_in_days (longer for
 * important builds: a group comment "tag:BUILD:important"; a job labelled
 * "label:linked" counts as important too), each group's assets within
 * size_limit_gb (newest jobs' assets first), assets no job names for
 * RETENTION_UNTRACKED_DAYS. Nothing a job that has not finished names is
 * ever removed. A plan says what would go and why; running it removes
 * exactly that, then the screenshots no job links any more. */
#ifndef VIGIL_RETENTION_H
#define VIGIL_RETENTION_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

struct db;

/* The defaults of a group that sets nothing (openQA's). 0 days: forever. */
#define RETENTION_LOGS_DAYS 30
#define RETENTION_IMPORTANT_LOGS_DAYS 120
#define RETENTION_RESULTS_DAYS 365
#define RETENTION_IMPORTANT_RESULTS_DAYS 0
#define RETENTION_SIZE_LIMIT_GB 100
/* Registered assets that no job names are removed after this many days. */
#define RETENTION_UNTRACKED_DAYS 14
/* The largest keep_*_in_days and size_limit_gb a group takes. */
#define RETENTION_MAX_DAYS 36500
#define RETENTION_MAX_GB 1000000

/* The group's keep_* values and size limit, defaults filled in. */
struct retention_group {
	int64_t keep_logs_in_days;
	int64_t keep_important_logs_in_days;
	int64_t keep_results_in_days;
	int64_t keep_important_results_in_days;
	int64_t size_limit_gb;
};
/* Read group_id's values (0: the jobs without a group, all defaults). 0,
 * ERR_NOT_FOUND, or a db error. */
int retention_group_get(struct db *db, int64_t group_id, struct retention_group *g);

/* What a cleanup at now (epoch seconds) would remove:
 * {"now", "jobs": [{id, group_id, t_finished, bytes, reason}],
 *  "logs": [{id, group_id, files: [...], bytes, reason}],
 *  "assets": [{id, type, name, size, reason}],
 *  "kept_assets": [{id, type, name, reason}] (over a limit, but a job that
 *  has not finished names it), "bytes"}. 0 and *out (new), ERR_NOMEM (a
 *  part could not be made: no plan, since it decides what is removed), or a
 *  db error. */
int retention_plan(struct db *db, const char *data_dir, int64_t now, json_t **out);

/* Remove what retention_plan(now) lists (planned again here), then every
 * stored screenshot no job links any more. *done gets the plan with
 * "removed_images" added; an item that could not be removed gets "error".
 * The caller holds the server's write lock. 0, ERR_NOMEM (no plan: nothing
 * removed; or, after the removals, an answer that could not be made whole:
 * *done NULL), or a db error. */
int retention_run(struct db *db, const char *data_dir, int64_t now, json_t **done);

#endif
