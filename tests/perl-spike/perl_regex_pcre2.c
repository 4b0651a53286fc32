/* SPDX-License-Identifier: MIT */
/* perl_regex_pcre2.c - spike check: which of Perl's stringified regexes (as myjsonrpc
 * sends qr// objects) PCRE2 10.42 compiles. Finding: the charset flags u, a,
 * aa, l, d in "(?^u:...)" are compile errors and must be stripped first.
 *   cc -o /tmp/prx tests/perl-spike/perl_regex_pcre2.c $(pkg-config --cflags --libs libpcre2-8) */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stdio.h>
#include <string.h>
static void t(const char *p, const char *s) {
	int e; PCRE2_SIZE off;
	pcre2_code *re = pcre2_compile((PCRE2_SPTR)p, PCRE2_ZERO_TERMINATED, 0, &e, &off, NULL);
	if (!re) { printf("%-28s compile error %d at %zu\n", p, e, (size_t)off); return; }
	pcre2_match_data *md = pcre2_match_data_create_from_pattern(re, NULL);
	int rc = pcre2_match(re, (PCRE2_SPTR)s, strlen(s), 0, 0, md, NULL);
	printf("%-28s on %-12s -> %s\n", p, s, rc > 0 ? "match" : "no match");
	pcre2_match_data_free(md); pcre2_code_free(re);
}
int main(void) {
	t("(?^u:DU8S_-\\d+-)", "DU8S_-0-");
	t("(?^i:a+)", "xAx");
	t("(?^:Password:\\s*$)", "Password: ");
	t("(?^x:a b)", "ab");
	t("(?^msix:a.b)", "A\nB");
	t("(?^aa:\\w)", "x");
	return 0;
}
