/* SPDX-License-Identifier: MIT */
/* test_jt_yaml.c - job group YAML: defaults, machine lists, custom
 * template names, anchors and merge keys expanded; schema errors named by
 * line and path; a written document parsed back to the same templates. */
#include <stdlib.h>
#include <string.h>
#include "unit.h"
#include "server/store/jt_yaml.h"
#include "util/err.h"

static const char doc[] =
	"products:\n"
	"  sle-15-DVD-x86_64:\n"
	"    distri: sle\n"
	"    flavor: DVD\n"
	"    version: 15.1\n"
	".common: &common\n"
	"  FOO: '1'\n"
	"defaults:\n"
	"  x86_64:\n"
	"    machine: 64bit\n"
	"    priority: 40\n"
	"    settings:\n"
	"      <<: *common\n"
	"      BAR: b\n"
	"scenarios:\n"
	"  x86_64:\n"
	"    sle-15-DVD-x86_64:\n"
	"      - textmode\n"
	"      - gnome:\n"
	"          machine: [uefi, 64bit]\n"
	"          priority: 70\n"
	"          settings: {BAR: c}\n"
	"      - gnome_staging:\n"
	"          testsuite: gnome\n"
	"          description: staging run\n";

TEST(jt_yaml_expand)
{
	struct jt_list l;
	char err[512];
	const struct jt_entry *e;

	jt_list_init(&l);
	CHECK_INT(jt_yaml_parse(doc, strlen(doc), &l, err, sizeof(err)), 0);
	CHECK_INT(l.n, 4);
	e = &l.v[0];
	CHECK_STR(e->testsuite, "textmode");
	CHECK_STR(e->machine, "64bit");
	CHECK_STR(e->version, "15.1");
	CHECK(e->has_prio && e->prio == 40);
	CHECK_STR(json_string_value(json_object_get(e->settings, "FOO")), "1");
	CHECK_STR(json_string_value(json_object_get(e->settings, "BAR")), "b");
	CHECK_INT(e->line, 18);
	e = &l.v[1];
	CHECK_STR(e->machine, "uefi");
	CHECK_INT(e->prio, 70);
	CHECK_STR(json_string_value(json_object_get(e->settings, "BAR")), "c");
	CHECK_STR(json_string_value(json_object_get(e->settings, "FOO")), "1");
	CHECK_STR(l.v[2].machine, "64bit");
	e = &l.v[3];
	CHECK_STR(e->name, "gnome_staging");
	CHECK_STR(e->testsuite, "gnome");
	CHECK_STR(e->description, "staging run");
	jt_list_release(&l);
}

static void check_error(const char *text, const char *want)
{
	struct jt_list l;
	char err[512];

	jt_list_init(&l);
	if (jt_yaml_parse(text, strlen(text), &l, err, sizeof(err)) != ERR_PROTO)
		FAIL("no error for:\n%s", text);
	if (!strstr(err, want))
		FAIL("error '%s' lacks '%s'", err, want);
	CHECK_INT(l.n, 0);
}

/* scenarios: a flow sequence nested depth levels deep. */
static void check_nested(size_t depth, const char *want)
{
	const char *head = "products: {}\nscenarios: ";
	size_t k = strlen(head);
	char *text = malloc(k + 2 * depth + 2);

	CHECK(text);
	memcpy(text, head, k);
	memset(text + k, '[', depth);
	memset(text + k + depth, ']', depth);
	text[k + 2 * depth] = '\n';
	text[k + 2 * depth + 1] = '\0';
	check_error(text, want);
	free(text);
}

TEST(jt_yaml_errors)
{
	check_error("products: {\nscenarios:\n", "line 3");
	check_error("products: {}\n", "missing 'scenarios'");
	check_error("products: {}\nscenarios: {}\nmachines: {}\n", "line 3, column 1: /: unknown key 'machines'");
	check_error("products:\n  p:\n    distri: d\n    flavor: f\nscenarios: {}\n", "line 3, column 5: /products/p: missing 'version'");
	check_error("products:\n  p: {distri: d, flavor: f, version: 1}\nscenarios:\n  x86_64:\n    q: [a]\n",
		    "line 5, column 5: /scenarios/x86_64/q: product 'q' is not defined");
	check_error("products:\n  p: {distri: d, flavor: f, version: 1}\nscenarios:\n  x86_64:\n    p:\n      - a:\n          machne: m\n",
		    "line 7, column 11: /scenarios/x86_64/p/0/a/machne: unknown key");
	check_error("products:\n  p: {distri: d, flavor: f, version: 1}\nscenarios:\n  x86_64:\n    p: [a]\n",
		    "no default machine");
	check_error("products:\n  p: {distri: d, flavor: f, version: 1}\ndefaults:\n  x86_64: {machine: m, priority: high}\n"
		    "scenarios:\n  x86_64:\n    p: [a]\n", "priority must be a");
	check_error("products:\n  p: {distri: d, flavor: f, version: 1}\ndefaults:\n  x86_64: {machine: m, priority: 1}\n"
		    "scenarios:\n  x86_64:\n    p: [a, a]\n", "defined more than once");
	check_error("products:\n  p: {distri: d, flavor: f, version: 1}\ndefaults:\n  x86_64: {machine: m, priority: 1}\n"
		    "scenarios:\n  x86_64:\n    p:\n      - a: {settings: {lower: x}}\n", "invalid setting name");
	/* An indentation slip is found on the next line; the error names the
	 * mapping being read too. A tab is found where it stands. */
	check_error("products:\n  p:\n      distri: d\n    flavor: f\nscenarios: {}\n",
		    "line 4, column 5: invalid YAML: did not find expected key while parsing a block mapping at line 2, column 3");
	check_error("products:\n  p:\n\tdistri: d\nscenarios: {}\n",
		    "line 3, column 1: invalid YAML: found character that cannot start any token while scanning for the next token");
	check_error("products: {}\nproducts: {}\nscenarios: {}\n", "duplicate key 'products'");
	check_error("", "empty");
	/* Too deep is refused at the first level past the limit, before the
	 * loader (whose time grows with the square of the depth) sees it. At
	 * the limit (the document's own mapping is the first level) the schema
	 * speaks: the depth check let it through. */
	check_nested(100000, "line 2, column 75: nested deeper than 64 levels");
	check_nested(LIMIT_JT_DEPTH, "line 2, column 75: nested deeper than 64 levels");
	check_nested(LIMIT_JT_DEPTH - 1, "/scenarios");
	check_error("products: {}\ndefaults:\n  aarch64: {machine: m}\nscenarios: {}\n", "/defaults/aarch64: missing 'priority'");
}

TEST(jt_yaml_round_trip)
{
	struct jt_list l, back;
	struct buf out;
	char err[512];
	size_t i;

	jt_list_init(&l);
	jt_list_init(&back);
	buf_init(&out, 1 << 20);
	CHECK_INT(jt_yaml_parse(doc, strlen(doc), &l, err, sizeof(err)), 0);
	CHECK_INT(jt_yaml_dump(&l, 40, true, &out), 0);
	if (jt_yaml_parse(out.data, out.len, &back, err, sizeof(err)))
		FAIL("written YAML does not parse: %s\n%s", err, out.data);
	CHECK_INT(back.n, l.n);
	for (i = 0; i < l.n; i++) {
		CHECK_STR(back.v[i].machine, l.v[i].machine);
		CHECK_STR(back.v[i].testsuite, l.v[i].testsuite);
		CHECK_INT(back.v[i].prio, l.v[i].prio);
		CHECK_STR(back.v[i].version, "15.1");
		CHECK(json_equal(back.v[i].settings, l.v[i].settings));
	}
	buf_reset(&out);
	jt_list_release(&l);
	CHECK_INT(jt_yaml_dump(&l, 50, true, &out), 0);
	CHECK_STR(out.data, "products: {}\nscenarios: {}\n");
	buf_release(&out);
	jt_list_release(&back);
}

/* Mutated documents (a fixed PRNG, so every run is the same): parse must
 * return 0 or an error with a message, never crash; run under SAN=1 for
 * memory errors. */
TEST(jt_yaml_mutations)
{
	static const char alphabet[] = ":- []{}&*<>\n#'\"a1~!|,.\t";
	unsigned seed = 12345;
	char buf[sizeof(doc)], err[512];
	struct jt_list l;
	int i, k;

	jt_list_init(&l);
	for (i = 0; i < 3000; i++) {
		size_t len = sizeof(doc) - 1;
		memcpy(buf, doc, sizeof(doc));
		for (k = 0; k < 1 + i % 4; k++) {
			seed = seed * 1103515245u + 12345u;
			buf[(seed >> 8) % len] = alphabet[(seed >> 20) % (sizeof(alphabet) - 1)];
		}
		if (i % 7 == 0) {
			seed = seed * 1103515245u + 12345u;
			len = (seed >> 8) % len;
		}
		err[0] = '\0';
		if (jt_yaml_parse(buf, len, &l, err, sizeof(err)))
			CHECK(err[0] != '\0');
		jt_list_release(&l);
	}
}

/* Found by tests/fuzz/fuzz_yaml: a product mapping with a duplicate key
 * lost the pairs read before it (LeakSanitizer in the unit runner). */
TEST(jt_yaml_duplicate_key_in_product_frees)
{
	static const char y[] = "products:\n  p:\n    flavor: a\n    flavor: b\n    version: '1'\nscenarios: {}\n";
	struct jt_list l;
	char err[512];

	jt_list_init(&l);
	CHECK(jt_yaml_parse(y, strlen(y), &l, err, sizeof(err)) != 0);
	CHECK(strstr(err, "duplicate key 'flavor'") != NULL);
	jt_list_release(&l);
}

/* Found by tests/fuzz/fuzz_yaml: a plain test suite name outside the
 * pattern of the mapping form was taken, and the YAML written back from it
 * could not be read again. */
TEST(jt_yaml_plain_suite_name_checked)
{
	static const char y[] = "products:\n  p:\n    distri: d\n    flavor: f\n    version: '1'\n"
				"scenarios:\n  x86_64:\n    p:\n      - boot [x\n";
	struct jt_list l;
	char err[512];

	jt_list_init(&l);
	CHECK(jt_yaml_parse(y, strlen(y), &l, err, sizeof(err)) != 0);
	CHECK(strstr(err, "invalid test suite name 'boot [x'") != NULL);
	jt_list_release(&l);
}
