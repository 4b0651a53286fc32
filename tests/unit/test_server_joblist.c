/* SPDX-License-Identifier: MIT */
/* test_server_joblist.c - the lists without HTTP: keyset pages walked
 * forwards and backwards against a model of the same jobs (every filter,
 * every order, no duplicate, no gap), the statements' plans (one index
 * range each, never a sort of all matches), openQA's limit/offset order,
 * and builds.c's counts and overview. */
#include <stdlib.h>
#include <string.h>
#include "unit.h"
#include "server/store/builds.h"
#include "server/db/db.h"
#include "server/store/joblist.h"
#include "server/store/jobs.h"
#include "util/err.h"

#define NJOBS 240

struct mjob {
	int64_t id, group, clone;
	const char *test, *distri, *version, *flavor, *arch, *build, *machine, *state, *result;
	int review;
};

static struct mjob model[NJOBS];

static const char *pick(const char *const *l, size_t n, unsigned *seed)
{
	*seed = *seed * 1103515245u + 12345u;
	return l[(*seed >> 16) % n];
}

#define PICK(l) pick(l, sizeof(l) / sizeof(l[0]), &seed)

/* NJOBS jobs with a spread of every column; the model mirrors them. */
static struct db *seeded(void)
{
	static const char *const tests[] = { "boot", "zypper", "gnome", "kde", "textmode" };
	static const char *const distris[] = { "opensuse", "SLE" };
	static const char *const versions[] = { "15.5", "Tumbleweed" };
	static const char *const flavors[] = { "DVD", "NET" };
	static const char *const archs[] = { "x86_64", "aarch64" };
	static const char *const builds[] = { "100", "101", "102", "103", "104", "105" };
	static const char *const machines[] = { "64bit", "uefi", "aarch64" };
	static const char *const finals[][2] = { { "done", "passed" },     { "done", "passed" },
						  { "done", "passed" },     { "done", "failed" },
						  { "done", "softfailed" }, { "done", "incomplete" },
						  { "cancelled", "user_cancelled" }, { "running", "none" },
						  { "scheduled", "none" },  { "assigned", "none" } };
	struct db *db = unit_db();
	unsigned seed = 7;
	int64_t g1, g2;
	size_t i;

	CHECK(db_exec(db, "INSERT INTO job_groups (name, t_created) VALUES ('one', 'x'), ('two', 'x')", NULL) == 2);
	CHECK_INT(db_query_int(db, &g1, "SELECT id FROM job_groups WHERE name = 'one'", NULL), 0);
	CHECK_INT(db_query_int(db, &g2, "SELECT id FROM job_groups WHERE name = 'two'", NULL), 0);
	for (i = 0; i < NJOBS; i++) {
		struct mjob *m = &model[i];
		size_t f;
		seed = seed * 1103515245u + 12345u;
		f = (seed >> 16) % 10;
		m->test = PICK(tests);
		m->distri = PICK(distris);
		m->version = PICK(versions);
		m->flavor = PICK(flavors);
		m->arch = PICK(archs);
		m->build = builds[i / 40]; /* builds follow each other, as they do */
		m->machine = PICK(machines);
		m->state = finals[f][0];
		m->result = finals[f][1];
		m->group = i % 3 == 0 ? 0 : i % 3 == 1 ? g1 : g2;
		m->review = !strcmp(m->result, "failed") && i % 2;
		CHECK_INT(db_exec(db, "INSERT INTO jobs (state, result, group_id, test, distri, version, flavor, arch,"
				  " build, machine, needs_review, t_created, t_updated)"
				  " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, '2030-01-01T00:00:00', 'x')",
				  "ttIttttttti", m->state, m->result, m->group, m->test, m->distri, m->version,
				  m->flavor, m->arch, m->build, m->machine, (int64_t)m->review),
			  1);
		m->id = db_last_id(db);
	}
	/* Every 10th job was cloned by the next one. */
	for (i = 0; i + 1 < NJOBS; i += 10) {
		model[i].clone = model[i + 1].id;
		CHECK_INT(db_exec(db, "UPDATE jobs SET clone_id = ? WHERE id = ?", "ii", model[i].clone, model[i].id), 1);
	}
	return db;
}

static bool in_json(const json_t *a, const char *s)
{
	size_t i;
	json_t *v;

	json_array_foreach(a, i, v)
		if (!strcmp(json_string_value(v), s))
			return true;
	return false;
}

static bool matches(const struct mjob *m, const struct joblist_filter *f)
{
	char id[24];

	snprintf(id, sizeof(id), "%lld", (long long)m->id);
	return (!f->build || !strcmp(f->build, m->build)) && (!f->test || !strcmp(f->test, m->test)) &&
	       (!f->distri || !strcasecmp(f->distri, m->distri)) && (!f->version || !strcmp(f->version, m->version)) &&
	       (!f->flavor || !strcmp(f->flavor, m->flavor)) && (!f->arch || !strcmp(f->arch, m->arch)) &&
	       (!f->machine || !strcmp(f->machine, m->machine)) && (!f->group || f->group == m->group) &&
	       (!f->no_group || !m->group) && (!json_array_size(f->states) || in_json(f->states, m->state)) &&
	       (!json_array_size(f->results) || in_json(f->results, m->result)) &&
	       (!json_array_size(f->ids) || in_json(f->ids, id)) && (!f->current || !m->clone) &&
	       (!f->before || m->id < f->before) && (!f->after || m->id > f->after);
}

static enum joblist_sort model_sort;

static int model_cmp(const void *a, const void *b)
{
	const struct mjob *x = a, *y = b;
	int c = model_sort == JOBLIST_SORT_RESULT ? strcmp(x->result, y->result)
		: model_sort == JOBLIST_SORT_TEST ? strcmp(x->test, y->test) : 0;

	return c ? c : x->id < y->id ? 1 : -1;
}

/* The model's ids of f in order sort. */
static size_t expected(const struct joblist_filter *f, enum joblist_sort sort, int64_t *out)
{
	struct mjob m[NJOBS];
	size_t n = 0, i;

	for (i = 0; i < NJOBS; i++)
		if (matches(&model[i], f))
			m[n++] = model[i];
	model_sort = sort;
	qsort(m, n, sizeof(m[0]), model_cmp);
	for (i = 0; i < n; i++)
		out[i] = m[i].id;
	return n;
}

/* Walk every page of f forwards, then backwards from the last; both must
 * give the model's list exactly. */
static void walk(struct db *db, const struct joblist_filter *f, enum joblist_sort sort, long limit)
{
	int64_t want[NJOBS], got[NJOBS + 1], *ids, next, prev, first_prev = 0;
	size_t nwant = expected(f, sort, want), ngot = 0, n, pages = 0, i, back;
	struct joblist_page p = { sort, 0, 0, limit };

	for (;;) {
		CHECK_INT(joblist_page_ids(db, f, &p, &ids, &n, &next, &prev, NULL), 0);
		CHECK((long)n <= limit);
		CHECK(ngot + n <= nwant);
		for (i = 0; i < n; i++)
			got[ngot++] = ids[i];
		CHECK_INT(prev != 0, pages > 0 && n > 0);
		if (!next)
			first_prev = n ? prev : 0;
		free(ids);
		pages++;
		if (!next)
			break;
		CHECK_INT(next, got[ngot - 1]);
		p.next = next;
	}
	CHECK_INT(ngot, nwant);
	for (i = 0; i < nwant; i++)
		if (got[i] != want[i])
			FAIL("sort %d limit %ld: item %zu is job %lld, expected %lld", (int)sort, limit, i,
			     (long long)got[i], (long long)want[i]);
	/* Backwards: each page ends right before the previous page's first job. */
	p.next = 0;
	p.prev = first_prev;
	back = ngot - (nwant ? (nwant - 1) % (size_t)limit + 1 : 0);
	while (p.prev) {
		CHECK_INT(joblist_page_ids(db, f, &p, &ids, &n, &next, &prev, NULL), 0);
		CHECK_INT((long)n, limit); /* a full page, the first one included */
		CHECK(back >= n);
		for (i = 0; i < n; i++)
			CHECK_INT(ids[i], want[back - n + i]);
		back -= n;
		free(ids);
		p.prev = prev;
	}
	CHECK_INT(back, 0);
}

static json_t *strs(const char *a, const char *b)
{
	json_t *j = json_array();

	json_array_append_new(j, json_string(a));
	if (b)
		json_array_append_new(j, json_string(b));
	return j;
}

TEST(server_joblist_keyset_walks)
{
	struct db *db = seeded();
	json_t *finished = strs("done", "cancelled"), *pending = strs("running", "assigned");
	json_t *failed = strs("failed", "incomplete"), *passed = strs("passed", NULL), *ids = json_array();
	enum joblist_sort sorts[] = { JOBLIST_SORT_ID, JOBLIST_SORT_RESULT, JOBLIST_SORT_TEST };
	struct joblist_filter fs[] = {
		{ .build = NULL },
		{ .build = "103" },
		{ .distri = "opensuse" }, /* ignoring case: stored as written */
		{ .distri = "sle" },
		{ .version = "Tumbleweed" },
		{ .flavor = "NET" },
		{ .arch = "aarch64" },
		{ .test = "gnome" },
		{ .machine = "uefi" },
		{ .group = 2 },
		{ .no_group = true },
		{ .states = finished },
		{ .states = pending },
		{ .results = failed },
		{ .results = passed, .distri = "SLE", .arch = "x86_64" },
		{ .states = finished, .results = failed, .version = "15.5" },
		{ .build = "101", .test = "boot", .group = 1 },
		{ .current = true, .states = finished },
		{ .before = 200, .after = 20 },
		{ .ids = ids, .states = finished },
		{ .test = "nothing" },
	};
	long limits[] = { 1, 7, 50, 1000 };
	size_t i, s, l;

	for (i = 5; i < NJOBS; i += 9) {
		char id[24];
		snprintf(id, sizeof(id), "%lld", (long long)model[i].id);
		json_array_append_new(ids, json_string(id));
	}
	for (i = 0; i < sizeof(fs) / sizeof(fs[0]); i++)
		for (s = 0; s < 3; s++)
			for (l = 0; l < 4; l++)
				walk(db, &fs[i], sorts[s], limits[l]);
	json_decref(finished);
	json_decref(pending);
	json_decref(failed);
	json_decref(passed);
	json_decref(ids);
	db_free(db);
}

/* joblist_page_json, the pages' page of jobs, is the API's text page
 * (joblist_page_text) as jansson: the same jobs in the same order, the
 * same cursors, on the first page and from a cursor both ways. */
TEST(server_joblist_page_json)
{
	struct db *db = seeded();
	json_t *finished = strs("done", "cancelled");
	struct joblist_filter fs[] = { { .build = NULL }, { .states = finished }, { .test = "nothing" } };
	size_t i, k;

	for (i = 0; i < sizeof(fs) / sizeof(fs[0]); i++) {
		struct joblist_page p = { JOBLIST_SORT_TEST, 0, 0, 7 };

		for (k = 0; k < 3; k++) {
			struct buf text;
			json_t *want, *got = NULL;

			buf_init(&text, LIMIT_JOBLIST_TEXT);
			CHECK_INT(joblist_page_text(db, &fs[i], &p, &text), 0);
			want = json_loadb(text.data, text.len, 0, NULL);
			buf_release(&text);
			CHECK_INT(joblist_page_json(db, &fs[i], &p, &got), 0);
			CHECK(want && got && json_equal(want, got));
			/* the next page from this one's cursor, then back from that one's */
			p.next = k == 0 ? json_integer_value(json_object_get(got, "next")) : 0;
			p.prev = k == 1 ? json_integer_value(json_object_get(want, "prev")) : 0;
			json_decref(want);
			json_decref(got);
			if (!p.next && !p.prev)
				break;
		}
	}
	json_decref(finished);
	db_free(db);
}

/* The plans of one page's statements: each an index range in list order,
 * none sorting its matches, the driver's index the one named. */
static void plans_of(struct db *db, const struct joblist_filter *f, enum joblist_sort sort, const char *index)
{
	struct joblist_page p = { sort, 0, 0, 25 };
	json_t *plans = json_array(), *v;
	int64_t *ids, next, prev, cursor;
	size_t n, i;

	CHECK_INT(joblist_page_ids(db, f, &p, &ids, &n, &next, &prev, plans), 0);
	cursor = n ? ids[n - 1] : 0;
	free(ids);
	if (cursor) { /* and a page from a cursor, both ways */
		p.next = cursor;
		CHECK_INT(joblist_page_ids(db, f, &p, &ids, &n, &next, &prev, plans), 0);
		free(ids);
		p.next = 0;
		p.prev = cursor;
		CHECK_INT(joblist_page_ids(db, f, &p, &ids, &n, &next, &prev, plans), 0);
		free(ids);
	}
	CHECK(json_array_size(plans) > 0);
	json_array_foreach(plans, i, v) {
		const char *plan = json_string_value(v);
		if (getenv("SHOW_PLANS"))
			fprintf(stderr, "%s\n", plan);
		if (strstr(plan, "TEMP B-TREE"))
			FAIL("'%s' sorts its matches", plan);
		if (index && !strstr(plan, index))
			FAIL("'%s' does not use %s", plan, index);
		if (!index && strncmp(plan, "SCAN jobs", 9) && !strstr(plan, "INTEGER PRIMARY KEY"))
			FAIL("'%s' is not a walk of the table in id order", plan);
	}
	json_decref(plans);
}

TEST(server_joblist_plans)
{
	struct db *db = seeded();
	json_t *finished = strs("done", "cancelled"), *failed = strs("failed", "incomplete");
	struct joblist_filter none = { .build = NULL };

	plans_of(db, &none, JOBLIST_SORT_ID, NULL);
	plans_of(db, &(struct joblist_filter){ .build = "101" }, JOBLIST_SORT_ID, "jobs_list_build (build=?");
	plans_of(db, &(struct joblist_filter){ .distri = "SLE" }, JOBLIST_SORT_ID, "jobs_list_distri (<expr>=?");
	plans_of(db, &(struct joblist_filter){ .version = "15.5" }, JOBLIST_SORT_ID, "jobs_list_version (version=?");
	plans_of(db, &(struct joblist_filter){ .flavor = "DVD" }, JOBLIST_SORT_ID, "jobs_list_flavor (flavor=?");
	plans_of(db, &(struct joblist_filter){ .arch = "x86_64" }, JOBLIST_SORT_ID, "jobs_list_arch (arch=?");
	plans_of(db, &(struct joblist_filter){ .test = "kde" }, JOBLIST_SORT_ID, "jobs_list_test (test=?");
	plans_of(db, &(struct joblist_filter){ .machine = "uefi" }, JOBLIST_SORT_ID, "jobs_list_machine (machine=?");
	plans_of(db, &(struct joblist_filter){ .group = 1 }, JOBLIST_SORT_ID, "jobs_list_group (group_id=?");
	plans_of(db, &(struct joblist_filter){ .states = finished }, JOBLIST_SORT_ID, "jobs_list_state (state=?");
	plans_of(db, &(struct joblist_filter){ .results = failed }, JOBLIST_SORT_ID, "jobs_list_result (result=?");
	/* Two filters: the likelier narrower one drives, the other is checked. */
	plans_of(db, &(struct joblist_filter){ .states = finished, .results = failed, .distri = "SLE" }, JOBLIST_SORT_ID,
		 "jobs_list_result (result=?");
	plans_of(db, &none, JOBLIST_SORT_RESULT, "jobs_list_result");
	plans_of(db, &(struct joblist_filter){ .results = failed, .states = finished }, JOBLIST_SORT_RESULT,
		 "jobs_list_result (result=?");
	plans_of(db, &none, JOBLIST_SORT_TEST, "jobs_list_test");
	plans_of(db, &(struct joblist_filter){ .test = "boot", .build = "101" }, JOBLIST_SORT_TEST,
		 "jobs_list_test (test=?");
	json_decref(finished);
	json_decref(failed);
	db_free(db);
}

TEST(server_joblist_openqa_order)
{
	struct db *db = seeded();
	json_t *a, *finished = strs("done", "cancelled");
	struct joblist_filter f = { .states = finished };
	int64_t want[NJOBS];
	size_t n = expected(&f, JOBLIST_SORT_ID, want);

	/* The newest 5 after skipping 3, listed oldest first. */
	CHECK_INT(joblist_openqa(db, &f, 5, 3, false, &a), 0);
	CHECK_INT(json_array_size(a), 5);
	CHECK_INT(json_integer_value(json_object_get(json_array_get(a, 0), "id")), want[7]);
	CHECK_INT(json_integer_value(json_object_get(json_array_get(a, 4), "id")), want[3]);
	CHECK(json_is_array(json_object_get(json_array_get(a, 0), "modules")));
	json_decref(a);
	CHECK_INT(joblist_openqa(db, &f, 1000, (long)n, false, &a), 0);
	CHECK_INT(json_array_size(a), 0);
	json_decref(a);
	/* latest: one job per scenario, the newest. */
	CHECK_INT(joblist_openqa(db, &(struct joblist_filter){ .build = "100", .test = "boot" }, 1000, 0, true, &a), 0);
	CHECK(json_array_size(a) >= 1);
	json_decref(a);
	json_decref(finished);
	db_free(db);
}

/* The model's counts of build b of group g (openQA's categories). */
static void model_counts(int64_t g, const char *b, int c[6])
{
	size_t i, k;

	memset(c, 0, 6 * sizeof(int));
	for (i = 0; i < NJOBS; i++) {
		const struct mjob *m = &model[i];
		bool newest = true;
		if (m->group != g || strcmp(m->build, b) || m->clone)
			continue;
		for (k = 0; k < NJOBS; k++) /* the newest not cloned job of its scenario */
			if (model[k].id > m->id && model[k].group == g && !strcmp(model[k].build, b) && !model[k].clone &&
			    !strcmp(model[k].version, m->version) && !strcmp(model[k].test, m->test) &&
			    !strcmp(model[k].arch, m->arch) && !strcmp(model[k].flavor, m->flavor) &&
			    !strcmp(model[k].machine, m->machine))
				newest = false;
		if (!newest)
			continue;
		c[0]++;
		if (!strcmp(m->result, "passed"))
			c[1]++;
		if (!strcmp(m->result, "failed") || !strcmp(m->result, "incomplete"))
			c[2]++;
		if (m->review)
			c[3]++;
		if (!strcmp(m->state, "running") || !strcmp(m->state, "assigned"))
			c[4]++;
		if (!strcmp(m->state, "scheduled"))
			c[5]++;
	}
}

TEST(server_builds_counts)
{
	struct db *db = seeded();
	json_t *r, *plans = json_array(), *b, *v;
	size_t i;
	int c[6];

	CHECK_INT(builds_group(db, 999, 10, 0, &r, NULL), ERR_NOT_FOUND);
	CHECK_INT(builds_group(db, 2, 3, 0, &r, plans), 0);
	CHECK_STR(json_string_value(json_object_get(json_object_get(r, "group"), "name")), "two");
	b = json_object_get(r, "build_results");
	CHECK_INT(json_array_size(b), 3); /* two versions of each build: 105 and 104 */
	CHECK_STR(json_string_value(json_object_get(json_array_get(b, 0), "build")), "105");
	{
		/* The model counts a build's versions together: sum them. */
		const char *bn = json_string_value(json_object_get(json_array_get(b, 0), "build"));
		json_int_t total = 0, passed = 0, failed = 0, review = 0, running = 0, scheduled = 0;
		CHECK_INT(builds_group(db, 2, 400, 0, &v, NULL), 0);
		json_array_foreach(json_object_get(v, "build_results"), i, b) {
			if (strcmp(json_string_value(json_object_get(b, "build")), bn))
				continue;
			total += json_integer_value(json_object_get(b, "total"));
			passed += json_integer_value(json_object_get(b, "passed"));
			failed += json_integer_value(json_object_get(b, "failed"));
			review += json_integer_value(json_object_get(b, "needs_review"));
			running += json_integer_value(json_object_get(b, "running"));
			scheduled += json_integer_value(json_object_get(b, "scheduled"));
			CHECK_INT(json_integer_value(json_object_get(b, "unfinished")),
				  json_integer_value(json_object_get(b, "running")) +
					  json_integer_value(json_object_get(b, "scheduled")));
		}
		model_counts(2, bn, c);
		CHECK_INT(total, c[0]);
		CHECK_INT(passed, c[1]);
		CHECK_INT(failed, c[2]);
		CHECK_INT(review, c[3]);
		CHECK_INT(running, c[4]);
		CHECK_INT(scheduled, c[5]);
		CHECK(total > 0 && review > 0);
		json_decref(v);
	}
	json_array_foreach(plans, i, v)
		if (strstr(json_string_value(v), "SCAN"))
			FAIL("'%s' scans", json_string_value(v));
	json_decref(r);
	json_decref(plans);
	/* The dashboard: both groups (the jobs are in the future, so within 14 days). */
	CHECK_INT(builds_dashboard(db, 2, 14, &r), 0);
	CHECK_INT(json_array_size(json_object_get(r, "results")), 2);
	json_decref(r);
	db_free(db);
}

TEST(server_builds_overview)
{
	struct db *db = seeded();
	struct builds_overview_q q = { .build = "102", .version = "15.5", .group = 1 };
	json_t *a, *j, *plans = json_array();
	size_t i, k, want = 0;

	CHECK_INT(builds_overview(db, &q, &a, plans), 0);
	for (i = 0; i < NJOBS; i++) {
		bool newest = model[i].group == 1 && !strcmp(model[i].build, "102") && !strcmp(model[i].version, "15.5");
		for (k = i + 1; newest && k < NJOBS; k++)
			if (model[k].group == 1 && !strcmp(model[k].build, "102") && !strcmp(model[k].version, "15.5") &&
			    !strcmp(model[k].distri, model[i].distri) && !strcmp(model[k].flavor, model[i].flavor) &&
			    !strcmp(model[k].arch, model[i].arch) && !strcmp(model[k].test, model[i].test) &&
			    !strcmp(model[k].machine, model[i].machine))
				newest = false;
		want += newest;
	}
	CHECK_INT(json_array_size(a), want);
	json_array_foreach(a, i, j) {
		CHECK_STR(json_string_value(json_object_get(j, "build")), "102");
		CHECK(strstr(json_string_value(json_object_get(j, "name")), "-Build102-") != NULL);
	}
	json_decref(a);
	/* No build: the newest build matching the rest. */
	q.build = NULL;
	CHECK_INT(builds_overview(db, &q, &a, plans), 0);
	CHECK_STR(json_string_value(json_object_get(json_array_get(a, 0), "build")), "105");
	json_decref(a);
	json_array_foreach(plans, i, j)
		if (strstr(json_string_value(j), "SCAN jobs"))
			FAIL("'%s' scans the jobs", json_string_value(j));
	json_decref(plans);
	db_free(db);
}

TEST(server_jobs_needs_review)
{
	struct db *db = seeded();
	json_t *j;
	size_t failed = 0, passed = 0, i;

	for (i = 0; i < NJOBS && (!failed || !passed); i++) {
		if (!strcmp(model[i].result, "failed") && !model[i].review)
			failed = i + 1;
		if (!strcmp(model[i].result, "passed"))
			passed = i + 1;
	}
	CHECK(failed && passed);
	CHECK_INT(jobs_to_json(db, model[failed - 1].id, false, &j), 0);
	CHECK(json_object_get(j, "needs_review") == NULL);
	json_decref(j);
	CHECK_INT(jobs_set_needs_review(db, model[failed - 1].id), 0);
	CHECK_INT(jobs_to_json(db, model[failed - 1].id, false, &j), 0);
	CHECK(json_is_true(json_object_get(j, "needs_review")));
	json_decref(j);
	/* Only a failed job needs review. */
	CHECK_INT(jobs_set_needs_review(db, model[passed - 1].id), 0);
	CHECK_INT(jobs_to_json(db, model[passed - 1].id, false, &j), 0);
	CHECK(json_object_get(j, "needs_review") == NULL);
	json_decref(j);
	db_free(db);
}
