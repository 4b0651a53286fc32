/* SPDX-License-Identifier: MIT */
/* fuzz.h - shared by the libFuzzer targets: the entry point's prototype, a
 * NUL-terminated copy of the input (most parsers take C strings), and the
 * input cut into NUL-separated fields. */
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

/* A new string of the input whose NUL-separated fields are parts[0..n)
 * (pointers into it; missing fields are ""). Free the string. */
static inline char *fuzz_fields(const uint8_t *data, size_t size, char **parts, int n)
{
	char *s = fuzz_str(data, size), *p = s;
	size_t k;
	int i;

	for (k = 0; k < size; k++)
		if (s[k] == '\0')
			s[k] = '\n';
	for (i = 0; i < n; i++) {
		char *e = p ? strchr(p, '\n') : NULL;
		parts[i] = p ? p : (char *)"";
		if (e)
			*e = '\0';
		p = e ? e + 1 : NULL;
	}
	return s;
}

#endif
