/* SPDX-License-Identifier: MIT */
/* testapi.h - internals shared by the Lua test API files (testapi*.c):
 * argument helpers, the runner lookup, input and serial primitives. */
#ifndef VIGIL_TESTAPI_H
#define VIGIL_TESTAPI_H

#include <lua.h>
#include <lauxlib.h>
#include <stdint.h>
#include <stdio.h>
#include "runner/core/job.h"

/* The runner of this Lua state (stored in the registry). Marks an API call
 * (resets the busy-loop guard). */
struct runner *testapi_runner(lua_State *L);

/* Raise a Lua error when the job has been aborted (VM gone, time out). */
void testapi_check_abort(lua_State *L, struct runner *r);

/* Option helpers: argument idx is either a table of named options or absent. */
double testapi_opt_number(lua_State *L, int idx, const char *name, double dflt);
int testapi_opt_bool(lua_State *L, int idx, const char *name, int dflt);
const char *testapi_opt_string(lua_State *L, int idx, const char *name, const char *dflt);

/* A timeout from a positional number, a {timeout=} table or the pair
 * "timeout", N at idx, scaled by TIMEOUT_SCALE. */
double testapi_timeout(lua_State *L, struct runner *r, int idx, double dflt);

/* Keyboard and serial primitives; they raise Lua errors on failure. */
void testapi_send_keysyms(lua_State *L, struct runner *r, const uint32_t *syms, size_t n, double hold);
void testapi_type(lua_State *L, struct runner *r, const char *text, size_t len, double interval, int secret);
/* Wait for pattern (PCRE2, or literal when literal=1) on the serial output
 * after the module's position. Returns 1 and pushes the text up to the end
 * of the match (CRLF -> LF) and moves the position; 0 and pushes nil on time-out.
 * what names the wait (e.g. "wait_serial 'login:'"): a time-out with QEMU
 * stopped ends the job incomplete naming it (runner__vm_frozen) and raises. */
int testapi_serial_wait(lua_State *L, struct runner *r, const char *what, const char *pattern, int literal,
			double timeout);

/* Pushes a JSON scalar, or an object's scalar members as a table (nested
 * values left out); anything else as nil. */
void testapi_push_scalar(lua_State *L, json_t *v);
/* Register the test API globals in L (testapi.c), and the console and
 * serial ones (testapi_console.c). */
void testapi_register(struct runner *r, lua_State *L);
void testapi_register_console(lua_State *L);
/* testapi_vars.c's functions and the exported variables (serialdev,
 * username, password, cmd, vars) from r's variables; r NULL: their
 * defaults. testapi_vm.c's VM control. testapi_module.c's functions and
 * the part of the API written in Lua (register it last: it calls the
 * others). */
void testapi_register_vars(struct runner *r, lua_State *L);
void testapi_register_vm(lua_State *L);
void testapi_register_module(lua_State *L);
/* testapi_sound.c: start_audiocapture, assert_recorded_sound,
 * check_recorded_sound (over prim/sound.h). */
void testapi_register_sound(lua_State *L);
/* testapi_module.c: os-autoinst's upstream Lua module form, around the load of a module file
 * (script, relative to distri_dir): _before clears the form's globals (run,
 * test_flags, the hooks) and puts the distribution's lib/ directories on
 * package.path; _after turns a nil result with a global run into the module
 * table {run, flags = test_flags(), hooks}. 0, or ERR_PROTO with err set. */
void testapi_module_before(lua_State *L, const char *distri_dir, const char *script);
int testapi_module_after(lua_State *L, char *err, size_t errlen);
/* testapi_vars.c: pushes a new table of s split on ',' or ';' as Perl's split (trailing
 * empty fields dropped); NULL or "" gives an empty table. */
void testapi_split_array(lua_State *L, const char *s);
/* testapi_urls.c: autoinst_url, data_url, upload_asset, and upload_logs
 * over the command server (wrapping the serial one: register it after
 * testapi_register_console). */
void testapi_register_cmdsrv(lua_State *L);

/* `vigil run --list-testapi` (runner_list_testapi): the Lua test API's
 * globals, one "NAME\tfunction|variable" line each, sorted. 0 or ERR_NOMEM. */
int testapi_list(FILE *out);

#endif
