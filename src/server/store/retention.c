/* SPDX-License-Identifier: MIT */
/* retention.c - the cleanup of results, logs, assets and stored
 * screenshots by the job groups' keep_* settings and size limits (openQA's
 * limit_results_and_logs and limit_assets rules; see retention.h). A plan
 * first, then exactly what it lists. The plan decides what is removed:
 * every part of it is built through jbuild, and a plan that memory did
 * not allow whole (an important build, an asset's newest job lost) is
 * ERR_NOMEM and removes nothing. */
#define LOG_MODULE "retention"
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "server/store/jbuild.h"
#include "server/store/artefacts.h"
#include "server/store/assets.h"
#include "server/db/db.h"
#include "server/store/jobs.h"
#include "server/store/retention.h"
#include "util/err.h"
#include "util/file.h"
#include "util/log.h"
#include "util/path.h"
#include "util/str.h"
#include "util/banned.h" /* last: after every system header */

#define DAY_S 86400

int retention_group_get(struct db *db, int64_t group_id, struct retention_group *g)
{
	struct db_stmt *st;
	int rc;

	g->keep_logs_in_days = RETENTION_LOGS_DAYS;
	g->keep_important_logs_in_days = RETENTION_IMPORTANT_LOGS_DAYS;
	g->keep_results_in_days = RETENTION_RESULTS_DAYS;
	g->keep_important_results_in_days = RETENTION_IMPORTANT_RESULTS_DAYS;
	g->size_limit_gb = RETENTION_SIZE_LIMIT_GB;
	if (group_id == 0)
		return 0;
	if ((rc = db_prepare(db, &st, "SELECT keep_logs_in_days, keep_important_logs_in_days, keep_results_in_days,"
			     " keep_important_results_in_days, size_limit_gb FROM job_groups WHERE id = ?", "i", group_id)))
		return rc;
	if ((rc = db_step(st)) == 1) {
		int64_t *f[] = { &g->keep_logs_in_days, &g->keep_important_logs_in_days, &g->keep_results_in_days,
				 &g->keep_important_results_in_days, &g->size_limit_gb };
		int i;
		for (i = 0; i < 5; i++)
			if (!db_col_null(st, i))
				*f[i] = db_col_int(st, i);
	}
	db_finalize(st);
	return rc == 1 ? 0 : rc == 0 ? ERR_NOT_FOUND : rc;
}

/* "YYYY-MM-DDTHH:MM:SS" of epoch second t, the form of t_finished. */
static void stamp(int64_t t, char out[DB_TIME_LEN])
{
	time_t tt = (time_t)t;
	struct tm tm;

	gmtime_r(&tt, &tm);
	strftime(out, DB_TIME_LEN, "%Y-%m-%dT%H:%M:%S", &tm);
}

/* The builds a group's comments (and its parent's) tag important, in the
 * order written: "tag:BUILD:important" adds, "tag:BUILD:-important" takes
 * back. An object BUILD → true. */
static json_t *important_builds(struct jbuild *ab, struct db *db, int64_t group_id)
{
	json_t *set = jbuild_take(ab, json_object(), "important");
	struct db_stmt *st;

	if (!set || group_id == 0)
		return set;
	if (db_prepare(db, &st, "SELECT text FROM comments WHERE group_id = ? OR group_id ="
		       " (SELECT parent_id FROM job_groups WHERE id = ?) ORDER BY id", "ii", group_id, group_id))
		return set;
	while (db_step(st) == 1) {
		const char *t = db_col_text(st, 0);
		while (t && (t = strstr(t, "tag:"))) {
			char build[256], type[32];
			int n = 0;
			/* a word of its own: at the start or after white space */
			bool word = t == db_col_text(st, 0) || t[-1] == ' ' || t[-1] == '\n' || t[-1] == '\t';
			if (word && sscanf(t, "tag:%255[^: \t\r\n]:%31[-A-Za-z0-9_]%n", build, type, &n) == 2 && n > 0) {
				if (!strcmp(type, "important"))
					jbuild_set(ab, set, build, json_true());
				else if (!strcmp(type, "-important"))
					json_object_del(set, build);
			}
			t += 4;
		}
	}
	db_finalize(st);
	return set;
}

/* Whether a job's comments label it linked ("label:linked"), which keeps
 * it as long as an important build's. */
static bool job_linked(struct db *db, int64_t job_id)
{
	int64_t one;

	return db_query_int(db, &one, "SELECT 1 FROM comments WHERE job_id = ? AND text LIKE ?", "it", job_id,
			    "%label:linked%") == 0;
}

/* openQA's rule: keep == 0 keeps everything; an important job is kept for
 * keep_important when that is longer than keep, else for ever. The days a
 * job is kept, 0 for ever. */
static int64_t keep_days(int64_t keep, int64_t keep_important, bool important)
{
	if (keep == 0)
		return 0;
	if (!important)
		return keep;
	return keep_important > keep ? keep_important : 0;
}

/* A log of a job's results directory: neither a screenshot nor result
 * JSON, nor a dot file (thumbnails, the live frame). */
static bool is_log_name(const char *name)
{
	return name[0] != '.' && !str_ends_with(name, ".png") && !str_ends_with(name, ".json");
}

/* The job's logs: its results directory's files that are neither
 * screenshots nor result JSON (video, serial and runner logs), and what
 * the test uploaded (ulogs/...). Names relative to the directory into
 * files; their bytes returned. */
static int64_t job_logs(struct jbuild *ab, const char *data_dir, int64_t job_id, json_t *files)
{
	char *dir = artefact_path(data_dir, job_id, NULL), *ul = NULL;
	struct dirent *e;
	int64_t sum = 0;
	DIR *d;

	if (!dir || !files) {
		jbuild_take(ab, NULL, "files");
		free(dir);
		return 0;
	}
	if ((d = opendir(dir))) {
		while ((e = readdir(d))) {
			struct stat sb;
			char *p = path_join(dir, e->d_name);
			if (!p)
				jbuild_take(ab, NULL, "files");
			if (p && is_log_name(e->d_name) && !lstat(p, &sb) && S_ISREG(sb.st_mode)) {
				jbuild_append(ab, files, json_string(e->d_name));
				sum += (int64_t)sb.st_size;
			}
			free(p);
		}
		closedir(d);
	}
	if (!(ul = path_join(dir, "ulogs")))
		jbuild_take(ab, NULL, "files");
	if (ul && (d = opendir(ul))) {
		while ((e = readdir(d))) {
			struct stat sb;
			char *p = path_join(ul, e->d_name), rel[300];
			if (!p)
				jbuild_take(ab, NULL, "files");
			if (p && e->d_name[0] != '.' && !lstat(p, &sb) && S_ISREG(sb.st_mode)) {
				snprintf(rel, sizeof(rel), "ulogs/%s", e->d_name);
				jbuild_append(ab, files, json_string(rel));
				sum += (int64_t)sb.st_size;
			}
			free(p);
		}
		closedir(d);
	}
	free(ul);
	free(dir);
	return sum;
}

/* Expired results and logs of one group's finished jobs into the plan. */
static int plan_group_jobs(struct jbuild *ab, struct db *db, const char *data_dir, int64_t group_id, int64_t now,
			   json_t *jobs, json_t *logs)
{
	struct retention_group g;
	struct db_stmt *st;
	json_t *important;
	char cutoff[DB_TIME_LEN];
	int64_t shortest;
	int rc;

	if ((rc = retention_group_get(db, group_id, &g)))
		return rc;
	/* Nothing expires sooner than the shorter of the two plain periods
	 * (0: for ever). */
	shortest = g.keep_logs_in_days;
	if (g.keep_results_in_days && (!shortest || g.keep_results_in_days < shortest))
		shortest = g.keep_results_in_days;
	if (!shortest)
		return 0;
	stamp(now - shortest * DAY_S, cutoff);
	important = important_builds(ab, db, group_id);
	if (jbuild_failed(ab)) {
		json_decref(important);
		return ERR_NOMEM;
	}
	if ((rc = db_prepare(db, &st, "SELECT id, build, t_finished, logs_present FROM jobs"
			     " WHERE (group_id = ? OR (? = 0 AND group_id IS NULL)) AND state IN ('done', 'cancelled')"
			     " AND t_finished IS NOT NULL AND t_finished < ? ORDER BY id",
			     "iit", group_id, group_id, cutoff))) {
		json_decref(important);
		return rc;
	}
	while ((rc = db_step(st)) == 1) {
		int64_t id = db_col_int(st, 0);
		const char *build = db_col_text(st, 1), *fin = db_col_text(st, 2);
		bool imp = (build && json_object_get(important, build)) || job_linked(db, id);
		int64_t kr = keep_days(g.keep_results_in_days, g.keep_important_results_in_days, imp);
		int64_t kl = keep_days(g.keep_logs_in_days, g.keep_important_logs_in_days, imp);
		char limit[DB_TIME_LEN], why[200];
		if (kr) {
			stamp(now - kr * DAY_S, limit);
			if (strcmp(fin, limit) < 0) {
				char *dir = artefact_path(data_dir, id, NULL);
				if (!dir)
					jbuild_take(ab, NULL, "bytes");
				snprintf(why, sizeof(why), "results of %sjobs are kept %lld days", imp ? "important " : "",
					 (long long)kr);
				jbuild_append(ab, jobs, json_pack("{s:I,s:I,s:s,s:I,s:s}", "id", (json_int_t)id,
								      "group_id", (json_int_t)group_id, "t_finished", fin,
								      "bytes", (json_int_t)(dir ? file_disk_bytes(dir, true) : 0),
								      "reason", why));
				free(dir);
				continue;
			}
		}
		if (kl && db_col_int(st, 3)) {
			stamp(now - kl * DAY_S, limit);
			if (strcmp(fin, limit) < 0) {
				json_t *files = json_array();
				int64_t bytes = job_logs(ab, data_dir, id, files);
				snprintf(why, sizeof(why), "logs of %sjobs are kept %lld days", imp ? "important " : "",
					 (long long)kl);
				jbuild_append(ab, logs, json_pack("{s:I,s:I,s:s,s:o,s:I,s:s}", "id", (json_int_t)id,
								      "group_id", (json_int_t)group_id, "t_finished", fin,
								      "files", files, "bytes", (json_int_t)bytes, "reason", why));
			}
		}
		if (jbuild_failed(ab))
			break;
	}
	db_finalize(st);
	json_decref(important);
	return rc < 0 ? rc : jbuild_failed(ab) ? ERR_NOMEM : 0;
}

/* The use of one asset by jobs: per group the newest job naming it, and
 * whether a job that has not finished names it. */
struct asset_use {
	int64_t id, size, t_created_s;
	char type[8], name[LIMIT_ARTEFACT_NAME + 1];
	bool fixed, pending, named;
	int64_t pending_job;
	json_t *newest; /* group id (text) → newest job id naming it */
	bool kept;      /* within some group's limit */
	char over[160]; /* why it is over a limit, for the plan */
};

static int64_t epoch_of(const char *t)
{
	struct tm tm;

	memset(&tm, 0, sizeof(tm));
	if (!t || !strptime(t, "%Y-%m-%dT%H:%M:%S", &tm))
		return 0;
	return (int64_t)timegm(&tm);
}

static int load_assets(struct db *db, const char *data_dir, struct asset_use **out, size_t *n)
{
	struct asset_use *a = NULL;
	struct db_stmt *st;
	size_t cap = 0;
	int rc;

	*n = 0;
	if ((rc = db_prepare(db, &st, "SELECT id, type, name, size, fixed, t_created FROM assets ORDER BY id", NULL)))
		return rc;
	while ((rc = db_step(st)) == 1) {
		struct asset_use *u;
		if (*n == cap) {
			struct asset_use *b = realloc(a, (cap = cap ? cap * 2 : 16) * sizeof(*a));
			if (!b) {
				rc = ERR_NOMEM;
				break;
			}
			a = b;
		}
		u = &a[(*n)++];
		memset(u, 0, sizeof(*u));
		u->id = db_col_int(st, 0);
		snprintf(u->type, sizeof(u->type), "%s", db_col_text(st, 1));
		snprintf(u->name, sizeof(u->name), "%s", db_col_text(st, 2));
		u->size = db_col_null(st, 3) ? -1 : db_col_int(st, 3);
		u->fixed = db_col_int(st, 4) != 0;
		u->t_created_s = epoch_of(db_col_text(st, 5));
		if (!(u->newest = json_object())) {
			rc = ERR_NOMEM;
			break;
		}
		if (u->size < 0) {
			char *p = asset_path(data_dir, u->type, u->name);
			struct stat sb;
			if (!p) {
				rc = ERR_NOMEM;
				break;
			}
			u->size = !stat(p, &sb) ? (int64_t)sb.st_size : 0;
			free(p);
		}
	}
	db_finalize(st);
	*out = a;
	return rc < 0 ? rc : 0;
}

static struct asset_use *find_asset(struct asset_use *a, size_t n, const char *type, const char *name)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(a[i].type, type) && !strcmp(a[i].name, name))
			return &a[i];
	return NULL;
}

/* Which jobs name which asset: settings whose key names an asset type. */
static int load_use(struct db *db, struct asset_use *a, size_t n)
{
	struct db_stmt *st;
	int rc;

	if ((rc = db_prepare(db, &st, "SELECT s.key, s.value, j.id, j.state, j.group_id FROM job_settings s"
			     " JOIN jobs j ON j.id = s.job_id WHERE s.key LIKE 'ISO%' OR s.key LIKE 'HDD%'"
			     " OR s.key = 'UEFI_PFLASH_VARS' OR s.key LIKE 'REPO%' OR s.key LIKE 'ASSET%'"
			     " OR s.key = 'KERNEL' OR s.key = 'INITRD'", NULL)))
		return rc;
	while ((rc = db_step(st)) == 1) {
		const char *type = asset_type_of_setting(db_col_text(st, 0)), *state = db_col_text(st, 3);
		struct asset_use *u = type ? find_asset(a, n, type, db_col_text(st, 1)) : NULL;
		int64_t job = db_col_int(st, 2), group = db_col_null(st, 4) ? 0 : db_col_int(st, 4);
		char gk[24];
		json_t *prev;
		if (!u)
			continue;
		u->named = true;
		if (strcmp(state, "done") && strcmp(state, "cancelled") && !u->pending) {
			u->pending = true;
			u->pending_job = job;
		}
		snprintf(gk, sizeof(gk), "%lld", (long long)group);
		prev = json_object_get(u->newest, gk);
		/* a newest job lost would take the asset out of its group's ranking */
		if ((!prev || json_integer_value(prev) < job) && json_object_set_new(u->newest, gk, json_integer(job))) {
			rc = ERR_NOMEM;
			break;
		}
	}
	db_finalize(st);
	return rc < 0 ? rc : 0;
}

struct ranked {
	struct asset_use *u;
	int64_t job;
};

static int by_job_desc(const void *x, const void *y)
{
	const struct ranked *a = x, *b = y;

	return a->job < b->job ? 1 : a->job > b->job ? -1 : 0;
}

/* Each group keeps its assets, newest job's first, while they fit its
 * size_limit_gb; an asset any group keeps stays. */
static int rank_groups(struct db *db, struct asset_use *a, size_t n)
{
	json_t *groups = json_object(), *v;
	const char *gk;
	size_t i;
	int rc = 0;

	if (!groups)
		return ERR_NOMEM;
	for (i = 0; i < n && !rc; i++)
		json_object_foreach(a[i].newest, gk, v)
			if (json_object_set_new(groups, gk, json_true()))
				rc = ERR_NOMEM;
	if (rc) {
		json_decref(groups);
		return rc;
	}
	json_object_foreach(groups, gk, v) {
		struct retention_group g;
		struct ranked *r = calloc(n ? n : 1, sizeof(*r));
		size_t m = 0, k;
		int64_t used = 0, limit;
		if (!r) {
			rc = ERR_NOMEM;
			break;
		}
		if ((rc = retention_group_get(db, strtoll(gk, NULL, 10), &g)) == ERR_NOT_FOUND)
			rc = retention_group_get(db, 0, &g); /* a group deleted since: the defaults */
		if (rc) {
			free(r);
			break;
		}
		limit = g.size_limit_gb * (int64_t)1073741824;
		for (i = 0; i < n; i++) {
			json_t *j = json_object_get(a[i].newest, gk);
			if (j)
				r[m++] = (struct ranked){ &a[i], json_integer_value(j) };
		}
		qsort(r, m, sizeof(*r), by_job_desc);
		for (k = 0; k < m; k++) {
			if (used + r[k].u->size <= limit) {
				used += r[k].u->size;
				r[k].u->kept = true;
			} else if (!r[k].u->over[0]) {
				snprintf(r[k].u->over, sizeof(r[k].u->over),
					 "over the size limit of %s %s (%lld GB)", strcmp(gk, "0") ? "group" : "the jobs without a group",
					 strcmp(gk, "0") ? gk : "", (long long)g.size_limit_gb);
			}
		}
		free(r);
	}
	json_decref(groups);
	return rc;
}

static int plan_assets(struct jbuild *ab, struct db *db, const char *data_dir, int64_t now, json_t *assets,
		       json_t *kept)
{
	struct asset_use *a = NULL;
	size_t n = 0, i;
	int rc;

	if ((rc = load_assets(db, data_dir, &a, &n)) || (rc = load_use(db, a, n)) || (rc = rank_groups(db, a, n)))
		goto out;
	for (i = 0; i < n; i++) {
		struct asset_use *u = &a[i];
		char why[200];
		if (u->fixed)
			continue;
		if (!u->named) {
			if (now - u->t_created_s < RETENTION_UNTRACKED_DAYS * DAY_S)
				continue;
			snprintf(why, sizeof(why), "no job names it and it is older than %d days", RETENTION_UNTRACKED_DAYS);
		} else if (u->kept) {
			continue;
		} else {
			snprintf(why, sizeof(why), "%s", u->over);
		}
		if (u->pending) {
			char k[300];
			snprintf(k, sizeof(k), "%s, but job %lld, not finished, names it", why, (long long)u->pending_job);
			jbuild_append(ab, kept, json_pack("{s:I,s:s,s:s,s:I,s:s}", "id", (json_int_t)u->id, "type", u->type,
							      "name", u->name, "size", (json_int_t)u->size, "reason", k));
			continue;
		}
		jbuild_append(ab, assets, json_pack("{s:I,s:s,s:s,s:I,s:s}", "id", (json_int_t)u->id, "type", u->type,
							"name", u->name, "size", (json_int_t)u->size, "reason", why));
	}
	if (jbuild_failed(ab))
		rc = ERR_NOMEM;
out:
	for (i = 0; i < n; i++)
		json_decref(a[i].newest);
	free(a);
	return rc;
}

int retention_plan(struct db *db, const char *data_dir, int64_t now, json_t **out)
{
	struct jbuild ab = JBUILD_INIT;
	json_t *plan = json_object(), *jobs = json_array(), *logs = json_array(), *assets = json_array(),
	       *kept = json_array(), *v;
	struct db_stmt *st;
	json_int_t bytes = 0;
	char nows[DB_TIME_LEN];
	size_t i;
	int rc;

	*out = NULL;
	stamp(now, nows);
	if (!plan) {
		json_decref(jobs);
		json_decref(logs);
		json_decref(assets);
		json_decref(kept);
		return ERR_NOMEM;
	}
	jbuild_set(&ab, plan, "now", json_string(nows));
	jbuild_set(&ab, plan, "jobs", jobs);
	jbuild_set(&ab, plan, "logs", logs);
	jbuild_set(&ab, plan, "assets", assets);
	jbuild_set(&ab, plan, "kept_assets", kept);
	/* the jobs without a group (0), then every group */
	rc = jbuild_failed(&ab) ? ERR_NOMEM : plan_group_jobs(&ab, db, data_dir, 0, now, jobs, logs);
	if (!rc && !(rc = db_prepare(db, &st, "SELECT id FROM job_groups ORDER BY id", NULL))) {
		while (!rc && db_step(st) == 1)
			rc = plan_group_jobs(&ab, db, data_dir, db_col_int(st, 0), now, jobs, logs);
		db_finalize(st);
	}
	if (!rc)
		rc = plan_assets(&ab, db, data_dir, now, assets, kept);
	if (rc) {
		json_decref(plan);
		return rc;
	}
	json_array_foreach(jobs, i, v)
		bytes += json_integer_value(json_object_get(v, "bytes"));
	json_array_foreach(logs, i, v)
		bytes += json_integer_value(json_object_get(v, "bytes"));
	json_array_foreach(assets, i, v)
		bytes += json_integer_value(json_object_get(v, "size"));
	jbuild_set(&ab, plan, "bytes", json_integer(bytes));
	if (jbuild_failed(&ab)) {
		json_decref(plan);
		return ERR_NOMEM;
	}
	*out = plan;
	return 0;
}

/* Stored screenshots (DATA/images) that no results directory links any
 * more: their only link is the store's. How many were removed. */
static int64_t prune_images(const char *data_dir)
{
	char *dir = path_join(data_dir, "images");
	struct dirent *e;
	int64_t n = 0;
	DIR *d;

	if (!dir || !(d = opendir(dir))) {
		free(dir);
		return 0;
	}
	while ((e = readdir(d))) {
		struct stat sb;
		char *p = e->d_name[0] == '.' ? NULL : path_join(dir, e->d_name);
		if (p && !lstat(p, &sb) && S_ISREG(sb.st_mode) && sb.st_nlink == 1 && !unlink(p))
			n++;
		free(p);
	}
	closedir(d);
	free(dir);
	return n;
}

static void item_error(struct jbuild *ab, json_t *item, const char *what, int rc)
{
	char msg[200];

	snprintf(msg, sizeof(msg), "%s: %s", what, err_str(rc));
	jbuild_set(ab, item, "error", json_string(msg));
	log_err("cleanup: %s", msg);
}

int retention_run(struct db *db, const char *data_dir, int64_t now, json_t **done)
{
	struct jbuild ab = JBUILD_INIT;
	json_t *plan, *v, *f;
	size_t i, k;
	int rc;

	*done = NULL;
	if ((rc = retention_plan(db, data_dir, now, &plan)))
		return rc;
	json_array_foreach(json_object_get(plan, "jobs"), i, v) {
		int64_t id = json_integer_value(json_object_get(v, "id"));
		char *dir = artefact_path(data_dir, id, NULL);
		if ((rc = jobs_delete(db, id)) && rc != ERR_NOT_FOUND)
			item_error(&ab, v, "the job's row", rc);
		else if (dir && (rc = file_remove_tree(dir)))
			item_error(&ab, v, "the job's results directory", rc);
		else
			log_info("cleanup: job %lld removed (%s)", (long long)id,
				 json_string_value(json_object_get(v, "reason")));
		free(dir);
	}
	json_array_foreach(json_object_get(plan, "logs"), i, v) {
		int64_t id = json_integer_value(json_object_get(v, "id"));
		char *dir = artefact_path(data_dir, id, NULL), *ul = dir ? path_join(dir, "ulogs") : NULL;
		int bad = 0;
		json_array_foreach(json_object_get(v, "files"), k, f) {
			char *p = dir ? path_join(dir, json_string_value(f)) : NULL;
			if (!p || (unlink(p) && errno != ENOENT)) {
				if (!bad)
					item_error(&ab, v, json_string_value(f), p ? -errno : ERR_NOMEM);
				bad = 1;
			}
			free(p);
		}
		if (ul)
			(void)rmdir(ul); /* empty now; anything else in it stays */
		if ((rc = db_exec(db, "UPDATE jobs SET logs_present = 0 WHERE id = ?", "i", id)) < 0)
			item_error(&ab, v, "logs_present", rc);
		free(ul);
		free(dir);
	}
	json_array_foreach(json_object_get(plan, "assets"), i, v) {
		int64_t id = json_integer_value(json_object_get(v, "id"));
		if ((rc = assets_delete(db, data_dir, id)) && rc != ERR_NOT_FOUND)
			item_error(&ab, v, "the asset", rc);
		else
			log_info("cleanup: asset %s/%s removed (%s)", json_string_value(json_object_get(v, "type")),
				 json_string_value(json_object_get(v, "name")),
				 json_string_value(json_object_get(v, "reason")));
	}
	jbuild_set(&ab, plan, "removed_images", json_integer(prune_images(data_dir)));
	if (jbuild_failed(&ab)) { /* what was removed stays removed; the answer is 503 */
		json_decref(plan);
		return ERR_NOMEM;
	}
	*done = plan;
	return 0;
}
