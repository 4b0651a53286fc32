/* SPDX-License-Identifier: MIT */
/* rejudge.c - re-judging stored screenshots (see rejudge.h): gathers the
 * failed screen checks of a build's failed jobs, decodes each screenshot
 * file once and matches the needles on it as runner/screen.c does on a
 * frame, then says per job what a new run still has to prove. Holds its
 * SQL (jobs and job_modules, read only), the last answers in memory and
 * the heat-map cache under DATA/cache/heatmap/. Writes no job's results.
 * The answer is built through jbuild: a part memory did not allow (a
 * module's results, a step's verdict) makes the whole re-judge ERR_NOMEM
 * (503), never a verdict drawn from what was left. */
#define LOG_MODULE "rejudge"
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include "image/heatmap.h"
#include "image/match.h"
#include "server/store/jbuild.h"
#include "server/store/artefacts.h"
#include "server/db/db.h"
#include "server/store/distri.h"
#include "server/store/needles.h"
#include "server/store/rejudge.h"
#include "util/array.h"
#include "util/err.h"
#include "util/buf.h"
#include "util/file.h"
#include "util/log.h"
#include "util/oom.h"
#include "util/path.h"
#include "util/str.h"
#include "util/time.h"
#include "util/banned.h" /* last: after every system header */

#define REJUDGE_MAX_TAGS 64 /* tag expressions of one step */

struct rejudge_job {
	json_t *info;     /* the answer object (owned) */
	json_t *modules;  /* [{"name", "result"}] (owned) */
	json_t *results;  /* module name -> its result JSON (owned) */
	json_t *steps;    /* the judged steps' answers, run order (owned) */
	json_t *failed;   /* [{"module", "step", "task"}]: each failed module's last failed check (owned) */
};

struct rejudge_task {
	size_t job;
	json_t *d;       /* the step in its job's results (borrowed) */
	char *shot;      /* the screenshot's path (owned) */
	bool have_file;
	dev_t dev;
	ino_t ino;
	double since;    /* when its job started (epoch s; 0 unknown) */
	json_t *answer;  /* the step's answer (owned until it moves to its job) */
};

/* ---- the store */

struct store_entry {
	int64_t id;
	uint64_t seq;
	json_t *job;
};

struct rejudge_store {
	pthread_mutex_t lock;
	struct store_entry v[REJUDGE_STORE_MAX];
	size_t n;
	uint64_t seq;
};

int rejudge_store_new(struct rejudge_store **out)
{
	struct rejudge_store *s = calloc(1, sizeof(*s));

	*out = NULL;
	if (!s)
		return ERR_NOMEM;
	pthread_mutex_init(&s->lock, NULL);
	*out = s;
	return 0;
}

void rejudge_store_free(struct rejudge_store *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->n; i++)
		json_decref(s->v[i].job);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

int rejudge_store_put(struct rejudge_store *s, const json_t *job, const char *time)
{
	int64_t id = json_integer_value(json_object_get(job, "id"));
	json_t *copy = json_deep_copy(job);
	size_t i, at;

	if (!copy || json_object_set_new(copy, "time", json_string(time))) {
		json_decref(copy);
		return ERR_NOMEM;
	}
	pthread_mutex_lock(&s->lock);
	for (at = 0; at < s->n && s->v[at].id != id; at++)
		;
	if (at == s->n && s->n == REJUDGE_STORE_MAX) {
		/* full: the entry written longest ago goes */
		for (at = 0, i = 1; i < s->n; i++)
			if (s->v[i].seq < s->v[at].seq)
				at = i;
	}
	if (at == s->n)
		s->n++;
	else
		json_decref(s->v[at].job);
	s->v[at] = (struct store_entry){ .id = id, .seq = ++s->seq, .job = copy };
	pthread_mutex_unlock(&s->lock);
	return 0;
}

json_t *rejudge_store_get(struct rejudge_store *s, int64_t job_id)
{
	json_t *copy = NULL;
	size_t i;

	pthread_mutex_lock(&s->lock);
	for (i = 0; i < s->n; i++)
		if (s->v[i].id == job_id) {
			copy = json_deep_copy(s->v[i].job);
			break;
		}
	pthread_mutex_unlock(&s->lock);
	return copy;
}

/* ---- gathering the steps */

static void warn_cb(void *ctx, const char *msg)
{
	struct rejudge *rj = ctx;

	rj->broken_needles++;
	log_warn("%s", msg);
}

int rejudge_init(struct rejudge *rj, const char *needles_dir, char *msg, size_t msglen)
{
	int rc;

	memset(rj, 0, sizeof(*rj));
	rc = needle_set_load(&rj->needles, needles_dir, warn_cb, rj);
	if (rc)
		snprintf(msg, msglen, "cannot read the needles directory '%s': %s", needles_dir, err_str(rc));
	return rc;
}

void rejudge_release(struct rejudge *rj)
{
	size_t i;

	for (i = 0; i < rj->njobs; i++) {
		json_decref(rj->jobs[i].info);
		json_decref(rj->jobs[i].modules);
		json_decref(rj->jobs[i].results);
		json_decref(rj->jobs[i].steps);
		json_decref(rj->jobs[i].failed);
	}
	for (i = 0; i < rj->ntasks; i++) {
		free(rj->tasks[i].shot);
		json_decref(rj->tasks[i].answer);
	}
	free(rj->jobs);
	free(rj->tasks);
	needle_set_release(&rj->needles);
	memset(rj, 0, sizeof(*rj));
}

/* A module's result-<module>.json into *out, NULL when absent, too big or
 * malformed. 0 or ERR_NOMEM. */
static int load_result(const char *dir, const char *module, json_t **out)
{
	char fn[LIMIT_ARTEFACT_NAME + 16];
	char *path;
	struct stat sb;
	json_error_t jerr;
	struct buf b;
	bool nomem = false;
	int rc = 0;

	*out = NULL;
	snprintf(fn, sizeof(fn), "result-%s.json", module);
	if (!artefact_name_valid(fn, strlen(fn)))
		return 0;
	if (!(path = path_join(dir, fn)))
		return ERR_NOMEM;
	buf_init(&b, LIMIT_RESULT_JSON);
	if (!stat(path, &sb) && S_ISREG(sb.st_mode) && sb.st_size <= (off_t)LIMIT_RESULT_JSON &&
	    (rc = file_read_all(path, &b)) != ERR_NOMEM) {
		if (!rc && b.data && !(*out = oom_json_loadb(b.data, b.len, 0, &jerr, &nomem)) && !nomem)
			log_warn("'%s' skipped: line %d: %s", path, jerr.line, jerr.text);
		rc = nomem ? ERR_NOMEM : 0;
	}
	buf_release(&b);
	free(path);
	return rc;
}

/* A screen check that did not pass: tags asked, a screenshot, and the
 * runner's "fail" (assert_screen) or "unk" (check_screen). */
static bool failed_check(const json_t *d)
{
	const char *r = json_string_value(json_object_get(d, "result"));
	const json_t *tags = json_object_get(d, "tags");
	const char *shot = json_string_value(json_object_get(d, "screenshot"));

	return r && (!strcmp(r, "fail") || !strcmp(r, "unk")) && json_is_array(tags) && json_array_size(tags) > 0 &&
	       json_array_size(tags) <= REJUDGE_MAX_TAGS && shot && artefact_name_valid(shot, strlen(shot));
}

static bool array_has_string(const json_t *a, const char *s)
{
	size_t i;
	json_t *v;

	json_array_foreach(a, i, v)
		if (json_is_string(v) && !strcmp(json_string_value(v), s))
			return true;
	return false;
}

static bool asks_any(const json_t *d, const json_t *tags)
{
	size_t i;
	json_t *v;

	json_array_foreach(json_object_get(d, "tags"), i, v)
		if (json_is_string(v) && array_has_string(tags, json_string_value(v)))
			return true;
	return false;
}

/* The lowest similarity (integer percent) of an area list, or null. */
static json_t *lowest(const json_t *areas)
{
	json_int_t min = 1000;
	size_t i;
	json_t *a;

	json_array_foreach(areas, i, a) {
		json_int_t s = json_integer_value(json_object_get(a, "similarity"));
		if (s < min)
			min = s;
	}
	return json_array_size(areas) ? json_integer(min) : json_null();
}

/* What the run recorded: result, near miss, best candidate. */
static json_t *old_json(const json_t *d)
{
	const json_t *best = json_array_get(json_object_get(d, "needles"), 0);

	return json_pack("{s:O,s:b,s:O,s:o}", "result", json_object_get(d, "result"),
			 "needs_review", json_is_true(json_object_get(d, "needs_review")),
			 "needle", best && json_object_get(best, "name") ? json_object_get(best, "name") : json_null(),
			 "similarity", best ? lowest(json_object_get(best, "area")) : json_null());
}

static int add_task(struct rejudge *rj, size_t job, const char *dir, const char *module, size_t k, json_t *d,
		    double since)
{
	struct rejudge_task *t;
	const char *r = json_string_value(json_object_get(d, "result"));
	const char *shot = json_string_value(json_object_get(d, "screenshot"));
	struct stat sb;

	if (rj->ntasks == REJUDGE_MAX_STEPS) {
		rj->truncated = true;
		return 0;
	}
	if (array_grow(&rj->tasks, &rj->tasks_cap, rj->ntasks, sizeof(*rj->tasks), 64))
		return ERR_NOMEM;
	t = &rj->tasks[rj->ntasks];
	memset(t, 0, sizeof(*t));
	t->job = job;
	t->d = d;
	t->since = since;
	t->shot = path_join(dir, shot);
	t->answer = json_pack("{s:s,s:i,s:s,s:s,s:O,s:o}", "module", module, "step", (json_int_t)k + 1,
			      "screenshot", shot, "check", !strcmp(r, "fail") ? "assert_screen" : "check_screen",
			      "tags", json_object_get(d, "tags"), "old", old_json(d));
	if (!t->shot || !t->answer) {
		free(t->shot);
		json_decref(t->answer);
		return ERR_NOMEM;
	}
	if (!stat(t->shot, &sb) && S_ISREG(sb.st_mode)) {
		t->have_file = true;
		t->dev = sb.st_dev;
		t->ino = sb.st_ino;
	}
	rj->ntasks++;
	return 0;
}

int rejudge_add_job(struct rejudge *rj, json_t *info, const char *results_dir, const json_t *modules,
		    const json_t *tags, double since, json_t **asked)
{
	struct rejudge_job *j;
	size_t i, k;
	json_t *m, *d;
	int rc = 0;

	if (asked)
		*asked = NULL;
	if (array_grow(&rj->jobs, &rj->jobs_cap, rj->njobs, sizeof(*rj->jobs), 16)) {
		json_decref(info);
		return ERR_NOMEM;
	}
	j = &rj->jobs[rj->njobs++];
	j->info = info;
	j->modules = json_deep_copy(modules);
	j->results = json_object();
	j->steps = json_array();
	j->failed = json_array();
	if (!j->modules || !j->results || !j->steps || !j->failed || (asked && !(*asked = json_array())))
		return ERR_NOMEM;
	json_array_foreach(j->modules, i, m) {
		const char *name = json_string_value(json_object_get(m, "name"));
		const char *result = json_string_value(json_object_get(m, "result"));
		json_t *res, *last_fail = NULL;
		size_t last_k = 0, last_task = SIZE_MAX;
		if (!name)
			continue;
		if ((rc = load_result(results_dir, name, &res)))
			return rc;
		if (!res)
			continue;
		if (json_object_set_new(j->results, name, res))
			return ERR_NOMEM;
		json_array_foreach(json_object_get(res, "details"), k, d) {
			size_t v;
			json_t *tag;
			if (!failed_check(d))
				continue;
			if (!strcmp(json_string_value(json_object_get(d, "result")), "fail")) {
				last_fail = d;
				last_k = k;
				last_task = SIZE_MAX;
			}
			if (tags && !asks_any(d, tags))
				continue;
			if ((rc = add_task(rj, rj->njobs - 1, results_dir, name, k, d, since)))
				return rc;
			if (last_fail == d && rj->ntasks && rj->tasks[rj->ntasks - 1].d == d)
				last_task = rj->ntasks - 1;
			json_array_foreach(json_object_get(d, "tags"), v, tag)
				if (asked && json_is_string(tag) && !array_has_string(*asked, json_string_value(tag)) &&
				    json_array_append(*asked, tag))
					return ERR_NOMEM;
		}
		/* the check that stopped a failed module (none: it failed otherwise) */
		if (result && !strcmp(result, "failed") &&
		    json_array_append_new(j->failed, json_pack("{s:s,s:I,s:I}", "module", name,
				"step", (json_int_t)(last_fail ? last_k + 1 : 0),
				"task", last_task == SIZE_MAX ? (json_int_t)-1 : (json_int_t)last_task)))
			return ERR_NOMEM;
	}
	return 0;
}

/* ---- judging */

/* Match cand[0..nn) on ms at ratio into res (sorted); *got: how many. */
static int search(struct rejudge *rj, struct match_screen *ms, struct needle **cand, size_t nn, double ratio,
		  struct match_result *res, size_t *got)
{
	size_t i;
	char err[512];

	*got = 0;
	for (i = 0; i < nn; i++) {
		int rc = match_needle_err(ms, cand[i], ratio, 0.0, &res[*got], err, sizeof(err));
		rj->searches++;
		if (rc == ERR_NOMEM)
			return rc;
		if (rc) {
			if (needle_tell_failure(cand[i]))
				log_warn("needle '%s' (%s) could not be matched, left out of every search: %s",
					 cand[i]->name, cand[i]->file, err);
			continue;
		}
		(*got)++;
	}
	match_results_sort(res, *got);
	return 0;
}

static void release_results(struct match_result *res, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		match_result_release(&res[i]);
}

/* Whether needle n's files changed after since (epoch s; 0: unknown, so yes). */
static bool changed_since(const struct needle *n, double since)
{
	struct stat js, ps;

	if (since <= 0 || stat(n->json_path, &js) || stat(n->png_path, &ps))
		return true;
	return (double)js.st_mtim.tv_sec + js.st_mtim.tv_nsec / 1e9 >= since ||
	       (double)ps.st_mtim.tv_sec + ps.st_mtim.tv_nsec / 1e9 >= since;
}

/* As the runner decides on a frame: the margin search, and when it finds
 * nothing the whole screen (the search at a check's deadline), for the
 * needles changed since the job started: the others had that whole-screen
 * search on this very frame in the run and missed. res holds nn results;
 * *got and *full say what was done. */
static int search_as_runner(struct rejudge *rj, struct match_screen *ms, struct needle **cand, size_t nn,
			    double since, struct match_result *res, size_t *got, bool *full)
{
	int rc = search(rj, ms, cand, nn, MATCH_RATIO_MARGIN, res, got);
	size_t i;

	*full = false;
	if (rc || (*got && res[0].ok))
		return rc;
	for (i = 0; i < *got; i++) {
		struct match_result r;
		if (!changed_since(res[i].needle, since))
			continue;
		if ((rc = match_needle(ms, res[i].needle, MATCH_RATIO_FULL, 0.0, &r)) == ERR_NOMEM)
			return rc; /* the margin's results in res, *got of them: released by the caller */
		if (rc)
			continue;
		rj->searches++;
		match_result_release(&res[i]);
		res[i] = r;
		*full = true;
	}
	match_results_sort(res, *got);
	return 0;
}

/* The answer's "new": the best candidate with each match area's figures.
 * NULL when out of memory. */
static json_t *new_json(const struct match_result *best, bool full)
{
	struct jbuild ab = JBUILD_INIT;
	const struct needle *n = best->needle;
	json_t *areas = json_array();
	double min = 1.0;
	size_t i, k = 0;

	for (i = 0; i < n->nareas && k < best->nareas; i++) {
		const struct needle_area *na = &n->areas[i];
		const struct match_area_result *a;
		if (na->type != NEEDLE_AREA_MATCH)
			continue;
		a = &best->areas[k++];
		if (a->similarity < min)
			min = a->similarity;
		if (areas)
			jbuild_append(&ab, areas, json_pack("{s:i,s:i,s:i,s:i,s:I,s:f,s:b}", "x", a->x, "y", a->y,
				"w", a->w, "h", a->h, "similarity", (json_int_t)floor(a->similarity * 100 + 1e-9),
				"required", na->match ? na->match : NEEDLE_DEFAULT_MATCH, "ok", a->ok));
	}
	if (jbuild_failed(&ab)) {
		json_decref(areas);
		return NULL;
	}
	return json_pack("{s:s,s:s,s:I,s:o,s:s}", "result", !best->ok ? "fail" : n->workaround ? "softfail" : "pass",
			 "needle", n->name, "similarity", (json_int_t)floor((k ? min : 0) * 100 + 1e-9),
			 "areas", areas, "search", full ? "whole screen" : "margin");
}

/* Whether a needle of set carries one of the tag expressions (no
 * allocation: needle_set_find's 0 is also its out of memory). */
static bool carried(const struct needle_set *set, const char *const *exprs, size_t n)
{
	size_t i, k;

	for (i = 0; i < set->n; i++)
		for (k = 0; k < n; k++)
			if (needle_match_expr(set->needles[i], exprs[k]))
				return true;
	return false;
}

/* Judge step d on ms: its answer's "new" (new object) or NULL on OOM. */
static json_t *judge(struct rejudge *rj, struct match_screen *ms, const json_t *d, double since)
{
	const json_t *tags = json_object_get(d, "tags");
	const char *exprs[REJUDGE_MAX_TAGS];
	struct needle **cand = NULL;
	struct match_result *res = NULL;
	size_t i, n = 0, nn, got = 0;
	json_t *v, *out = NULL;
	bool full;

	json_array_foreach(tags, i, v)
		if (json_is_string(v) && n < REJUDGE_MAX_TAGS)
			exprs[n++] = json_string_value(v);
	nn = needle_set_find(&rj->needles, exprs, n, &cand);
	if (nn == 0 && carried(&rj->needles, exprs, n))
		return NULL; /* needle_set_find's array could not be allocated */
	if (nn == 0)
		return json_pack("{s:s,s:n,s:n,s:[],s:s}", "result", "fail", "needle", "similarity", "areas",
				 "note", "no needle of the distribution carries these tags");
	res = calloc(nn, sizeof(*res));
	if (res && !search_as_runner(rj, ms, cand, nn, since, res, &got, &full))
		out = got ? new_json(&res[0], full)
			  : json_pack("{s:s,s:n,s:n,s:[],s:s}", "result", "fail", "needle", "similarity", "areas",
				      "note", "no candidate needle could be matched (see the server log)");
	if (res)
		release_results(res, got);
	free(res);
	free(cand);
	return out;
}

static int cmp_task(const void *pa, const void *pb, void *ctx)
{
	const struct rejudge_task *t = ctx, *a = &t[*(const size_t *)pa], *b = &t[*(const size_t *)pb];

	if (a->have_file != b->have_file)
		return a->have_file ? -1 : 1;
	if (a->dev != b->dev)
		return a->dev < b->dev ? -1 : 1;
	if (a->ino != b->ino)
		return a->ino < b->ino ? -1 : 1;
	return *(const size_t *)pa < *(const size_t *)pb ? -1 : 1;
}

static bool same_file(const struct rejudge_task *a, const struct rejudge_task *b)
{
	return a->have_file && b->have_file && a->dev == b->dev && a->ino == b->ino;
}

/* Judge the tasks idx[0..n), which share one screenshot file. */
static int judge_file(struct rejudge *rj, const size_t *idx, size_t n)
{
	struct jbuild ab = JBUILD_INIT;
	struct rejudge_task *first = &rj->tasks[idx[0]];
	struct image *img = NULL;
	struct match_screen *ms = NULL;
	char err[512];
	size_t i, k;
	int rc = 0;

	if (first->have_file && (rc = image_load_png(first->shot, &img, err, sizeof(err))) == ERR_NOMEM)
		return rc;
	rc = 0;
	if (first->have_file && img) {
		rj->decoded++;
		if (!(ms = match_screen_new(img))) {
			rc = ERR_NOMEM;
			goto out;
		}
	}
	for (i = 0; i < n; i++) {
		struct rejudge_task *t = &rj->tasks[idx[i]];
		json_t *nj = NULL;
		if (!ms) {
			jbuild_set(&ab, t->answer, "new", json_null());
			jbuild_set(&ab, t->answer, "would_pass", json_false());
			jbuild_set(&ab, t->answer, "error", json_string(first->have_file ? err
				: "the screenshot is not among the job's files"));
			continue;
		}
		/* the same tags on the same file: the same answer */
		for (k = 0; k < i && !nj; k++) {
			const struct rejudge_task *u = &rj->tasks[idx[k]];
			if (u->since == t->since && json_equal(json_object_get(u->d, "tags"), json_object_get(t->d, "tags")) &&
			    !(nj = json_deep_copy(json_object_get(u->answer, "new")))) {
				rc = ERR_NOMEM;
				goto out;
			}
		}
		if (!nj && !(nj = judge(rj, ms, t->d, t->since))) {
			rc = ERR_NOMEM;
			goto out;
		}
		jbuild_set(&ab, t->answer, "would_pass", json_boolean(strcmp(json_string_value(
			json_object_get(nj, "result")), "fail") != 0));
		jbuild_set(&ab, t->answer, "new", nj);
	}
	if (jbuild_failed(&ab))
		rc = ERR_NOMEM;
out:
	match_screen_free(ms);
	image_free(img);
	return rc;
}

/* "module 'M' step N still fails: best candidate X at 83 % < 96 %" */
static void still_text(const json_t *answer, char *buf, size_t len)
{
	const json_t *nj = json_object_get(answer, "new");
	const json_t *areas = json_object_get(nj, "areas"), *a;
	const char *needle = json_string_value(json_object_get(nj, "needle"));
	size_t i;

	snprintf(buf, len, "module '%s' step %lld still fails",
		 json_string_value(json_object_get(answer, "module")),
		 (long long)json_integer_value(json_object_get(answer, "step")));
	if (!needle) {
		const char *note = json_string_value(json_object_get(nj, "note"));
		if (note)
			snprintf(buf + strlen(buf), len - strlen(buf), ": %s", note);
		return;
	}
	json_array_foreach(areas, i, a)
		if (!json_is_true(json_object_get(a, "ok"))) {
			snprintf(buf + strlen(buf), len - strlen(buf), ": best candidate %s at %lld %% < %g %%", needle,
				 (long long)json_integer_value(json_object_get(a, "similarity")),
				 json_real_value(json_object_get(a, "required")));
			return;
		}
}

/* The job's verdict, honestly: a failed assert_screen stopped its module,
 * so a step that would pass proves only that the run must go on from it. */
static int summarise(struct rejudge *rj, struct rejudge_job *j)
{
	struct jbuild ab = JBUILD_INIT;
	size_t i, pass = 0, still = 0, nf = json_array_size(j->failed);
	const char *verdict = NULL, *first_mod = NULL;
	json_int_t first_step = 0;
	char text[1024] = "";
	json_t *f, *s;

	json_array_foreach(j->steps, i, s) {
		if (json_is_true(json_object_get(s, "would_pass")))
			pass++;
		else
			still++;
	}
	json_array_foreach(j->failed, i, f) {
		json_int_t task = json_integer_value(json_object_get(f, "task"));
		const char *mod = json_string_value(json_object_get(f, "module"));
		const json_t *answer = task >= 0 ? rj->tasks[task].answer : NULL;
		if (!first_mod) {
			first_mod = mod;
			first_step = json_integer_value(json_object_get(f, "step"));
		}
		if (verdict)
			continue;
		if (json_integer_value(json_object_get(f, "step")) == 0) {
			verdict = "other_failure";
			snprintf(text, sizeof(text), "module '%s' failed for another reason than a screen check: "
				 "re-judging cannot change that", mod);
		} else if (!answer) {
			verdict = "still_failing";
			snprintf(text, sizeof(text), "module '%s' failed on a check of other tags, not re-judged here", mod);
		} else if (!json_is_true(json_object_get(answer, "would_pass"))) {
			verdict = "still_failing";
			still_text(answer, text, sizeof(text));
		}
	}
	if (!verdict && nf) {
		verdict = "would_run_on";
		snprintf(text, sizeof(text), "step would pass; the job must run on from here: module '%s' stopped at "
			 "step %lld, so the rest of it and the modules after it have not run on this screen",
			 first_mod, (long long)first_step);
	} else if (!verdict && pass) {
		verdict = "checks_would_match";
		snprintf(text, sizeof(text), "%zu check%s would now match; the test took the no-match way then, so only "
			 "a new run shows what follows", pass, pass == 1 ? "" : "s");
	} else if (!verdict) {
		verdict = still ? "still_failing" : "nothing";
		snprintf(text, sizeof(text), still ? "the re-judged checks still fail"
			 : "no failed screen check of these tags");
	}
	jbuild_set_ref(&ab, j->info, "steps", j->steps);
	jbuild_set(&ab, j->info, "would_pass", json_integer((json_int_t)pass));
	jbuild_set(&ab, j->info, "still_failing", json_integer((json_int_t)still));
	jbuild_set(&ab, j->info, "verdict", json_string(verdict));
	jbuild_set(&ab, j->info, "summary", json_string(text));
	jbuild_set(&ab, j->info, "failed_module", first_mod ? json_string(first_mod) : json_null());
	jbuild_set(&ab, j->info, "failed_step", first_mod ? json_integer(first_step) : json_null());
	return jbuild_failed(&ab) ? ERR_NOMEM : 0;
}

int rejudge_run(struct rejudge *rj, json_t **out)
{
	size_t *idx = NULL, i, start;
	json_t *jobs = NULL;
	int rc = 0;

	*out = NULL;
	if (rj->ntasks && !(idx = malloc(rj->ntasks * sizeof(*idx))))
		return ERR_NOMEM;
	for (i = 0; i < rj->ntasks; i++)
		idx[i] = i;
	if (rj->ntasks)
		qsort_r(idx, rj->ntasks, sizeof(*idx), cmp_task, rj->tasks);
	/* one screenshot file at a time: decoded once, then let go */
	for (start = 0; start < rj->ntasks; start = i) {
		for (i = start + 1; i < rj->ntasks && same_file(&rj->tasks[idx[start]], &rj->tasks[idx[i]]); i++)
			;
		if ((rc = judge_file(rj, idx + start, i - start)))
			goto out;
	}
	for (i = 0; i < rj->ntasks; i++)
		if (json_array_append(rj->jobs[rj->tasks[i].job].steps, rj->tasks[i].answer)) {
			rc = ERR_NOMEM;
			goto out;
		}
	if (!(jobs = json_array())) {
		rc = ERR_NOMEM;
		goto out;
	}
	for (i = 0; i < rj->njobs; i++)
		if ((rc = summarise(rj, &rj->jobs[i])) || (rc = json_array_append(jobs, rj->jobs[i].info) ? ERR_NOMEM : 0))
			goto out;
	*out = json_pack("{s:o,s:{s:I,s:I,s:I,s:I,s:b,s:I}}", "jobs", jobs, "stats", "jobs", (json_int_t)rj->njobs,
			 "steps", (json_int_t)rj->ntasks, "screenshots_decoded", (json_int_t)rj->decoded,
			 "searches", (json_int_t)rj->searches, "truncated", rj->truncated,
			 "broken_needles", (json_int_t)rj->broken_needles);
	jobs = NULL;
	if (!*out)
		rc = ERR_NOMEM;
out:
	json_decref(jobs);
	free(idx);
	return rc;
}

/* ---- the database side */

struct job_row {
	char distri[256], version[256], flavor[256], build[256], state[32], result[32];
	double started;   /* t_started as epoch s, 0 when unknown */
	json_t *info; /* {"id", "test", "machine", "arch", "result", "needs_review"} */
};

/* "YYYY-MM-DDTHH:MM:SS" (UTC) as epoch seconds, 0 when absent or malformed. */
static double epoch(const char *t)
{
	struct tm tm;
	const char *end;

	memset(&tm, 0, sizeof(tm));
	if (!t || !(end = strptime(t, "%Y-%m-%dT%H:%M:%S", &tm)) || *end)
		return 0;
	return (double)timegm(&tm);
}

static int job_row(struct db *db, int64_t id, struct job_row *jr)
{
	struct db_stmt *st = NULL;
	int rc;

	jr->info = NULL;
	rc = db_prepare(db, &st, "SELECT distri, version, flavor, build, state, result, test, machine, arch, needs_review, t_started"
			" FROM jobs WHERE id = ?", "i", id);
	if (rc)
		return rc;
	rc = db_step(st);
	if (rc == 1) {
		snprintf(jr->distri, sizeof(jr->distri), "%s", db_col_text(st, 0));
		snprintf(jr->version, sizeof(jr->version), "%s", db_col_text(st, 1));
		snprintf(jr->flavor, sizeof(jr->flavor), "%s", db_col_text(st, 2));
		snprintf(jr->build, sizeof(jr->build), "%s", db_col_text(st, 3));
		snprintf(jr->state, sizeof(jr->state), "%s", db_col_text(st, 4));
		snprintf(jr->result, sizeof(jr->result), "%s", db_col_text(st, 5));
		jr->started = epoch(db_col_text(st, 10));
		jr->info = json_pack("{s:I,s:s,s:s,s:s,s:s,s:b}", "id", (json_int_t)id, "test", db_col_text(st, 6),
				     "machine", db_col_text(st, 7), "arch", db_col_text(st, 8), "result", jr->result,
				     "needs_review", db_col_int(st, 9) != 0);
		rc = jr->info ? 0 : ERR_NOMEM;
	} else if (rc == 0) {
		rc = ERR_NOT_FOUND;
	}
	db_finalize(st);
	return rc;
}

static int job_distri(struct db *db, int64_t job_id, char *distri, size_t len)
{
	struct job_row jr;
	int rc = job_row(db, job_id, &jr);

	if (rc)
		return rc;
	json_decref(jr.info);
	if (!distri_name_valid(jr.distri))
		return ERR_INVALID;
	snprintf(distri, len, "%s", jr.distri);
	return 0;
}

static json_t *module_row(struct db_stmt *st)
{
	return json_pack("{s:s,s:s}", "name", db_col_text(st, 0), "result", db_col_text(st, 1));
}

/* [{"name", "result"}] of a job's modules in run order. */
static int job_modules(struct db *db, int64_t id, json_t **out)
{
	struct db_stmt *st;

	*out = NULL;
	if (db_prepare(db, &st, "SELECT name, result FROM job_modules WHERE job_id = ? ORDER BY id", "i", id))
		return ERR_IO;
	return jbuild_rows(st, module_row, out);
}

/* Add job id (its row in jr, info taken) with the steps asking tags. */
static int add_from_db(struct rejudge *rj, struct db *db, const char *data_dir, int64_t id, struct job_row *jr,
		       const json_t *tags, json_t **asked)
{
	json_t *modules = NULL;
	char *dir = artefact_path(data_dir, id, NULL);
	int rc = dir ? job_modules(db, id, &modules) : ERR_NOMEM;

	if (!rc)
		rc = rejudge_add_job(rj, jr->info, dir, modules, tags, jr->started, asked);
	else
		json_decref(jr->info);
	jr->info = NULL;
	json_decref(modules);
	free(dir);
	return rc;
}

/* The other finished jobs of the build that failed or need review. */
static int build_jobs(struct db *db, const struct job_row *jr, int64_t except, int64_t **ids, size_t *n)
{
	struct db_stmt *st = NULL;
	int rc;

	*n = 0;
	*ids = calloc(REJUDGE_MAX_JOBS, sizeof(**ids));
	if (!*ids)
		return ERR_NOMEM;
	rc = db_prepare(db, &st, "SELECT id FROM jobs WHERE build = ? AND distri = ? AND version = ? AND flavor = ?"
			" AND state = 'done' AND (result = 'failed' OR needs_review = 1) AND clone_id IS NULL"
			" AND id <> ? ORDER BY id DESC LIMIT ?", "ttttii", jr->build, jr->distri, jr->version,
			jr->flavor, except, (int64_t)REJUDGE_MAX_JOBS - 1);
	while (!rc && (rc = db_step(st)) == 1) {
		(*ids)[(*n)++] = db_col_int(st, 0);
		rc = 0;
	}
	db_finalize(st);
	return rc;
}

static char *needles_dir(const char *data_dir, const char *distri)
{
	char rel[512];

	snprintf(rel, sizeof(rel), "tests/%s/needles", distri);
	return path_join(data_dir, rel);
}

int rejudge_build(struct db *db, const char *data_dir, int64_t job_id, json_t **out, char *msg, size_t msglen)
{
	struct jbuild ab = JBUILD_INIT;
	struct rejudge rj;
	struct job_row jr = { .info = NULL };
	json_t *asked = NULL, *res = NULL;
	int64_t *ids = NULL;
	char *ndir = NULL;
	size_t i, n = 0;
	double t0 = time_mono();
	int rc;

	*out = NULL;
	memset(&rj, 0, sizeof(rj));
	snprintf(msg, msglen, "cannot re-judge job %lld", (long long)job_id);
	if ((rc = job_row(db, job_id, &jr))) {
		if (rc == ERR_NOT_FOUND)
			snprintf(msg, msglen, "job %lld does not exist", (long long)job_id);
		return rc;
	}
	if (strcmp(jr.state, "done")) {
		snprintf(msg, msglen, "job %lld is %s: only a finished job's screenshots can be re-judged",
			 (long long)job_id, jr.state);
		rc = ERR_BADSTATE;
		goto out;
	}
	if (!distri_name_valid(jr.distri)) {
		snprintf(msg, msglen, "job %lld: DISTRI '%s' names no distribution of the server", (long long)job_id,
			 jr.distri);
		rc = ERR_INVALID;
		goto out;
	}
	if (!(ndir = needles_dir(data_dir, jr.distri))) {
		rc = ERR_NOMEM;
		goto out;
	}
	if ((rc = rejudge_init(&rj, ndir, msg, msglen))) {
		/* no memory to read them is not "no needles" (a 404) */
		if (rc != ERR_NOMEM) {
			snprintf(msg, msglen, "the server has no needles for distribution '%s' (DATA/tests/%s/needles): "
				 "re-judging uses them", jr.distri, jr.distri);
			rc = ERR_NOT_FOUND;
		}
		goto out;
	}
	if ((rc = add_from_db(&rj, db, data_dir, job_id, &jr, NULL, &asked)))
		goto out;
	if (json_array_size(asked) && (rc = build_jobs(db, &jr, job_id, &ids, &n)))
		goto out;
	for (i = 0; i < n; i++) {
		struct job_row other = { .info = NULL };
		if ((rc = job_row(db, ids[i], &other)) || (rc = add_from_db(&rj, db, data_dir, ids[i], &other, asked, NULL)))
			goto out;
	}
	if ((rc = rejudge_run(&rj, &res)))
		goto out;
	jbuild_set(&ab, res, "job_id", json_integer(job_id));
	jbuild_set(&ab, res, "build", json_pack("{s:s,s:s,s:s,s:s}", "distri", jr.distri, "version", jr.version,
						   "flavor", jr.flavor, "build", jr.build));
	jbuild_set_ref(&ab, res, "tags", asked);
	jbuild_set(&ab, res, "needles", json_integer((json_int_t)needle_set_count(&rj.needles)));
	jbuild_set(&ab, res, "ms", json_real(floor((time_mono() - t0) * 10000) / 10));
	if (jbuild_failed(&ab)) {
		rc = ERR_NOMEM;
		goto out;
	}
	*out = res;
	res = NULL;
	log_info("job %lld re-judged with %zu other jobs of build '%s': %zu steps, %zu screenshots, %.0f ms",
		 (long long)job_id, n, jr.build, rj.ntasks, rj.decoded, (time_mono() - t0) * 1000);
out:
	if (rc == ERR_NOMEM)
		snprintf(msg, msglen, "out of memory while re-judging job %lld", (long long)job_id);
	json_decref(jr.info);
	json_decref(asked);
	json_decref(res);
	free(ids);
	free(ndir);
	rejudge_release(&rj);
	return rc;
}

/* ---- heat-maps */

/* FNV-1a, 64 bits, of a text: the cache's file names. */
static uint64_t fnv64(const char *s)
{
	uint64_t h = 14695981039346656037ull;

	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 1099511628211ull;
	return h;
}

/* The file a heat-map is cached in: it changes with every file it comes from. */
static char *heatmap_cache(const char *data_dir, int64_t job, const char *shot, const struct needle *n, long area,
			   const struct stat *ss)
{
	struct stat js, ps;
	char key[2048], rel[128];

	if (stat(n->json_path, &js) || stat(n->png_path, &ps))
		return NULL;
	snprintf(key, sizeof(key), "%lld/%s/%s/%ld/%lld.%ld/%lld/%lld.%ld/%lld/%lld/%lld.%ld", (long long)job, shot,
		 n->file, area, (long long)js.st_mtim.tv_sec, js.st_mtim.tv_nsec, (long long)js.st_size,
		 (long long)ps.st_mtim.tv_sec, ps.st_mtim.tv_nsec, (long long)ps.st_size, (long long)ss->st_ino,
		 (long long)ss->st_mtim.tv_sec, ss->st_mtim.tv_nsec);
	snprintf(rel, sizeof(rel), "cache/heatmap/%lld-%ld-%016llx.png", (long long)job, area,
		 (unsigned long long)fnv64(key));
	return path_join(data_dir, rel);
}

/* Draw the heat-map of area k of n on the screenshot at path into file. */
static int heatmap_write(struct rejudge *rj, const char *path, struct needle *n, long k, const char *file,
			 char *msg, size_t msglen)
{
	struct image *img = NULL, *hm = NULL;
	struct match_screen *ms = NULL;
	struct match_result res = { 0 };
	size_t got = 0;
	bool full;
	char *dir = NULL;
	int rc;

	if ((rc = image_load_png(path, &img, msg, msglen)))
		return rc;
	if (!(ms = match_screen_new(img))) {
		rc = ERR_NOMEM;
		goto out;
	}
	if ((rc = search_as_runner(rj, ms, &n, 1, 0, &res, &got, &full)))
		goto out;
	if (!got || (size_t)k >= res.nareas) {
		snprintf(msg, msglen, "needle '%s' has no match area %ld (or its picture cannot be read)", n->name, k);
		rc = ERR_NOT_FOUND;
		goto out;
	}
	if ((rc = heatmap_area(img, n, (size_t)k, res.areas[k].x, res.areas[k].y, &hm, NULL, msg, msglen)))
		goto out;
	dir = path_dir(file);
	if (!dir || (rc = file_mkdir_p(dir, 0700)) || (rc = image_save_png(hm, file)))
		snprintf(msg, msglen, "cannot write the heat-map '%s': %s", file, err_str(rc ? rc : ERR_NOMEM));
	if (!dir && !rc)
		rc = ERR_NOMEM;
out:
	if (got)
		match_result_release(&res);
	match_screen_free(ms);
	image_free(img);
	image_free(hm);
	free(dir);
	return rc;
}

int rejudge_heatmap(struct db *db, const char *data_dir, int64_t job_id, const char *shot, const char *needle,
		    long area, char **path, char *msg, size_t msglen)
{
	struct rejudge rj;
	struct needle *n;
	struct stat ss;
	char distri[256], *ndir = NULL, *spath = NULL, *file = NULL;
	int rc;

	*path = NULL;
	memset(&rj, 0, sizeof(rj));
	if (!artefact_name_valid(shot, strlen(shot)) || !str_ends_with(shot, ".png") ||
	    !artefact_name_valid(needle, strlen(needle)) || area < 0 || area >= NEEDLE_MAX_AREAS) {
		snprintf(msg, msglen, "want a screenshot name (.png), a needle name and an area number");
		return ERR_INVALID;
	}
	if ((rc = job_distri(db, job_id, distri, sizeof(distri)))) {
		snprintf(msg, msglen, rc == ERR_NOT_FOUND ? "job %lld does not exist"
			 : "job %lld has no distribution of the server", (long long)job_id);
		return rc;
	}
	spath = artefact_path(data_dir, job_id, shot);
	ndir = needles_dir(data_dir, distri);
	if (!spath || !ndir) {
		rc = ERR_NOMEM;
		goto out;
	}
	if (stat(spath, &ss) || !S_ISREG(ss.st_mode)) {
		snprintf(msg, msglen, "job %lld has no screenshot '%s'", (long long)job_id, shot);
		rc = ERR_NOT_FOUND;
		goto out;
	}
	if ((rc = rejudge_init(&rj, ndir, msg, msglen)))
		goto out;
	if (!(n = needle_set_get(&rj.needles, needle))) {
		snprintf(msg, msglen, "distribution '%s' has no needle '%s' now", distri, needle);
		rc = ERR_NOT_FOUND;
		goto out;
	}
	if (!(file = heatmap_cache(data_dir, job_id, shot, n, area, &ss))) {
		snprintf(msg, msglen, "needle '%s' cannot be read", needle);
		rc = ERR_NOT_FOUND;
		goto out;
	}
	if (!file_exists(file) && (rc = heatmap_write(&rj, spath, n, area, file, msg, msglen)))
		goto out;
	*path = file;
	file = NULL;
out:
	rejudge_release(&rj);
	free(ndir);
	free(spath);
	free(file);
	return rc;
}
