/* SPDX-License-Identifier: MIT */
/* investigate.c - what changed since the last good job of a failed job's
 * scenario (openQA's Jobs.pm investigate): settings (vars.json), test code
 * (git log between the two TEST_GIT_HASH when the server's copy of the
 * distribution is a git repository), needles, and the first failing step
 * beside the same step of the good run. Reads result files; writes nothing.
 * Every part of the answer is built through jbuild: one that memory
 * did not allow makes the whole answer ERR_NOMEM (503), never an answer
 * with a part missing or a "not known" that was only no memory. */
#define LOG_MODULE "investigate"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include "server/store/jbuild.h"
#include "server/store/artefacts.h"
#include "server/db/db.h"
#include "server/store/distri.h"
#include "server/store/investigate.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/file.h"
#include "util/oom.h"
#include "util/path.h"
#include "util/proc.h"
#include "util/banned.h" /* last: after every system header */

#define GIT_TIMEOUT_MS 10000
#define GIT_LOG_LIMIT "-100"
#define RESULT_FILE_MAX (64u << 20) /* vars.json, result-*.json, needle-*.json read back */
/* Settings that differ in every run and say nothing (openQA's
 * job_investigate_ignore; QEMUPORT too: vigil's command server takes a
 * free port each run; NICRELAY_ADDR: so does a relay hub). */
static const char *const ignored[] = { "NAME", "JOBTOKEN", "WORKER_ID", "WORKER_INSTANCE", "QEMUPORT",
				       "NICRELAY_ADDR", NULL };

static bool is_ignored(const char *k)
{
	for (const char *const *i = ignored; *i; i++)
		if (!strcmp(*i, k))
			return true;
	return false;
}

/* A job's result file parsed, NULL when missing or malformed (or when
 * memory ran out: recorded in ab). */
static json_t *result_file(struct jbuild *ab, const char *data_dir, int64_t job_id, const char *name)
{
	char *path;
	struct buf b;
	json_t *j = NULL;
	bool nomem = false;
	int rc;

	if (!artefact_name_valid(name, strlen(name)))
		return NULL;
	if (!(path = artefact_path(data_dir, job_id, name)))
		return jbuild_take(ab, NULL, name);
	buf_init(&b, RESULT_FILE_MAX);
	rc = file_read_all(path, &b);
	if (rc == ERR_NOMEM)
		jbuild_take(ab, NULL, name);
	else if (!rc && b.data && !(j = oom_json_loadb(b.data, b.len, 0, NULL, &nomem)) && nomem)
		jbuild_take(ab, NULL, name);
	buf_release(&b);
	free(path);
	return j;
}

static json_t *module_result(struct jbuild *ab, const char *data_dir, int64_t job_id, const char *module)
{
	char name[LIMIT_ARTEFACT_NAME + 1];

	snprintf(name, sizeof(name), "result-%s.json", module);
	return result_file(ab, data_dir, job_id, name);
}

static json_t *link_to(int64_t id)
{
	char link[48], text[24];

	snprintf(link, sizeof(link), "/tests/%lld", (long long)id);
	snprintf(text, sizeof(text), "%lld", (long long)id);
	return json_pack("{s:s,s:s,s:s}", "type", "link", "link", link, "text", text);
}

/* The settings that differ as [{"key", "last_good", "this"}] (null where
 * one lacks it) and openQA's diff_to_last_good text ("-KEY: old",
 * "+KEY: new"). */
static void settings_diff(struct jbuild *ab, const json_t *good, const json_t *mine, json_t *inv)
{
	json_t *keys = jbuild_take(ab, json_object(), "settings_diff"), *rows = json_array(), *v;
	const char *k;
	struct buf text;
	void *it;

	buf_init(&text, 256 * 1024);
	if (buf_puts(&text, "") == ERR_NOMEM)
		jbuild_take(ab, NULL, "diff_to_last_good");
	json_object_foreach((json_t *)good, k, v)
		if (keys)
			jbuild_set(ab, keys, k, json_true());
	json_object_foreach((json_t *)mine, k, v)
		if (keys)
			jbuild_set(ab, keys, k, json_true());
	/* jansson keeps insertion order: sort the keys for a stable answer. */
	const char **sorted = calloc(json_object_size(keys) + 1, sizeof(*sorted));
	size_t n = 0, i, j;

	if (!sorted)
		jbuild_take(ab, NULL, "settings_diff");
	for (it = json_object_iter(keys); sorted && it; it = json_object_iter_next(keys, it))
		sorted[n++] = json_object_iter_key(it);
	for (i = 1; sorted && i < n; i++)
		for (j = i; j > 0 && strcmp(sorted[j - 1], sorted[j]) > 0; j--) {
			const char *t = sorted[j];
			sorted[j] = sorted[j - 1];
			sorted[j - 1] = t;
		}
	for (i = 0; sorted && i < n; i++) {
		const char *a = json_string_value(json_object_get(good, sorted[i]));
		const char *b = json_string_value(json_object_get(mine, sorted[i]));
		if (is_ignored(sorted[i]) || (a && b && !strcmp(a, b)) || (!a && !b))
			continue;
		if (rows)
			jbuild_append(ab, rows, json_pack("{s:s,s:o,s:o}", "key", sorted[i], "last_good",
							     a ? json_string(a) : json_null(), "this",
							     b ? json_string(b) : json_null()));
		/* ERR_TOO_BIG: the text stops at 256 KiB (the rows have it all) */
		if ((a && buf_printf(&text, "-%s: %s\n", sorted[i], a) == ERR_NOMEM) ||
		    (b && buf_printf(&text, "+%s: %s\n", sorted[i], b) == ERR_NOMEM))
			jbuild_take(ab, NULL, "diff_to_last_good");
	}
	free(sorted);
	jbuild_set(ab, inv, "settings_diff", rows);
	jbuild_set(ab, inv, "diff_to_last_good", json_string(text.data ? text.data : ""));
	buf_release(&text);
	json_decref(keys);
}

/* openQA's git_log_diff: `git log --stat` of good..mine in the server's
 * copy of the distribution, or why it cannot be told. New string, NULL
 * when out of memory. */
static json_t *git_log(const char *data_dir, const char *distri, const char *good, const char *mine)
{
	char *tests = NULL, *dir = NULL, *dotgit = NULL, range[300];
	json_t *res = NULL;
	struct buf out;
	int st = 0, rc;

	buf_init(&out, 64 * 1024);
	if (!good || !mine) {
		res = json_string("not known: the jobs did not record TEST_GIT_HASH (the distribution is no git checkout)");
		goto out;
	}
	if (!strcmp(good, mine)) {
		res = json_string("No test changes recorded, test regression unlikely");
		goto out;
	}
	if (distri_name_valid(distri) && (!(tests = path_join(data_dir, "tests")) || !(dir = path_join(tests, distri)) ||
					   !(dotgit = path_join(dir, ".git"))))
		goto out; /* no memory: NULL */
	if (!distri_name_valid(distri) || !(file_is_dir(dotgit) || file_exists(dotgit))) {
		res = json_string("not known: the server's copy of the distribution is no git repository");
		goto out;
	}
	if (strspn(good, "0123456789abcdef") != strlen(good) || strspn(mine, "0123456789abcdef") != strlen(mine) ||
	    strlen(good) > 64 || strlen(mine) > 64) {
		res = json_string("Invalid range: TEST_GIT_HASH is not a commit id");
		goto out;
	}
	snprintf(range, sizeof(range), "%s..%s", good, mine);
	char *argv[] = { "git", "-C", dir, "log", GIT_LOG_LIMIT, "--stat", "--pretty=oneline", "--abbrev-commit",
			 "--no-merges", range, NULL };
	if ((rc = proc_run(argv, GIT_TIMEOUT_MS, &st, &out))) {
		if (rc != ERR_NOMEM)
			res = json_string("Cannot display the log because of a git problem");
		goto out;
	}
	/* Success or not, git's own words say what there is to say. */
	res = json_string(out.data && *out.data ? out.data : "No test changes recorded, test regression unlikely");
out:
	buf_release(&out);
	free(tests);
	free(dir);
	free(dotgit);
	return res;
}

/* {needle name: "matched" | "candidate"} of every step of a job's modules. */
static json_t *needles_of(struct jbuild *ab, struct db *db, const char *data_dir, int64_t job_id)
{
	struct db_stmt *st;
	json_t *all = jbuild_take(ab, json_object(), "needles_diff");

	if (!all || db_prepare(db, &st, "SELECT name FROM job_modules WHERE job_id = ? ORDER BY id", "i", job_id))
		return all;
	while (db_step(st) == 1) {
		json_t *res = module_result(ab, data_dir, job_id, db_col_text(st, 0)), *d, *c;
		size_t i, k;
		json_array_foreach(json_object_get(res, "details"), i, d) {
			const char *matched = json_string_value(json_object_get(d, "needle"));
			const char *r = json_string_value(json_object_get(d, "result"));
			json_array_foreach(json_object_get(d, "needles"), k, c) {
				const char *n = json_string_value(json_object_get(c, "name"));
				if (n && !json_object_get(all, n))
					jbuild_set(ab, all, n, json_string("candidate"));
			}
			if (matched && r && strcmp(r, "fail"))
				jbuild_set(ab, all, matched, json_string("matched"));
		}
		json_decref(res);
	}
	db_finalize(st);
	return all;
}

/* The needle file a job's results keep (needle-NAME.json), as text. */
static char *needle_copy(struct jbuild *ab, const char *data_dir, int64_t job_id, const char *name)
{
	json_t *j;
	char file[LIMIT_ARTEFACT_NAME + 1], *s;

	snprintf(file, sizeof(file), "needle-%s.json", name);
	if (!(j = result_file(ab, data_dir, job_id, file)))
		return NULL;
	if (!(s = json_dumps(j, JSON_SORT_KEYS | JSON_COMPACT)))
		jbuild_take(ab, NULL, "changed");
	json_decref(j);
	return s;
}

/* The needles whose use or file differs: [{"name", "last_good", "this",
 * "changed"}], "last_good"/"this" being "matched", "candidate" or null. */
static json_t *needles_diff(struct jbuild *ab, struct db *db, const char *data_dir, int64_t good, int64_t mine)
{
	json_t *a = needles_of(ab, db, data_dir, good), *b = needles_of(ab, db, data_dir, mine), *v;
	json_t *rows = jbuild_take(ab, json_array(), "needles_diff");
	const char *k;

	if (!rows || jbuild_failed(ab))
		goto out;
	json_object_foreach(b, k, v) {
		const char *was = json_string_value(json_object_get(a, k));
		char *fa = needle_copy(ab, data_dir, good, k), *fb = needle_copy(ab, data_dir, mine, k);
		bool changed = fa && fb && strcmp(fa, fb);
		if (!was || strcmp(was, json_string_value(v)) || changed)
			jbuild_append(ab, rows, json_pack("{s:s,s:o,s:O,s:b}", "name", k, "last_good",
							      was ? json_string(was) : json_null(), "this", v,
							      "changed", changed));
		free(fa);
		free(fb);
	}
	json_object_foreach(a, k, v)
		if (!json_object_get(b, k))
			jbuild_append(ab, rows, json_pack("{s:s,s:O,s:n,s:b}", "name", k, "last_good", v, "this",
							     "changed", 0));
out:
	json_decref(a);
	json_decref(b);
	return rows;
}

/* One step as the tab shows it: its detail object with "job", "module",
 * "step" (1-based) added. New object. */
static json_t *step_of(struct jbuild *ab, int64_t job_id, const char *module, size_t step, const json_t *detail)
{
	json_t *s = jbuild_take(ab, json_deep_copy(detail), "first_failure");

	if (!s)
		return NULL;
	jbuild_set(ab, s, "job", json_integer(job_id));
	jbuild_set(ab, s, "module", json_string(module));
	jbuild_set(ab, s, "step", json_integer((json_int_t)step));
	return s;
}

static bool same_tags(const json_t *a, const json_t *b)
{
	return json_array_size(a) > 0 && json_equal((json_t *)a, (json_t *)b);
}

/* The first failing step of mine and the same step of good, in the same
 * module: the step with that number when it checked the same tags, else
 * the first step that did, else the step with that number. */
static json_t *first_failure(struct jbuild *ab, struct db *db, const char *data_dir, int64_t good, int64_t mine)
{
	struct db_stmt *st;
	json_t *res = NULL, *gres = NULL, *d, *out = NULL, *other = NULL;
	char module[LIMIT_ARTEFACT_NAME + 1] = "";
	size_t i, n = 0;

	if (db_prepare(db, &st, "SELECT name FROM job_modules WHERE job_id = ? AND result = 'failed' ORDER BY id"
		       " LIMIT 1", "i", mine))
		return json_null();
	if (db_step(st) == 1)
		snprintf(module, sizeof(module), "%s", db_col_text(st, 0));
	db_finalize(st);
	if (!module[0] || !(res = module_result(ab, data_dir, mine, module)))
		goto out;
	json_array_foreach(json_object_get(res, "details"), i, d) {
		const char *r = json_string_value(json_object_get(d, "result"));
		if (r && !strcmp(r, "fail")) {
			n = i + 1;
			break;
		}
	}
	if (!n)
		goto out;
	d = json_array_get(json_object_get(res, "details"), n - 1);
	out = jbuild_take(ab, json_pack("{s:s,s:I,s:o}", "module", module, "step", (json_int_t)n, "this",
					   step_of(ab, mine, module, n, d)), "first_failure");
	if (out && (gres = module_result(ab, data_dir, good, module))) {
		const json_t *gd = json_object_get(gres, "details"), *tags = json_object_get(d, "tags"), *g;
		g = json_array_get(gd, n - 1);
		if (g && same_tags(tags, json_object_get(g, "tags")))
			other = step_of(ab, good, module, n, g);
		json_array_foreach(gd, i, g) {
			if (other)
				break;
			if (same_tags(tags, json_object_get(g, "tags")))
				other = step_of(ab, good, module, i + 1, g);
		}
		/* No step checked those tags: the one at the same place. */
		if (!other && (g = json_array_get(gd, n - 1)))
			other = step_of(ab, good, module, n, g);
	}
	/* a step_of that failed is recorded in ab: the answer is then 503 */
	if (out)
		jbuild_set(ab, out, "last_good", other ? other : json_null());
	else
		json_decref(other);
out:
	json_decref(res);
	json_decref(gres);
	return out ? out : jbuild_failed(ab) ? NULL : json_null();
}

int investigate_job(struct db *db, const char *data_dir, int64_t job_id, json_t **out)
{
	struct jbuild ab = JBUILD_INIT;
	struct db_stmt *st = NULL;
	json_t *inv = json_object(), *mine = NULL, *theirs = NULL;
	char *key[6] = { 0 };
	int64_t good = 0, prev = 0;
	int rc, i;

	*out = NULL;
	if (!inv)
		return ERR_NOMEM;
	if ((rc = db_prepare(db, &st, "SELECT distri, version, flavor, arch, test, machine FROM jobs WHERE id = ?", "i",
			     job_id)))
		goto out;
	if ((rc = db_step(st)) != 1) {
		rc = rc == 0 ? ERR_NOT_FOUND : rc;
		goto out;
	}
	for (i = 0; i < 6; i++)
		key[i] = strdup(db_col_text(st, i) ? db_col_text(st, i) : "");
	db_finalize(st);
	st = NULL;
	for (i = 0; i < 6; i++)
		if (!key[i]) {
			rc = ERR_NOMEM;
			goto out;
		}
	/* openQA's _previous_scenario_jobs, newest first; failures before the
	 * last good one lead back to the first bad one. */
	if ((rc = db_prepare(db, &st,
			     "SELECT id, result FROM jobs WHERE distri = ? AND version = ? AND flavor = ? AND arch = ?"
			     " AND test = ? AND machine = ? AND state = 'done'"
			     " AND result IN ('passed', 'softfailed', 'failed') AND id < ? ORDER BY id DESC LIMIT ?",
			     "ttttttii", key[0], key[1], key[2], key[3], key[4], key[5], job_id,
			     (int64_t)INVESTIGATE_LOOKBACK)))
		goto out;
	while (!good && (rc = db_step(st)) == 1) {
		const char *r = db_col_text(st, 1);
		prev = db_col_int(st, 0);
		if (!strcmp(r, "failed"))
			jbuild_set(&ab, inv, "first_bad", link_to(prev));
		else
			good = prev;
	}
	db_finalize(st);
	st = NULL;
	if (rc < 0)
		goto out;
	rc = 0;
	if (!prev) {
		jbuild_set(&ab, inv, "error", json_string("No previous job in this scenario, cannot provide hints"));
		goto done;
	}
	if (!good) {
		jbuild_set(&ab, inv, "last_good", json_string("not found"));
		goto done;
	}
	jbuild_set(&ab, inv, "last_good", link_to(good));
	jbuild_set(&ab, inv, "last_good_id", json_integer(good));
	mine = result_file(&ab, data_dir, job_id, "vars.json");
	theirs = result_file(&ab, data_dir, good, "vars.json");
	if (jbuild_failed(&ab))
		goto done;
	if (mine && theirs)
		settings_diff(&ab, theirs, mine, inv);
	else
		jbuild_set(&ab, inv, "diff_to_last_good", json_string("not known: a job has no vars.json"));
	jbuild_set(&ab, inv, "test_log",
		      git_log(data_dir, key[0], json_string_value(json_object_get(theirs, "TEST_GIT_HASH")),
			      json_string_value(json_object_get(mine, "TEST_GIT_HASH"))));
	if (!jbuild_failed(&ab))
		jbuild_set(&ab, inv, "needles_diff", needles_diff(&ab, db, data_dir, good, job_id));
	if (!jbuild_failed(&ab))
		jbuild_set(&ab, inv, "first_failure", first_failure(&ab, db, data_dir, good, job_id));
done:
	if (jbuild_failed(&ab)) {
		rc = ERR_NOMEM;
		goto out;
	}
	*out = inv;
	inv = NULL;
out:
	db_finalize(st);
	for (i = 0; i < 6; i++)
		free(key[i]);
	json_decref(inv);
	json_decref(mine);
	json_decref(theirs);
	return rc;
}
