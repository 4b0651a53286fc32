/* SPDX-License-Identifier: MIT */
/* sched.c - the scheduler: which scheduled, unblocked job a worker gets
 * (WORKER_CLASS values all offered, lowest priority number first, then
 * lowest id) and its assignment. A re-run pinned to a worker (rerun.c) is
 * offered only to that worker until its pin is released. Reads worker and
 * job rows, writes the assignment and released pins; never called with a
 * transaction open by the caller. */
#define LOG_MODULE "sched"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "server/db.h"
#include "server/rerun.h"
#include "server/sched.h"
#include "util/err.h"
#include "util/log.h"
#include "util/banned.h" /* last: after every system header */

#define SCHED_MAX_CLASSES 32

static bool class_offered(const char *offered, const char *cls)
{
	size_t n = strlen(cls);
	const char *p = offered;

	while (p && *p) {
		size_t len = strcspn(p, ",");
		if (len == n && !strncmp(p, cls, n))
			return true;
		p += len + (p[len] == ',');
	}
	return false;
}

bool sched_classes_match(const char *offered, const char *const *needed, size_t n)
{
	size_t i;

	if (!offered || n == 0)
		return false;
	for (i = 0; i < n; i++)
		if (!needed[i] || !*needed[i] || !class_offered(offered, needed[i]))
			return false;
	return true;
}

/* Classes of one job (one job_settings row each) into cls (strings owned). */
static int job_classes(struct db *db, int64_t job_id, char **cls, size_t *n)
{
	struct db_stmt *st;
	int rc;

	*n = 0;
	rc = db_prepare(db, &st, "SELECT value FROM job_settings WHERE job_id = ? AND key = 'WORKER_CLASS'", "i",
			job_id);
	if (rc)
		return rc;
	while ((rc = db_step(st)) == 1) {
		if (*n >= SCHED_MAX_CLASSES)
			continue; /* more classes than any worker offers: cannot match anyway */
		cls[*n] = strdup(db_col_text(st, 0));
		if (cls[*n])
			(*n)++;
	}
	db_finalize(st);
	return rc < 0 ? rc : 0;
}

int sched_pick(struct db *db, int64_t worker_id, int64_t *job_id)
{
	struct db_stmt *st = NULL;
	char *offered = NULL, now[DB_TIME_LEN];
	int64_t cand[SCHED_SCAN_LIMIT];
	size_t count = 0, i;
	int rc;

	rc = db_prepare(db, &st, "SELECT worker_class FROM workers WHERE id = ?", "i", worker_id);
	if (rc)
		return rc;
	if ((rc = db_step(st)) == 1)
		offered = strdup(db_col_text(st, 0));
	db_finalize(st);
	if (rc != 1)
		return rc == 0 ? ERR_NOT_FOUND : rc;
	if (!offered)
		return ERR_NOMEM;
	{
		int released = 0;
		if ((rc = rerun_release_due(db, (int64_t)time(NULL), &released)))
			goto out;
	}
	rc = db_prepare(db, &st, "SELECT id FROM jobs WHERE state = 'scheduled' AND blocked_by_id IS NULL"
			" AND (resume_worker_id IS NULL OR resume_worker_id = ?)"
			" ORDER BY priority, id LIMIT ?", "ii", worker_id, (int64_t)SCHED_SCAN_LIMIT);
	if (rc)
		goto out;
	while ((rc = db_step(st)) == 1 && count < SCHED_SCAN_LIMIT)
		cand[count++] = db_col_int(st, 0);
	db_finalize(st);
	if (rc < 0)
		goto out;
	rc = ERR_NOT_FOUND;
	for (i = 0; i < count; i++) {
		char *cls[SCHED_MAX_CLASSES];
		size_t n = 0, k;
		bool match;
		int r2 = job_classes(db, cand[i], cls, &n);
		if (r2) {
			rc = r2;
			goto out;
		}
		match = sched_classes_match(offered, (const char *const *)cls, n);
		for (k = 0; k < n; k++)
			free(cls[k]);
		if (!match)
			continue;
		db_now(now);
		r2 = db_exec(db, "UPDATE jobs SET state = 'assigned', assigned_worker_id = ?, t_started = NULL,"
			     " t_updated = ? WHERE id = ? AND state = 'scheduled'", "iti", worker_id, now, cand[i]);
		if (r2 < 0) {
			rc = r2;
			goto out;
		}
		if (r2 == 0)
			continue;
		r2 = db_exec(db, "UPDATE workers SET job_id = ? WHERE id = ?", "ii", cand[i], worker_id);
		if (r2 < 0) {
			rc = r2;
			goto out;
		}
		*job_id = cand[i];
		log_info("job %lld assigned to worker %lld", (long long)cand[i], (long long)worker_id);
		rc = 0;
		break;
	}
out:
	free(offered);
	return rc;
}
