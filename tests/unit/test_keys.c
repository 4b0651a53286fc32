/* SPDX-License-Identifier: MIT */
/* test_keys.c - key-name mapping and typed characters. */
#include <stdint.h>
#include "unit.h"
#include "runner/prim/keys.h"

static size_t parse(const char *name, uint32_t *syms)
{
	char err[128];
	size_t n = 0;
	if (keys_parse(name, syms, &n, err, sizeof(err)))
		return 0;
	return n;
}

TEST(keys_single_names)
{
	uint32_t s[KEYS_MAX_COMBO];
	CHECK_INT(parse("ret", s), 1); CHECK_INT(s[0], 0xff0d);
	CHECK_INT(parse("esc", s), 1); CHECK_INT(s[0], 0xff1b);
	CHECK_INT(parse("tab", s), 1); CHECK_INT(s[0], 0xff09);
	CHECK_INT(parse("spc", s), 1); CHECK_INT(s[0], 0x20);
	CHECK_INT(parse("f1", s), 1); CHECK_INT(s[0], 0xffbe);
	CHECK_INT(parse("f12", s), 1); CHECK_INT(s[0], 0xffc9);
	CHECK_INT(parse("up", s), 1); CHECK_INT(s[0], 0xff52);
	CHECK_INT(parse("down", s), 1); CHECK_INT(s[0], 0xff54);
	CHECK_INT(parse("left", s), 1); CHECK_INT(s[0], 0xff51);
	CHECK_INT(parse("right", s), 1); CHECK_INT(s[0], 0xff53);
	CHECK_INT(parse("backspace", s), 1); CHECK_INT(s[0], 0xff08);
	CHECK_INT(parse("minus", s), 1); CHECK_INT(s[0], '-');
	CHECK_INT(parse("c", s), 1); CHECK_INT(s[0], 'c');
	CHECK_INT(parse("C", s), 1); CHECK_INT(s[0], 'c');
	CHECK_INT(parse("RET", s), 1); CHECK_INT(s[0], 0xff0d);
}

TEST(keys_combos)
{
	uint32_t s[KEYS_MAX_COMBO];
	CHECK_INT(parse("ctrl-alt-delete", s), 3);
	CHECK_INT(s[0], 0xffe3); CHECK_INT(s[1], 0xffe9); CHECK_INT(s[2], 0xffff);
	CHECK_INT(parse("alt-f2", s), 2);
	CHECK_INT(s[0], 0xffe9); CHECK_INT(s[1], 0xffbf);
	CHECK_INT(parse("ctrl-c", s), 2); CHECK_INT(s[1], 'c');
	CHECK_INT(parse("shift-tab", s), 2); CHECK_INT(s[0], 0xffe1);
	CHECK_INT(parse("ctrl-alt-f2", s), 3); CHECK_INT(s[2], 0xffbf);
	CHECK_INT(parse("-", s), 1); CHECK_INT(s[0], '-');
}

TEST(keys_unknown_names)
{
	uint32_t s[KEYS_MAX_COMBO];
	char err[128];
	size_t n;
	CHECK(keys_parse("ctrl-foo", s, &n, err, sizeof(err)) != 0);
	CHECK(strstr(err, "'foo'") != NULL);
	CHECK(keys_parse("", s, &n, err, sizeof(err)) != 0);
	CHECK(keys_parse("ctrl-", s, &n, err, sizeof(err)) != 0);
	CHECK(keys_parse("a-b-c-d-e-f-g-h-i", s, &n, err, sizeof(err)) != 0);
}

TEST(keys_typed_chars)
{
	uint32_t s[2];
	CHECK_INT(keys_for_char('a', s), 1); CHECK_INT(s[0], 'a');
	CHECK_INT(keys_for_char('!', s), 2); CHECK_INT(s[1], '1');
	CHECK_INT(keys_for_char('_', s), 2); CHECK_INT(s[1], '-');
	CHECK_INT(keys_for_char('"', s), 2); CHECK_INT(s[1], '\'');
	CHECK_INT(keys_for_char('|', s), 2); CHECK_INT(s[1], '\\');
	CHECK_INT(keys_for_char('~', s), 2); CHECK_INT(s[1], '`');
	CHECK_INT(keys_for_char(' ', s), 1); CHECK_INT(s[0], ' ');
	CHECK_INT(keys_for_char('-', s), 1); CHECK_INT(s[0], '-');
	CHECK_INT(keys_for_char('\n', s), 1); CHECK_INT(s[0], 0xff0d);
	CHECK_INT(keys_for_char('\t', s), 1); CHECK_INT(s[0], 0xff09);
	CHECK_INT(keys_for_char('\r', s), 0);
	CHECK_INT(keys_for_char(0xc3, s), 0);
}

/* An upper-case letter is Shift plus the upper-case keysym: QEMU's VNC
 * server toggles Caps Lock when a letter keysym's case disagrees with the
 * Shift state, so Shift + 'a' reached the guest as 'a'. */
TEST(keys_typed_upper_case)
{
	uint32_t s[2];
	CHECK_INT(keys_for_char('A', s), 2); CHECK_INT(s[0], 0xffe1); CHECK_INT(s[1], 'A');
	CHECK_INT(keys_for_char('S', s), 2); CHECK_INT(s[0], 0xffe1); CHECK_INT(s[1], 'S');
	CHECK_INT(keys_for_char('Z', s), 2); CHECK_INT(s[1], 'Z');
	CHECK_INT(keys_for_char('s', s), 1); CHECK_INT(s[0], 's');
}
