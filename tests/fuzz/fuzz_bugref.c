/* SPDX-License-Identifier: MIT */
/* fuzz_bugref.c - comment text as the bug reference code reads it: every
 * reference found, URLs turned into references, force_result labels. */
#include <jansson.h>
#include "fuzz.h"
#include "server/store/bugref.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_str(data, size), *u, result[64];
	json_t *all = bugref_find_all(s);

	json_decref(all);
	u = bugref_from_urls(s);
	free(u);
	(void)bugref_force_result(s, result, sizeof(result));
	free(s);
	return 0;
}
