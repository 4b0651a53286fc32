/* SPDX-License-Identifier: MIT */
/* builds.h - builds as the dashboard, the group page and the overview
 * show them (openQA's BuildResults.pm and jobs overview): a group's newest
 * builds with the counts of their latest jobs, and the latest job of each
 * scenario of one build. Reads only; every statement is bounded by the
 * jobs of the builds it shows, not by all jobs. */
#ifndef VIGIL_BUILDS_H
#define VIGIL_BUILDS_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

struct db;

/* Most builds one answer lists (openQA's group overview offers 400). */
#define BUILDS_MAX 400
/* Most jobs one overview lists (openQA's tests_overview_max_jobs). */
#define BUILDS_OVERVIEW_MAX_JOBS 2000

/* openQA's build results of group id (GET /api/v1/job_groups/<id>/build_results):
 * {"build_results": [...], "max_jobs", "limit_exceeded": 0, "children": [],
 * "group": {"id", "name", "always_show_version": 0}}. Builds (version and
 * build) by their newest job, newest first, at most limit_builds
 * (<= BUILDS_MAX), only those whose newest job was created in the last
 * time_limit_days (0: any). Each build: openQA's "key", "build", "version",
 * "version_count", "distris" {name: 1}, "passed", "softfailed", "failed"
 * (failed, incomplete, timeout_exceeded), "skipped" (aborted results,
 * cancelled), "unfinished", "labeled" and "comments" (failed jobs with a
 * bug reference / any comment), "total", "all_passed", "reviewed",
 * "commented", "date" (newest creation), "escaped_version",
 * "escaped_build", "escaped_id"; and vigil's "needs_review" (failed jobs
 * whose every failure was a near miss: part of "failed"), "running" and
 * "scheduled" (together "unfinished"). Counted over the newest job not
 * cloned of each scenario (test, arch, flavor, machine), as openQA.
 * plans: when not NULL, each statement's plan is appended (db_plan).
 * 0 and *out (new object); ERR_NOT_FOUND (no such group); ERR_NOMEM (a
 * part could not be made: no answer); a db error. */
int builds_group(struct db *db, int64_t id, long limit_builds, long time_limit_days, json_t **out, json_t *plans);

/* openQA's dashboard_build_results: {"results": [builds_group of every
 * group with a build to show, by sort_order then name], "limit_exceeded": 0}.
 * 0 and *out, ERR_NOMEM, or a db error. */
int builds_dashboard(struct db *db, long limit_builds, long time_limit_days, json_t **out);

/* What one overview shows: NULL / 0 match any; build NULL: the build of
 * the newest job matching the rest. */
struct builds_overview_q {
	const char *distri, *version, *flavor, *arch, *machine, *test, *build;
	int64_t group;
	bool todo; /* openQA's todo=1: only jobs waiting for review (review.h) */
};

/* The newest job of each scenario (distri, version, flavor, arch, test,
 * machine) of one build, as openQA's GET /api/v1/jobs/overview:
 * [{"id", "name"}] with vigil's "test", "distri", "version", "flavor",
 * "arch", "machine", "build", "group_id" (or null), "state", "result",
 * "needs_review"; ordered by test, machine, id; at most
 * BUILDS_OVERVIEW_MAX_JOBS. plans as builds_group. 0 and *out (new
 * array), ERR_NOMEM, or a db error. */
int builds_overview(struct db *db, const struct builds_overview_q *q, json_t **out, json_t *plans);

#endif
