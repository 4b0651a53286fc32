/* SPDX-License-Identifier: MIT */
/* base64.h - base64 to bytes through OpenSSL's decoder: padding and line
 * breaks handled, the output bounded by the buffer's limit. */
#ifndef VIGIL_BASE64_H
#define VIGIL_BASE64_H

#include <stddef.h>
#include "util/buf.h"

/* Append the bytes of base64 text in[0..len) to out. 0, ERR_PROTO (not
 * base64), ERR_NOMEM or ERR_TOO_BIG (over out's limit). */
int base64_decode(const char *in, size_t len, struct buf *out);

#endif
