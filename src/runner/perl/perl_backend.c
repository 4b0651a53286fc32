/* SPDX-License-Identifier: MIT */
/* perl_backend.c - the Perl test process's backend_* commands for
 * consoles, mouse, held keys, power and the machine (docs/perl.md): the
 * console table in runner/core/console.c, and the primitives of prim/
 * (input, term, vmctl, sound) the Lua test API uses too, so both languages
 * share one code path.
 * perl.c owns the process and the rest of the command table. */
#define LOG_MODULE "perl"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "runner/core/console.h"
#include "runner/perl/perl.h"
#include "runner/perl/perl_int.h"
#include "runner/core/job.h"
#include "runner/prim/input.h"
#include "runner/prim/sound.h"
#include "runner/prim/term.h"
#include "runner/prim/vmctl.h"
#include "util/err.h"
#include "util/log.h"
#include "util/path.h"
#include "vm/qmp.h"
#include "vm/vnc.h"
#include "util/banned.h" /* last: after every system header */

static const char *str(json_t *msg, const char *key)
{
	const char *s = json_string_value(json_object_get(msg, key));

	return s ? s : "";
}

int perl_backend_add_console(struct runner *r, json_t *c)
{
	const char *name = str(c, "name"), *cls = str(c, "class");
	int rc = console_add(&r->consoles, name, cls, json_object_get(c, "args"));

	if (rc == 1)
		log_warn("console '%s' has class '%s', which vigil does not support (supported: %s): selecting it fails",
			 name, cls, CONSOLE_SUPPORTED);
	else if (rc < 0)
		log_warn("console '%s' (%s): %s", name, cls, err_str(rc));
	return rc < 0 ? rc : 0;
}

/* --- the commands ---------------------------------------------------- */

typedef json_t *(*backend_fn)(struct runner *r, json_t *msg, char *err, size_t errlen);

static json_t *b_add_console(struct runner *r, json_t *msg, char *err, size_t errlen)
{
	(void)err, (void)errlen;
	perl_backend_add_console(r, json_object_get(msg, "console"));
	return perl__ret(json_integer(1));
}

static json_t *b_select_console(struct runner *r, json_t *msg, char *err, size_t errlen)
{
	char why[512];
	int act = 0;
	json_t *o = json_object();

	(void)err, (void)errlen;
	/* an error goes back as {error}: testapi's select_console dies with it */
	if (term_select(r, str(msg, "testapi_console"), 0, &act, why, sizeof(why))) {
		log_warn("select_console: %s", why);
		json_object_set_new(o, "error", json_string(why));
	} else {
		json_object_set_new(o, "activated", json_integer(act));
	}
	return perl__ret(o);
}

static json_t *b_reset_console(struct runner *r, json_t *msg, char *err, size_t errlen)
{
	const char *name = str(msg, "testapi_console");

	if (console_reset(&r->consoles, name)) {
		snprintf(err, errlen, "reset_console: console '%s' does not exist", name);
		return NULL;
	}
	return perl__ret(json_integer(0));
}

static json_t *b_reset_consoles(struct runner *r, json_t *msg, char *err, size_t errlen)
{
	(void)msg, (void)err, (void)errlen;
	console_reset_all(&r->consoles);
	runner__progress(r, "reset_consoles");
	return perl__ret(json_integer(0));
}

static json_t *b_is_serial_terminal(struct runner *r, json_t *msg, char *err, size_t errlen)
{
	(void)msg, (void)err, (void)errlen;
	return perl__ret(json_pack("{s:i}", "yesorno", console_is_serial(console_current(&r->consoles))));
}

/* backend::console_proxy's call: {result} (a list when wantarray), or
 * {exception}, which the proxy dies with. */
static json_t *b_proxy(struct runner *r, json_t *msg, char *err, size_t errlen)
{
	json_t *res = NULL, *o = json_object(), *args = json_object_get(msg, "args");
	char why[600];

	(void)err, (void)errlen;
	if (term_call(r, str(msg, "console"), str(msg, "function"), json_is_array(args) ? args : NULL, &res,
				 why, sizeof(why))) {
		json_object_set_new(o, "exception", json_string(why));
		return perl__ret(o);
	}
	if (json_is_true(json_object_get(msg, "wantarray")) || json_integer_value(json_object_get(msg, "wantarray"))) {
		json_t *list = json_array();
		json_array_append_new(list, res);
		res = list;
	}
	json_object_set_new(o, "result", res);
	return perl__ret(o);
}

static json_t *b_mouse_button(struct runner *r, json_t *msg, char *err, size_t errlen)
{
	const char *b = str(msg, "button");
	int mask = !strcmp(b, "left") ? 1 : !strcmp(b, "middle") ? 2 : !strcmp(b, "right") ? 4 : 0;
	int down = json_is_true(json_object_get(msg, "bstate")) || json_integer_value(json_object_get(msg, "bstate"));
	int rc;

	if (!mask) {
		snprintf(err, errlen, "mouse_button: unknown button '%s' (left, middle, right)", b);
		return NULL;
	}
	rc = vnc_send_pointer(r->vnc, r->mouse_x, r->mouse_y, down ? mask : 0);
	if (rc) {
		runner__vm_dead(r);
		snprintf(err, errlen, "mouse_button: %s", err_str(rc));
		return NULL;
	}
	if (!down)
		runner__progress(r, "mouse_button %s at %d,%d", b, r->mouse_x, r->mouse_y);
	return perl__ret(json_integer(0));
}

static json_t *b_last_mouse(struct runner *r, json_t *msg, char *err, size_t errlen)
{
	(void)msg, (void)err, (void)errlen;
	return perl__ret(json_pack("{s:i,s:i}", "x", r->mouse_x, "y", r->mouse_y));
}

static json_t *b_is_shutdown(struct runner *r, json_t *msg, char *err, size_t errlen)
{
	char status[64], qerr[256];
	int rc;

	(void)msg, (void)err, (void)errlen;
	rc = r->qmp ? qmp_query_status(r->qmp, status, sizeof(status), qerr, sizeof(qerr)) : ERR_CLOSED;
	if ((rc == 0 && !strcmp(status, "shutdown")) || (rc && r->expect_exit)) {
		r->expect_exit = 1; /* QEMU going away now is no fault */
		return perl__ret(json_integer(1));
	}
	return perl__ret(json_integer(0));
}

/* testapi's set_var(..., reload_needles => 1) and save_vars: Perl saved
 * vars.json; both sides read the needles again. */
static json_t *b_reload_needles(struct runner *r, json_t *msg, char *err, size_t errlen)
{
	char *vp = path_join(r->out_dir, "vars.json"), verr[512];

	(void)msg;
	if (vp && vars_load_file(&r->vars, vp, 0, verr, sizeof(verr)))
		log_warn("reload_needles: %s", verr);
	free(vp);
	if (runner__reload_needles(r, NULL)) {
		snprintf(err, errlen, "reload_needles: the needles could not be loaded again (see vigil-log.txt)");
		return NULL;
	}
	runner__progress(r, "reload_needles");
	return perl__ret(json_integer(0));
}

/* Developer mode (PAUSE_ON_SCREEN_MISMATCH) for the Perl side of a check:
 * check is 1 for check_screen, 0 for assert_screen. */
static int is_check(json_t *msg)
{
	json_t *c = json_object_get(msg, "check");

	return json_is_true(c) || (json_is_integer(c) && json_integer_value(c));
}

static json_t *b_pause_configured(struct runner *r, json_t *msg, char *err, size_t errlen)
{
	(void)err, (void)errlen;
	return perl__ret(json_integer(runner__pauses_on_timeout(r, !is_check(msg))));
}

/* Held while paused; 1 makes testapi check the screen again (retry). */
static json_t *b_report_timeout(struct runner *r, json_t *msg, char *err, size_t errlen)
{
	json_t *tags = json_object_get(msg, "tags"), *t;
	char text[300] = "";
	size_t i, off = 0;

	(void)err, (void)errlen;
	json_array_foreach(tags, i, t)
		if (json_is_string(t) && off < sizeof(text))
			off += (size_t)snprintf(text + off, sizeof(text) - off, "%s%s", i ? "', '" : "", json_string_value(t));
	return perl__ret(json_integer(runner__pause_on_timeout(r, text, !is_check(msg))));
}

/* --- sound (testapi_sound.c's primitives) ---------------------------- */

/* testapi's start_audiocapture: filename is testresults/<module>-captured.wav,
 * relative to the test process's directory, the results directory. */
static json_t *b_start_audio(struct runner *r, json_t *msg, char *err, size_t errlen)
{
	char why[900];

	if (sound_start(r, str(msg, "filename"), why, sizeof(why))) {
		snprintf(err, errlen, "start_audiocapture: %s", why);
		return NULL;
	}
	return perl__ret(json_integer(0));
}

static json_t *b_stop_audio(struct runner *r, json_t *msg, char *err, size_t errlen)
{
	char why[900];

	(void)msg;
	if (sound_stop(r, why, sizeof(why))) {
		snprintf(err, errlen, "stop_audiocapture: %s", why);
		return NULL;
	}
	return perl__ret(json_integer(0));
}

/* basetest's verify_sound_image: the PNG testapi made with snd2png (vigil's,
 * first on the test process's PATH) searched once, {found, candidates}
 * or {candidates}, as backend::baseclass's verify_image. */
static json_t *b_verify_image(struct runner *r, json_t *msg, char *err, size_t errlen)
{
	const char *img = str(msg, "imgpath"), *tags[32];
	json_t *mm = json_object_get(msg, "mustmatch"), *t, *match = NULL, *o;
	char why[900], *path = img[0] == '/' ? strdup(img) : path_join(r->out_dir, img);
	size_t n = 0, i;
	int near, rc;

	if (json_is_string(mm))
		tags[n++] = json_string_value(mm);
	json_array_foreach(mm, i, t)
		if (json_is_string(t) && n < 32)
			tags[n++] = json_string_value(t);
	if (!path || !n) {
		free(path);
		snprintf(err, errlen, "verify_image: %s", path ? "no tag in mustmatch" : "out of memory");
		return NULL;
	}
	rc = sound_check(r, path, 1, tags, n, 0, &match, &near, why, sizeof(why));
	free(path);
	if (rc < 0) {
		snprintf(err, errlen, "verify_image '%s': %s", img, why);
		return NULL;
	}
	o = json_object();
	if (rc == 1) {
		json_t *found = perl__match_json(r, json_string_value(json_object_get(match, "needle")),
						 json_object_get(match, "area"),
						 json_number_value(json_object_get(match, "error")), 1);
		if (found)
			json_object_set_new(o, "found", found);
		json_object_set_new(o, "candidates", json_array());
		runner__progress(r, "verify_image '%s': matched %s", tags[0],
				 json_string_value(json_object_get(match, "needle")));
	} else {
		json_object_set_new(o, "candidates", perl__cands_json(r, r->check_cands));
		runner__progress(r, "verify_image '%s': no match%s%s", tags[0], r->check_why[0] ? ": " : "",
				 r->check_why);
	}
	json_decref(match);
	return perl__ret(o);
}

/* --- the primitives both front ends share (prim/input.h, prim/vmctl.h) --- */

/* The answer of a primitive: 0 ({"ret": 0}), or NULL for its error (err). */
static json_t *done(int rc)
{
	return rc ? NULL : perl__ret(json_integer(0));
}

static json_t *b_mouse_set(struct runner *r, json_t *msg, char *err, size_t errlen)
{
	int x = (int)json_integer_value(json_object_get(msg, "x")), y = (int)json_integer_value(json_object_get(msg, "y"));

	return done(input_mouse_set(r, x, y, err, errlen));
}

/* backend::qemu's mouse_hide answers {absolute} */
static json_t *b_mouse_hide(struct runner *r, json_t *msg, char *err, size_t errlen)
{
	if (input_mouse_hide(r, (int)json_integer_value(json_object_get(msg, "border_offset")), err, errlen))
		return NULL;
	return perl__ret(json_pack("{s:i}", "absolute", 1));
}

static json_t *b_hold_key(struct runner *r, json_t *msg, char *err, size_t errlen)
{
	return done(input_hold_key(r, str(msg, "key"), 1, err, errlen));
}

static json_t *b_release_key(struct runner *r, json_t *msg, char *err, size_t errlen)
{
	return done(input_hold_key(r, str(msg, "key"), 0, err, errlen));
}

static json_t *b_power(struct runner *r, json_t *msg, char *err, size_t errlen)
{
	return done(vmctl_power(r, str(msg, "action"), err, errlen));
}

/* eject_cd({id => "cd0", force => 0}) */
static json_t *b_eject_cd(struct runner *r, json_t *msg, char *err, size_t errlen)
{
	json_t *f = json_object_get(msg, "force");
	const char *id = json_string_value(json_object_get(msg, "id"));

	return done(vmctl_eject_cd(r, id ? id : "cd0", json_is_true(f) || json_integer_value(f), err, errlen));
}

static json_t *b_freeze_vm(struct runner *r, json_t *msg, char *err, size_t errlen)
{
	(void)msg;
	return done(vmctl_qmp(r, "freeze_vm", "stop", NULL, err, errlen));
}

static json_t *b_cont_vm(struct runner *r, json_t *msg, char *err, size_t errlen)
{
	(void)msg;
	return done(vmctl_qmp(r, "resume_vm", "cont", NULL, err, errlen));
}

/* save_memory_dump({filename => module}) */
static json_t *b_memory_dump(struct runner *r, json_t *msg, char *err, size_t errlen)
{
	struct module *m = runner__module(r);
	const char *name = json_string_value(json_object_get(msg, "filename"));
	char why[600];

	if (vmctl_memory_dump(r, name ? name : m ? m->name : "job", why, sizeof(why))) {
		snprintf(err, errlen, "save_memory_dump failed: %s", why);
		return NULL;
	}
	return perl__ret(json_integer(0));
}

#define NEEDS_VM 1

static const struct backend_cmd {
	const char *name;
	backend_fn fn;
	int flags;
} backend_cmds[] = {
	{ "vigil_add_console", b_add_console, 0 },
	{ "backend_select_console", b_select_console, 0 },
	{ "backend_reset_console", b_reset_console, 0 },
	{ "backend_reset_consoles", b_reset_consoles, 0 },
	{ "backend_is_serial_terminal", b_is_serial_terminal, 0 },
	{ "backend_proxy_console_call", b_proxy, 0 },
	{ "backend_mouse_set", b_mouse_set, NEEDS_VM },
	{ "backend_mouse_button", b_mouse_button, NEEDS_VM },
	{ "backend_mouse_hide", b_mouse_hide, NEEDS_VM },
	{ "backend_get_last_mouse_set", b_last_mouse, 0 },
	{ "backend_hold_key", b_hold_key, NEEDS_VM },
	{ "backend_release_key", b_release_key, NEEDS_VM },
	{ "backend_power", b_power, NEEDS_VM },
	{ "backend_is_shutdown", b_is_shutdown, 0 },
	{ "backend_eject_cd", b_eject_cd, NEEDS_VM },
	{ "backend_freeze_vm", b_freeze_vm, NEEDS_VM },
	{ "backend_cont_vm", b_cont_vm, NEEDS_VM },
	{ "backend_save_memory_dump", b_memory_dump, NEEDS_VM },
	{ "backend_reload_needles", b_reload_needles, 0 },
	{ "backend_start_audiocapture", b_start_audio, NEEDS_VM },
	{ "backend_stop_audiocapture", b_stop_audio, NEEDS_VM },
	{ "backend_verify_image", b_verify_image, 0 },
	{ "is_configured_to_pause_on_timeout", b_pause_configured, 0 },
	{ "report_timeout", b_report_timeout, 0 },
};

json_t *perl_backend_answer(struct runner *r, const char *cmd, json_t *msg, int *known, char *err, size_t errlen)
{
	size_t i;

	*known = 0;
	for (i = 0; cmd && i < sizeof(backend_cmds) / sizeof(backend_cmds[0]); i++) {
		const struct backend_cmd *c = &backend_cmds[i];
		if (strcmp(c->name, cmd))
			continue;
		*known = 1;
		if ((c->flags & NEEDS_VM) && !r->vnc) {
			snprintf(err, errlen, "'%s' before the VM runs", cmd);
			return NULL;
		}
		if ((c->flags & NEEDS_VM) && runner__aborted(r)) {
			snprintf(err, errlen, "%s", r->reason);
			return NULL;
		}
		return c->fn(r, msg, err, errlen);
	}
	return NULL;
}
