/* SPDX-License-Identifier: MIT */
/* results.c - writes the results directory: per-module JSON, screenshots
 * with thumbnails, the overall results.json. Pure file output. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "runner/core/results.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/file.h"
#include "util/limits.h"
#include "util/oom.h"
#include "util/path.h"
#include "util/banned.h" /* last: after every system header */

void results_module_release(struct module *m)
{
	free(m->name);
	free(m->script);
	free(m->fail_message);
	free(m->source_artefact);
	json_decref(m->details);
	json_decref(m->extra);
	free(m->times);
}

int results_set(int *rc, json_t *o, const char *key, json_t *v)
{
	/* jansson frees v when the insertion fails (o NULL included) */
	if (json_object_set_new(o, key, v) && !*rc)
		*rc = ERR_NOMEM;
	return *rc;
}

int results_set_ref(int *rc, json_t *o, const char *key, json_t *v)
{
	if (json_object_set(o, key, v) && !*rc)
		*rc = ERR_NOMEM;
	return *rc;
}

int results_append(int *rc, json_t *a, json_t *v)
{
	if (json_array_append_new(a, v) && !*rc)
		*rc = ERR_NOMEM;
	return *rc;
}

/* A shallow copy of object o without key skip (NULL: none), whole or
 * NULL (*rc ERR_NOMEM): jansson's json_copy leaves out a key whose
 * insertion failed and answers the rest. */
static json_t *copy_without(int *rc, json_t *o, const char *skip)
{
	json_t *c = json_object(), *v;
	const char *key;
	int crc = 0;

	json_object_foreach(o, key, v)
		if (!skip || strcmp(key, skip))
			results_set_ref(&crc, c, key, v);
	if (crc || !c) {
		json_decref(c);
		if (!*rc)
			*rc = ERR_NOMEM;
		return NULL;
	}
	return c;
}

#define MAX_EXTRA_TESTS 10000

int results_add_extra(const char *testresults, struct module *m, json_t *tests)
{
	json_t *t;
	size_t i;
	int n = 0;

	if (!json_is_array(tests))
		return ERR_PROTO;
	if (!m->extra && !(m->extra = json_array()))
		return ERR_NOMEM;
	json_array_foreach(tests, i, t) {
		const char *name = json_string_value(json_object_get(t, "name"));
		const char *script = json_string_value(json_object_get(t, "script"));
		char file[300], *path;
		json_t *res, *c;
		int rc = 0;
		if (!name || strchr(name, '/') || json_array_size(m->extra) >= MAX_EXTRA_TESTS)
			continue;
		c = copy_without(&rc, t, NULL);
		if (!c)
			return rc;
		if (!script || !strcmp(script, "unk"))
			results_set(&rc, c, "script", json_string(m->script));
		snprintf(file, sizeof(file), "result-%s.json", name);
		path = path_join(testresults, file);
		res = NULL;
		if (!path) {
			rc = ERR_NOMEM;
		} else {
			/* its result decides the job's: no memory is no "unk" */
			struct buf b;
			bool nomem = false;
			buf_init(&b, LIMIT_VARS_JSON);
			if (file_read_all(path, &b) == ERR_NOMEM)
				rc = ERR_NOMEM;
			else if (b.len && !(res = oom_json_loadb(b.data, b.len, 0, NULL, &nomem)) && nomem)
				rc = ERR_NOMEM;
			buf_release(&b);
		}
		free(path);
		results_set(&rc, c, "result", json_string(json_is_string(json_object_get(res, "result")) ?
							  json_string_value(json_object_get(res, "result")) : "unk"));
		json_decref(res);
		if (rc) {
			json_decref(c);
			return rc;
		}
		if (results_append(&rc, m->extra, c))
			return rc;
		n++;
	}
	return n;
}

const char *module_result_name(enum module_result r)
{
	switch (r) {
	case MODULE_OK: return "ok";
	case MODULE_SOFTFAIL: return "softfail";
	case MODULE_FAIL: return "fail";
	case MODULE_SKIP: return "skip";
	case MODULE_NONE: break;
	}
	return "none";
}

const char *job_result_name(enum job_result r)
{
	switch (r) {
	case JOB_PASSED: return "passed";
	case JOB_SOFTFAILED: return "softfailed";
	case JOB_FAILED: return "failed";
	case JOB_INCOMPLETE: return "incomplete";
	case JOB_TIMEOUT_EXCEEDED: return "timeout_exceeded";
	}
	return "none";
}

json_t *module_flags_json(unsigned flags)
{
	json_t *o = json_object();
	int rc = 0;

	if (flags & MODULE_FLAG_FATAL)
		results_set(&rc, o, "fatal", json_integer(1));
	if (flags & MODULE_FLAG_MILESTONE)
		results_set(&rc, o, "milestone", json_integer(1));
	if (flags & MODULE_FLAG_IGNORE_FAILURE)
		results_set(&rc, o, "ignore_failure", json_integer(1));
	if (flags & MODULE_FLAG_NO_ROLLBACK)
		results_set(&rc, o, "no_rollback", json_integer(1));
	if (flags & MODULE_FLAG_ALWAYS_ROLLBACK)
		results_set(&rc, o, "always_rollback", json_integer(1));
	if (rc) {
		json_decref(o);
		return NULL;
	}
	return o;
}

char *results_next_name(struct module *m, const char *ext)
{
	char *s;
	size_t len = strlen(m->name) + strlen(ext) + 24;
	s = malloc(len);
	if (!s)
		return NULL;
	snprintf(s, len, "%s-%d.%s", m->name, ++m->nfiles, ext);
	return s;
}

int results_save_image(const char *testresults, const char *name, const struct image *img)
{
	char *path = path_join(testresults, name), *tdir = NULL, *tpath = NULL;
	struct image *thumb = NULL;
	int rc;

	if (!path)
		return ERR_NOMEM;
	rc = image_save_png(img, path);
	if (rc)
		goto out;
	tdir = path_join(testresults, ".thumbs");
	if (!tdir || file_mkdir_p(tdir, 0755)) {
		rc = ERR_IO;
		goto out;
	}
	tpath = path_join(tdir, name);
	thumb = image_thumbnail(img, 160);
	if (!tpath || !thumb) {
		rc = ERR_NOMEM;
		goto out;
	}
	rc = image_save_png(thumb, tpath);
out:
	image_free(thumb);
	free(tpath);
	free(tdir);
	free(path);
	return rc;
}

int results_save_text(const char *testresults, const char *name, const char *text)
{
	char *path = path_join(testresults, name);
	int rc;
	if (!path)
		return ERR_NOMEM;
	rc = file_write_all(path, text, strlen(text));
	free(path);
	return rc;
}

/* Centiseconds of a video time, rounded down as the frametimes are. */
static long long frametime_cs(int64_t ms)
{
	return ms > 0 ? (long long)ms / 10 : 0;
}

static json_t *frametime_str(int64_t ms)
{
	char buf[32];
	long long cs = frametime_cs(ms);

	snprintf(buf, sizeof(buf), "%lld.%02lld", cs / 100, cs % 100);
	return json_string(buf);
}

json_t *results_frametime_json(int64_t ms, int64_t end_ms)
{
	json_t *ft = json_array();
	int rc = 0;

	results_append(&rc, ft, frametime_str(ms));
	if (results_append(&rc, ft, frametime_str(end_ms))) {
		json_decref(ft);
		return NULL;
	}
	return ft;
}

int results_add_step_time(struct module *m, size_t step, int64_t ms)
{
	struct step_time *grown = realloc(m->times, (m->ntimes + 1) * sizeof(*m->times));

	if (!grown)
		return ERR_NOMEM;
	m->times = grown;
	m->times[m->ntimes].step = step;
	m->times[m->ntimes].ms = ms;
	m->ntimes++;
	return 0;
}

/* json_dump_callback's sink: the text in a buf, the first failure kept.
 * jansson's own json_dumps is not used: when an allocation fails while it
 * writes an object's key, it goes on without the key (its return value
 * is ignored there) and answers text with a part missing, which the unit
 * test test_nomem_results found ("result": ..., ": 0, ...). */
#define RESULTS_JSON_MAX ((size_t)1 << 30) /* a results file's text: 1 GiB */

struct dump_sink {
	struct buf b;
	int rc;
};

static int dump_to_buf(const char *data, size_t len, void *ctx)
{
	struct dump_sink *s = ctx;

	if (!s->rc)
		s->rc = buf_append(&s->b, data, len);
	return s->rc ? -1 : 0;
}

char *results_dumps(const json_t *obj, size_t flags)
{
	struct dump_sink s = { .rc = 0 };

	buf_init(&s.b, RESULTS_JSON_MAX);
	if (obj && json_dump_callback(obj, dump_to_buf, &s, flags) == 0 && !s.rc)
		return buf_steal(&s.b);
	buf_release(&s.b);
	return NULL;
}

static int write_json(const char *dir, const char *name, json_t *obj)
{
	char *path = obj ? path_join(dir, name) : NULL;
	char *text = path ? results_dumps(obj, JSON_INDENT(3) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(9)) : NULL;
	int rc = ERR_NOMEM;

	if (text)
		rc = file_write_all(path, text, strlen(text));
	free(text);
	free(path);
	return rc;
}

int results_write_module(const char *testresults, const struct module *m)
{
	json_t *o = json_object();
	char name[300];
	double t = m->end > m->start ? m->end - m->start : 0;
	int rc = 0;

	results_set(&rc, o, "result", json_string(module_result_name(m->result)));
	results_set(&rc, o, "dents", json_integer(m->dents));
	results_set(&rc, o, "execution_time", json_integer((json_int_t)(t + 0.5)));
	results_set(&rc, o, "details", m->details ? json_incref(m->details) : json_array());
	if (m->needs_review)
		results_set(&rc, o, "needs_review", json_true());
	if (m->fail_message)
		results_set(&rc, o, "fail_message", json_string(m->fail_message));
	if (m->source_artefact) {
		json_t *src = json_pack("{s:s,s:s}", "file", m->script, "artefact", m->source_artefact);
		if (src && m->fail_line > 0)
			results_set(&rc, src, "fail_line", json_integer(m->fail_line));
		results_set(&rc, o, "source", src);
	}
	if (m->extra) { /* os-autoinst's shape: without the result */
		json_t *list = json_array(), *x;
		size_t i;
		json_array_foreach(m->extra, i, x)
			results_append(&rc, list, copy_without(&rc, x, "result"));
		results_set(&rc, o, "extra_test_results", list);
	}
	snprintf(name, sizeof(name), "result-%s.json", m->name);
	if (!rc)
		rc = write_json(testresults, name, o);
	json_decref(o);
	return rc;
}

enum job_result results_job_from_modules(const struct module *mods, size_t n, int *needs_review)
{
	int fail = 0, soft = 0, all_review = 1;
	size_t i;

	for (i = 0; i < n; i++) {
		const struct module *m = &mods[i];
		if (m->result == MODULE_FAIL) {
			if (m->flags & MODULE_FLAG_IGNORE_FAILURE) {
				soft = 1;
				continue;
			}
			fail = 1;
			if (!m->needs_review || m->hard_fail)
				all_review = 0;
		} else if (m->result == MODULE_SOFTFAIL) {
			soft = 1;
		}
		if (m->extra) { /* openQA counts them as modules of the job */
			json_t *t;
			size_t j;
			json_array_foreach(m->extra, j, t) {
				const char *res = json_string_value(json_object_get(t, "result"));
				if (res && !strcmp(res, "fail")) {
					fail = 1;
					all_review = 0;
				} else if (res && !strcmp(res, "softfail")) {
					soft = 1;
				}
			}
		}
	}
	*needs_review = fail && all_review;
	if (fail)
		return JOB_FAILED;
	return soft ? JOB_SOFTFAILED : JOB_PASSED;
}

static int write_job(const char *testresults, enum job_result r, int needs_review, const char *reason,
		     const struct module *mods, size_t n, double elapsed, int with_order)
{
	json_t *o = json_object(), *list = json_array(), *order = json_array();
	size_t i;
	int rc = 0;

	results_set(&rc, o, "result", json_string(job_result_name(r)));
	results_set(&rc, o, "needs_review", json_boolean(needs_review));
	if (reason)
		results_set(&rc, o, "reason", json_string(reason));
	results_set(&rc, o, "elapsed", json_real((double)(long)(elapsed * 1000) / 1000));
	for (i = 0; i < n && !rc; i++) {
		const struct module *m = &mods[i];
		json_t *e = json_object(), *t = json_object();
		double et = m->end > m->start ? m->end - m->start : 0;
		results_set(&rc, e, "name", json_string(m->name));
		results_set(&rc, e, "result", json_string(module_result_name(m->result)));
		results_set(&rc, e, "flags", module_flags_json(m->flags));
		results_set(&rc, e, "execution_time", json_real((double)(long)(et * 1000) / 1000));
		if (m->needs_review)
			results_set(&rc, e, "needs_review", json_true());
		results_append(&rc, list, e);
		if (m->extra) { /* parse_extra_log's tests follow their module */
			json_t *x;
			size_t j;
			json_array_foreach(m->extra, j, x)
				results_append(&rc, list, json_pack("{s:O,s:O,s:{},s:f}", "name", json_object_get(x, "name"),
								    "result", json_object_get(x, "result"), "flags",
								    "execution_time", 0.0));
		}
		results_set(&rc, t, "name", json_string(m->name));
		results_set(&rc, t, "category", json_string("tests"));
		results_set(&rc, t, "full_name", json_string(m->name));
		results_set(&rc, t, "script", json_string(m->script));
		results_set(&rc, t, "flags", module_flags_json(m->flags));
		results_append(&rc, order, t);
	}
	results_set(&rc, o, "modules", list);
	/* results.json last: there, it says the job's end whole */
	if (!rc && with_order)
		rc = write_json(testresults, "test_order.json", order);
	if (!rc)
		rc = write_json(testresults, "results.json", o);
	json_decref(o);
	json_decref(order);
	return rc;
}

int results_write_job(const char *testresults, enum job_result r, int needs_review,
		      const char *reason, const struct module *mods, size_t n, double elapsed)
{
	return write_job(testresults, r, needs_review, reason, mods, n, elapsed, 1);
}

int results_write_summary(const char *testresults, enum job_result r, int needs_review,
			  const char *reason, const struct module *mods, size_t n, double elapsed)
{
	return write_job(testresults, r, needs_review, reason, mods, n, elapsed, 0);
}

int results_write_video_index(const char *testresults, const struct module *mods, size_t n)
{
	json_t *index = json_array();
	size_t i, k;
	int rc = 0;

	for (i = 0; i < n; i++) {
		json_t *pd;

		/* A Perl module's steps carry their own video time: basetest's
		 * frametime, [start, end] in seconds (vigil's frames at 24/s). */
		json_array_foreach(mods[i].ntimes ? NULL : mods[i].details, k, pd) {
			const char *t = json_string_value(json_array_get(json_object_get(pd, "frametime"), 0));
			json_t *e;
			if (!t)
				continue;
			e = json_object();
			results_set(&rc, e, "module", json_string(mods[i].name));
			results_set(&rc, e, "step", json_integer((json_int_t)k + 1));
			results_set(&rc, e, "time", json_real(strtod(t, NULL)));
			if (json_object_get(pd, "screenshot"))
				results_set_ref(&rc, e, "screenshot", json_object_get(pd, "screenshot"));
			results_append(&rc, index, e);
		}
		for (k = 0; k < mods[i].ntimes; k++) {
			const struct step_time *st = &mods[i].times[k];
			json_t *d = json_array_get(mods[i].details, st->step), *e = json_object();

			results_set(&rc, e, "module", json_string(mods[i].name));
			results_set(&rc, e, "step", json_integer((json_int_t)st->step + 1));
			results_set(&rc, e, "time", json_real((double)frametime_cs(st->ms) / 100.0));
			if (json_object_get(d, "screenshot"))
				results_set_ref(&rc, e, "screenshot", json_object_get(d, "screenshot"));
			results_append(&rc, index, e);
		}
	}
	if (!rc)
		rc = write_json(testresults, "video_index.json", index);
	json_decref(index);
	return rc;
}

/* A needle name usable in an artefact name (the server's [A-Za-z0-9._+@-]). */
static int needle_name_ok(const char *name)
{
	const char *p;

	if (!name || !*name || name[0] == '.' || strlen(name) > 200)
		return 0;
	for (p = name; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '.' ||
		      *p == '_' || *p == '-' || *p == '+' || *p == '@'))
			return 0;
	return 1;
}

/* Copy src to testresults/needle-<name>.<ext> unless it is there already. */
static int copy_needle_file(const char *testresults, const char *name, const char *ext, const char *src,
			    size_t limit)
{
	char rel[256];
	char *dest;
	struct buf b;
	int rc;

	snprintf(rel, sizeof(rel), "needle-%s.%s", name, ext);
	dest = path_join(testresults, rel);
	if (!dest)
		return ERR_NOMEM;
	if (file_exists(dest)) {
		free(dest);
		return 0;
	}
	buf_init(&b, limit);
	rc = file_read_all(src, &b);
	if (!rc)
		rc = file_write_all(dest, b.data, b.len);
	buf_release(&b);
	free(dest);
	return rc;
}

int results_save_needle(const char *testresults, const char *name, const char *json_path, const char *png_path)
{
	int rc = 0;

	if (!needle_name_ok(name))
		return ERR_INVALID;
	if (json_path)
		rc = copy_needle_file(testresults, name, "json", json_path, LIMIT_NEEDLE_JSON);
	if (!rc && png_path)
		rc = copy_needle_file(testresults, name, "png", png_path, LIMIT_PNG_FILE);
	return rc;
}
