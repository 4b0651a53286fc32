/* SPDX-License-Identifier: MIT */
/* fuzz_perl_regex.c - a Perl regex from a test module (wait_serial,
 * qr// over the os-autoinst RPC) as perl_regex_to_pcre2 turns it into
 * PCRE2's syntax; the result must compile or be refused, never crash. */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include "fuzz.h"
#include "runner/perl/perl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_str(data, size), *re = perl_regex_to_pcre2(s);

	if (re) {
		int e;
		PCRE2_SIZE off;
		pcre2_code *c = pcre2_compile((PCRE2_SPTR)re, PCRE2_ZERO_TERMINATED, 0, &e, &off, NULL);
		pcre2_code_free(c);
		free(re);
	}
	free(s);
	return 0;
}
