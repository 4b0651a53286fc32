/* SPDX-License-Identifier: MIT */
/* testapi.h - internals shared by the Lua test API files (testapi*.c):
 * argument helpers, the runner lookup, input and serial primitives. */
#ifndef VIGIL_TESTAPI_H
#define VIGIL_TESTAPI_H

#include <lua.h>
#include <lauxlib.h>
#include <stdint.h>
#include "runner/runner_int.h"

/* The runner of this Lua state (stored in the registry). Marks an API call
 * (resets the busy-loop guard). */
struct runner *testapi_runner(lua_State *L);

/* Raise a Lua error when the job has been aborted (VM gone, time out). */
void testapi_check_abort(lua_State *L, struct runner *r);

/* Option helpers: argument idx is either a table of named options or absent. */
double testapi_opt_number(lua_State *L, int idx, const char *name, double dflt);
int testapi_opt_bool(lua_State *L, int idx, const char *name, int dflt);
const char *testapi_opt_string(lua_State *L, int idx, const char *name, const char *dflt);

/* A timeout from a positional number or a {timeout=} table at idx, scaled
 * by TIMEOUT_SCALE. */
double testapi_timeout(lua_State *L, struct runner *r, int idx, double dflt);

/* Keyboard and serial primitives; they raise Lua errors on failure. */
void testapi_send_keysyms(lua_State *L, struct runner *r, const uint32_t *syms, size_t n, double hold);
void testapi_type(lua_State *L, struct runner *r, const char *text, size_t len, double interval, int secret);
/* Wait for pattern (PCRE2, or literal when literal=1) on the serial output
 * after the module's position. Returns 1 and pushes the text up to the end
 * of the match (CRLF -> LF) and moves the position; 0 and pushes nil on time-out. */
int testapi_serial_wait(lua_State *L, struct runner *r, const char *pattern, int literal, double timeout);

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
/* Pushes a new table of s split on ',' or ';' as Perl's split (trailing
 * empty fields dropped); NULL or "" gives an empty table. */
void testapi_split_array(lua_State *L, const char *s);

#endif
