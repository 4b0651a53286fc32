/* SPDX-License-Identifier: MIT */
/* oom.h - telling "out of memory" from bad input where a library hides it:
 * jansson reports an allocation that failed while parsing as a syntax
 * error ("string or '}' expected"). Its allocations are routed through a
 * malloc that counts failures per thread (installed once, on first use),
 * so a parse that failed while memory ran out is ERR_NOMEM, not the
 * input's fault. The out-of-memory policy: docs/hardening.md. */
#ifndef VIGIL_UTIL_OOM_H
#define VIGIL_UTIL_OOM_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* Route jansson's allocations through the counting malloc (once; done by
 * oom_json_loadb too). */
void oom_init(void);

/* json_loadb, with *nomem (may be NULL) set when it returned NULL because
 * an allocation failed. */
json_t *oom_json_loadb(const char *buf, size_t len, size_t flags, json_error_t *error, bool *nomem);

/* The same for JSON text vigil wrote itself (a job's hash written as text,
 * jobs.c). jansson's parser is not safe when an allocation fails inside
 * it (akheron/jansson#362, open: a byte of a long string is dropped and
 * the lexer then reads and writes past its buffer), so the unit tests'
 * allocation-failure injection leaves the allocations made inside this
 * call alone (oom_trusted_parse says when one runs); where memory really
 * runs out there, the process may crash, as with any jansson parse. */
json_t *oom_json_loadb_trusted(const char *buf, size_t len, bool *nomem);
/* Whether this thread is inside oom_json_loadb_trusted. */
bool oom_trusted_parse(void);

#endif
