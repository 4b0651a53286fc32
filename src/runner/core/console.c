/* SPDX-License-Identifier: MIT */
/* console.c - the console table of one job (console.h): names, classes,
 * arguments, the selection and the "activated" flags that os-autoinst's
 * consoles::console keeps. No I/O: the test APIs act on what it says. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "runner/core/console.h"
#include "util/err.h"
#include "util/str.h"
#include "util/banned.h" /* last: after every system header */

static const char *const class_names[] = {
	[CONSOLE_VNC_BASE] = "vnc-base",
	[CONSOLE_TTY] = "tty-console",
	[CONSOLE_VIRTIO] = "virtio-terminal",
	[CONSOLE_SERIAL_TERM] = "serial-terminal",
};

enum console_class console_class_of(const char *class_name)
{
	size_t i;

	for (i = 0; class_name && i < sizeof(class_names) / sizeof(class_names[0]); i++)
		if (!strcmp(class_names[i], class_name))
			return (enum console_class)i;
	return CONSOLE_OTHER;
}

static void console_release(struct console *c)
{
	free(c->name);
	free(c->class_name);
	json_decref(c->args);
}

int console_set_init(struct console_set *cs)
{
	int rc;

	cs->v = NULL;
	cs->n = 0;
	cs->cur = -1;
	rc = console_add(cs, "sut", "vnc-base", NULL);
	if (rc)
		return rc;
	cs->cur = 0;
	cs->v[0].activated = 1;
	return 0;
}

void console_set_release(struct console_set *cs)
{
	size_t i;

	for (i = 0; i < cs->n; i++)
		console_release(&cs->v[i]);
	free(cs->v);
	cs->v = NULL;
	cs->n = 0;
	cs->cur = -1;
}

struct console *console_find(struct console_set *cs, const char *name)
{
	size_t i;

	for (i = 0; name && i < cs->n; i++)
		if (!strcmp(cs->v[i].name, name))
			return &cs->v[i];
	return NULL;
}

struct console *console_current(struct console_set *cs)
{
	return cs->cur >= 0 && (size_t)cs->cur < cs->n ? &cs->v[cs->cur] : NULL;
}

int console_add(struct console_set *cs, const char *name, const char *class_name, json_t *args)
{
	struct console c = { 0 }, *old;

	if (!name || !*name || !class_name || !*class_name)
		return ERR_INVALID;
	c.name = str_dup(name);
	c.class_name = str_dup(class_name);
	c.cls = console_class_of(class_name);
	c.args = json_is_object(args) ? json_deep_copy(args) : json_object();
	if (!c.name || !c.class_name || !c.args) {
		console_release(&c);
		return ERR_NOMEM;
	}
	old = console_find(cs, name);
	if (old) {
		/* os-autoinst replaces the object; a re-declared console that is
		 * selected now stays selected and active */
		c.activated = old->activated;
		console_release(old);
		*old = c;
	} else {
		struct console *grown = realloc(cs->v, (cs->n + 1) * sizeof(*cs->v));
		if (!grown) {
			console_release(&c);
			return ERR_NOMEM;
		}
		cs->v = grown;
		cs->v[cs->n++] = c;
	}
	return c.cls == CONSOLE_OTHER ? 1 : 0;
}

int console_select(struct console_set *cs, const char *name, int *activated, char *err, size_t errlen)
{
	struct console *c = console_find(cs, name);

	*activated = 0;
	if (!c) {
		err_set(err, errlen, "console '%s' does not exist (add it with add_console in the distribution)",
			name ? name : "");
		return ERR_NOT_FOUND;
	}
	if (c->cls == CONSOLE_OTHER) {
		err_set(err, errlen, "console '%s' has class '%s', which vigil does not support (supported: %s)",
			c->name, c->class_name, CONSOLE_SUPPORTED);
		return ERR_INVALID;
	}
	if (!c->activated) {
		c->activated = 1;
		*activated = 1;
	}
	cs->cur = (long)(c - cs->v);
	return 0;
}

int console_reset(struct console_set *cs, const char *name)
{
	struct console *c = console_find(cs, name);

	if (!c)
		return ERR_NOT_FOUND;
	c->activated = 0;
	return 0;
}

void console_reset_all(struct console_set *cs)
{
	size_t i;

	for (i = 0; i < cs->n; i++) {
		json_t *p = json_object_get(cs->v[i].args, "persistent");
		if (json_is_true(p) || (json_is_integer(p) && json_integer_value(p)) ||
		    (json_is_string(p) && strcmp(json_string_value(p), "") && strcmp(json_string_value(p), "0")))
			continue;
		cs->v[i].activated = 0;
	}
}

int console_is_serial(const struct console *c)
{
	return c && (c->cls == CONSOLE_VIRTIO || c->cls == CONSOLE_SERIAL_TERM);
}

int console_tty(const struct console *c)
{
	json_t *t = c ? json_object_get(c->args, "tty") : NULL;
	long v = 0;

	if (json_is_integer(t))
		v = (long)json_integer_value(t);
	else if (json_is_string(t) && str_to_long(json_string_value(t), &v))
		v = 0;
	return v >= 1 && v <= 12 ? (int)v : 0;
}
