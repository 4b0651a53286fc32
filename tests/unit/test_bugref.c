/* SPDX-License-Identifier: MIT */
/* test_bugref.c - bug references in comment texts (openQA's markers,
 * where a reference may start and end) and tracker URLs shortened. */
#include <stdlib.h>
#include <string.h>
#include "unit.h"
#include "server/store/bugref.h"

static char *refs(const char *text)
{
	json_t *a = bugref_find_all(text);
	char *s = json_dumps(a, JSON_COMPACT);

	json_decref(a);
	return s;
}

#define CHECK_REFS(text, want) do { char *s_ = refs(text); CHECK_STR(s_, want); free(s_); } while (0)

TEST(bugref_markers)
{
	CHECK_REFS("bsc#1234 flaky", "[\"bsc#1234\"]");
	CHECK_REFS("boo#1 poo#22,gh#os-autoinst/openQA#966", "[\"boo#1\",\"poo#22\",\"gh#os-autoinst/openQA#966\"]");
	CHECK_REFS("see jsc#PED-1234 and kde#5", "[\"jsc#PED-1234\",\"kde#5\"]");
	CHECK_REFS("<b>bsc#7</b>", "[\"bsc#7\"]");
	CHECK_REFS("", "[]");
}

TEST(bugref_boundaries)
{
	/* Inside a word, followed by a word character or '"', unknown marker, no id. */
	CHECK_REFS("xbsc#123", "[]");
	CHECK_REFS("bsc#123abc", "[]");
	CHECK_REFS("\"bsc#1\" bsc#2\"", "[]");
	CHECK_REFS("foo#123 bsc# poo#x", "[]");
	CHECK_REFS("bsc#12.", "[\"bsc#12\"]");
	CHECK_REFS("Bsc#12", "[]");
}

TEST(bugref_urls)
{
	char *s = bugref_from_urls("https://bugzilla.suse.com/show_bug.cgi?id=1234 and "
				   "https://github.com/os-autoinst/openQA/issues/966, "
				   "https://progress.opensuse.org/issues/42 "
				   "https://gitlab.gnome.org/GNOME/gnome-shell/-/issues/5244 "
				   "https://bugzilla.novell.com/show_bug.cgi?id=9 "
				   "[link](https://github.com/a/b/pull/1)");
	CHECK_STR(s, "bsc#1234 and gh#os-autoinst/openQA#966, poo#42 ggo#GNOME/gnome-shell#5244 bsc#9 "
		     "[link](https://github.com/a/b/pull/1)");
	free(s);
	s = bugref_from_urls("no urls here");
	CHECK_STR(s, "no urls here");
	free(s);
	s = bugref_from_urls("");
	CHECK_STR(s, "");
	free(s);
}

TEST(bugref_force_result)
{
	char r[32];

	CHECK_INT(bugref_force_result("label:force_result:softfailed:bsc#1 known", r, sizeof(r)), 1);
	CHECK_STR(r, "softfailed");
	CHECK_INT(bugref_force_result("see\nlabel:force_result:passed", r, sizeof(r)), 1);
	CHECK_STR(r, "passed");
	CHECK_INT(bugref_force_result("xlabel:force_result:passed label:other", r, sizeof(r)), 0);
	CHECK_INT(bugref_force_result("label:force_result:", r, sizeof(r)), 0);
}

/* Random texts over the characters references are made of: no crash,
 * every reference found is a substring of the text. */
TEST(bugref_random_texts)
{
	static const char alphabet[] = "bsoghpjc#/:.-_ABZ019 ,<>\"(https://github.com/issues/";
	unsigned seed = 99;
	char text[96];
	int i, k;

	for (i = 0; i < 5000; i++) {
		json_t *a, *v;
		char *s;
		size_t n;
		for (k = 0; k < (int)sizeof(text) - 1; k++) {
			seed = seed * 1103515245u + 12345u;
			text[k] = alphabet[(seed >> 16) % (sizeof(alphabet) - 1)];
		}
		text[(seed >> 4) % sizeof(text)] = '\0';
		text[sizeof(text) - 1] = '\0';
		a = bugref_find_all(text);
		CHECK(a);
		json_array_foreach(a, n, v)
			CHECK(strstr(text, json_string_value(v)));
		json_decref(a);
		s = bugref_from_urls(text);
		CHECK(s);
		free(s);
	}
}
