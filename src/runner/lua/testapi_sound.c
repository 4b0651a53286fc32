/* SPDX-License-Identifier: MIT */
/* testapi_sound.c - the VM's sound recorded and judged, as os-autoinst:
 * QEMU's wavcapture on the audiodev snd0 (vm/qemu_args.c) into
 * testresults/<module>-captured.wav, the recording drawn as snd2png's
 * spectrogram (image/spectrogram.c) and searched for sound needles like a
 * screen: the Lua functions over prim/sound.c's primitives. */
#define LOG_MODULE "testapi"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "image/frame.h"
#include "image/spectrogram.h"
#include "runner/prim/screen.h"
#include "runner/lua/testapi.h"
#include "runner/prim/sound.h"
#include "util/err.h"
#include "util/path.h"
#include "util/time.h"
#include "vm/qmp.h"
#include "util/banned.h" /* last: after every system header */

#define SOUND_MAX_TAGS 32

/* assert_recorded_sound / check_recorded_sound(tag): the capture stopped,
 * an "audio" step, the spectrogram searched once (basetest's
 * stop_audiocapture and verify_sound_image). */
static int recorded_sound(lua_State *L, int is_assert)
{
	struct runner *r = testapi_runner(L);
	const char *fn = is_assert ? "assert_recorded_sound" : "check_recorded_sound";
	const char *tags[SOUND_MAX_TAGS];
	struct module *m = runner__module(r);
	char err[1024], name[400], *wav;
	json_t *match = NULL, *d;
	size_t n = 0;
	int near = 0, rc;

	if (lua_istable(L, 1)) {
		for (n = 0; n < SOUND_MAX_TAGS; n++) {
			lua_rawgeti(L, 1, (lua_Integer)n + 1);
			tags[n] = lua_tostring(L, -1);
			lua_pop(L, 1); /* the table keeps the string */
			if (!tags[n])
				break;
		}
	} else {
		tags[n++] = luaL_checkstring(L, 1);
	}
	if (n == 0)
		return luaL_error(L, "%s: no tag given", fn);
	testapi_check_abort(L, r);
	if (!r->sound_running || !m)
		return luaL_error(L, "%s: no audio capture runs (call start_audiocapture first)", fn);
	if (sound_stop(r, err, sizeof(err)))
		return luaL_error(L, "%s: stopcapture: %s", fn, err);
	snprintf(name, sizeof(name), "%s-captured.wav", m->name);
	d = json_pack("{s:s,s:s}", "audio", name, "result", "unk");
	steps_add(&r->steps, d, -1);
	wav = path_join(r->testresults, name);
	if (!wav)
		return luaL_error(L, "%s: out of memory", fn);
	rc = sound_check(r, wav, 0, tags, n, is_assert, &match, &near, err, sizeof(err));
	free(wav);
	if (rc < 0)
		return luaL_error(L, "%s: %s", fn, err);
	if (rc == 1) {
		runner__progress(r, "%s '%s': matched %s", fn, tags[0], json_string_value(json_object_get(match, "needle")));
		testapi_push_scalar(L, match);
		json_decref(r->last_match);
		r->last_match = match;
		return 1;
	}
	runner__progress(r, "%s '%s': no match%s%s", fn, tags[0], r->check_why[0] ? ": " : "", r->check_why);
	/* os-autoinst's assert_recorded_sound records the failure and fails
	 * the module, but does not die: the module goes on */
	if (is_assert) {
		m->result = MODULE_FAIL;
		if (near)
			m->needs_review = 1;
		else
			m->hard_fail = 1;
	}
	lua_pushnil(L);
	return 1;
}

/* start_audiocapture(): records testresults/<module>-captured.wav; once
 * per module, as os-autoinst (basetest's capture_filename). */
static int l_start_audiocapture(lua_State *L)
{
	struct runner *r = testapi_runner(L);
	struct module *m = runner__module(r);
	char err[1024], name[400];

	testapi_check_abort(L, r);
	if (!m)
		return luaL_error(L, "start_audiocapture: only inside a module");
	if (r->sound_running || r->sound_module == (long)(m - r->modules))
		return luaL_error(L, "start_audiocapture: audio capture already in progress. Stop it first!");
	snprintf(name, sizeof(name), "testresults/%s-captured.wav", m->name);
	if (sound_start(r, name, err, sizeof(err)))
		return luaL_error(L, "start_audiocapture: %s", err);
	r->sound_module = (long)(m - r->modules);
	return 0;
}

static int l_assert_recorded_sound(lua_State *L) { return recorded_sound(L, 1); }
static int l_check_recorded_sound(lua_State *L) { return recorded_sound(L, 0); }

static const luaL_Reg sound_api[] = {
	{ "start_audiocapture", l_start_audiocapture },
	{ "assert_recorded_sound", l_assert_recorded_sound },
	{ "check_recorded_sound", l_check_recorded_sound },
	{ NULL, NULL },
};

void testapi_register_sound(lua_State *L)
{
	lua_pushglobaltable(L);
	luaL_setfuncs(L, sound_api, 0);
	lua_pop(L, 1);
}
