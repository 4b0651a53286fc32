/* SPDX-License-Identifier: MIT */
/* needles.c - the needles table: the last match and the last sighting of
 * every needle (by DISTRI and name), recorded from a finished job's
 * result-*.json and listed in keyset pages. Reads only the job's own
 * artefact directory; every statement with bound parameters. Times never
 * known are stored as '' (not NULL) so one index serves each order. */
#define LOG_MODULE "needles"
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "server/store/artefacts.h"
#include "server/db/db.h"
#include "server/store/needles.h"
#include "server/store/jbuild.h"
#include "util/err.h"
#include "util/log.h"
#include "util/path.h"
#include "util/str.h"
#include "util/banned.h" /* last: after every system header */

#define NEEDLE_NAME_MAX 256 /* longer names are not needles vigil wrote */

struct job_info {
	int64_t id;
	char distri[128];
	char when[DB_TIME_LEN];
};

/* Runs of needles_record_job's transaction that lost to another writer. */
#define NEEDLES_TRIES 5

static bool result_file(const char *name)
{
	return str_starts_with(name, "result-") && str_ends_with(name, ".json") && strlen(name) > 12;
}

static int select_result(const struct dirent *e)
{
	return result_file(e->d_name);
}

static bool name_ok(const char *s)
{
	return s && *s && strlen(s) <= NEEDLE_NAME_MAX;
}

/* The file name of a needle's path as the runner reported it. */
static const char *base_name(const char *path)
{
	const char *s = path ? strrchr(path, '/') : NULL;

	return s ? s + 1 : path;
}

/* Record one needle: always seen, matched when matched. */
static int record(struct db *db, const struct job_info *j, const char *module, long step, const char *name,
		  const char *file, bool matched)
{
	int rc;

	if (!name_ok(name))
		return 0;
	file = base_name(file);
	if (file && strlen(file) > NEEDLE_NAME_MAX + 8)
		file = NULL;
	rc = db_exec(db,
		     "INSERT INTO needles (distri, name, file, last_seen_job_id, last_seen_module, last_seen_step,"
		     " last_seen_time) VALUES (?, ?, ?, ?, ?, ?, ?)"
		     " ON CONFLICT (distri, name) DO UPDATE SET file = COALESCE(excluded.file, needles.file),"
		     " last_seen_job_id = excluded.last_seen_job_id, last_seen_module = excluded.last_seen_module,"
		     " last_seen_step = excluded.last_seen_step, last_seen_time = excluded.last_seen_time",
		     "tttitit", j->distri, name, file, j->id, module, (int64_t)step, j->when);
	if (rc < 0 || !matched)
		return rc < 0 ? rc : 0;
	rc = db_exec(db,
		     "UPDATE needles SET last_matched_job_id = ?, last_matched_module = ?, last_matched_step = ?,"
		     " last_matched_time = ? WHERE distri = ? AND name = ?",
		     "itittt", j->id, module, (int64_t)step, j->when, j->distri, name);
	return rc < 0 ? rc : 0;
}

/* Record the needles of one module's result JSON. */
static int record_module(struct db *db, const struct job_info *j, const char *module, const json_t *res)
{
	const json_t *details = json_object_get(res, "details"), *d;
	size_t i;
	int rc = 0;

	json_array_foreach(details, i, d) {
		const char *needle = json_string_value(json_object_get(d, "needle"));
		const char *result = json_string_value(json_object_get(d, "result"));
		const json_t *cands = json_object_get(d, "needles"), *c;
		bool matched = needle && result && (!strcmp(result, "ok") || !strcmp(result, "softfail"));
		size_t k;

		json_array_foreach(cands, k, c) {
			const char *n = json_string_value(json_object_get(c, "name"));
			/* The match is recorded after its rivals, so it is never undone. */
			if (n && (!needle || strcmp(n, needle)))
				rc = record(db, j, module, (long)i + 1, n, json_string_value(json_object_get(c, "json")), false);
			if (rc)
				return rc;
		}
		if (needle && (rc = record(db, j, module, (long)i + 1, needle,
					   json_string_value(json_object_get(d, "json")), matched)))
			return rc;
	}
	return 0;
}

static int job_info(struct db *db, int64_t job_id, struct job_info *j)
{
	struct db_stmt *st;
	int rc;

	j->id = job_id;
	if ((rc = db_prepare(db, &st, "SELECT distri, t_finished FROM jobs WHERE id = ?", "i", job_id)))
		return rc;
	rc = db_step(st);
	if (rc == 1) {
		snprintf(j->distri, sizeof(j->distri), "%s", db_col_text(st, 0) ? db_col_text(st, 0) : "");
		if (db_col_text(st, 1) && strlen(db_col_text(st, 1)) == DB_TIME_LEN - 1)
			snprintf(j->when, sizeof(j->when), "%s", db_col_text(st, 1));
		else
			db_now(j->when);
		rc = 0;
	} else if (rc == 0) {
		rc = ERR_NOT_FOUND;
	}
	db_finalize(st);
	return rc;
}

static int record_job(struct db *db, const char *data_dir, int64_t job_id)
{
	struct dirent **ents = NULL;
	struct job_info j;
	char *dir = NULL;
	int n = 0, i, rc;
	bool tx = false;

	if ((rc = job_info(db, job_id, &j)))
		return rc;
	if (!(dir = artefact_path(data_dir, job_id, NULL)))
		return ERR_NOMEM;
	n = scandir(dir, &ents, select_result, alphasort);
	if (n <= 0) {
		rc = 0; /* no results (yet): nothing to record */
		goto out;
	}
	if ((rc = db_begin(db)))
		goto out;
	tx = true;
	for (i = 0; i < n && i < NEEDLES_MAX_MODULES; i++) {
		const char *fn = ents[i]->d_name;
		char module[LIMIT_ARTEFACT_NAME + 1], *path = path_join(dir, fn);
		struct stat sb;
		json_error_t jerr;
		json_t *res;

		if (!path) {
			rc = ERR_NOMEM;
			goto out;
		}
		/* result-<module>.json: the module's name between the two. */
		snprintf(module, sizeof(module), "%.*s", (int)(strlen(fn) - 12), fn + 7);
		if (stat(path, &sb) || !S_ISREG(sb.st_mode) || sb.st_size > (off_t)LIMIT_RESULT_JSON) {
			log_warn("job %lld: '%s' skipped: not a readable file up to %u bytes", (long long)job_id, fn,
				 LIMIT_RESULT_JSON);
			free(path);
			continue;
		}
		res = json_load_file(path, 0, &jerr);
		free(path);
		if (!res) {
			log_warn("job %lld: '%s' skipped: line %d: %s", (long long)job_id, fn, jerr.line, jerr.text);
			continue;
		}
		rc = record_module(db, &j, module, res);
		json_decref(res);
		if (rc)
			goto out;
	}
	rc = db_commit(db);
	tx = false;
out:
	if (tx)
		db_rollback(db);
	for (i = 0; i < n; i++)
		free(ents[i]);
	free(ents);
	free(dir);
	return rc;
}

int needles_record_job(struct db *db, const char *data_dir, int64_t job_id)
{
	int rc, tries = 0;

	/* Two jobs ending at once upsert shared needles in their own orders: on
	 * PostgreSQL one may lose a deadlock and runs again (it only upserts). */
	while ((rc = record_job(db, data_dir, job_id)) && db_conflict(db) && ++tries < NEEDLES_TRIES)
		log_info("job %lld: recording needles again after a conflict with another writer", (long long)job_id);
	return rc;
}

/* --- the list */

static json_t *text_or_null(const char *s)
{
	return s && *s ? json_string(s) : json_null();
}

static json_t *id_or_null(struct db_stmt *st, int col)
{
	return db_col_null(st, col) ? json_null() : json_integer(db_col_int(st, col));
}

/* Per order: the page condition (after the cursor ?1, ?2), the ORDER BY. */
static const struct {
	const char *where;
	const char *order;
	const char *first; /* the key before every row: the first page's cursor */
} orders[] = {
	[NEEDLES_BY_LAST_MATCH] = { "(last_matched_time < ?1 OR (last_matched_time = ?1 AND id < ?2))",
				    "last_matched_time DESC, id DESC", "~" },
	[NEEDLES_BY_LAST_SEEN] = { "(last_seen_time < ?1 OR (last_seen_time = ?1 AND id < ?2))",
				   "last_seen_time DESC, id DESC", "~" },
	[NEEDLES_BY_NAME] = { "(name > ?1 OR (name = ?1 AND id > ?2))", "name ASC, id ASC", "" },
};

/* A cursor "<id>:<key>" (the key may hold ':'). 0 or ERR_INVALID. */
static int parse_cursor(const char *after, int64_t *id, const char **key)
{
	const char *colon = strchr(after, ':');
	char num[24];
	long v;

	if (!colon || colon == after || (size_t)(colon - after) >= sizeof(num))
		return ERR_INVALID;
	snprintf(num, sizeof(num), "%.*s", (int)(colon - after), after);
	if (str_to_long(num, &v) || v <= 0)
		return ERR_INVALID;
	*id = v;
	*key = colon + 1;
	return 0;
}

int needles_list(struct db *db, enum needles_sort sort, const char *after, const char *search, long limit,
		 json_t **out, char *msg, size_t msglen)
{
	char sql[1024];
	struct db_stmt *st = NULL;
	json_t *list = NULL, *next = json_null();
	struct jbuild b = JBUILD_INIT;
	const char *key;
	int64_t after_id;
	long n = 0;
	int rc;

	*out = NULL;
	if ((unsigned)sort >= sizeof(orders) / sizeof(orders[0]) || limit <= 0 || limit > NEEDLES_LIST_MAX_LIMIT) {
		err_set(msg, msglen, "bad order or limit (1..%d)", NEEDLES_LIST_MAX_LIMIT);
		return ERR_INVALID;
	}
	/* The first page starts before every row: times are digits or '', names
	 * are never empty, ids are positive. */
	key = orders[sort].first;
	after_id = sort == NEEDLES_BY_NAME ? 0 : INT64_MAX;
	if (after && *after && parse_cursor(after, &after_id, &key)) {
		err_set(msg, msglen, "after '%s': expected the 'next' of the previous page", after);
		return ERR_INVALID;
	}
	if (search && !*search)
		search = NULL;
	/* Statement text only from the constant table above; values bound. */
	snprintf(sql, sizeof(sql),
		 "SELECT id, distri, name, file, last_matched_time, last_matched_job_id, last_matched_module,"
		 " last_matched_step, last_seen_time, last_seen_job_id, last_seen_module, last_seen_step FROM needles"
		 " WHERE %s AND (CAST(?3 AS TEXT) IS NULL OR instr(name, ?3) > 0)"
		 " ORDER BY %s LIMIT ?4",
		 orders[sort].where, orders[sort].order);
	if ((rc = db_prepare(db, &st, sql, "titi", key, after_id, search, (int64_t)limit + 1)))
		return rc;
	list = jbuild_take(&b, json_array(), "needles");
	while (!jbuild_failed(&b) && (rc = db_step(st)) == 1) {
		json_t *o;
		if (n++ == limit) {
			/* One more row than asked: the page ends at the previous one. */
			break;
		}
		o = jbuild_take(&b, json_object(), "needle");
		if (!o)
			break;
		jbuild_set(&b, o, "id", json_integer(db_col_int(st, 0)));
		jbuild_set(&b, o, "distri", json_string(db_col_text(st, 1) ? db_col_text(st, 1) : ""));
		jbuild_set(&b, o, "name", json_string(db_col_text(st, 2) ? db_col_text(st, 2) : ""));
		jbuild_set(&b, o, "file", text_or_null(db_col_text(st, 3)));
		jbuild_set(&b, o, "last_match", text_or_null(db_col_text(st, 4)));
		jbuild_set(&b, o, "last_match_job", id_or_null(st, 5));
		jbuild_set(&b, o, "last_match_module", text_or_null(db_col_text(st, 6)));
		jbuild_set(&b, o, "last_match_step", id_or_null(st, 7));
		jbuild_set(&b, o, "last_seen", text_or_null(db_col_text(st, 8)));
		jbuild_set(&b, o, "last_seen_job", id_or_null(st, 9));
		jbuild_set(&b, o, "last_seen_module", text_or_null(db_col_text(st, 10)));
		jbuild_set(&b, o, "last_seen_step", id_or_null(st, 11));
		jbuild_append(&b, list, o);
	}
	if (jbuild_failed(&b)) {
		rc = ERR_NOMEM;
		goto out;
	}
	if (rc == 1) {
		/* The cursor of the last row shown. */
		const json_t *last = json_array_get(list, json_array_size(list) - 1);
		const char *k = sort == NEEDLES_BY_NAME	      ? json_string_value(json_object_get(last, "name"))
				: sort == NEEDLES_BY_LAST_SEEN ? json_string_value(json_object_get(last, "last_seen"))
							       : json_string_value(json_object_get(last, "last_match"));
		char *c = NULL;
		if (asprintf(&c, "%lld:%s", (long long)json_integer_value(json_object_get(last, "id")), k ? k : "") < 0) {
			rc = ERR_NOMEM;
			goto out;
		}
		json_decref(next);
		next = json_string(c);
		free(c);
		rc = 0;
	}
	if (rc < 0)
		goto out;
	*out = json_pack("{s:O,s:O}", "needles", list, "next", next);
	rc = *out ? 0 : ERR_NOMEM;
out:
	db_finalize(st);
	json_decref(list);
	json_decref(next);
	return rc;
}
