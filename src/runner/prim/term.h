/* SPDX-License-Identifier: MIT */
/* term.h - the consoles and terminals both front ends use: selecting a
 * console (and its VT switch), the methods a console object answers, and
 * waiting for a pattern on the serial or virtio terminal. Nothing here
 * raises: each returns a count or a negative code with err set, and the
 * front ends (lua/testapi_console.c, perl/) turn that into their errors. */
#ifndef VIGIL_RUNNER_TERM_H
#define VIGIL_RUNNER_TERM_H

#include <jansson.h>
#include <stddef.h>
#include "runner/core/job.h"

/* Where a pattern matched, relative to the searched text: end just past
 * the match, the first three groups' offsets (ncap of them). */
struct term_match {
	size_t end;
	size_t cap_start[3], cap_end[3];
	int ncap;
};

/* The console called name; with lua_names, Lua's default names
 * (docs/testapi.md) are added on first use: the serial ones as the serial
 * terminal, the others as the VGA screen. NULL if neither (or out of
 * memory). Borrowed, valid until the consoles change. */
struct console *term_find(struct runner *r, const char *name, int lua_names);
/* The terminal the serial functions use: the virtio console's stream
 * when a virtio-terminal is selected, else the serial port; *offset gets
 * its wait_serial position. Borrowed. */
struct serial *term_current(struct runner *r, size_t **offset);
/* Selects console name: the model's selection, the VT switch of a
 * tty-console, r->console. lua_names: Lua's default names (vga, serial,
 * ...) need no add_console. 0, or an error with err filled (naming the
 * console, its class and what vigil supports). */
int term_select(struct runner *r, const char *name, int lua_names, int *activated, char *err, size_t errlen);
/* console(name)->method(args...) (args a JSON array, borrowed): *result
 * (the caller's) for the methods listed for its class; ERR_NOT_FOUND or
 * ERR_INVALID with err naming the console, the method and those listed. */
int term_call(struct runner *r, const char *name, const char *method, json_t *args, json_t **result, char *err,
	      size_t errlen);
/* The methods of class cls, comma-separated, in buf. Returns buf. */
const char *term_methods(unsigned cls, char *buf, size_t len);

/* Waits up to timeout (runner__clock seconds, and never past
 * MAX_JOB_TIME) for pattern (PCRE2; literal: taken as it is) in the
 * terminal's output after its offset. 1 found: *text (the caller's, *tlen
 * bytes from the offset) and *m, and the offset moves past the match; 0
 * timed out (what names the wait, e.g. "wait_serial 'login:'", for
 * runner__vm_frozen: with QEMU stopped the job ends incomplete); negative:
 * ERR_INVALID for a pattern PCRE2 refuses, ERR_CLOSED when the terminal
 * closed, with err set. */
int term_search(struct runner *r, const char *what, const char *pattern, int literal, double timeout, char **text,
		size_t *tlen, struct term_match *m, char *err, size_t errlen);
/* wait_serial's primitive: term_search, then *out (the caller's, *outlen
 * bytes) is the text up to the end of the match with CRLF as LF. 1 found,
 * 0 timed out, negative with err set: the job's reason when it must end
 * (runner__aborted; out of memory ends it, docs/hardening.md), "serial
 * port closed", or the pattern's error. */
int term_wait(struct runner *r, const char *what, const char *pattern, int literal, double timeout, char **out,
	      size_t *outlen, char *err, size_t errlen);
/* A copy of len bytes of s with CRLF as LF; NULL out of memory. */
char *term_crlf_to_lf(const char *s, size_t len);

#endif
