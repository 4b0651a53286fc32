/* SPDX-License-Identifier: MIT */
/* testapi_urls.c - the Lua test API's URLs of the command server
 * (srv/cmdsrv.c, started by srv/cmdsrv_job.c): autoinst_url, data_url,
 * upload_asset, and upload_logs over HTTP when the VM has user networking
 * (the serial upload of testapi_console.c otherwise). Builds URLs and guest
 * commands from the variables only; the server itself is a room above.
 * The guest commands are os-autoinst's: curl --form, so the guest needs curl. */
#include <stdlib.h>
#include <string.h>
#include "runner/lua/testapi.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/file.h"
#include "util/log.h"
#include "util/path.h"
#include "util/str.h"
#include "util/banned.h" /* last: after every system header */

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Pushes os-autoinst's autoinst_url(path, query, args) built from the
 * vars: http://HOST:QEMUPORT+1/JOBTOKEN<path>?k=v&... (keys sorted, values
 * as given). query at qidx (a table or nil), inside_sut from args. */
static void push_url(lua_State *L, struct runner *r, const char *path, int qidx, int inside_sut)
{
	const char *qp = vars_get(&r->vars, "QEMUPORT"), *token = vars_get(&r->vars, "JOBTOKEN");
	const char *host = vars_get(&r->vars, "AUTOINST_URL_HOSTNAME");
	luaL_Buffer b;
	long port = 0;

	if (!r->cmdsrv && (!qp || !token))
		luaL_error(L, "no command server: the VM has no network (NICTYPE=user starts it)");
	runner__vars_changed(r); /* the server's /vars: what the test set */
	if (qp && str_to_long(qp, &port))
		port = 0;
	if (!host)
		/* From the host itself: the server listens on 127.0.0.1. */
		host = !inside_sut ? "127.0.0.1" : vars_get(&r->vars, "QEMU_HOST_IP");
	luaL_buffinit(L, &b);
	lua_pushfstring(L, "http://%s:%d/%s%s", host ? host : "10.0.2.2", (int)port + 1, token ? token : "", path);
	luaL_addvalue(&b);
	if (qidx && lua_istable(L, qidx)) {
		const char **keys = NULL;
		size_t n = 0, i;

		lua_pushnil(L);
		while (lua_next(L, qidx)) {
			const char **k2;
			lua_pop(L, 1);
			if (lua_type(L, -1) != LUA_TSTRING)
				continue;
			if (!(k2 = realloc(keys, (n + 1) * sizeof(*keys)))) {
				free(keys);
				luaL_error(L, "out of memory");
			}
			keys = k2;
			keys[n++] = lua_tostring(L, -1); /* the table holds it */
		}
		qsort(keys, n, sizeof(*keys), cmp_str);
		for (i = 0; i < n; i++) {
			lua_getfield(L, qidx, keys[i]);
			lua_pushfstring(L, "%s%s=%s", i ? "&" : "?", keys[i], luaL_tolstring(L, -1, NULL));
			lua_remove(L, -2);
			lua_remove(L, -2);
			luaL_addvalue(&b);
		}
		free(keys);
	}
	luaL_pushresult(&b);
}

/* autoinst_url(path="", query={}, {inside_sut=true}) */
static int l_autoinst_url(lua_State *L)
{
	struct runner *r = testapi_runner(L);
	const char *path = luaL_optstring(L, 1, "");
	int inside = testapi_opt_bool(L, 3, "inside_sut", 1);

	if (!lua_isnoneornil(L, 2))
		luaL_checktype(L, 2, LUA_TTABLE);
	push_url(L, r, path, lua_isnoneornil(L, 2) ? 0 : 2, inside);
	return 1;
}

/* data_url(name): data/<name>, or the asset REPO_n / ASSET_n names. */
static int l_data_url(lua_State *L)
{
	struct runner *r = testapi_runner(L);
	const char *name = luaL_checkstring(L, 1), *v;
	int repo = str_starts_with(name, "REPO_"), asset = str_starts_with(name, "ASSET_");
	const char *num = name + (repo ? 5 : 6);

	if ((repo || asset) && num[0] >= '0' && num[0] <= '9' && !num[1]) {
		v = vars_get(&r->vars, name);
		lua_pushfstring(L, "%s%s", repo ? "/assets/repo/" : "/assets/other/", v ? v : "");
	} else {
		lua_pushfstring(L, "/data/%s", name);
	}
	push_url(L, r, lua_tostring(L, -1), 0, 1);
	return 1;
}

/* s in single quotes for the guest's shell. */
static void add_quoted(luaL_Buffer *b, const char *s)
{
	luaL_addchar(b, '\'');
	for (; *s; s++) {
		if (*s == '\'')
			luaL_addstring(b, "'\\''");
		else
			luaL_addchar(b, *s);
	}
	luaL_addchar(b, '\'');
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

/* Pushes os-autoinst's guest command that posts file to url (one form
 * field f1=v1 besides the file, or none); -sSf: a refused upload fails. */
static void push_upload_cmd(lua_State *L, const char *file, const char *url, const char *f1, const char *v1)
{
	luaL_Buffer b;

	luaL_buffinit(L, &b);
	luaL_addstring(&b, "curl -sSf --form upload=@");
	add_quoted(&b, file);
	if (f1) {
		lua_pushfstring(L, " --form %s=", f1);
		luaL_addvalue(&b);
		add_quoted(&b, v1);
	}
	luaL_addchar(&b, ' ');
	add_quoted(&b, url);
	luaL_pushresult(&b);
}

/* Runs cmd (at the top of the stack) with the global fn (assert_script_run
 * or script_run) and timeout seconds (unscaled: fn scales it). */
static void run_global(lua_State *L, const char *fn, double timeout)
{
	int cmd = lua_gettop(L);

	lua_getglobal(L, fn);
	lua_pushvalue(L, cmd);
	lua_createtable(L, 0, 2);
	lua_pushnumber(L, timeout);
	lua_setfield(L, -2, "timeout");
	if (!strcmp(fn, "script_run")) {
		lua_pushinteger(L, 1);
		lua_setfield(L, -2, "die_on_timeout");
	}
	lua_call(L, 2, 0);
}

/* upload_logs(file, {failok, timeout=90, log_name}): over HTTP to
 * testresults/ulogs/<log_name or module-basename> with user networking,
 * else the serial upload (upvalue 1). */
static int l_upload_logs(lua_State *L)
{
	struct runner *r = testapi_runner(L);
	const char *file = luaL_checkstring(L, 1);
	int failok = testapi_opt_bool(L, 2, "failok", 0);
	double timeout = lua_isnumber(L, 2) ? lua_tonumber(L, 2) : testapi_opt_number(L, 2, "timeout", 90);
	const char *log_name = testapi_opt_string(L, 2, "log_name", NULL);
	struct module *m = runner__module(r);
	const char *upname;

	if (!r->cmdsrv || vars_get_bool(&r->vars, "OFFLINE_SUT", 0)) {
		lua_pushvalue(L, lua_upvalueindex(1));
		lua_insert(L, 1);
		lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
		return lua_gettop(L);
	}
	testapi_check_abort(L, r);
	upname = log_name ? log_name : lua_pushfstring(L, "%s-%s", m ? m->name : "job", base_name(file));
	lua_pushfstring(L, "/uploadlog/%s", base_name(file));
	push_url(L, r, lua_tostring(L, -1), 0, 1);
	push_upload_cmd(L, file, lua_tostring(L, -1), "upname", upname);
	run_global(L, failok ? "script_run" : "assert_script_run", timeout);
	runner__progress(r, "upload_logs '%s' -> ulogs/%s (command server)", file, base_name(upname));
	lua_pushstring(L, base_name(upname));
	return 1;
}

/* upload_asset(file, {public=false, nocheck=false}) or (file, public,
 * nocheck): to OUT/assets_private or OUT/assets_public. */
static int l_upload_asset(lua_State *L)
{
	struct runner *r = testapi_runner(L);
	const char *file = luaL_checkstring(L, 1);
	int pub = lua_istable(L, 2) ? testapi_opt_bool(L, 2, "public", 0) : lua_toboolean(L, 2);
	int nocheck = lua_istable(L, 2) ? testapi_opt_bool(L, 2, "nocheck", 0) : lua_toboolean(L, 3);

	if (!r->cmdsrv)
		return luaL_error(L, "upload_asset '%s': the VM has no network to reach the command server "
				  "(set NICTYPE=user)", file);
	if (vars_get_bool(&r->vars, "OFFLINE_SUT", 0)) {
		runner__progress(r, "upload_asset '%s': skipped, OFFLINE_SUT", file);
		return 0;
	}
	testapi_check_abort(L, r);
	lua_pushfstring(L, "/upload_asset/%s", base_name(file));
	push_url(L, r, lua_tostring(L, -1), 0, 1);
	push_upload_cmd(L, file, lua_tostring(L, -1), pub ? "target" : NULL, "assets_public");
	if (nocheck) {
		lua_pushliteral(L, "\n");
		lua_concat(L, 2);
		lua_getglobal(L, "type_string");
		lua_insert(L, -2);
		lua_call(L, 1, 0);
	} else {
		run_global(L, "assert_script_run", 90);
	}
	runner__progress(r, "upload_asset '%s' -> %s/%s", file, pub ? "assets_public" : "assets_private",
			 base_name(file));
	return 0;
}

void testapi_register_cmdsrv(lua_State *L)
{
	static const luaL_Reg fns[] = {
		{ "autoinst_url", l_autoinst_url },
		{ "data_url", l_data_url },
		{ "upload_asset", l_upload_asset },
		{ NULL, NULL },
	};

	lua_pushglobaltable(L);
	luaL_setfuncs(L, fns, 0);
	/* upload_logs wraps the serial one (testapi_console.c), its fallback. */
	lua_getfield(L, -1, "upload_logs");
	lua_pushcclosure(L, l_upload_logs, 1);
	lua_setfield(L, -2, "upload_logs");
	lua_pop(L, 1);
}
