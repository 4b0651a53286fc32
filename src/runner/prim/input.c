/* SPDX-License-Identifier: MIT */
/* input.c - the input primitives of both front ends: keys pressed and
 * held over VNC, text typed or written to the serial terminal, pointer
 * events. Raises nothing; a failed send marks the VM dead and says why. */
#define LOG_MODULE "input"
#include <stdio.h>
#include <string.h>
#include "runner/prim/input.h"
#include "runner/prim/keys.h"
#include "runner/prim/term.h"
#include "util/err.h"
#include "util/log.h"
#include "util/time.h"
#include "vm/serial.h"
#include "vm/vnc.h"
#include "util/banned.h" /* last: after every system header */

/* A send failed: the VM is gone (or the job's reason says more). */
static int failed(struct runner *r, int rc, const char *what, char *err, size_t errlen)
{
	err_set(err, errlen, "%s: %s", what, err_str(rc));
	runner__vm_dead(r);
	return runner__fail(r, rc, err, errlen);
}

int input_keysyms(struct runner *r, const uint32_t *syms, size_t n, double hold, char *err, size_t errlen)
{
	size_t i;
	int rc = 0;

	for (i = 0; i < n && !rc; i++)
		rc = vnc_send_key(r->vnc, syms[i], 1);
	if (hold > 0)
		time_sleep_ms((int)(hold * 1000));
	for (i = n; i > 0; i--) {
		int rc2 = vnc_send_key(r->vnc, syms[i - 1], 0);
		if (!rc)
			rc = rc2;
	}
	return rc ? failed(r, rc, "could not send keys", err, errlen) : 0;
}

int input_type(struct runner *r, const char *text, size_t len, double interval, char *err, size_t errlen)
{
	size_t i;
	int rc;

	if (r->console == CONSOLE_SERIAL) {
		size_t *off;
		rc = serial_write(term_current(r, &off), text, len);
		return rc ? failed(r, rc, "could not write to the serial port", err, errlen) : 0;
	}
	for (i = 0; i < len; i++) {
		uint32_t syms[2];
		size_t n = keys_for_char((unsigned char)text[i], syms);
		if (n == 0) {
			if (text[i] != '\r')
				log_warn("type_string: character 0x%02x cannot be typed, skipped", (unsigned char)text[i]);
			continue;
		}
		rc = input_keysyms(r, syms, n, 0.008, err, errlen);
		if (rc)
			return rc;
		if (interval > 0.008)
			time_sleep_ms((int)((interval - 0.008) * 1000));
	}
	return 0;
}

int input_hold_key(struct runner *r, const char *name, int down, char *err, size_t errlen)
{
	const char *api = down ? "hold_key" : "release_key";
	uint32_t syms[KEYS_MAX_COMBO];
	char kerr[160];
	size_t n, i;
	int rc = 0;

	if (keys_parse(name, syms, &n, kerr, sizeof(kerr))) {
		err_set(err, errlen, "%s: %s", api, kerr);
		return ERR_INVALID;
	}
	if (runner__aborted(r))
		return runner__fail(r, ERR_BADSTATE, err, errlen);
	if (r->console == CONSOLE_SERIAL) {
		err_set(err, errlen, "%s: the serial terminal has no keys to hold", api);
		return ERR_BADSTATE;
	}
	for (i = 0; i < n && !rc; i++)
		rc = vnc_send_key(r->vnc, syms[down ? i : n - 1 - i], down);
	if (rc)
		return failed(r, rc, "could not send keys", err, errlen);
	runner__progress(r, "%s %s", api, name);
	return 0;
}

int input_pointer(struct runner *r, int x, int y, int mask, char *err, size_t errlen)
{
	int rc = vnc_send_pointer(r->vnc, x, y, mask);

	return rc ? failed(r, rc, "could not send the pointer event", err, errlen) : 0;
}

int input_mouse_set(struct runner *r, int x, int y, char *err, size_t errlen)
{
	int rc;

	if (x == r->mouse_x && y == r->mouse_y) {
		/* The same position twice: wiggle so the guest sees a movement. */
		rc = input_pointer(r, x > 5 ? x - 5 : x + 5, y, 0, err, errlen);
		if (rc)
			return rc;
		time_sleep_ms(20);
	}
	rc = input_pointer(r, x, y, 0, err, errlen);
	if (rc)
		return rc;
	r->mouse_x = x;
	r->mouse_y = y;
	runner__progress(r, "mouse_set %d,%d", x, y);
	return 0;
}

int input_mouse_hide(struct runner *r, int off, char *err, size_t errlen)
{
	r->mouse_x = r->xres - 1 - off;
	r->mouse_y = r->yres - 1 - off;
	return input_pointer(r, r->mouse_x, r->mouse_y, 0, err, errlen);
}
