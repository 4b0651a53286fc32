/* SPDX-License-Identifier: MIT */
/* testapi_console.c - consoles, the serial port and scripts in the Lua
 * test API: select_console and console objects (over prim/term.c),
 * wait_serial, script_run, assert_script_run, script_output, the script
 * checks (validate_script_output, background_script_run, hashed_string for
 * markers) and upload_logs (file contents sent back over the serial port,
 * since the VMs have no network). */
#define LOG_MODULE "testapi"
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "runner/prim/hashed.h"
#include "runner/prim/keys.h"
#include "runner/lua/testapi.h"
#include "runner/prim/term.h"
#include "util/base64.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/file.h"
#include "util/limits.h"
#include "util/log.h"
#include "util/path.h"
#include "util/str.h"
#include "util/time.h"
#include "vm/serial.h"
#include "vm/vnc.h"
#include "util/banned.h" /* last: after every system header */

/* A Lua value (scalars and flat tables) as JSON, for console arguments. */
static json_t *lua_to_json(lua_State *L, int idx)
{
	json_t *o;

	switch (lua_type(L, idx)) {
	case LUA_TBOOLEAN: return json_boolean(lua_toboolean(L, idx));
	case LUA_TNUMBER:
		return lua_isinteger(L, idx) ? json_integer((json_int_t)lua_tointeger(L, idx))
					     : json_real(lua_tonumber(L, idx));
	case LUA_TSTRING: return json_string(lua_tostring(L, idx));
	case LUA_TTABLE:
		o = json_object();
		idx = lua_absindex(L, idx);
		lua_pushnil(L);
		while (lua_next(L, idx)) {
			if (lua_type(L, -2) == LUA_TSTRING && lua_type(L, -1) != LUA_TTABLE)
				json_object_set_new(o, lua_tostring(L, -2), lua_to_json(L, -1));
			lua_pop(L, 1);
		}
		return o;
	default: return json_null();
	}
}

void testapi_push_scalar(lua_State *L, json_t *v)
{
	const char *key;
	json_t *item;

	if (json_is_object(v)) {
		lua_newtable(L);
		json_object_foreach(v, key, item) {
			if (json_is_object(item) || json_is_array(item))
				continue;
			testapi_push_scalar(L, item);
			lua_setfield(L, -2, key);
		}
	} else if (json_is_string(v)) {
		lua_pushstring(L, json_string_value(v));
	} else if (json_is_integer(v)) {
		lua_pushinteger(L, (lua_Integer)json_integer_value(v));
	} else if (json_is_real(v)) {
		lua_pushnumber(L, json_real_value(v));
	} else if (json_is_boolean(v)) {
		lua_pushboolean(L, json_is_true(v));
	} else {
		lua_pushnil(L);
	}
}

/* A console object's method: upvalues name and method; self first. */
static int l_console_method(lua_State *L)
{
	struct runner *r = testapi_runner(L);
	const char *name = lua_tostring(L, lua_upvalueindex(1));
	const char *method = luaL_checkstring(L, lua_upvalueindex(2));
	json_t *args = json_array(), *res = NULL;
	char err[512];
	int i, rc;

	testapi_check_abort(L, r);
	for (i = 2; i <= lua_gettop(L); i++)
		json_array_append_new(args, lua_to_json(L, i));
	rc = term_call(r, name, method, args, &res, err, sizeof(err));
	json_decref(args);
	if (rc) {
		json_decref(res);
		return luaL_error(L, "%s", err);
	}
	testapi_push_scalar(L, res);
	json_decref(res);
	return 1;
}

/* __index of a console object: any method name gives a function that
 * goes through term_call (prim/term.c), which answers the listed ones and
 * raises a clear error for the rest. */
static int l_console_index(lua_State *L)
{
	lua_getfield(L, 1, "name");
	lua_pushvalue(L, 2);
	lua_pushcclosure(L, l_console_method, 2);
	return 1;
}

/* Pushes the console object of c: a table {name=, class=} whose methods
 * are console_methods[]'s for its class. */
static void push_console(lua_State *L, const struct console *c)
{
	lua_newtable(L);
	lua_pushstring(L, c->name);
	lua_setfield(L, -2, "name");
	lua_pushstring(L, c->class_name);
	lua_setfield(L, -2, "class");
	if (luaL_newmetatable(L, "vigil.console")) {
		lua_pushcfunction(L, l_console_index);
		lua_setfield(L, -2, "__index");
	}
	lua_setmetatable(L, -2);
}

/* select_console(name): the console object, and whether this selection
 * activated it (first since a reset). */
static int l_select_console(lua_State *L)
{
	struct runner *r = testapi_runner(L);
	const char *name = luaL_checkstring(L, 1);
	char err[512];
	int act;

	testapi_check_abort(L, r);
	if (term_select(r, name, 1, &act, err, sizeof(err))) {
		testapi_check_abort(L, r);
		return luaL_error(L, "%s", err);
	}
	push_console(L, console_find(&r->consoles, name));
	lua_pushboolean(L, act);
	return 2;
}

/* console(name = current): the console object (Lua's default names are
 * added as select_console adds them). */
static int l_console(lua_State *L)
{
	struct runner *r = testapi_runner(L);
	struct console *c = lua_isnoneornil(L, 1) ? console_current(&r->consoles)
						  : term_find(r, luaL_checkstring(L, 1), 1);
	const char *name = luaL_optstring(L, 1, "");

	if (!c)
		return luaL_error(L, "console '%s' does not exist (add_console first)", name);
	push_console(L, c);
	return 1;
}

/* add_console(name, class, {args}): as a distribution's add_console. */
static int l_add_console(lua_State *L)
{
	struct runner *r = testapi_runner(L);
	const char *name = luaL_checkstring(L, 1);
	const char *cls = luaL_checkstring(L, 2);
	json_t *args = lua_istable(L, 3) ? lua_to_json(L, 3) : NULL;
	int rc = console_add(&r->consoles, name, cls, args);

	json_decref(args);
	if (rc < 0)
		return luaL_error(L, "add_console '%s' (%s): %s", name, cls, err_str(rc));
	if (rc == 1)
		log_warn("console '%s' has class '%s', which vigil does not support (supported: %s): selecting it fails",
			 name, cls, CONSOLE_SUPPORTED);
	push_console(L, console_find(&r->consoles, name));
	return 1;
}

static int l_reset_consoles(lua_State *L)
{
	struct runner *r = testapi_runner(L);

	console_reset_all(&r->consoles);
	runner__progress(r, "reset_consoles");
	return 0;
}

static int l_current_console(lua_State *L)
{
	struct runner *r = testapi_runner(L);
	struct console *c = console_current(&r->consoles);

	if (c)
		lua_pushstring(L, c->name);
	else
		lua_pushnil(L);
	return 1;
}

static int l_is_serial_terminal(lua_State *L)
{
	struct runner *r = testapi_runner(L);
	lua_pushboolean(L, r->console == CONSOLE_SERIAL);
	return 1;
}

/* Random marker of 5 letters/digits, distinct per call. */
static void make_marker(char out[6])
{
	static const char set[] = "abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789";
	static unsigned long counter;
	unsigned long v = (unsigned long)(time_wall() * 1e6) ^ (++counter * 2654435761u);
	int i;
	for (i = 0; i < 5; i++) {
		out[i] = set[v % (sizeof(set) - 1)];
		v = v / (sizeof(set) - 1) + (unsigned long)i * 7919u + counter;
	}
	out[5] = '\0';
}

/* docs/hardening.md's policy when what the test reads cannot be copied:
 * the job ends incomplete, "out of memory: WHAT (module 'M')"; raises the
 * Lua error (testapi_check_abort), so the caller frees its memory first. */
static int nomem(lua_State *L, struct runner *r, const char *what)
{
	(void)runner__results_nomem(r, ERR_NOMEM, what);
	testapi_check_abort(L, r);
	return luaL_error(L, "out of memory: %s", what);
}


int testapi_serial_wait(lua_State *L, struct runner *r, const char *what, const char *pattern, int literal,
			double timeout)
{
	char err[512], *text = NULL;
	size_t len;
	int rc = term_wait(r, what, pattern, literal, timeout, &text, &len, err, sizeof(err));

	if (rc <= 0) {
		testapi_check_abort(L, r);
		if (rc < 0)
			return luaL_error(L, "%s", err);
		lua_pushnil(L);
		return 0;
	}
	lua_pushlstring(L, text, len);
	free(text);
	return 1;
}


/* wait_serial's pattern: a string, or a list of them (any may match) as
 * one alternation; no_regex quotes each. Pushes it. */
static const char *serial_pattern(lua_State *L, int idx, int literal)
{
	luaL_Buffer b;
	lua_Integer i, n;

	if (lua_type(L, idx) == LUA_TSTRING && !literal) {
		lua_pushvalue(L, idx);
		return lua_tostring(L, -1);
	}
	if (!lua_istable(L, idx) && lua_type(L, idx) != LUA_TSTRING)
		luaL_argerror(L, idx, "expected a pattern or a list of patterns");
	n = lua_istable(L, idx) ? (lua_Integer)luaL_len(L, idx) : 1;
	if (n < 1)
		luaL_argerror(L, idx, "an empty list of patterns");
	luaL_buffinit(L, &b);
	for (i = 1; i <= n; i++) {
		const char *p;
		if (lua_istable(L, idx))
			lua_rawgeti(L, idx, i);
		else
			lua_pushvalue(L, idx);
		p = lua_tostring(L, -1);
		if (lua_type(L, -1) != LUA_TSTRING || (literal && strstr(p, "\\E")))
			luaL_argerror(L, idx, "patterns must be strings (no_regex: without \\E)");
		lua_pop(L, 1); /* the table or the argument keeps it alive */
		luaL_addstring(&b, i > 1 ? "|(?:" : "(?:");
		if (literal)
			luaL_addstring(&b, "\\Q");
		luaL_addstring(&b, p);
		luaL_addstring(&b, literal ? "\\E)" : ")");
	}
	luaL_pushresult(&b);
	return lua_tostring(L, -1);
}

/* wait_serial(pattern | {patterns}, timeout=90 | {timeout=, no_regex=,
 * expect_not_found=, quiet=, record_output=}, expect_not_found): the
 * text from the module's position up to the match (all of it: vigil
 * keeps the whole output, so record_output is always so); nil when not
 * matched. With expect_not_found, a time-out is the success and returns
 * the text seen. */
static int l_wait_serial(lua_State *L)
{
	struct runner *r = testapi_runner(L);
	double timeout = testapi_timeout(L, r, 2, 90);
	int literal = testapi_opt_bool(L, 2, "no_regex", 0);
	int expect_not_found = testapi_opt_bool(L, 2, "expect_not_found", 0);
	int quiet = testapi_opt_bool(L, 2, "quiet", 0);
	const char *pattern;
	const char *shown = lua_type(L, 1) == LUA_TSTRING ? lua_tostring(L, 1) : NULL;
	double t0 = time_mono();
	int found, ok;
	struct buf b;
	char what[300];

	if (lua_isboolean(L, 3))
		expect_not_found = lua_toboolean(L, 3);
	pattern = serial_pattern(L, 1, literal);
	if (!shown)
		shown = pattern;
	testapi_check_abort(L, r);
	snprintf(what, sizeof(what), "wait_serial '%.200s'", shown);
	found = testapi_serial_wait(L, r, what, pattern, 0, timeout);
	if (!found) {
		/* What was seen: the step's text, and expect_not_found's result. */
		char *data = NULL, *lf;
		size_t len = 0;
		lua_pop(L, 1);
		size_t *off;
		struct serial *term = term_current(r, &off);
		if (serial_snapshot(term, *off, &data, &len, NULL) == 0) {
			lf = term_crlf_to_lf(data ? data : "", len);
			if (!lf) {
				free(data);
				return nomem(L, r, "the serial output seen");
			}
			lua_pushstring(L, lf);
			free(lf);
		} else {
			lua_pushliteral(L, "");
		}
		free(data);
	}
	ok = (found != 0) != (expect_not_found != 0);
	runner__progress(r, "wait_serial '%s': %s after %.2fs", shown, found ? "found" : "not found",
			time_mono() - t0);
	if (!quiet) {
		buf_init(&b, LIMIT_SERIAL_LOG);
		(void)buf_printf(&b, "# wait_serial expected: %s\n# Result:\n%s\n", shown, lua_tostring(L, -1));
		steps_text(&r->steps, "wait_serial", b.data ? b.data : "", ok ? "ok" : "fail");
		buf_release(&b);
	}
	if (!ok)
		lua_pushnil(L);
	return 1;
}

static const char *serialdev(struct runner *r)
{
	const struct console *c = console_current(&r->consoles);
	const char *d;

	/* on the virtio terminal, markers go to the terminal wait_serial reads */
	if (c && c->cls == CONSOLE_VIRTIO && r->virtio)
		return "hvc0";
	d = vars_get(&r->vars, "SERIALDEV");
	return d && *d ? d : "ttyS0";
}

/* Types the command with a marker echo and waits for the exit code.
 * Returns the code, or -1 on time-out. api: the caller's test API name. */
static long run_with_marker(lua_State *L, struct runner *r, const char *api, const char *cmd, const char *output,
			    double timeout)
{
	char marker[6], pattern[64], what[300];
	struct buf b;
	struct term_match m;
	char *text = NULL, err[512];
	size_t len;
	long code = -1;
	int rc;

	make_marker(marker);
	buf_init(&b, LIMIT_SERIAL_LOG);
	/* output: os-autoinst's comment after the marker, shown in the serial log. */
	if (buf_printf(&b, "%s; echo %s-$?-%s%s > /dev/%s\n", cmd, marker, output && *output ? "Comment: " : "",
		       output ? output : "", serialdev(r)))
		return luaL_error(L, "command too long");
	testapi_type(L, r, b.data, b.len, r->typing_interval, 0);
	buf_release(&b);
	snprintf(pattern, sizeof(pattern), "%s-(\\d+)-", marker);
	snprintf(what, sizeof(what), "%s '%.200s'", api, cmd);
	rc = term_search(r, what, pattern, 0, timeout, &text, &len, &m, err, sizeof(err));
	if (rc == 1 && m.ncap >= 2) {
		char num[32];
		size_t n = m.cap_end[1] - m.cap_start[1];
		if (n >= sizeof(num))
			n = sizeof(num) - 1;
		memcpy(num, text + m.cap_start[1], n);
		num[n] = '\0';
		if (str_to_long(num, &code))
			code = -1;
	}
	free(text);
	if (rc != 1)
		testapi_check_abort(L, r);
	return code;
}

/* script_run(cmd, timeout=30 | {timeout=, die_on_timeout=-1, output=,
 * quiet=}): the exit code; nil when only typed (timeout 0) or timed out
 * (die_on_timeout=1: raise instead; -1, the default: also a warning). */
static int l_script_run(lua_State *L)
{
	struct runner *r = testapi_runner(L);
	const char *cmd = luaL_checkstring(L, 1);
	double timeout = testapi_timeout(L, r, 2, 30);
	int die_on_timeout = (int)testapi_opt_number(L, 2, "die_on_timeout", -1);
	const char *output = testapi_opt_string(L, 2, "output", NULL);
	int quiet = testapi_opt_bool(L, 2, "quiet", 0);
	double t0 = time_mono();
	long code;

	testapi_check_abort(L, r);
	if (str_ends_with(cmd, "&") && !str_ends_with(cmd, "\\&"))
		return luaL_error(L, "Terminator '&' found in script_run call. script_run can not check script "
				  "success. Use 'background_script_run' instead.");
	if (timeout == 0) {
		testapi_type(L, r, cmd, strlen(cmd), r->typing_interval, 0);
		testapi_type(L, r, "\n", 1, r->typing_interval, 0);
		lua_pushnil(L);
		return 1;
	}
	code = run_with_marker(L, r, "script_run", cmd, output, timeout);
	if (code < 0) {
		runner__progress(r, "script_run '%s': timed out after %.2fs", cmd, time_mono() - t0);
		if (die_on_timeout > 0)
			return luaL_error(L, "command '%s' timed out", cmd);
		if (die_on_timeout < 0)
			log_warn("script_run '%s' timed out: returns nil (give die_on_timeout = 0 or 1 to choose)", cmd);
		lua_pushnil(L);
		return 1;
	}
	if (!quiet)
		runner__progress(r, "script_run '%s': exit %ld (%.2fs)", cmd, code, time_mono() - t0);
	lua_pushinteger(L, code);
	return 1;
}

static int l_assert_script_run(lua_State *L)
{
	struct runner *r = testapi_runner(L);
	const char *cmd = luaL_checkstring(L, 1);
	double timeout = testapi_timeout(L, r, 2, 90);
	const char *msg = testapi_opt_string(L, 2, "fail_message", NULL);
	double t0 = time_mono();
	long code;

	testapi_check_abort(L, r);
	code = run_with_marker(L, r, "assert_script_run", cmd, NULL, timeout);
	if (code < 0) {
		runner__progress(r, "assert_script_run '%s': timed out after %.2fs", cmd, time_mono() - t0);
		return luaL_error(L, "command '%s' timed out", cmd);
	}
	runner__progress(r, "assert_script_run '%s': exit %ld (%.2fs)", cmd, code, time_mono() - t0);
	if (code != 0) {
		struct module *m = runner__module(r);
		if (m)
			m->hard_fail = 1;
		if (msg)
			return luaL_error(L, "command '%s' failed: %s", cmd, msg);
		return luaL_error(L, "command '%s' failed (exit code %d)", cmd, (int)code);
	}
	return 0;
}

static void trim_right(char *s)
{
	size_t n = strlen(s);
	while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == ' ' || s[n - 1] == '\t'))
		s[--n] = '\0';
}

/* Types cmd (which prints BEGIN alone on a line, its output, then
 * END-<exit code>-) and waits for that block on the serial port. Returns 1
 * with *text (caller frees) and *m (group 1 = output, 2 = exit code), 0 on
 * time-out; raises when the port closed or the job was aborted. */
static int type_and_capture(lua_State *L, struct runner *r, const char *what, struct buf *cmd, const char *begin,
			    const char *end, double timeout, char **text, struct term_match *m)
{
	char pattern[160], err[512];
	size_t len;
	int rc;

	testapi_type(L, r, cmd->data, cmd->len, r->typing_interval, 0);
	buf_release(cmd);
	snprintf(pattern, sizeof(pattern), "(?s)(?:^|\\n)%s\\r?\\n(.*?)%s-(\\d+)-", begin, end);
	rc = term_search(r, what, pattern, 0, timeout, text, &len, m, err, sizeof(err));
	if (rc != 1) {
		free(*text);
		*text = NULL;
		testapi_check_abort(L, r);
		if (rc < 0)
			luaL_error(L, "%s", err);
	}
	return rc;
}

static int l_script_output(lua_State *L)
{
	struct runner *r = testapi_runner(L);
	const char *script = luaL_checkstring(L, 1);
	double timeout = testapi_timeout(L, r, 2, 30);
	int proceed = testapi_opt_bool(L, 2, "proceed_on_failure", 0);
	char marker[6], end[32];
	struct term_match m;
	struct buf b;
	char *text = NULL, *out;
	long code = -1;
	int rc;
	double t0 = time_mono();

	testapi_check_abort(L, r);
	make_marker(marker);
	buf_init(&b, LIMIT_SERIAL_LOG);
	if (strchr(script, '\n') || strlen(script) >= 80)
		rc = buf_printf(&b, "cat > /tmp/script%s.sh << 'EOT_%s'\n%s\nEOT_%s\n"
				"(echo %s; sh -e /tmp/script%s.sh; echo SCRIPT_FINISHED%s-$?-) > /dev/%s\n",
				marker, marker, script, marker, marker, marker, marker, serialdev(r));
	else
		rc = buf_printf(&b, "(echo %s; %s; echo SCRIPT_FINISHED%s-$?-) > /dev/%s\n",
				marker, script, marker, serialdev(r));
	if (rc) {
		buf_release(&b);
		return luaL_error(L, "script too long");
	}
	/* The marker alone on a line starts the output; digits end it. */
	snprintf(end, sizeof(end), "SCRIPT_FINISHED%s", marker);
	rc = type_and_capture(L, r, "script_output", &b, marker, end, timeout, &text, &m);
	if (rc == 0) {
		runner__progress(r, "script_output: timed out after %.2fs", time_mono() - t0);
		return luaL_error(L, "script_output timed out: '%s'", script);
	}
	{
		char num[32];
		size_t n = m.cap_end[2] - m.cap_start[2];
		if (n >= sizeof(num))
			n = sizeof(num) - 1;
		memcpy(num, text + m.cap_start[2], n);
		num[n] = '\0';
		if (str_to_long(num, &code))
			code = -1;
	}
	out = term_crlf_to_lf(text + m.cap_start[1], m.cap_end[1] - m.cap_start[1]);
	free(text);
	if (!out)
		return nomem(L, r, "script_output's text");
	trim_right(out);
	runner__progress(r, "script_output: exit %ld, %zu bytes (%.2fs)", code, strlen(out), time_mono() - t0);
	lua_pushstring(L, out);
	free(out);
	if (code != 0 && !proceed)
		return luaL_error(L, "script_output failed with exit code %d: '%s'", (int)code, script);
	return 1;
}

static int l_upload_logs(lua_State *L)
{
	struct runner *r = testapi_runner(L);
	const char *file = luaL_checkstring(L, 1);
	double timeout = testapi_timeout(L, r, 2, 90);
	int failok = testapi_opt_bool(L, 2, "failok", 0);
	const char *log_name = testapi_opt_string(L, 2, "log_name", NULL);
	struct module *m = runner__module(r);
	char marker[6], begin[32], end[32], *text = NULL, *base, *dir = NULL, *path = NULL, *upname = NULL;
	struct term_match sm;
	struct buf b, data;
	long code = -1;
	int rc;

	testapi_check_abort(L, r);
	make_marker(marker);
	buf_init(&b, LIMIT_SERIAL_LOG);
	buf_init(&data, LIMIT_SERIAL_LOG);
	rc = buf_printf(&b, "(echo UPLOAD%s; base64 '%s'; echo UPLOADED%s-$?-) > /dev/%s\n",
			marker, file, marker, serialdev(r));
	if (rc) {
		buf_release(&b);
		return luaL_error(L, "file name too long");
	}
	snprintf(begin, sizeof(begin), "UPLOAD%s", marker);
	snprintf(end, sizeof(end), "UPLOADED%s", marker);
	rc = type_and_capture(L, r, "upload_logs", &b, begin, end, timeout, &text, &sm);
	if (rc == 1) {
		code = text[sm.cap_start[2]] == '0' && sm.cap_end[2] - sm.cap_start[2] == 1 ? 0 : 1;
		if (code == 0 && base64_decode(text + sm.cap_start[1], sm.cap_end[1] - sm.cap_start[1], &data))
			code = 1;
	}
	free(text);
	if (code != 0) {
		buf_release(&data);
		runner__progress(r, "upload_logs '%s': failed", file);
		if (failok)
			return 0;
		return luaL_error(L, "upload_logs: could not read '%s' in the guest%s", file,
				  rc == 0 ? " (timed out)" : "");
	}
	base = path_stem(log_name ? log_name : file, NULL);
	upname = malloc(strlen(base) + (m ? strlen(m->name) : 0) + 2);
	dir = path_join(r->testresults, "ulogs");
	if (upname && dir) {
		snprintf(upname, strlen(base) + (m ? strlen(m->name) : 0) + 2, "%s-%s", m ? m->name : "job", base);
		path = path_join(dir, upname);
	}
	rc = path && file_mkdir_p(dir, 0755) == 0 ? file_write_all(path, data.data ? data.data : "", data.len) : ERR_NOMEM;
	runner__progress(r, "upload_logs '%s': %zu bytes -> ulogs/%s", file, data.len, upname ? upname : "?");
	buf_release(&data);
	free(base);
	free(dir);
	free(path);
	if (rc) {
		free(upname);
		return luaL_error(L, "upload_logs: could not save '%s': %s", file, err_str(rc));
	}
	lua_pushstring(L, upname);
	free(upname);
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

static const luaL_Reg console_api[] = {
	{ "select_console", l_select_console },
	{ "validate_script_output", l_validate_script_output },
	{ "background_script_run", l_background_script_run },
	{ "hashed_string", l_hashed_string },
	{ "console", l_console },
	{ "add_console", l_add_console },
	{ "reset_consoles", l_reset_consoles },
	{ "current_console", l_current_console },
	{ "is_serial_terminal", l_is_serial_terminal },
	{ "wait_serial", l_wait_serial },
	{ "script_run", l_script_run },
	{ "assert_script_run", l_assert_script_run },
	{ "script_output", l_script_output },
	{ "upload_logs", l_upload_logs },
	{ NULL, NULL },
};

void testapi_register_console(lua_State *L)
{
	lua_pushglobaltable(L);
	luaL_setfuncs(L, console_api, 0);
	lua_pop(L, 1);
}
