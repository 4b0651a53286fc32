/* SPDX-License-Identifier: MIT */
/* testapi.c - the Lua test API with openQA's names and meaning: screen
 * checks (assert_screen_change too), keyboard (held keys too), mouse,
 * get_var/set_var and result records, the registration of every testapi*.c
 * and --list-testapi. Consoles, serial and scripts: testapi_console.c; the
 * rest by what it holds (_vars, _vm, _module, _sound, _urls). Every function
 * validates its Lua arguments before taking any C resource (Lua errors
 * longjmp); the work is done by prim/'s primitives, which raise nothing. */
#define LOG_MODULE "testapi"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <lualib.h>
#include "image/needle.h"
#include "runner/prim/keys.h"
#include "runner/prim/screen.h"
#include "runner/lua/testapi.h"
#include "runner/prim/input.h"
#include "vm/serial.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/log.h"
#include "util/time.h"
#include "vm/qmp.h"
#include "vm/vnc.h"
#include "util/banned.h" /* last: after every system header */

#define RUNNER_KEY "vigil.runner"
#define DEFAULT_ASSERT_TIMEOUT 30.0
#define MAX_TAGS 64

struct runner *testapi_runner(lua_State *L)
{
	struct runner *r;
	lua_getfield(L, LUA_REGISTRYINDEX, RUNNER_KEY);
	r = lua_touserdata(L, -1);
	lua_pop(L, 1);
	r->last_api = time_mono();
	r->api_L = L;
	runner__pause_at_command(r, L);
	return r;
}

void testapi_check_abort(lua_State *L, struct runner *r)
{
	if (runner__aborted(r))
		luaL_error(L, "%s", r->reason);
}

double testapi_opt_number(lua_State *L, int idx, const char *name, double dflt)
{
	double v = dflt;
	if (!lua_istable(L, idx))
		return dflt;
	lua_getfield(L, idx, name);
	if (!lua_isnil(L, -1)) {
		if (!lua_isnumber(L, -1))
			luaL_error(L, "option '%s' must be a number", name);
		v = lua_tonumber(L, -1);
	}
	lua_pop(L, 1);
	return v;
}

int testapi_opt_bool(lua_State *L, int idx, const char *name, int dflt)
{
	int v = dflt;
	if (!lua_istable(L, idx))
		return dflt;
	lua_getfield(L, idx, name);
	if (!lua_isnil(L, -1))
		v = lua_isnumber(L, -1) ? lua_tonumber(L, -1) != 0 : lua_toboolean(L, -1);
	lua_pop(L, 1);
	return v;
}

const char *testapi_opt_string(lua_State *L, int idx, const char *name, const char *dflt)
{
	const char *v = dflt;
	if (!lua_istable(L, idx))
		return dflt;
	lua_getfield(L, idx, name);
	if (!lua_isnil(L, -1)) {
		if (!lua_isstring(L, -1))
			luaL_error(L, "option '%s' must be a string", name);
		v = lua_tostring(L, -1);
	}
	lua_pop(L, 1); /* the string stays alive in the options table */
	return v;
}

double testapi_timeout(lua_State *L, struct runner *r, int idx, double dflt)
{
	double t = dflt;
	if (lua_isnumber(L, idx))
		t = lua_tonumber(L, idx);
	else if (lua_type(L, idx) == LUA_TSTRING && !strcmp(lua_tostring(L, idx), "timeout") && lua_isnumber(L, idx + 1))
		t = lua_tonumber(L, idx + 1); /* Perl's flat form, from upstream Lua modules: "timeout", 30 */
	else if (lua_istable(L, idx))
		t = testapi_opt_number(L, idx, "timeout", dflt);
	else if (!lua_isnoneornil(L, idx))
		luaL_argerror(L, idx, "expected a timeout in seconds or an options table");
	if (t < 0)
		luaL_argerror(L, idx, "timeout must not be negative");
	return t * r->timeout_scale;
}

/* Collects the tag argument (a string or an array of strings) into tags;
 * the strings stay owned by the Lua stack. */
static size_t get_tags(lua_State *L, int idx, const char **tags)
{
	size_t n = 0;
	lua_Integer i, len;

	if (lua_type(L, idx) == LUA_TSTRING) {
		tags[0] = lua_tostring(L, idx);
		n = 1;
	} else if (lua_istable(L, idx)) {
		len = luaL_len(L, idx);
		if (len > MAX_TAGS)
			luaL_argerror(L, idx, "too many tags");
		for (i = 1; i <= len; i++) {
			lua_rawgeti(L, idx, i);
			if (lua_type(L, -1) != LUA_TSTRING)
				luaL_argerror(L, idx, "tags must be strings");
			tags[n++] = lua_tostring(L, -1);
			lua_pop(L, 1); /* the table keeps the string alive */
		}
	} else {
		luaL_argerror(L, idx, "expected a tag or a list of tags");
	}
	for (i = 0; i < (lua_Integer)n; i++)
		if (!tags[i][0])
			luaL_argerror(L, idx, "no tags specified");
	if (n == 0)
		luaL_argerror(L, idx, "no tags specified");
	return n;
}

static void push_json(lua_State *L, json_t *v)
{
	const char *key;
	json_t *item;
	size_t i;

	switch (json_typeof(v)) {
	case JSON_OBJECT:
		lua_createtable(L, 0, (int)json_object_size(v));
		json_object_foreach(v, key, item) {
			push_json(L, item);
			lua_setfield(L, -2, key);
		}
		break;
	case JSON_ARRAY:
		lua_createtable(L, (int)json_array_size(v), 0);
		json_array_foreach(v, i, item) {
			push_json(L, item);
			lua_rawseti(L, -2, (lua_Integer)i + 1);
		}
		break;
	case JSON_STRING: lua_pushstring(L, json_string_value(v)); break;
	case JSON_INTEGER: lua_pushinteger(L, (lua_Integer)json_integer_value(v)); break;
	case JSON_REAL: lua_pushnumber(L, json_real_value(v)); break;
	case JSON_TRUE: lua_pushboolean(L, 1); break;
	case JSON_FALSE: lua_pushboolean(L, 0); break;
	default: lua_pushnil(L); break;
	}
}

static void tags_text(const char *const *tags, size_t n, char *buf, size_t len)
{
	size_t i, off = 0;
	buf[0] = '\0';
	for (i = 0; i < n && off < len; i++) {
		int w = snprintf(buf + off, len - off, "%s%s", i ? "', '" : "", tags[i]);
		if (w < 0)
			break;
		off += (size_t)w;
	}
}

/* assert_screen / check_screen core. Pushes the match table or nil. */
static int do_check(lua_State *L, int is_assert)
{
	struct runner *r = testapi_runner(L);
	const char *tags[MAX_TAGS];
	char text[512];
	size_t n = get_tags(L, 1, tags);
	double timeout = testapi_timeout(L, r, 2, is_assert ? DEFAULT_ASSERT_TIMEOUT : 0);
	double t0 = time_mono();
	json_t *match = NULL;
	int near = 0, rc;

	testapi_check_abort(L, r);
	tags_text(tags, n, text, sizeof(text));
	rc = screen_check(r, tags, n, timeout, is_assert, &match, &near);
	/* Developer mode may hold a failed check for a retry with new needles. */
	while (rc == 0 && runner__pause_on_mismatch(r, text, is_assert))
		rc = screen_check(r, tags, n, 0, is_assert, &match, &near);
	if (rc != 1) {
		json_decref(match);
		testapi_check_abort(L, r); /* VM gone or MAX_JOB_TIME reached */
	}
	if (rc == 1) {
		runner__progress(r, "%s '%s': matched %s in %.2fs", is_assert ? "assert_screen" : "check_screen",
				text, json_string_value(json_object_get(match, "needle")), time_mono() - t0);
		json_decref(r->last_match);
		r->last_match = match;
		push_json(L, match);
		return 1;
	}
	runner__progress(r, "%s '%s': no match in %.2fs%s", is_assert ? "assert_screen" : "check_screen",
			text, time_mono() - t0, near ? " (near miss: needs review)" : "");
	if (is_assert && r->check_why[0])
		runner__progress(r, "%s", r->check_why);
	if (is_assert) {
		struct module *m = runner__module(r);
		if (m) {
			if (near)
				m->needs_review = 1;
			else
				m->hard_fail = 1;
		}
		return luaL_error(L, "no candidate needle with tag(s) '%s' matched", text);
	}
	lua_pushnil(L);
	return 1;
}

static int l_assert_screen(lua_State *L) { return do_check(L, 1); }
static int l_check_screen(lua_State *L) { return do_check(L, 0); }

static int l_match_has_tag(lua_State *L)
{
	struct runner *r = testapi_runner(L);
	const char *tag = luaL_checkstring(L, 1);
	json_t *tags, *t;
	size_t i;

	if (!r->last_match) {
		lua_pushnil(L);
		return 1;
	}
	tags = json_object_get(r->last_match, "tags");
	json_array_foreach(tags, i, t) {
		if (!strcmp(json_string_value(t), tag)) {
			lua_pushboolean(L, 1);
			return 1;
		}
	}
	lua_pushboolean(L, 0);
	return 1;
}

static int l_wait_still_screen(lua_State *L)
{
	struct runner *r = testapi_runner(L);
	double still = 7, timeout = 30, level = SCREEN_STILL_LEVEL, t0 = time_mono();
	int rc;

	if (lua_istable(L, 1)) {
		still = testapi_opt_number(L, 1, "stilltime", still);
		timeout = testapi_opt_number(L, 1, "timeout", timeout);
		level = testapi_opt_number(L, 1, "similarity_level", level);
	} else {
		still = luaL_optnumber(L, 1, still);
		timeout = luaL_optnumber(L, 2, timeout);
		if (lua_istable(L, 3)) {
			timeout = testapi_opt_number(L, 3, "timeout", timeout);
			level = testapi_opt_number(L, 3, "similarity_level", level);
		}
	}
	testapi_check_abort(L, r);
	if (timeout < still) {
		log_warn("wait_still_screen: timeout %.1fs is shorter than the still time %.1fs", timeout, still);
		lua_pushboolean(L, 0);
		return 1;
	}
	rc = screen_wait_still(r, "wait_still_screen", still, timeout * r->timeout_scale, level);
	if (rc != 1)
		testapi_check_abort(L, r);
	runner__progress(r, "wait_still_screen %.1fs: %s after %.2fs", still, rc == 1 ? "still" : "timed out",
			time_mono() - t0);
	if (rc == 0)
		screen_save_step(r, "unk");
	lua_pushboolean(L, rc == 1);
	return 1;
}

static int l_wait_screen_change(lua_State *L)
{
	struct runner *r = testapi_runner(L);
	double timeout, level, sim = 0, t0 = time_mono();
	struct frame *ref;
	int rc;

	luaL_checktype(L, 1, LUA_TFUNCTION);
	timeout = testapi_timeout(L, r, 2, 10);
	level = lua_istable(L, 2) ? testapi_opt_number(L, 2, "similarity_level", SCREEN_CHANGE_LEVEL) : SCREEN_CHANGE_LEVEL;
	if (lua_istable(L, 3))
		level = testapi_opt_number(L, 3, "similarity_level", level);
	testapi_check_abort(L, r);
	ref = screen_current(r);
	lua_pushvalue(L, 1);
	if (lua_pcall(L, 0, 0, 0) != LUA_OK) {
		if (ref)
			frame_unref(ref);
		return lua_error(L);
	}
	rc = screen_wait_change(r, "wait_screen_change", ref, timeout, level, &sim);
	if (ref)
		frame_unref(ref);
	if (rc != 1)
		testapi_check_abort(L, r);
	runner__progress(r, "wait_screen_change: %s after %.2fs", rc == 1 ? "changed" : "no change",
			time_mono() - t0);
	lua_pushboolean(L, rc == 1);
	return 1;
}

void testapi_send_keysyms(lua_State *L, struct runner *r, const uint32_t *syms, size_t n, double hold)
{
	char err[600];

	if (input_keysyms(r, syms, n, hold, err, sizeof(err)))
		luaL_error(L, "%s", err);
}

static int l_send_key(lua_State *L)
{
	struct runner *r = testapi_runner(L);
	const char *name = luaL_checkstring(L, 1);
	int wsc = testapi_opt_bool(L, 2, "wait_screen_change", 0);
	uint32_t syms[KEYS_MAX_COMBO];
	char err[160];
	size_t n;
	int rc;

	if (keys_parse(name, syms, &n, err, sizeof(err)))
		return luaL_error(L, "send_key: %s", err);
	testapi_check_abort(L, r);
	if (r->console == CONSOLE_SERIAL) {
		/* On the serial terminal only plain characters and control keys make sense. */
		char c = 0;
		if (n == 1 && syms[0] < 0x80)
			c = (char)syms[0];
		else if (n == 1 && syms[0] == 0xff0d)
			c = '\n';
		else if (n == 2 && syms[0] == 0xffe3 && syms[1] >= 'a' && syms[1] <= 'z')
			c = (char)(syms[1] - 'a' + 1);
		else if (n == 1 && syms[0] == 0xff1b)
			c = 0x1b;
		else if (n == 1 && syms[0] == 0xff09)
			c = '\t';
		else if (n == 1 && syms[0] == 0xff08)
			c = 0x7f;
		if (!c)
			return luaL_error(L, "send_key: key '%s' cannot be sent to the serial terminal", name);
		testapi_type(L, r, &c, 1, 0, 0);
		runner__progress(r, "send_key %s", name);
		return 0;
	}
	if (wsc) {
		struct frame *ref = screen_current(r);
		double sim;
		testapi_send_keysyms(L, r, syms, n, 0.01);
		rc = screen_wait_change(r, "send_key's wait_screen_change", ref, 10 * r->timeout_scale,
					SCREEN_CHANGE_LEVEL, &sim);
		if (ref)
			frame_unref(ref);
		if (rc < 0)
			testapi_check_abort(L, r);
	} else {
		testapi_send_keysyms(L, r, syms, n, 0.01);
	}
	runner__progress(r, "send_key %s", name);
	return 0;
}

static int l_send_key_until_needlematch(lua_State *L)
{
	struct runner *r = testapi_runner(L);
	const char *tags[MAX_TAGS];
	size_t ntags = get_tags(L, 1, tags);
	const char *key = luaL_checkstring(L, 2);
	lua_Integer counter = luaL_optinteger(L, 3, 20);
	double timeout = luaL_optnumber(L, 4, 1) * r->timeout_scale;
	uint32_t syms[KEYS_MAX_COMBO];
	char err[160], text[512];
	json_t *match = NULL;
	size_t n;
	int near, rc;
	double t = 0;

	if (keys_parse(key, syms, &n, err, sizeof(err)))
		return luaL_error(L, "send_key_until_needlematch: %s", err);
	tags_text(tags, ntags, text, sizeof(text));
	for (; counter > 0; counter--) {
		testapi_check_abort(L, r);
		rc = screen_check(r, tags, ntags, t, 0, &match, &near);
		if (rc < 0)
			testapi_check_abort(L, r);
		if (rc == 1) {
			runner__progress(r, "send_key_until_needlematch '%s': matched", text);
			json_decref(r->last_match);
			r->last_match = match;
			push_json(L, match);
			return 1;
		}
		{
			struct frame *ref = screen_current(r);
			double sim;
			testapi_send_keysyms(L, r, syms, n, 0.01);
			rc = screen_wait_change(r, "send_key_until_needlematch's wait_screen_change", ref,
						1.0 * r->timeout_scale, SCREEN_CHANGE_LEVEL, &sim);
			if (ref)
				frame_unref(ref);
			if (rc < 0)
				testapi_check_abort(L, r);
		}
		t = timeout;
	}
	lua_settop(L, 1);
	lua_pushnumber(L, 1);
	return do_check(L, 1);
}

void testapi_type(lua_State *L, struct runner *r, const char *text, size_t len, double interval, int secret)
{
	char err[600];

	(void)secret;
	if (input_type(r, text, len, interval, err, sizeof(err)))
		luaL_error(L, "%s", err);
}

/* Seconds per key as os-autoinst: 1/TYPING_LIMIT, slower for small max_interval. */
static double type_interval(struct runner *r, double max_interval)
{
	double t = r->typing_interval;
	if (max_interval > 0 && max_interval < 250)
		t += 1.0 / sqrt(max_interval);
	return t;
}

/* type_string's wait_screen_change=N (os-autoinst): the text (with its
 * line feed) in pieces of N characters, each waiting for the screen to
 * change (wait_screen_change_similarity_level, default 60) and, with
 * wait_still_screen, to settle. */
static void type_pieces(lua_State *L, struct runner *r, const char *s, size_t len, int lf, int opt,
			double interval, int secret)
{
	size_t piece = (size_t)testapi_opt_number(L, opt, "wait_screen_change", 1);
	double level = testapi_opt_number(L, opt, "wait_screen_change_similarity_level", 60);
	double timeout = testapi_opt_number(L, opt, "timeout", 30) * r->timeout_scale;
	double still = testapi_opt_number(L, opt, "wait_still_screen", 0);
	double still_level = testapi_opt_number(L, opt, "similarity_level", SCREEN_STILL_LEVEL);
	size_t off, total = len + (lf ? 1 : 0);
	int rc;

	for (off = 0; off < total; off += piece) {
		size_t n = total - off < piece ? total - off : piece;
		struct frame *ref = screen_current(r);
		double sim;
		size_t text_n = off + n > len ? (off < len ? len - off : 0) : n;

		if (text_n)
			testapi_type(L, r, s + off, text_n, interval, secret);
		if (text_n < n)
			testapi_type(L, r, "\n", 1, interval, secret);
		rc = screen_wait_change(r, "type_string's wait_screen_change", ref, timeout, level, &sim);
		if (ref)
			frame_unref(ref);
		if (rc < 0)
			testapi_check_abort(L, r);
		if (still > 0 && (rc = screen_wait_still(r, "type_string's wait_still_screen", still, timeout,
							 still_level)) != 1) {
			testapi_check_abort(L, r);
			luaL_error(L, "wait_still_screen timed out after %.0fs!", timeout / r->timeout_scale);
		}
	}
}

static int do_type(lua_State *L, struct runner *r, const char *s, size_t len, int opt, int secret, int lf)
{
	double max_interval = 250, still;
	double t0 = time_mono();

	if (lua_isnumber(L, opt))
		max_interval = lua_tonumber(L, opt);
	else if (lua_istable(L, opt)) {
		max_interval = testapi_opt_number(L, opt, "max_interval", max_interval);
		secret = testapi_opt_bool(L, opt, "secret", secret);
		lf = testapi_opt_bool(L, opt, "lf", lf);
	}
	still = testapi_opt_number(L, opt, "wait_still_screen", 0);
	testapi_check_abort(L, r);
	if (testapi_opt_number(L, opt, "wait_screen_change", 0) >= 1 && r->console == CONSOLE_VGA) {
		type_pieces(L, r, s, len, lf, opt, type_interval(r, max_interval), secret);
		lf = 0; /* typed with the last piece */
		still = 0; /* waited for after each piece */
	} else {
		testapi_type(L, r, s, len, type_interval(r, max_interval), secret);
		if (lf)
			testapi_type(L, r, "\n", 1, type_interval(r, max_interval), secret);
	}
	{
		char shown[256];
		size_t i, o = 0;
		/* Control characters shown escaped so the progress stays one line. */
		for (i = 0; !secret && i < len && o + 5 < sizeof(shown); i++) {
			unsigned char c = (unsigned char)s[i];
			if (c == '\n') {
				shown[o++] = '\\';
				shown[o++] = 'n';
			} else if (c < 0x20 || c == 0x7f) {
				o += (size_t)snprintf(shown + o, sizeof(shown) - o, "\\x%02x", c);
			} else {
				shown[o++] = (char)c;
			}
		}
		shown[o] = '\0';
		runner__progress(r, "type_string '%s%s' (%.2fs)", secret ? "[masked]" : shown, lf ? "\\n" : "",
				time_mono() - t0);
	}
	if (still > 0 && r->console == CONSOLE_VGA) {
		double timeout = testapi_opt_number(L, opt, "timeout", 30);
		if (screen_wait_still(r, "type_string's wait_still_screen", still, timeout * r->timeout_scale,
				      SCREEN_STILL_LEVEL) != 1) {
			testapi_check_abort(L, r);
			return luaL_error(L, "wait_still_screen timed out after %.0fs!", timeout);
		}
	}
	return 0;
}

static int l_type_string(lua_State *L)
{
	struct runner *r = testapi_runner(L);
	size_t len;
	const char *s = luaL_checklstring(L, 1, &len);
	return do_type(L, r, s, len, 2, 0, 0);
}

static int l_type_password(lua_State *L)
{
	struct runner *r = testapi_runner(L);
	size_t len;
	const char *s;
	if (lua_isnoneornil(L, 1) || lua_istable(L, 1)) {
		s = vars_get(&r->vars, "PASSWORD");
		if (!s)
			return luaL_error(L, "type_password: no password given and PASSWORD is not set");
		len = strlen(s);
		if (lua_istable(L, 1))
			return do_type(L, r, s, len, 1, 1, 0);
		return do_type(L, r, s, len, 2, 1, 0);
	}
	s = luaL_checklstring(L, 1, &len);
	return do_type(L, r, s, len, 2, 1, 0);
}

static int l_enter_cmd(lua_State *L)
{
	struct runner *r = testapi_runner(L);
	size_t len;
	const char *s = luaL_checklstring(L, 1, &len);
	return do_type(L, r, s, len, 2, 0, 1);
}

static void mouse_move(lua_State *L, struct runner *r, int x, int y, int mask)
{
	char err[600];

	if (input_pointer(r, x, y, mask, err, sizeof(err)))
		luaL_error(L, "%s", err);
}

static int l_mouse_set(lua_State *L)
{
	struct runner *r = testapi_runner(L);
	int x = (int)luaL_checkinteger(L, 1), y = (int)luaL_checkinteger(L, 2);
	char err[600];

	testapi_check_abort(L, r);
	if (input_mouse_set(r, x, y, err, sizeof(err)))
		return luaL_error(L, "%s", err);
	return 0;
}

static int button_mask(lua_State *L, const char *b)
{
	if (!strcmp(b, "left"))
		return 1;
	if (!strcmp(b, "middle"))
		return 2;
	if (!strcmp(b, "right"))
		return 4;
	return luaL_error(L, "unknown mouse button '%s' (left, middle, right)", b);
}

static void click(lua_State *L, struct runner *r, int mask, double hold, int times)
{
	int i;
	for (i = 0; i < times; i++) {
		mouse_move(L, r, r->mouse_x, r->mouse_y, mask);
		time_sleep_ms((int)(hold * 1000));
		mouse_move(L, r, r->mouse_x, r->mouse_y, 0);
		if (i + 1 < times)
			time_sleep_ms((int)(hold * 1000));
	}
}

/* mouse_click / mouse_dclick / mouse_tclick(button="left", t): times
 * clicks of the button, t seconds between every event. */
static int mouse_clicks(lua_State *L, const char *what, int times, double dflt)
{
	struct runner *r = testapi_runner(L);
	const char *button = luaL_optstring(L, 1, "left");
	int mask = button_mask(L, button);
	double t = luaL_optnumber(L, 2, dflt);
	testapi_check_abort(L, r);
	click(L, r, mask, t, times);
	runner__progress(r, "%s %s at %d,%d", what, button, r->mouse_x, r->mouse_y);
	return 0;
}

static int l_mouse_click(lua_State *L) { return mouse_clicks(L, "mouse_click", 1, 0.15); }
static int l_mouse_dclick(lua_State *L) { return mouse_clicks(L, "mouse_dclick", 2, 0.10); }
static int l_mouse_tclick(lua_State *L) { return mouse_clicks(L, "mouse_tclick", 3, 0.10); }

static int l_mouse_hide(lua_State *L)
{
	struct runner *r = testapi_runner(L);
	int off = (int)luaL_optinteger(L, 1, 0);
	char err[600];

	testapi_check_abort(L, r);
	if (input_mouse_hide(r, off, err, sizeof(err)))
		return luaL_error(L, "%s", err);
	return 0;
}

/* os-autoinst's click point: the last area with a click point (with the
 * asked id), else the last area; its centre when none is given. */
static void click_point(lua_State *L, json_t *match, const char *point_id, int *x, int *y)
{
	json_t *areas = json_object_get(match, "area"), *chosen = NULL, *cp = NULL;
	size_t i = json_array_size(areas);

	if (i == 0)
		luaL_error(L, "the matched needle has no area to click");
	while (i-- > 0) {
		json_t *a = json_array_get(areas, i), *c = json_object_get(a, "click_point");
		if (c && (!point_id || (json_string_value(json_object_get(c, "id")) &&
					!strcmp(json_string_value(json_object_get(c, "id")), point_id)))) {
			chosen = a;
			cp = c;
			break;
		}
	}
	if (!chosen) {
		if (point_id)
			luaL_error(L, "the matched needle has no click point with id '%s'", point_id);
		chosen = json_array_get(areas, json_array_size(areas) - 1);
	}
	if (cp) {
		*x = (int)(json_integer_value(json_object_get(chosen, "x")) + json_number_value(json_object_get(cp, "xpos")));
		*y = (int)(json_integer_value(json_object_get(chosen, "y")) + json_number_value(json_object_get(cp, "ypos")));
	} else {
		*x = (int)(json_integer_value(json_object_get(chosen, "x")) + json_integer_value(json_object_get(chosen, "w")) / 2.0);
		*y = (int)(json_integer_value(json_object_get(chosen, "y")) + json_integer_value(json_object_get(chosen, "h")) / 2.0);
	}
}

/* click_lastmatch's core: clicks the last match's click point with the
 * options at opt, then (after 1 s, as os-autoinst) puts the pointer back
 * or hides it; the progress line names the calling function (what).
 * Does nothing without a match. */
static void click_last(lua_State *L, struct runner *r, const char *what, int opt, int dclick)
{
	const char *button = testapi_opt_string(L, opt, "button", "left");
	const char *point_id = testapi_opt_string(L, opt, "point_id", NULL);
	int mousehide = testapi_opt_bool(L, opt, "mousehide", 0);
	int mask = button_mask(L, button), x, y, oldx = r->mouse_x, oldy = r->mouse_y;
	double hold;

	dclick = testapi_opt_bool(L, opt, "dclick", dclick);
	hold = testapi_opt_number(L, opt, "clicktime", dclick ? 0.10 : 0.15);
	if (!r->last_match)
		return;
	click_point(L, r->last_match, point_id, &x, &y);
	r->mouse_x = x;
	r->mouse_y = y;
	mouse_move(L, r, x, y, 0);
	click(L, r, mask, hold, dclick ? 2 : 1);
	runner__progress(r, "%s: clicked %s at %d,%d%s", what, button, x, y, dclick ? " (double)" : "");
	time_sleep_ms(1000); /* as os-autoinst: let the click take effect */
	if (!mousehide && oldx >= 0 && oldy >= 0) {
		r->mouse_x = oldx;
		r->mouse_y = oldy;
	} else {
		r->mouse_x = r->xres - 1;
		r->mouse_y = r->yres - 1;
	}
	mouse_move(L, r, r->mouse_x, r->mouse_y, 0);
}

static int assert_and_click(lua_State *L, int dclick)
{
	struct runner *r = testapi_runner(L);

	lua_settop(L, 2);
	(void)testapi_opt_string(L, 2, "button", "left"); /* validate before the check */
	do_check(L, 1); /* raises on failure; pushes the match */
	click_last(L, r, dclick ? "assert_and_dclick" : "assert_and_click", 2, dclick);
	return 1;
}

static int l_assert_and_click(lua_State *L) { return assert_and_click(L, 0); }
static int l_assert_and_dclick(lua_State *L) { return assert_and_click(L, 1); }

static int l_click_lastmatch(lua_State *L)
{
	struct runner *r = testapi_runner(L);
	testapi_check_abort(L, r);
	click_last(L, r, "click_lastmatch", 1, 0);
	return 0;
}

/* One end of mouse_drag: {<which>point=tag} (the click point of that
 * needle, asserted first) or {<which>x=, <which>y=}. */
static void drag_point(lua_State *L, struct runner *r, const char *which, int *x, int *y)
{
	char key[32], kx[32], ky[32];
	double nx, ny;

	snprintf(key, sizeof(key), "%spoint", which);
	snprintf(kx, sizeof(kx), "%sx", which);
	snprintf(ky, sizeof(ky), "%sy", which);
	lua_getfield(L, 1, key);
	if (!lua_isnil(L, -1)) {
		lua_getglobal(L, "assert_screen");
		lua_insert(L, -2);
		lua_pushnumber(L, testapi_opt_number(L, 1, "timeout", DEFAULT_ASSERT_TIMEOUT));
		lua_call(L, 2, 1);
		lua_pop(L, 1);
		click_point(L, r->last_match, NULL, x, y);
		return;
	}
	lua_pop(L, 1);
	nx = testapi_opt_number(L, 1, kx, -1);
	ny = testapi_opt_number(L, 1, ky, -1);
	if (nx < 0 || ny < 0)
		luaL_error(L, "mouse_drag: give %s or %s and %s", key, kx, ky);
	*x = (int)nx;
	*y = (int)ny;
}

/* mouse_drag{startpoint= | startx=, starty=, endpoint= | endx=, endy=,
 * button="left", timeout=30}: press at the start, release at the end. */
static int l_mouse_drag(lua_State *L)
{
	struct runner *r = testapi_runner(L);
	int mask, sx, sy, ex, ey;

	luaL_checktype(L, 1, LUA_TTABLE);
	mask = button_mask(L, testapi_opt_string(L, 1, "button", "left"));
	testapi_check_abort(L, r);
	drag_point(L, r, "start", &sx, &sy);
	drag_point(L, r, "end", &ex, &ey);
	mouse_move(L, r, sx, sy, 0);
	time_sleep_ms(100);
	mouse_move(L, r, sx, sy, mask);
	time_sleep_ms(100);
	mouse_move(L, r, ex, ey, mask);
	time_sleep_ms(100);
	mouse_move(L, r, ex, ey, 0);
	r->mouse_x = ex;
	r->mouse_y = ey;
	runner__progress(r, "mouse_drag %d,%d -> %d,%d", sx, sy, ex, ey);
	return 0;
}

static int l_save_screenshot(lua_State *L)
{
	struct runner *r = testapi_runner(L);
	testapi_check_abort(L, r);
	if (r->console == CONSOLE_VGA)
		screen_save_step(r, "unk");
	return 0;
}

static int l_record_info(lua_State *L)
{
	struct runner *r = testapi_runner(L);
	const char *title = luaL_checkstring(L, 1);
	const char *text = luaL_optstring(L, 2, "");
	const char *result = testapi_opt_string(L, 3, "result", "ok");
	struct module *m = runner__module(r);

	if (strcmp(result, "ok") && strcmp(result, "fail") && strcmp(result, "softfail"))
		return luaL_error(L, "record_info: result must be ok, fail or softfail, not '%s'", result);
	steps_text(&r->steps, title, text, result);
	if (m && !strcmp(result, "fail")) {
		m->result = MODULE_FAIL;
		m->hard_fail = 1;
	} else if (m && !strcmp(result, "softfail") && m->result != MODULE_FAIL) {
		m->result = MODULE_SOFTFAIL;
	}
	runner__progress(r, "record_info '%s' (%s)", title, result);
	return 0;
}

static int l_record_soft_failure(lua_State *L)
{
	struct runner *r = testapi_runner(L);
	const char *reason = luaL_checkstring(L, 1);
	struct buf b;

	buf_init(&b, 1 << 20);
	if (buf_printf(&b, "# Soft Failure:\n%s\n", reason) == 0)
		steps_text(&r->steps, "Soft Failed", b.data, "softfail");
	buf_release(&b);
	steps_dent(&r->steps);
	runner__progress(r, "record_soft_failure: %s", reason);
	return 0;
}

static int l_get_var(lua_State *L)
{
	struct runner *r = testapi_runner(L);
	const char *v = vars_get(&r->vars, luaL_checkstring(L, 1));
	if (v)
		lua_pushstring(L, v);
	else
		lua_pushvalue(L, 2);
	return 1;
}

static int l_get_required_var(lua_State *L)
{
	struct runner *r = testapi_runner(L);
	const char *k = luaL_checkstring(L, 1);
	const char *v = vars_get(&r->vars, k);
	if (!v)
		return luaL_error(L, "Could not retrieve required variable %s", k);
	lua_pushstring(L, v);
	return 1;
}

static int l_set_var(lua_State *L)
{
	struct runner *r = testapi_runner(L);
	const char *k = luaL_checkstring(L, 1);
	const char *v = lua_isnoneornil(L, 2) ? NULL : luaL_tolstring(L, 2, NULL);
	if (!v) {
		json_object_del(r->vars.obj, k);
		return 0;
	}
	if (vars_set(&r->vars, k, v))
		return luaL_error(L, "Settings key '%s' is invalid", k);
	return 0;
}

static int l_check_var(lua_State *L)
{
	struct runner *r = testapi_runner(L);
	const char *v = vars_get(&r->vars, luaL_checkstring(L, 1));
	const char *want = luaL_tolstring(L, 2, NULL);
	lua_pushboolean(L, v && !strcmp(v, want));
	return 1;
}

static int l_diag(lua_State *L)
{
	struct runner *r = testapi_runner(L);
	log_info("diag: %s", luaL_tolstring(L, 1, NULL));
	(void)r;
	return 0;
}

static int l_sleep(lua_State *L)
{
	struct runner *r = testapi_runner(L);
	double s = luaL_checknumber(L, 1), end = time_mono() + s;
	while (time_mono() < end) {
		double left = end - time_mono();
		testapi_check_abort(L, r);
		if (runner__vm_dead(r))
			testapi_check_abort(L, r);
		time_sleep_ms(left > 0.2 ? 200 : (int)(left * 1000) + 1);
	}
	return 0;
}

static int shutdown_wait(lua_State *L, int is_assert)
{
	struct runner *r = testapi_runner(L);
	double timeout = testapi_timeout(L, r, 1, 60), end = runner__clock(r) + timeout;
	char status[64], err[256];

	for (;;) {
		int rc = qmp_query_status(r->qmp, status, sizeof(status), err, sizeof(err));
		if ((rc == 0 && !strcmp(status, "shutdown")) || (rc && r->expect_exit)) {
			runner__progress(r, "%s: machine is shut down", is_assert ? "assert_shutdown" : "check_shutdown");
			r->expect_exit = 1;
			lua_pushboolean(L, 1);
			return 1;
		}
		if (rc) {
			runner__vm_dead(r);
			testapi_check_abort(L, r);
		}
		if (runner__clock(r) >= end)
			break;
		testapi_check_abort(L, r);
		time_sleep_ms(250);
	}
	if (runner__vm_frozen(r, runner__clock(r) - (end - timeout), "%s ran out",
			      is_assert ? "assert_shutdown" : "check_shutdown"))
		testapi_check_abort(L, r);
	runner__progress(r, "%s: machine did not shut down", is_assert ? "assert_shutdown" : "check_shutdown");
	if (is_assert) {
		screen_save_step(r, "fail");
		return luaL_error(L, "Machine didn't shut down!");
	}
	lua_pushboolean(L, 0);
	return 1;
}

static int l_check_shutdown(lua_State *L) { return shutdown_wait(L, 0); }
static int l_assert_shutdown(lua_State *L) { return shutdown_wait(L, 1); }

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
	char err[600];

	if (input_hold_key(r, name, down, err, sizeof(err)))
		return luaL_error(L, "%s", err);
	return 0;
}

static int l_hold_key(lua_State *L) { return hold_or_release(L, 1); }
static int l_release_key(lua_State *L) { return hold_or_release(L, 0); }

static const luaL_Reg api[] = {
	{ "assert_screen", l_assert_screen },
	{ "check_screen", l_check_screen },
	{ "match_has_tag", l_match_has_tag },
	{ "wait_still_screen", l_wait_still_screen },
	{ "wait_screen_change", l_wait_screen_change },
	{ "send_key", l_send_key },
	{ "send_key_until_needlematch", l_send_key_until_needlematch },
	{ "type_string", l_type_string },
	{ "type_password", l_type_password },
	{ "enter_cmd", l_enter_cmd },
	{ "assert_and_click", l_assert_and_click },
	{ "assert_and_dclick", l_assert_and_dclick },
	{ "click_lastmatch", l_click_lastmatch },
	{ "mouse_tclick", l_mouse_tclick },
	{ "mouse_drag", l_mouse_drag },
	{ "mouse_set", l_mouse_set },
	{ "mouse_click", l_mouse_click },
	{ "mouse_dclick", l_mouse_dclick },
	{ "mouse_hide", l_mouse_hide },
	{ "save_screenshot", l_save_screenshot },
	{ "record_info", l_record_info },
	{ "record_soft_failure", l_record_soft_failure },
	{ "get_var", l_get_var },
	{ "get_required_var", l_get_required_var },
	{ "set_var", l_set_var },
	{ "check_var", l_check_var },
	{ "diag", l_diag },
	{ "sleep", l_sleep },
	{ "assert_screen_change", l_assert_screen_change },
	{ "hold_key", l_hold_key },
	{ "release_key", l_release_key },
	{ "check_shutdown", l_check_shutdown },
	{ "assert_shutdown", l_assert_shutdown },
	{ NULL, NULL },
};

void testapi_register(struct runner *r, lua_State *L)
{
	lua_pushlightuserdata(L, r);
	lua_setfield(L, LUA_REGISTRYINDEX, RUNNER_KEY);
	lua_pushglobaltable(L);
	luaL_setfuncs(L, api, 0);
	lua_pop(L, 1);
	testapi_register_console(L);
	testapi_register_vars(r, L);
	testapi_register_vm(L);
	testapi_register_module(L);
	testapi_register_sound(L);
	testapi_register_cmdsrv(L);
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
