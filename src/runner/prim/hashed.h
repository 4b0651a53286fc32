/* SPDX-License-Identifier: MIT */
/* hashed.h - os-autoinst's hashed_string, the short names save_tmp_file's
 * files get: the Lua test API makes them, the command server finds them. */
#ifndef VIGIL_RUNNER_PRIM_HASHED_H
#define VIGIL_RUNNER_PRIM_HASHED_H

#include <stddef.h>

/* os-autoinst's hashed_string(s): the first count (≤ 22) characters of
 * md5_base64(s), '+' as '_' and '/' as '~'. out holds count + 1. 0 or ERR_IO. */
int hashed_string(const char *s, size_t len, size_t count, char *out);

#endif
