/* SPDX-License-Identifier: MIT */
/* perl.c - runs an openQA Perl test distribution (main.pm): starts
 * os-autoinst's own test process (the embedded vigil_autotest.pl) on a
 * socketpair and answers its JSON-line commands from one table,
 * perl_cmds[], with the primitives the Lua test API uses (docs/perl.md).
 * Perl records the steps and writes result-*.json and test_order.json;
 * this file writes the screenshots Perl names and fills r->modules. The
 * test process itself (start, message loop, end) is perl_proc.c. */
#define LOG_MODULE "perl"
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "image/frame.h"
#include "image/needle.h"
#include "runner/prim/keys.h"
#include "runner/prim/machine.h"
#include "runner/perl/perl.h"
#include "runner/perl/perl_int.h"
#include "runner/core/job.h"
#include "runner/prim/screen.h"
#include "runner/core/shots.h"
#include "runner/prim/input.h"
#include "runner/prim/term.h"
#include "runner/prim/vmctl.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/file.h"
#include "util/log.h"
#include "util/path.h"
#include "util/proc.h"
#include "util/str.h"
#include "util/time.h"
#include "vm/serial.h"
#include "vm/vnc.h"
#include "util/banned.h" /* last: after every system header */


int perl_is_distri(const char *dir)
{
	char *pm = path_join(dir, "main.pm"), *lua = path_join(dir, "main.lua");
	int yes = pm && lua && file_exists(pm) && !file_exists(lua);

	free(pm);
	free(lua);
	return yes;
}

char *perl_regex_to_pcre2(const char *re)
{
	size_t len = strlen(re), i = 0, o = 0;
	char *out = malloc(len + 1);

	if (!out)
		return NULL;
	while (i < len) {
		if (!strncmp(re + i, "(?^", 3)) {
			memcpy(out + o, "(?^", 3);
			o += 3;
			i += 3;
			/* the flags up to ':' or ')': drop the charset ones */
			while (i < len && re[i] != ':' && re[i] != ')') {
				if (!strchr("adlu", re[i]))
					out[o++] = re[i];
				i++;
			}
			continue;
		}
		if (re[i] == '\\' && i + 1 < len) {
			out[o++] = re[i++];
		}
		out[o++] = re[i++];
	}
	out[o] = '\0';
	return out;
}

/* --- helpers -------------------------------------------------------- */

/* {"ret": v} (v NULL: null); NULL when it cannot be made (perl_answer
 * then ends the job incomplete: an answer with a part missing would
 * decide the test). */
json_t *perl__ret(json_t *v)
{
	json_t *o = json_object();
	int rc = 0;

	if (results_set(&rc, o, "ret", v ? v : json_null())) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* A JSON string of bytes that may not be UTF-8 (serial output): invalid
 * bytes become '?'. */
static json_t *bytes_json(const char *s, size_t len)
{
	json_t *j = json_stringn(s, len);
	char *copy;
	size_t i;

	if (j)
		return j;
	copy = malloc(len + 1);
	if (!copy)
		return json_string("");
	for (i = 0; i < len; i++)
		copy[i] = (unsigned char)s[i] < 0x80 ? s[i] : '?';
	j = json_stringn(copy, len);
	free(copy);
	return j ? j : json_string("");
}

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* tinycv's image reference: base64 of "vigil-frame:ID" (lib/tinycv.pm). */
static json_t *frame_ref_json(unsigned long id)
{
	char plain[64], enc[100];
	size_t n = (size_t)snprintf(plain, sizeof(plain), "vigil-frame:%lu", id), i, o = 0;

	for (i = 0; i < n; i += 3) {
		unsigned v = (unsigned char)plain[i] << 16;
		if (i + 1 < n)
			v |= (unsigned char)plain[i + 1] << 8;
		if (i + 2 < n)
			v |= (unsigned char)plain[i + 2];
		enc[o++] = b64[(v >> 18) & 63];
		enc[o++] = b64[(v >> 12) & 63];
		enc[o++] = i + 1 < n ? b64[(v >> 6) & 63] : '=';
		enc[o++] = i + 2 < n ? b64[v & 63] : '=';
	}
	enc[o] = '\0';
	return json_string(enc);
}

/* Name frame f to Perl (the reference is taken over): its id. Perl
 * writes a frame right after the reply that names it, or after a few
 * more commands (a timed-out check's failed screens come after
 * report_timeout): the last PERL_KEEP_FRAMES stay, so memory stays flat
 * in a module that checks the screen for hours. */
static unsigned long frame_keep(struct perl *p, struct frame *f)
{
	if (p->nframes == PERL_KEEP_FRAMES) {
		frame_unref(p->frames[0]);
		memmove(p->frames, p->frames + 1, (p->nframes - 1) * sizeof(*p->frames));
		p->nframes--;
		p->frame_base++;
	}
	p->frames[p->nframes++] = f;
	return p->frame_base + p->nframes;
}

void perl__frames_release(struct perl *p)
{
	size_t i;

	for (i = 0; i < p->nframes; i++)
		frame_unref(p->frames[i]);
	p->frame_base += p->nframes;
	p->nframes = 0;
}

/* Adds "image" and "frame" (video frame number at 24/s) for f (referenced
 * here) to o. */
static void add_image(struct runner *r, struct perl *p, json_t *o, struct frame *f)
{
	unsigned long id;

	if (!f || !p)
		return;
	frame_ref(f);
	id = frame_keep(p, f);
	json_object_set_new(o, "image", frame_ref_json(id));
	json_object_set_new(o, "frame", json_integer((json_int_t)((f->t - r->steps.t0) * PERL_FPS)));
}

/* needle::TO_JSON of n: what Perl's needle->new reads back. */
static json_t *needle_json(const struct needle *n)
{
	static const char *const types[] = { "match", "exclude", "ocr" };
	json_t *o = json_object(), *tags = json_array(), *props = json_array(), *areas = json_array();
	size_t i;
	int rc = 0;

	for (i = 0; i < n->ntags; i++)
		results_append(&rc, tags, json_string(n->tags[i]));
	for (i = 0; i < n->nproperties; i++)
		results_append(&rc, props, json_string(n->properties[i]));
	for (i = 0; i < n->nareas; i++) {
		const struct needle_area *a = &n->areas[i];
		json_t *e = json_object();
		results_set(&rc, e, "xpos", json_integer(a->x));
		results_set(&rc, e, "ypos", json_integer(a->y));
		results_set(&rc, e, "width", json_integer(a->w));
		results_set(&rc, e, "height", json_integer(a->h));
		results_set(&rc, e, "type", json_string(types[a->type]));
		results_set(&rc, e, "margin", json_real(a->margin));
		results_set(&rc, e, "match", json_real(a->match));
		results_append(&rc, areas, e);
	}
	results_set(&rc, o, "name", json_string(n->name));
	results_set(&rc, o, "file", json_string(n->file));
	results_set(&rc, o, "png", json_string(n->png_path ? n->png_path : ""));
	results_set(&rc, o, "tags", tags);
	results_set(&rc, o, "properties", props);
	results_set(&rc, o, "area", areas);
	if (rc) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* screen.c's area list (similarity in percent) as the backend's
 * (similarity 0..1: Perl turns it into percent itself). */
static json_t *areas_to_perl(json_t *areas)
{
	json_t *out = json_array(), *a, *v;
	const char *key;
	size_t i;
	int rc = 0;

	json_array_foreach(areas, i, a) {
		json_t *e = json_object();
		/* not json_deep_copy: it leaves out what it could not copy */
		json_object_foreach(a, key, v)
			if (strcmp(key, "similarity"))
				results_set(&rc, e, key, json_deep_copy(v));
		results_set(&rc, e, "similarity", json_real(json_number_value(json_object_get(a, "similarity")) / 100.0));
		results_append(&rc, out, e);
	}
	if (rc) {
		json_decref(out);
		return NULL;
	}
	return out;
}

/* A match or candidate as Perl's check_screen reply carries it. */
json_t *perl__match_json(struct runner *r, const char *name, json_t *areas, double error, int ok)
{
	struct needle *n = needle_set_get(r->needles, name);
	json_t *o;
	int rc = 0;

	if (!n)
		return NULL;
	o = json_object();
	results_set(&rc, o, "needle", needle_json(n));
	results_set(&rc, o, "area", areas_to_perl(areas));
	results_set(&rc, o, "error", json_real(error));
	results_set(&rc, o, "ok", json_integer(ok));
	if (rc) {
		/* the check's answer decides the test: the job ends incomplete
		 * (perl.c's loop: runner__results_nomem) */
		r->steps.err = rc;
		json_decref(o);
		return NULL;
	}
	return o;
}

/* A check's candidate objects (screen.c's) as Perl's failed_candidates. */
json_t *perl__cands_json(struct runner *r, json_t *cands)
{
	json_t *out = json_array(), *c;
	size_t i;

	json_array_foreach(cands, i, c) {
		json_t *e = perl__match_json(r, json_string_value(json_object_get(c, "name")),
					  json_object_get(c, "area"), json_number_value(json_object_get(c, "error")), 0);
		if (e)
			(void)results_append(&r->steps.err, out, e);
	}
	if (!out)
		r->steps.err = ERR_NOMEM;
	return out;
}

/* --- the commands --------------------------------------------------- */

typedef json_t *(*perl_cmd_fn)(struct runner *r, struct perl *p, json_t *msg, char *err, size_t errlen);

static json_t *c_hello(struct runner *r, struct perl *p, json_t *msg, char *err, size_t errlen)
{
	json_int_t v = json_integer_value(json_object_get(msg, "interface"));

	(void)r, (void)p;
	if (v != PERL_INTERFACE) {
		snprintf(err, errlen, "os-autoinst in %s speaks test API interface %lld, vigil speaks %d (os-autoinst 4.6, Debian 12)",
			 json_string_value(json_object_get(msg, "os_autoinst")) ? json_string_value(json_object_get(msg, "os_autoinst")) : "?",
			 (long long)v, PERL_INTERFACE);
		return NULL;
	}
	log_info("test process %lld: os-autoinst %s, perl %s", (long long)json_integer_value(json_object_get(msg, "pid")),
		 json_string_value(json_object_get(msg, "os_autoinst")) ? json_string_value(json_object_get(msg, "os_autoinst")) : "?",
		 json_string_value(json_object_get(msg, "perl")) ? json_string_value(json_object_get(msg, "perl")) : "?");
	return perl__ret(json_integer(1));
}

static json_t *c_schedule(struct runner *r, struct perl *p, json_t *msg, char *err, size_t errlen)
{
	json_t *consoles = json_object_get(msg, "consoles"), *c;
	const char *nd = json_string_value(json_object_get(msg, "needles_dir"));
	size_t i;
	int rc;

	json_array_foreach(consoles, i, c)
		(void)perl_backend_add_console(r, c); /* it warns itself */
	if (nd && r->needles && r->needles->dir && strcmp(nd, r->needles->dir))
		log_warn("the test process's needles are in '%s', vigil's in '%s'", nd, r->needles->dir);
	if (!p || p->scheduled)
		return perl__ret(json_integer(1));
	runner__progress(r, "schedule loaded by the test process, starting the VM");
	rc = machine_start(r, NULL, err, errlen);
	if (rc) {
		char why[900];
		snprintf(why, sizeof(why), "%s", err);
		runner__vm_dead(r);
		runner__abort(r, JOB_INCOMPLETE, "cannot start the VM: %s", why);
		snprintf(err, errlen, "cannot start the VM: %s", why);
		return NULL;
	}
	p->scheduled = 1;
	return perl__ret(json_integer(1));
}

static json_t *c_can_handle(struct runner *r, struct perl *p, json_t *msg, char *err, size_t errlen)
{
	const char *f = json_string_value(json_object_get(msg, "function"));
	json_t *yes;

	(void)r, (void)p, (void)err, (void)errlen;
	if (!f || strcmp(f, "snapshots"))
		return perl__ret(json_integer(0));
	/* backend::qemu answers with a hash */
	yes = json_object();
	json_object_set_new(yes, "ret", json_integer(1));
	return perl__ret(yes);
}

/* A failed module's "Failed" step (Perl's "# Test died: ..." text file) on
 * the terminal, as a Lua module's failure is said. */
static void say_failure(struct runner *r, struct module *m, json_t *details)
{
	json_t *d;
	size_t i;

	json_array_foreach(details, i, d) {
		const char *title = json_string_value(json_object_get(d, "title"));
		const char *file = json_string_value(json_object_get(d, "text"));
		char *path;
		struct buf b;
		if (!title || strcmp(title, "Failed") || !file || strchr(file, '/'))
			continue;
		path = path_join(r->testresults, file);
		buf_init(&b, 1 << 16);
		if (path && file_read_all(path, &b) == 0 && b.len) {
			size_t len = strcspn(b.data, "\n");
			const char *t = b.data;
			if (str_starts_with(t, "# Test died: ")) {
				t += strlen("# Test died: ");
				len -= strlen("# Test died: ");
			}
			printf("[%7.2fs] %s: failed: %.*s\n", runner__elapsed(r), m->name, (int)len, t);
			log_info("%s: failed: %.*s", m->name, (int)len, t);
		}
		buf_release(&b);
		free(path);
	}
}

/* Says the ended module's result (Perl wrote it after set_current_test {}). */
void perl__say_ended(struct runner *r, struct perl *p)
{
	struct module *m;
	char *name = NULL, *path;
	json_t *j;
	const char *res = NULL;

	if (p->ended < 0 || (size_t)p->ended >= r->nmodules)
		return;
	m = &r->modules[p->ended];
	p->ended = -1;
	if (asprintf(&name, "result-%s.json", m->name) < 0)
		return;
	path = path_join(r->testresults, name);
	j = path ? json_load_file(path, 0, NULL) : NULL;
	res = json_string_value(json_object_get(j, "result"));
	if (res && !strcmp(res, "fail"))
		say_failure(r, m, json_object_get(j, "details"));
	printf("[%7.2fs] %s: module %s (%.2fs)\n", runner__elapsed(r), m->name, res ? res : "(no result written)",
	       m->end - m->start);
	fflush(stdout);
	log_info("%s: module %s", m->name, res ? res : "(no result written)");
	json_decref(j);
	free(path);
	free(name);
}

static json_t *c_set_current_test(struct runner *r, struct perl *p, json_t *msg, char *err, size_t errlen)
{
	const char *name = json_string_value(json_object_get(msg, "name"));
	const char *full = json_string_value(json_object_get(msg, "full_name"));
	struct module *m, *grown;

	(void)err; /* no error of its own: NULL is out of memory */
	(void)errlen;

	if (!name) {
		if (p && p->running >= 0) {
			r->modules[p->running].end = time_mono();
			p->ended = p->running;
			p->running = -1;
		}
		perl_read_vars(r);
		return perl__ret(json_integer(1));
	}
	if (p)
		perl__say_ended(r, p);
	if (r->nmodules && !strcmp(r->modules[r->nmodules - 1].name, name)) {
		/* the same module again: its post_fail_hook */
		m = &r->modules[r->nmodules - 1];
		if (p)
			p->running = (long)r->nmodules - 1;
		runner__progress(r, "%s", full ? full : name);
		return perl__ret(json_integer(1));
	}
	/* Out of memory: NULL with err left empty, so handle_line ends the job
	 * incomplete (runner__results_nomem) rather than failing the module. */
	grown = realloc(r->modules, (r->nmodules + 1) * sizeof(*r->modules));
	if (!grown)
		return NULL;
	r->modules = grown;
	m = &r->modules[r->nmodules];
	memset(m, 0, sizeof(*m));
	m->name = str_dup(name);
	m->script = str_dup(full ? full : name);
	if (!m->name || !m->script) {
		free(m->name);
		free(m->script);
		m->name = m->script = NULL;
		return NULL;
	}
	m->start = time_mono();
	m->result = MODULE_NONE;
	r->cur = r->nmodules++;
	if (p)
		p->running = (long)r->cur;
	/* isotovideo clears the backend's serial buffer here */
	r->serial_offset = r->serial ? serial_len(r->serial) : 0;
	runner__progress(r, "starting module");
	runner__pause_at_module(r, m); /* PAUSE_AT: the reply waits while paused */
	return perl__ret(json_integer(1));
}

/* mustmatch: a tag or a list of tags. Fills tags (borrowed from msg). */
static size_t check_tags(json_t *mm, const char **tags, size_t max)
{
	json_t *t;
	size_t i, n = 0;

	if (json_is_string(mm)) {
		tags[n++] = json_string_value(mm);
		return n;
	}
	json_array_foreach(mm, i, t)
		if (json_is_string(t) && n < max)
			tags[n++] = json_string_value(t);
	return n;
}

static json_t *c_check_screen(struct runner *r, struct perl *p, json_t *msg, char *err, size_t errlen)
{
	const char *tags[64];
	size_t ntags = check_tags(json_object_get(msg, "mustmatch"), tags, 64), i;
	/* already scaled by TIMEOUT_SCALE in testapi.pm */
	double timeout = json_number_value(json_object_get(msg, "timeout"));
	int check = json_is_true(json_object_get(msg, "check")) || json_integer_value(json_object_get(msg, "check"));
	json_t *match = NULL, *o = json_object(), *tl = json_array();
	char text[300] = "";
	size_t off = 0;
	double t0 = time_mono();
	int near = 0, rc;

	if (ntags == 0) {
		json_decref(o);
		json_decref(tl);
		snprintf(err, errlen, "check_screen: no tag in mustmatch");
		return NULL;
	}
	for (i = 0; i < ntags; i++) {
		json_array_append_new(tl, json_string(tags[i]));
		if (off < sizeof(text))
			off += (size_t)snprintf(text + off, sizeof(text) - off, "%s%s", i ? "', '" : "", tags[i]);
	}
	r->check_keep_fails = 1;
	rc = screen_check(r, tags, ntags, timeout, !check, &match, &near);
	r->check_keep_fails = 0;
	if (rc != 0)
		screen_fails_clear(r);
	if (rc == 1)
		runner__progress(r, "%s '%s': matched %s in %.2fs", check ? "check_screen" : "assert_screen", text,
				 json_string_value(json_object_get(match, "needle")), time_mono() - t0);
	else if (rc == 0)
		runner__progress(r, "%s '%s': no match in %.2fs%s%s", check ? "check_screen" : "assert_screen", text,
				 time_mono() - t0, !check && r->check_why[0] ? ": " : "", !check ? r->check_why : "");
	if (rc < 0) {
		json_decref(o);
		json_decref(tl);
		snprintf(err, errlen, "check_screen: %s", r->reason[0] ? r->reason : err_str(rc));
		return NULL;
	}
	if (rc == 1) {
		int brc = 0; /* rc is screen_check's */
		json_t *found = perl__match_json(r, json_string_value(json_object_get(match, "needle")),
					      json_object_get(match, "area"),
					      json_number_value(json_object_get(match, "error")), 1);
		json_decref(match);
		if (!found) {
			json_decref(o);
			json_decref(tl);
			snprintf(err, errlen, "check_screen: the matched needle is gone");
			return NULL;
		}
		results_set(&brc, o, "found", found);
		results_set(&brc, o, "candidates", json_array());
		add_image(r, p, o, r->check_frame);
		if (results_set(&brc, o, "tags", tl)) {
			json_decref(o);
			return NULL;
		}
		return perl__ret(o);
	}
	{
		json_t *screen = NULL, *screens = json_array();
		/* os-autoinst's choice (backend/baseclass.pm): the screens kept
		 * during the search, the final mismatch appended, reduced to the
		 * 20 biggest changes; the final one stays last. */
		if (r->check_frame && screen_fails_add(r, r->check_frame, r->check_cands, 1000.0) == 0) {
			double t = r->check_fails[r->check_nfails - 1].t;

			screen_fails_reduce(r, SCREEN_FAIL_MAX);
			if (r->check_fails[r->check_nfails - 1].t != t &&
			    image_psnr(r->check_fails[r->check_nfails - 1].f->img, r->check_frame->img) < 50.0)
				(void)screen_fails_add(r, r->check_frame, r->check_cands, 1000.0); /* no memory: one fewer */
		}
		for (i = 0; i < r->check_nfails; i++) {
			screen = json_object();
			json_object_set_new(screen, "candidates", perl__cands_json(r, r->check_fails[i].cands));
			add_image(r, p, screen, r->check_fails[i].f);
			json_array_append_new(screens, screen);
		}
		if (!r->check_nfails) {
			screen = json_object();
			json_object_set_new(screen, "candidates", perl__cands_json(r, r->check_cands));
			add_image(r, p, screen, r->check_frame);
			json_array_append_new(screens, screen);
		}
		screen_fails_clear(r);
		json_object_set_new(o, "timeout", json_integer(1));
		json_object_set_new(o, "tags", tl);
		json_object_set_new(o, "failed_screens", screens);
		if (json_object_get(screen, "image"))
			json_object_set(o, "image", json_object_get(screen, "image"));
		json_object_set_new(o, "stall", json_integer(0));
	}
	return perl__ret(o);
}

static json_t *c_send_key(struct runner *r, struct perl *p, json_t *msg, char *err, size_t errlen)
{
	const char *key = json_string_value(json_object_get(msg, "key"));
	uint32_t syms[KEYS_MAX_COMBO];
	size_t nsyms;
	char kerr[160];

	(void)p;
	if (!key || keys_parse(key, syms, &nsyms, kerr, sizeof(kerr))) {
		snprintf(err, errlen, "send_key '%s': %s", key ? key : "", key ? kerr : "no key");
		return NULL;
	}
	if (runner__aborted(r)) {
		snprintf(err, errlen, "%s", r->reason);
		return NULL;
	}
	if (input_keysyms(r, syms, nsyms, 0, err, errlen))
		return NULL;
	runner__progress(r, "send_key %s", key);
	return perl__ret(json_integer(0));
}

static json_t *c_type_string(struct runner *r, struct perl *p, json_t *msg, char *err, size_t errlen)
{
	json_t *t = json_object_get(msg, "text");
	double t0 = time_mono();
	double mi = json_number_value(json_object_get(msg, "max_interval"));
	struct {
		const char *s;
		size_t len;
		double num;
	} c;

	(void)p;
	if (!json_is_string(t)) {
		snprintf(err, errlen, "type_string: no text");
		return NULL;
	}
	c.s = json_string_value(t);
	c.len = json_string_length(t);
	/* as testapi.c's type_interval: slower for a small max_interval */
	c.num = r->typing_interval + (mi > 0 && mi < 250 ? 1.0 / sqrt(mi) : 0);
	if (runner__aborted(r)) {
		snprintf(err, errlen, "%s", r->reason);
		return NULL;
	}
	if (input_type(r, c.s, c.len, c.num, err, errlen))
		return NULL;
	{
		/* control characters escaped: the progress stays one line */
		char shown[256];
		size_t i, o = 0;
		for (i = 0; i < c.len && o + 5 < sizeof(shown); i++) {
			unsigned char ch = (unsigned char)c.s[i];
			if (ch == '\n') {
				shown[o++] = '\\';
				shown[o++] = 'n';
			} else if (ch < 0x20 || ch == 0x7f) {
				o += (size_t)snprintf(shown + o, sizeof(shown) - o, "\\x%02x", ch);
			} else {
				shown[o++] = (char)ch;
			}
		}
		shown[o] = '\0';
		runner__progress(r, "type_string '%s' (%.2fs)", shown, time_mono() - t0);
	}
	return perl__ret(json_integer(0));
}

/* Appends pattern s as one alternative: quoted (no_regex) or Perl's
 * regex string made PCRE2's. */
static int pattern_add(struct buf *b, const char *s, int literal)
{
	int rc = buf_puts(b, b->len ? "|(?:" : "(?:");

	if (literal) {
		for (; *s && !rc; s++) {
			if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9')))
				rc = buf_puts(b, "\\");
			if (!rc)
				rc = buf_append(b, s, 1);
		}
	} else {
		char *re = perl_regex_to_pcre2(s);
		rc = re ? buf_puts(b, re) : ERR_NOMEM;
		free(re);
	}
	return rc ? rc : buf_puts(b, ")");
}

static json_t *c_wait_serial(struct runner *r, struct perl *p, json_t *msg, char *err, size_t errlen)
{
	json_t *rx = json_object_get(msg, "regexp"), *e, *o;
	int literal = json_is_true(json_object_get(msg, "no_regex")) || json_integer_value(json_object_get(msg, "no_regex"));
	struct {
		char *out;
		size_t len;
		int found;
	} c = { 0 };
	char what[300];
	double t0 = time_mono();
	struct buf b;
	size_t i;
	int rc = 0, brc = 0;

	(void)p;
	buf_init(&b, 1 << 20);
	if (json_is_string(rx))
		rc = pattern_add(&b, json_string_value(rx), literal);
	else
		json_array_foreach(rx, i, e)
			if (json_is_string(e) && !rc)
				rc = pattern_add(&b, json_string_value(e), literal);
	if (rc || !b.len) {
		buf_release(&b);
		snprintf(err, errlen, "wait_serial: %s", rc ? err_str(rc) : "no regexp");
		return NULL;
	}
	snprintf(what, sizeof(what), "wait_serial '%.200s'", b.data);
	if (runner__aborted(r)) {
		snprintf(err, errlen, "%s", r->reason);
		rc = ERR_BADSTATE;
	} else {
		rc = term_wait(r, what, b.data, 0, json_number_value(json_object_get(msg, "timeout")), &c.out, &c.len, err,
			       errlen);
		c.found = rc == 1;
		/* a time-out that ends the job (QEMU frozen, MAX_JOB_TIME) is an error */
		if (rc == 0 && runner__aborted(r)) {
			snprintf(err, errlen, "%s", r->reason);
			rc = ERR_BADSTATE;
		} else if (rc > 0) {
			rc = 0;
		}
	}
	if (!rc)
		runner__progress(r, "wait_serial '%.200s': %s in %.2fs", b.data, c.found ? "matched" : "no match",
				 time_mono() - t0);
	buf_release(&b);
	if (rc) {
		free(c.out);
		return NULL;
	}
	o = json_object();
	results_set(&brc, o, "matched", json_integer(c.found ? 1 : 0));
	results_set(&brc, o, "string", c.out || !c.found ? bytes_json(c.out ? c.out : "", c.len) : NULL);
	free(c.out);
	if (brc) {
		json_decref(o);
		return NULL;
	}
	return perl__ret(o);
}

static json_t *c_read_serial(struct runner *r, struct perl *p, json_t *msg, char *err, size_t errlen)
{
	json_int_t pos = json_integer_value(json_object_get(msg, "position"));
	json_t *o = json_object();
	char *data = NULL;
	size_t len = 0, start = 0;

	(void)p;
	if (pos < 0)
		pos = 0;
	if (r->serial && serial_snapshot(r->serial, (size_t)pos, &data, &len, &start)) {
		json_decref(o);
		snprintf(err, errlen, "read_serial: out of memory");
		return NULL;
	}
	if (!r->serial)
		start = (size_t)pos;
	json_object_set_new(o, "serial", bytes_json(data ? data : "", len));
	json_object_set_new(o, "position", json_integer((json_int_t)(start + len)));
	free(data);
	return o;
}

static json_t *c_zero(struct runner *r, struct perl *p, json_t *msg, char *err, size_t errlen)
{
	(void)r, (void)p, (void)msg, (void)err, (void)errlen;
	return perl__ret(json_integer(0));
}

static json_t *c_pause(struct runner *r, struct perl *p, json_t *msg, char *err, size_t errlen)
{
	const char *why = json_string_value(json_object_get(msg, "reason"));
	json_t *f = json_object_get(msg, "due_to_failure");

	(void)p, (void)err, (void)errlen;
	/* autotest's pause_on_failure: held while developer mode pauses on
	 * failures (PAUSE_ON_FAILURE); the failure stands after the resume */
	if (json_is_true(f) || json_integer_value(f))
		(void)runner__pause_on_failure(r, why ? why : "test died");
	else
		log_info("the test asks to pause (%s): only failures pause a Perl module, going on",
			 why ? why : "no reason given");
	return perl__ret(json_integer(1));
}

static json_t *c_last_screenshot(struct runner *r, struct perl *p, json_t *msg, char *err, size_t errlen)
{
	json_t *o = json_object();
	struct frame *f = r->vnc ? screen_current(r) : NULL;

	(void)msg, (void)err, (void)errlen;
	if (f) {
		add_image(r, p, o, f);
		frame_unref(f);
	}
	return perl__ret(o);
}

static json_t *c_set_reference(struct runner *r, struct perl *p, json_t *msg, char *err, size_t errlen)
{
	(void)msg, (void)err, (void)errlen;
	if (p) {
		if (p->ref)
			frame_unref(p->ref);
		p->ref = screen_current(r);
	}
	return perl__ret(json_integer(0));
}

/* {sim, elapsed, timed_out} as the backend's screen waits answer. */
static json_t *wait_result(double sim, double t0, int timed_out)
{
	json_t *o = json_object();
	int rc = 0;

	results_set(&rc, o, "sim", json_real(floor(sim * 100 + 0.5) / 100));
	results_set(&rc, o, "elapsed", json_real(floor((time_mono() - t0) * 100 + 0.5) / 100));
	if (results_set(&rc, o, "timed_out", json_integer(timed_out))) {
		json_decref(o);
		return NULL;
	}
	return perl__ret(o);
}

static json_t *c_wait_screen_change(struct runner *r, struct perl *p, json_t *msg, char *err, size_t errlen)
{
	double timeout = json_number_value(json_object_get(msg, "timeout"));
	json_t *lv = json_object_get(msg, "similarity_level");
	double level = json_is_number(lv) ? json_number_value(lv) : SCREEN_CHANGE_LEVEL, sim = 0, t0 = time_mono();
	int rc = screen_wait_change(r, "wait_screen_change", p ? p->ref : NULL, timeout, level, &sim);

	if (p && p->ref) {
		frame_unref(p->ref);
		p->ref = NULL;
	}
	if (rc < 0) {
		snprintf(err, errlen, "wait_screen_change: %s", r->reason[0] ? r->reason : err_str(rc));
		return NULL;
	}
	runner__progress(r, "wait_screen_change: %s after %.2fs", rc ? "changed" : "no change", time_mono() - t0);
	return wait_result(sim, t0, !rc);
}

static json_t *c_wait_still_screen(struct runner *r, struct perl *p, json_t *msg, char *err, size_t errlen)
{
	double still = json_number_value(json_object_get(msg, "stilltime"));
	double timeout = json_number_value(json_object_get(msg, "timeout"));
	json_t *lv = json_object_get(msg, "similarity_level");
	double level = json_is_number(lv) ? json_number_value(lv) : SCREEN_STILL_LEVEL, t0 = time_mono();
	int rc;

	(void)p;
	rc = screen_wait_still(r, "wait_still_screen", still, timeout, level);
	if (rc < 0) {
		snprintf(err, errlen, "wait_still_screen: %s", r->reason[0] ? r->reason : err_str(rc));
		return NULL;
	}
	runner__progress(r, "wait_still_screen %.1fs: %s after %.2fs", still, rc ? "still" : "timed out", time_mono() - t0);
	/* screen_wait_still says no PSNR: the level it held (or missed) */
	return wait_result(rc ? level : 0, t0, !rc);
}

static json_t *c_snapshot(struct runner *r, const char *what, json_t *msg, char *err, size_t errlen)
{
	const char *name = json_string_value(json_object_get(msg, "name"));
	char verr[512];
	size_t i;

	if (!name || !*name || strlen(name) > 200) {
		snprintf(err, errlen, "%s: no snapshot name", what);
		return NULL;
	}
	for (i = 0; name[i]; i++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.", name[i])) {
			snprintf(err, errlen, "%s: snapshot name '%s' holds characters other than [A-Za-z0-9._-]", what, name);
			return NULL;
		}
	if (machine_snapshot(r, what, name, verr, sizeof(verr))) {
		snprintf(err, errlen, "%s %s: %s", what, name, verr);
		return NULL;
	}
	runner__progress(r, "%s %s", what, name);
	return perl__ret(json_integer(0));
}

static json_t *c_save_snapshot(struct runner *r, struct perl *p, json_t *msg, char *err, size_t errlen)
{
	(void)p;
	return c_snapshot(r, "savevm", msg, err, errlen);
}

static json_t *c_load_snapshot(struct runner *r, struct perl *p, json_t *msg, char *err, size_t errlen)
{
	json_t *o;
	int act;

	(void)p;
	o = c_snapshot(r, "loadvm", msg, err, errlen);
	/* as backend::qemu: the VGA screen after a snapshot is loaded */
	if (o && console_select(&r->consoles, "sut", &act, NULL, 0) == 0)
		r->console = CONSOLE_VGA;
	return o;
}

static json_t *c_write_image(struct runner *r, struct perl *p, json_t *msg, char *err, size_t errlen)
{
	json_int_t id = json_integer_value(json_object_get(msg, "frame"));
	const char *file = json_string_value(json_object_get(msg, "file"));
	const char *name;
	int rc;

	if (!file) {
		snprintf(err, errlen, "vigil_write_image: no file");
		return NULL;
	}
	name = str_starts_with(file, "testresults/") ? file + strlen("testresults/") : file;
	if (!*name || strchr(name, '/') || name[0] == '.' || !str_ends_with(name, ".png")) {
		snprintf(err, errlen, "vigil_write_image: '%s' is not a PNG in testresults/", file);
		return NULL;
	}
	if (!p || id <= (json_int_t)p->frame_base || id > (json_int_t)(p->frame_base + p->nframes)) {
		snprintf(err, errlen, "vigil_write_image: frame %lld is not kept (vigil keeps the last %d frames it named)",
			 (long long)id, PERL_KEEP_FRAMES);
		return NULL;
	}
	rc = shots_enqueue(r->shots, name, p->frames[id - (json_int_t)p->frame_base - 1]);
	if (rc) {
		snprintf(err, errlen, "vigil_write_image '%s': %s", name, err_str(rc));
		return NULL;
	}
	return perl__ret(json_integer(1));
}

/* backend_save_storage_drives {disk, filename}: one disk (testapi.pm
 * asks for each of NUMDISKS in turn). */
static json_t *c_save_storage_drives(struct runner *r, struct perl *p, json_t *msg, char *err, size_t errlen)
{
	json_int_t disk = json_integer_value(json_object_get(msg, "disk"));
	const char *name = json_string_value(json_object_get(msg, "filename"));
	char why[512];

	(void)p;
	if (disk < 1 || disk > 64 || !name) {
		snprintf(err, errlen, "save_storage_drives: no disk number or file name");
		return NULL;
	}
	if (vmctl_save_drives(r, name, (long)disk, (long)disk, why, sizeof(why))) {
		snprintf(err, errlen, "save_storage_drives: %s", why);
		return NULL;
	}
	return perl__ret(json_integer(0));
}

/* backend_switch_network {network_enabled, network_link_name}: fatal
 * (an error reply) without such a NIC, as backend::qemu. */
static json_t *c_switch_network(struct runner *r, struct perl *p, json_t *msg, char *err, size_t errlen)
{
	json_t *en = json_object_get(msg, "network_enabled");
	const char *link = json_string_value(json_object_get(msg, "network_link_name"));
	char why[256];

	(void)p;
	if (vmctl_switch_network(r, link ? link : "qanet0", !en || json_is_null(en) || json_is_true(en) ||
			      (json_is_integer(en) && json_integer_value(en)) ||
			      (json_is_string(en) && strcmp(json_string_value(en), "") && strcmp(json_string_value(en), "0")),
			      why, sizeof(why))) {
		snprintf(err, errlen, "switch_network: %s", why);
		return NULL;
	}
	return perl__ret(json_integer(0));
}

#define NEEDS_VM 1
#define NO_REPLY 2

static const struct perl_cmd {
	const char *name;
	perl_cmd_fn fn;
	int flags;
} perl_cmds[] = {
	{ "vigil_hello", c_hello, 0 },
	{ "vigil_schedule", c_schedule, 0 },
	{ "vigil_write_image", c_write_image, 0 },
	{ "backend_can_handle", c_can_handle, 0 },
	{ "set_current_test", c_set_current_test, 0 },
	{ "check_screen", c_check_screen, NEEDS_VM },
	{ "backend_send_key", c_send_key, NEEDS_VM },
	{ "backend_type_string", c_type_string, NEEDS_VM },
	{ "backend_wait_serial", c_wait_serial, NEEDS_VM },
	{ "read_serial", c_read_serial, 0 },
	{ "pause_test_execution", c_pause, 0 },
	{ "backend_last_screenshot_data", c_last_screenshot, 0 },
	{ "backend_save_snapshot", c_save_snapshot, NEEDS_VM },
	{ "backend_load_snapshot", c_load_snapshot, NEEDS_VM },
	{ "backend_get_wait_still_screen_on_here_doc_input", c_zero, 0 },
	{ "backend_set_reference_screenshot", c_set_reference, NEEDS_VM },
	{ "backend_wait_screen_change", c_wait_screen_change, NEEDS_VM },
	{ "backend_wait_still_screen", c_wait_still_screen, NEEDS_VM },
	{ "backend_save_storage_drives", c_save_storage_drives, NEEDS_VM },
	{ "backend_switch_network", c_switch_network, NEEDS_VM },
	{ "tests_done", NULL, NO_REPLY },
};

int perl_answer(struct runner *r, struct perl *p, json_t *msg, json_t **reply)
{
	const char *cmd = json_string_value(json_object_get(msg, "cmd"));
	char err[1024] = "";
	size_t i;
	int nomem = 0;

	*reply = NULL;
	/* step by command: developer mode holds the test API's commands to
	 * the backend (and screen checks) as isotovideo does */
	if (cmd && (!strncmp(cmd, "backend_", 8) || !strcmp(cmd, "check_screen")))
		runner__pause_at_perl_command(r, cmd);
	for (i = 0; cmd && i < sizeof(perl_cmds) / sizeof(perl_cmds[0]); i++) {
		if (strcmp(perl_cmds[i].name, cmd))
			continue;
		if (perl_cmds[i].flags & NO_REPLY) {
			if (p && !strcmp(cmd, "tests_done")) {
				p->done = 1;
				p->died = (int)json_integer_value(json_object_get(msg, "died")) ||
					  json_is_true(json_object_get(msg, "died"));
			}
			return 0;
		}
		if ((perl_cmds[i].flags & NEEDS_VM) && !r->vnc)
			snprintf(err, sizeof(err), "'%s' before the VM runs", cmd);
		else if (!(*reply = perl_cmds[i].fn(r, p, msg, err, sizeof(err))) && !err[0])
			nomem = 1;
		break;
	}
	if (cmd && i == sizeof(perl_cmds) / sizeof(perl_cmds[0])) {
		int known;
		*reply = perl_backend_answer(r, cmd, msg, &known, err, sizeof(err));
		nomem = known && !*reply && !err[0];
	}
	/* a known command without an answer or an error: its answer could
	 * not be made (ret): no verdict on a part */
	if (nomem) {
		char what[200];
		snprintf(what, sizeof(what), "the answer to the Perl test process's '%.100s' could not be made", cmd);
		(void)runner__results_nomem(r, ERR_NOMEM, what);
		snprintf(err, sizeof(err), "out of memory");
	}
	if (!*reply) {
		if (!err[0])
			snprintf(err, sizeof(err), "vigil does not support the command '%s' yet (docs/perl.md lists what runs)",
				 cmd ? cmd : "(none)");
		log_warn("%s: %s", cmd ? cmd : "(no cmd)", err);
		*reply = json_object();
		json_object_set_new(*reply, "vigil_error", json_string(err));
	}
	return 1;
}
