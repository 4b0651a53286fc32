/* SPDX-License-Identifier: MIT */
/* rejudge.h - re-judging without re-running: a finished job's screen checks
 * that did not pass (failed assert_screen, unmatched check_screen, near
 * misses) are judged again against their stored screenshots with the
 * distribution's current needles (DATA/tests/<DISTRI>/needles), by the
 * runner's own matcher; so are the failed or needs-review jobs of the same
 * build on steps asking for any of the same tags. Never changes a stored
 * result. The last answer per job is kept in memory (rejudge_store). */
#ifndef VIGIL_REJUDGE_H
#define VIGIL_REJUDGE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "image/needle.h"

struct db;

#define REJUDGE_MAX_JOBS  500   /* jobs of one build judged in one request */
#define REJUDGE_MAX_STEPS 5000  /* steps judged in one request */
#define REJUDGE_STORE_MAX 1024  /* jobs whose last answer is kept */

/* --- the last answer per job, shared by the handler threads */

struct rejudge_store;

/* 0 and a new empty store, or ERR_NOMEM. */
int rejudge_store_new(struct rejudge_store **out);
void rejudge_store_free(struct rejudge_store *s); /* NULL-safe */
/* Keep a copy of job (an object of rejudge_run's "jobs" list, with its
 * "id") as that job's last re-judge, adding "time"; beyond
 * REJUDGE_STORE_MAX jobs the oldest entry goes. 0 or ERR_NOMEM. */
int rejudge_store_put(struct rejudge_store *s, const json_t *job, const char *time);
/* A new copy of job_id's last re-judge, or NULL when there is none. */
json_t *rejudge_store_get(struct rejudge_store *s, int64_t job_id);

/* --- one re-judge */

struct rejudge_job;
struct rejudge_task;

/* What one re-judge holds: the needles, the jobs and the steps to judge.
 * Not thread-safe (the needles' matcher caches); one per request. */
struct rejudge {
	struct needle_set needles;
	size_t broken_needles;       /* skipped while loading (logged) */
	struct rejudge_job *jobs;
	size_t njobs, jobs_cap;
	struct rejudge_task *tasks;
	size_t ntasks, tasks_cap;
	bool truncated;              /* REJUDGE_MAX_STEPS reached */
	size_t decoded, searches;    /* screenshots decoded, needle searches run */
};

/* Load the needles of needles_dir. 0, or a negative code with msg filled
 * (the directory cannot be read); call rejudge_release in every case. */
int rejudge_init(struct rejudge *rj, const char *needles_dir, char *msg, size_t msglen);
void rejudge_release(struct rejudge *rj);

/* Add the job whose results lie in results_dir (result-<module>.json and
 * the screenshots): info is its answer object to be completed (ownership
 * taken; its "id" names the job), modules its [{"name", "result"}] in run
 * order. Steps judged: every screen check that did not pass, or, when
 * tags is an array of tag expressions, those asking for one of them.
 * since: when the job started (epoch s, 0 unknown): a needle whose files
 * are older had its whole-screen search on the step's frame in the run,
 * so only the margin search is done again for it.
 * *asked (may be NULL): a new array of the tag expressions the judged
 * steps asked for, without duplicates. 0 or ERR_NOMEM. */
int rejudge_add_job(struct rejudge *rj, json_t *info, const char *results_dir, const json_t *modules,
		    const json_t *tags, double since, json_t **asked);

/* Judge every step added: each screenshot file decoded once (hard links
 * are one file), each needle searched on it as the runner searches a
 * frame (margin first, the whole screen when that finds nothing), and
 * answer per job (see rejudge_add_job's since): {"id", ..., "steps": [{"module", "step", "screenshot",
 * "check", "tags", "old": {"result", "needs_review", "needle",
 * "similarity"}, "new": {"result": "pass"|"softfail"|"fail", "needle",
 * "similarity", "areas": [{x, y, w, h, similarity, required, ok}],
 * "search"} | null, "would_pass", "error"?}], "would_pass", "still_failing",
 * "verdict", "summary", "failed_module", "failed_step"}. *out: {"jobs":
 * [...], "stats": {...}}. 0 or ERR_NOMEM. */
int rejudge_run(struct rejudge *rj, json_t **out);

/* The whole request: job_id (a finished job) and the failed or
 * needs-review jobs of its build (same DISTRI, VERSION, FLAVOR, BUILD; at
 * most REJUDGE_MAX_JOBS, newest clones only), with DATA/tests/<DISTRI>/
 * needles. *out as rejudge_run's, with "job_id", "build", "tags",
 * "needles" and "ms". 0; ERR_NOT_FOUND (no such job); ERR_BADSTATE (not
 * finished); ERR_INVALID (its DISTRI names no distribution); or an error,
 * msg filled. */
int rejudge_build(struct db *db, const char *data_dir, int64_t job_id, json_t **out, char *msg, size_t msglen);

/* The difference heat-map (image/heatmap.h) of match area `area` of needle
 * `needle` of job job_id's distribution as it is now, on the job's stored
 * screenshot `shot`, where the matcher places that needle (margin search,
 * else the whole screen): a PNG written once per question under
 * DATA/cache/heatmap/ (the name changes with the needle's and the
 * screenshot's files), its path into *path (new string). 0; ERR_NOT_FOUND
 * (no such job, screenshot, needle or area); ERR_INVALID (a bad name); or
 * an error, msg filled. */
int rejudge_heatmap(struct db *db, const char *data_dir, int64_t job_id, const char *shot, const char *needle,
		    long area, char **path, char *msg, size_t msglen);

#endif
