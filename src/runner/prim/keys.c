/* SPDX-License-Identifier: MIT */
/* keys.c - the key name table (os-autoinst's names) and US-layout typing. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include "runner/prim/keys.h"
#include "util/err.h"
#include "util/banned.h" /* last: after every system header */

struct key_name {
	const char *name;
	uint32_t sym;
};

/* X11 keysyms; names as openQA tests use them (consoles/VNC.pm). */
static const struct key_name key_names[] = {
	{ "esc", 0xff1b }, { "escape", 0xff1b },
	{ "ret", 0xff0d }, { "enter", 0xff0d }, { "return", 0xff0d },
	{ "kp_enter", 0xff8d },
	{ "tab", 0xff09 }, { "backspace", 0xff08 },
	{ "delete", 0xffff }, { "del", 0xffff }, { "insert", 0xff63 }, { "ins", 0xff63 },
	{ "home", 0xff50 }, { "end", 0xff57 },
	{ "pgup", 0xff55 }, { "pageup", 0xff55 }, { "pgdn", 0xff56 }, { "pagedown", 0xff56 },
	{ "left", 0xff51 }, { "up", 0xff52 }, { "right", 0xff53 }, { "down", 0xff54 },
	{ "shift", 0xffe1 }, { "shift_l", 0xffe1 }, { "shift_r", 0xffe2 },
	{ "ctrl", 0xffe3 }, { "ctrl_l", 0xffe3 }, { "ctrl_r", 0xffe4 },
	{ "alt", 0xffe9 }, { "alt_l", 0xffe9 }, { "alt_r", 0xffea }, { "altgr", 0xffea },
	{ "meta", 0xffe7 }, { "super", 0xffeb }, { "win", 0xffeb },
	{ "caps", 0xffe5 }, { "capslock", 0xffe5 }, { "numlock", 0xff7f }, { "scrolllock", 0xff14 },
	{ "sysrq", 0xff15 }, { "print", 0xff61 }, { "pause", 0xff13 }, { "break", 0xff6b },
	{ "menu", 0xff67 }, { "spc", 0x20 }, { "space", 0x20 },
	{ "minus", 0x2d }, { "plus", 0x2b }, { "equal", 0x3d }, { "comma", 0x2c },
	{ "dot", 0x2e }, { "period", 0x2e }, { "slash", 0x2f }, { "backslash", 0x5c },
	{ "semicolon", 0x3b }, { "apostrophe", 0x27 }, { "grave", 0x60 },
	{ "bracketleft", 0x5b }, { "bracketright", 0x5d }, { "less", 0x3c }, { "greater", 0x3e },
	{ "f1", 0xffbe }, { "f2", 0xffbf }, { "f3", 0xffc0 }, { "f4", 0xffc1 },
	{ "f5", 0xffc2 }, { "f6", 0xffc3 }, { "f7", 0xffc4 }, { "f8", 0xffc5 },
	{ "f9", 0xffc6 }, { "f10", 0xffc7 }, { "f11", 0xffc8 }, { "f12", 0xffc9 },
};

/* US layout: shifted symbol -> unshifted key. */
static const char shifted[] = "~!@#$%^&*()_+{}|:\"<>?";
static const char unshifted[] = "`1234567890-=[]\\;',./";

static int lookup(const char *name, size_t len, uint32_t *sym)
{
	size_t i;
	char low[32];

	if (len == 0 || len >= sizeof(low))
		return ERR_INVALID;
	for (i = 0; i < len; i++)
		low[i] = (char)tolower((unsigned char)name[i]);
	low[len] = '\0';
	for (i = 0; i < sizeof(key_names) / sizeof(key_names[0]); i++) {
		if (!strcmp(low, key_names[i].name)) {
			*sym = key_names[i].sym;
			return 0;
		}
	}
	if (len == 1 && isprint((unsigned char)name[0])) {
		/* A single character names its own (unshifted) key. */
		*sym = (uint32_t)(unsigned char)low[0];
		return 0;
	}
	return ERR_INVALID;
}

int keys_parse(const char *name, uint32_t *syms, size_t *n, char *err, size_t errlen)
{
	const char *p = name, *dash;
	size_t count = 0;

	if (!name || !*name) {
		snprintf(err, errlen, "empty key name");
		return ERR_INVALID;
	}
	/* A lone "-" is the minus key. */
	if (!strcmp(name, "-")) {
		syms[0] = 0x2d;
		*n = 1;
		return 0;
	}
	for (;;) {
		size_t len;
		dash = strchr(p, '-');
		len = dash ? (size_t)(dash - p) : strlen(p);
		if (count >= KEYS_MAX_COMBO) {
			snprintf(err, errlen, "key '%s': more than %d keys in one combination", name, KEYS_MAX_COMBO);
			return ERR_INVALID;
		}
		if (lookup(p, len, &syms[count])) {
			snprintf(err, errlen, "key '%s': unknown key name '%.*s'", name, (int)len, p);
			return ERR_INVALID;
		}
		count++;
		if (!dash)
			break;
		p = dash + 1;
	}
	*n = count;
	return 0;
}

size_t keys_for_char(unsigned char c, uint32_t syms[2])
{
	const char *s;

	switch (c) {
	case '\n': syms[0] = 0xff0d; return 1;
	case '\t': syms[0] = 0xff09; return 1;
	case '\b': syms[0] = 0xff08; return 1;
	case 0x1b: syms[0] = 0xff1b; return 1;
	}
	if (c < 0x20 || c >= 0x7f)
		return 0;
	/* Shift plus the upper-case keysym, as a real keyboard's VNC client
	 * sends it: QEMU's VNC server keeps Caps Lock in step with the case
	 * of a letter keysym, so Shift with a lower-case keysym would toggle
	 * Caps Lock and the guest would get a lower-case letter. */
	if (isupper(c)) {
		syms[0] = 0xffe1;
		syms[1] = c;
		return 2;
	}
	if (c != '\0' && (s = strchr(shifted, c))) {
		syms[0] = 0xffe1;
		syms[1] = (uint32_t)(unsigned char)unshifted[s - shifted];
		return 2;
	}
	syms[0] = c;
	return 1;
}
