/* SPDX-License-Identifier: MIT */
/* console.h - the consoles of one job, shared by the Lua and Perl test
 * APIs: the table a distribution declares (name, class, arguments), the
 * console selected now, and os-autoinst's "activated" state. Pure
 * bookkeeping: it sends no key and opens no port (the callers do). */
#ifndef VIGIL_CONSOLE_H
#define VIGIL_CONSOLE_H

#include <stddef.h>
#include <jansson.h>

/* The classes vigil implements; CONSOLE_OTHER is accepted in the table
 * and refused on selection. */
enum console_class {
	CONSOLE_VNC_BASE,     /* "vnc-base": the VGA screen */
	CONSOLE_TTY,          /* "tty-console": the VGA screen after ctrl-alt-f<tty> */
	CONSOLE_VIRTIO,       /* "virtio-terminal": VIRTIO_CONSOLE's virtconsole */
	CONSOLE_SERIAL_TERM,  /* "serial-terminal": the serial port (ttyS0) */
	CONSOLE_OTHER,
};

/* The supported class names, for messages: "vnc-base, tty-console, ...". */
#define CONSOLE_SUPPORTED "vnc-base, tty-console, virtio-terminal, serial-terminal"

struct console {
	char *name;          /* testapi's name: "sut", "root-console" */
	char *class_name;    /* as given: "tty-console" */
	enum console_class cls;
	json_t *args;        /* an object, owned */
	int activated;       /* selected since the last reset */
};

struct console_set {
	struct console *v;
	size_t n;
	long cur;            /* index of the selected console, -1 none */
};

/* An empty table with "sut" (vnc-base, as backend::qemu adds it) selected
 * and activated. 0 or ERR_NOMEM. */
int console_set_init(struct console_set *cs);
/* Frees every console. */
void console_set_release(struct console_set *cs);

/* The class of a class name (CONSOLE_OTHER for any other). */
enum console_class console_class_of(const char *class_name);

/* Adds (or replaces, keeping its activated state) console name of
 * class_name with args (borrowed; NULL: {}). Returns 0 for a supported
 * class, 1 for one vigil does not implement (added all the same; the
 * caller warns), ERR_NOMEM or ERR_INVALID (empty name or class). */
int console_add(struct console_set *cs, const char *name, const char *class_name, json_t *args);

/* The console called name, or NULL. Borrowed, valid until the next add
 * or release. */
struct console *console_find(struct console_set *cs, const char *name);

/* The selected console, or NULL. Borrowed as console_find's. */
struct console *console_current(struct console_set *cs);

/* Selects name: *activated = 1 when this is its first selection since a
 * reset (the caller activates it: ctrl-alt-f<tty>, ...). 0; ERR_NOT_FOUND
 * (not in the table) or ERR_INVALID (a class vigil does not implement),
 * with err naming the console, its class and the supported ones. The
 * selection does not change on an error. */
int console_select(struct console_set *cs, const char *name, int *activated, char *err, size_t errlen);

/* The next selection of name activates it again. ERR_NOT_FOUND if none. */
int console_reset(struct console_set *cs, const char *name);

/* reset_consoles: every console but those whose args.persistent is true. */
void console_reset_all(struct console_set *cs);

/* 1 if c is a serial terminal (virtio-terminal, serial-terminal). */
int console_is_serial(const struct console *c);

/* args.tty of c as a number 1..12, or 0 (none or not a number). */
int console_tty(const struct console *c);

#endif
