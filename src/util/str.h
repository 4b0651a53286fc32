/* SPDX-License-Identifier: MIT */
/* str.h - string helpers: copy, prefix and suffix tests, number parsing,
 * UTF-8 validity. */
#ifndef VIGIL_UTIL_STR_H
#define VIGIL_UTIL_STR_H

#include <stdbool.h>
#include <stddef.h>

/* A copy of s ("" for NULL), or NULL when memory is exhausted: the caller
 * answers ERR_NOMEM as the out-of-memory policy says (docs/hardening.md);
 * nothing aborts. */
char *str_dup(const char *s);
bool str_ends_with(const char *s, const char *suffix);
bool str_starts_with(const char *s, const char *prefix);
/* Parse a whole decimal string into *out; 0 or ERR_INVALID. */
int str_to_long(const char *s, long *out);
int str_to_double(const char *s, double *out);
/* Whether s[0..len) is well-formed UTF-8 (RFC 3629: no overlong forms, no
 * surrogates, nothing above U+10FFFF). When not and bad is not NULL, *bad
 * is the offset of the first byte of the first ill-formed sequence. */
bool str_utf8_valid(const char *s, size_t len, size_t *bad);

#endif
