/* SPDX-License-Identifier: MIT */
/* fuzz_needle.c - needle JSON as needle_parse reads it (os-autoinst's
 * needle.pm rules): any bytes give a needle or an error, never a crash. */
#include "fuzz.h"
#include "image/needle.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct needle *n = NULL;
	char err[512];

	if (needle_parse((const char *)data, size, "fuzz.json", &n, err, sizeof(err)) == 0) {
		size_t i;
		for (i = 0; i < n->ntags; i++)
			(void)needle_has_tag(n, n->tags[i]);
		(void)needle_match_expr(n, "a b");
		(void)needle_match_area(n, 0);
	}
	needle_free(n);
	return 0;
}
