/* SPDX-License-Identifier: MIT */
/* fuzz.h - shared by the libFuzzer targets: the entry point's prototype and
 * a NUL-terminated copy of the input (most parsers take C strings). */
#ifndef VIGIL_FUZZ_H
#define VIGIL_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A new string holding data[0..size) and a NUL (the input may hold NULs:
 * the parser then sees the text up to the first one). */
static inline char *fuzz_str(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);
	if (!s)
		abort();
	memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

/* Splits s in place at the first n-1 NULs (or newlines when nl) into
 * parts[0..n); missing parts are "". */
static inline void fuzz_split(char *s, char sep, char **parts, int n)
{
	int i;
	for (i = 0; i < n; i++) {
		char *e = s ? strchr(s, sep) : NULL;
		parts[i] = s ? s : (char *)"";
		if (e)
			*e = '\0';
		s = e ? e + 1 : NULL;
	}
}

#endif
