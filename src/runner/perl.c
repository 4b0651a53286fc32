/* SPDX-License-Identifier: MIT */
/* perl.c - runs an openQA Perl test distribution (main.pm): starts
 * os-autoinst's own test process (the embedded vigil_autotest.pl) on a
 * socketpair and answers its JSON-line commands from one table,
 * perl_cmds[], with the primitives the Lua test API uses (docs/perl.md).
 * Perl records the steps and writes result-*.json and test_order.json;
 * this file writes the screenshots Perl names and fills r->modules. */
#define LOG_MODULE "perl"
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <lauxlib.h>
#include <lua.h>
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
#include "runner/devmode.h"
#include "runner/keys.h"
#include "runner/perl.h"
#include "runner/runner_int.h"
#include "runner/screen.h"
#include "runner/shots.h"
#include "runner/testapi.h"
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

/* One message from the test process: no image travels, so 1 MiB is ample. */
#define LIMIT_PERL_MSG (1u << 20)
/* os-autoinst's test API interface this bootstrap speaks (4.6, Debian 12). */
#define PERL_INTERFACE 34
#define PERL_FPS 24
#define PERL_POLL_MS 200
#define PERL_EXIT_GRACE_S 10.0
#define PERL_KEEP_FRAMES 32

/* scripts/embed-perl's table of src/runner/perl/, ended by a NULL name. */
struct perl_file {
	const char *name; /* "vigil_autotest.pl", "lib/tinycv.pm" */
	const unsigned char *data;
	size_t len;
};
extern const struct perl_file perl_files[];

struct perl {
	int fd;               /* our end of the socketpair, -1 closed */
	pid_t pid;            /* the test process, -1 reaped */
	int status;           /* its wait status once reaped */
	char *boot_dir;       /* workdir/perl: the unpacked bootstrap */
	struct buf in;        /* bytes read, not yet a whole line */
	int scheduled;        /* vigil_schedule came: the VM runs */
	int done;             /* tests_done came */
	int died;             /* tests_done's died */
	long running;         /* r->modules index of the module running, -1 */
	long ended;           /* the module that ended, its result not said yet, -1 */
	/* The last frames named to Perl (image refs), id = frame_base +
	 * index + 1 (frame_keep). */
	struct frame *frames[PERL_KEEP_FRAMES];
	size_t nframes;
	unsigned long frame_base;
	struct frame *ref;    /* backend_set_reference_screenshot's frame, or NULL */
};

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
static json_t *ret(json_t *v)
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

static void frames_release(struct perl *p)
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

/* The Lua-raising primitives, run under lua_pcall on the runner's state
 * (phase 1 of docs/perl.md: their errors become vigil_error). */
struct lcall {
	struct runner *r;
	const char *s;
	size_t len;
	double num;
	int flag;
	uint32_t syms[KEYS_MAX_COMBO];
	size_t nsyms;
	int found;
	char *out;
};

static int lc_keys(lua_State *L)
{
	struct lcall *c = lua_touserdata(L, 1);

	testapi_check_abort(L, c->r);
	testapi_send_keysyms(L, c->r, c->syms, c->nsyms, 0);
	return 0;
}

static int lc_type(lua_State *L)
{
	struct lcall *c = lua_touserdata(L, 1);

	testapi_check_abort(L, c->r);
	testapi_type(L, c->r, c->s, c->len, c->num, 0);
	return 0;
}

static int lc_serial(lua_State *L)
{
	struct lcall *c = lua_touserdata(L, 1);
	char what[300];

	testapi_check_abort(L, c->r);
	snprintf(what, sizeof(what), "wait_serial '%.200s'", c->s);
	c->found = testapi_serial_wait(L, c->r, what, c->s, c->flag, c->num);
	if (c->found) {
		size_t n;
		const char *s = lua_tolstring(L, -1, &n);
		c->out = malloc(n + 1);
		if (c->out) {
			memcpy(c->out, s, n);
			c->out[n] = '\0';
			c->len = n;
		}
	}
	return 0;
}

static int lcall(struct runner *r, lua_CFunction f, struct lcall *c, char *err, size_t errlen)
{
	lua_State *L = r->L;

	c->r = r;
	lua_pushcfunction(L, f);
	lua_pushlightuserdata(L, c);
	if (lua_pcall(L, 1, 0, 0) != LUA_OK) {
		const char *msg = lua_tostring(L, -1);
		snprintf(err, errlen, "%s", msg ? msg : "error");
		lua_pop(L, 1);
		return ERR_IO;
	}
	return 0;
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
	return ret(json_integer(1));
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
		return ret(json_integer(1));
	runner__progress(r, "schedule loaded by the test process, starting the VM");
	rc = runner__start_vm(r, err, errlen);
	if (rc) {
		char why[900];
		snprintf(why, sizeof(why), "%s", err);
		runner__vm_dead(r);
		runner__abort(r, JOB_INCOMPLETE, "cannot start the VM: %s", why);
		snprintf(err, errlen, "cannot start the VM: %s", why);
		return NULL;
	}
	p->scheduled = 1;
	return ret(json_integer(1));
}

static json_t *c_can_handle(struct runner *r, struct perl *p, json_t *msg, char *err, size_t errlen)
{
	const char *f = json_string_value(json_object_get(msg, "function"));
	json_t *yes;

	(void)r, (void)p, (void)err, (void)errlen;
	if (!f || strcmp(f, "snapshots"))
		return ret(json_integer(0));
	/* backend::qemu answers with a hash */
	yes = json_object();
	json_object_set_new(yes, "ret", json_integer(1));
	return ret(yes);
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
static void say_ended(struct runner *r, struct perl *p)
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

	if (!name) {
		if (p && p->running >= 0) {
			r->modules[p->running].end = time_mono();
			p->ended = p->running;
			p->running = -1;
		}
		perl_read_vars(r);
		return ret(json_integer(1));
	}
	if (p)
		say_ended(r, p);
	if (r->nmodules && !strcmp(r->modules[r->nmodules - 1].name, name)) {
		/* the same module again: its post_fail_hook */
		m = &r->modules[r->nmodules - 1];
		if (p)
			p->running = (long)r->nmodules - 1;
		runner__progress(r, "%s", full ? full : name);
		return ret(json_integer(1));
	}
	grown = realloc(r->modules, (r->nmodules + 1) * sizeof(*r->modules));
	if (!grown) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	r->modules = grown;
	m = &r->modules[r->nmodules];
	memset(m, 0, sizeof(*m));
	m->name = str_dup(name);
	m->script = str_dup(full ? full : name);
	m->start = time_mono();
	m->result = MODULE_NONE;
	r->cur = r->nmodules++;
	if (p)
		p->running = (long)r->cur;
	/* isotovideo clears the backend's serial buffer here */
	r->serial_offset = r->serial ? serial_len(r->serial) : 0;
	runner__progress(r, "starting module");
	devmode_at_module(r, m); /* PAUSE_AT: the reply waits while paused */
	return ret(json_integer(1));
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
		return ret(o);
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
	return ret(o);
}

static json_t *c_send_key(struct runner *r, struct perl *p, json_t *msg, char *err, size_t errlen)
{
	const char *key = json_string_value(json_object_get(msg, "key"));
	struct lcall c = { 0 };
	char kerr[160];

	(void)p;
	if (!key || keys_parse(key, c.syms, &c.nsyms, kerr, sizeof(kerr))) {
		snprintf(err, errlen, "send_key '%s': %s", key ? key : "", key ? kerr : "no key");
		return NULL;
	}
	if (lcall(r, lc_keys, &c, err, errlen))
		return NULL;
	runner__progress(r, "send_key %s", key);
	return ret(json_integer(0));
}

static json_t *c_type_string(struct runner *r, struct perl *p, json_t *msg, char *err, size_t errlen)
{
	json_t *t = json_object_get(msg, "text");
	double t0 = time_mono();
	double mi = json_number_value(json_object_get(msg, "max_interval"));
	struct lcall c = { 0 };

	(void)p;
	if (!json_is_string(t)) {
		snprintf(err, errlen, "type_string: no text");
		return NULL;
	}
	c.s = json_string_value(t);
	c.len = json_string_length(t);
	/* as testapi.c's type_interval: slower for a small max_interval */
	c.num = r->typing_interval + (mi > 0 && mi < 250 ? 1.0 / sqrt(mi) : 0);
	if (lcall(r, lc_type, &c, err, errlen))
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
	return ret(json_integer(0));
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
	struct lcall c = { 0 };
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
	c.s = b.data;
	c.num = json_number_value(json_object_get(msg, "timeout"));
	rc = lcall(r, lc_serial, &c, err, errlen);
	if (!rc)
		runner__progress(r, "wait_serial '%.200s': %s in %.2fs", b.data, c.found ? "matched" : "no match",
				 time_mono() - t0);
	buf_release(&b);
	if (rc)
		return NULL;
	o = json_object();
	results_set(&brc, o, "matched", json_integer(c.found ? 1 : 0));
	results_set(&brc, o, "string", c.out || !c.found ? bytes_json(c.out ? c.out : "", c.len) : NULL);
	free(c.out);
	if (brc) {
		json_decref(o);
		return NULL;
	}
	return ret(o);
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
	return ret(json_integer(0));
}

static json_t *c_pause(struct runner *r, struct perl *p, json_t *msg, char *err, size_t errlen)
{
	const char *why = json_string_value(json_object_get(msg, "reason"));
	json_t *f = json_object_get(msg, "due_to_failure");

	(void)p, (void)err, (void)errlen;
	/* autotest's pause_on_failure: held while developer mode pauses on
	 * failures (PAUSE_ON_FAILURE); the failure stands after the resume */
	if (json_is_true(f) || json_integer_value(f))
		(void)devmode_on_failure(r, why ? why : "test died");
	else
		log_info("the test asks to pause (%s): only failures pause a Perl module, going on",
			 why ? why : "no reason given");
	return ret(json_integer(1));
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
	return ret(o);
}

static json_t *c_set_reference(struct runner *r, struct perl *p, json_t *msg, char *err, size_t errlen)
{
	(void)msg, (void)err, (void)errlen;
	if (p) {
		if (p->ref)
			frame_unref(p->ref);
		p->ref = screen_current(r);
	}
	return ret(json_integer(0));
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
	return ret(o);
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
	if (runner__vm_snapshot(r, what, name, verr, sizeof(verr))) {
		snprintf(err, errlen, "%s %s: %s", what, name, verr);
		return NULL;
	}
	runner__progress(r, "%s %s", what, name);
	return ret(json_integer(0));
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
	return ret(json_integer(1));
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
	if (testapi_save_drives(r, name, (long)disk, (long)disk, why, sizeof(why))) {
		snprintf(err, errlen, "save_storage_drives: %s", why);
		return NULL;
	}
	return ret(json_integer(0));
}

/* backend_switch_network {network_enabled, network_link_name}: fatal
 * (an error reply) without such a NIC, as backend::qemu. */
static json_t *c_switch_network(struct runner *r, struct perl *p, json_t *msg, char *err, size_t errlen)
{
	json_t *en = json_object_get(msg, "network_enabled");
	const char *link = json_string_value(json_object_get(msg, "network_link_name"));
	char why[256];

	(void)p;
	if (testapi_switch_network(r, link ? link : "qanet0", !en || json_is_null(en) || json_is_true(en) ||
			      (json_is_integer(en) && json_integer_value(en)) ||
			      (json_is_string(en) && strcmp(json_string_value(en), "") && strcmp(json_string_value(en), "0")),
			      why, sizeof(why))) {
		snprintf(err, errlen, "switch_network: %s", why);
		return NULL;
	}
	return ret(json_integer(0));
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
		devmode_at_perl_command(r, cmd);
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

/* --- the test process ----------------------------------------------- */

/* OUT/vars.json as isotovideo leaves it for the test process. */
static int write_vars(struct runner *r, char *err, size_t errlen)
{
	const char *casedir = vars_get(&r->vars, "CASEDIR");
	char *abs = casedir ? path_abs(casedir) : NULL, *vp;
	int rc = 0;

	if (abs)
		rc = vars_set(&r->vars, "CASEDIR", abs);
	if (!rc && !vars_get(&r->vars, "PRODUCTDIR"))
		rc = vars_set(&r->vars, "PRODUCTDIR", abs ? abs : r->distri_dir);
	/* both sides read the needles vigil loaded */
	if (!rc && r->needles && r->needles->dir)
		rc = vars_set(&r->vars, "NEEDLES_DIR", r->needles->dir);
	if (!rc && !vars_get(&r->vars, "BACKEND"))
		rc = vars_set(&r->vars, "BACKEND", "qemu");
	/* backend::qemu's default, which save_storage_drives reads */
	if (!rc && !vars_get(&r->vars, "NUMDISKS"))
		rc = vars_set(&r->vars, "NUMDISKS", "1");
	free(abs);
	vp = path_join(r->out_dir, "vars.json");
	if (!rc)
		rc = vp ? vars_save(&r->vars, vp) : ERR_NOMEM;
	if (rc)
		snprintf(err, errlen, "%s: %s", vp ? vp : "vars.json", err_str(rc));
	free(vp);
	return rc;
}

/* testapi's sound checks run `snd2png WAV PNG` from PATH: vigil's own
 * (cmd/snd2png.c), BOOT/bin/snd2png, first on the test process's PATH. */
static int write_snd2png(struct perl *p, char *err, size_t errlen)
{
	char self[4096], *bin = path_join(p->boot_dir, "bin"), *sh = bin ? path_join(bin, "snd2png") : NULL;
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	struct buf b;
	int rc = sh ? file_mkdir_p(bin, 0755) : ERR_NOMEM;

	buf_init(&b, 8192);
	self[n > 0 ? n : 0] = '\0';
	if (!rc && (n <= 0 || strchr(self, '\''))) {
		snprintf(err, errlen, "cannot name vigil's own binary for snd2png");
		rc = ERR_INVALID;
	} else if (!rc && (rc = buf_printf(&b, "#!/bin/sh\nexec '%s' snd2png \"$@\"\n", self)) == 0 &&
		   (rc = file_write_all(sh, b.data, b.len)) == 0 && chmod(sh, 0755)) {
		rc = -errno;
	}
	if (rc && rc != ERR_INVALID)
		snprintf(err, errlen, "cannot write '%s': %s", sh ? sh : "snd2png", err_str(rc));
	buf_release(&b);
	free(sh);
	free(bin);
	return rc;
}

static int unpack_boot(struct runner *r, struct perl *p, char *err, size_t errlen)
{
	size_t i;
	int rc = 0;

	p->boot_dir = path_join(r->workdir, "perl");
	if (!p->boot_dir)
		return ERR_NOMEM;
	for (i = 0; perl_files[i].name && !rc; i++) {
		char *path = path_join(p->boot_dir, perl_files[i].name), *dir = path ? str_dup(path) : NULL;
		if (dir && strrchr(dir, '/'))
			*strrchr(dir, '/') = '\0';
		rc = path && dir ? file_mkdir_p(dir, 0755) : ERR_NOMEM;
		if (!rc)
			rc = file_write_all(path, perl_files[i].data, perl_files[i].len);
		if (rc)
			snprintf(err, errlen, "cannot write '%s': %s", path ? path : perl_files[i].name, err_str(rc));
		free(dir);
		free(path);
	}
	if (!rc)
		rc = write_snd2png(p, err, errlen);
	return rc;
}

/* Removes dir and everything in it (the unpacked bootstrap, Inline's
 * cache), so the work directory can go, as the worker removes its pools. */
static void remove_tree(const char *dir)
{
	int rc = dir ? file_remove_tree(dir) : 0;

	if (rc)
		log_warn("could not remove '%s': %s", dir, err_str(rc));
}

/* os-autoinst's pool directory has ulogs/ beside testresults/, and
 * parse_extra_log opens "ulogs/<file>" from the test process's cwd (OUT);
 * vigil's command server keeps uploads in testresults/ulogs (docs/cmdsrv.md).
 * OUT/ulogs links there for the run and goes afterwards (unlink_ulogs). */
static void link_ulogs(struct runner *r)
{
	char *lnk = path_join(r->out_dir, "ulogs");

	if (lnk && symlink("testresults/ulogs", lnk) && errno != EEXIST)
		log_warn("cannot link '%s' to testresults/ulogs: %s", lnk, strerror(errno));
	free(lnk);
}

static void unlink_ulogs(struct runner *r)
{
	char *lnk = path_join(r->out_dir, "ulogs");
	struct stat st;

	if (lnk && lstat(lnk, &st) == 0 && S_ISLNK(st.st_mode))
		(void)unlink(lnk);
	free(lnk);
}

extern char **environ;

static int spawn(struct runner *r, struct perl *p, char *err, size_t errlen)
{
	int sv[2], logfd, nullfd;
	char *script = path_join(p->boot_dir, "vigil_autotest.pl"), *logp = path_join(r->out_dir, "autoinst-log.txt");
	char *inline_dir = NULL, *pathv = NULL, **envp = NULL;
	size_t n = 0, i, j;
	pid_t pid;

	if (!script || !logp)
		goto nomem;
	while (environ[n])
		n++;
	envp = calloc(n + 4, sizeof(*envp));
	if (!envp || asprintf(&inline_dir, "PERL_INLINE_DIRECTORY=%s/inline", r->workdir) < 0 ||
	    asprintf(&pathv, "PATH=%s/bin:%s", p->boot_dir, getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin") < 0)
		goto nomem;
	for (i = 0, j = 0; i < n; i++)
		if (strncmp(environ[i], "PATH=", 5))
			envp[j++] = environ[i];
	envp[j++] = "ANSI_COLORS_DISABLED=1";
	envp[j++] = inline_dir;
	envp[j] = pathv;
	{
		char *idir = path_join(r->workdir, "inline");
		if (idir)
			(void)file_mkdir_p(idir, 0700);
		free(idir);
	}
	logfd = open(logp, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	nullfd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (logfd < 0 || nullfd < 0 || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)) {
		snprintf(err, errlen, "cannot start perl: %s: %s", logp, strerror(errno));
		if (logfd >= 0)
			close(logfd);
		if (nullfd >= 0)
			close(nullfd);
		free(script);
		free(logp);
		free(inline_dir);
		free(pathv);
		free(envp);
		return -errno;
	}
	pid = fork();
	if (pid == 0) {
		/* only async-signal-safe calls until exec; a process group of its
		 * own: the terminal's ^C is vigil's, which ends the test process
		 * with an EOF and SIGTERM, so it saves the module as canceled */
		setpgid(0, 0);
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (sv[1] == 3) {
			int fl = fcntl(3, F_GETFD);
			fcntl(3, F_SETFD, fl & ~FD_CLOEXEC);
		} else {
			dup2(sv[1], 3);
		}
		dup2(nullfd, 0);
		dup2(logfd, 1);
		dup2(logfd, 2);
		if (chdir(r->out_dir) != 0)
			_exit(126);
		execve("/usr/bin/perl", (char *[]){ "perl", script, "3", NULL }, envp);
		_exit(127);
	}
	close(sv[1]);
	close(logfd);
	close(nullfd);
	free(logp);
	free(inline_dir);
	free(pathv);
	free(envp);
	if (pid < 0) {
		snprintf(err, errlen, "cannot start perl %s: %s", script, strerror(errno));
		free(script);
		close(sv[0]);
		return -errno;
	}
	log_info("started the test process %d: perl %s 3 (log: autoinst-log.txt)", (int)pid, script);
	free(script);
	p->fd = sv[0];
	p->pid = pid;
	return 0;
nomem:
	free(script);
	free(logp);
	free(inline_dir);
	free(pathv);
	free(envp);
	snprintf(err, errlen, "out of memory");
	return ERR_NOMEM;
}

/* Waits up to secs for the test process to exit: 1 reaped, 0 still there. */
static int reap(struct perl *p, double secs)
{
	double until = time_mono() + secs;

	while (p->pid > 0) {
		pid_t w = waitpid(p->pid, &p->status, WNOHANG);
		if (w == p->pid || (w < 0 && errno != EINTR)) {
			p->pid = -1;
			return 1;
		}
		if (time_mono() >= until)
			return 0;
		time_sleep_ms(50);
	}
	return 1;
}

static void stop_process(struct perl *p, int gentle)
{
	if (p->fd >= 0)
		close(p->fd); /* an EOF: Perl saves the running module as canceled */
	p->fd = -1;
	if (p->pid <= 0)
		return;
	if (reap(p, gentle ? PERL_EXIT_GRACE_S : 2.0))
		return;
	kill(p->pid, SIGTERM);
	if (reap(p, 5.0))
		return;
	kill(p->pid, SIGKILL);
	reap(p, 5.0);
}

/* Perl's last error in autoinst-log.txt, for an early end's reason: the
 * lines after its last log line ("[time] [level] ..."), up to 3, joined
 * with "; ". */
static void log_tail(struct runner *r, char *out, size_t len)
{
	char *path = path_join(r->out_dir, "autoinst-log.txt");
	size_t end, start, o = 0, first = 0, i;
	int nlines = 0;
	struct buf b;

	out[0] = '\0';
	buf_init(&b, 64u << 20);
	if (path && file_read_all(path, &b) == 0 && b.len) {
		/* walk back over the trailing lines that are not log lines */
		end = b.len;
		first = b.len;
		while (end > 0 && nlines < 3) {
			while (end > 0 && (b.data[end - 1] == '\n' || b.data[end - 1] == ' '))
				end--;
			start = end;
			while (start > 0 && b.data[start - 1] != '\n')
				start--;
			if (start == end || b.data[start] == '[')
				break;
			first = start;
			end = start;
			nlines++;
		}
		for (i = first; i < b.len && o + 3 < len; i++) {
			if (b.data[i] == '\n') {
				if (i + 1 < b.len && o + 3 < len) {
					out[o++] = ';';
					out[o++] = ' ';
				}
				continue;
			}
			out[o++] = b.data[i];
		}
		while (o > 0 && (out[o - 1] == ' ' || out[o - 1] == ';'))
			o--;
		out[o] = '\0';
	}
	buf_release(&b);
	free(path);
}

/* One line from the test process: answer it. 0, or negative (malformed). */
static int handle_line(struct runner *r, struct perl *p, const char *line, size_t len)
{
	json_error_t jerr;
	json_t *msg = json_loadb(line, len, 0, &jerr), *reply = NULL;
	char *text;
	size_t off, n;
	int rc = 0;

	if (!json_is_object(msg) || !json_is_string(json_object_get(msg, "cmd"))) {
		runner__abort(r, JOB_INCOMPLETE, "the Perl test process sent a malformed message (%s): %.100s",
			      msg ? "no cmd" : jerr.text, line);
		json_decref(msg);
		return ERR_PROTO;
	}
	log_debug("<<< %s", json_string_value(json_object_get(msg, "cmd")));
	if (!perl_answer(r, p, msg, &reply)) {
		json_decref(msg);
		return 0;
	}
	if (json_object_get(msg, "json_cmd_token"))
		(void)results_set_ref(&rc, reply, "json_cmd_token", json_object_get(msg, "json_cmd_token"));
	json_decref(msg);
	text = rc ? NULL : results_dumps(reply, JSON_COMPACT);
	json_decref(reply);
	if (!text)
		return ERR_NOMEM;
	n = strlen(text);
	text[n] = '\n'; /* json_dumps's NUL becomes the line end */
	for (off = 0; off < n + 1;) {
		ssize_t w = write(p->fd, text + off, n + 1 - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			rc = ERR_CLOSED;
			break;
		}
		off += (size_t)w;
	}
	free(text);
	return rc;
}

static void loop(struct runner *r, struct perl *p)
{
	char chunk[65536];

	while (!p->done && !r->abort && !r->signal) {
		struct pollfd pfd = { .fd = p->fd, .events = POLLIN };
		ssize_t n;
		char *nl;
		int rc;

		if (runner__clock(r) >= r->deadline) {
			runner__abort(r, JOB_TIMEOUT_EXCEEDED, "MAX_JOB_TIME exceeded");
			break;
		}
		if (p->scheduled && runner__vm_dead(r))
			break;
		rc = poll(&pfd, 1, PERL_POLL_MS);
		if (rc <= 0)
			continue;
		n = read(p->fd, chunk, sizeof(chunk));
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0) {
			char tail[400], how[64];
			reap(p, 5.0);
			if (p->pid > 0)
				snprintf(how, sizeof(how), "its socket closed, still running");
			else if (WIFEXITED(p->status))
				snprintf(how, sizeof(how), "exit status %d", WEXITSTATUS(p->status));
			else
				snprintf(how, sizeof(how), "signal %d", WTERMSIG(p->status));
			log_tail(r, tail, sizeof(tail));
			runner__abort(r, JOB_INCOMPLETE, "the Perl test process ended %s (%s)%s%s",
				      p->scheduled ? "without tests_done" : "before its schedule was loaded", how,
				      tail[0] ? ": " : "", tail);
			break;
		}
		if (buf_append(&p->in, chunk, (size_t)n)) {
			runner__abort(r, JOB_INCOMPLETE, "the Perl test process sent a message over %u bytes", LIMIT_PERL_MSG);
			break;
		}
		while (!p->done && !r->abort && (nl = memchr(p->in.data, '\n', p->in.len))) {
			size_t len = (size_t)(nl - p->in.data);
			rc = handle_line(r, p, p->in.data, len);
			buf_consume(&p->in, len + 1);
			if (runner__results_nomem(r, 0, ""))
				break;
			if (rc == ERR_CLOSED) {
				runner__abort(r, JOB_INCOMPLETE, "the Perl test process closed its socket");
				break;
			}
			if (runner__results_nomem(r, rc, "an answer to the Perl test process could not be made"))
				break;
			if (rc)
				break;
		}
	}
}

void perl_run(struct runner *r)
{
	struct perl p = { .fd = -1, .pid = -1, .running = -1, .ended = -1 };
	char err[1024] = "";

	buf_init(&p.in, LIMIT_PERL_MSG);
	link_ulogs(r);
	if (write_vars(r, err, sizeof(err)) || unpack_boot(r, &p, err, sizeof(err)) || spawn(r, &p, err, sizeof(err))) {
		runner__abort(r, JOB_INCOMPLETE, "%s", err[0] ? err : "out of memory");
		goto out;
	}
	loop(r, &p);
	if (!p.done)
		log_info("stopping the test process");
	stop_process(&p, p.done);
	say_ended(r, &p);
	if (p.pid < 0 && p.done && !(WIFEXITED(p.status) && WEXITSTATUS(p.status) == 0))
		log_warn("the test process exited with status %d after tests_done", p.status);
	if (p.done && p.died && !r->abort)
		runner__abort(r, JOB_INCOMPLETE, "the Perl test process died: see autoinst-log.txt");
	if (p.done)
		perl_read_vars(r); /* run_all's last save */
	(void)runner__results_nomem(r, perl_load_results(r), "the Perl test process's results could not be read");
out:
	stop_process(&p, 0);
	frames_release(&p);
	if (p.ref)
		frame_unref(p.ref);
	buf_release(&p.in);
	remove_tree(p.boot_dir);
	free(p.boot_dir);
	unlink_ulogs(r);
	{
		char *idir = path_join(r->workdir, "inline");
		remove_tree(idir); /* Inline::Python's cache */
		free(idir);
	}
}
