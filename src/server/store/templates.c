/* SPDX-License-Identifier: MIT */
/* templates.c - the job_templates table and its settings: rows as openQA's
 * JSON, one added from names or ids, a group's rows as a jt_list for its
 * YAML, and a parsed YAML document mapped to rows in one transaction
 * (openQA's empty test suite '-' created on demand). */
#define LOG_MODULE "templates"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "server/db/db.h"
#include "server/store/groups.h"
#include "server/store/jobs.h"
#include "server/store/templates.h"
#include "server/store/jbuild.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/str.h"
#include "util/banned.h" /* last: after every system header */

int templates_list(struct db *db, int64_t id, json_t **out, char *msg, size_t msglen)
{
	struct jbuild b = JBUILD_INIT;
	struct db_stmt *st;
	json_t *a;

	*out = NULL;
	if (db_prepare(db, &st,
		       "SELECT jt.id, jt.prio, g.name, jt.group_id, p.id, p.distri, p.version, p.flavor, p.arch,"
		       " m.id, m.name, ts.id, ts.name, jt.name, jt.description"
		       " FROM job_templates jt JOIN job_groups g ON g.id = jt.group_id"
		       " JOIN products p ON p.id = jt.product_id JOIN machines m ON m.id = jt.machine_id"
		       " JOIN test_suites ts ON ts.id = jt.test_suite_id WHERE (? = 0 OR jt.id = ?) ORDER BY jt.id",
		       "ii", id, id)) {
		err_set(msg, msglen, "cannot read job templates");
		return ERR_IO;
	}
	a = jbuild_take(&b, json_array(), "job_templates");
	while (!jbuild_failed(&b) && db_step(st) == 1) {
		jbuild_append(&b, a, json_pack(
			"{s:I,s:I,s:s,s:I,s:{s:I,s:s,s:s,s:s,s:s},s:{s:I,s:s},s:{s:I,s:s},s:s,s:s,s:[]}",
			"id", (json_int_t)db_col_int(st, 0), "prio", (json_int_t)db_col_int(st, 1),
			"group_name", db_col_text(st, 2), "group_id", (json_int_t)db_col_int(st, 3),
			"product", "id", (json_int_t)db_col_int(st, 4), "distri", db_col_text(st, 5),
			"version", db_col_text(st, 6), "flavor", db_col_text(st, 7), "arch", db_col_text(st, 8),
			"machine", "id", (json_int_t)db_col_int(st, 9), "name", db_col_text(st, 10),
			"test_suite", "id", (json_int_t)db_col_int(st, 11), "name", db_col_text(st, 12),
			"name", db_col_text(st, 13), "description", db_col_text(st, 14), "settings"));
	}
	db_finalize(st);
	if (!jbuild_done(&b, a)) {
		err_set(msg, msglen, "out of memory");
		return ERR_NOMEM;
	}
	if (id && json_array_size(a) == 0) {
		json_decref(a);
		err_set(msg, msglen, "Job template %lld does not exist", (long long)id);
		return ERR_NOT_FOUND;
	}
	*out = a;
	return 0;
}

/* A row given by id (> 0; < 0 for a bad one) or else looked up by sql with
 * name. 0, or ERR_INVALID when missing or unknown. */
static int lookup_id(struct db *db, int64_t id, const char *name, const char *sql, int64_t *out)
{
	if (id) {
		*out = id;
		return id > 0 ? 0 : ERR_INVALID;
	}
	if (!name)
		return ERR_INVALID;
	return db_query_int(db, out, sql, "t", name) ? ERR_INVALID : 0;
}

int templates_add(struct db *db, const struct templates_new *t, int64_t *id, char *msg, size_t msglen)
{
	int64_t group = 0, machine = 0, suite = 0, product = 0, prio;
	char now[DB_TIME_LEN];
	int rc;

	if (lookup_id(db, t->group_id, t->group_name, "SELECT id FROM job_groups WHERE name = ?", &group)) {
		err_set(msg, msglen, "Erroneous parameters (group_id or group_name missing or unknown)");
		return ERR_INVALID;
	}
	/* openQA: a group whose templates came from YAML changes only through its YAML. */
	if (groups_has_yaml(db, group)) {
		err_set(msg, msglen, "Group %lld must be updated through the YAML template (job_templates_scheduling)",
			(long long)group);
		return ERR_INVALID;
	}
	if (lookup_id(db, t->machine_id, t->machine_name, "SELECT id FROM machines WHERE name = ?", &machine)) {
		err_set(msg, msglen, "Erroneous parameters (machine_id or machine_name missing or unknown)");
		return ERR_INVALID;
	}
	if (lookup_id(db, t->test_suite_id, t->test_suite_name, "SELECT id FROM test_suites WHERE name = ?", &suite)) {
		err_set(msg, msglen, "Erroneous parameters (test_suite_id or test_suite_name missing or unknown)");
		return ERR_INVALID;
	}
	product = t->product_id;
	if (product)
		rc = product > 0 ? 0 : ERR_INVALID;
	else
		rc = t->distri && t->version && t->flavor && t->arch
			     ? db_query_int(db, &product, "SELECT id FROM products WHERE distri = ? AND version = ? AND"
					    " flavor = ? AND arch = ?", "tttt", t->distri, t->version, t->flavor, t->arch)
			     : ERR_INVALID;
	if (rc) {
		err_set(msg, msglen, "Erroneous parameters (product_id or distri/version/flavor/arch missing or unknown)");
		return ERR_INVALID;
	}
	if (t->prio) {
		long p;
		if (str_to_long(t->prio, &p)) {
			err_set(msg, msglen, "Erroneous parameters (prio invalid)");
			return ERR_INVALID;
		}
		prio = p;
	} else if (groups_default_priority(db, group, &prio)) {
		prio = JOBS_DEFAULT_PRIORITY;
	}
	db_now(now);
	rc = db_exec(db, "INSERT INTO job_templates (product_id, machine_id, test_suite_id, group_id, prio, name,"
		     " description, t_created) VALUES (?, ?, ?, ?, ?, ?, ?, ?)", "iiiiitt" "t", product, machine, suite,
		     group, prio, t->name ? t->name : "", t->description ? t->description : "", now);
	if (rc < 0) {
		err_set(msg, msglen, rc == ERR_INVALID ? "this job template already exists (or names an unknown row)"
						       : "cannot create the job template");
		return rc == ERR_INVALID ? ERR_INVALID : ERR_IO;
	}
	*id = db_last_id(db);
	return 0;
}

int templates_delete(struct db *db, int64_t id, char *msg, size_t msglen)
{
	int64_t group;
	int rc;

	if (!db_query_int(db, &group, "SELECT g.id FROM job_templates jt JOIN job_groups g ON g.id = jt.group_id"
			  " WHERE jt.id = ? AND g.template IS NOT NULL", "i", id)) {
		err_set(msg, msglen, "Test suites in group %lld must be updated through the YAML template"
			" (job_templates_scheduling)", (long long)group);
		return ERR_INVALID;
	}
	rc = db_exec(db, "DELETE FROM job_templates WHERE id = ?", "i", id);
	if (rc <= 0) {
		err_set(msg, msglen, "Job template %lld does not exist", (long long)id);
		return rc == 0 ? ERR_NOT_FOUND : ERR_IO;
	}
	return 0;
}

/* The group's templates from the tables, ordered as scenarios are listed. */
static int load_list(struct db *db, int64_t group, struct jt_list *l)
{
	struct db_stmt *st = NULL, *ss = NULL;
	int rc;

	rc = db_prepare(db, &st,
			"SELECT jt.id, p.distri, p.version, p.flavor, p.arch, m.name, ts.name, jt.name, jt.prio,"
			" jt.description FROM job_templates jt JOIN products p ON p.id = jt.product_id"
			" JOIN machines m ON m.id = jt.machine_id JOIN test_suites ts ON ts.id = jt.test_suite_id"
			" WHERE jt.group_id = ? ORDER BY p.arch, p.distri, p.version, p.flavor, ts.name, m.name, jt.id",
			"i", group);
	while (rc >= 0 && (rc = db_step(st)) == 1) {
		struct jt_entry e;
		int r;
		char product[512];
		json_t *settings = json_object();
		if (!settings) {
			rc = ERR_NOMEM;
			break;
		}
		memset(&e, 0, sizeof(e));
		snprintf(product, sizeof(product), "%s-%s-%s-%s", db_col_text(st, 1), db_col_text(st, 2),
			 db_col_text(st, 3), db_col_text(st, 4));
		e.distri = (char *)db_col_text(st, 1);
		e.version = (char *)db_col_text(st, 2);
		e.flavor = (char *)db_col_text(st, 3);
		e.arch = (char *)db_col_text(st, 4);
		e.product = product;
		e.machine = (char *)db_col_text(st, 5);
		e.testsuite = (char *)db_col_text(st, 6);
		e.name = *db_col_text(st, 7) ? (char *)db_col_text(st, 7) : NULL;
		e.has_prio = !db_col_null(st, 8);
		e.prio = (long)db_col_int(st, 8);
		e.description = (char *)db_col_text(st, 9);
		e.settings = settings;
		r = db_prepare(db, &ss, "SELECT key, value FROM job_template_settings WHERE job_template_id = ? ORDER BY key",
			       "i", db_col_int(st, 0));
		while (r >= 0 && (r = db_step(ss)) == 1)
			if (json_object_set_new(settings, db_col_text(ss, 0), json_string(db_col_text(ss, 1))))
				r = ERR_NOMEM; /* a template dumped without a setting: none */
		db_finalize(ss);
		ss = NULL;
		if (r == 0)
			r = jt_list_add(l, &e);
		json_decref(settings);
		if (r < 0) {
			rc = r;
			break;
		}
	}
	db_finalize(st);
	return rc < 0 ? rc : 0;
}

int templates_group_yaml(struct db *db, int64_t group, char **out)
{
	struct jt_list l;
	struct buf b;
	char *stored = NULL;
	long prio = JOBS_DEFAULT_PRIORITY;
	int rc = groups_yaml(db, group, &stored, &prio);

	*out = NULL;
	if (rc && rc != ERR_NOT_FOUND)
		return rc == ERR_NOMEM ? rc : ERR_IO;
	if (stored) {
		*out = stored;
		return 0;
	}
	jt_list_init(&l);
	buf_init(&b, 4 * LIMIT_JT_YAML);
	if ((rc = load_list(db, group, &l)) || (rc = jt_yaml_dump(&l, prio, true, &b))) {
		jt_list_release(&l);
		buf_release(&b);
		return rc == ERR_NOMEM ? rc : ERR_IO;
	}
	jt_list_release(&l);
	*out = buf_steal(&b);
	return *out ? 0 : ERR_NOMEM;
}

int templates_all_yaml(struct db *db, json_t **out, char *msg, size_t msglen)
{
	struct jbuild b = JBUILD_INIT;
	json_t *groups = NULL, *all, *g;
	size_t i;
	int rc;

	*out = NULL;
	if ((rc = groups_all(db, &groups))) {
		err_set(msg, msglen, rc == ERR_NOMEM ? "out of memory" : "cannot read job groups");
		return rc == ERR_NOMEM ? rc : ERR_IO;
	}
	all = jbuild_take(&b, json_object(), "templates");
	json_array_foreach(groups, i, g) {
		char *yaml = NULL;
		rc = all ? templates_group_yaml(db, json_integer_value(json_array_get(g, 0)), &yaml) : ERR_NOMEM;
		if (rc) {
			json_decref(all);
			json_decref(groups);
			err_set(msg, msglen, rc == ERR_NOMEM ? "out of memory" : "cannot write the job groups' templates");
			return rc;
		}
		jbuild_set(&b, all, json_string_value(json_array_get(g, 1)), json_string(yaml));
		free(yaml);
	}
	json_decref(groups);
	if (!jbuild_done(&b, all)) {
		err_set(msg, msglen, "out of memory");
		return ERR_NOMEM;
	}
	*out = all;
	return 0;
}

struct update {
	struct db *db;
	int64_t group;
	json_t *ids;
	json_t *errors;
	struct jbuild b; /* an id lost would drop its template; an error lost, hide why */
};

static void user_error(struct update *u, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void user_error(struct update *u, int line, const char *fmt, ...)
{
	char msg[768], full[800];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (line > 0)
		snprintf(full, sizeof(full), "line %d: %s", line, msg);
	else
		snprintf(full, sizeof(full), "%s", msg);
	jbuild_append(&u->b, u->errors, json_string(full));
}

/* Create or update the row of one entry; 0, 1 after a user error, or a db error. */
static int apply_entry(struct update *u, const struct jt_entry *e)
{
	struct db *db = u->db;
	int64_t machine, product, suite, jt = 0, owner = 0;
	struct db_stmt *st;
	char now[DB_TIME_LEN];
	const char *key;
	json_t *v;
	int rc;

	if (db_query_int(db, &machine, "SELECT id FROM machines WHERE name = ?", "t", e->machine)) {
		user_error(u, e->line, "Machine '%s' is invalid", e->machine);
		return 1;
	}
	if (db_query_int(db, &product, "SELECT id FROM products WHERE arch = ? AND distri = ? AND flavor = ? AND version = ?",
			 "tttt", e->arch, e->distri, e->flavor, e->version)) {
		user_error(u, e->line, "Product '%s' not found in database (arch: '%s', distri: '%s', flavor: '%s',"
			   " version: '%s')", e->product, e->arch, e->distri, e->flavor, e->version);
		return 1;
	}
	db_now(now);
	if (e->testsuite) {
		if (db_query_int(db, &suite, "SELECT id FROM test_suites WHERE name = ?", "t", e->testsuite)) {
			user_error(u, e->line, "Testsuite '%s' is invalid", e->testsuite);
			return 1;
		}
	} else if (db_query_int(db, &suite, "SELECT id FROM test_suites WHERE name = '-'", NULL)) {
		/* openQA's stand-in for "testsuite: null": a suite that sets nothing. */
		if ((rc = db_exec(db, "INSERT INTO test_suites (name, description) VALUES ('-', ?)", "t",
				  "empty test suite for job templates without one")) < 0)
			return rc;
		suite = db_last_id(db);
	}
	if ((rc = db_prepare(db, &st, "SELECT id, group_id FROM job_templates WHERE product_id = ? AND machine_id = ?"
			     " AND test_suite_id = ? AND name = ?", "iiit", product, machine, suite,
			     e->name ? e->name : "")))
		return rc;
	if ((rc = db_step(st)) == 1) {
		jt = db_col_int(st, 0);
		owner = db_col_int(st, 1);
	}
	db_finalize(st);
	if (rc < 0)
		return rc;
	if (jt && owner != u->group) {
		char gname[256] = "?";
		(void)groups_name(db, owner, gname, sizeof(gname)); /* "?" when it cannot be read */
		user_error(u, e->line, "Job template name '%s' with %s and %s is already used in job group '%s'",
			   e->name ? e->name : e->testsuite ? e->testsuite : "-", e->product, e->machine, gname);
		return 1;
	}
	if (jt) {
		rc = e->has_prio ? db_exec(db, "UPDATE job_templates SET prio = ?, description = ? WHERE id = ?", "iti",
					   (int64_t)e->prio, e->description, jt)
				 : db_exec(db, "UPDATE job_templates SET description = ? WHERE id = ?", "ti",
					   e->description, jt);
	} else {
		rc = db_exec(db, "INSERT INTO job_templates (product_id, machine_id, test_suite_id, group_id, prio, name,"
			     " description, t_created) VALUES (?, ?, ?, ?, ?, ?, ?, ?)", "iiii" "ittt", product, machine,
			     suite, u->group, (int64_t)e->prio, e->name ? e->name : "", e->description, now);
		jt = db_last_id(db);
		if (rc >= 0 && !e->has_prio)
			rc = db_exec(db, "UPDATE job_templates SET prio = NULL WHERE id = ?", "i", jt);
	}
	if (rc < 0)
		return rc;
	if ((rc = db_exec(db, "DELETE FROM job_template_settings WHERE job_template_id = ?", "i", jt)) < 0)
		return rc;
	json_object_foreach(e->settings, key, v)
		if ((rc = db_exec(db, "INSERT INTO job_template_settings (job_template_id, key, value) VALUES (?, ?, ?)",
				  "itt", jt, key, json_string_value(v))) < 0)
			return rc;
	jbuild_append(&u->b, u->ids, json_integer(jt));
	return jbuild_failed(&u->b) ? ERR_NOMEM : 0;
}

static bool in_ids(const json_t *ids, int64_t id)
{
	size_t i;
	json_t *v;

	json_array_foreach(ids, i, v)
		if (json_integer_value(v) == id)
			return true;
	return false;
}

/* Delete the group's rows the document no longer names. */
static int drop_untouched(struct update *u)
{
	struct db_stmt *st;
	json_t *gone = json_array();
	size_t i;
	json_t *v;
	int rc = gone ? db_prepare(u->db, &st, "SELECT id FROM job_templates WHERE group_id = ?", "i", u->group)
		      : ERR_NOMEM;

	if (!gone)
		return rc;
	while (rc >= 0 && (rc = db_step(st)) == 1)
		if (!in_ids(u->ids, db_col_int(st, 0)) && json_array_append_new(gone, json_integer(db_col_int(st, 0))))
			rc = ERR_NOMEM; /* a row kept that should go: nothing changes */
	db_finalize(st);
	json_array_foreach(gone, i, v)
		if (rc >= 0)
			rc = db_exec(u->db, "DELETE FROM job_templates WHERE id = ?", "i", (int64_t)json_integer_value(v));
	json_decref(gone);
	return rc < 0 ? rc : 0;
}

int templates_replace(struct db *db, int64_t group, const struct jt_list *l, const char *yaml, bool preview,
		      json_t *ids, json_t *errors, bool *applied, bool *had_yaml)
{
	struct update u = { db, group, ids, errors, JBUILD_INIT };
	size_t i;
	int rc = 0;

	*applied = false;
	*had_yaml = false;
	/* Serial: the group's templates are read, deleted and written anew. */
	if (db_begin_serial(db)) {
		user_error(&u, 0, "Internal server error occurred");
		return ERR_IO;
	}
	for (i = 0; i < l->n && rc == 0; i++)
		rc = apply_entry(&u, &l->v[i]);
	if (rc == 0)
		rc = drop_untouched(&u);
	if (rc >= 0 && jbuild_failed(&u.b))
		rc = ERR_NOMEM; /* an id or a user error lost */
	if (rc < 0 && rc != ERR_NOMEM)
		user_error(&u, 0, "Internal server error occurred: %s", db_errmsg(db));
	if (rc) {
		db_rollback(db);
		return rc == ERR_NOMEM ? ERR_NOMEM : rc < 0 ? ERR_IO : 1;
	}
	*applied = true;
	*had_yaml = groups_has_yaml(db, group);
	if (preview) {
		db_rollback(db);
		return 0;
	}
	if (groups_set_yaml(db, group, yaml) || db_commit(db)) {
		user_error(&u, 0, "Internal server error occurred: %s", db_errmsg(db));
		db_rollback(db);
		return ERR_IO;
	}
	return 0;
}
