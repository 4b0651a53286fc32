/* SPDX-License-Identifier: MIT */
/* jsonv.h - jansson values in words, for the messages that refuse them
 * (a needle file's field, an API request's field). */
#ifndef VIGIL_UTIL_JSONV_H
#define VIGIL_UTIL_JSONV_H

#include <jansson.h>

/* What v is, with its article: "an object", "an array", "a string", "an
 * integer", "a number with a fraction", "a boolean", or "null" (also for
 * NULL). A static string. */
const char *jsonv_kind(const json_t *v);

#endif
