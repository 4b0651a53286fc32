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

/* The terminal the serial functions use: the virtio console's stream
 * when a virtio-terminal is selected, else the serial port; *offset gets
 * its wait_serial position. Borrowed. */
struct serial *testapi_terminal(struct runner *r, size_t **offset);
/* Selects console name (testapi_console.c): the model's selection, the
 * VT switch of a tty-console, r->console. lua_names: Lua's default names
 * (vga, serial, ...) need no add_console. 0, or an error with err filled
 * (naming the console, its class and what vigil supports). */
int testapi_console_select(struct runner *r, const char *name, int lua_names, int *activated, char *err,
			   size_t errlen);
/* console(name)->method(args...) (args a JSON array, borrowed): *result
 * (the caller's) for the methods listed for its class; ERR_NOT_FOUND or
 * ERR_INVALID with err naming the console, the method and those listed. */
int testapi_console_call(struct runner *r, const char *name, const char *method, json_t *args, json_t **result,
			 char *err, size_t errlen);
/* Pushes a JSON scalar, or an object's scalar members as a table (nested
 * values left out); anything else as nil. */
void testapi_push_scalar(lua_State *L, json_t *v);
/* The methods of class cls, comma-separated, in buf. Returns buf. */
const char *testapi_console_methods(unsigned cls, char *buf, size_t len);

/* Register the test API globals in L (testapi.c), and the console and
 * serial ones (testapi_console.c). */
void testapi_register(struct runner *r, lua_State *L);
void testapi_register_console(lua_State *L);
/* testapi_more.c's functions and the exported variables (serialdev,
 * username, password, cmd) from r's variables; r NULL: their defaults. */
void testapi_register_more(struct runner *r, lua_State *L);
/* testapi_extra.c's functions (parse_extra_log, save_storage_drives,
 * switch_network, x11_start_program, ensure_installed, use). */
void testapi_register_extra(lua_State *L);
/* testapi_sound.c: start_audiocapture, assert_recorded_sound,
 * check_recorded_sound; and their primitives, shared with Perl's
 * backend_* commands. Each returns 0 or a negative code with err set.
 * testapi_sound_start: QEMU's wavcapture into path (relative: to the
 * results directory); testapi_sound_stop: stopcapture. */
void testapi_register_sound(lua_State *L);
int testapi_sound_start(struct runner *r, const char *path, char *err, size_t errlen);
int testapi_sound_stop(struct runner *r, char *err, size_t errlen);
/* One search of path (a PNG when is_png, else a sound file drawn as its
 * spectrogram) for the tags, recorded as a screen check. 1 matched
 * (*match: screen_check's match object, the caller's), 0 not (*near: a
 * near miss), negative with err set. */
int testapi_sound_check(struct runner *r, const char *path, int is_png, const char *const *tags, size_t ntags,
			int is_assert, json_t **match, int *near, char *err, size_t errlen);
/* Primitives of the Lua and Perl front ends (testapi_extra.c). Each
 * returns 0 or a negative code with err set. testapi_save_drives: disks
 * first..last (1-based) as ulogs/<name>-<n>-vm_disk_file.qcow2, the VM
 * stopped meanwhile; testapi_switch_network: the NIC link's state. */
int testapi_save_drives(struct runner *r, const char *name, long first, long last, char *err, size_t errlen);
int testapi_switch_network(struct runner *r, const char *link, int up, char *err, size_t errlen);
/* os-autoinst's upstream Lua module form, around the load of a module file
 * (script, relative to distri_dir): _before clears the form's globals (run,
 * test_flags, the hooks) and puts the distribution's lib/ directories on
 * package.path; _after turns a nil result with a global run into the module
 * table {run, flags = test_flags(), hooks}. 0, or ERR_PROTO with err set. */
void testapi_module_before(lua_State *L, const char *distri_dir, const char *script);
int testapi_module_after(lua_State *L, char *err, size_t errlen);
/* Pushes a new table of s split on ',' or ';' as Perl's split (trailing
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
