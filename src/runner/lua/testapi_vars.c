/* SPDX-License-Identifier: MIT */
/* testapi_vars.c - the job's variables and data in the Lua test API:
 * get_var_array / check_var_array, os-autoinst's exported variables
 * (serialdev, username, password, realname, cmd) and the live vars table,
 * and the test's data files (get_test_data, save_tmp_file). get_var,
 * set_var and check_var live in testapi.c. */
#define LOG_MODULE "testapi"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "runner/core/vars.h"
#include "runner/lua/testapi.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/file.h"
#include "util/limits.h"
#include "util/log.h"
#include "util/path.h"
#include "util/banned.h" /* last: after every system header */

#define MAX_ARRAY_ITEMS 4096

void testapi_split_array(lua_State *L, const char *s)
{
	lua_Integer n = 0;
	const char *p = s ? s : "";

	lua_newtable(L);
	if (!*p)
		return;
	/* Perl's split drops trailing empty fields, keeps inner ones. */
	for (;;) {
		size_t len = strcspn(p, ",;");
		if (n >= MAX_ARRAY_ITEMS)
			break;
		lua_pushlstring(L, p, len);
		lua_rawseti(L, -2, ++n);
		if (!p[len])
			break;
		p += len + 1;
	}
	while (n > 0) {
		lua_rawgeti(L, -1, n);
		if (lua_rawlen(L, -1) > 0) {
			lua_pop(L, 1);
			break;
		}
		lua_pop(L, 1);
		lua_pushnil(L);
		lua_rawseti(L, -2, n--);
	}
}

/* get_var_array(var, default): the value split on ',' or ';' (the default's
 * when the variable is empty or unset). */
static int l_get_var_array(lua_State *L)
{
	struct runner *r = testapi_runner(L);
	const char *v = vars_get(&r->vars, luaL_checkstring(L, 1));
	const char *dflt = luaL_optstring(L, 2, "");

	testapi_split_array(L, v);
	if (lua_rawlen(L, -1) == 0) {
		lua_pop(L, 1);
		testapi_split_array(L, dflt);
	}
	return 1;
}

static int l_check_var_array(lua_State *L)
{
	struct runner *r = testapi_runner(L);
	const char *v = vars_get(&r->vars, luaL_checkstring(L, 1));
	const char *want = luaL_checkstring(L, 2);
	lua_Integer i, n;

	testapi_split_array(L, v);
	n = (lua_Integer)lua_rawlen(L, -1);
	for (i = 1; i <= n; i++) {
		lua_rawgeti(L, -1, i);
		if (!strcmp(lua_tostring(L, -1), want)) {
			lua_pushboolean(L, 1);
			return 1;
		}
		lua_pop(L, 1);
	}
	lua_pushboolean(L, 0);
	return 1;
}

/* get_test_data(path): CASEDIR/data/path, or nil when missing. */
static int l_get_test_data(lua_State *L)
{
	struct runner *r = testapi_runner(L);
	const char *rel = luaL_checkstring(L, 1);
	const char *casedir = vars_get(&r->vars, "CASEDIR");
	char *data = NULL, *path = NULL;
	struct buf b;
	int rc;

	if (!casedir)
		return luaL_error(L, "Need variable CASEDIR");
	if (strstr(rel, ".."))
		return luaL_error(L, "get_test_data: '%s' leaves the data directory", rel);
	data = path_join(casedir, "data");
	path = data ? path_join(data, rel) : NULL;
	free(data);
	buf_init(&b, LIMIT_LUA_FILE);
	rc = path ? file_read_all(path, &b) : ERR_NOMEM;
	if (rc) {
		log_info("get_test_data: file doesn't exist: %s", path ? path : rel);
		lua_pushnil(L);
	} else {
		lua_pushlstring(L, b.data ? b.data : "", b.len);
	}
	free(path);
	buf_release(&b);
	return 1;
}

/* save_tmp_file(relpath, content): kept under the results' files/ with
 * the path's name, returns that file's path. */
static int l_save_tmp_file(lua_State *L)
{
	struct runner *r = testapi_runner(L);
	const char *rel = luaL_checkstring(L, 1);
	size_t len;
	const char *content = luaL_checklstring(L, 2, &len);
	char *dir = path_join(r->out_dir, "files"), *path = NULL, *sub = NULL;
	int rc;

	if (strstr(rel, "..") || rel[0] == '/') {
		free(dir);
		return luaL_error(L, "save_tmp_file: '%s' must be a relative path", rel);
	}
	path = dir ? path_join(dir, rel) : NULL;
	sub = path ? path_dir(path) : NULL;
	rc = sub ? file_mkdir_p(sub, 0755) : ERR_NOMEM;
	if (!rc)
		rc = file_write_all(path, content, len);
	if (!rc)
		lua_pushstring(L, path);
	free(dir);
	free(sub);
	free(path);
	if (rc)
		return luaL_error(L, "save_tmp_file '%s': %s", rel, err_str(rc));
	return 1;
}

/* The vars table: os-autoinst 4.6's testapi exports %vars (upstream's
 * Lua use("testapi") copies it into a global table); here it is the job's
 * variables themselves, live: vars.NAME reads as get_var, vars.NAME = v
 * sets as set_var (nil deletes), pairs(vars) lists them sorted. */
static int l_vars_index(lua_State *L)
{
	struct runner *r = testapi_runner(L);
	const char *v = lua_type(L, 2) == LUA_TSTRING ? vars_get(&r->vars, lua_tostring(L, 2)) : NULL;

	if (v)
		lua_pushstring(L, v);
	else
		lua_pushnil(L);
	return 1;
}

static int l_vars_newindex(lua_State *L)
{
	struct runner *r = testapi_runner(L);
	const char *k = luaL_checkstring(L, 2);
	const char *v = lua_isnil(L, 3) ? NULL : luaL_tolstring(L, 3, NULL);

	if (!v) {
		json_object_del(r->vars.obj, k);
		return 0;
	}
	if (vars_set(&r->vars, k, v))
		return luaL_error(L, "vars: settings key '%s' is invalid", k);
	return 0;
}

static int by_key(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* pairs(vars)'s iterator: upvalues the sorted names, the values, the
 * position. */
static int l_vars_next(lua_State *L)
{
	lua_Integer i = lua_tointeger(L, lua_upvalueindex(3)) + 1;

	lua_pushinteger(L, i);
	lua_replace(L, lua_upvalueindex(3));
	if (lua_rawgeti(L, lua_upvalueindex(1), i) == LUA_TNIL)
		return 1;
	lua_pushvalue(L, -1);
	lua_rawget(L, lua_upvalueindex(2));
	return 2;
}

/* pairs(vars): every variable in name order, as they were when the loop
 * started. */
static int l_vars_pairs(lua_State *L)
{
	struct runner *r = testapi_runner(L);
	size_t n = json_object_size(r->vars.obj), i = 0;
	const char **keys = calloc(n ? n : 1, sizeof(*keys)), *k;
	json_t *v;

	if (!keys)
		return luaL_error(L, "vars: out of memory");
	json_object_foreach(r->vars.obj, k, v)
		keys[i++] = k;
	qsort(keys, i, sizeof(*keys), by_key);
	lua_createtable(L, (int)i, 0);
	lua_createtable(L, 0, (int)i);
	for (n = 0; n < i; n++) {
		lua_pushstring(L, keys[n]);
		lua_rawseti(L, -3, (lua_Integer)n + 1);
		lua_pushstring(L, json_string_value(json_object_get(r->vars.obj, keys[n])));
		lua_setfield(L, -2, keys[n]);
	}
	free(keys);
	lua_pushinteger(L, 0);
	lua_pushcclosure(L, l_vars_next, 3);
	return 1;
}

static const luaL_Reg vars_api[] = {
	{ "get_var_array", l_get_var_array },
	{ "check_var_array", l_check_var_array },
	{ "get_test_data", l_get_test_data },
	{ "save_tmp_file", l_save_tmp_file },
	{ NULL, NULL },
};

void testapi_register_vars(struct runner *r, lua_State *L)
{
	static const char *const from_vars[][2] = {
		{ "username", "USERNAME" }, { "password", "PASSWORD" }, { "realname", "REALNAME" },
	};
	const char *sd = r ? vars_get(&r->vars, "SERIALDEV") : NULL;
	size_t i;

	lua_pushglobaltable(L);
	luaL_setfuncs(L, vars_api, 0);
	lua_pop(L, 1);
	/* os-autoinst's exported variables: $serialdev, $username, $password,
	 * $realname, %cmd. Unset stays nil (undef): a distribution sets them. */
	lua_pushstring(L, sd && *sd ? sd : "ttyS0");
	lua_setglobal(L, "serialdev");
	for (i = 0; i < sizeof(from_vars) / sizeof(from_vars[0]); i++) {
		const char *v = r ? vars_get(&r->vars, from_vars[i][1]) : NULL;
		if (v)
			lua_pushstring(L, v);
		else
			lua_pushnil(L);
		lua_setglobal(L, from_vars[i][0]);
	}
	lua_newtable(L);
	lua_setglobal(L, "cmd");
	lua_newtable(L);
	lua_newtable(L);
	lua_pushcfunction(L, l_vars_index);
	lua_setfield(L, -2, "__index");
	lua_pushcfunction(L, l_vars_newindex);
	lua_setfield(L, -2, "__newindex");
	lua_pushcfunction(L, l_vars_pairs);
	lua_setfield(L, -2, "__pairs");
	lua_setmetatable(L, -2);
	lua_setglobal(L, "vars");
}
