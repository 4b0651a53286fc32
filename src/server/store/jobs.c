/* SPDX-License-Identifier: MIT */
/* jobs.c - jobs in the database and as openQA's JSON: creation from merged
 * settings, cancel, restart by cloning, delete (the to_hash shape, read
 * and written as text, is jobs_hash.c's). SQL is
 * portable with bound parameters; dialect details stay in db.c. */
#define LOG_MODULE "jobs"
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "server/store/artefacts.h"
#include "server/store/assets.h"
#include "server/db/db.h"
#include "server/store/deps.h"
#include "server/store/groups.h"
#include "server/store/jobs.h"
#include "server/store/jobs_int.h"
#include "server/store/jbuild.h"
#include "server/store/workers.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/log.h"
#include "util/str.h"
#include "util/banned.h" /* last: after every system header */

/* Runs of a job post's transaction that lost to another writer. */
#define JOBS_CREATE_TRIES 5

static const char *const states[] = { "scheduled", "assigned", "setup", "running", "uploading", "done",
				      "cancelled", NULL };
static const char *const results[] = { "none", "passed", "softfailed", "failed", "incomplete", "skipped",
				       "obsoleted", "parallel_failed", "parallel_restarted", "user_cancelled",
				       "user_restarted", "timeout_exceeded", NULL };

static bool in_list(const char *const *l, const char *s)
{
	for (; s && *l; l++)
		if (!strcmp(*l, s))
			return true;
	return false;
}

bool jobs_state_valid(const char *s)
{
	return in_list(states, s);
}

bool jobs_result_valid(const char *s)
{
	return in_list(results, s);
}

bool jobs_state_executing(const char *s)
{
	static const char *const executing[] = { "assigned", "setup", "running", "uploading", NULL };

	return s && in_list(executing, s);
}

int jobs_state_of(struct db *db, int64_t id, char *buf, size_t len)
{
	struct db_stmt *st;
	int rc;

	if ((rc = db_prepare(db, &st, "SELECT state FROM jobs WHERE id = ?", "i", id)))
		return rc;
	rc = db_step(st);
	if (rc == 1)
		snprintf(buf, len, "%s", db_col_text(st, 0));
	db_finalize(st);
	return rc == 1 ? 0 : rc == 0 ? ERR_NOT_FOUND : rc;
}

/* The text of a scalar JSON value in buf (64 bytes); NULL for others. */
static const char *scalar_text(const json_t *v, char *tmp, size_t n)
{
	if (json_is_string(v))
		return json_string_value(v);
	if (json_is_integer(v)) {
		snprintf(tmp, n, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		return tmp;
	}
	if (json_is_real(v)) {
		snprintf(tmp, n, "%.17g", json_real_value(v));
		return tmp;
	}
	if (json_is_boolean(v))
		return json_is_true(v) ? "1" : "0";
	return NULL;
}

/* Add the comma-separated classes of add to the list in cur (new string). */
static char *class_union(const char *cur, const char *add)
{
	struct buf b;
	const char *p = add;

	buf_init(&b, LIMIT_SETTING_TEXT);
	if (cur && buf_puts(&b, cur))
		goto fail;
	while (*p) {
		size_t n = strcspn(p, ",");
		bool have = false;
		const char *q = b.data;
		while (q && *q && !have) {
			size_t m = strcspn(q, ",");
			have = m == n && !strncmp(q, p, n);
			q += m + (q[m] == ',');
		}
		if (n && !have && ((b.len && buf_puts(&b, ",")) || buf_append(&b, p, n)))
			goto fail;
		p += n + (p[n] == ',');
	}
	return b.data ? buf_steal(&b) : str_dup("");
fail:
	buf_release(&b);
	return NULL;
}

int jobs_settings_merge(json_t *dst, const json_t *src)
{
	const char *key;
	json_t *v;
	char tmp[64];

	json_object_foreach((json_t *)src, key, v) {
		const char *text = scalar_text(v, tmp, sizeof(tmp));
		if (!text)
			continue;
		if (!strcmp(key, "WORKER_CLASS")) {
			char *u = class_union(json_string_value(json_object_get(dst, key)), text);
			int bad = !u || json_object_set_new(dst, key, json_string(u));
			free(u);
			if (bad)
				return ERR_NOMEM;
			continue;
		}
		if (json_object_set_new(dst, key, json_string(text)))
			return ERR_NOMEM;
	}
	return 0;
}

int jobs_settings_expand(json_t *settings, char *err, size_t errlen)
{
	const char *key;
	json_t *v;
	size_t total = 0;

	json_object_foreach(settings, key, v) {
		const char *s = json_string_value(v), *p;
		struct buf b;
		bool changed = false;
		int rc = 0;

		if (s && strchr(s, '%')) {
			buf_init(&b, LIMIT_SETTING_TEXT);
			for (p = s; *p && !rc;) {
				const char *end = p[0] == '%' ? strchr(p + 1, '%') : NULL;
				if (end && end > p + 1) {
					char name[256];
					size_t n = (size_t)(end - p - 1);
					const char *val = NULL;
					if (n < sizeof(name)) {
						memcpy(name, p + 1, n);
						name[n] = '\0';
						if (strcmp(name, key))
							val = json_string_value(json_object_get(settings, name));
					}
					if (val) {
						rc = buf_puts(&b, val);
						changed = true;
						p = end + 1;
						continue;
					}
				}
				rc = buf_append(&b, p, 1);
				p++;
			}
			if (rc) {
				buf_release(&b);
				if (err)
					snprintf(err, errlen, "setting '%s': over %u bytes once %%VAR%% references are expanded",
						 key, LIMIT_SETTING_TEXT);
				return rc == ERR_NOMEM ? rc : ERR_TOO_BIG;
			}
			/* The expanded value replaces the reference, or the job is not made. */
			if (changed && (!b.data || json_object_set_new(settings, key, json_string(b.data)))) {
				buf_release(&b);
				if (err)
					snprintf(err, errlen, "setting '%s': out of memory", key);
				return ERR_NOMEM;
			}
			buf_release(&b);
			s = json_string_value(json_object_get(settings, key));
		}
		/* One request may name a large value many times: bound what all
		 * settings of the job come to, not only each one. */
		total += strlen(key) + (s ? strlen(s) : 0);
		if (total > LIMIT_JOB_SETTINGS) {
			if (err)
				snprintf(err, errlen, "settings: over %u bytes in all once %%VAR%% references are expanded",
					 LIMIT_JOB_SETTINGS);
			return ERR_TOO_BIG;
		}
	}
	return 0;
}

static const char *sget(const json_t *settings, const char *key)
{
	const char *s = json_string_value(json_object_get(settings, key));
	return s && *s ? s : NULL;
}

/* openQA's job name from the settings get(ctx, key) finds (NULL or empty:
 * none). */
char *jobs__name_of(const char *(*get)(const void *ctx, const char *key), const void *ctx)
{
	static const char *const parts[] = { "DISTRI", "VERSION", "FLAVOR", "ARCH", "BUILD", "TEST" };
	struct buf b;
	size_t i;
	char *c;

	buf_init(&b, LIMIT_SETTING_TEXT);
	for (i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
		const char *v = get(ctx, parts[i]);
		if (i == 5 && get(ctx, "JOB_TEMPLATE_NAME"))
			v = get(ctx, "JOB_TEMPLATE_NAME");
		if (!v)
			continue;
		/* a name over the limit is cut there; only out of memory fails */
		if ((b.len && buf_puts(&b, "-") == ERR_NOMEM) || (i == 4 && buf_puts(&b, "Build") == ERR_NOMEM) ||
		    buf_puts(&b, v) == ERR_NOMEM)
			goto nomem;
	}
	if (get(ctx, "MACHINE") && (buf_puts(&b, "@") == ERR_NOMEM || buf_puts(&b, get(ctx, "MACHINE")) == ERR_NOMEM))
		goto nomem;
	if (!b.data)
		return strdup("");
	for (c = b.data; *c; c++)
		if (!isalnum((unsigned char)*c) && !strchr("@._+:-", *c))
			*c = '_';
	return buf_steal(&b);
nomem:
	buf_release(&b);
	return NULL;
}

static const char *json_get(const void *settings, const char *key)
{
	return sget(settings, key);
}

char *jobs_name(const json_t *settings)
{
	return jobs__name_of(json_get, settings);
}

int jobs_settings_default_class(json_t *settings)
{
	const char *backend = sget(settings, "BACKEND"), *arch = sget(settings, "ARCH");
	char cls[128];

	if (sget(settings, "WORKER_CLASS") || !arch || (backend && strcmp(backend, "qemu")))
		return 0;
	snprintf(cls, sizeof(cls), "qemu_%s", arch);
	return json_object_set_new(settings, "WORKER_CLASS", json_string(cls)) ? ERR_NOMEM : 0;
}

/* Merge the (key, value) rows of st into into; finalizes st. 0, ERR_NOMEM
 * (a setting lost: the job must not be made from it) or a db error. */
static int merge_rows(struct db_stmt *st, json_t *into)
{
	json_t *src = json_object();
	int rc = src ? 1 : ERR_NOMEM;

	while (rc == 1 && (rc = db_step(st)) == 1)
		if (json_object_set_new(src, db_col_text(st, 0), json_string(db_col_text(st, 1))))
			rc = ERR_NOMEM;
	db_finalize(st);
	if (rc == 0)
		rc = jobs_settings_merge(into, src);
	json_decref(src);
	return rc;
}

int jobs_table_settings(struct db *db, const char *kind, int64_t owner_id, json_t *into)
{
	struct db_stmt *st;
	int rc = db_prepare(db, &st, "SELECT key, value FROM table_settings WHERE kind = ? AND owner_id = ? ORDER BY key",
			    "ti", kind, owner_id);

	return rc ? rc : merge_rows(st, into);
}

int jobs_template_settings(struct db *db, int64_t template_id, json_t *into)
{
	struct db_stmt *st;
	int rc = db_prepare(db, &st, "SELECT key, value FROM job_template_settings WHERE job_template_id = ? ORDER BY id",
			    "i", template_id);

	return rc ? rc : merge_rows(st, into);
}

static const char *col(const json_t *settings, const char *key)
{
	const char *s = json_string_value(json_object_get(settings, key));
	return s ? s : "";
}

int jobs_insert(struct db *db, const json_t *settings, int64_t priority, int64_t group_id,
		int64_t scheduled_product_id, int64_t *id)
{
	char now[DB_TIME_LEN];
	const char *key;
	json_t *v;
	int rc;

	if (!sget(settings, "TEST"))
		return ERR_INVALID;
	db_now(now);
	rc = db_exec(db,
		     "INSERT INTO jobs (priority, state, result, group_id, scheduled_product_id, test, distri, version,"
		     " flavor, arch, build, machine, t_created, t_updated)"
		     " VALUES (?, 'scheduled', 'none', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
		     "iIIttttttttt", priority, group_id, scheduled_product_id, col(settings, "TEST"),
		     col(settings, "DISTRI"), col(settings, "VERSION"), col(settings, "FLAVOR"), col(settings, "ARCH"),
		     col(settings, "BUILD"), col(settings, "MACHINE"), now, now);
	if (rc < 0)
		return rc;
	*id = db_last_id(db);
	json_object_foreach((json_t *)settings, key, v) {
		const char *s = json_string_value(v);
		if (!s || !strcmp(key, "NAME"))
			continue;
		if (!strcmp(key, "WORKER_CLASS")) {
			/* One row per class: the scheduler matches each (AND), as openQA. */
			const char *p = s;
			while (*p) {
				size_t n = strcspn(p, ",");
				if (n) {
					char *one = strndup(p, n);
					rc = one ? db_exec(db, "INSERT INTO job_settings (job_id, key, value) VALUES (?, ?, ?)",
							   "itt", *id, key, one) : ERR_NOMEM;
					free(one);
					if (rc < 0)
						return rc;
				}
				p += n + (p[n] == ',');
			}
			continue;
		}
		rc = db_exec(db, "INSERT INTO job_settings (job_id, key, value) VALUES (?, ?, ?)", "itt", *id, key, s);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* One job_settings row into s: repeated keys (one row per WORKER_CLASS)
 * are joined with ',' as openQA does. */
static void settings_add(struct jbuild *ab, json_t *s, const char *k, const char *v)
{
	const char *old = json_string_value(json_object_get(s, k));

	if (old) {
		struct buf b;
		int rc;
		buf_init(&b, LIMIT_SETTING_TEXT);
		rc = buf_printf(&b, "%s,%s", old, v);
		if (rc == ERR_NOMEM)
			jbuild_take(ab, NULL, k);
		else if (!rc)
			jbuild_set(ab, s, k, json_string(b.data));
		buf_release(&b);
	} else {
		jbuild_set(ab, s, k, json_string(v));
	}
}

/* The job's settings: its job_settings rows, then the non-empty columns
 * TEST DISTRI VERSION FLAVOR ARCH BUILD MACHINE of job_row, a jobs row
 * that selects them in this order from column first on. */
static json_t *settings_of(struct db *db, int64_t id, struct db_stmt *job_row, int first)
{
	static const char *const cols[] = { "TEST", "DISTRI", "VERSION", "FLAVOR", "ARCH", "BUILD", "MACHINE" };
	struct jbuild b = JBUILD_INIT;
	json_t *s = jbuild_take(&b, json_object(), "settings");
	struct db_stmt *st;
	size_t i;

	if (!db_prepare(db, &st, "SELECT key, value FROM job_settings WHERE job_id = ? ORDER BY id", "i", id)) {
		while (db_step(st) == 1)
			settings_add(&b, s, db_col_text(st, 0), db_col_text(st, 1));
		db_finalize(st);
	}
	for (i = 0; i < sizeof(cols) / sizeof(cols[0]); i++) {
		const char *v = db_col_text(job_row, first + (int)i);
		if (v && *v)
			jbuild_set(&b, s, cols[i], json_string(v));
	}
	if (jbuild_failed(&b)) { /* a clone without a setting: none */
		json_decref(s);
		return NULL;
	}
	return s;
}

int jobs_cancel(struct db *db, int64_t id, const char *reason, int *changed)
{
	char now[DB_TIME_LEN];
	int64_t exists;
	int rc;

	*changed = 0;
	if ((rc = db_query_int(db, &exists, "SELECT id FROM jobs WHERE id = ?", "i", id)))
		return rc;
	db_now(now);
	rc = db_exec(db,
		     "UPDATE jobs SET result = 'user_cancelled', reason = COALESCE(?, reason), t_updated = ?,"
		     " state = CASE WHEN state IN ('scheduled', 'assigned') THEN 'cancelled' ELSE state END,"
		     " t_finished = CASE WHEN state IN ('scheduled', 'assigned') THEN ? ELSE t_finished END"
		     " WHERE id = ? AND result = 'none' AND state NOT IN ('done', 'cancelled')",
		     "ttti", reason, now, now, id);
	if (rc < 0)
		return rc;
	*changed = rc;
	/* A job cancelled before it ran takes its chained children with it. */
	return rc > 0 ? deps_job_final(db, id) : 0;
}

int jobs_set_prio(struct db *db, int64_t id, int64_t prio)
{
	char now[DB_TIME_LEN];
	int rc;

	db_now(now);
	rc = db_exec(db, "UPDATE jobs SET priority = ?, t_updated = ? WHERE id = ?", "iti", prio, now, id);
	return rc < 0 ? rc : rc == 0 ? ERR_NOT_FOUND : 0;
}

int jobs_cancel_by_settings(struct db *db, const json_t *filter, const char *reason, int *n)
{
	static const char *const cols[] = { "DISTRI", "VERSION", "FLAVOR", "MACHINE", "ARCH", "BUILD", "TEST", NULL };
	struct buf sql;
	struct db_stmt *st = NULL;
	int64_t *ids = NULL;
	size_t nids = 0, cap = 0, i, k;
	const char *key;
	json_t *v;
	int rc = 0;

	*n = 0;
	if (!json_object_size(filter))
		return ERR_INVALID;
	buf_init(&sql, 1u << 16);
	rc = buf_puts(&sql, "SELECT id FROM jobs WHERE state IN ('scheduled', 'assigned', 'setup', 'running',"
		      " 'uploading')");
	json_object_foreach((json_t *)filter, key, v) {
		bool col = false;
		if (!json_is_string(v)) {
			rc = ERR_INVALID;
			break;
		}
		for (k = 0; cols[k]; k++)
			col = col || !strcmp(cols[k], key);
		if (col) { /* the key is one of cols: upper case letters only, safe as a column name */
			char lower[16];
			for (k = 0; key[k] && k + 1 < sizeof(lower); k++)
				lower[k] = (char)tolower((unsigned char)key[k]);
			lower[k] = '\0';
			rc = rc ? rc : buf_printf(&sql, " AND %s = ?", lower);
		} else {
			rc = rc ? rc : buf_puts(&sql, " AND EXISTS (SELECT 1 FROM job_settings s WHERE s.job_id = jobs.id"
						" AND s.key = ? AND s.value = ?)");
		}
	}
	if (!rc)
		rc = buf_puts(&sql, " ORDER BY state <> 'scheduled', id"); /* scheduled first: no worker grabs them */
	if (!rc)
		rc = db_prepare(db, &st, sql.data, NULL);
	buf_release(&sql);
	if (rc)
		return rc;
	k = 1;
	json_object_foreach((json_t *)filter, key, v) {
		size_t c;
		bool col = false;
		for (c = 0; cols[c]; c++)
			col = col || !strcmp(cols[c], key);
		if (!col && (rc = db_bind_text(st, (int)k++, key)))
			break;
		if ((rc = db_bind_text(st, (int)k++, json_string_value(v))))
			break;
	}
	while (!rc && (rc = db_step(st)) == 1) {
		if (nids == cap) {
			int64_t *m = realloc(ids, (cap = cap ? cap * 2 : 16) * sizeof(*ids));
			if (!m) {
				rc = ERR_NOMEM;
				break;
			}
			ids = m;
		}
		ids[nids++] = db_col_int(st, 0);
		rc = 0;
	}
	db_finalize(st);
	if (rc < 0) {
		free(ids);
		return rc;
	}
	for (i = 0, rc = 0; i < nids && !rc; i++) {
		int changed = 0;
		rc = jobs_cancel(db, ids[i], reason, &changed);
		if (rc == ERR_NOT_FOUND)
			rc = 0; /* deleted meanwhile */
		*n += changed;
	}
	free(ids);
	return rc;
}

static int restart(struct db *db, int64_t id, int64_t *new_id, char *msg, size_t msglen, int depth);

/* The newest clone of id (id itself when it has none). */
static int64_t newest_clone(struct db *db, int64_t id)
{
	int64_t next;
	int hops = 0;

	while (hops++ < DEPS_MAX_DEPTH &&
	       db_query_int(db, &next, "SELECT clone_id FROM jobs WHERE id = ? AND clone_id IS NOT NULL", "i", id) == 0)
		id = next;
	return id;
}

/* The clone of a chained job keeps its place in the chain: it waits for
 * (the newest clones of) the original's parents, and children that were
 * skipped because the original failed are cloned after it. */
static int restart_chain(struct db *db, int64_t id, int64_t clone, char *msg, size_t msglen, int depth)
{
	int64_t par[DEPS_MAX_PARENTS], type[DEPS_MAX_PARENTS], *kids = NULL;
	size_t np = 0, nk = 0, i;
	struct db_stmt *st;
	int rc;

	if ((rc = db_prepare(db, &st, "SELECT parent_job_id, dependency FROM job_dependencies WHERE child_job_id = ?"
			     " AND dependency IN (1, 3) ORDER BY parent_job_id", "i", id)))
		return rc;
	while (db_step(st) == 1 && np < DEPS_MAX_PARENTS) {
		par[np] = db_col_int(st, 0);
		type[np++] = db_col_int(st, 1);
	}
	db_finalize(st);
	for (i = 0; i < np; i++) {
		rc = deps_add(db, newest_clone(db, par[i]), clone, (int)type[i], msg, msglen);
		if (rc && rc != ERR_INVALID && rc != ERR_NOT_FOUND)
			return rc;
	}
	/* Children still waiting follow the clone. */
	if ((rc = deps_job_final(db, id)))
		return rc;
	if (depth >= DEPS_MAX_DEPTH)
		return 0;
	if ((rc = deps_children(db, id, DEPS_SKIPPED, &kids, &nk)))
		return rc;
	for (i = 0; i < nk; i++) {
		int64_t kid_clone;
		rc = restart(db, kids[i], &kid_clone, msg, msglen, depth + 1);
		if (rc && rc != ERR_BADSTATE)
			break;
		rc = 0;
	}
	free(kids);
	return rc;
}

static int restart_one(struct db *db, int64_t id, int64_t *new_id, char *msg, size_t msglen, int depth)
{
	struct db_stmt *st = NULL;
	json_t *settings = NULL;
	int64_t prio = JOBS_DEFAULT_PRIORITY, group = 0, sp = 0;
	char now[DB_TIME_LEN];
	int rc;

	rc = db_prepare(db, &st, "SELECT clone_id, priority, group_id, scheduled_product_id, test, distri, version,"
			" flavor, arch, build, machine FROM jobs WHERE id = ?", "i", id);
	if (rc)
		return rc;
	rc = db_step(st);
	if (rc != 1) {
		db_finalize(st);
		return rc == 0 ? ERR_NOT_FOUND : rc;
	}
	if (!db_col_null(st, 0)) {
		snprintf(msg, msglen, "Job %lld has already been cloned as %lld", (long long)id,
			 (long long)db_col_int(st, 0));
		db_finalize(st);
		return ERR_BADSTATE;
	}
	prio = db_col_int(st, 1);
	group = db_col_int(st, 2);
	sp = db_col_int(st, 3);
	settings = settings_of(db, id, st, 4);
	db_finalize(st);
	if (!settings) {
		snprintf(msg, msglen, "out of memory");
		return ERR_NOMEM;
	}
	/* Where the original's relay hub listened (NICNET=relay): the clone's
	 * worker posts its own. */
	json_object_del(settings, "NICRELAY_ADDR");
	if ((rc = db_begin(db)))
		goto out;
	rc = jobs_insert(db, settings, prio, group, sp, new_id);
	if (!rc) {
		db_now(now);
		rc = db_exec(db,
			     "UPDATE jobs SET clone_id = ?, t_updated = ?,"
			     " result = CASE WHEN result = 'none' THEN 'user_restarted' ELSE result END,"
			     " state = CASE WHEN state IN ('scheduled', 'assigned') THEN 'cancelled' ELSE state END"
			     " WHERE id = ? AND clone_id IS NULL", "iti", *new_id, now, id);
		/* Cloned meanwhile by another request (the check above ran
		 * before this transaction): one clone only. */
		if (rc == 0) {
			snprintf(msg, msglen, "Job %lld has already been cloned", (long long)id);
			rc = ERR_BADSTATE;
		}
	}
	if (rc < 0) {
		db_rollback(db);
		goto out;
	}
	rc = db_commit(db);
	if (!rc)
		rc = restart_chain(db, id, *new_id, msg, msglen, depth);
out:
	json_decref(settings);
	return rc < 0 ? rc : 0;
}

/* A job of a parallel cluster is restarted with its whole cluster, as
 * openQA's auto_duplicate: the other jobs that still run end
 * parallel_restarted, those still waiting cancelled/skipped, every job gets
 * a clone, and the clones are linked as the originals were. */
static int restart(struct db *db, int64_t id, int64_t *new_id, char *msg, size_t msglen, int depth)
{
	int64_t ids[DEPS_MAX_CLUSTER], clones[DEPS_MAX_CLUSTER], cloned = 0;
	char now[DB_TIME_LEN];
	struct db_stmt *st;
	size_t n = 0, i, k;
	int rc;

	if ((rc = deps_cluster(db, id, ids, &n)))
		return rc;
	if (n <= 1)
		return restart_one(db, id, new_id, msg, msglen, depth);
	if (db_query_int(db, &cloned, "SELECT clone_id FROM jobs WHERE id = ? AND clone_id IS NOT NULL", "i", id) == 0) {
		snprintf(msg, msglen, "Job %lld has already been cloned as %lld", (long long)id, (long long)cloned);
		return ERR_BADSTATE;
	}
	db_now(now);
	for (i = 0; i < n; i++) {
		if (ids[i] == id)
			continue;
		rc = db_exec(db, "UPDATE jobs SET result = 'parallel_restarted', t_updated = ? WHERE id = ?"
			     " AND result = 'none' AND clone_id IS NULL AND state IN ('setup', 'running', 'uploading')",
			     "ti", now, ids[i]);
		if (rc >= 0)
			rc = db_exec(db, "UPDATE jobs SET result = 'skipped', state = 'cancelled', t_finished = ?,"
				     " t_updated = ? WHERE id = ? AND result = 'none' AND clone_id IS NULL"
				     " AND state IN ('scheduled', 'assigned')", "tti", now, now, ids[i]);
		if (rc >= 0)
			rc = db_exec(db, "UPDATE workers SET job_id = NULL WHERE job_id = ? AND EXISTS (SELECT 1 FROM jobs"
				     " WHERE id = ? AND state = 'cancelled')", "ii", ids[i], ids[i]);
		if (rc < 0)
			return rc;
	}
	/* The job itself first: its result is set before its relatives' clones
	 * look at the cluster (a skipped relative stops what has no result). */
	for (i = 1; i < n; i++)
		if (ids[i] == id) {
			ids[i] = ids[0];
			ids[0] = id;
		}
	for (i = 0; i < n; i++) {
		rc = restart_one(db, ids[i], &clones[i], msg, msglen, depth);
		if (rc == ERR_BADSTATE && ids[i] != id) {
			clones[i] = newest_clone(db, ids[i]); /* cloned before: link to its newest clone */
			rc = 0;
		}
		if (rc)
			return rc;
		if (ids[i] == id)
			*new_id = clones[i];
		else
			log_info("job %lld: restarted with its parallel cluster as %lld", (long long)ids[i],
				 (long long)clones[i]);
	}
	for (i = 0; i < n; i++) {
		if ((rc = db_prepare(db, &st, "SELECT child_job_id FROM job_dependencies WHERE parent_job_id = ?"
				     " AND dependency = ?", "ii", ids[i], (int64_t)DEPS_PARALLEL)))
			return rc;
		while ((rc = db_step(st)) == 1) {
			int64_t child = db_col_int(st, 0);
			for (k = 0; k < n; k++)
				if (ids[k] == child && clones[k] != clones[i])
					(void)deps_add(db, clones[i], clones[k], DEPS_PARALLEL, msg, msglen);
		}
		db_finalize(st);
		if (rc < 0)
			return rc;
	}
	return 0;
}

int jobs_restart(struct db *db, int64_t id, int64_t *new_id, char *msg, size_t msglen)
{
	return restart(db, id, new_id, msg, msglen, 0);
}

int jobs_delete(struct db *db, int64_t id)
{
	int64_t *kids = NULL;
	size_t n = 0, i;
	int rc;

	/* Children blocked by this job are looked at again once it is gone. */
	if ((rc = deps_children(db, id, DEPS_ALL, &kids, &n)))
		return rc;
	rc = db_exec(db, "DELETE FROM jobs WHERE id = ?", "i", id);
	if (rc == 0)
		rc = ERR_NOT_FOUND;
	for (i = 0; rc > 0 && i < n; i++)
		if ((rc = deps_update_child(db, kids[i])) == 0)
			rc = 1;
	free(kids);
	return rc < 0 ? rc : 0;
}

int jobs_set_needs_review(struct db *db, int64_t id)
{
	int rc = db_exec(db, "UPDATE jobs SET needs_review = 1 WHERE id = ? AND result = 'failed'", "i", id);

	return rc < 0 ? rc : 0;
}

int jobs_status_json(struct db *db, int64_t id, json_t **out)
{
	struct db_stmt *st;
	int rc;

	*out = NULL;
	if ((rc = db_prepare(db, &st, "SELECT state, result, blocked_by_id FROM jobs WHERE id = ?", "i", id)))
		return rc;
	if ((rc = db_step(st)) == 1)
		*out = json_pack("{s:I,s:s,s:s,s:o}", "id", (json_int_t)id, "state", db_col_text(st, 0), "result",
				 db_col_text(st, 1),
				 "blocked_by_id", db_col_null(st, 2) ? json_null() : json_integer(db_col_int(st, 2)));
	db_finalize(st);
	return rc == 1 ? (*out ? 0 : ERR_NOMEM) : rc == 0 ? ERR_NOT_FOUND : rc;
}

int jobs_outcome_json(struct db *db, int64_t id, json_t **out)
{
	struct db_stmt *st;
	int rc;

	*out = NULL;
	if ((rc = db_prepare(db, &st, "SELECT result, reason FROM jobs WHERE id = ?", "i", id)))
		return rc;
	if ((rc = db_step(st)) == 1)
		*out = json_pack("{s:s,s:s?}", "result", db_col_text(st, 0), "reason", db_col_text(st, 1));
	db_finalize(st);
	return rc == 1 ? (*out ? 0 : ERR_NOMEM) : rc == 0 ? ERR_NOT_FOUND : rc;
}

int jobs_names_asset(struct db *db, int64_t id, const char *type, const char *name, bool *named)
{
	struct db_stmt *st;
	int rc;

	*named = false;
	if ((rc = db_prepare(db, &st, "SELECT key FROM job_settings WHERE job_id = ? AND value = ?", "it", id, name)))
		return rc;
	while (!*named && db_step(st) == 1) {
		const char *t = asset_type_of_setting(db_col_text(st, 0));
		*named = t && !strcmp(t, type);
	}
	db_finalize(st);
	return 0;
}

int jobs_restart_clones(struct db *db, int64_t id, int64_t *new_id, json_t **clones, char *msg, size_t msglen)
{
	struct jbuild b = JBUILD_INIT;
	int64_t before = 0;
	struct db_stmt *st;
	int rc;

	*clones = NULL;
	/* The clones made by this restart (the job and the chained children it
	 * skipped) are those with ids above the highest one now. */
	(void)db_query_int(db, &before, "SELECT COALESCE(MAX(id), 0) FROM jobs", NULL);
	if ((rc = jobs_restart(db, id, new_id, msg, msglen)))
		return rc;
	*clones = jbuild_take(&b, json_object(), "clones");
	if (*clones && !db_prepare(db, &st, "SELECT id, clone_id FROM jobs WHERE clone_id > ? ORDER BY id", "i", before)) {
		while (!jbuild_failed(&b) && db_step(st) == 1) {
			char key[24];
			snprintf(key, sizeof(key), "%lld", (long long)db_col_int(st, 0));
			jbuild_set(&b, *clones, key, json_integer(db_col_int(st, 1)));
		}
		db_finalize(st);
	}
	*clones = jbuild_done(&b, *clones); /* NULL: the restart stands, its map is lost */
	return 0;
}

/* A whole decimal id > 0. 0 or ERR_INVALID. */
static int parse_id(const char *s, int64_t *out)
{
	long v;

	if (!s || str_to_long(s, &v) || v <= 0)
		return ERR_INVALID;
	*out = v;
	return 0;
}

/* Settings from the tables under the posted ones, as openQA's
 * generate_settings: the product's, the machine's (and its backend), the
 * test suite's. Rows that cannot be read are left out; 0, or ERR_NOMEM
 * when one could not be kept. */
static int settings_from_tables(struct db *db, const json_t *post, json_t *s)
{
	const char *d = json_string_value(json_object_get(post, "DISTRI"));
	const char *ver = json_string_value(json_object_get(post, "VERSION"));
	const char *f = json_string_value(json_object_get(post, "FLAVOR"));
	const char *a = json_string_value(json_object_get(post, "ARCH"));
	const char *m = json_string_value(json_object_get(post, "MACHINE"));
	int64_t rowid;

	if (d && ver && f && a && !db_query_int(db, &rowid, "SELECT id FROM products WHERE lower(distri) ="
						" lower(?) AND version = ? AND flavor = ? AND arch = ?",
						"tttt", d, ver, f, a))
		if (jobs_table_settings(db, "product", rowid, s) == ERR_NOMEM)
			return ERR_NOMEM;
	if (m && !db_query_int(db, &rowid, "SELECT id FROM machines WHERE name = ?", "t", m)) {
		struct db_stmt *st;
		if (jobs_table_settings(db, "machine", rowid, s) == ERR_NOMEM)
			return ERR_NOMEM;
		if (!db_prepare(db, &st, "SELECT backend FROM machines WHERE id = ?", "i", rowid)) {
			int bad = db_step(st) == 1 && !json_object_get(s, "BACKEND") &&
				  json_object_set_new(s, "BACKEND", json_string(db_col_text(st, 0)));
			db_finalize(st);
			if (bad)
				return ERR_NOMEM;
		}
	}
	if (!db_query_int(db, &rowid, "SELECT id FROM test_suites WHERE name = ?", "t",
			  json_string_value(json_object_get(post, "TEST"))) &&
	    jobs_table_settings(db, "test_suite", rowid, s) == ERR_NOMEM)
		return ERR_NOMEM;
	return 0;
}

/* Settings of one posted job (keys uppercased, '_' controls included)
 * completed from the tables unless clone, then inserted. 0 and *id,
 * ERR_INVALID or ERR_IO with the reason in msg. */
static int create_one(struct db *db, const json_t *post, bool clone, int64_t *id, char *msg, size_t msglen)
{
	json_t *s = json_object(), *keep = json_object(), *val;
	const char *v, *key;
	int64_t group = 0, prio = JOBS_DEFAULT_PRIORITY;
	int rc = 0;

	if (!s || !keep) {
		err_set(msg, msglen, "out of memory");
		rc = ERR_NOMEM;
		goto out;
	}
	v = json_string_value(json_object_get(post, "TEST"));
	if (!v || !*v) {
		err_set(msg, msglen, "TEST field mandatory");
		rc = ERR_INVALID;
		goto out;
	}
	if ((v = json_string_value(json_object_get(post, "_PRIORITY")))) {
		long p;
		if (str_to_long(v, &p)) {
			err_set(msg, msglen, "_PRIORITY must be an integer, not '%s'", v);
			rc = ERR_INVALID;
			goto out;
		}
		prio = p;
	}
	if ((v = json_string_value(json_object_get(post, "_GROUP_ID")))) {
		if (parse_id(v, &group) || groups_exists(db, group)) {
			err_set(msg, msglen, "_GROUP_ID: job group '%s' does not exist", v);
			rc = ERR_INVALID;
			goto out;
		}
	} else if ((v = json_string_value(json_object_get(post, "_GROUP")))) {
		if (groups_by_name(db, v, &group)) {
			err_set(msg, msglen, "_GROUP: job group '%s' does not exist", v);
			rc = ERR_INVALID;
			goto out;
		}
	}
	if (!clone)
		rc = settings_from_tables(db, post, s);
	json_object_foreach((json_t *)post, key, val)
		if (!rc && key[0] != '_' && json_object_set(keep, key, val))
			rc = ERR_NOMEM;
	if (!rc)
		rc = jobs_settings_merge(s, keep);
	if (!rc && !clone)
		rc = jobs_settings_default_class(s);
	if (rc) { /* a setting would be lost: no job */
		err_set(msg, msglen, "out of memory");
		goto out;
	}
	if (!clone && (rc = jobs_settings_expand(s, msg, msglen)))
		goto out;
	if ((rc = jobs_insert(db, s, prio, group, 0, id))) {
		err_set(msg, msglen, "cannot create the job: %s", rc == ERR_NOMEM ? "out of memory" : db_errmsg(db));
		rc = rc == ERR_NOMEM ? rc : ERR_IO;
	}
out:
	json_decref(s);
	json_decref(keep);
	return rc;
}

/* The dependencies one posted job names: _START_AFTER / _START_DIRECTLY_AFTER
 * / _PARALLEL (suffixes of this post) and _START_AFTER_JOBS /
 * _START_DIRECTLY_AFTER_JOBS / _PARALLEL_JOBS (ids of existing jobs). 0, ERR_INVALID or ERR_IO with msg. */
static int link_one(struct db *db, const json_t *post, int64_t child, const json_t *ids, char *msg, size_t msglen)
{
	static const struct { const char *key; int type; bool existing; } kinds[] = {
		{ "_START_AFTER", DEPS_CHAINED, false },
		{ "_START_DIRECTLY_AFTER", DEPS_DIRECTLY_CHAINED, false },
		{ "_START_AFTER_JOBS", DEPS_CHAINED, true },
		{ "_START_DIRECTLY_AFTER_JOBS", DEPS_DIRECTLY_CHAINED, true },
		{ "_PARALLEL", DEPS_PARALLEL, false },
		{ "_PARALLEL_JOBS", DEPS_PARALLEL, true },
	};
	size_t k;

	for (k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		const char *p = json_string_value(json_object_get(post, kinds[k].key));
		while (p && *p) {
			size_t n = strcspn(p, ",");
			char ref[64];
			int64_t parent = 0;
			int rc;
			if (n == 0 || n >= sizeof(ref)) {
				err_set(msg, msglen, "%s: bad entry '%.*s'", kinds[k].key, (int)(n < 64 ? n : 64), p);
				return ERR_INVALID;
			}
			memcpy(ref, p, n);
			ref[n] = '\0';
			if (kinds[k].existing) {
				if (parse_id(ref, &parent)) {
					err_set(msg, msglen, "%s: '%s' is not a job id", kinds[k].key, ref);
					return ERR_INVALID;
				}
			} else if (!json_is_integer(json_object_get(ids, ref))) {
				err_set(msg, msglen, "Specified dependency '%s' does not relate to a present job-suffix.", ref);
				return ERR_INVALID;
			} else {
				parent = json_integer_value(json_object_get(ids, ref));
			}
			rc = deps_add(db, parent, child, kinds[k].type, msg, msglen);
			if (rc == ERR_NOT_FOUND || rc == ERR_INVALID)
				return ERR_INVALID;
			if (rc) {
				err_set(msg, msglen, "cannot record the dependency: %s", db_errmsg(db));
				return ERR_IO;
			}
			p += n + (p[n] == ',');
		}
	}
	return 0;
}

static int create_posted(struct db *db, const json_t *global, const json_t *per, bool clone, bool multi, json_t *ids,
			 char *msg, size_t msglen)
{
	const char *suffix;
	json_t *post;
	char why[512];
	int rc;

	if (db_begin(db)) {
		err_set(msg, msglen, "cannot start a transaction");
		return ERR_IO;
	}
	/* Each copy and insertion is checked: a setting or id lost for want
	 * of memory would store a different job (nothing is stored then). */
	json_object_foreach((json_t *)per, suffix, post) {
		json_t *all = json_deep_copy(global);
		int64_t id = 0;
		if (!all || json_object_update(all, post)) {
			json_decref(all);
			db_rollback(db);
			err_set(msg, msglen, "out of memory");
			return ERR_NOMEM;
		}
		json_object_del(all, "IS_CLONE_JOB");
		rc = create_one(db, all, clone, &id, why, sizeof(why));
		json_decref(all);
		if (!rc && json_object_set_new(ids, suffix, json_integer(id))) {
			rc = ERR_NOMEM;
			snprintf(why, sizeof(why), "out of memory");
		}
		if (rc) {
			db_rollback(db);
			err_set(msg, msglen, "%s%s%s", multi ? suffix : "", multi ? ": " : "", why);
			return rc;
		}
	}
	json_object_foreach((json_t *)per, suffix, post) {
		json_t *all = json_deep_copy(global);
		if (!all || json_object_update(all, post)) {
			json_decref(all);
			db_rollback(db);
			err_set(msg, msglen, "out of memory");
			return ERR_NOMEM;
		}
		rc = link_one(db, all, json_integer_value(json_object_get(ids, suffix)), ids, msg, msglen);
		json_decref(all);
		if (rc) {
			db_rollback(db);
			return rc;
		}
	}
	if (db_commit(db)) {
		db_rollback(db);
		err_set(msg, msglen, "cannot create the jobs: %s", db_errmsg(db));
		return ERR_IO;
	}
	return 0;
}

int jobs_create_posted(struct db *db, const json_t *global, const json_t *per, bool clone, bool multi, json_t *ids,
		       char *msg, size_t msglen)
{
	int rc, tries = 0;

	/* The parents' rows are locked as they are linked (deps_add): two posts
	 * naming the same parents in other orders may deadlock on PostgreSQL,
	 * and the loser runs again from the start. */
	while ((rc = create_posted(db, global, per, clone, multi, ids, msg, msglen)) && db_conflict(db) &&
	       ++tries < JOBS_CREATE_TRIES) {
		json_object_clear(ids);
		log_info("creating jobs again after a conflict with another writer");
	}
	return rc;
}

int jobs_details_json(struct db *db, const char *data_dir, int64_t id, bool details, json_t **out)
{
	struct jbuild b = JBUILD_INIT;
	json_t *j, *mods;
	int rc = jobs_to_json(db, id, details, &j);

	*out = NULL;
	if (rc)
		return rc;
	mods = workers_job_modules(db, id);
	if (details) {
		jbuild_set_ref(&b, j, "testresults", mods);
		jbuild_set(&b, j, "logs", artefact_list(data_dir, id, ARTEFACT_FILE, false));
		jbuild_set(&b, j, "screenshots", artefact_list(data_dir, id, ARTEFACT_FILE, true));
		jbuild_set(&b, j, "ulogs", artefact_list(data_dir, id, ARTEFACT_ULOG, false));
	}
	jbuild_set(&b, j, "modules", mods);
	*out = jbuild_done(&b, j);
	return *out ? 0 : ERR_NOMEM;
}
