/* SPDX-License-Identifier: MIT */
/* str.h - string helpers: copy, prefix and suffix tests, number parsing. */
#ifndef VIGIL_UTIL_STR_H
#define VIGIL_UTIL_STR_H

#include <stdbool.h>

/* A copy of s ("" for NULL); aborts when memory is exhausted, so only for
 * small strings. */
char *str_dup(const char *s);
bool str_ends_with(const char *s, const char *suffix);
bool str_starts_with(const char *s, const char *prefix);
/* Parse a whole decimal string into *out; 0 or ERR_INVALID. */
int str_to_long(const char *s, long *out);
int str_to_double(const char *s, double *out);

#endif
