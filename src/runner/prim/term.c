/* SPDX-License-Identifier: MIT */
/* term.c - consoles and terminals for both front ends: console selection
 * (the model in core/console.c, the VT switch, r->console), the methods a
 * console object answers, and waits for a PCRE2 pattern on the serial or
 * virtio terminal. Raises nothing; owns nothing past a call. */
#define LOG_MODULE "term"
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "runner/core/console.h"
#include "runner/prim/keys.h"
#include "runner/prim/term.h"
#include "util/err.h"
#include "util/log.h"
#include "vm/serial.h"
#include "vm/vnc.h"
#include "util/banned.h" /* last: after every system header */

static const char *const serial_consoles[] = {
	"serial", "root-serial", "root-sut-serial", "sut-serial", "virtio-terminal",
	"root-virtio-terminal", "user-virtio-terminal", "svirt-serial", NULL,
};
static const char *const vga_consoles[] = {
	"sut", "vga", "x11", "root-console", "user-console", "install-shell", "log-console",
	"tty1", "tty2", "tty3", "tty4", "tty5", "tty6", NULL,
};

static int in_list(const char *const *list, const char *s)
{
	for (; *list; list++)
		if (!strcmp(*list, s))
			return 1;
	return 0;
}

struct console *term_find(struct runner *r, const char *name, int lua_names)
{
	struct console *c = console_find(&r->consoles, name);
	int serial = in_list(serial_consoles, name);

	if (c || !lua_names || !(serial || in_list(vga_consoles, name)))
		return c;
	if (console_add(&r->consoles, name, serial ? "serial-terminal" : "vnc-base", NULL))
		return NULL;
	return console_find(&r->consoles, name);
}

struct serial *term_current(struct runner *r, size_t **offset)
{
	struct console *c = console_current(&r->consoles);

	if (c && c->cls == CONSOLE_VIRTIO && r->virtio) {
		*offset = &r->virtio_offset;
		return r->virtio;
	}
	/* os-autoinst's terminals read their own stream, which a new module
	 * does not reset (Lua keeps its per-module position: docs/testapi.md) */
	*offset = c && c->cls == CONSOLE_SERIAL_TERM && r->perl ? &r->term_offset : &r->serial_offset;
	return r->serial;
}

int term_select(struct runner *r, const char *name, int lua_names, int *activated, char *err, size_t errlen)
{
	struct console *c = term_find(r, name, lua_names);
	int rc, tty;

	*activated = 0;
	if (!c && lua_names) {
		err_set(err, errlen, "select_console: unknown console '%s' (VGA: sut, vga, x11, root-console; "
			"serial terminal: serial, root-serial, root-virtio-terminal; or add_console first)", name);
		return ERR_NOT_FOUND;
	}
	if (c && c->cls == CONSOLE_VIRTIO && !r->virtio) {
		err_set(err, errlen, "console '%s' has class 'virtio-terminal': set VIRTIO_CONSOLE=1 for the guest's "
			"virtio console (hvc0)", name);
		return ERR_BADSTATE;
	}
	rc = console_select(&r->consoles, name, activated, err, errlen);
	if (rc)
		return rc;
	r->console = console_is_serial(c) ? CONSOLE_SERIAL : CONSOLE_VGA;
	/* a terminal opened now: only what comes from now on counts. The
	 * virtio terminal is os-autoinst's pipe, opened once and read on: its
	 * first wait_serial sees what the guest wrote since boot (the getty's
	 * banner), a later activation reads on from where the last read ended. */
	if (*activated && c->cls == CONSOLE_SERIAL_TERM && r->serial)
		r->term_offset = serial_len(r->serial);
	/* ttyConsole's trigger_select: the VT switch on every selection */
	tty = c->cls == CONSOLE_TTY ? console_tty(c) : 0;
	if (tty && r->vnc) {
		char key[16];
		uint32_t syms[KEYS_MAX_COMBO];
		size_t n, i;
		snprintf(key, sizeof(key), "ctrl-alt-f%d", tty);
		rc = keys_parse(key, syms, &n, err, errlen);
		for (i = 0; i < n && !rc; i++)
			rc = vnc_send_key(r->vnc, syms[i], 1);
		for (i = n; i > 0 && !rc; i--)
			rc = vnc_send_key(r->vnc, syms[i - 1], 0);
		if (rc) {
			runner__vm_dead(r);
			err_set(err, errlen, "select_console '%s': could not send %s: %s", name, key, err_str(rc));
			return rc;
		}
	}
	runner__progress(r, "select_console %s (%s%s)", name, c->class_name, *activated ? ", activated" : "");
	return 0;
}

/* The methods a console object answers (backend::console_proxy's calls),
 * by class: os-autoinst's consoles::console for all, vnc_base's for the
 * VGA ones, serial_screen's for the terminals. */
static const struct {
	const char *name;
	unsigned classes; /* 1 << enum console_class */
} console_methods[] = {
	{ "activate", ~0u }, { "reset", ~0u }, { "select", ~0u }, { "is_serial_terminal", ~0u },
	{ "set_args", ~0u }, { "set_tty", ~0u }, { "console_key", ~0u },
	{ "disable_vnc_stalls", 1u << CONSOLE_VNC_BASE | 1u << CONSOLE_TTY },
	{ "get_last_mouse_set", 1u << CONSOLE_VNC_BASE | 1u << CONSOLE_TTY },
	{ "disable", 1u << CONSOLE_VIRTIO | 1u << CONSOLE_SERIAL_TERM },
};

const char *term_methods(unsigned cls, char *buf, size_t len)
{
	size_t i, o = 0;

	buf[0] = '\0';
	for (i = 0; i < sizeof(console_methods) / sizeof(console_methods[0]); i++)
		if ((console_methods[i].classes & (1u << cls)) && o < len)
			o += (size_t)snprintf(buf + o, len - o, "%s%s", o ? ", " : "", console_methods[i].name);
	return buf;
}

int term_call(struct runner *r, const char *name, const char *method, json_t *args, json_t **result, char *err,
	      size_t errlen)
{
	struct console *c = console_find(&r->consoles, name);
	char list[300];
	size_t i;
	int act;

	*result = NULL;
	if (!c) {
		err_set(err, errlen, "console '%s' does not exist (add it with add_console in the distribution)", name);
		return ERR_NOT_FOUND;
	}
	for (i = 0; i < sizeof(console_methods) / sizeof(console_methods[0]); i++)
		if (!strcmp(console_methods[i].name, method) && (console_methods[i].classes & (1u << c->cls)))
			break;
	if (i == sizeof(console_methods) / sizeof(console_methods[0])) {
		err_set(err, errlen, "console '%s' (%s): vigil does not support the method '%s' (supported: %s)", name,
			c->class_name, method, term_methods(c->cls, list, sizeof(list)));
		return ERR_INVALID;
	}
	if (!strcmp(method, "reset")) {
		console_reset(&r->consoles, name);
	} else if (!strcmp(method, "select")) {
		/* consoles::console::select: activated, without the distribution's activate_console */
		if (term_select(r, name, 0, &act, err, errlen))
			return ERR_INVALID;
		*result = act ? json_integer(1) : json_null();
	} else if (!strcmp(method, "is_serial_terminal")) {
		*result = json_integer(console_is_serial(c));
	} else if (!strcmp(method, "console_key")) {
		char key[16];
		snprintf(key, sizeof(key), "ctrl-alt-f%d", console_tty(c));
		*result = console_tty(c) ? json_string(key) : json_null();
	} else if (!strcmp(method, "set_tty") || !strcmp(method, "set_args")) {
		/* set_tty(N); set_args(key => value, ...) */
		if (!strcmp(method, "set_tty"))
			json_object_set(c->args, "tty", json_array_get(args, 0) ? json_array_get(args, 0) : json_null());
		for (i = 0; !strcmp(method, "set_args") && i + 1 < json_array_size(args); i += 2)
			if (json_is_string(json_array_get(args, i)))
				json_object_set(c->args, json_string_value(json_array_get(args, i)), json_array_get(args, i + 1));
	} else if (!strcmp(method, "get_last_mouse_set")) {
		*result = json_pack("{s:i,s:i}", "x", r->mouse_x, "y", r->mouse_y);
	}
	/* activate, disable, disable_vnc_stalls: nothing to do in vigil */
	if (!*result)
		*result = json_null();
	return 0;
}


/* Searches text for the compiled pattern; 1 found, 0 not. */
static int regex_find(pcre2_code *re, const char *text, size_t len, struct term_match *m)
{
	pcre2_match_data *md = pcre2_match_data_create_from_pattern(re, NULL);
	int rc, i;

	if (!md)
		return 0;
	rc = pcre2_match(re, (PCRE2_SPTR)text, len, 0, 0, md, NULL);
	if (rc > 0) {
		PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
		m->end = ov[1];
		m->ncap = rc > 3 ? 3 : rc;
		for (i = 0; i < m->ncap; i++) {
			m->cap_start[i] = ov[2 * i];
			m->cap_end[i] = ov[2 * i + 1];
		}
	}
	pcre2_match_data_free(md);
	return rc > 0;
}

static pcre2_code *compile(const char *pattern, int literal, char *err, size_t errlen)
{
	int errcode;
	PCRE2_SIZE erroff;
	pcre2_code *re = pcre2_compile((PCRE2_SPTR)pattern, PCRE2_ZERO_TERMINATED,
				       literal ? PCRE2_LITERAL : 0, &errcode, &erroff, NULL);
	if (!re) {
		PCRE2_UCHAR msg[256];
		pcre2_get_error_message(errcode, msg, sizeof(msg));
		err_set(err, errlen, "regex '%s': %s at offset %d", pattern, (const char *)msg, (int)erroff);
	}
	return re;
}

char *term_crlf_to_lf(const char *s, size_t len)
{
	char *out = malloc(len + 1);
	size_t i, o = 0;
	if (!out)
		return NULL;
	for (i = 0; i < len; i++) {
		if (s[i] == '\r' && i + 1 < len && s[i + 1] == '\n')
			continue;
		out[o++] = s[i];
	}
	out[o] = '\0';
	return out;
}

/* term_search over a compiled pattern. */
static int search_re(struct runner *r, const char *what, pcre2_code *re, double timeout, char **text, size_t *tlen,
		     struct term_match *m)
{
	double t0 = runner__clock(r), deadline = t0 + timeout;
	size_t *off;
	struct serial *term = term_current(r, &off);
	int rc;

	if (deadline > r->deadline)
		deadline = r->deadline;
	*text = NULL;
	for (;;) {
		char *data = NULL;
		size_t len = 0;
		rc = serial_snapshot(term, *off, &data, &len, NULL);
		if (rc)
			return rc;
		if (regex_find(re, data, len, m)) {
			*text = data;
			*tlen = len;
			*off += m->end;
			return 1;
		}
		free(data);
		if (runner__clock(r) >= deadline) {
			(void)runner__vm_frozen(r, runner__clock(r) - t0, "%s ran out", what);
			return 0;
		}
		rc = serial_wait_change(term, *off + len,
					(int)((deadline - runner__clock(r)) * 1000) + 1);
		if (rc && rc != ERR_TIMEOUT) {
			/* The port closed: one last look happens on the next loop. */
			char *last = NULL;
			size_t llen = 0;
			if (serial_snapshot(term, *off, &last, &llen, NULL) == 0 &&
			    regex_find(re, last, llen, m)) {
				*text = last;
				*tlen = llen;
				*off += m->end;
				return 1;
			}
			free(last);
			runner__vm_dead(r);
			return ERR_CLOSED;
		}
	}
}

int term_search(struct runner *r, const char *what, const char *pattern, int literal, double timeout, char **text,
		size_t *tlen, struct term_match *m, char *err, size_t errlen)
{
	pcre2_code *re = compile(pattern, literal, err, errlen);
	int rc;

	*text = NULL;
	if (!re)
		return ERR_INVALID;
	rc = search_re(r, what, re, timeout, text, tlen, m);
	pcre2_code_free(re);
	if (rc < 0)
		err_set(err, errlen, "serial port closed");
	return rc;
}

int term_wait(struct runner *r, const char *what, const char *pattern, int literal, double timeout, char **out,
	      size_t *outlen, char *err, size_t errlen)
{
	struct term_match m;
	char *text = NULL;
	size_t len;
	int rc;

	*out = NULL;
	*outlen = 0;
	rc = term_search(r, what, pattern, literal, timeout, &text, &len, &m, err, errlen);
	if (rc != 1)
		return rc == ERR_INVALID ? rc : runner__fail(r, rc, err, errlen);
	*out = term_crlf_to_lf(text, m.end);
	free(text);
	if (!*out) {
		/* docs/hardening.md: the text the test reads cannot be copied */
		(void)runner__results_nomem(r, ERR_NOMEM, "wait_serial's text");
		err_set(err, errlen, "out of memory: wait_serial's text");
		return runner__fail(r, ERR_NOMEM, err, errlen);
	}
	*outlen = strlen(*out);
	return 1;
}
