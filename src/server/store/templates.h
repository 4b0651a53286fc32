/* SPDX-License-Identifier: MIT */
/* templates.h - job templates (openQA's JobTemplate.pm): rows that tie a
 * product, a machine and a test suite to a job group, listed as openQA's
 * JSON, added and deleted one by one, and a group's templates read as or
 * replaced from a YAML document (jt_yaml.h) in one transaction. Errors
 * come with the text to answer in msg. */
#ifndef VIGIL_TEMPLATES_H
#define VIGIL_TEMPLATES_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "server/store/jt_yaml.h"

struct db;

/* The templates (one when id > 0, else all) as openQA's array. 0 and *out
 * (new array); ERR_NOT_FOUND (id > 0, no such template); ERR_IO; the text in msg. */
int templates_list(struct db *db, int64_t id, json_t **out, char *msg, size_t msglen);

/* One template to add, as POST /api/v1/job_templates names its rows: an id
 * (0 when not given, < 0 when given but not an id) or else a name. */
struct templates_new {
	int64_t group_id;
	const char *group_name;
	int64_t machine_id;
	const char *machine_name;
	int64_t test_suite_id;
	const char *test_suite_name;
	int64_t product_id;                         /* else by the four below */
	const char *distri, *version, *flavor, *arch;
	const char *prio;                           /* text; NULL: the group's default */
	const char *name, *description;             /* NULL: empty */
};

/* Resolve the rows of t in the order above and insert the template.
 * 0 and *id; ERR_INVALID (a row missing or unknown, bad prio, the group is
 * managed by its YAML document, or the template exists); ERR_IO; the text
 * in msg. */
int templates_add(struct db *db, const struct templates_new *t, int64_t *id, char *msg, size_t msglen);

/* Delete template id. 0; ERR_INVALID (its group is managed by its YAML
 * document); ERR_NOT_FOUND; ERR_IO; the text in msg. */
int templates_delete(struct db *db, int64_t id, char *msg, size_t msglen);

/* The YAML of a group: as posted when stored, else written from its
 * template rows, into *out (new string). 0, ERR_NOMEM or a db error
 * (ERR_IO), *out NULL then. */
int templates_group_yaml(struct db *db, int64_t group, char **out);

/* Every group's YAML as {"name": "yaml", ...}, groups ordered by name.
 * 0 and *out (new object); ERR_IO with the text in msg. */
int templates_all_yaml(struct db *db, json_t **out, char *msg, size_t msglen);

/* Replace the templates of group by the entries of l (names mapped to
 * rows, the group's other templates deleted) and, unless preview, store
 * yaml as its document, all in one transaction (a preview is rolled
 * back). A problem with an entry appends "line L: what" to errors (array)
 * and ends the replacement. 0 with the template ids appended to ids; 1
 * after a user error; ERR_IO after a database error (its text appended
 * to errors); ERR_NOMEM (nothing changed) when ids or errors could not
 * take an entry. *applied: the entries were all written (ids complete), even
 * when storing or committing then failed; *had_yaml: the group had a
 * stored document before. */
int templates_replace(struct db *db, int64_t group, const struct jt_list *l, const char *yaml, bool preview,
		      json_t *ids, json_t *errors, bool *applied, bool *had_yaml);

#endif
