/* SPDX-License-Identifier: MIT */
/* joblist.h - lists of jobs as GET /api/v1/jobs and the pages ask for
 * them: filters, an order, and keyset pages whose every statement is an
 * index range scan bounded by the page size (jobs_list_* indexes of
 * db_migrate.c); openQA's own limit/offset/latest listing beside them.
 * The jobs themselves come as jobs.c's openQA hashes. */
#ifndef VIGIL_JOBLIST_H
#define VIGIL_JOBLIST_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "util/buf.h"

struct db;

/* Most ids one ids= filter may name. */
#define JOBLIST_MAX_IDS 10000

/* A list's order. ID: newest first. RESULT, TEST: by that column
 * ascending, newest first among equals. */
enum joblist_sort { JOBLIST_SORT_ID, JOBLIST_SORT_RESULT, JOBLIST_SORT_TEST };

/* What a list shows: NULL (0, false, empty array) matches any. Text
 * columns match exactly, distri ignoring case; states, results and ids
 * are arrays of strings (ids decimal, states and results valid: the
 * caller checks). */
struct joblist_filter {
	const char *build, *distri, *version, *flavor, *arch, *test, *machine, *iso;
	int64_t group;   /* only jobs of this group */
	bool no_group;   /* only jobs of no group (openQA's groupid=0) */
	const json_t *states, *results, *ids;
	bool current;    /* only jobs not cloned (scope=current) */
	int64_t before, after; /* openQA's: only ids below before, above after */
};

/* One keyset page: at most limit jobs in order sort, those following
 * job next in that order, or the nearest ones preceding job prev, or
 * (both 0) the first ones. */
struct joblist_page {
	enum joblist_sort sort;
	int64_t next, prev;
	long limit;
};

/* The ids of one page in list order: *ids (new array, NULL when *n is 0),
 * *n; *next the id to pass as next for the following page, *prev as prev
 * for the preceding one (0: none; a page reached backwards that would
 * come out short is the first page instead). plans: when not NULL, the
 * plan of every statement run is appended (strings, db_plan). Cost: each
 * statement reads at most limit + 1 rows of one index range, plus the
 * rows of that range the filters beyond the first indexed one reject.
 * 0; ERR_NOT_FOUND (the cursor job is gone and the order needs its key);
 * ERR_NOMEM; a db error. */
int joblist_page_ids(struct db *db, const struct joblist_filter *f, const struct joblist_page *p, int64_t **ids,
		     size_t *n, int64_t *next, int64_t *prev, json_t *plans);

/* The most JSON text one list answer may take. */
#define LIMIT_JOBLIST_TEXT (1u << 28)

/* A keyset page as GET /api/v1/jobs answers it (vigil's extension):
 * {"jobs": [openQA job hashes in list order], "next": id|null,
 * "prev": id|null}, appended to out as JSON text (jobs_to_text_many).
 * 0, or as joblist_page_ids, ERR_NOMEM, ERR_TOO_BIG. */
int joblist_page_text(struct db *db, const struct joblist_filter *f, const struct joblist_page *p, struct buf *out);
/* The same page as a jansson object (for the pages, which write HTML of
 * it): {"jobs": [jobs_to_json hashes with empty "modules", as the text
 * has them, in list order, a job deleted meanwhile left out], "next":
 * id|null, "prev": id|null} into *out (new).
 * 0, or as joblist_page_ids, ERR_NOMEM, a db error. */
int joblist_page_json(struct db *db, const struct joblist_filter *f, const struct joblist_page *p, json_t **out);

/* openQA's list: the newest limit jobs after skipping offset, listed
 * oldest first; latest keeps only the newest job of each scenario
 * (distri, version, flavor, arch, test, machine). 0 and *out (new array
 * of job hashes with empty "modules"), ERR_NOMEM, or a db error. */
int joblist_openqa(struct db *db, const struct joblist_filter *f, long limit, long offset, bool latest,
		   json_t **out);
/* The same as GET /api/v1/jobs answers it, {"jobs": [...]}, appended to
 * out as JSON text. 0, ERR_NOMEM, ERR_TOO_BIG, or a db error. */
int joblist_openqa_text(struct db *db, const struct joblist_filter *f, long limit, long offset, bool latest,
			struct buf *out);

#endif
