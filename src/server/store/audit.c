/* SPDX-License-Identifier: MIT */
/* audit.c - the audit log's rows (see audit.h): written by the server
 * after each successful write and by the sign-in and user code, read a
 * page at a time by id. Every statement on audit_events lives here. */
#define LOG_MODULE "audit"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "server/store/audit.h"
#include "server/db/db.h"
#include "util/err.h"
#include "util/banned.h" /* last: after every system header */

int audit_record(struct db *db, const char *actor, const char *event, const json_t *detail)
{
	char now[DB_TIME_LEN];
	char *text = detail ? json_dumps(detail, JSON_COMPACT | JSON_SORT_KEYS) : strdup("{}");
	int rc;

	if (!text)
		return ERR_NOMEM;
	if (strlen(text) > AUDIT_DETAIL_MAX) {
		free(text);
		if (!(text = strdup("{\"truncated\":true}")))
			return ERR_NOMEM;
	}
	db_now(now);
	rc = db_exec(db, "INSERT INTO audit_events (t_created, actor, event, detail) VALUES (?, ?, ?, ?)", "tttt", now,
		     actor ? actor : "anonymous", event, text);
	free(text);
	return rc < 0 ? ERR_IO : 0;
}

static int exists(struct db *db, const char *sql, int64_t id, bool *out)
{
	int64_t n = 0;
	int rc = db_query_int(db, &n, sql, "i", id);

	*out = n != 0;
	return rc && rc != ERR_NOT_FOUND ? ERR_IO : 0;
}

int audit_list(struct db *db, int64_t before, int64_t after, long limit, json_t **out)
{
	struct db_stmt *st = NULL;
	json_t *events = json_array(), *res = NULL;
	int64_t lo = 0, hi = 0;
	bool more = false, older = false, newer = false;
	size_t n = 0;
	int rc;

	*out = NULL;
	if (!events)
		return ERR_NOMEM;
	if (limit <= 0 || limit > AUDIT_LIST_MAX)
		limit = AUDIT_LIST_DEFAULT;
	if (after > 0)
		rc = db_prepare(db, &st,
				"SELECT id, t_created, actor, event, detail FROM audit_events WHERE id > ? ORDER BY id LIMIT ?",
				"ii", after, (int64_t)limit + 1);
	else
		rc = db_prepare(db, &st,
				"SELECT id, t_created, actor, event, detail FROM audit_events WHERE id < ?"
				" ORDER BY id DESC LIMIT ?",
				"ii", before > 0 ? before : INT64_MAX, (int64_t)limit + 1);
	while (!rc && (rc = db_step(st)) == 1) {
		json_t *details, *e;
		int64_t id = db_col_int(st, 0);
		rc = 0;
		if (n == (size_t)limit) {
			more = true;
			break;
		}
		details = json_loads(db_col_text(st, 4) ? db_col_text(st, 4) : "{}", 0, NULL);
		e = json_pack("{s:I,s:s,s:s,s:s,s:o}", "id", (json_int_t)id, "time", db_col_text(st, 1), "user",
			      db_col_text(st, 2), "event", db_col_text(st, 3), "details", details ? details : json_object());
		if (!e || (after > 0 ? json_array_insert_new(events, 0, e) : json_array_append_new(events, e))) {
			rc = ERR_NOMEM;
			break;
		}
		if (!n || id < lo)
			lo = id;
		if (!n || id > hi)
			hi = id;
		n++;
	}
	db_finalize(st);
	if (rc < 0)
		goto fail;
	/* The far side of the page: beyond the rows fetched one more was there. */
	if (after > 0) {
		newer = more;
		rc = exists(db, "SELECT EXISTS (SELECT 1 FROM audit_events WHERE id < ?)", n ? lo : after + 1, &older);
	} else {
		older = more;
		rc = n ? exists(db, "SELECT EXISTS (SELECT 1 FROM audit_events WHERE id > ?)", hi, &newer)
		       : before > 0 ? exists(db, "SELECT EXISTS (SELECT 1 FROM audit_events WHERE id >= ?)", before, &newer)
				    : 0;
	}
	if (rc)
		goto fail;
	res = json_pack("{s:o,s:b,s:b}", "events", events, "older", older, "newer", newer);
	if (!res)
		return ERR_NOMEM;
	*out = res;
	return 0;
fail:
	json_decref(events);
	return rc == ERR_NOMEM ? rc : ERR_IO;
}
