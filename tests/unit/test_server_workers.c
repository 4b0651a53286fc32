/* SPDX-License-Identifier: MIT */
/* test_server_workers.c - the scheduler without HTTP: WORKER_CLASS
 * matching (AND over the job's classes), priority then id order, a
 * restarted worker's job ended incomplete and cloned once, lost workers,
 * artefact name validation, and where each kind of artefact is stored
 * and listed. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>
#include <sys/stat.h>
#include "unit.h"
#include "server/store/artefacts.h"
#include "server/store/assets.h"
#include "server/db/db.h"
#include "server/store/jobs.h"
#include "server/sched/sched.h"
#include "server/store/workers.h"
#include "util/err.h"
#include "util/file.h"
#include "util/path.h"

TEST(sched_classes_match_all)
{
	const char *one[] = { "qemu_x86_64" };
	const char *two[] = { "qemu_x86_64", "tap" };
	const char *other[] = { "qemu_aarch64" };
	const char *prefix[] = { "qemu_x86" };

	CHECK(sched_classes_match(WORKERS_DEFAULT_CLASS, one, 1));
	CHECK(!sched_classes_match(WORKERS_DEFAULT_CLASS, two, 2));
	CHECK(sched_classes_match("tap,qemu_x86_64", two, 2));
	CHECK(!sched_classes_match(WORKERS_DEFAULT_CLASS, other, 1));
	CHECK(!sched_classes_match(WORKERS_DEFAULT_CLASS, prefix, 1));
	CHECK(!sched_classes_match(WORKERS_DEFAULT_CLASS, one, 0)); /* a job without class runs nowhere */
	CHECK(!sched_classes_match(NULL, one, 1));
}

static int64_t add_job(struct db *db, const char *test, const char *cls, int64_t prio)
{
	json_t *s = json_pack("{s:s,s:s}", "TEST", test, "WORKER_CLASS", cls);
	int64_t id = 0;

	CHECK_INT(jobs_insert(db, s, prio, 0, 0, &id), 0);
	json_decref(s);
	return id;
}

TEST(sched_pick_priority_and_class)
{
	struct db *db = unit_db();
	int64_t w = 0, arm = 0, job = 0;
	int64_t low = add_job(db, "low", "qemu_x86_64", 60);
	int64_t tap = add_job(db, "tap", "qemu_x86_64,tap", 10);
	int64_t first = add_job(db, "first", "qemu_i586", 40);
	int64_t second = add_job(db, "second", "qemu_x86_64", 40);
	int64_t a64 = add_job(db, "arm", "qemu_aarch64", 1);

	CHECK_INT(workers_register(db, "h", 1, NULL, 1000, &w), 0);
	CHECK_INT(workers_register(db, "h", 2, "qemu_aarch64", 1000, &arm), 0);
	/* tap (prio 10) needs a class the worker lacks; then 40s by id; then 60. */
	CHECK_INT(sched_pick(db, w, &job), 0);
	CHECK_INT(job, first);
	CHECK_INT(sched_pick(db, w, &job), 0);
	CHECK_INT(job, second);
	CHECK_INT(sched_pick(db, w, &job), 0);
	CHECK_INT(job, low);
	CHECK_INT(sched_pick(db, w, &job), ERR_NOT_FOUND);
	CHECK_INT(sched_pick(db, arm, &job), 0);
	CHECK_INT(job, a64);
	CHECK(tap > 0);
	db_free(db);
}

TEST(sched_restarted_worker_abandons_job)
{
	struct db *db = unit_db();
	int64_t w = 0, w2 = 0, job = 0, id = add_job(db, "t", "qemu_x86_64", 50), clone = 0;
	json_t *st = json_pack("{s:i}", "worker_id", 1);
	const char *cmd = NULL;
	char msg[256];

	CHECK_INT(workers_register(db, "h", 1, NULL, 1000, &w), 0);
	CHECK_INT(sched_pick(db, w, &job), 0);
	CHECK_INT(workers_job_status(db, job, st, &cmd, msg, sizeof(msg)), 0); /* now running */
	CHECK_INT(workers_register(db, "h", 1, NULL, 1001, &w2), 0);
	CHECK_INT(w2, w);
	CHECK_INT(db_query_int(db, &clone, "SELECT clone_id FROM jobs WHERE id = ? AND state = 'done' AND"
			       " result = 'incomplete'", "i", id), 0);
	CHECK(clone > id);
	/* The clone is scheduled again and goes to the next free worker. */
	CHECK_INT(sched_pick(db, w, &job), 0);
	CHECK_INT(job, clone);
	json_decref(st);
	db_free(db);
}

/* A worker whose request waits in the server (a queued or parked poll) is
 * in contact: not lost however long it waits for its answer (issue 39). */
TEST(sched_worker_waiting_in_server_not_reaped)
{
	struct db *db = unit_db();
	int64_t w = 0, w2 = 0, job = 0, job2 = 0, seen = 0;
	const int64_t contact[] = { 0, 0 };
	int64_t waiting[2];
	int n = -1;

	add_job(db, "t", "qemu_x86_64", 50);
	add_job(db, "t2", "qemu_x86_64", 50);
	CHECK_INT(workers_register(db, "h", 1, NULL, 1000, &w), 0);
	CHECK_INT(workers_register(db, "h", 2, NULL, 1000, &w2), 0);
	CHECK_INT(sched_pick(db, w, &job), 0);
	CHECK_INT(sched_pick(db, w2, &job2), 0);
	waiting[0] = w;
	waiting[1] = w;
	/* Silent 100 s: w's poll waits in the server, w2 has none. */
	CHECK_INT(workers_reap_but(db, 1100, 60, waiting, 2, &n), 0);
	CHECK_INT(n, 1);
	CHECK_INT(db_query_int(db, &seen, "SELECT t_seen_s FROM workers WHERE id = ?", "i", w), 0);
	CHECK_INT(seen, 1100);
	CHECK_INT(db_query_int(db, &seen, "SELECT COUNT(*) FROM jobs WHERE id = ? AND state = 'assigned'"
			       " AND assigned_worker_id = ?", "ii", job, w), 0);
	CHECK_INT(seen, 1);
	CHECK_INT(db_query_int(db, &seen, "SELECT COUNT(*) FROM jobs WHERE id = ? AND state = 'scheduled'", "i", job2),
		  0);
	CHECK_INT(seen, 1);
	/* Its poll answered and gone: silent for the timeout again, it is lost. */
	CHECK_INT(workers_reap_but(db, 1161, 60, contact, 0, &n), 0);
	CHECK_INT(n, 1);
	db_free(db);
}

TEST(sched_lost_worker_reaped_once)
{
	struct db *db = unit_db();
	int64_t w = 0, job = 0, clone = 0, n64 = 0;
	int n = 0;

	add_job(db, "t", "qemu_x86_64", 50);
	CHECK_INT(workers_register(db, "h", 1, NULL, 1000, &w), 0);
	CHECK_INT(sched_pick(db, w, &job), 0);
	/* Assigned but never started: back to the queue, no clone. */
	CHECK_INT(workers_reap(db, 1100, 60, &n), 0);
	CHECK_INT(n, 1);
	CHECK_INT(db_query_int(db, &n64, "SELECT COUNT(*) FROM jobs", ""), 0);
	CHECK_INT(n64, 1);
	CHECK_INT(sched_pick(db, w, &job), 0);
	CHECK_INT(db_exec(db, "UPDATE jobs SET state = 'running' WHERE id = ?", "i", job), 1);
	CHECK_INT(workers_reap(db, 1030, 60, &n), 0); /* seen 30 s ago: alive */
	CHECK_INT(n, 0);
	CHECK_INT(workers_reap(db, 1100, 60, &n), 0);
	CHECK_INT(n, 1);
	CHECK_INT(db_query_int(db, &clone, "SELECT clone_id FROM jobs WHERE id = ? AND result = 'incomplete'"
			       " AND reason LIKE '%lost%'", "i", job), 0);
	CHECK_INT(workers_reap(db, 1200, 60, &n), 0); /* nothing left to reap */
	CHECK_INT(n, 0);
	CHECK_INT(db_query_int(db, &n64, "SELECT COUNT(*) FROM jobs", ""), 0);
	CHECK_INT(n64, 2);
	db_free(db);
}

TEST(artefact_names)
{
	CHECK(artefact_name_valid("boot-1.png", 10));
	CHECK(artefact_name_valid("serial0.txt", 11));
	CHECK(artefact_name_valid("result-a_b+c@d.json", 19));
	CHECK(!artefact_name_valid("", 0));
	CHECK(!artefact_name_valid("..", 2));
	CHECK(!artefact_name_valid("../x", 4));
	CHECK(!artefact_name_valid("a/../../x", 9));
	CHECK(!artefact_name_valid("/etc/passwd", 11));
	CHECK(!artefact_name_valid(".hidden", 7));
	CHECK(!artefact_name_valid("a\0b", 3)); /* NUL inside */
	CHECK(!artefact_name_valid("a b", 3));
	CHECK(!artefact_name_valid("a\\b", 3));
	{
		char long_name[LIMIT_ARTEFACT_NAME + 2];
		memset(long_name, 'a', sizeof(long_name) - 1);
		long_name[sizeof(long_name) - 1] = '\0';
		CHECK(!artefact_name_valid(long_name, strlen(long_name)));
		long_name[LIMIT_ARTEFACT_NAME] = '\0';
		CHECK(artefact_name_valid(long_name, strlen(long_name)));
	}
}

/* A temporary upload in data holding text. New path. */
static char *upload(const char *data, const char *text)
{
	static int n;
	char rel[32], *p;

	snprintf(rel, sizeof(rel), "upload-%d", n++);
	p = path_join(data, rel);
	CHECK_INT(file_write_all(p, text, strlen(text)), 0);
	return p;
}

static ino_t inode(const char *path)
{
	struct stat sb;

	CHECK_INT(stat(path, &sb), 0);
	return sb.st_ino;
}

/* A screenshot, its thumbnail (a .png in .thumbs/) and an uploaded log
 * (ulogs/) land apart; pictures of the same bytes are one file; each list
 * holds its own kind, never a directory. */
TEST(artefact_kinds)
{
	const char *data = unit_tmpdir();
	char *t1 = upload(data, "shot"), *t2 = upload(data, "small"), *t3 = upload(data, "shot"), *t4 = upload(data, "log");
	char *shot = artefact_kind_path(data, 7, ARTEFACT_FILE, "boot-1.png");
	char *thumb = artefact_kind_path(data, 7, ARTEFACT_THUMB, "boot-1.png");
	char *again = artefact_kind_path(data, 7, ARTEFACT_THUMB, "boot-2.png");
	char *ulog = artefact_kind_path(data, 7, ARTEFACT_ULOG, "boot-cmdline");
	json_t *files, *pngs, *ulogs;

	CHECK_INT(artefact_store(data, 7, ARTEFACT_FILE, "boot-1.png", t1), 0);
	CHECK_INT(artefact_store(data, 7, ARTEFACT_THUMB, "boot-1.png", t2), 0);
	CHECK_INT(artefact_store(data, 7, ARTEFACT_THUMB, "boot-2.png", t3), 0);
	CHECK_INT(artefact_store(data, 7, ARTEFACT_ULOG, "boot-cmdline", t4), 0);
	CHECK(strstr(thumb, "/testresults/7/.thumbs/boot-1.png") != NULL);
	CHECK(strstr(ulog, "/testresults/7/ulogs/boot-cmdline") != NULL);
	CHECK(file_exists(shot) && file_exists(thumb) && file_exists(ulog));
	CHECK(!file_exists(t1) && !file_exists(t2) && !file_exists(t3) && !file_exists(t4));
	CHECK(inode(shot) != inode(thumb));
	CHECK(inode(shot) == inode(again)); /* the same bytes, stored once */
	files = artefact_list(data, 7, ARTEFACT_FILE, false);
	pngs = artefact_list(data, 7, ARTEFACT_FILE, true);
	ulogs = artefact_list(data, 7, ARTEFACT_ULOG, false);
	CHECK_INT(json_array_size(files), 0); /* not ulogs/, not .thumbs/ */
	CHECK_INT(json_array_size(pngs), 1);
	CHECK_STR(json_string_value(json_array_get(pngs, 0)), "boot-1.png");
	CHECK_INT(json_array_size(ulogs), 1);
	CHECK_STR(json_string_value(json_array_get(ulogs, 0)), "boot-cmdline");
	json_decref(files);
	files = artefact_list(data, 8, ARTEFACT_FILE, false);
	CHECK_INT(json_array_size(files), 0); /* no such job: empty */
	json_decref(files);
	json_decref(pngs);
	json_decref(ulogs);
	free(t1);
	free(t2);
	free(t3);
	free(t4);
	free(shot);
	free(thumb);
	free(again);
	free(ulog);
}

/* Issue 17: a directory link planted under the data directory that points
 * out of it made an upload land outside. Artefacts and assets whose
 * directory leads out are refused, and the upload stays where it was. */
TEST(uploads_stay_in_the_data_dir)
{
	const char *tmp = unit_tmpdir();
	char *data = path_join(tmp, "data"), *outside = path_join(tmp, "outside");
	char *res = path_join(data, "testresults"), *link8 = path_join(data, "testresults/8");
	char *factory = path_join(data, "factory"), *iso = path_join(data, "factory/iso");
	char *t1, *t2, *t3, *inside;
	struct db *db = unit_db();
	int64_t id = 0;

	CHECK_INT(file_mkdir_p(res, 0700), 0);
	CHECK_INT(file_mkdir_p(factory, 0700), 0);
	CHECK_INT(file_mkdir_p(outside, 0700), 0);
	CHECK_INT(symlink(outside, link8), 0);
	CHECK_INT(symlink(outside, iso), 0);
	t1 = upload(data, "log"), t2 = upload(data, "disk"), t3 = upload(data, "fine");
	CHECK_INT(artefact_store(data, 8, ARTEFACT_ULOG, "boot-cmdline", t1), ERR_INVALID);
	CHECK_INT(assets_store(db, data, "iso", "planted.iso", t2, NULL, 8, &id), ERR_INVALID);
	CHECK(file_exists(t1) && file_exists(t2));
	{
		char *o1 = path_join(outside, "ulogs/boot-cmdline"), *o2 = path_join(outside, "planted.iso");
		CHECK(!file_exists(o1) && !file_exists(o2));
		free(o1);
		free(o2);
	}
	CHECK_INT(file_dir_within(data, outside), ERR_INVALID);
	CHECK_INT(file_dir_within(data, res), 0);
	CHECK_INT(file_dir_within(data, data), 0);
	/* a link that stays inside is followed */
	inside = path_join(data, "testresults/9");
	CHECK_INT(symlink(res, inside), 0);
	CHECK_INT(artefact_store(data, 9, ARTEFACT_ULOG, "ok-log", t3), 0);
	free(data), free(outside), free(res), free(link8), free(factory), free(iso), free(inside);
	free(t1), free(t2), free(t3);
	db_free(db);
}

TEST(workers_caps_listed_as_openqa_properties)
{
	struct db *db = unit_db();
	int64_t a = 0, b = 0;
	json_t *l, *p;

	CHECK_INT(workers_register(db, "h", 1, NULL, 1000, &a), 0);
	CHECK_INT(workers_set_caps(db, a, "aarch64", 16384), 0);
	CHECK_INT(workers_register(db, "h", 2, NULL, 1000, &b), 0);
	CHECK_INT(workers_set_caps(db, b, NULL, -1), 0);
	l = workers_list_json(db, 1001, 60);
	p = json_object_get(json_array_get(json_object_get(l, "workers"), 0), "properties");
	CHECK_STR(json_string_value(json_object_get(p, "CPU_ARCH")), "aarch64");
	CHECK_STR(json_string_value(json_object_get(p, "MEM_MAX")), "16384");
	p = json_object_get(json_array_get(json_object_get(l, "workers"), 1), "properties");
	CHECK(json_object_get(p, "CPU_ARCH") == NULL && json_object_get(p, "MEM_MAX") == NULL);
	json_decref(l);
	/* A registration again replaces them. */
	CHECK_INT(workers_register(db, "h", 1, NULL, 1001, &a), 0);
	CHECK_INT(workers_set_caps(db, a, "x86_64", 2048), 0);
	l = workers_list_json(db, 1001, 60);
	p = json_object_get(json_array_get(json_object_get(l, "workers"), 0), "properties");
	CHECK_STR(json_string_value(json_object_get(p, "CPU_ARCH")), "x86_64");
	CHECK_STR(json_string_value(json_object_get(p, "MEM_MAX")), "2048");
	CHECK_STR(json_string_value(json_object_get(json_array_get(json_object_get(l, "workers"), 0), "status")), "idle");
	json_decref(l);
	/* Not seen for the timeout: dead, as openQA lists it. */
	l = workers_list_json(db, 1062, 60);
	CHECK_STR(json_string_value(json_object_get(json_array_get(json_object_get(l, "workers"), 0), "status")), "dead");
	json_decref(l);
	db_free(db);
}
