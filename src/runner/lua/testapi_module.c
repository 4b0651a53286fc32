/* SPDX-License-Identifier: MIT */
/* testapi_module.c - what a test module is made of besides the API calls:
 * os-autoinst's upstream Lua module form (use, a global run, test_flags,
 * the hooks) around each module file, the test API's functions written in
 * Lua (the distribution defaults: script_sudo, become_root,
 * x11_start_program, ensure_installed, assert_still_screen), a module's
 * extra results (parse_extra_log / parse_junit_log, openQA's own parser)
 * and force_soft_failure. */
#define LOG_MODULE "testapi"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "runner/core/results.h"
#include "runner/lua/testapi.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/file.h"
#include "util/limits.h"
#include "util/log.h"
#include "util/path.h"
#include "util/proc.h"
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

/* The test API's functions written in Lua on the C ones: os-autoinst's
 * distribution defaults (distribution.pm: script_sudo, become_root,
 * x11_start_program, ensure_installed, ...), assert_still_screen,
 * parse_junit_log and the upstream Lua module form's importer, use. */
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
	"end\n"
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

static const luaL_Reg module_api[] = {
	{ "parse_extra_log", l_parse_extra_log },
	{ "force_soft_failure", l_force_soft_failure },
	{ NULL, NULL },
};

void testapi_register_module(lua_State *L)
{
	lua_pushglobaltable(L);
	luaL_setfuncs(L, module_api, 0);
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
