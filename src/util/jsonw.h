/* SPDX-License-Identifier: MIT */
/* jsonw.h - JSON text appended straight to a buf, for the answers too large
 * to build as a jansson tree first (the job list: see docs/database.md);
 * everything else builds json_t and lets jansson write it. */
#ifndef VIGIL_JSONW_H
#define VIGIL_JSONW_H

#include <stdint.h>
#include "util/buf.h"

/* s as a JSON string ("\"...\"", null for NULL): '"', '\\' and the control
 * characters escaped, a byte that is not part of valid UTF-8 written as
 * U+FFFD. 0, ERR_NOMEM or ERR_TOO_BIG. */
int jsonw_str(struct buf *b, const char *s);
/* "s": (a key and its colon; s is written as jsonw_str writes it). */
int jsonw_key(struct buf *b, const char *s);
int jsonw_int(struct buf *b, int64_t v);

#endif
