/* SPDX-License-Identifier: MIT */
/* needles.h - which needles the finished jobs used: per test distribution
 * and needle name, the job (and module) that last matched it and the one
 * that last had it among its candidates ("seen"), as openQA's needles
 * table keeps them. Filled from a job's result-*.json files when the job
 * ends; read as a keyset-paged list for /admin/needles. */
#ifndef VIGIL_NEEDLES_H
#define VIGIL_NEEDLES_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

struct db;

#define NEEDLES_LIST_DEFAULT_LIMIT 100
#define NEEDLES_LIST_MAX_LIMIT     1000
#define LIMIT_RESULT_JSON          (16u << 20)   /* one result-<module>.json read back */
#define NEEDLES_MAX_MODULES        4096          /* result files of one job looked at */

/* The orders of needles_list. */
enum needles_sort {
	NEEDLES_BY_LAST_MATCH, /* newest match first, never matched last */
	NEEDLES_BY_LAST_SEEN,  /* newest sighting first, never seen last */
	NEEDLES_BY_NAME,       /* name A→Z, then distri */
};

/* Read DATA/testresults/<job_id>/result-*.json of the finished job and
 * record, for each needle named there (a step's matched "needle" and the
 * "name" of every candidate under "needles"), the job, the module, the
 * step and the job's finish time (now when it has none) as its last
 * sighting, and for a matched one (step result ok or softfail) as its last
 * match. Needles are keyed by the job's DISTRI and the needle name. A missing directory
 * records nothing; an unreadable or malformed result file is skipped with
 * a warning. Runs in one transaction. 0, ERR_NOT_FOUND (no such job),
 * ERR_NOMEM, or a db error. */
int needles_record_job(struct db *db, const char *data_dir, int64_t job_id);

/* A page of needles in the given order: {"needles": [{id, distri, name,
 * file, last_match, last_match_job, last_match_module, last_match_step,
 * last_seen, last_seen_job, last_seen_module, last_seen_step}], "next":
 * cursor or null}; a step is the 1-based index in the module's details
 * (the n of openQA's #step/<module>/<n>), a time "YYYY-MM-DDTHH:MM:SS"
 * (UTC) or null. after is the "next" of the
 * previous page (NULL for the first); search, when not NULL or empty,
 * keeps names containing it. 0 and *out (new object); ERR_INVALID with
 * msg for a malformed cursor; or a db error. */
int needles_list(struct db *db, enum needles_sort sort, const char *after, const char *search, long limit,
		 json_t **out, char *msg, size_t msglen);

#endif
