/* SPDX-License-Identifier: MIT */
/* rerun.h - "re-run from here": a clone of a failed job that resumes at the
 * module after the last passed milestone before a chosen module, from the
 * disks a worker kept, pinned to that worker until a deadline; the
 * snapshots workers say they keep; and, when the resumed job is done, its
 * earlier modules copied from the old job. SQL in here, files under DATA. */
#ifndef VIGIL_RERUN_H
#define VIGIL_RERUN_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

struct db;

/* How long a pinned re-run waits for its worker by default (serve --rerun-wait). */
#define RERUN_WAIT_DEFAULT_S 600
/* Snapshots one worker may report. */
#define RERUN_MAX_HELD 256

/* Replace the list of jobs whose disks worker_id keeps by the
 * comma-separated ids in list ("" for none). 0, ERR_INVALID (not a list of
 * ids), or a db error. */
int rerun_record_held(struct db *db, int64_t worker_id, const char *list);

/* The jobs whose disks worker_id keeps, as a new JSON array of ids. */
json_t *rerun_held_json(struct db *db, int64_t worker_id);

/* Clone job id (as jobs_restart: clone_id, chained children) to re-run it
 * from the last passed milestone before module (NULL: its first failed
 * module). When a worker keeps the job's disks, the clone resumes at the
 * module after that milestone and is pinned to that worker for wait_s
 * seconds from now_s; else it is a full re-run. *out (new object): "id",
 * "resume_from", "milestone", "worker_id" (the last three null for a full
 * re-run). 0; ERR_NOT_FOUND (no job); ERR_INVALID (not done, a job of a
 * parallel cluster, no such module, nothing failed) or ERR_BADSTATE (already cloned), with msg; or a
 * db error. */
int rerun_create(struct db *db, int64_t id, const char *module, int64_t now_s, int64_t wait_s, json_t **out,
		 char *msg, size_t msglen);

/* Turn the pinned re-runs whose deadline has passed (at now_s) or whose
 * worker no longer reports their snapshot into full re-runs any worker may
 * take. *n: how many. 0 or a db error. */
int rerun_release_due(struct db *db, int64_t now_s, int *n);

/* Of a job just given to a worker: *module (new string) to resume at and
 * *from the job whose disks to resume from, when it is a pinned re-run;
 * *module NULL otherwise. 0 or a db error. */
int rerun_resume_of(struct db *db, int64_t job_id, char **module, int64_t *from);

/* When job id (a re-run, its results uploaded) skipped the modules before
 * its resume point: copy those modules from the job it resumed from
 * (result-<module>.json with "copied_from", screenshots, thumbnails and
 * text files hard-linked, their entries in results.json and their module
 * results), and fold their results into *result (the worker's result of
 * the rest, at least 16 bytes; left as it is when NULL or empty). 0, or an
 * error (the job keeps what it has). */
int rerun_finish(struct db *db, const char *data_dir, int64_t id, char *result, size_t resultlen);

#endif
