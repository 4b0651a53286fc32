/* SPDX-License-Identifier: MIT */
/* test_vars.c - the job variable store: files, assignments, expansion. */
#include <stdlib.h>
#include "unit.h"
#include "runner/core/vars.h"
#include "util/file.h"
#include "util/path.h"

static char *write_tmp(const char *name, const char *text)
{
	char *p = path_join(unit_tmpdir(), name);
	CHECK_INT(file_write_all(p, text, strlen(text)), 0);
	return p;
}

TEST(vars_files_and_precedence)
{
	struct vars v;
	char err[256];
	char *p = write_tmp("vars.json", "{\"ISO\":\"a.iso\",\"QEMURAM\":2048,\"NOVIDEO\":true,\"X\":1.5}");

	CHECK_INT(vars_init(&v), 0);
	CHECK_INT(vars_set_assignment(&v, "iso=b.iso", err, sizeof(err)), 0);
	CHECK_INT(vars_load_file(&v, p, 1, err, sizeof(err)), 0);
	CHECK_STR(vars_get(&v, "ISO"), "b.iso"); /* the assignment wins */
	CHECK_STR(vars_get(&v, "QEMURAM"), "2048");
	CHECK_INT(vars_get_long(&v, "QEMURAM", 0), 2048);
	CHECK_STR(vars_get(&v, "NOVIDEO"), "1");
	CHECK_NEAR(vars_get_double(&v, "X", 0), 1.5, 1e-9);
	CHECK_INT(vars_get_bool(&v, "NOVIDEO", 0), 1);
	CHECK_INT(vars_get_long(&v, "MISSING", 7), 7);
	vars_release(&v);
	free(p);
}

TEST(vars_bad_input)
{
	struct vars v;
	char err[256];
	char *bad = write_tmp("bad.json", "{\"ISO\": ");
	char *arr = write_tmp("arr.json", "[1,2]");
	char *key = write_tmp("key.json", "{\"lower\": \"x\"}");
	char *obj = write_tmp("obj.json", "{\"ISO\": {\"a\": 1}}");

	CHECK_INT(vars_init(&v), 0);
	CHECK(vars_load_file(&v, bad, 0, err, sizeof(err)) != 0);
	CHECK(strstr(err, "bad.json") != NULL);
	CHECK(vars_load_file(&v, arr, 0, err, sizeof(err)) != 0);
	CHECK(strstr(err, "object") != NULL);
	CHECK(vars_load_file(&v, key, 0, err, sizeof(err)) != 0);
	CHECK(strstr(err, "'lower'") != NULL);
	CHECK(vars_load_file(&v, obj, 0, err, sizeof(err)) != 0);
	CHECK(strstr(err, "'ISO'") != NULL);
	CHECK(vars_set_assignment(&v, "novalue", err, sizeof(err)) != 0);
	CHECK(vars_set_assignment(&v, "=x", err, sizeof(err)) != 0);
	CHECK(vars_set_assignment(&v, "a-b=x", err, sizeof(err)) != 0);
	CHECK(vars_get(&v, "ISO") == NULL);
	vars_release(&v);
	free(bad);
	free(arr);
	free(key);
	free(obj);
}

TEST(vars_expansion)
{
	struct vars v;
	char err[256];

	setenv("VIGIL_TEST_DIR", "/images", 1);
	CHECK_INT(vars_init(&v), 0);
	CHECK_INT(vars_set(&v, "ISO", "${VIGIL_TEST_DIR}/grub.iso"), 0);
	CHECK_INT(vars_set(&v, "NAME", "x"), 0);
	CHECK_INT(vars_set(&v, "OTHER", "${NAME}-y"), 0);
	CHECK_INT(vars_expand(&v, err, sizeof(err)), 0);
	CHECK_STR(vars_get(&v, "ISO"), "/images/grub.iso");
	CHECK_STR(vars_get(&v, "OTHER"), "x-y");
	CHECK_INT(vars_set(&v, "BAD", "${NOPE_NOT_SET}"), 0);
	CHECK(vars_expand(&v, err, sizeof(err)) != 0);
	CHECK(strstr(err, "NOPE_NOT_SET") != NULL);
	vars_release(&v);
}

TEST(vars_keys)
{
	CHECK(vars_valid_key("HDD_1"));
	CHECK(vars_valid_key("LIST[]"));
	CHECK(!vars_valid_key("hdd"));
	CHECK(!vars_valid_key(""));
	CHECK(!vars_valid_key("A B"));
}
