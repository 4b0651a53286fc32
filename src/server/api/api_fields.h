/* SPDX-License-Identifier: MIT */
/* api_fields.h - what each writing route of the API takes: every named
 * field's type, presence and bounds, checked by server.c before the
 * handler runs (one check for every route instead of one per handler), so
 * a field of the wrong type, missing or out of bounds is answered 400
 * naming it and nothing is changed. The handlers still decide what a
 * well-formed value means (a known result, an existing group, ...). */
#ifndef VIGIL_API_FIELDS_H
#define VIGIL_API_FIELDS_H

#include <stdbool.h>
#include "server/http/api.h"

enum api_ftype {
	API_F_STR,    /* a string (form: any value; JSON: a string) of at most max bytes */
	API_F_INT,    /* a decimal integer from min to max (JSON: an integer or a string of one) */
	API_F_BOOL,   /* 0 or 1 (JSON: true/false, 0/1 or "0"/"1") */
	API_F_OBJECT, /* JSON: an object (a form cannot send one) */
};

/* Flags of a field. */
#define API_F_REQUIRED 1u /* must be present and not empty */
#define API_F_NONE_OK  2u /* an INT that may also be "none" (openQA's "no value") */

struct api_field {
	const char *name;
	enum api_ftype type;
	unsigned flags;
	long long min, max; /* INT: the value's bounds; STR: max bytes (0: the body's limit only) */
};

/* The fields route takes, ended by one with name NULL (possibly none but
 * the end: a route that takes no field or only free-form settings), or
 * NULL when no list was written for it (every route that writes has one:
 * tests/unit/test_bad_input.c fails otherwise). */
const struct api_field *api_fields_of(const struct api_route *route);

/* Check req's query, form and top-level JSON fields against f: 0, or -1
 * with a 400 answered in out ("NAME: ..."). Every value a form
 * repeats is checked; a JSON null is an absent field. */
int api_fields_check(const struct api_req *req, const struct api_field *f, struct api_resp *out);

#endif
