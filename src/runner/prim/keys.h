/* SPDX-License-Identifier: MIT */
/* keys.h - openQA key names and typed characters to X11 keysyms.
 * "ctrl-alt-delete" -> {Control_L, Alt_L, Delete}; 'A' -> {Shift_L, A}. */
#ifndef VIGIL_KEYS_H
#define VIGIL_KEYS_H

#include <stddef.h>
#include <stdint.h>

#define KEYS_MAX_COMBO 8

/* Parse a key name or combo joined by '-' (openQA's send_key syntax).
 * Fills syms (pressed in order, released in reverse) and *n.
 * 0 or ERR_INVALID (err names the unknown part). */
int keys_parse(const char *name, uint32_t *syms, size_t *n, char *err, size_t errlen);

/* The keys for typing one character on a US layout: an upper-case letter
 * becomes shift + its (upper-case) keysym, another shifted character
 * shift + its base key. '\n' -> Return, '\t' -> Tab, '\b' -> BackSpace,
 * '\e' -> Escape. Returns the count (1 or 2) or 0 if the character cannot
 * be typed (e.g. '\r', other control chars, bytes >= 0x80). */
size_t keys_for_char(unsigned char c, uint32_t syms[2]);

#endif
