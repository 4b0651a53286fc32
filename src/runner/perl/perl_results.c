/* SPDX-License-Identifier: MIT */
/* perl_results.c - after a Perl run: the module list read back from what
 * os-autoinst's test process wrote (test_order.json, result-<name>.json),
 * with the times vigil saw and parse_extra_log's tests. Reads files only;
 * the process and its RPC are perl.c's. */
#define LOG_MODULE "perl"
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "runner/perl/perl.h"
#include "runner/core/results.h"
#include "runner/core/job.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/file.h"
#include "util/limits.h"
#include "util/oom.h"
#include "util/log.h"
#include "util/path.h"
#include "util/str.h"
#include "util/time.h"
#include "util/banned.h" /* last: after every system header */

static enum module_result result_from_name(const char *s)
{
	if (!s)
		return MODULE_NONE;
	if (!strcmp(s, "ok"))
		return MODULE_OK;
	if (!strcmp(s, "fail"))
		return MODULE_FAIL;
	if (!strcmp(s, "softfail"))
		return MODULE_SOFTFAIL;
	if (!strcmp(s, "skip"))
		return MODULE_SKIP;
	return MODULE_NONE; /* canceled, unk: the job ended early */
}

/* The JSON in testresults/name: 0 with *out (NULL when the file is
 * missing or no JSON: the Perl run ended early), or ERR_NOMEM (json_load_file
 * would say "no file" then: a module's result would be lost). */
static int load(const char *testresults, const char *name, json_t **out)
{
	char *path = name ? path_join(testresults, name) : NULL;
	struct buf b;
	bool nomem = false;
	int rc;

	*out = NULL;
	if (!path)
		return ERR_NOMEM;
	buf_init(&b, LIMIT_VARS_JSON);
	rc = file_read_all(path, &b);
	free(path);
	if (rc == ERR_NOMEM) {
		buf_release(&b);
		return rc;
	}
	if (!rc && b.len)
		*out = oom_json_loadb(b.data, b.len, 0, NULL, &nomem);
	buf_release(&b);
	return nomem ? ERR_NOMEM : 0;
}

int perl_load_results(struct runner *r)
{
	json_t *order, *e;
	struct module *mods;
	size_t i, k, n;
	int rc = load(r->testresults, "test_order.json", &order);

	n = json_array_size(order);
	if (rc || !n) {
		json_decref(order);
		return rc;
	}
	mods = calloc(n, sizeof(*mods));
	if (!mods) {
		json_decref(order);
		return ERR_NOMEM;
	}
	json_array_foreach(order, i, e) {
		struct module *m = &mods[i];
		const char *name = json_string_value(json_object_get(e, "name"));
		const char *script = json_string_value(json_object_get(e, "script"));
		json_t *flags = json_object_get(e, "flags"), *res;
		char *rname = NULL;

		m->name = strdup(name ? name : "?");
		m->script = m->name ? strdup(script ? script : m->name) : NULL;
		if (!m->name || !m->script) {
			rc = ERR_NOMEM;
			break;
		}
		if (json_is_true(json_object_get(flags, "fatal")) || json_integer_value(json_object_get(flags, "fatal")))
			m->flags |= MODULE_FLAG_FATAL;
		if (json_integer_value(json_object_get(flags, "milestone")))
			m->flags |= MODULE_FLAG_MILESTONE;
		if (json_integer_value(json_object_get(flags, "ignore_failure")))
			m->flags |= MODULE_FLAG_IGNORE_FAILURE;
		if (json_integer_value(json_object_get(flags, "no_rollback")))
			m->flags |= MODULE_FLAG_NO_ROLLBACK;
		if (json_integer_value(json_object_get(flags, "always_rollback")))
			m->flags |= MODULE_FLAG_ALWAYS_ROLLBACK;
		for (k = 0; k < r->nmodules; k++)
			if (!strcmp(r->modules[k].name, m->name)) {
				m->start = r->modules[k].start;
				m->end = r->modules[k].end ? r->modules[k].end : time_mono();
			}
		if (asprintf(&rname, "result-%s.json", m->name) < 0)
			rname = NULL;
		rc = load(r->testresults, rname, &res);
		free(rname);
		if (rc)
			break;
		m->result = result_from_name(json_string_value(json_object_get(res, "result")));
		if (m->result == MODULE_FAIL)
			m->hard_fail = 1;
		/* Perl's steps, for the video index (their frametime) */
		if (json_is_array(json_object_get(res, "details")))
			m->details = json_incref(json_object_get(res, "details"));
		/* parse_extra_log's tests follow their module in results.json */
		if (json_array_size(json_object_get(res, "extra_test_results")) &&
		    results_add_extra(r->testresults, m, json_object_get(res, "extra_test_results")) == ERR_NOMEM)
			rc = ERR_NOMEM;
		json_decref(res);
		if (rc)
			break;
	}
	json_decref(order);
	if (rc) {
		/* the runner's list stays: the job ends incomplete */
		for (i = 0; i < n; i++)
			results_module_release(&mods[i]);
		free(mods);
		return rc;
	}
	for (i = 0; i < r->nmodules; i++)
		results_module_release(&r->modules[i]);
	free(r->modules);
	r->modules = mods;
	r->nmodules = n;
	return 0;
}

/* Names whose values the log does not show (os-autoinst's vars.json leaves
 * them out at the end too). */
static int is_secret(const char *key)
{
	return !strncmp(key, "_SECRET_", 8) || str_ends_with(key, "_PASSWORD");
}

void perl_read_vars(struct runner *r)
{
	char *path = r->out_dir ? path_join(r->out_dir, "vars.json") : NULL;
	json_t *root = path ? json_load_file(path, 0, NULL) : NULL, *val;
	const char *key;

	if (!path)
		return; /* no results directory (unit tests) */
	free(path);
	if (!json_is_object(root)) {
		log_warn("vars.json of the test process could not be read back: the variables it set stay unseen");
		json_decref(root);
		return;
	}
	json_object_foreach(root, key, val) {
		const char *old = vars_get(&r->vars, key);
		char *text = NULL;

		if (json_is_null(val)) {
			if (old) {
				log_info("the test removed %s", key);
				json_object_del(r->vars.obj, key);
			}
			continue;
		}
		if (!vars_valid_key(key) || json_is_object(val) || json_is_array(val))
			continue; /* nothing vigil reads: only Perl's */
		text = json_is_string(val) ? str_dup(json_string_value(val)) : json_dumps(val, JSON_ENCODE_ANY);
		if (!text) { /* a variable the test set, lost: the job ends incomplete */
			(void)runner__results_nomem(r, ERR_NOMEM, "a variable the test set could not be read back");
			break;
		}
		if (!old || strcmp(old, text)) {
			log_info("the test set %s=%s", key, is_secret(key) ? "(secret)" : text);
			if (runner__results_nomem(r, vars_set(&r->vars, key, text),
						  "a variable the test set could not be kept")) {
				free(text);
				break;
			}
		}
		free(text);
	}
	json_decref(root);
}
