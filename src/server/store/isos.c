/* SPDX-License-Identifier: MIT */
/* isos.c - openQA's build trigger (ScheduledProducts.pm _generate_jobs):
 * matching products (exact version, else a '*' glob), their job templates
 * filtered by TEST/MACHINE, settings product < machine < test suite < job
 * template < POSTed parameters, WORKER_CLASS united, then one job each. */
#define LOG_MODULE "isos"
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "server/db/db.h"
#include "server/store/deps.h"
#include "server/store/isos.h"
#include "server/store/jbuild.h"
#include "server/store/jobs.h"
#include "util/err.h"
#include "util/log.h"
#include "util/oom.h"
#include "util/str.h"
#include "util/banned.h" /* last: after every system header */

static const char *pget(const json_t *params, const char *key)
{
	return json_string_value(json_object_get(params, key));
}

/* True when the comma-separated list is NULL/empty or holds name. */
static bool list_has(const char *list, const char *name)
{
	const char *p = list;

	if (!list || !*list)
		return true;
	while (*p) {
		size_t n = strcspn(p, ",");
		if (n == strlen(name) && !strncmp(p, name, n))
			return true;
		p += n + (p[n] == ',');
	}
	return false;
}

/* Product ids matching the parameters: exact version first, else globbed. */
static json_t *find_products(struct db *db, const json_t *params, struct jbuild *b)
{
	json_t *ids = jbuild_take(b, json_array(), "products");
	struct db_stmt *st;
	int pass;

	for (pass = 0; ids && pass < 2 && json_array_size(ids) == 0; pass++) {
		if (db_prepare(db, &st, "SELECT id, version FROM products WHERE lower(distri) = lower(?) AND flavor = ?"
			       " AND arch = ? ORDER BY id", "ttt", pget(params, "DISTRI"), pget(params, "FLAVOR"),
			       pget(params, "ARCH")))
			break;
		while (db_step(st) == 1) {
			const char *v = db_col_text(st, 1);
			bool ok = pass == 0 ? !strcmp(v, pget(params, "VERSION"))
					    : strchr(v, '*') && fnmatch(v, pget(params, "VERSION"), 0) == 0;
			if (ok) /* a product lost: its jobs not made */
				jbuild_append(b, ids, json_integer(db_col_int(st, 0)));
		}
		db_finalize(st);
	}
	return ids;
}

/* One job for one template row; appends its id to ids and
 * {id, test, machine, name, START_AFTER_TEST, START_DIRECTLY_AFTER_TEST,
 * PARALLEL_WITH} to made (for the dependencies). */
static int make_job(struct db *db, const json_t *params, int64_t sp_id, int64_t product_id, struct db_stmt *t,
		    struct jbuild *b, json_t *ids, json_t *made, char *err, size_t errlen)
{
	json_t *s = json_object(), *post = json_object();
	const char *key, *prio_s = pget(params, "_PRIORITY");
	json_t *v;
	int64_t job_id, prio;
	long p;
	int rc = s && post ? 0 : ERR_NOMEM;

	if (rc || (rc = jobs_table_settings(db, "product", product_id, s)) ||
	    (rc = jobs_table_settings(db, "machine", db_col_int(t, 3), s)) ||
	    (rc = jobs_table_settings(db, "test_suite", db_col_int(t, 5), s)) ||
	    (rc = jobs_template_settings(db, db_col_int(t, 0), s)))
		goto out;
	/* The POSTed parameters win; TEST and MACHINE were filters, '_' ones are controls. */
	/* Every insertion checked: a job without one of its settings is not made. */
	json_object_foreach((json_t *)params, key, v)
		if (key[0] != '_' && strcmp(key, "TEST") && strcmp(key, "MACHINE") && json_object_set(post, key, v))
			rc = ERR_NOMEM;
	if (rc || (rc = jobs_settings_merge(s, post)))
		goto out;
	if (json_object_set_new(s, "TEST", json_string(db_col_text(t, 6))) ||
	    json_object_set_new(s, "MACHINE", json_string(db_col_text(t, 4))) ||
	    (!json_object_get(s, "BACKEND") && json_object_set_new(s, "BACKEND", json_string(db_col_text(t, 8)))) ||
	    (*db_col_text(t, 7) && json_object_set_new(s, "JOB_TEMPLATE_NAME", json_string(db_col_text(t, 7))))) {
		rc = ERR_NOMEM;
		goto out;
	}
	if ((rc = jobs_settings_default_class(s)) || (rc = jobs_settings_expand(s, err, errlen)))
		goto out;
	prio = db_col_null(t, 1) ? db_col_int(t, 9) : db_col_int(t, 1);
	if (prio_s && !str_to_long(prio_s, &p))
		prio = p;
	rc = jobs_insert(db, s, prio, db_col_int(t, 2), sp_id, &job_id);
	if (!rc) {
		jbuild_append(b, ids, json_integer(job_id));
		jbuild_append(b, made, json_pack("{s:I,s:O,s:O,s:O?,s:O?,s:O?,s:O?}", "id", (json_int_t)job_id,
						      "test", json_object_get(s, "TEST"), "machine", json_object_get(s, "MACHINE"),
						      "name", json_object_get(s, "JOB_TEMPLATE_NAME"), "START_AFTER_TEST",
						      json_object_get(s, "START_AFTER_TEST"), "START_DIRECTLY_AFTER_TEST",
						      json_object_get(s, "START_DIRECTLY_AFTER_TEST"), "PARALLEL_WITH",
						      json_object_get(s, "PARALLEL_WITH")));
		if (jbuild_failed(b))
			rc = ERR_NOMEM; /* its dependencies or its id would be lost */
	}
out:
	json_decref(s);
	json_decref(post);
	return rc;
}

/* The job in made whose TEST (or job template name) and MACHINE are
 * test and machine; 0 when none. */
static int64_t find_made(const json_t *made, const char *test, const char *machine)
{
	size_t i;
	json_t *m;

	json_array_foreach(made, i, m) {
		const char *t = json_string_value(json_object_get(m, "test"));
		const char *n = json_string_value(json_object_get(m, "name"));
		const char *mach = json_string_value(json_object_get(m, "machine"));
		if (((t && !strcmp(t, test)) || (n && !strcmp(n, test))) && mach && !strcmp(mach, machine))
			return json_integer_value(json_object_get(m, "id"));
	}
	return 0;
}

/* START_AFTER_TEST (and START_DIRECTLY_AFTER_TEST, kept as its own type
 * but only ordered, not pinned to one worker) and PARALLEL_WITH (the job
 * named is the parallel parent) of each job made: edges to
 * the jobs of this scheduled product they name ("test[@machine]",
 * comma-separated); what cannot be resolved goes to failed as openQA
 * reports it. */
static int link_chained(struct db *db, const json_t *made, json_t *failed, struct jbuild *b)
{
	static const struct { const char *key; int type; } kinds[] = {
		{ "START_AFTER_TEST", DEPS_CHAINED },
		{ "START_DIRECTLY_AFTER_TEST", DEPS_DIRECTLY_CHAINED },
		{ "PARALLEL_WITH", DEPS_PARALLEL },
	};
	size_t i, k;
	json_t *m;

	json_array_foreach(made, i, m) {
		const char *machine = json_string_value(json_object_get(m, "machine"));
		int64_t child = json_integer_value(json_object_get(m, "id"));
		json_t *errors = jbuild_take(b, json_array(), "error_messages");

		if (!errors)
			return ERR_NOMEM;
		for (k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
			const char *p = json_string_value(json_object_get(m, kinds[k].key));
			while (p && *p) {
				size_t n = strcspn(p, ",");
				char test[DEPS_MAX_ENTRY], mach[DEPS_MAX_ENTRY], msg[256], text[2 * DEPS_MAX_ENTRY + 128];
				int64_t parent;
				int rc;
				if (n && !deps_parse_entry(p, n, machine, test, mach)) {
					parent = find_made(made, test, mach);
					rc = parent ? deps_add(db, parent, child, kinds[k].type, msg, sizeof(msg)) : ERR_NOT_FOUND;
					if (rc == ERR_NOT_FOUND || rc == ERR_INVALID) {
						snprintf(text, sizeof(text), "%s=%s@%s not found - check for dependency typos and"
							 " dependency cycles", kinds[k].key, test, mach);
						jbuild_append(b, errors, json_string(text));
					} else if (rc) {
						json_decref(errors);
						return rc;
					}
				} else if (n) {
					snprintf(text, sizeof(text), "%s: malformed entry '%.*s'", kinds[k].key,
						 (int)(n < 200 ? n : 200), p);
					jbuild_append(b, errors, json_string(text));
				}
				p += n + (p[n] == ',');
			}
		}
		if (json_array_size(errors))
			jbuild_append(b, failed, json_pack("{s:I,s:o}", "job_id", (json_int_t)child, "error_messages",
							      errors));
		else
			json_decref(errors);
	}
	return jbuild_failed(b) ? ERR_NOMEM : 0;
}

int isos_schedule(struct db *db, const json_t *params, json_t **resp)
{
	struct jbuild b = JBUILD_INIT; /* what is lost would change what is made: nothing is */
	json_t *products = NULL, *ids = jbuild_take(&b, json_array(), "ids"), *results;
	json_t *made = jbuild_take(&b, json_array(), "made"), *failed = jbuild_take(&b, json_array(), "failed");
	char now[DB_TIME_LEN], *settings_text = json_dumps(params, JSON_COMPACT | JSON_SORT_KEYS), *results_text;
	char why[512] = "";
	int64_t sp_id = 0;
	size_t i, templates = 0;
	int rc, status = 200;

	*resp = NULL;
	db_now(now);
	if (!settings_text || jbuild_failed(&b))
		goto nomem;
	/* Serial: the products and templates read decide the jobs written. */
	if (db_begin_serial(db))
		goto fail;
	rc = db_exec(db, "INSERT INTO scheduled_products (distri, version, flavor, arch, build, iso, status, settings,"
		     " t_created, t_updated) VALUES (?, ?, ?, ?, ?, ?, 'scheduling', ?, ?, ?)", "ttttttttt",
		     pget(params, "DISTRI"), pget(params, "VERSION"), pget(params, "FLAVOR"), pget(params, "ARCH"),
		     pget(params, "BUILD"), pget(params, "ISO"), settings_text, now, now);
	if (rc < 0)
		goto fail_tx;
	sp_id = db_last_id(db);
	products = find_products(db, params, &b);
	if (jbuild_failed(&b))
		goto nomem_tx;
	for (i = 0; i < json_array_size(products); i++) {
		int64_t pid = json_integer_value(json_array_get(products, i));
		struct db_stmt *t;
		rc = db_prepare(db, &t,
				"SELECT jt.id, jt.prio, jt.group_id, m.id, m.name, ts.id, ts.name, jt.name, m.backend,"
				" g.default_priority FROM job_templates jt JOIN machines m ON m.id = jt.machine_id"
				" JOIN test_suites ts ON ts.id = jt.test_suite_id JOIN job_groups g ON g.id = jt.group_id"
				" WHERE jt.product_id = ? ORDER BY ts.name, m.name, jt.id", "i", pid);
		if (rc)
			goto fail_tx;
		while ((rc = db_step(t)) == 1) {
			const char *test = *db_col_text(t, 7) ? db_col_text(t, 7) : db_col_text(t, 6);
			templates++;
			if (!list_has(pget(params, "TEST"), test) || !list_has(pget(params, "MACHINE"), db_col_text(t, 4)))
				continue;
			if ((rc = make_job(db, params, sp_id, pid, t, &b, ids, made, why, sizeof(why))))
				break;
		}
		db_finalize(t);
		if (rc == ERR_TOO_BIG)
			goto refused;
		if (rc == ERR_NOMEM)
			goto nomem_tx;
		if (rc < 0)
			goto fail_tx;
	}
	if ((rc = link_chained(db, made, failed, &b)) == ERR_NOMEM)
		goto nomem_tx;
	if (rc)
		goto fail_tx;
	results = json_pack("{s:O,s:O}", "successful_job_ids", ids, "failed_job_info", failed);
	results_text = results ? json_dumps(results, JSON_COMPACT) : NULL;
	json_decref(results);
	if (!results_text)
		goto nomem_tx; /* stored without its results */
	rc = db_exec(db, "UPDATE scheduled_products SET status = 'scheduled', results = ?, t_updated = ? WHERE id = ?",
		     "tti", results_text, now, sp_id);
	free(results_text);
	if (rc < 0)
		goto fail_tx;
	/* The answer before the commit: one that cannot be made keeps no jobs
	 * (a client told 503 posts again). */
	if (json_array_size(products) == 0) {
		*resp = json_pack("{s:I,s:s+++++,s:i,s:[],s:{}}", "scheduled_product_id", (json_int_t)sp_id, "error",
				  "no products found for ", pget(params, "DISTRI"), "-", pget(params, "FLAVOR"), "-",
				  pget(params, "ARCH"), "count", 0, "ids", "failed");
	} else if (templates == 0) {
		status = 404;
		*resp = json_pack("{s:I,s:s+++++,s:i,s:[],s:{}}", "scheduled_product_id", (json_int_t)sp_id, "error",
				  "no templates found for ", pget(params, "DISTRI"), "-", pget(params, "FLAVOR"), "-",
				  pget(params, "ARCH"), "count", 0, "ids", "failed");
	} else {
		*resp = json_pack("{s:I,s:I,s:O,s:O}", "scheduled_product_id", (json_int_t)sp_id, "count",
				  (json_int_t)json_array_size(ids), "ids", ids, "failed", failed);
	}
	if (!*resp)
		goto nomem_tx;
	if (db_commit(db)) {
		json_decref(*resp);
		*resp = NULL;
		goto fail_tx;
	}
	log_info("scheduled product %lld: %zu jobs", (long long)sp_id, json_array_size(ids));
	json_decref(products);
	json_decref(ids);
	json_decref(made);
	json_decref(failed);
	free(settings_text);
	return status;
nomem_tx:
	db_rollback(db);
nomem:
	status = 503;
	snprintf(why, sizeof(why), "out of memory: try again later");
	goto out;
refused: /* a job's settings the client must change: nothing is kept */
	status = 400;
	db_rollback(db);
	goto out;
fail_tx:
	db_rollback(db);
fail:
	log_err("cannot schedule the product: %s", db_errmsg(db));
	status = 500;
	snprintf(why, sizeof(why), "cannot schedule the product (database error)");
out:
	json_decref(products);
	json_decref(ids);
	json_decref(made);
	json_decref(failed);
	free(settings_text);
	*resp = json_pack("{s:s}", "error", why);
	return status;
}

int isos_get(struct db *db, int64_t id, bool job_ids, json_t **out, char *msg, size_t msglen)
{
	static const char *const cols[] = { "distri", "version", "flavor", "arch", "build", "iso", "status" };
	struct jbuild b = JBUILD_INIT;
	struct db_stmt *st;
	json_t *j;
	size_t i;

	*out = NULL;
	if (db_prepare(db, &st, "SELECT id, distri, version, flavor, arch, build, iso, status, settings, results,"
		       " t_created, t_updated FROM scheduled_products WHERE id = ?", "i", id)) {
		err_set(msg, msglen, "cannot read scheduled products");
		return ERR_IO;
	}
	if (db_step(st) != 1) {
		db_finalize(st);
		err_set(msg, msglen, "Scheduled product %lld does not exist", (long long)id);
		return ERR_NOT_FOUND;
	}
	j = jbuild_take(&b, json_object(), "scheduled product");
	jbuild_set(&b, j, "id", json_integer(db_col_int(st, 0)));
	for (i = 0; i < 7; i++)
		jbuild_set(&b, j, cols[i], db_col_text(st, (int)i + 1) ? json_string(db_col_text(st, (int)i + 1))
									  : json_null());
	/* vigil's own text: a parse that fails is out of memory, not the text. */
	for (i = 0; i < 2; i++) {
		const char *text = db_col_text(st, 8 + (int)i);
		bool nomem = false;
		json_t *v = text ? oom_json_loadb_trusted(text, strlen(text), &nomem) : NULL;
		if (nomem)
			jbuild_take(&b, NULL, i ? "results" : "settings");
		jbuild_set(&b, j, i ? "results" : "settings", v ? v : i ? json_null() : json_object());
	}
	jbuild_set(&b, j, "t_created", json_string(db_col_text(st, 10)));
	jbuild_set(&b, j, "t_updated", json_string(db_col_text(st, 11)));
	db_finalize(st);
	if (job_ids && !jbuild_failed(&b)) {
		json_t *ids = jbuild_take(&b, json_array(), "job_ids");
		if (ids && !db_prepare(db, &st, "SELECT id FROM jobs WHERE scheduled_product_id = ? ORDER BY id", "i", id)) {
			while (!jbuild_failed(&b) && db_step(st) == 1)
				jbuild_append(&b, ids, json_integer(db_col_int(st, 0)));
			db_finalize(st);
		}
		jbuild_set(&b, j, "job_ids", ids);
	}
	if (!(j = jbuild_done(&b, j))) {
		err_set(msg, msglen, "out of memory");
		return ERR_NOMEM;
	}
	*out = j;
	return 0;
}
