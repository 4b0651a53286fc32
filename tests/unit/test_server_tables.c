/* SPDX-License-Identifier: MIT */
/* test_server_tables.c - the domain modules behind the admin and comment
 * routes without HTTP: admin table rows with settings (tables.c), job
 * groups (groups.c), job templates (templates.c) and comments
 * (comments.c), with the codes and texts the handlers answer. */
#include <stdlib.h>
#include "unit.h"
#include "server/store/comments.h"
#include "server/db/db.h"
#include "server/store/groups.h"
#include "server/store/jobs.h"
#include "server/store/tables.h"
#include "server/store/templates.h"
#include "server/store/users.h"
#include "util/err.h"

TEST(server_tables_write_list_delete)
{
	struct db *db = unit_db();
	const char *vals[TABLES_MAX_COLS] = { "64bit", "qemu", NULL };
	const char *none[TABLES_MAX_COLS] = { NULL };
	const char *other[TABLES_MAX_COLS] = { "32bit", NULL };
	json_t *settings = json_pack("{s:s}", "QEMUCPU", "host"), *rows;
	char msg[256];
	int64_t id, again;

	CHECK_INT(tables_write(db, TABLES_MACHINES, 0, vals, settings, &id, msg, sizeof(msg)), 0);
	CHECK_INT(tables_write(db, TABLES_MACHINES, 0, vals, settings, &again, msg, sizeof(msg)), ERR_INVALID);
	CHECK_STR(msg, "Machines: an entry with these values already exists");
	CHECK_INT(tables_write(db, TABLES_MACHINES, 99, vals, settings, &again, msg, sizeof(msg)), ERR_NOT_FOUND);
	CHECK_STR(msg, "Machines 99 does not exist");
	CHECK_INT(tables_list(db, TABLES_MACHINES, id, none, &rows, msg, sizeof(msg)), 0);
	CHECK_INT(json_array_size(rows), 1);
	CHECK_STR(json_string_value(json_object_get(json_array_get(rows, 0), "backend")), "qemu");
	CHECK(json_object_get(json_array_get(rows, 0), "description") == NULL); /* NULL columns are left out */
	CHECK_STR(json_string_value(json_object_get(json_array_get(json_object_get(json_array_get(rows, 0), "settings"), 0),
						    "value")), "host");
	json_decref(rows);
	CHECK_INT(tables_list(db, TABLES_MACHINES, 0, other, &rows, msg, sizeof(msg)), 0);
	CHECK_INT(json_array_size(rows), 0); /* filtered by name */
	json_decref(rows);
	CHECK_INT(tables_delete(db, TABLES_MACHINES, id, msg, sizeof(msg)), 0);
	CHECK_INT(tables_list(db, TABLES_MACHINES, id, none, &rows, msg, sizeof(msg)), ERR_NOT_FOUND);
	CHECK_INT(tables_delete(db, TABLES_MACHINES, id, msg, sizeof(msg)), ERR_NOT_FOUND);
	/* A row without settings is deleted too (it once answered 404). */
	CHECK_INT(tables_write(db, TABLES_MACHINES, 0, other, NULL, &id, msg, sizeof(msg)), 0);
	CHECK_INT(tables_delete(db, TABLES_MACHINES, id, msg, sizeof(msg)), 0);
	CHECK_INT(tables_list(db, TABLES_MACHINES, id, none, &rows, msg, sizeof(msg)), ERR_NOT_FOUND);
	CHECK_STR(tables_desc(TABLES_PRODUCTS)->json_key, "Products");
	json_decref(settings);
	db_free(db);
}

TEST(server_groups_and_templates)
{
	struct db *db = unit_db();
	const char *machine[TABLES_MAX_COLS] = { "64bit", "qemu", NULL };
	const char *product[TABLES_MAX_COLS] = { "vigil", "1", "DVD", "x86_64", NULL };
	const char *suite[TABLES_MAX_COLS] = { "boot", NULL };
	json_t *none = json_object(), *list;
	struct templates_new t = { 0 };
	int64_t g, g2, id, row;
	char msg[256], *yaml;

	CHECK_INT(groups_add(db, "main", 0, 40, 0, NULL, &g, msg, sizeof(msg)), 0);
	CHECK_INT(groups_add(db, "main", 0, 40, 0, NULL, &g2, msg, sizeof(msg)), ERR_INVALID);
	CHECK_STR(msg, "a job group named 'main' already exists");
	CHECK_INT(groups_by_name(db, "main", &g2), 0);
	CHECK_INT(g2, g);
	CHECK_INT(groups_list(db, 42, &list, msg, sizeof(msg)), ERR_NOT_FOUND);
	CHECK_STR(msg, "Group 42 does not exist");
	CHECK_INT(tables_write(db, TABLES_MACHINES, 0, machine, none, &row, msg, sizeof(msg)), 0);
	CHECK_INT(tables_write(db, TABLES_PRODUCTS, 0, product, none, &row, msg, sizeof(msg)), 0);
	CHECK_INT(tables_write(db, TABLES_TEST_SUITES, 0, suite, none, &row, msg, sizeof(msg)), 0);

	t.group_name = "main";
	t.machine_name = "64bit";
	t.test_suite_name = "nosuch";
	t.product_id = row;
	CHECK_INT(templates_add(db, &t, &id, msg, sizeof(msg)), ERR_INVALID);
	CHECK_STR(msg, "Erroneous parameters (test_suite_id or test_suite_name missing or unknown)");
	t.test_suite_name = "boot";
	t.product_id = -1; /* given, not an id */
	CHECK_INT(templates_add(db, &t, &id, msg, sizeof(msg)), ERR_INVALID);
	t.product_id = 0;
	t.distri = "vigil";
	t.version = "1";
	t.flavor = "DVD";
	t.arch = "x86_64";
	CHECK_INT(templates_add(db, &t, &id, msg, sizeof(msg)), 0);
	CHECK_INT(templates_list(db, id, &list, msg, sizeof(msg)), 0);
	CHECK_INT(json_integer_value(json_object_get(json_array_get(list, 0), "prio")), 40); /* the group's default */
	json_decref(list);
	CHECK_INT(templates_group_yaml(db, g, &yaml), 0);
	CHECK(yaml && strstr(yaml, "boot"));
	free(yaml);

	/* Once the group holds a YAML document, its templates change only through it. */
	CHECK_INT(groups_set_yaml(db, g, "products: {}\nscenarios: {}\n"), 0);
	CHECK(groups_has_yaml(db, g));
	CHECK_INT(templates_delete(db, id, msg, sizeof(msg)), ERR_INVALID);
	CHECK_INT(templates_add(db, &t, &id, msg, sizeof(msg)), ERR_INVALID);
	CHECK_STR(msg, "Group 1 must be updated through the YAML template (job_templates_scheduling)");
	CHECK_INT(templates_delete(db, 999, msg, sizeof(msg)), ERR_NOT_FOUND);
	json_decref(none);
	db_free(db);
}

TEST(server_comments)
{
	struct db *db = unit_db();
	json_t *s = json_pack("{s:s}", "TEST", "boot"), *list, *one;
	struct comments_author key = { 0, NULL, "KEY" }, other_key = { 0, NULL, "OTHER" };
	int64_t job, cid, other;
	char msg[1024];

	CHECK_INT(jobs_insert(db, s, 50, 0, 0, &job), 0);
	CHECK_INT(comments_add(db, COMMENTS_JOB, 999, "hello", &key, &cid, msg, sizeof(msg)), ERR_NOT_FOUND);
	CHECK_STR(msg, "Job 999 does not exist");
	CHECK_INT(comments_add(db, COMMENTS_JOB, job, "see https://bugzilla.suse.com/show_bug.cgi?id=1", &key, &cid,
			       msg, sizeof(msg)), 0);
	CHECK_INT(comments_list(db, COMMENTS_JOB, job, 10, false, &list, msg, sizeof(msg)), 0);
	CHECK_INT(json_array_size(list), 1);
	CHECK_STR(json_string_value(json_object_get(json_array_get(list, 0), "text")), "see bsc#1");
	CHECK_STR(json_string_value(json_object_get(json_array_get(list, 0), "userName")), "anonymous");
	json_decref(list);
	CHECK_INT(comments_get(db, COMMENTS_JOB, job, cid, &one, msg, sizeof(msg)), 0);
	CHECK_STR(json_string_value(json_object_get(one, "renderedMarkdown")), "<p>see bsc#1</p>\n");
	json_decref(one);

	/* Only the key that wrote a comment changes it. */
	CHECK_INT(comments_edit(db, COMMENTS_JOB, job, cid, "changed", &other_key, msg, sizeof(msg)), ERR_BADSTATE);
	CHECK_STR(msg, "Forbidden (must be author)");
	CHECK_INT(comments_edit(db, COMMENTS_JOB, job, cid, "changed", &key, msg, sizeof(msg)), 0);

	/* force_result applies to finished jobs only, and such a comment stays. */
	CHECK_INT(comments_add(db, COMMENTS_JOB, job, "label:force_result:passed", &key, &other, msg, sizeof(msg)),
		  ERR_INVALID);
	CHECK_STR(msg, "force_result only allowed on finished jobs");
	CHECK_INT(db_exec(db, "UPDATE jobs SET state = 'done' WHERE id = ?", "i", job), 1);
	CHECK_INT(comments_add(db, COMMENTS_JOB, job, "label:force_result:passed", &key, &other, msg, sizeof(msg)), 0);
	CHECK_INT(comments_delete(db, COMMENTS_JOB, job, other, msg, sizeof(msg)), ERR_BADSTATE);
	CHECK_INT(comments_delete_unlabelled(db, other), 0);
	CHECK_INT(comments_delete(db, COMMENTS_JOB, job, cid, msg, sizeof(msg)), 0);
	CHECK_INT(comments_delete(db, COMMENTS_JOB, job, cid, msg, sizeof(msg)), ERR_NOT_FOUND);
	CHECK_INT(comments_owner_check(db, COMMENTS_GROUP, 5, msg, sizeof(msg)), ERR_NOT_FOUND);
	CHECK_STR(msg, "Job group 5 does not exist");
	json_decref(s);
	db_free(db);
}

/* A comment written by a signed-in user carries their name; they edit it
 * from their session or with one of their keys, nobody else does. */
TEST(server_comments_users)
{
	struct db *db = unit_db();
	json_t *s = json_pack("{s:s}", "TEST", "boot"), *list;
	int64_t job, alice, bob, cid, kid;
	char msg[1024];

	CHECK_INT(jobs_insert(db, s, 50, 0, 0, &job), 0);
	CHECK_INT(users_add(db, "alice", AUTH_OPERATOR, "alice-password", msg, sizeof(msg)), 0);
	CHECK_INT(users_add(db, "bob", AUTH_OPERATOR, "bob-password", msg, sizeof(msg)), 0);
	CHECK_INT(db_query_int(db, &alice, "SELECT id FROM users WHERE name = 'alice'", NULL), 0);
	CHECK_INT(db_query_int(db, &bob, "SELECT id FROM users WHERE name = 'bob'", NULL), 0);
	CHECK_INT(db_exec(db, "INSERT INTO api_keys (key, secret, user_id, t_created) VALUES ('AK', 'S', ?, '')", "i",
			  alice), 1);
	CHECK_INT(db_exec(db, "INSERT INTO api_keys (key, secret, t_created) VALUES ('FREE', 'S', '')", NULL), 1);
	kid = db_last_id(db);
	{
		struct comments_author a_session = { alice, "alice", NULL }, b_session = { bob, "bob", NULL };
		struct comments_author a_key = { 0, NULL, "AK" }, free_key = { 0, NULL, "FREE" };
		char want[32];

		CHECK_INT(comments_add(db, COMMENTS_JOB, job, "<b>by alice</b>", &a_session, &cid, msg, sizeof(msg)), 0);
		CHECK_INT(comments_edit(db, COMMENTS_JOB, job, cid, "by bob?", &b_session, msg, sizeof(msg)), ERR_BADSTATE);
		CHECK_INT(comments_edit(db, COMMENTS_JOB, job, cid, "by bob?", &free_key, msg, sizeof(msg)), ERR_BADSTATE);
		CHECK_INT(comments_edit(db, COMMENTS_JOB, job, cid, "alice again", &a_session, msg, sizeof(msg)), 0);
		CHECK_INT(comments_edit(db, COMMENTS_JOB, job, cid, "alice's key", &a_key, msg, sizeof(msg)), 0);
		/* Written with her key: hers too, editable from her session. */
		CHECK_INT(comments_add(db, COMMENTS_JOB, job, "with the key", &a_key, &cid, msg, sizeof(msg)), 0);
		CHECK_INT(comments_edit(db, COMMENTS_JOB, job, cid, "from the page", &a_session, msg, sizeof(msg)), 0);
		/* A key of no user: only that key. */
		CHECK_INT(comments_add(db, COMMENTS_JOB, job, "a program", &free_key, &cid, msg, sizeof(msg)), 0);
		CHECK_INT(comments_edit(db, COMMENTS_JOB, job, cid, "mine now", &a_session, msg, sizeof(msg)), ERR_BADSTATE);
		CHECK_INT(comments_edit(db, COMMENTS_JOB, job, cid, "still", &free_key, msg, sizeof(msg)), 0);
		CHECK_INT(comments_list(db, COMMENTS_JOB, job, 10, false, &list, msg, sizeof(msg)), 0);
		CHECK_INT(json_array_size(list), 3);
		CHECK_STR(json_string_value(json_object_get(json_array_get(list, 0), "userName")), "alice");
		CHECK_STR(json_string_value(json_object_get(json_array_get(list, 0), "text")), "alice's key");
		CHECK_STR(json_string_value(json_object_get(json_array_get(list, 1), "userName")), "alice");
		snprintf(want, sizeof(want), "apikey-%lld", (long long)kid);
		CHECK_STR(json_string_value(json_object_get(json_array_get(list, 2), "userName")), want);
		json_decref(list);
	}
	/* A deleted user's comments stay, editable by nobody. */
	CHECK_INT(users_delete(db, "alice"), 0);
	{
		struct comments_author a_again = { alice, "alice", NULL };
		int64_t first;
		CHECK_INT(db_query_int(db, &first, "SELECT MIN(id) FROM comments", NULL), 0);
		CHECK_INT(db_query_int(db, &cid, "SELECT COUNT(*) FROM comments WHERE user_id IS NULL AND api_key IS NULL",
				       NULL), 0);
		CHECK_INT(cid, 2);
		CHECK_INT(comments_edit(db, COMMENTS_JOB, job, first, "x", &a_again, msg, sizeof(msg)), ERR_BADSTATE);
	}
	json_decref(s);
	db_free(db);
}
