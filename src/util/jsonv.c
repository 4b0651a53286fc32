/* SPDX-License-Identifier: MIT */
/* jsonv.c - jansson values in words (jsonv.h). */
#include "util/jsonv.h"
#include "util/banned.h" /* last: after every system header */

const char *jsonv_kind(const json_t *v)
{
	switch (v ? json_typeof(v) : JSON_NULL) {
	case JSON_OBJECT: return "an object";
	case JSON_ARRAY: return "an array";
	case JSON_STRING: return "a string";
	case JSON_INTEGER: return "an integer";
	case JSON_REAL: return "a number with a fraction";
	case JSON_TRUE:
	case JSON_FALSE: return "a boolean";
	default: return "null";
	}
}
