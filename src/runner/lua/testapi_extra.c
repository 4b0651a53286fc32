/* SPDX-License-Identifier: MIT */
/* testapi_extra.c - the last of openQA's test API in Lua: parse_junit_log /
 * parse_extra_log (openQA's own OpenQA::Parser), save_storage_drives and
 * switch_network (primitives the Perl side shares), the distribution defaults
 * x11_start_program and ensure_installed, and
 * os-autoinst's upstream Lua module form (use, a global run, test_flags). */
#define LOG_MODULE "testapi"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "runner/lua/testapi.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/file.h"
#include "util/limits.h"
#include "util/log.h"
#include "util/path.h"
#include "util/proc.h"
#include "vm/qmp.h"
#include "util/banned.h" /* last: after every system header */

#define PARSER_TIMEOUT_MS (300 * 1000)

/* openQA's parser (package openqa-common), run as os-autoinst's
 * parse_extra_log runs it: the text files and result-<test>.json go to the
 * results directory, the tests' to_openqa() list to a JSON file. */
static const char parser_pl[] =
	"use strict; use warnings;\n"
	"use lib ($ENV{OPENQA_LIBPATH} // '/usr/share/openqa/lib');\n"
	"use OpenQA::Parser 'parser'; use JSON::PP ();\n"
	"my ($format, $file, $dir, $out) = @ARGV;\n"
	"my $p = parser($format => $file);\n"
	"$p->write_output($dir); $p->write_test_result($dir);\n"
	"my @t; $p->tests->each(sub { push @t, $_->to_openqa });\n"
	"open(my $fh, '>', $out) or die \"$out: $!\\n\";\n"
	"print $fh JSON::PP->new->canonical->encode(\\@t); close($fh) or die \"$out: $!\\n\";\n";

/* parse_extra_log(format, file): upload_logs(file), then openQA's parser
 * for format (JUnit, XUnit, LTP, TAP, IPA) writes the text and result
 * files of each test it finds; they become the module's extra test
 * results. Returns nothing, as os-autoinst. */
static int l_parse_extra_log(lua_State *L)
{
	struct runner *r = testapi_runner(L);
	struct module *m = runner__module(r);
	const char *format = luaL_checkstring(L, 1);
	char *ulogs = NULL, *in = NULL, *out = NULL;
	const char *upname;
	struct buf msg;
	int rc, st = 0, n;

	luaL_checkstring(L, 2);
	if (!m)
		return luaL_error(L, "parse_extra_log: only inside a module");
	lua_getglobal(L, "upload_logs");
	lua_pushvalue(L, 2);
	lua_call(L, 1, 1);
	upname = lua_tostring(L, -1);
	if (!upname)
		return luaL_error(L, "parse_extra_log: '%s' was not uploaded", lua_tostring(L, 2));
	ulogs = path_join(r->testresults, "ulogs");
	in = ulogs ? path_join(ulogs, upname) : NULL;
	out = path_join(r->workdir, "extra-tests.json");
	buf_init(&msg, 4096);
	rc = in && out ? 0 : ERR_NOMEM;
	if (!rc) {
		char *argv[] = { (char *)"perl", (char *)"-e", (char *)parser_pl, (char *)format, in,
				 r->testresults, out, NULL };
		(void)remove(out);
		rc = proc_run(argv, PARSER_TIMEOUT_MS, &st, &msg);
	}
	free(ulogs);
	free(in);
	if (rc || st) {
		const char *why = msg.data && msg.len ? msg.data : (rc ? err_str(rc) : "perl failed");
		lua_pushfstring(L, "parse_extra_log %s '%s': %s", format, lua_tostring(L, 2), why);
		free(out);
		buf_release(&msg);
		return lua_error(L);
	}
	buf_release(&msg);
	{
		json_error_t jerr;
		json_t *list = json_load_file(out, 0, &jerr);
		(void)remove(out);
		free(out);
		n = results_add_extra(r->testresults, m, list);
		json_decref(list);
		if (n < 0)
			return luaL_error(L, "parse_extra_log: the parser's list of tests is not readable: %s", jerr.text);
	}
	runner__progress(r, "parse_extra_log %s '%s': %d extra test result%s", format, lua_tostring(L, 2), n,
			 n == 1 ? "" : "s");
	return 0;
}

/* The image file QEMU has for drive id (query-block), copied into buf. */
static int drive_file(struct runner *r, const char *id, char *buf, size_t len, char *err, size_t errlen)
{
	json_t *ret = NULL, *d;
	size_t i;
	int rc = qmp_command(r->qmp, "query-block", NULL, &ret, err, errlen);

	if (rc)
		return rc;
	rc = ERR_NOT_FOUND;
	snprintf(err, errlen, "no drive '%s'", id);
	json_array_foreach(ret, i, d) {
		const char *dev = json_string_value(json_object_get(d, "device"));
		const char *file = json_string_value(json_object_get(json_object_get(d, "inserted"), "file"));
		if (dev && file && !strcmp(dev, id)) {
			snprintf(buf, len, "%s", file);
			rc = 0;
			break;
		}
	}
	json_decref(ret);
	return rc;
}

int testapi_save_drives(struct runner *r, const char *name, long first, long last, char *err, size_t errlen)
{
	int compress = vars_get_bool(&r->vars, "QEMU_COMPRESS_QCOW2", 1), was_running, rc;
	char status[64], file[4096], dst[512], *dir = path_join(r->testresults, "ulogs"), *path = NULL;
	long i;

	err[0] = '\0';
	if (!*name || strchr(name, '/') || strlen(name) > 200) {
		snprintf(err, errlen, "'%s' is not a file name", name);
		free(dir);
		return ERR_INVALID;
	}
	rc = dir ? file_mkdir_p(dir, 0755) : ERR_NOMEM;
	if (!rc)
		rc = qmp_query_status(r->qmp, status, sizeof(status), err, errlen);
	was_running = !rc && !strcmp(status, "running");
	if (was_running)
		rc = qmp_command(r->qmp, "stop", NULL, NULL, err, errlen);
	for (i = first; !rc && i <= last; i++) {
		char id[32];
		int st = 0;
		snprintf(id, sizeof(id), "hd%ld", i - 1);
		rc = drive_file(r, id, file, sizeof(file), err, errlen);
		snprintf(dst, sizeof(dst), "%s-%ld-vm_disk_file.qcow2", name, i);
		free(path);
		path = rc ? NULL : path_join(dir, dst);
		if (!rc && !path)
			rc = ERR_NOMEM;
		if (!rc) {
			/* -U: QEMU holds the image's lock; the VM is stopped, so it is consistent. */
			char *argv[] = { (char *)"qemu-img", (char *)"convert", (char *)"-U", (char *)"-O",
					 (char *)"qcow2", (char *)"-c", file, path, NULL };
			if (!compress) { /* drop -c */
				argv[5] = file;
				argv[6] = path;
				argv[7] = NULL;
			}
			rc = proc_run(argv, (int)(3600 * 1000 * r->timeout_scale), &st, NULL);
			if (!rc && st) {
				snprintf(err, errlen, "qemu-img convert of disk %ld failed", i);
				rc = ERR_IO;
			}
		}
		if (!rc)
			runner__progress(r, "save_storage_drives: disk %ld -> ulogs/%s", i, dst);
	}
	if (was_running && qmp_command(r->qmp, "cont", NULL, NULL, rc ? file : err, rc ? sizeof(file) : errlen) &&
	    !rc)
		rc = ERR_IO;
	if (rc && !err[0])
		snprintf(err, errlen, "%s", err_str(rc));
	free(dir);
	free(path);
	return rc;
}

/* save_storage_drives(filename=<module>): each of the NUMDISKS disks as
 * ulogs/<filename>-<n>-vm_disk_file.qcow2 (testapi_save_drives). */
static int l_save_storage_drives(lua_State *L)
{
	struct runner *r = testapi_runner(L);
	struct module *m = runner__module(r);
	const char *name = luaL_optstring(L, 1, m ? m->name : "job");
	char err[512];

	testapi_check_abort(L, r);
	if (testapi_save_drives(r, name, 1, vars_get_long(&r->vars, "NUMDISKS", 1), err, sizeof(err)))
		return luaL_error(L, "save_storage_drives failed: %s", err);
	return 0;
}

int testapi_switch_network(struct runner *r, const char *link, int up, char *err, size_t errlen)
{
	json_t *args = json_pack("{s:s,s:b}", "name", link, "up", up);
	int rc = args ? qmp_command(r->qmp, "set_link", args, NULL, err, errlen) : ERR_NOMEM;

	json_decref(args);
	if (rc == ERR_NOMEM)
		snprintf(err, errlen, "%s", err_str(rc));
	if (!rc)
		runner__progress(r, "switch_network %s: %s", link, up ? "up" : "down");
	return rc;
}

/* switch_network({network_enabled=true, network_link_name="qanet0"}) */
static int l_switch_network(lua_State *L)
{
	struct runner *r = testapi_runner(L);
	int up = testapi_opt_bool(L, 1, "network_enabled", 1);
	const char *link = testapi_opt_string(L, 1, "network_link_name", "qanet0");
	char err[256];

	testapi_check_abort(L, r);
	if (testapi_switch_network(r, link, up, err, sizeof(err)))
		return luaL_error(L, "switch_network %s: %s", link, err);
	return 0;
}

/* os-autoinst's distribution defaults (distribution.pm) and the upstream
 * Lua module form's importer, in Lua on the functions above. */
static const char prelude[] =
	"function x11_start_program(program, timeout, opts)\n"
	"  if type(timeout) == 'table' then opts, timeout = timeout, nil end\n"
	"  opts = opts or {}\n"
	"  local target = opts.target_match\n"
	"  if target == nil then target = program end\n"
	"  send_key_until_needlematch('desktop-runner', 'alt-f2', 6, 5)\n"
	"  type_string(program)\n"
	"  if opts.match_typed then assert_screen(opts.match_typed, 30) end\n"
	"  send_key('ret')\n"
	"  if opts.valid == nil or (opts.valid and opts.valid ~= 0) then\n"
	"    for _ = 1, 3 do\n"
	"      if not check_screen('desktop-runner-border', 2) then break end\n"
	"      send_key('ret')\n"
	"    end\n"
	"  end\n"
	"  if (opts.no_wait and opts.no_wait ~= 0) or not target or target == 'none' then return end\n"
	"  return assert_screen(target, opts.match_timeout or timeout or 90, { no_wait = opts.match_no_wait })\n"
	"end\n"
	"function ensure_installed(...)\n"
	"  local pkgs = table.concat({ ... }, ' ')\n"
	"  if check_var('DISTRI', 'debian') then\n"
	"    x11_start_program(\"su -c 'aptitude -y install \" .. pkgs .. \"'\", 4, { terminal = 1, target_match = false })\n"
	"  elseif check_var('DISTRI', 'fedora') then\n"
	"    x11_start_program(\"su -c 'yum -y install \" .. pkgs .. \"'\", 4, { terminal = 1, target_match = false })\n"
	"  else\n"
	"    error(\"TODO: implement 'ensure_installed' for your distri \" .. (get_var('DISTRI') or ''), 2)\n"
	"  end\n"
	"  if password then type_password(); send_key('ret') end\n"
	"  wait_still_screen(7, 90)\n"
	"end\n"
	"function parse_junit_log(file) return parse_extra_log('JUnit', file) end\n"
	"function use(module, names)\n"
	"  if module ~= 'testapi' then\n"
	"    error(\"use('\" .. tostring(module) .. \"'): vigil's Lua runtime has no Perl modules, only testapi's \"\n"
	"      .. 'functions (already global); put Lua helpers in lib/ and require them', 2)\n"
	"  end\n"
	"  for _, n in ipairs(names or {}) do\n"
	"    if _G[(tostring(n):gsub('^[$%%@]', ''))] == nil and not ({ username = 1, password = 1, realname = 1 })[n] then\n"
	"      diag(\"'\" .. tostring(n) .. \"' is not exported by 'testapi'\")\n"
	"    end\n"
	"  end\n"
	"end\n";

static const luaL_Reg extra_api[] = {
	{ "parse_extra_log", l_parse_extra_log },
	{ "save_storage_drives", l_save_storage_drives },
	{ "switch_network", l_switch_network },
	{ NULL, NULL },
};

void testapi_register_extra(lua_State *L)
{
	lua_pushglobaltable(L);
	luaL_setfuncs(L, extra_api, 0);
	lua_pop(L, 1);
	if (luaL_dostring(L, prelude) != LUA_OK) {
		log_err("the test API's Lua part does not load: %s", lua_tostring(L, -1));
		lua_pop(L, 1);
	}
}

/* The upstream form's globals, cleared before each module file runs. */
static const char *const upstream_globals[] = { "run", "test_flags", "post_fail_hook", "pre_run_hook",
						"post_run_hook" };

void testapi_module_before(lua_State *L, const char *distri_dir, const char *script)
{
	char *sdir = path_dir(script), *lib = NULL;
	size_t i;

	for (i = 0; i < sizeof(upstream_globals) / sizeof(upstream_globals[0]); i++) {
		lua_pushnil(L);
		lua_setglobal(L, upstream_globals[i]);
	}
	/* require finds the distribution's lib/ and, as os-autoinst, the
	 * lib/ next to the module's directory. */
	if (sdir && (lib = malloc(2 * strlen(distri_dir) + strlen(sdir) + 32))) {
		snprintf(lib, 2 * strlen(distri_dir) + strlen(sdir) + 32, "%s/%s/../lib/?.lua;%s/lib/?.lua;", distri_dir,
			 sdir, distri_dir);
		lua_getglobal(L, "package");
		if (lua_istable(L, -1)) {
			lua_getfield(L, -1, "path");
			if (!strstr(lua_tostring(L, -1) ? lua_tostring(L, -1) : "", lib)) {
				lua_pushstring(L, lib);
				lua_insert(L, -2);
				lua_concat(L, 2);
				lua_setfield(L, -2, "path");
			} else {
				lua_pop(L, 1);
			}
		}
		lua_pop(L, 1);
	}
	free(lib);
	free(sdir);
}

/* A module file that returned nothing but set a global run: the upstream
 * form. Its table: run, flags from test_flags(), the hooks; the globals
 * are cleared so that the next module cannot inherit them. */
int testapi_module_after(lua_State *L, char *err, size_t errlen)
{
	size_t i;

	if (!lua_isnil(L, -1))
		return 0;
	lua_getglobal(L, "run");
	if (!lua_isfunction(L, -1)) {
		lua_pop(L, 1);
		return 0;
	}
	lua_pop(L, 2);
	lua_newtable(L);
	for (i = 0; i < sizeof(upstream_globals) / sizeof(upstream_globals[0]); i++) {
		lua_getglobal(L, upstream_globals[i]);
		lua_setfield(L, -2, upstream_globals[i]);
	}
	lua_getfield(L, -1, "test_flags");
	if (lua_isfunction(L, -1)) {
		if (lua_pcall(L, 0, 1, 0) != LUA_OK) {
			snprintf(err, errlen, "test_flags: %s", lua_tostring(L, -1));
			lua_pop(L, 2);
			return ERR_PROTO;
		}
		lua_setfield(L, -2, "flags");
	} else {
		lua_pop(L, 1);
	}
	for (i = 0; i < sizeof(upstream_globals) / sizeof(upstream_globals[0]); i++) {
		lua_pushnil(L);
		lua_setglobal(L, upstream_globals[i]);
	}
	return 0;
}
