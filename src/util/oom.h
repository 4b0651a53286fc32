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

#endif
