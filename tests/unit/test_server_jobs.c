/* SPDX-License-Identifier: MIT */
/* test_server_jobs.c - the server's job model without HTTP: settings merge
 * order and WORKER_CLASS union, job names, form parameter parsing, and the
 * isos expansion (products x templates x machines) on a fresh database. */
#include <stdlib.h>
#include "unit.h"
#include "server/http/api.h"
#include "server/db/db.h"
#include "server/store/isos.h"
#include "server/store/deps.h"
#include "server/store/jobs.h"
#include "util/err.h"
#include "util/str.h"

TEST(server_settings_merge_order)
{
	json_t *s = json_object();
	json_t *product = json_pack("{s:s,s:s,s:s}", "A", "product", "B", "product", "WORKER_CLASS", "qemu_x86_64");
	json_t *machine = json_pack("{s:s,s:s}", "B", "machine", "WORKER_CLASS", "tap,qemu_x86_64");
	json_t *suite = json_pack("{s:s,s:i}", "C", "suite", "QEMURAM", 2048);
	json_t *post = json_pack("{s:s,s:s}", "C", "post", "WORKER_CLASS", "big");

	jobs_settings_merge(s, product);
	jobs_settings_merge(s, machine);
	jobs_settings_merge(s, suite);
	jobs_settings_merge(s, post);
	CHECK_STR(json_string_value(json_object_get(s, "A")), "product");
	CHECK_STR(json_string_value(json_object_get(s, "B")), "machine");
	CHECK_STR(json_string_value(json_object_get(s, "C")), "post");
	CHECK_STR(json_string_value(json_object_get(s, "QEMURAM")), "2048");
	CHECK_STR(json_string_value(json_object_get(s, "WORKER_CLASS")), "qemu_x86_64,tap,big");
	json_decref(product);
	json_decref(machine);
	json_decref(suite);
	json_decref(post);
	json_decref(s);
}

TEST(server_settings_default_class_and_expand)
{
	json_t *s = json_pack("{s:s,s:s,s:s}", "ARCH", "aarch64", "ISO", "%DISTRI%-%VERSION%.iso", "DISTRI", "vigil");

	jobs_settings_default_class(s);
	CHECK_STR(json_string_value(json_object_get(s, "WORKER_CLASS")), "qemu_aarch64");
	CHECK_INT(jobs_settings_expand(s, NULL, 0), 0);
	CHECK_STR(json_string_value(json_object_get(s, "ISO")), "vigil-%VERSION%.iso");
	json_object_set_new(s, "BACKEND", json_string("svirt"));
	json_object_del(s, "WORKER_CLASS");
	jobs_settings_default_class(s);
	CHECK(json_object_get(s, "WORKER_CLASS") == NULL);
	json_decref(s);
}

/* Issue 17: one 502 KB post (A = 500 KB, 100 keys K<n>=%A%%A%) stored
 * 100 MB of settings. Expansion is bounded per value and in all. */
TEST(server_settings_expand_bounded)
{
	json_t *s = json_object();
	char *big = malloc(500001), err[256] = "";
	int i;

	memset(big, 'a', 500000);
	big[500000] = '\0';
	json_object_set_new(s, "A", json_string(big));
	for (i = 0; i < 100; i++) {
		char k[16];
		snprintf(k, sizeof(k), "K%d", i);
		json_object_set_new(s, k, json_string("%A%%A%"));
	}
	CHECK_INT(jobs_settings_expand(s, err, sizeof(err)), ERR_TOO_BIG);
	CHECK(strstr(err, "settings: over 4194304 bytes in all"));
	json_decref(s);
	/* one value past 1 MiB */
	s = json_pack("{s:s,s:s}", "A", big, "B", "%A%-%A%-%A%");
	CHECK_INT(jobs_settings_expand(s, err, sizeof(err)), ERR_TOO_BIG);
	CHECK(strstr(err, "setting 'B': over 1048576 bytes"));
	json_decref(s);
	/* a few references to it are fine */
	s = json_pack("{s:s,s:s}", "A", big, "B", "%A%-%A%");
	CHECK_INT(jobs_settings_expand(s, err, sizeof(err)), 0);
	CHECK_INT(strlen(json_string_value(json_object_get(s, "B"))), 1000001);
	json_decref(s);
	free(big);
}

TEST(server_job_name)
{
	json_t *s = json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:s}", "DISTRI", "opensuse", "VERSION", "Tumbleweed", "FLAVOR",
			      "DVD", "ARCH", "x86_64", "BUILD", "2024 01", "TEST", "textmode", "MACHINE", "64bit");
	char *n = jobs_name(s);

	CHECK_STR(n, "opensuse-Tumbleweed-DVD-x86_64-Build2024_01-textmode@64bit");
	free(n);
	json_object_set_new(s, "JOB_TEMPLATE_NAME", json_string("tm2"));
	json_object_del(s, "VERSION");
	n = jobs_name(s);
	CHECK_STR(n, "opensuse-DVD-x86_64-Build2024_01-tm2@64bit");
	free(n);
	json_decref(s);
}

TEST(server_params_parse)
{
	struct params p;
	char msg[128];
	const char *q = "a=1&settings%5BX%5D=a+b%2Fc&a=2&empty&&k=";

	params_init(&p);
	CHECK_INT(params_parse(&p, q, strlen(q), msg, sizeof(msg)), 0);
	CHECK_STR(params_get(&p, "a"), "2");
	CHECK_STR(params_get(&p, "settings[X]"), "a b/c");
	CHECK_STR(params_get(&p, "empty"), "");
	CHECK_STR(params_get(&p, "k"), "");
	CHECK(params_get(&p, "missing") == NULL);
	CHECK(params_parse(&p, "x=%zz", 5, msg, sizeof(msg)) != 0);
	CHECK(params_parse(&p, "x=%4", 4, msg, sizeof(msg)) != 0);
	CHECK(params_parse(&p, "x=%00", 5, msg, sizeof(msg)) != 0);
	params_release(&p);
}

/* Issue 17: state=%FF returned the unfiltered list, limit=%FF a 500, a
 * setting FOO=%FF was dropped: a parameter that is not UTF-8 is refused
 * with its name, for every route. */
TEST(server_params_refuse_bad_utf8)
{
	static const struct { const char *s; size_t len; bool ok; size_t bad; } u[] = {
		{ "plain ascii", 11, true, 0 },
		{ "gr\xc3\xbc\xc3\x9f \xe2\x82\xac \xf0\x9f\x98\x80", 15, true, 0 },
		{ "a\xff", 2, false, 1 },
		{ "\xc0\xaf", 2, false, 0 },          /* overlong '/' */
		{ "ab\xe0\x80\xaf", 5, false, 2 },   /* overlong, 3 bytes */
		{ "\xed\xa0\x80", 3, false, 0 },      /* a surrogate */
		{ "\xf4\x90\x80\x80", 4, false, 0 },  /* above U+10FFFF */
		{ "x\xe2\x82", 3, false, 1 },         /* cut short */
		{ "\xc3(", 2, false, 0 },
	};
	struct params p;
	char msg[128];
	size_t i, bad;

	for (i = 0; i < sizeof(u) / sizeof(u[0]); i++) {
		bad = 99;
		CHECK_INT(str_utf8_valid(u[i].s, u[i].len, &bad), u[i].ok);
		if (!u[i].ok)
			CHECK_INT(bad, u[i].bad);
	}
	params_init(&p);
	CHECK_INT(params_parse(&p, "state=%FF", 9, msg, sizeof(msg)), ERR_PROTO);
	CHECK_STR(msg, "parameter 'state': not valid UTF-8 (decoded byte 0)");
	CHECK_INT(params_parse(&p, "a%C3=1", 6, msg, sizeof(msg)), ERR_PROTO);
	CHECK_STR(msg, "parameter '(its name)': not valid UTF-8 (decoded byte 1)");
	CHECK_INT(params_parse(&p, "name=gr%C3%BCn", 14, msg, sizeof(msg)), 0);
	CHECK_STR(params_get(&p, "name"), "gr\xc3\xbcn");
	params_release(&p);
	/* Found by tests/fuzz/fuzz_params: a bad escape in a short body's
	 * value printed the name with "%.40s" from a buffer with no NUL. */
	{
		char *body = malloc(14);
		memcpy(body, "name=gr%CA=3%B", 14);
		params_init(&p);
		CHECK_INT(params_parse(&p, body, 14, msg, sizeof(msg)), ERR_PROTO);
		CHECK_STR(msg, "bad percent escape in the value of 'name' at byte 12");
		params_release(&p);
		free(body);
	}
}

static void exec_ok(struct db *db, const char *sql)
{
	CHECK(db_exec(db, sql, NULL) >= 0);
}

TEST(server_isos_expansion)
{
	struct db *db;
	json_t *params, *resp = NULL, *job;
	int status;

	db = unit_db();
	CHECK(db_schema_version(db) >= 1);
	exec_ok(db, "INSERT INTO machines (name, backend) VALUES ('64bit', 'qemu'), ('uefi', 'qemu')");
	exec_ok(db, "INSERT INTO products (distri, version, flavor, arch) VALUES ('vigil', '1.*', 'DVD', 'x86_64')");
	exec_ok(db, "INSERT INTO test_suites (name) VALUES ('boot'), ('shell')");
	exec_ok(db, "INSERT INTO job_groups (name, default_priority, t_created) VALUES ('g', 45, 'now')");
	exec_ok(db, "INSERT INTO table_settings (kind, owner_id, key, value) VALUES"
		    " ('product', 1, 'A', 'product'), ('product', 1, 'B', 'product'), ('product', 1, 'C', 'product'),"
		    " ('machine', 1, 'B', 'machine'), ('machine', 1, 'C', 'machine'), ('machine', 1, 'WORKER_CLASS', 'tap'),"
		    " ('test_suite', 1, 'C', 'suite'), ('test_suite', 1, 'D', 'suite')");
	/* 2 suites x 2 machines, one template with its own prio. */
	exec_ok(db, "INSERT INTO job_templates (product_id, machine_id, test_suite_id, group_id, prio, t_created) VALUES"
		    " (1, 1, 1, 1, 30, 'now'), (1, 2, 1, 1, NULL, 'now'), (1, 1, 2, 1, NULL, 'now'), (1, 2, 2, 1, NULL, 'now')");
	params = json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:s}", "DISTRI", "VIGIL", "VERSION", "1.5", "FLAVOR", "DVD", "ARCH",
			   "x86_64", "BUILD", "42", "D", "post", "WORKER_CLASS", "big");
	status = isos_schedule(db, params, &resp);
	CHECK_INT(status, 200);
	CHECK_INT(json_integer_value(json_object_get(resp, "count")), 4);
	CHECK_INT(json_array_size(json_object_get(resp, "failed")), 0);
	CHECK_INT(jobs_to_json(db, json_integer_value(json_array_get(json_object_get(resp, "ids"), 0)), false, &job), 0);
	/* Ordered by suite then machine: the first is boot@64bit. */
	CHECK_STR(json_string_value(json_object_get(job, "test")), "boot");
	CHECK_INT(json_integer_value(json_object_get(job, "priority")), 30);
	{
		json_t *s = json_object_get(job, "settings");
		CHECK_STR(json_string_value(json_object_get(s, "A")), "product");
		CHECK_STR(json_string_value(json_object_get(s, "B")), "machine");
		CHECK_STR(json_string_value(json_object_get(s, "C")), "suite");
		CHECK_STR(json_string_value(json_object_get(s, "D")), "post");
		CHECK_STR(json_string_value(json_object_get(s, "MACHINE")), "64bit");
		CHECK_STR(json_string_value(json_object_get(s, "WORKER_CLASS")), "tap,big");
		CHECK_STR(json_string_value(json_object_get(s, "NAME")), "00000001-VIGIL-1.5-DVD-x86_64-Build42-boot@64bit");
	}
	json_decref(job);
	CHECK_INT(jobs_to_json(db, 2, false, &job), 0);
	CHECK_STR(json_string_value(json_object_get(json_object_get(job, "settings"), "WORKER_CLASS")), "big");
	CHECK_INT(json_integer_value(json_object_get(job, "priority")), 45); /* the group's default; the default class only without any */
	json_decref(job);
	json_decref(resp);

	/* TEST and MACHINE filter; a missing product is reported, not scheduled. */
	json_object_set_new(params, "TEST", json_string("shell"));
	json_object_set_new(params, "MACHINE", json_string("uefi"));
	CHECK_INT(isos_schedule(db, params, &resp), 200);
	CHECK_INT(json_integer_value(json_object_get(resp, "count")), 1);
	json_decref(resp);
	json_object_set_new(params, "FLAVOR", json_string("NET"));
	CHECK_INT(isos_schedule(db, params, &resp), 200);
	CHECK(json_object_get(resp, "error") != NULL);
	CHECK_INT(json_integer_value(json_object_get(resp, "count")), 0);
	json_decref(resp);
	json_decref(params);
	db_free(db);
}

TEST(server_restart_and_cancel)
{
	char msg[256];
	json_t *s = json_pack("{s:s,s:s}", "TEST", "boot", "ARCH", "x86_64"), *j;
	struct db *db;
	int64_t id, clone;
	int changed;

	db = unit_db();
	CHECK_INT(jobs_insert(db, s, 50, 0, 0, &id), 0);
	CHECK_INT(jobs_restart(db, id, &clone, msg, sizeof(msg)), 0);
	CHECK_INT(jobs_restart(db, id, &clone, msg, sizeof(msg)) != 0, 1); /* already cloned */
	CHECK_INT(jobs_to_json(db, id, false, &j), 0);
	CHECK_INT(json_integer_value(json_object_get(j, "clone_id")), clone);
	CHECK_STR(json_string_value(json_object_get(j, "result")), "user_restarted");
	json_decref(j);
	CHECK_INT(jobs_to_json(db, clone, false, &j), 0);
	CHECK_INT(json_integer_value(json_object_get(j, "origin_id")), id);
	json_decref(j);
	CHECK_INT(jobs_cancel(db, clone, NULL, &changed), 0);
	CHECK_INT(changed, 1);
	CHECK_INT(jobs_cancel(db, clone, NULL, &changed), 0);
	CHECK_INT(changed, 0);
	CHECK_INT(jobs_cancel(db, 999, NULL, &changed), ERR_NOT_FOUND);
	json_decref(s);
	db_free(db);
}

/* Found by fuzz_routes: a path with a byte that is not UTF-8 (POST
 * /api/v1/jobs/%96/cancel) went into the 404's text, json_pack refused
 * it, and the answer was a 500 "no response". Text cut inside a
 * character by the 1 KiB limit did the same. */
TEST(server_api_error_not_utf8)
{
	struct api_resp out;
	char long_text[1100];
	const char *e;

	memset(&out, 0, sizeof(out));
	api_error(&out, 404, "no route for %s %s", "POST", "/api/v1/jobs/\x96/cancel");
	CHECK_INT(out.status, 404);
	CHECK(out.json != NULL);
	CHECK_STR(json_string_value(json_object_get(out.json, "error")), "no route for POST /api/v1/jobs/?/cancel");
	memset(long_text, 'a', sizeof(long_text));
	memcpy(long_text + 1022, "\xc3\xa9", 2); /* an é cut by the 1,023 bytes kept */
	long_text[sizeof(long_text) - 1] = '\0';
	api_error(&out, 400, "%s", long_text);
	CHECK(out.json != NULL);
	e = json_string_value(json_object_get(out.json, "error"));
	CHECK(e && strlen(e) == 1023 && e[1022] == '?');
	json_decref(out.json);
}

/* The job list's batched hashes (jobs_to_text_many, written as text) are
 * jobs_to_json's, job by job: settings with a repeated key, a clone and its
 * origin, chained and parallel dependencies, parents_ok, batches of each
 * size (1, 50, 500 ids), a missing id, the extra members. */
TEST(server_jobs_to_text_many_matches_one_by_one)
{
	char msg[256];
	int64_t ids[130], clone;
	struct jobs_span span[130];
	struct buf text;
	struct db *db;
	size_t i, n = 0, m, k;
	json_t *j;

	db = unit_db();
	for (i = 0; i < 128; i++) {
		json_t *s = json_pack("{s:s,s:s,s:s,s:s}", "TEST", i % 2 ? "odd" : "even", "ARCH", "x86_64", "ISO",
				      i % 4 ? "a.iso" : "\"q\"\t\xc3\xa9.iso", "WORKER_CLASS", "qemu_x86_64");
		CHECK_INT(jobs_insert(db, s, 50, 0, 0, &ids[n]), 0);
		if (i % 3 == 0) /* a second WORKER_CLASS row: joined with ',' */
			CHECK_INT(db_exec(db, "INSERT INTO job_settings (job_id, key, value) VALUES (?, 'WORKER_CLASS', 'tap')",
					  "i", ids[n]) >= 0, 1);
		n++;
		json_decref(s);
	}
	CHECK_INT(deps_add(db, ids[0], ids[1], 1, msg, sizeof(msg)), 0);   /* chained */
	CHECK_INT(deps_add(db, ids[0], ids[2], 2, msg, sizeof(msg)), 0);   /* parallel */
	CHECK_INT(deps_add(db, ids[3], ids[1], 3, msg, sizeof(msg)), 0);   /* directly chained */
	CHECK_INT(deps_add(db, ids[120], ids[5], 1, msg, sizeof(msg)), 0); /* across batches of 50 */
	CHECK_INT(db_exec(db, "UPDATE jobs SET state = 'done', result = 'passed' WHERE id = ?", "i", ids[3]) >= 0, 1);
	CHECK_INT(jobs_restart(db, ids[7], &clone, msg, sizeof(msg)), 0);
	ids[n++] = clone;
	ids[n++] = 999999; /* no such job */
	for (k = 0; k < 3; k++) { /* one batch of 1, of 50, then of 500 */
		m = k == 0 ? 1 : k == 1 ? 40 : n;
		buf_init(&text, 1u << 24);
		CHECK_INT(jobs_to_text_many(db, ids, m, false, ",\"modules\":[]", &text, span), 0);
		for (i = 0; i < m; i++) {
			json_t *one = NULL, *many = NULL;
			int rc = jobs_to_json(db, ids[i], false, &one);
			if (ids[i] == 999999) {
				CHECK_INT(rc, ERR_NOT_FOUND);
				CHECK_INT((int)span[i].len, 0);
				continue;
			}
			CHECK_INT(rc, 0);
			CHECK((int)span[i].len > 0);
			many = json_loadb(text.data + span[i].off, span[i].len, 0, NULL);
			CHECK(many != NULL);
			CHECK(json_is_array(json_object_get(many, "modules")));
			CHECK_INT((int)json_array_size(json_object_get(many, "modules")), 0);
			json_object_del(many, "modules");
			if (!json_equal(one, many)) {
				char *a = json_dumps(one, JSON_SORT_KEYS), *b = json_dumps(many, JSON_SORT_KEYS);
				FAIL("job %lld: one by one %s, batched %s", (long long)ids[i], a, b);
			}
			json_decref(one);
			json_decref(many);
		}
		buf_release(&text);
	}
	/* What the hashes hold, not only that both ways agree. */
	CHECK_INT(jobs_to_json(db, ids[0], false, &j), 0);
	CHECK_STR(json_string_value(json_object_get(json_object_get(j, "settings"), "WORKER_CLASS")), "qemu_x86_64,tap");
	CHECK_STR(json_string_value(json_array_get(json_object_get(json_object_get(j, "assets"), "iso"), 0)),
		  "\"q\"\t\xc3\xa9.iso");
	CHECK_INT((int)json_integer_value(json_array_get(json_object_get(json_object_get(j, "children"), "Chained"), 0)),
		  (int)ids[1]);
	CHECK_INT((int)json_integer_value(json_array_get(json_object_get(json_object_get(j, "children"), "Parallel"), 0)),
		  (int)ids[2]);
	CHECK_INT((int)json_integer_value(json_object_get(j, "has_parents")), 0);
	json_decref(j);
	CHECK_INT(jobs_to_json(db, ids[1], false, &j), 0);
	CHECK_INT((int)json_array_size(json_object_get(json_object_get(j, "parents"), "Directly chained")), 1);
	CHECK_INT((int)json_integer_value(json_object_get(j, "has_parents")), 1);
	CHECK_INT((int)json_integer_value(json_object_get(j, "parents_ok")), 0); /* ids[0] has not passed */
	json_decref(j);
	CHECK_INT(jobs_to_json(db, clone, false, &j), 0);
	CHECK_INT((int)json_integer_value(json_object_get(j, "origin_id")), (int)ids[7]);
	json_decref(j);
	buf_init(&text, 1u << 24);
	CHECK_INT(jobs_to_text_many(db, ids, 0, false, NULL, &text, span), 0);
	CHECK_INT((int)text.len, 0);
	buf_release(&text);
	db_free(db);
}
