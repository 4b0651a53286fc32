/* SPDX-License-Identifier: MIT */
/* test_server_admin.c - what the admin pages read, without HTTP: needles.c
 * (a finished job's result-*.json recorded as each needle's last match and
 * last sighting, a later job taking over, malformed files skipped, the
 * keyset pages of the list in each order) and the jobs using an asset in
 * the assets list (assets.c). */
#include <stdio.h>
#include <stdlib.h>
#include "unit.h"
#include "server/store/artefacts.h"
#include "server/store/assets.h"
#include "server/db/db.h"
#include "server/store/jobs.h"
#include "server/store/needles.h"
#include "util/err.h"
#include "util/file.h"
#include "util/path.h"

/* A done job of DISTRI distri finished at when. */
static int64_t done_job(struct db *db, const char *distri, const char *when)
{
	json_t *s = json_pack("{s:s,s:s}", "TEST", "boot", "DISTRI", distri);
	int64_t id;

	CHECK_INT(jobs_insert(db, s, 50, 0, 0, &id), 0);
	CHECK_INT(db_exec(db, "UPDATE jobs SET state = 'done', result = 'passed', t_finished = ? WHERE id = ?", "ti",
			  when, id), 1);
	json_decref(s);
	return id;
}

static void put_result(int64_t job, const char *name, const char *text)
{
	char *dir = artefact_path(unit_tmpdir(), job, NULL), *path = artefact_path(unit_tmpdir(), job, name);

	CHECK_INT(file_mkdir_p(dir, 0700), 0);
	CHECK_INT(file_write_all(path, text, strlen(text)), 0);
	free(dir);
	free(path);
}

static const json_t *row(const json_t *list, const char *name)
{
	size_t i;
	const json_t *r;

	json_array_foreach(json_object_get(list, "needles"), i, r)
		if (!strcmp(json_string_value(json_object_get(r, "name")), name))
			return r;
	return NULL;
}

static const char *str(const json_t *r, const char *key)
{
	return json_string_value(json_object_get(r, key));
}

static long long num(const json_t *r, const char *key)
{
	return json_integer_value(json_object_get(r, key));
}

TEST(server_needles_record_job)
{
	struct db *db = unit_db();
	int64_t j1 = done_job(db, "grub", "2024-05-01T10:00:00"), j2 = done_job(db, "grub", "2024-05-02T11:00:00");
	int64_t other = done_job(db, "shell", "2024-05-03T12:00:00");
	const json_t *r;
	json_t *list;
	char msg[256];

	/* boot matched grub-menu (rivals: grub-old), then failed a check where
	 * grub-echo was only a candidate; a softfail match counts as a match. */
	put_result(j1, "result-boot.json",
		   "{\"result\":\"ok\",\"details\":["
		   "{\"result\":\"ok\",\"needle\":\"grub-menu\",\"json\":\"/pool/needles/grub-menu.json\","
		   " \"needles\":[{\"name\":\"grub-old\",\"json\":\"/pool/needles/grub-old.json\"}]},"
		   "{\"result\":\"fail\",\"needles\":[{\"name\":\"grub-echo\",\"json\":\"grub-echo.json\"}]},"
		   "{\"result\":\"softfail\",\"needle\":\"grub-workaround\",\"needles\":[]},"
		   "{\"result\":\"ok\",\"title\":\"type_string\"}]}");
	put_result(j1, "result-broken.json", "{not json");
	put_result(j1, "vars.json", "{\"details\":[{\"result\":\"ok\",\"needle\":\"not-a-result\"}]}");
	CHECK_INT(needles_record_job(db, unit_tmpdir(), j1), 0);
	CHECK_INT(needles_list(db, NEEDLES_BY_NAME, NULL, NULL, 100, &list, msg, sizeof(msg)), 0);
	CHECK_INT(json_array_size(json_object_get(list, "needles")), 4);
	CHECK(json_is_null(json_object_get(list, "next")));
	CHECK(row(list, "not-a-result") == NULL);
	CHECK((r = row(list, "grub-menu")) != NULL);
	CHECK_STR(str(r, "distri"), "grub");
	CHECK_STR(str(r, "file"), "grub-menu.json");
	CHECK_INT(num(r, "last_match_job"), j1);
	CHECK_STR(str(r, "last_match_module"), "boot");
	CHECK_INT(num(r, "last_match_step"), 1);
	CHECK_STR(str(r, "last_match"), "2024-05-01T10:00:00");
	CHECK_STR(str(r, "last_seen"), "2024-05-01T10:00:00");
	CHECK((r = row(list, "grub-old")) != NULL);
	CHECK(json_is_null(json_object_get(r, "last_match")));
	CHECK(json_is_null(json_object_get(r, "last_match_job")));
	CHECK_INT(num(r, "last_seen_job"), j1);
	CHECK((r = row(list, "grub-echo")) != NULL && json_is_null(json_object_get(r, "last_match")));
	CHECK((r = row(list, "grub-workaround")) != NULL);
	CHECK_INT(num(r, "last_match_job"), j1);
	CHECK_INT(num(r, "last_match_step"), 3);
	json_decref(list);

	/* A later job sees grub-menu only as a rival: its last match stays j1's. */
	put_result(j2, "result-menu.json",
		   "{\"details\":[{\"result\":\"ok\",\"needle\":\"grub-old\",\"needles\":[{\"name\":\"grub-menu\"}]}]}");
	CHECK_INT(needles_record_job(db, unit_tmpdir(), j2), 0);
	/* The same name in another distribution is another needle. */
	put_result(other, "result-login.json", "{\"details\":[{\"result\":\"ok\",\"needle\":\"grub-menu\"}]}");
	CHECK_INT(needles_record_job(db, unit_tmpdir(), other), 0);
	CHECK_INT(needles_list(db, NEEDLES_BY_LAST_MATCH, NULL, NULL, 100, &list, msg, sizeof(msg)), 0);
	CHECK_INT(json_array_size(json_object_get(list, "needles")), 5);
	r = json_array_get(json_object_get(list, "needles"), 0); /* newest match first */
	CHECK_STR(str(r, "distri"), "shell");
	r = json_array_get(json_object_get(list, "needles"), 1);
	CHECK_STR(str(r, "name"), "grub-old");
	CHECK_INT(num(r, "last_match_job"), j2);
	CHECK_STR(str(r, "last_match_module"), "menu");
	r = json_array_get(json_object_get(list, "needles"), 4); /* never matched: last */
	CHECK_STR(str(r, "name"), "grub-echo");
	json_decref(list);
	CHECK_INT(needles_list(db, NEEDLES_BY_LAST_SEEN, NULL, "menu", 100, &list, msg, sizeof(msg)), 0);
	CHECK_INT(json_array_size(json_object_get(list, "needles")), 2);
	r = json_array_get(json_object_get(list, "needles"), 1);
	CHECK_STR(str(r, "distri"), "grub");
	CHECK_INT(num(r, "last_seen_job"), j2);
	CHECK_INT(num(r, "last_match_job"), j1);
	json_decref(list);

	/* No such job; a job without results records nothing. */
	CHECK_INT(needles_record_job(db, unit_tmpdir(), 999), ERR_NOT_FOUND);
	CHECK_INT(needles_record_job(db, unit_tmpdir(), done_job(db, "grub", "2024-06-01T00:00:00")), 0);
	db_free(db);
}

/* Every order pages through all rows once, in order, whatever the page size. */
TEST(server_needles_list_pages)
{
	static const enum needles_sort sorts[] = { NEEDLES_BY_LAST_MATCH, NEEDLES_BY_LAST_SEEN, NEEDLES_BY_NAME };
	struct db *db = unit_db();
	char msg[256], *after = NULL;
	json_t *list;
	size_t s;
	int i;

	/* 7 needles: matched at 3 distinct times (ties included) and 2 never. */
	for (i = 0; i < 7; i++) {
		char name[16], t[32];
		snprintf(name, sizeof(name), "n%d", (i * 5) % 7);
		snprintf(t, sizeof(t), "2024-01-0%dT00:00:00", 1 + i % 3);
		CHECK_INT(db_exec(db, "INSERT INTO needles (distri, name, last_seen_time, last_matched_time)"
				  " VALUES ('d', ?, ?, ?)", "ttt", name, t, i < 5 ? t : ""), 1);
	}
	for (s = 0; s < sizeof(sorts) / sizeof(sorts[0]); s++) {
		long page;
		for (page = 1; page <= 8; page++) {
			char prev[64] = "", seen[8] = { 0 };
			int total = 0;
			free(after);
			after = NULL;
			for (;;) {
				const json_t *r, *next;
				size_t k;
				CHECK_INT(needles_list(db, sorts[s], after, NULL, page, &list, msg, sizeof(msg)), 0);
				json_array_foreach(json_object_get(list, "needles"), k, r) {
					const char *key = sorts[s] == NEEDLES_BY_NAME	      ? str(r, "name")
							  : sorts[s] == NEEDLES_BY_LAST_SEEN ? str(r, "last_seen")
											     : str(r, "last_match");
					int n = str(r, "name")[1] - '0';
					key = key ? key : "";
					if (total && sorts[s] == NEEDLES_BY_NAME)
						CHECK(strcmp(prev, key) < 0);
					else if (total)
						CHECK(strcmp(prev, key) >= 0);
					snprintf(prev, sizeof(prev), "%s", key);
					CHECK(!seen[n]);
					seen[n] = 1;
					total++;
				}
				next = json_object_get(list, "next");
				free(after);
				after = json_is_string(next) ? strdup(json_string_value(next)) : NULL;
				json_decref(list);
				if (!after)
					break;
			}
			CHECK_INT(total, 7);
		}
	}
	free(after);
	CHECK_INT(needles_list(db, NEEDLES_BY_NAME, "x", NULL, 10, &list, msg, sizeof(msg)), ERR_INVALID);
	CHECK_INT(needles_list(db, NEEDLES_BY_NAME, "0:a", NULL, 10, &list, msg, sizeof(msg)), ERR_INVALID);
	CHECK_INT(needles_list(db, NEEDLES_BY_NAME, NULL, NULL, 0, &list, msg, sizeof(msg)), ERR_INVALID);
	db_free(db);
}

TEST(server_assets_list_usage)
{
	struct db *db = unit_db();
	const char *data = unit_tmpdir();
	char *dir = path_join(data, "factory/iso"), *file = NULL;
	json_t *s, *list;
	const json_t *a;
	int64_t id, jobs[3];
	int i;

	CHECK_INT(file_mkdir_p(dir, 0700), 0);
	file = path_join(dir, "my.iso");
	CHECK_INT(file_write_all(file, "1234567", 7), 0);
	CHECK_INT(assets_register(db, data, "iso", "my.iso", NULL, 0, &id), 0);
	/* Two jobs name it as ISO and ISO_2; one names it as an HDD (another type). */
	for (i = 0; i < 3; i++) {
		s = json_pack("{s:s,s:s}", "TEST", "t", i == 0 ? "ISO" : i == 1 ? "ISO_2" : "HDD_1", "my.iso");
		CHECK_INT(jobs_insert(db, s, 50, 0, 0, &jobs[i]), 0);
		json_decref(s);
	}
	list = assets_list_json(db, 10, 0);
	a = json_array_get(json_object_get(list, "assets"), 0);
	CHECK_INT(json_integer_value(json_object_get(a, "size")), 7);
	CHECK_INT(json_integer_value(json_object_get(a, "jobs")), 2);
	CHECK_INT(json_array_size(json_object_get(a, "last_jobs")), 2);
	CHECK_INT(json_integer_value(json_array_get(json_object_get(a, "last_jobs"), 0)), jobs[1]); /* newest first */
	CHECK_INT(json_integer_value(json_array_get(json_object_get(a, "last_jobs"), 1)), jobs[0]);
	json_decref(list);
	free(dir);
	free(file);
	db_free(db);
}
