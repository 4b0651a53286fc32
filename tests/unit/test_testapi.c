/* SPDX-License-Identifier: MIT */
/* test_testapi.c - the test API's pure parts: get_var_array's split (as
 * Perl's split /,|;/) and the names --list-testapi prints. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <lualib.h>
#include "unit.h"
#include "runner/runner.h"
#include "runner/lua/testapi.h"

/* The split of s joined with '|', as "n:a|b|c". */
static void split(const char *s, char *out, size_t len)
{
	lua_State *L = luaL_newstate();
	lua_Integer i, n;
	size_t off;

	testapi_split_array(L, s);
	n = (lua_Integer)lua_rawlen(L, -1);
	off = (size_t)snprintf(out, len, "%d:", (int)n);
	for (i = 1; i <= n && off < len; i++) {
		lua_rawgeti(L, -1, i);
		off += (size_t)snprintf(out + off, len - off, "%s%s", i > 1 ? "|" : "", lua_tostring(L, -1));
		lua_pop(L, 1);
	}
	lua_close(L);
}

TEST(testapi_split_array_as_perl)
{
	char b[128];
	split("a,b;c", b, sizeof(b)); CHECK_STR(b, "3:a|b|c");
	split("", b, sizeof(b)); CHECK_STR(b, "0:");
	split(NULL, b, sizeof(b)); CHECK_STR(b, "0:");
	split("one", b, sizeof(b)); CHECK_STR(b, "1:one");
	split("a,,b", b, sizeof(b)); CHECK_STR(b, "3:a||b");   /* inner empty fields stay */
	split("a,b,;", b, sizeof(b)); CHECK_STR(b, "2:a|b");   /* trailing ones go */
	split(",a", b, sizeof(b)); CHECK_STR(b, "2:|a");
	split(",;", b, sizeof(b)); CHECK_STR(b, "0:");
}

TEST(testapi_list_names)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	CHECK(f != NULL);
	CHECK_INT(runner_list_testapi(f), 0);
	fclose(f);
	CHECK(strstr(text, "assert_screen\tfunction\n") != NULL);
	CHECK(strstr(text, "validate_script_output\tfunction\n") != NULL);
	CHECK(strstr(text, "become_root\tfunction\n") != NULL); /* the Lua part loaded */
	CHECK(strstr(text, "serialdev\tvariable\n") != NULL);
	CHECK(strstr(text, "username\tvariable\n") != NULL);
	CHECK(strstr(text, "print\t") == NULL); /* Lua's own globals are not listed */
	free(text);
}

/* hashed_string(s [, count]) in a bare state with the test API. */
static void hashed(const char *s, int count, char *out, size_t len)
{
	lua_State *L = luaL_newstate();
	luaL_openlibs(L);
	testapi_register(NULL, L);
	lua_getglobal(L, "hashed_string");
	lua_pushstring(L, s);
	if (count >= 0)
		lua_pushinteger(L, count);
	lua_call(L, count >= 0 ? 2 : 1, 1);
	snprintf(out, len, "%s", lua_tostring(L, -1));
	lua_close(L);
}

TEST(testapi_hashed_string_as_perl)
{
	char b[64];
	/* Perl: md5_base64 with + -> _ and / -> ~ (values from Digest::MD5). */
	hashed("SRls /tmp30", -1, b, sizeof(b)); CHECK_STR(b, "4WonM");
	hashed("", 22, b, sizeof(b)); CHECK_STR(b, "1B2M2Y8AsgTpgAmY7PhCfg");
	hashed("hello world", 40, b, sizeof(b)); CHECK_STR(b, "XrY7u_Ae7tCTyyK7j1rNww");
	hashed("hello world", 0, b, sizeof(b)); CHECK_STR(b, "");
}
