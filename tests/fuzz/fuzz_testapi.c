/* SPDX-License-Identifier: MIT */
/* fuzz_testapi.c - the Lua<->C boundary of the test API: byte 0 picks one
 * of the functions that run without a VM (variables, hashed_string,
 * match_has_tag, the URLs, the console table) or probe(), which hands its
 * argument to the option helpers every VM function uses (testapi_opt_*,
 * testapi_timeout); the rest is the argument list, run as the Lua chunk
 * "return NAME(ARGS)" in a state with the base, string, table and math
 * libraries only and an instruction limit. Lua errors are the expected
 * answer to bad arguments; a crash, leak or sanitizer report fails the
 * target. The VM functions themselves need a running QEMU (not here). */
#include <stdbool.h>
#include <stdio.h>
#include <lauxlib.h>
#include <lualib.h>
#include "fuzz.h"
#include "runner/core/console.h"
#include "runner/core/job.h"
#include "runner/lua/testapi.h"
#include "util/log.h"

static const char *const names[] = {
	"probe", "get_var", "get_required_var", "set_var", "check_var", "get_var_array", "check_var_array",
	"hashed_string", "match_has_tag", "autoinst_url", "data_url", "add_console", "current_console",
	"is_serial_terminal",
};

static int probe(lua_State *L)
{
	struct runner *r = testapi_runner(L);

	(void)testapi_opt_number(L, 1, "timeout", 30);
	(void)testapi_opt_bool(L, 1, "no_wait", 0);
	(void)testapi_opt_string(L, 1, "name", "x");
	lua_pushnumber(L, testapi_timeout(L, r, 1, 30));
	return 1;
}

static void limit_hook(lua_State *L, lua_Debug *ar)
{
	(void)ar;
	luaL_error(L, "instruction limit");
}

static void open_lib(lua_State *L, const char *name, lua_CFunction fn)
{
	luaL_requiref(L, name, fn, 1);
	lua_pop(L, 1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bool once;
	struct runner *r;
	lua_State *L;
	const char *name;
	char *chunk;
	size_t n, pre;

	if (!once) {
		once = true;
		log_set_stderr_level(LOG_ERR);
	}
	if (size < 1 || size > 4096)
		return 0;
	if (!(r = calloc(1, sizeof(*r))) || console_set_init(&r->consoles) || !(L = luaL_newstate()))
		abort();
	open_lib(L, LUA_GNAME, luaopen_base);
	open_lib(L, LUA_STRLIBNAME, luaopen_string);
	open_lib(L, LUA_TABLIBNAME, luaopen_table);
	open_lib(L, LUA_MATHLIBNAME, luaopen_math);
	lua_pushnil(L);
	lua_setglobal(L, "load"); /* no code from strings, no files */
	lua_pushnil(L);
	lua_setglobal(L, "dofile");
	lua_pushnil(L);
	lua_setglobal(L, "loadfile");
	testapi_register(r, L);
	lua_register(L, "probe", probe);
	lua_sethook(L, limit_hook, LUA_MASKCOUNT, 100000);
	name = names[data[0] % (sizeof(names) / sizeof(names[0]))];
	pre = strlen("return (") + strlen(name);
	n = pre + (size - 1) + 1; /* the arguments and ")" */
	if (!(chunk = malloc(n + 1)))
		abort();
	snprintf(chunk, pre + 1, "return %s(", name);
	memcpy(chunk + pre, data + 1, size - 1);
	chunk[n - 1] = ')';
	chunk[n] = '\0';
	if (luaL_loadbufferx(L, chunk, n, "fuzz", "t") == LUA_OK)
		(void)lua_pcall(L, 0, LUA_MULTRET, 0);
	free(chunk);
	lua_close(L);
	console_set_release(&r->consoles);
	vars_release(&r->vars);
	json_decref(r->last_match);
	free(r);
	return 0;
}
