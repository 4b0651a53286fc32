/* SPDX-License-Identifier: MIT */
/* testapi_more.c - the rest of openQA's test API in Lua: variable arrays,
 * validate_script_output, force_soft_failure, assert_screen_change,
 * hold_key/release_key, background_script_run, become_root, test data
 * files, VM control over QMP and the exported variables (serialdev,
 * username, password, cmd, vars). Mouse functions live in testapi.c. */
#define LOG_MODULE "testapi"
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <lualib.h>
#include "runner/prim/keys.h"
#include "runner/prim/hashed.h"
#include "runner/lua/testapi.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/file.h"
#include "util/limits.h"
#include "util/log.h"
#include "util/path.h"
#include "util/proc.h"
#include "util/time.h"
#include "vm/qmp.h"
#include "vm/vnc.h"
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

/* 1 when text matches the PCRE2 pattern, 0 not; raises on a bad pattern. */
static int regex_matches(lua_State *L, const char *pattern, const char *text, size_t len)
{
	int errcode, rc;
	PCRE2_SIZE erroff;
	pcre2_code *re = pcre2_compile((PCRE2_SPTR)pattern, PCRE2_ZERO_TERMINATED, 0, &errcode, &erroff, NULL);
	pcre2_match_data *md;

	if (!re) {
		PCRE2_UCHAR msg[256];
		pcre2_get_error_message(errcode, msg, sizeof(msg));
		return luaL_error(L, "regex '%s': %s at offset %d", pattern, (const char *)msg, (int)erroff);
	}
	md = pcre2_match_data_create_from_pattern(re, NULL);
	rc = md ? pcre2_match(re, (PCRE2_SPTR)text, len, 0, 0, md, NULL) : -1;
	pcre2_match_data_free(md);
	pcre2_code_free(re);
	return rc > 0;
}

/* validate_script_output(script, check, timeout | {timeout=, title=,
 * fail_message=, proceed_on_failure=}): check is a function given the
 * output (openQA's $_) or a PCRE pattern string. Records a text step. */
static int l_validate_script_output(lua_State *L)
{
	struct runner *r = testapi_runner(L);
	const char *script = luaL_checkstring(L, 1);
	const char *title = testapi_opt_string(L, 3, "title", "validate_script_output");
	const char *fail_message = testapi_opt_string(L, 3, "fail_message", "output not validating");
	const char *out;
	size_t olen;
	int ok;
	struct buf b;

	if (!lua_isfunction(L, 2) && !lua_isstring(L, 2))
		return luaL_argerror(L, 2, "validate_script_output: the check must be a function or a regex string");
	lua_settop(L, 3); /* the options stay at 3 (nil when absent) */
	lua_getglobal(L, "script_output");
	lua_pushvalue(L, 1);
	lua_pushvalue(L, 3);
	lua_call(L, 2, 1);
	out = luaL_checklstring(L, -1, &olen); /* stays on the stack */
	buf_init(&b, LIMIT_SERIAL_LOG);
	if (lua_isfunction(L, 2)) {
		lua_pushvalue(L, 2);
		lua_pushvalue(L, -2);
		lua_call(L, 1, 1);
		ok = lua_toboolean(L, -1);
		lua_pop(L, 1);
		(void)buf_printf(&b, "Script:\n%s\n\nCheck function:\n(a Lua function)\n\nOutput:\n%s", script, out);
	} else {
		ok = regex_matches(L, lua_tostring(L, 2), out, olen);
		(void)buf_printf(&b, "Script:\n%s\n\nRegular expression:\n%s\n\nOutput:\n%s", script,
				 lua_tostring(L, 2), out);
	}
	steps_text(&r->steps, title, b.data ? b.data : "", ok ? "ok" : "fail");
	buf_release(&b);
	runner__progress(r, "validate_script_output '%s': %s", script, ok ? "ok" : "fail");
	/* As os-autoinst: the step says fail, the error fails the module
	 * unless the test catches it. */
	if (!ok)
		return luaL_error(L, "%s", fail_message);
	lua_pushinteger(L, 0);
	return 1;
}

/* force_soft_failure(reason): a soft failure that also turns the module's
 * failure into a soft failure (for post_fail_hook). */
static int l_force_soft_failure(lua_State *L)
{
	struct runner *r = testapi_runner(L);
	struct module *m = runner__module(r);

	luaL_checkstring(L, 1);
	lua_getglobal(L, "record_soft_failure");
	lua_pushvalue(L, 1);
	lua_call(L, 1, 0);
	if (m)
		m->force_softfail = 1;
	return 0;
}

/* assert_screen_change(fn, timeout, opts): wait_screen_change or raise. */
static int l_assert_screen_change(lua_State *L)
{
	int n = lua_gettop(L);
	(void)testapi_runner(L);
	luaL_checktype(L, 1, LUA_TFUNCTION);
	lua_getglobal(L, "wait_screen_change");
	lua_insert(L, 1);
	lua_call(L, n, 1);
	if (!lua_toboolean(L, -1))
		return luaL_error(L, "assert_screen_change failed to detect a screen change");
	return 1;
}

static int hold_or_release(lua_State *L, int down)
{
	struct runner *r = testapi_runner(L);
	const char *name = luaL_checkstring(L, 1);
	uint32_t syms[KEYS_MAX_COMBO];
	char err[160];
	size_t n, i;
	int rc = 0;

	if (keys_parse(name, syms, &n, err, sizeof(err)))
		return luaL_error(L, "%s: %s", down ? "hold_key" : "release_key", err);
	testapi_check_abort(L, r);
	if (r->console == CONSOLE_SERIAL)
		return luaL_error(L, "%s: the serial terminal has no keys to hold", down ? "hold_key" : "release_key");
	for (i = 0; i < n && !rc; i++)
		rc = vnc_send_key(r->vnc, syms[down ? i : n - 1 - i], down);
	if (rc) {
		runner__vm_dead(r);
		testapi_check_abort(L, r);
		return luaL_error(L, "could not send keys: %s", err_str(rc));
	}
	runner__progress(r, "%s %s", down ? "hold_key" : "release_key", name);
	return 0;
}

static int l_hold_key(lua_State *L) { return hold_or_release(L, 1); }
static int l_release_key(lua_State *L) { return hold_or_release(L, 0); }

static const char *serialdev(struct runner *r)
{
	const char *d = vars_get(&r->vars, "SERIALDEV");
	return d && *d ? d : "ttyS0";
}

/* background_script_run(cmd, {output=, quiet=}): starts cmd in the
 * background, returns its PID (os-autoinst's distribution default). */
static int l_background_script_run(lua_State *L)
{
	struct runner *r = testapi_runner(L);
	const char *cmd = luaL_checkstring(L, 1);
	char marker[32], pattern[64], what[300];
	struct buf b;
	lua_Integer pid;
	const char *text, *p;

	testapi_check_abort(L, r);
	snprintf(marker, sizeof(marker), "BG%lx", (unsigned long)(time_wall() * 1000) & 0xffffffu);
	buf_init(&b, LIMIT_SERIAL_LOG);
	if (buf_printf(&b, "(%s) & echo %s-$!- > /dev/%s\n", cmd, marker, serialdev(r))) {
		buf_release(&b);
		return luaL_error(L, "command too long");
	}
	testapi_type(L, r, b.data, b.len, r->typing_interval, 0);
	buf_release(&b);
	snprintf(pattern, sizeof(pattern), "%s-\\d+-", marker);
	snprintf(what, sizeof(what), "background_script_run '%.200s'", cmd);
	if (!testapi_serial_wait(L, r, what, pattern, 0, 30 * r->timeout_scale))
		return luaL_error(L, "background_script_run: no PID of '%s' in 30 s", cmd);
	text = lua_tostring(L, -1);
	/* The typed command's echo holds the marker too: take the last one. */
	for (p = strstr(text, marker), pid = 0; p; p = strstr(p + 1, marker))
		if (p[strlen(marker)] == '-' && p[strlen(marker) + 1] >= '0' && p[strlen(marker) + 1] <= '9')
			pid = strtoll(p + strlen(marker) + 1, NULL, 10);
	runner__progress(r, "background_script_run '%s': PID %lld", cmd, (long long)pid);
	lua_pushinteger(L, pid);
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

static void qmp_simple(lua_State *L, struct runner *r, const char *what, const char *cmd, json_t *args)
{
	char err[256];
	int rc;

	testapi_check_abort(L, r);
	rc = qmp_command(r->qmp, cmd, args, NULL, err, sizeof(err));
	json_decref(args);
	if (rc)
		luaL_error(L, "%s failed: %s", what, err);
	runner__progress(r, "%s", what);
}

static int l_freeze_vm(lua_State *L)
{
	qmp_simple(L, testapi_runner(L), "freeze_vm", "stop", NULL);
	return 0;
}

static int l_resume_vm(lua_State *L)
{
	qmp_simple(L, testapi_runner(L), "resume_vm", "cont", NULL);
	return 0;
}

/* eject_cd({id="cd0", force=false}) */
static int l_eject_cd(lua_State *L)
{
	struct runner *r = testapi_runner(L);
	const char *id = testapi_opt_string(L, 1, "id", "cd0");
	int force = testapi_opt_bool(L, 1, "force", 0);
	qmp_simple(L, r, "eject_cd", "eject", json_pack("{s:s, s:b}", "id", id, "force", force));
	return 0;
}

/* hashed_string(s, count=5): the first count characters of Perl's
 * md5_base64(s) (no padding) with '+' as '_' and '/' as '~', as
 * os-autoinst, for markers that regexes and shells take as they are. */
static int l_hashed_string(lua_State *L)
{
	size_t len;
	const char *str = luaL_checklstring(L, 1, &len);
	lua_Integer count = luaL_optinteger(L, 2, 5);
	char out[32];

	/* Pure: no runner needed (no step, no abort check). */
	if (hashed_string(str, len, count < 0 ? 0 : (size_t)count, out))
		return luaL_error(L, "hashed_string: no MD5");
	lua_pushstring(L, out);
	return 1;
}

/* os-autoinst's distribution defaults, written on the functions above. */
/* save_memory_dump({filename=module}): the VM's state as QEMU's migration
 * stream in testresults/ulogs/<filename>-vm-memory-dump, compressed with
 * QEMU_DUMP_COMPRESS_METHOD (xz by default, bzip2, or none: "none");
 * the VM runs on after it if it ran before. */
static int l_save_memory_dump(lua_State *L)
{
	struct runner *r = testapi_runner(L);
	struct module *m = runner__module(r);
	const char *name = testapi_opt_string(L, 1, "filename", m ? m->name : "job");
	const char *method = vars_get(&r->vars, "QEMU_DUMP_COMPRESS_METHOD");
	double deadline = runner__clock(r) + 600 * r->timeout_scale;
	char status[64], err[256] = "", err2[256], *dir, *path = NULL, *file = NULL;
	json_t *ret = NULL;
	int was_running, rc;
	struct buf uri;

	testapi_check_abort(L, r); /* raises: nothing allocated before it */
	dir = path_join(r->testresults, "ulogs");
	buf_init(&uri, 8192);
	file = malloc(strlen(name) + sizeof("-vm-memory-dump"));
	if (file)
		snprintf(file, strlen(name) + sizeof("-vm-memory-dump"), "%s-vm-memory-dump", name);
	path = dir && file ? path_join(dir, file) : NULL;
	rc = path ? file_mkdir_p(dir, 0755) : ERR_NOMEM;
	if (!rc && (strchr(path, '\'') || strchr(name, '/')))
		rc = ERR_INVALID;
	if (!rc)
		rc = buf_printf(&uri, "exec:cat > '%s'", path);
	if (!rc)
		rc = qmp_query_status(r->qmp, status, sizeof(status), err, sizeof(err));
	was_running = !rc && !strcmp(status, "running");
	/* QEMU's default of 32 MiB/s would take a minute for 2 GiB: as fast as
	 * it goes unless QEMU_MAX_BANDWIDTH (bytes/s) says otherwise. */
	if (!rc) {
		json_t *a = json_pack("{s:I}", "max-bandwidth",
				      (json_int_t)vars_get_double(&r->vars, "QEMU_MAX_BANDWIDTH", 1e12));
		rc = qmp_command(r->qmp, "migrate-set-parameters", a, NULL, err, sizeof(err));
		json_decref(a); /* qmp_command borrows its arguments */
	}
	if (!rc) {
		json_t *a = json_pack("{s:s}", "uri", uri.data);
		rc = qmp_command(r->qmp, "migrate", a, NULL, err, sizeof(err));
		json_decref(a);
	}
	while (!rc) {
		const char *st;
		json_decref(ret);
		ret = NULL;
		rc = qmp_command(r->qmp, "query-migrate", NULL, &ret, err, sizeof(err));
		st = rc ? NULL : json_string_value(json_object_get(ret, "status"));
		if (st && !strcmp(st, "completed"))
			break;
		if (st && !strcmp(st, "failed")) {
			snprintf(err, sizeof(err), "the migration failed");
			rc = ERR_IO;
		} else if (!rc && runner__clock(r) > deadline) {
			snprintf(err, sizeof(err), "the migration did not end in time");
			rc = ERR_TIMEOUT;
		} else if (!rc) {
			time_sleep_ms(100);
		}
	}
	json_decref(ret);
	if (was_running && qmp_command(r->qmp, "cont", NULL, NULL, err2, sizeof(err2)) && !rc) {
		snprintf(err, sizeof(err), "%s", err2);
		rc = ERR_IO;
	}
	if (!rc && (!method || strcmp(method, "none"))) {
		const char *prog = method && *method ? method : "xz";
		char level[8];
		char *argv[] = { (char *)prog, (char *)"-f", level, path, NULL, NULL };
		snprintf(level, sizeof(level), "-%ld", vars_get_long(&r->vars, "QEMU_COMPRESS_LEVEL", 6) % 10);
		if (!strcmp(prog, "xz")) { /* every core, as os-autoinst's -T */
			argv[3] = (char *)"-T0";
			argv[4] = path;
		}
		int st = 0;
		if (strcmp(prog, "xz") && strcmp(prog, "bzip2"))
			log_warn("save_memory_dump: unknown QEMU_DUMP_COMPRESS_METHOD '%s': left uncompressed", prog);
		else if (proc_run(argv, (int)(600 * 1000 * r->timeout_scale), &st, NULL) || st)
			log_warn("save_memory_dump: %s failed: the dump stays uncompressed", prog);
	}
	runner__progress(r, "save_memory_dump %s: %s", file ? file : name, rc ? (err[0] ? err : err_str(rc)) : "saved");
	buf_release(&uri);
	free(dir);
	free(path);
	free(file);
	if (rc)
		return luaL_error(L, "save_memory_dump failed: %s", err[0] ? err : err_str(rc));
	return 0;
}

static const char prelude[] =
	"function script_sudo(prog, wait)\n"
	"  wait = wait or 2\n"
	"  local mark\n"
	"  if wait > 0 then\n"
	"    mark = 'SS' .. string.format('%x', math.random(0, 0xffffff))\n"
	"    prog = prog .. '; echo ' .. mark .. ' > /dev/' .. serialdev\n"
	"  end\n"
	"  type_string('sudo ' .. prog .. '\\n')\n"
	"  if not is_serial_terminal() and check_screen('sudo-passwordprompt', 3) then\n"
	"    type_password(); send_key('ret')\n"
	"  end\n"
	"  if mark then return wait_serial(mark, wait) end\n"
	"end\n"
	"function assert_script_sudo(cmd, wait)\n"
	"  local mark = 'ASS' .. string.format('%x', math.random(0, 0xffffff))\n"
	"  local out = script_sudo(cmd .. '; echo ' .. mark .. '-$?-', wait or 90)\n"
	"  local code = out and out:match(mark .. '%-(%d+)%-')\n"
	"  if not code then error(\"command '\" .. cmd .. \"' timed out\", 2) end\n"
	"  if code ~= '0' then error(\"command '\" .. cmd .. \"' failed\", 2) end\n"
	"end\n"
	"function assert_still_screen(...)\n"
	"  if not wait_still_screen(...) then\n"
	"    error('assert_still_screen failed to detect a still screen', 2)\n"
	"  end\n"
	"end\n"
	"function become_root()\n"
	"  script_sudo('bash', 0)\n"
	"  enter_cmd('test $(id -u) -eq 0 && echo \"imroot\" > /dev/' .. serialdev)\n"
	"  if not wait_serial('imroot') then error('Root prompt not there', 2) end\n"
	"  enter_cmd('cd /tmp')\n"
	"end\n";

static const luaL_Reg more_api[] = {
	{ "get_var_array", l_get_var_array },
	{ "check_var_array", l_check_var_array },
	{ "validate_script_output", l_validate_script_output },
	{ "force_soft_failure", l_force_soft_failure },
	{ "assert_screen_change", l_assert_screen_change },
	{ "hold_key", l_hold_key },
	{ "release_key", l_release_key },
	{ "background_script_run", l_background_script_run },
	{ "get_test_data", l_get_test_data },
	{ "save_tmp_file", l_save_tmp_file },
	{ "freeze_vm", l_freeze_vm },
	{ "resume_vm", l_resume_vm },
	{ "eject_cd", l_eject_cd },
	{ "save_memory_dump", l_save_memory_dump },
	{ "hashed_string", l_hashed_string },
	{ NULL, NULL },
};

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

void testapi_register_more(struct runner *r, lua_State *L)
{
	static const char *const from_vars[][2] = {
		{ "username", "USERNAME" }, { "password", "PASSWORD" }, { "realname", "REALNAME" },
	};
	const char *sd = r ? vars_get(&r->vars, "SERIALDEV") : NULL;
	size_t i;

	lua_pushglobaltable(L);
	luaL_setfuncs(L, more_api, 0);
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
	if (luaL_dostring(L, prelude) != LUA_OK) {
		log_err("the test API's Lua part does not load: %s", lua_tostring(L, -1));
		lua_pop(L, 1);
	}
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The globals the test API adds to a bare Lua state: kind "function",
 * or "variable" for the exported variables (nil ones included by name). */
int testapi_list(FILE *out)
{
	static const char *const nil_vars[] = { "username", "password", "realname" };
	lua_State *L = luaL_newstate();
	const char **names = NULL;
	size_t n = 0, cap = 0, i;
	int rc = 0;

	if (!L)
		return ERR_NOMEM;
	luaL_openlibs(L);
	lua_newtable(L); /* 1: the globals before */
	lua_pushglobaltable(L);
	lua_pushnil(L);
	while (lua_next(L, -2)) {
		lua_pushvalue(L, -2);
		lua_pushboolean(L, 1);
		lua_settable(L, 1);
		lua_pop(L, 1);
	}
	lua_pop(L, 1);
	testapi_register(NULL, L);
	lua_pushglobaltable(L);
	lua_pushnil(L);
	while (lua_next(L, -2) && !rc) {
		lua_pushvalue(L, -2);
		lua_rawget(L, 1);
		if (lua_isnil(L, -1) && lua_type(L, -3) == LUA_TSTRING) {
			if (n == cap) {
				const char **g = realloc(names, (cap = cap ? cap * 2 : 128) * sizeof(*names));
				if (!g)
					rc = ERR_NOMEM;
				else
					names = g;
			}
			if (!rc) /* the key stays alive in the global table */
				names[n++] = lua_tostring(L, -3);
		}
		lua_pop(L, 2);
	}
	for (i = 0; !rc && i < sizeof(nil_vars) / sizeof(nil_vars[0]); i++) {
		lua_getglobal(L, nil_vars[i]);
		if (lua_isnil(L, -1) && n < cap)
			names[n++] = nil_vars[i];
		lua_pop(L, 1);
	}
	if (!rc) {
		qsort(names, n, sizeof(*names), name_cmp);
		for (i = 0; i < n; i++) {
			lua_getglobal(L, names[i]);
			fprintf(out, "%s\t%s\n", names[i], lua_isfunction(L, -1) ? "function" : "variable");
			lua_pop(L, 1);
		}
	}
	free(names);
	lua_close(L);
	return rc;
}
