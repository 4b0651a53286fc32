/* SPDX-License-Identifier: MIT */
/* test_nomem.c - the out-of-memory policy (docs/hardening.md): for every
 * N until the call succeeds, the Nth allocation of a parser fails
 * (alloc_fail.h); the parser returns ERR_NOMEM, crashes nowhere and leaks
 * nothing (LeakSanitizer checks each test's process under SAN=1). Needle
 * JSON, form/query parameters, job group YAML, QMP messages and the
 * signature headers; and the server's handlers that build JSON (a job
 * posted, a job shown with its details, jobs listed with filters, the
 * lists of job groups, job templates, machines, workers, assets and the
 * groups' YAML, a product scheduled, a job group's build results and the
 * dashboard's, a failed job's investigation, the cleanup's plan, a
 * rejudge; the paths that used str_dup: job group YAML shown and
 * replaced, a product posted without a required parameter, a job's
 * worker classes joined), which must answer whole or 503, never 200 with
 * a part missing, and store nothing when they answer 503; a bug
 * reference carried over whole or not at all; and the scheduler's pick
 * (a job's classes all read, or ERR_NOMEM and nothing assigned). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include "unit.h"
#include "alloc_fail.h"
#include "image/image.h"
#include "image/needle.h"
#include "net/hmac.h"
#include "server/http/api.h"
#include "server/store/auth.h"
#include "server/store/comments.h"
#include "server/store/jobs.h"
#include "server/store/review.h"
#include "server/db/db.h"
#include "server/server.h"
#include "server/store/jt_yaml.h"
#include "server/sched/sched.h"
#include "server/store/workers.h"
#include "util/err.h"
#include "util/file.h"
#include "util/log.h"
#include "util/oom.h"
#include "util/time.h"
#include "vm/qmp.h"

/* Run call with the 1st, 2nd, ... allocation failing until one run makes
 * no allocation fail; each failed run must return ERR_NOMEM, the last 0.
 * A call checks its whole result and returns 0 only when it is complete:
 * a failed run may also return 0 where a library (jansson's dump)
 * recovered from the failure by itself. The number of runs. */
static long every_n(const char *what, int (*call)(void))
{
	long n;

	for (n = 1; n < 200000; n++) {
		int rc;
		bool fired;

		alloc_fail_arm(n);
		rc = call();
		fired = alloc_fail_disarm();
		if (!fired) {
			if (getenv("VIGIL_ALLOC_FAIL_TRACE"))
				fprintf(stderr, "%s: %ld runs\n", what, n);
			if (rc != 0)
				FAIL("%s: no allocation failed, yet %d (%s)", what, rc, err_str(rc));
			return n;
		}
		if (rc != ERR_NOMEM && rc != 0)
			FAIL("%s: allocation %ld failed: %d (%s), expected ERR_NOMEM", what, n, rc, err_str(rc));
	}
	FAIL("%s: still allocating after %ld runs", what, n);
	return n;
}

static int needle_call(void)
{
	static const char json[] =
		"{\"tags\": [\"grub-menu\", \"ENV-X\"], \"properties\": [\"workaround\"],"
		" \"area\": [{\"xpos\": 1, \"ypos\": 2, \"width\": 30, \"height\": 40, \"type\": \"match\", \"match\": 95},"
		" {\"xpos\": 5, \"ypos\": 5, \"width\": 3, \"height\": 4, \"type\": \"exclude\"},"
		" {\"xpos\": 7, \"ypos\": 8, \"width\": 9, \"height\": 10, \"type\": \"ocr\"}]}";
	struct needle *n = NULL;
	char err[256];
	int rc = needle_parse(json, strlen(json), "sub/x.json", &n, err, sizeof(err));

	if (!rc && (n->ntags != 2 || n->nareas != 3 || strcmp(n->tags[1], "ENV-X")))
		rc = ERR_INVALID;
	needle_free(n);
	return rc;
}

static int params_call(void)
{
	static const char q[] = "DISTRI=grub&VERSION=1&TEST=a+b&BUILD=%C3%A9t%C3%A9&EMPTY=&K%20Y=v%2Bw&_GROUP=x";
	struct params p;
	char msg[256];
	int rc;

	params_init(&p);
	rc = params_parse(&p, q, strlen(q), msg, sizeof(msg));
	if (!rc && (p.n != 7 || strcmp(params_get(&p, "K Y"), "v+w") || strcmp(params_get(&p, "TEST"), "a b")))
		rc = ERR_INVALID;
	params_release(&p);
	return rc;
}

static int yaml_call(void)
{
	static const char doc[] =
		"products:\n"
		"  p:\n"
		"    distri: sle\n"
		"    flavor: DVD\n"
		"    version: '15'\n"
		".common: &common\n"
		"  FOO: '1'\n"
		"defaults:\n"
		"  x86_64:\n"
		"    machine: 64bit\n"
		"    priority: 40\n"
		"    settings:\n"
		"      <<: *common\n"
		"scenarios:\n"
		"  x86_64:\n"
		"    p:\n"
		"      - textmode\n"
		"      - gnome:\n"
		"          machine: [uefi, 64bit]\n"
		"          settings: {BAR: c}\n";
	struct jt_list l;
	char err[512];
	int rc;

	jt_list_init(&l);
	rc = jt_yaml_parse(doc, strlen(doc), &l, err, sizeof(err));
	/* textmode on 64bit, gnome on uefi and 64bit, each with FOO; gnome with BAR too */
	if (!rc && (l.n != 3 || !l.v[0].settings || !json_object_get(l.v[0].settings, "FOO") ||
		    !json_object_get(l.v[2].settings, "BAR") || strcmp(l.v[1].machine, "uefi")))
		rc = ERR_INVALID;
	jt_list_release(&l);
	return rc;
}

/* QEMU's side written ahead into the socket: greeting, the answer to
 * qmp_capabilities, an event, the answer to query-status. */
static int qmp_call(void)
{
	static const char peer[] =
		"{\"QMP\": {\"version\": {\"qemu\": {\"major\": 7}}, \"capabilities\": [\"oob\"]}}\r\n"
		"{\"return\": {}}\r\n"
		"{\"event\": \"RESUME\", \"timestamp\": {\"seconds\": 1, \"microseconds\": 2}}\r\n"
		"{\"return\": {\"status\": \"running\", \"running\": true}}\r\n";
	struct qmp *q = NULL;
	char err[256], status[32];
	int sv[2], rc;

	CHECK_INT(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	CHECK_INT(write(sv[1], peer, strlen(peer)), (long)strlen(peer));
	rc = qmp_connect_fd(sv[0], &q, err, sizeof(err)); /* takes sv[0] */
	if (!rc)
		rc = qmp_query_status(q, status, sizeof(status), err, sizeof(err));
	if (!rc && strcmp(status, "running"))
		rc = ERR_INVALID;
	qmp_close(q);
	close(sv[1]);
	return rc;
}

static int auth_call(void)
{
	char msg[256], sha[HMAC2_HEX_LEN + 1] = "", sig[HMAC2_HEX_LEN + 1] = "";
	int rc;

	/* A legacy signature (openQA's vector, as the server checks it), then
	 * scheme 2's body hash and signature. */
	rc = auth_verify("1234567890ABCDEF", "/api/v1/jobs?state=done&limit=2", "1712345678",
			 "7212112d6b72e39c00543e946028ddc131c23fd6", 1712345678.0, msg, sizeof(msg));
	if (!rc)
		rc = hmac_sha256_hex("x", 1, sha);
	if (!rc)
		rc = hmac2_sign("S", "POST", "/api/v1/jobs", "1712345678", "00112233445566778899aabbccddeeff", sha, sig);
	return rc;
}

TEST(nomem_needle_parse)
{
	CHECK(every_n("needle_parse", needle_call) > 1);
}

TEST(nomem_params_parse)
{
	CHECK(every_n("params_parse", params_call) > 1);
}

TEST(nomem_jt_yaml_parse)
{
	CHECK(every_n("jt_yaml_parse", yaml_call) > 1);
}

TEST(nomem_qmp_messages)
{
	CHECK(every_n("qmp", qmp_call) > 1);
}

TEST(nomem_auth_headers)
{
	CHECK(every_n("auth", auth_call) > 1);
}

/* --- the server's handlers, called as server.c calls them */

static struct db *h_db;

static const struct api_route *route(const char *method, const char *pattern)
{
	const struct api_route *r;
	size_t i;

	for (i = 0; (r = api_route_at(i)); i++)
		if (!strcmp(r->method, method) && !strcmp(r->pattern, pattern))
			return r;
	FAIL("no route %s %s", method, pattern);
	return NULL;
}

static long jobs_count(void)
{
	int64_t n = -1;

	CHECK_INT(db_query_int(h_db, &n, "SELECT count(*) FROM jobs", ""), 0);
	return (long)n;
}

/* Call the handler of method/pattern on query (form parameters) for
 * job id as server.c does: 0 and its answer in *out (the caller frees
 * out->text and out->json), or params_parse's error. */
static int call_route(const char *method, const char *pattern, const char *query, int64_t id, struct api_resp *out)
{
	const struct api_route *r = route(method, pattern);
	struct api_req req = { 0 };
	char msg[256];
	int rc;

	memset(out, 0, sizeof(*out));
	req.db = h_db;
	req.method = method;
	req.path = pattern;
	req.target = pattern;
	req.id = id;
	req.arg = r->arg;
	req.level = AUTH_ADMIN;
	req.data_dir = unit_tmpdir();
	params_init(&req.params);
	if ((rc = params_parse(&req.params, query, strlen(query), msg, sizeof(msg)))) {
		params_release(&req.params);
		return rc;
	}
	r->fn(&req, out);
	params_release(&req.params);
	return 0;
}

/* Call the handler of method/pattern on query (form parameters) for
 * job id: 0 when it answered 200 (the answer in *j), ERR_NOMEM when 503,
 * ERR_INVALID for any other answer. */
static int handle(const char *method, const char *pattern, const char *query, int64_t id, json_t **j)
{
	struct api_resp out;
	int rc = call_route(method, pattern, query, id, &out);

	if (rc)
		return rc;
	if (out.status == 200 && !out.json && out.text) /* an answer written as JSON text (the job list) */
		out.json = oom_json_loadb_trusted(out.text, strlen(out.text), NULL);
	rc = out.status == 200 && out.json ? 0 : out.status == 503 ? ERR_NOMEM : ERR_INVALID;
	if (rc == ERR_INVALID)
		fprintf(stderr, "%s %s: answered %d\n", method, pattern, out.status);
	*j = rc ? NULL : json_incref(out.json);
	json_decref(out.json);
	free(out.text);
	return rc;
}

/* POST /api/v1/jobs with the nth allocation failing, for every n: a job
 * whole with its settings (200), or 503 and no job stored. The runs. */
static long job_post_every_n(void)
{
	long n;

	for (n = 1; n < 200000; n++) {
		long before = jobs_count(), after;
		json_t *j = NULL;
		bool fired;
		int rc;

		alloc_fail_arm(n);
		rc = handle("POST", "/api/v1/jobs", "DISTRI=d&VERSION=1&FLAVOR=f&ARCH=x86_64&TEST=t&BUILD=7&FOO=bar&B=%25FOO%25",
			    0, &j);
		fired = alloc_fail_disarm();
		after = jobs_count();
		json_decref(j);
		if (rc == ERR_NOMEM && after != before)
			FAIL("POST /api/v1/jobs: allocation %ld failed: answered 503 but stored a job", n);
		if (rc == 0 && after != before + 1)
			FAIL("POST /api/v1/jobs: allocation %ld failed: answered 200 but stored %ld jobs", n, after - before);
		if (rc != 0 && rc != ERR_NOMEM)
			FAIL("POST /api/v1/jobs: allocation %ld failed: %d (%s), expected 200 or 503", n, rc, err_str(rc));
		if (!fired) {
			if (rc)
				FAIL("POST /api/v1/jobs: no allocation failed, yet %d", rc);
			if (getenv("VIGIL_ALLOC_FAIL_TRACE"))
				fprintf(stderr, "POST /api/v1/jobs: %ld runs\n", n);
			return n;
		}
	}
	FAIL("POST /api/v1/jobs: still allocating after %ld runs", n);
	return n;
}

/* GET /api/v1/jobs/1/details: every part there, or 503. */
static int job_details_call(void)
{
	static const char *const parts[] = { "id", "settings", "modules", "testresults", "logs", "screenshots", "ulogs",
					     "missing_assets" };
	json_t *j = NULL, *job, *settings;
	size_t i;
	int rc = handle("GET", "/api/v1/jobs/#/details", "check_assets=1", 1, &j);

	job = json_object_get(j, "job");
	for (i = 0; !rc && i < sizeof(parts) / sizeof(parts[0]); i++)
		if (!json_object_get(job, parts[i])) {
			fprintf(stderr, "details: no '%s'\n", parts[i]);
			rc = ERR_INVALID;
		}
	/* B=%FOO% expanded when the job was stored */
	settings = json_object_get(job, "settings");
	if (!rc && !json_equal(json_object_get(settings, "B"), json_object_get(settings, "FOO"))) {
		fprintf(stderr, "details: B '%s', FOO '%s'\n", json_string_value(json_object_get(settings, "B")),
			json_string_value(json_object_get(settings, "FOO")));
		rc = ERR_INVALID;
	}

	json_decref(j);
	return rc;
}

/* GET /api/v1/jobs?ids=1,999&state=scheduled: the filters whole (a lost
 * id or state would list other jobs), or 503. */
static int jobs_list_call(void)
{
	json_t *j = NULL, *jobs;
	int rc = handle("GET", "/api/v1/jobs", "ids=1,999&state=scheduled,done&result=none", 0, &j);

	jobs = json_object_get(j, "jobs");
	if (!rc && (json_array_size(jobs) != 1 || json_integer_value(json_object_get(json_array_get(jobs, 0), "id")) != 1))
		rc = ERR_INVALID;
	json_decref(j);
	return rc;
}

/* A read-only handler: its whole answer (taken once with no allocation
 * failing) or 503, for every failing allocation. */
static const char *w_method, *w_pattern, *w_query;
static int64_t w_id;
static json_t *w_ref;

static int whole_call(void)
{
	json_t *j = NULL;
	int rc = handle(w_method, w_pattern, w_query, w_id, &j);

	if (!rc && !json_equal(j, w_ref)) {
		char *got = json_dumps(j, JSON_COMPACT), *want = json_dumps(w_ref, JSON_COMPACT);
		fprintf(stderr, "%s %s: answered 200 with\n  %s\nnot\n  %s\n", w_method, w_pattern, got ? got : "?",
			want ? want : "?");
		free(got);
		free(want);
		rc = ERR_INVALID;
	}
	json_decref(j);
	return rc;
}

/* The runs of whole_call on method/pattern; check (may be NULL) looks at
 * the reference answer first (a part the test relies on is there). */
static long whole_every_n(const char *method, const char *pattern, const char *query, int64_t id,
			  bool (*check)(const json_t *ref))
{
	char what[128];
	long n;

	w_method = method;
	w_pattern = pattern;
	w_query = query;
	w_id = id;
	w_ref = NULL;
	CHECK_INT(handle(method, pattern, query, id, &w_ref), 0);
	if (check && !check(w_ref)) {
		char *t = json_dumps(w_ref, JSON_COMPACT);
		FAIL("%s %s: unexpected answer %s", method, pattern, t ? t : "?");
		free(t);
	}
	snprintf(what, sizeof(what), "%s %s", method, pattern);
	n = every_n(what, whole_call);
	json_decref(w_ref);
	w_ref = NULL;
	return n;
}

/* Rows every list below shows: a group with two templates (the second
 * chained after the first), settings on the tables' rows and a template,
 * a worker keeping job 1's disks, an asset job 1 uses. */
static void seed_tables(void)
{
	static const char *const sql[] = {
		"INSERT INTO job_groups (name, description, t_created) VALUES ('grp', 'the group', '2026-01-01T00:00:00')",
		"INSERT INTO products (distri, version, flavor, arch) VALUES ('sle', '15', 'DVD', 'x86_64')",
		"INSERT INTO machines (name, backend) VALUES ('64bit', 'qemu')",
		"INSERT INTO test_suites (name, description) VALUES ('textmode', 'tm'), ('gnome', 'gn')",
		"INSERT INTO table_settings (kind, owner_id, key, value) VALUES"
		" ('machine', (SELECT id FROM machines WHERE name = '64bit'), 'QEMUCPU', 'host'),"
		" ('machine', (SELECT id FROM machines WHERE name = '64bit'), 'QEMURAM', '2048'),"
		" ('product', (SELECT id FROM products WHERE distri = 'sle'), 'PFOO', 'p'),"
		" ('test_suite', (SELECT id FROM test_suites WHERE name = 'gnome'), 'DESKTOP', 'gnome')",
		"INSERT INTO job_templates (product_id, machine_id, test_suite_id, group_id, prio, t_created)"
		" SELECT p.id, m.id, t.id, g.id, CASE t.name WHEN 'textmode' THEN 40 END, '2026-01-01T00:00:00'"
		" FROM products p, machines m, test_suites t, job_groups g WHERE g.name = 'grp'",
		"INSERT INTO job_template_settings (job_template_id, key, value) SELECT jt.id, 'START_AFTER_TEST',"
		" 'textmode' FROM job_templates jt JOIN test_suites t ON t.id = jt.test_suite_id WHERE t.name = 'gnome'",
		"INSERT INTO workers (host, instance, worker_class, t_seen, t_created) VALUES ('w1', 1, 'qemu_x86_64',"
		" '2026-01-01T00:00:00', '2026-01-01T00:00:00'), ('w1', 2, 'qemu_x86_64', NULL, '2026-01-01T00:00:00')",
		"INSERT INTO worker_snapshots (worker_id, job_id) SELECT id, 1 FROM workers",
		"INSERT INTO assets (type, name, size, t_created, t_updated) VALUES ('iso', 'a.iso', 7,"
		" '2026-01-01T00:00:00', '2026-01-01T00:00:00'), ('hdd', 'b.qcow2', NULL, '2026-01-01T00:00:00',"
		" '2026-01-01T00:00:00')",
		"INSERT INTO job_settings (job_id, key, value) VALUES (1, 'ISO', 'a.iso')",
	};
	size_t i;

	for (i = 0; i < sizeof(sql) / sizeof(sql[0]); i++)
		CHECK(db_exec(h_db, sql[i], "") >= 0);
}

static bool two_rows(const json_t *ref, const char *key)
{
	return json_array_size(json_object_get(ref, key)) == 2;
}

static bool groups_ok(const json_t *ref)
{
	return json_array_size(ref) >= 1;
}

static bool templates_ok(const json_t *ref)
{
	return two_rows(ref, "JobTemplates");
}

static bool workers_ok(const json_t *ref)
{
	const json_t *w = json_array_get(json_object_get(ref, "workers"), 0);
	return two_rows(ref, "workers") && json_array_size(json_object_get(w, "snapshots")) == 1;
}

static bool assets_ok(const json_t *ref)
{
	const json_t *a = json_array_get(json_object_get(ref, "assets"), 0);
	return two_rows(ref, "assets") && json_integer_value(json_object_get(a, "jobs")) == 1;
}

static bool machines_ok(const json_t *ref)
{
	const json_t *m = json_array_get(json_object_get(ref, "Machines"), 0);
	return json_array_size(json_object_get(m, "settings")) == 2;
}

static bool yaml_ok(const json_t *ref)
{
	const char *grp = json_string_value(json_object_get(ref, "grp"));
	return grp && strstr(grp, "START_AFTER_TEST") && strstr(grp, "textmode");
}

static long rows_of(const char *table)
{
	char sql[96];
	int64_t n = -1;

	snprintf(sql, sizeof(sql), "SELECT count(*) FROM %s", table);
	CHECK_INT(db_query_int(h_db, &n, sql, ""), 0);
	return (long)n;
}

/* POST /api/v1/isos with the nth allocation failing, for every n: the
 * product scheduled whole (two jobs, the second chained after the first),
 * or 503 and nothing stored. The runs. */
static long isos_post_every_n(void)
{
	static const char *const tables[] = { "scheduled_products", "jobs", "job_settings", "job_dependencies" };
	long n;
	size_t t;

	for (n = 1; n < 200000; n++) {
		long before[4], after[4];
		json_t *j = NULL;
		bool fired;
		int rc;

		for (t = 0; t < 4; t++)
			before[t] = rows_of(tables[t]);
		alloc_fail_arm(n);
		rc = handle("POST", "/api/v1/isos", "DISTRI=sle&VERSION=15&FLAVOR=DVD&ARCH=x86_64&BUILD=9&ISO=a.iso", 0, &j);
		fired = alloc_fail_disarm();
		for (t = 0; t < 4; t++)
			after[t] = rows_of(tables[t]);
		if (rc == 0 && (json_integer_value(json_object_get(j, "count")) != 2 ||
				json_array_size(json_object_get(j, "failed")) != 0))
			FAIL("POST /api/v1/isos: allocation %ld failed: answered 200 without both jobs", n);
		json_decref(j);
		for (t = 0; t < 4; t++) {
			if (rc == ERR_NOMEM && after[t] != before[t])
				FAIL("POST /api/v1/isos: allocation %ld failed: answered 503 but stored %ld %s", n,
				     after[t] - before[t], tables[t]);
			if (rc == 0 && after[t] == before[t])
				FAIL("POST /api/v1/isos: allocation %ld failed: answered 200 without %s", n, tables[t]);
		}
		if (rc == 0 && after[3] != before[3] + 1)
			FAIL("POST /api/v1/isos: allocation %ld failed: %ld dependencies", n, after[3] - before[3]);
		if (rc != 0 && rc != ERR_NOMEM)
			FAIL("POST /api/v1/isos: allocation %ld failed: %d (%s), expected 200 or 503", n, rc, err_str(rc));
		if (!fired) {
			if (rc)
				FAIL("POST /api/v1/isos: no allocation failed, yet %d", rc);
			if (getenv("VIGIL_ALLOC_FAIL_TRACE"))
				fprintf(stderr, "POST /api/v1/isos: %ld runs\n", n);
			return n;
		}
	}
	FAIL("POST /api/v1/isos: still allocating after %ld runs", n);
	return n;
}

/* Job 3 failed where job 2 of its scenario passed: their result files
 * (short strings: jansson's parser is left whole only where its string
 * buffer never grows, akheron/jansson#362), job 3 in group 1, whose
 * comment tags its build important, job 2 in group 2 (results and logs
 * kept a day), a bug reference on job 3, two assets (one named by job 3,
 * one by none). */
static void write_result(int64_t id, const char *name, const char *text)
{
	char rel[64], *path;

	snprintf(rel, sizeof(rel), "testresults/%lld/%s", (long long)id, name);
	CHECK((path = malloc(strlen(unit_tmpdir()) + strlen(rel) + 2)) != NULL);
	sprintf(path, "%s/%s", unit_tmpdir(), rel);
	*strrchr(path, '/') = '\0';
	CHECK_INT(file_mkdir_p(path, 0755), 0);
	path[strlen(path)] = '/';
	CHECK_INT(file_write_all(path, text, strlen(text)), 0);
	free(path);
}

static const char *sv(const json_t *v)
{
	return json_string_value(v) ? json_string_value(v) : "";
}

static void dump(const char *what, const json_t *j)
{
	char *s = json_dumps(j, JSON_COMPACT);

	fprintf(stderr, "%s: %s\n", what, s ? s : "?");
	free(s);
}

static void scenario_setup(void)
{
	static const char *const sql[] = {
		"INSERT INTO job_groups (name, t_created) VALUES ('g1', '2026-01-01T00:00:00')",
		"INSERT INTO job_groups (name, t_created, keep_logs_in_days, keep_results_in_days)"
		" VALUES ('g2', '2026-01-01T00:00:00', 1, 1)",
		"UPDATE jobs SET state = 'done', result = 'passed', group_id = 2, t_started = '2026-01-02T00:00:00',"
		" t_finished = '2026-01-02T01:00:00' WHERE id = 2",
		"UPDATE jobs SET state = 'done', result = 'failed', group_id = 1, t_started = '2026-01-03T00:00:00',"
		" t_finished = '2026-01-03T01:00:00' WHERE id = 3",
		"INSERT INTO job_modules (job_id, name, result) VALUES (2, 'boot', 'passed'), (3, 'boot', 'failed')",
		"INSERT INTO comments (job_id, text, user_name, t_created, t_updated)"
		" VALUES (3, 'bsc#1234', 'u', '2026-01-04T00:00:00', '2026-01-04T00:00:00')",
		"INSERT INTO comments (group_id, text, user_name, t_created, t_updated)"
		" VALUES (1, 'tag:7:important', 'u', '2026-01-04T00:00:00', '2026-01-04T00:00:00')",
		"INSERT INTO job_settings (job_id, key, value) VALUES (3, 'ISO', 'a.iso')",
		"INSERT INTO assets (type, name, size, t_created, t_updated) VALUES"
		" ('iso', 'a.iso', 10, '2026-01-01T00:00:00', '2026-01-01T00:00:00'),"
		" ('hdd', 'old.qcow2', 20, '2020-01-01T00:00:00', '2020-01-01T00:00:00')",
	};
	size_t i;
	json_t *j;

	for (i = 0; i < 2; i++) { /* jobs 2 and 3, nothing failing */
		CHECK_INT(handle("POST", "/api/v1/jobs", "DISTRI=d&VERSION=1&FLAVOR=f&ARCH=x86_64&TEST=t&BUILD=7", 0, &j), 0);
		json_decref(j);
	}
	CHECK_INT(jobs_count(), 3);
	for (i = 0; i < sizeof(sql) / sizeof(sql[0]); i++)
		if (db_exec(h_db, sql[i], NULL) < 0)
			FAIL("setup: %s", sql[i]);
	write_result(2, "vars.json", "{\"A\": \"1\", \"B\": \"x\"}");
	write_result(3, "vars.json", "{\"A\": \"2\", \"C\": \"y\"}");
	write_result(2, "result-boot.json", "{\"details\": [{\"result\": \"ok\", \"tags\": [\"t\"],"
					    " \"needle\": \"n1\"}]}");
	write_result(3, "result-boot.json", "{\"details\": [{\"result\": \"fail\", \"tags\": [\"t\"],"
					    " \"screenshot\": \"s.png\", \"needles\": [{\"name\": \"n2\"}]}]}");
	write_result(3, "serial0.txt", "log");
	/* distribution d's needle n1 ("t"), which job 3's black screen now matches */
	{
		struct image *img = image_new(8, 8);
		char *dir = malloc(strlen(unit_tmpdir()) + 32), *png = malloc(strlen(unit_tmpdir()) + 40);
		CHECK(img && dir && png);
		sprintf(dir, "%s/tests/d/needles", unit_tmpdir());
		CHECK_INT(file_mkdir_p(dir, 0755), 0);
		sprintf(png, "%s/n1.png", dir);
		CHECK_INT(image_save_png(img, png), 0);
		sprintf(png, "%s/n1.json", dir);
		static const char needle[] = "{\"tags\": [\"t\"], \"area\": [{\"xpos\": 0, \"ypos\": 0,"
					     " \"width\": 4, \"height\": 4, \"type\": \"match\"}]}";
		CHECK_INT(file_write_all(png, needle, strlen(needle)), 0);
		sprintf(png, "%s/testresults/3/s.png", unit_tmpdir());
		CHECK_INT(image_save_png(img, png), 0);
		image_free(img);
		free(dir);
		free(png);
	}
	write_result(3, "ulogs/y.txt", "log");
}

/* GET /api/v1/job_groups/1/build_results: build 7 with job 3's counts
 * (failed, labeled by the bug reference, commented), or 503. */
static int group_builds_call(void)
{
	json_t *j = NULL, *b;
	int rc = handle("GET", "/api/v1/job_groups/#/build_results", "", 1, &j);

	b = json_array_get(json_object_get(j, "build_results"), 0);
	if (!rc && (json_array_size(json_object_get(j, "build_results")) != 1 ||
		    strcmp(sv(json_object_get(b, "escaped_id")), "1-7") ||
		    json_integer_value(json_object_get(b, "total")) != 1 ||
		    json_integer_value(json_object_get(b, "failed")) != 1 ||
		    json_integer_value(json_object_get(b, "labeled")) != 1 ||
		    json_integer_value(json_object_get(b, "comments")) != 1 || !json_object_get(b, "commented") ||
		    json_object_size(json_object_get(b, "distris")) != 1 || !json_is_string(json_object_get(b, "date")) ||
		    json_integer_value(json_object_get(j, "max_jobs")) != 1)) {
		dump("build_results", j);
		rc = ERR_INVALID;
	}
	json_decref(j);
	return rc;
}

/* GET /dashboard_build_results: both groups, each with its build. */
static int dashboard_call(void)
{
	json_t *j = NULL;
	int rc = handle("GET", "/dashboard_build_results", "time_limit_days=0", 0, &j);

	if (!rc && json_array_size(json_object_get(j, "results")) != 2)
		rc = ERR_INVALID;
	json_decref(j);
	return rc;
}

/* GET /tests/3/investigation_ajax: job 2 the last good one, the settings
 * that differ (A, B, C), the needles (n1 matched then, n2 a candidate now)
 * and the first failing step beside job 2's, or 503. */
static int investigate_call(void)
{
	json_t *j = NULL, *ff;
	int rc = handle("GET", "/tests/#/investigation_ajax", "", 3, &j);

	ff = json_object_get(j, "first_failure");
	if (!rc && (json_integer_value(json_object_get(j, "last_good_id")) != 2 ||
		    json_array_size(json_object_get(j, "settings_diff")) != 3 ||
		    strcmp(sv(json_object_get(j, "diff_to_last_good")),
			   "-A: 1\n+A: 2\n-B: x\n+C: y\n") ||
		    !json_is_string(json_object_get(j, "test_log")) ||
		    json_array_size(json_object_get(j, "needles_diff")) != 2 ||
		    json_integer_value(json_object_get(json_object_get(ff, "this"), "job")) != 3 ||
		    json_integer_value(json_object_get(json_object_get(ff, "last_good"), "job")) != 2)) {
		dump("investigation", j);
		rc = ERR_INVALID;
	}
	json_decref(j);
	return rc;
}

/* GET /api/v1/cleanup?at=<2028>: job 2's results (group 2 keeps them a
 * day), job 3's logs (its build is important: its results are kept for
 * ever, its logs 120 days) with both files, old.qcow2 (no job names it;
 * a.iso is kept: job 3 names it, within group 1's limit), or 503. */
static int cleanup_plan_call(void)
{
	json_t *j = NULL, *logs, *job;
	int rc = handle("GET", "/api/v1/cleanup", "at=1830297600", 0, &j);

	logs = json_array_get(json_object_get(j, "logs"), 0);
	job = json_array_get(json_object_get(j, "jobs"), 0);
	if (!rc && (json_array_size(json_object_get(j, "jobs")) != 1 ||
		    json_array_size(json_object_get(j, "logs")) != 1 ||
		    json_integer_value(json_object_get(logs, "id")) != 3 ||
		    json_array_size(json_object_get(logs, "files")) != 2 ||
		    json_array_size(json_object_get(j, "assets")) != 1 ||
		    strcmp(sv(json_object_get(json_array_get(json_object_get(j, "assets"), 0), "name")), "old.qcow2") ||
		    json_integer_value(json_object_get(job, "id")) != 2 ||
		    json_integer_value(json_object_get(j, "bytes")) < 26)) {
		dump("cleanup plan", j);
		rc = ERR_INVALID;
	}
	json_decref(j);
	return rc;
}

/* POST /api/v1/jobs/3/rejudge: its failed assert on "t" would pass with
 * n1 now (the module must run on from there), or 503. */
static int rejudge_call(void)
{
	json_t *j = NULL, *job, *step;
	int rc = handle("POST", "/api/v1/jobs/#/rejudge", "", 3, &j);

	job = json_array_get(json_object_get(j, "jobs"), 0);
	step = json_array_get(json_object_get(job, "steps"), 0);
	if (!rc && (json_array_size(json_object_get(j, "jobs")) != 1 || json_integer_value(json_object_get(j, "job_id")) != 3 ||
		    json_integer_value(json_object_get(job, "id")) != 3 ||
		    strcmp(sv(json_object_get(job, "verdict")), "would_run_on") ||
		    json_array_size(json_object_get(job, "steps")) != 1 || !json_is_true(json_object_get(step, "would_pass")) ||
		    strcmp(sv(json_object_get(json_object_get(step, "new"), "needle")), "n1") ||
		    json_array_size(json_object_get(j, "tags")) != 1 || json_integer_value(json_object_get(j, "needles")) != 1 ||
		    strcmp(sv(json_object_get(json_object_get(j, "build"), "build")), "7"))) {
		dump("rejudge", j);
		rc = ERR_INVALID;
	}
	json_decref(j);
	return rc;
}

TEST(nomem_server_handlers_answer_whole_or_503)
{
	char err[256], *path;

	log_set_stderr_level(LOG_ERR);
	CHECK((path = server_db_path(unit_tmpdir(), NULL, err, sizeof(err))) != NULL);
	CHECK_INT(db_open(&h_db, path, err, sizeof(err)), 0);
	CHECK(job_post_every_n() > 1);
	CHECK(every_n("GET /api/v1/jobs/#/details", job_details_call) > 1);
	CHECK(every_n("GET /api/v1/jobs", jobs_list_call) > 1);
	/* The lists of the admin tables, workers and assets: whole or 503. */
	seed_tables();
	CHECK(whole_every_n("GET", "/api/v1/job_groups", "", 0, groups_ok) > 1);
	CHECK(whole_every_n("GET", "/api/v1/job_templates", "", 0, templates_ok) > 1);
	CHECK(whole_every_n("GET", "/api/v1/machines", "", 0, machines_ok) > 1);
	CHECK(whole_every_n("GET", "/api/v1/workers", "", 0, workers_ok) > 1);
	CHECK(whole_every_n("GET", "/api/v1/assets", "", 0, assets_ok) > 1);
	CHECK(whole_every_n("GET", "/api/v1/job_templates_scheduling", "format=json", 0, yaml_ok) > 1);
	/* Scheduling a product: all of it, or 503 and nothing. */
	CHECK(isos_post_every_n() > 1);
	db_free(h_db);
	free(path);
}

/* The reports over finished jobs (builds, investigation, cleanup plan,
 * rejudge) on their own database: job 1 posted, then jobs 2 and 3 of one
 * scenario (scenario_setup). */
TEST(nomem_server_reports_answer_whole_or_503)
{
	char err[256], *path;

	log_set_stderr_level(LOG_ERR);
	CHECK((path = server_db_path(unit_tmpdir(), NULL, err, sizeof(err))) != NULL);
	CHECK_INT(db_open(&h_db, path, err, sizeof(err)), 0);
	CHECK(job_post_every_n() > 1);
	scenario_setup();
	CHECK(every_n("GET /api/v1/job_groups/#/build_results", group_builds_call) > 1);
	CHECK(every_n("GET /dashboard_build_results", dashboard_call) > 1);
	CHECK(every_n("GET /tests/#/investigation_ajax", investigate_call) > 1);
	CHECK(every_n("GET /api/v1/cleanup", cleanup_plan_call) > 1);
	CHECK(every_n("POST /api/v1/jobs/#/rejudge", rejudge_call) > 1);
	db_free(h_db);
	free(path);
}

/* The scheduler: job s_big needs classes q and big, s_q (a lower
 * priority) q only; worker s_w offers q. A pick gets s_q, or ERR_NOMEM
 * with nothing assigned, never s_big (as it would with big lost). */
static struct db *s_db;
static int64_t s_big, s_q, s_w;

static int sched_call(void)
{
	int64_t got = 0, assigned = -1;
	int rc = sched_pick(s_db, s_w, &got);

	CHECK_INT(db_query_int(s_db, &assigned, "SELECT COUNT(*) FROM jobs WHERE state = 'assigned'", ""), 0);
	if (rc == 0 && (got != s_q || assigned != 1))
		rc = ERR_INVALID;
	if (rc == ERR_NOMEM && assigned != 0)
		rc = ERR_INVALID; /* a part of a pick stored */
	CHECK(db_exec(s_db, "UPDATE jobs SET state = 'scheduled', assigned_worker_id = NULL", "") >= 0);
	CHECK(db_exec(s_db, "UPDATE workers SET job_id = NULL", "") >= 0);
	return rc;
}

TEST(nomem_sched_pick_whole_or_nomem)
{
	json_t *big = json_pack("{s:s,s:s}", "TEST", "big", "WORKER_CLASS", "q");
	json_t *q = json_pack("{s:s,s:s}", "TEST", "small", "WORKER_CLASS", "q");
	char err[256], *path;

	/* SQLite, as the other walks here: on PostgreSQL a failed allocation
	 * inside libpq's path comes back as ERR_IO, not ERR_NOMEM (not yet
	 * told apart there), so this walk is not run with VIGIL_TEST_DB. */
	log_set_stderr_level(LOG_ERR);
	CHECK((path = server_db_path(unit_tmpdir(), NULL, err, sizeof(err))) != NULL);
	CHECK_INT(db_open(&s_db, path, err, sizeof(err)), 0);
	free(path);
	CHECK_INT(jobs_insert(s_db, big, 10, 0, 0, &s_big), 0);
	CHECK_INT(jobs_insert(s_db, q, 50, 0, 0, &s_q), 0);
	CHECK(db_exec(s_db, "INSERT INTO job_settings (job_id, key, value) VALUES (?, 'WORKER_CLASS', 'big')", "i",
		      s_big) == 1);
	CHECK_INT(workers_register(s_db, "h", 1, "q", (int64_t)time(NULL), &s_w), 0);
	CHECK(every_n("sched_pick", sched_call) > 1);
	db_free(s_db);
	json_decref(big);
	json_decref(q);
}

/* --- the request paths that used str_dup (it aborted the server): job
 * group YAML shown and replaced, a product posted without a required
 * parameter, a job's worker classes joined, a bug reference carried over */

/* Column 0 of the first row of sql ("" for none); the caller frees it. */
static char *query_text(const char *sql)
{
	struct db_stmt *st;
	char *t;

	CHECK_INT(db_prepare(h_db, &st, sql, ""), 0);
	t = strdup(db_step(st) == 1 && db_col_text(st, 0) ? db_col_text(st, 0) : "");
	db_finalize(st);
	CHECK(t != NULL);
	return t;
}

/* "key=value" with value form-encoded (static buffer). */
static const char *form(const char *key, const char *value)
{
	static char q[8192];
	size_t n = (size_t)snprintf(q, sizeof(q), "%s=", key);

	for (; *value && n + 4 < sizeof(q); value++)
		n += (size_t)(isalnum((unsigned char)*value) ? snprintf(q + n, 2, "%c", *value)
							     : snprintf(q + n, 4, "%%%02X", (unsigned char)*value));
	CHECK(!*value);
	return q;
}

/* A text answer (YAML): the one made with no allocation failing, or 503. */
static const char *t_method, *t_pattern, *t_query;
static int64_t t_id;
static char *t_ref;

static int text_call(void)
{
	struct api_resp out;
	int rc = call_route(t_method, t_pattern, t_query, t_id, &out);

	if (!rc)
		rc = out.status == 200 && out.text && !strcmp(out.text, t_ref) ? 0 : out.status == 503 ? ERR_NOMEM : ERR_INVALID;
	if (rc == ERR_INVALID)
		fprintf(stderr, "%s %s: answered %d with '%s'\n", t_method, t_pattern, out.status,
			out.text ? out.text : "(no text)");
	json_decref(out.json);
	free(out.text);
	return rc;
}

/* The runs of text_call; the reference answer must hold must_hold. */
static long text_every_n(const char *method, const char *pattern, const char *query, int64_t id, const char *must_hold)
{
	struct api_resp out;
	char what[128];
	long n;

	t_method = method;
	t_pattern = pattern;
	t_query = query;
	t_id = id;
	CHECK_INT(call_route(method, pattern, query, id, &out), 0);
	CHECK_INT(out.status, 200);
	CHECK(out.text && strstr(out.text, must_hold));
	json_decref(out.json);
	t_ref = out.text;
	snprintf(what, sizeof(what), "%s %s", method, pattern);
	n = every_n(what, text_call);
	free(t_ref);
	t_ref = NULL;
	return n;
}

#define JT_BASE                                                                                                       \
	"defaults:\n  x86_64:\n    machine: 64bit\n    priority: 40\n"                                               \
	"products:\n  sle-15-DVD:\n    distri: sle\n    flavor: DVD\n    version: '15'\n"                            \
	"scenarios:\n  x86_64:\n    sle-15-DVD:\n    - textmode\n"

/* What a replace stores: group 1's document and its templates. */
static char *jt_state(void)
{
	char *doc = query_text("SELECT template FROM job_groups WHERE id = 1");
	char *rows = query_text("SELECT group_concat(r, ';') FROM (SELECT product_id || '/' || machine_id || '/' ||"
				" test_suite_id || '/' || coalesce(prio, '') AS r FROM job_templates WHERE group_id = 1"
				" ORDER BY test_suite_id)");
	char *all = malloc(strlen(doc) + strlen(rows) + 2);

	CHECK(all != NULL);
	sprintf(all, "%s|%s", doc, rows);
	free(doc);
	free(rows);
	return all;
}

/* POST /api/v1/job_templates_scheduling/1 with gnome added to the stored
 * document (JT_BASE, posted before each run), the nth allocation
 * failing: 200 with both templates stored and the change told, or 503
 * with the document and the templates as they were. The runs. */
static long yaml_replace_every_n(void)
{
	char *want = NULL;
	long n;

	for (n = 1; n < 200000; n++) {
		struct api_resp out;
		char *before, *after;
		bool fired;
		int rc;

		CHECK_INT(call_route("POST", "/api/v1/job_templates_scheduling/#", form("template", JT_BASE), 1, &out), 0);
		if (out.status != 200)
			FAIL("POST /api/v1/job_templates_scheduling/1: the base document answered %d", out.status);
		json_decref(out.json);
		free(out.text);
		before = jt_state();
		alloc_fail_arm(n);
		rc = call_route("POST", "/api/v1/job_templates_scheduling/#", form("template", JT_BASE "    - gnome\n"), 1,
				&out);
		fired = alloc_fail_disarm();
		after = jt_state();
		if (rc == ERR_NOMEM) {
			out.status = 503; /* the form could not be read */
		} else if (rc) {
			FAIL("POST /api/v1/job_templates_scheduling/1: allocation %ld failed: %d", n, rc);
		}
		if (out.status == 503 && strcmp(before, after))
			FAIL("POST /api/v1/job_templates_scheduling/1: allocation %ld failed: answered 503 but stored\n  %s\nnot\n  %s",
			     n, after, before);
		if (out.status == 200) {
			const char *changes = json_string_value(json_object_get(out.json, "changes"));
			if (!changes || strcmp(changes, "+    - gnome") ||
			    json_array_size(json_object_get(out.json, "ids")) != 2 || !strcmp(before, after) ||
			    !strstr(after, "- gnome")) {
				dump("answer", out.json);
				FAIL("POST /api/v1/job_templates_scheduling/1: allocation %ld failed: answered 200 but not whole"
				     " (stored %s)", n, after);
			}
			if (!want)
				want = strdup(after);
			else if (strcmp(want, after))
				FAIL("POST /api/v1/job_templates_scheduling/1: stored %s, earlier %s", after, want);
		} else if (out.status != 503) {
			dump("answer", out.json);
			FAIL("POST /api/v1/job_templates_scheduling/1: allocation %ld failed: answered %d", n, out.status);
		}
		json_decref(out.json);
		free(out.text);
		free(before);
		free(after);
		if (!fired) {
			if (out.status != 200)
				FAIL("POST /api/v1/job_templates_scheduling/1: no allocation failed, yet %d", out.status);
			if (getenv("VIGIL_ALLOC_FAIL_TRACE"))
				fprintf(stderr, "POST /api/v1/job_templates_scheduling/#: %ld runs\n", n);
			free(want);
			return n;
		}
	}
	FAIL("POST /api/v1/job_templates_scheduling/1: still allocating after %ld runs", n);
	return n;
}

/* POST /api/v1/isos without DISTRI: 400 naming it, or 503; nothing
 * scheduled either way (a name lost from the list of missing ones
 * scheduled the product without it). The runs. */
static long isos_missing_every_n(void)
{
	long n;

	for (n = 1; n < 200000; n++) {
		long before = rows_of("scheduled_products") + jobs_count(), after;
		struct api_resp out;
		bool fired;
		int rc;

		alloc_fail_arm(n);
		rc = call_route("POST", "/api/v1/isos", "VERSION=15&FLAVOR=DVD&ARCH=x86_64&BUILD=9", 0, &out);
		fired = alloc_fail_disarm();
		after = rows_of("scheduled_products") + jobs_count();
		if (rc == ERR_NOMEM)
			out.status = 503;
		if (after != before)
			FAIL("POST /api/v1/isos without DISTRI: allocation %ld failed: %ld rows stored", n, after - before);
		if (out.status != 503 &&
		    (out.status != 400 || !out.text || strcmp(out.text, "Error: missing parameters: DISTRI\n")))
			FAIL("POST /api/v1/isos without DISTRI: allocation %ld failed: answered %d '%s'", n, out.status,
			     out.text ? out.text : "");
		json_decref(out.json);
		free(out.text);
		if (!fired) {
			if (out.status != 400)
				FAIL("POST /api/v1/isos without DISTRI: no allocation failed, yet %d", out.status);
			if (getenv("VIGIL_ALLOC_FAIL_TRACE"))
				fprintf(stderr, "POST /api/v1/isos without DISTRI: %ld runs\n", n);
			return n;
		}
	}
	FAIL("POST /api/v1/isos without DISTRI: still allocating after %ld runs", n);
	return n;
}

/* The newest gnome job (scheduled by POST /api/v1/isos) listed with its
 * worker classes joined from two job_settings rows. */
static bool classes_ok(const json_t *ref)
{
	const json_t *job = json_array_get(json_object_get(ref, "jobs"), 0);
	return json_array_size(json_object_get(ref, "jobs")) == 1 &&
	       !strcmp(sv(json_object_get(json_object_get(job, "settings"), "WORKER_CLASS")), "qemu_x86_64,tap");
}

TEST(nomem_server_str_dup_paths_answer_whole_or_503)
{
	char err[256], *path, *gnome, q[64];
	json_t *j;

	log_set_stderr_level(LOG_ERR);
	CHECK((path = server_db_path(unit_tmpdir(), NULL, err, sizeof(err))) != NULL);
	CHECK_INT(db_open(&h_db, path, err, sizeof(err)), 0);
	CHECK_INT(handle("POST", "/api/v1/jobs", "DISTRI=d&VERSION=1&FLAVOR=f&ARCH=x86_64&TEST=t&BUILD=7", 0, &j), 0);
	json_decref(j);
	seed_tables();
	/* a job's classes: the product's and the test suite's, joined (jobs.c) */
	CHECK(db_exec(h_db, "INSERT INTO table_settings (kind, owner_id, key, value) VALUES"
			    " ('product', (SELECT id FROM products WHERE distri = 'sle'), 'WORKER_CLASS', 'qemu_x86_64'),"
			    " ('test_suite', (SELECT id FROM test_suites WHERE name = 'gnome'), 'WORKER_CLASS', 'tap')",
		      "") >= 0);
	CHECK(isos_missing_every_n() > 1);
	CHECK(isos_post_every_n() > 1);
	gnome = query_text("SELECT max(id) FROM jobs WHERE test = 'gnome'");
	snprintf(q, sizeof(q), "ids=%s", gnome);
	free(gnome);
	CHECK(whole_every_n("GET", "/api/v1/jobs", q, 0, classes_ok) > 1);
	/* the groups' YAML written from the rows, then the stored document replaced */
	CHECK(text_every_n("GET", "/api/v1/job_templates_scheduling", "", 0, "START_AFTER_TEST") > 1);
	CHECK(text_every_n("GET", "/api/v1/job_templates_scheduling/#", "", 1, "textmode") > 1);
	CHECK(yaml_replace_every_n() > 1);
	CHECK(text_every_n("GET", "/api/v1/job_templates_scheduling/#", "", 1, "- gnome") > 1);
	db_free(h_db);
	free(path);
}

/* A finished job of one scenario whose module ended as given. */
static int64_t review_job(const char *result, const char *module_result)
{
	json_t *s = json_pack("{s:s,s:s,s:s,s:s,s:s,s:s}", "TEST", "web", "DISTRI", "d", "VERSION", "1", "FLAVOR", "cd",
			      "ARCH", "x86_64", "MACHINE", "64bit");
	int64_t id;

	CHECK(s != NULL);
	CHECK_INT(jobs_insert(h_db, s, 50, 0, 0, &id), 0);
	json_decref(s);
	CHECK_INT(db_exec(h_db, "UPDATE jobs SET state = 'done', result = ? WHERE id = ?", "ti", result, id), 1);
	CHECK_INT(db_exec(h_db, "INSERT INTO job_modules (job_id, name, result) VALUES (?, 'check', ?)", "it", id,
			  module_result),
		  1);
	return id;
}

static long comments_of(int64_t job)
{
	int64_t n = -1;

	CHECK_INT(db_query_int(h_db, &n, "SELECT count(*) FROM comments WHERE job_id = ?", "i", job), 0);
	return (long)n;
}

/* A failed job whose scenario failed the same way before: the earlier
 * job's bug reference carried over whole, or ERR_NOMEM and no comment
 * (its first string was a str_dup that, failing, meant "no carry-over"). */
TEST(nomem_review_carry_over)
{
	struct comments_author by = { 0, NULL, NULL };
	char err[256], *path;
	int64_t old, now, cid;
	long n;

	log_set_stderr_level(LOG_ERR);
	CHECK((path = server_db_path(unit_tmpdir(), NULL, err, sizeof(err))) != NULL);
	CHECK_INT(db_open(&h_db, path, err, sizeof(err)), 0);
	old = review_job("failed", "failed");
	CHECK_INT(comments_add(h_db, COMMENTS_JOB, old, "bsc#1234 the check is broken", &by, &cid, err, sizeof(err)), 0);
	(void)review_job("passed", "passed");
	now = review_job("failed", "failed");
	for (n = 1; n < 200000; n++) {
		long before = comments_of(now), after;
		int64_t from = -1;
		bool fired;
		int rc;

		alloc_fail_arm(n);
		rc = review_carry_over(h_db, NULL, now, &from);
		fired = alloc_fail_disarm();
		after = comments_of(now);
		if (rc == ERR_NOMEM && after != before)
			FAIL("review_carry_over: allocation %ld failed: ERR_NOMEM but %ld comments added", n, after - before);
		if (rc == 0 && (after != before + 1 || from != old))
			FAIL("review_carry_over: allocation %ld failed: 0 with %ld comments added, from job %lld", n,
			     after - before, (long long)from);
		if (rc != 0 && rc != ERR_NOMEM)
			FAIL("review_carry_over: allocation %ld failed: %d (%s)", n, rc, err_str(rc));
		if (!fired) {
			if (rc)
				FAIL("review_carry_over: no allocation failed, yet %d", rc);
			if (getenv("VIGIL_ALLOC_FAIL_TRACE"))
				fprintf(stderr, "review_carry_over: %ld runs\n", n);
			break;
		}
	}
	CHECK(n > 1);
	db_free(h_db);
	free(path);
}
