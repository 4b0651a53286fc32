/* SPDX-License-Identifier: MIT */
/* groups.c - the job_groups table: rows as openQA's JSON, creation,
 * lookups, and the stored YAML document of a group's job templates. The
 * templates themselves are templates.c. */
#define LOG_MODULE "groups"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "server/db/db.h"
#include "server/store/groups.h"
#include "server/store/jbuild.h"
#include "server/store/retention.h"
#include "util/err.h"
#include "util/banned.h" /* last: after every system header */

int groups_list(struct db *db, int64_t id, json_t **out, char *msg, size_t msglen)
{
	struct jbuild b = JBUILD_INIT;
	struct db_stmt *st;
	json_t *a;

	*out = NULL;
	if (db_prepare(db, &st, "SELECT id, name, parent_id, default_priority, sort_order, description,"
		       " template, carry_over_bugrefs, keep_logs_in_days, keep_important_logs_in_days,"
		       " keep_results_in_days, keep_important_results_in_days, size_limit_gb"
		       " FROM job_groups WHERE (? = 0 OR id = ?) ORDER BY id", "ii", id, id)) {
		err_set(msg, msglen, "cannot read job groups");
		return ERR_IO;
	}
	a = jbuild_take(&b, json_array(), "groups");
	while (!jbuild_failed(&b) && db_step(st) == 1) {
		json_t *g = jbuild_take(&b, json_object(), "group");
		if (!g)
			break;
		jbuild_set(&b, g, "id", json_integer(db_col_int(st, 0)));
		jbuild_set(&b, g, "name", json_string(db_col_text(st, 1)));
		jbuild_set(&b, g, "parent_id", db_col_null(st, 2) ? json_null() : json_integer(db_col_int(st, 2)));
		jbuild_set(&b, g, "default_priority", json_integer(db_col_int(st, 3)));
		jbuild_set(&b, g, "sort_order", db_col_null(st, 4) ? json_null() : json_integer(db_col_int(st, 4)));
		jbuild_set(&b, g, "description", db_col_text(st, 5) ? json_string(db_col_text(st, 5)) : json_null());
		jbuild_set(&b, g, "template", db_col_text(st, 6) ? json_string(db_col_text(st, 6)) : json_null());
		jbuild_set(&b, g, "build_version_sort", json_integer(1));
		jbuild_set(&b, g, "carry_over_bugrefs", json_integer(db_col_int(st, 7) != 0));
		/* as openQA answers: the value in effect, the default where none is set */
		{
			static const int64_t dflt[] = { RETENTION_LOGS_DAYS, RETENTION_IMPORTANT_LOGS_DAYS,
							RETENTION_RESULTS_DAYS, RETENTION_IMPORTANT_RESULTS_DAYS,
							RETENTION_SIZE_LIMIT_GB };
			int k;
			for (k = 0; groups_retention_keys[k]; k++)
				jbuild_set(&b, g, groups_retention_keys[k],
					      json_integer(db_col_null(st, 8 + k) ? dflt[k] : db_col_int(st, 8 + k)));
		}
		jbuild_append(&b, a, g);
	}
	db_finalize(st);
	if (!jbuild_done(&b, a)) {
		err_set(msg, msglen, "out of memory");
		return ERR_NOMEM;
	}
	if (id && json_array_size(a) == 0) {
		json_decref(a);
		err_set(msg, msglen, "Group %lld does not exist", (long long)id);
		return ERR_NOT_FOUND;
	}
	*out = a;
	return 0;
}

int groups_add(struct db *db, const char *name, int64_t parent_id, int64_t priority, int64_t sort_order,
	       const char *description, int64_t *id, char *msg, size_t msglen)
{
	char now[DB_TIME_LEN];
	int rc;

	if (strlen(name) > LIMIT_GROUP_NAME || (description && strlen(description) > LIMIT_GROUP_TEXT)) {
		err_set(msg, msglen, "Erroneous parameters (%s over %u bytes)",
			strlen(name) > LIMIT_GROUP_NAME ? "name" : "description",
			strlen(name) > LIMIT_GROUP_NAME ? LIMIT_GROUP_NAME : LIMIT_GROUP_TEXT);
		return ERR_INVALID;
	}
	db_now(now);
	rc = db_exec(db, "INSERT INTO job_groups (name, parent_id, default_priority, sort_order, description, t_created)"
		     " VALUES (?, ?, ?, ?, ?, ?)", "tIiItt", name, parent_id, priority, sort_order, description, now);
	if (rc == ERR_INVALID) {
		err_set(msg, msglen, "a job group named '%s' already exists", name);
		return ERR_INVALID;
	}
	if (rc < 0) {
		err_set(msg, msglen, "cannot create job group '%s'", name);
		return ERR_IO;
	}
	*id = db_last_id(db);
	return 0;
}

const char *const groups_retention_keys[] = { "keep_logs_in_days", "keep_important_logs_in_days",
					      "keep_results_in_days", "keep_important_results_in_days",
					      "size_limit_gb", NULL };

int groups_set_retention(struct db *db, int64_t id, const char *key, bool has_value, int64_t value)
{
	static const char *const sql[] = {
		"UPDATE job_groups SET keep_logs_in_days = ? WHERE id = ?",
		"UPDATE job_groups SET keep_important_logs_in_days = ? WHERE id = ?",
		"UPDATE job_groups SET keep_results_in_days = ? WHERE id = ?",
		"UPDATE job_groups SET keep_important_results_in_days = ? WHERE id = ?",
		"UPDATE job_groups SET size_limit_gb = ? WHERE id = ?",
	};
	int k, rc;

	for (k = 0; groups_retention_keys[k] && strcmp(groups_retention_keys[k], key); k++)
		;
	if (!groups_retention_keys[k])
		return ERR_INVALID;
	rc = has_value ? db_exec(db, sql[k], "ii", value, id) : db_exec(db, sql[k], "ni", id);
	return rc < 0 ? rc : rc == 0 ? ERR_NOT_FOUND : 0;
}

int groups_update(struct db *db, int64_t id, const char *name, const char *description, bool has_prio, int64_t prio,
		  char *msg, size_t msglen)
{
	int rc;

	if ((rc = groups_exists(db, id)))
		return rc;
	if (name && (rc = db_exec(db, "UPDATE job_groups SET name = ? WHERE id = ?", "ti", name, id)) < 0) {
		if (rc == ERR_INVALID)
			err_set(msg, msglen, "a job group named '%s' already exists", name);
		return rc;
	}
	if (description && (rc = db_exec(db, "UPDATE job_groups SET description = ? WHERE id = ?", "ti", description,
					 id)) < 0)
		return rc;
	if (has_prio && (rc = db_exec(db, "UPDATE job_groups SET default_priority = ? WHERE id = ?", "ii", prio, id)) < 0)
		return rc;
	return 0;
}

int groups_exists(struct db *db, int64_t id)
{
	int64_t one;

	return db_query_int(db, &one, "SELECT 1 FROM job_groups WHERE id = ?", "i", id);
}

int groups_by_name(struct db *db, const char *name, int64_t *id)
{
	return db_query_int(db, id, "SELECT id FROM job_groups WHERE name = ?", "t", name);
}

int groups_name(struct db *db, int64_t id, char *buf, size_t len)
{
	struct db_stmt *st;
	int rc = db_prepare(db, &st, "SELECT name FROM job_groups WHERE id = ?", "i", id);

	if (rc)
		return rc;
	if ((rc = db_step(st)) == 1)
		snprintf(buf, len, "%s", db_col_text(st, 0));
	db_finalize(st);
	return rc == 1 ? 0 : rc == 0 ? ERR_NOT_FOUND : rc;
}

int groups_default_priority(struct db *db, int64_t id, int64_t *prio)
{
	return db_query_int(db, prio, "SELECT default_priority FROM job_groups WHERE id = ?", "i", id);
}

bool groups_has_yaml(struct db *db, int64_t id)
{
	int64_t one;

	return db_query_int(db, &one, "SELECT 1 FROM job_groups WHERE id = ? AND template IS NOT NULL", "i", id) == 0;
}

int groups_yaml(struct db *db, int64_t id, char **yaml, long *prio)
{
	struct db_stmt *st;
	int rc;

	*yaml = NULL;
	if ((rc = db_prepare(db, &st, "SELECT template, default_priority FROM job_groups WHERE id = ?", "i", id)))
		return rc;
	if ((rc = db_step(st)) == 1) {
		if (db_col_text(st, 0) && !(*yaml = strdup(db_col_text(st, 0))))
			rc = ERR_NOMEM;
		*prio = (long)db_col_int(st, 1);
	}
	db_finalize(st);
	return rc == 1 ? 0 : rc == 0 ? ERR_NOT_FOUND : rc;
}

int groups_set_yaml(struct db *db, int64_t id, const char *yaml)
{
	int rc = db_exec(db, "UPDATE job_groups SET template = ? WHERE id = ?", "ti", yaml, id);

	return rc < 0 ? rc : 0;
}

int groups_all(struct db *db, json_t **out)
{
	struct jbuild b = JBUILD_INIT;
	struct db_stmt *st;
	json_t *a;
	int rc;

	*out = NULL;
	if ((rc = db_prepare(db, &st, "SELECT id, name FROM job_groups ORDER BY name", NULL)))
		return rc;
	a = jbuild_take(&b, json_array(), "groups");
	while (!jbuild_failed(&b) && (rc = db_step(st)) == 1)
		jbuild_append(&b, a, json_pack("[I,s]", (json_int_t)db_col_int(st, 0), db_col_text(st, 1)));
	db_finalize(st);
	if (rc < 0 || jbuild_failed(&b)) {
		json_decref(a);
		return jbuild_failed(&b) ? ERR_NOMEM : rc;
	}
	*out = a;
	return 0;
}
