/* SPDX-License-Identifier: MIT */
/* jt_yaml.c - job group templates as YAML (openQA's JobTemplates-01
 * schema): libyaml's document loader, then a walk that checks every key
 * and type against the schema and expands defaults, machine lists and
 * merge keys into one entry per job template. Every error names the line,
 * column and path of the offending node. Owns only what it returns. */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>
#include "server/store/jt_yaml.h"
#include "util/err.h"
#include "util/banned.h" /* last: after every system header */

#define JT_MERGE_DEPTH 8
#define JT_PATH 512

void jt_list_init(struct jt_list *l)
{
	l->v = NULL;
	l->n = l->cap = 0;
}

static void entry_release(struct jt_entry *e)
{
	free(e->arch);
	free(e->product);
	free(e->distri);
	free(e->flavor);
	free(e->version);
	free(e->machine);
	free(e->testsuite);
	free(e->name);
	free(e->description);
	json_decref(e->settings);
}

void jt_list_release(struct jt_list *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		entry_release(&l->v[i]);
	free(l->v);
	jt_list_init(l);
}

static char *dup_or_null(const char *s, bool *oom)
{
	char *d;

	if (!s)
		return NULL;
	d = strdup(s);
	if (!d)
		*oom = true;
	return d;
}

int jt_list_add(struct jt_list *l, const struct jt_entry *e)
{
	struct jt_entry c;
	bool oom = false;

	if (l->n >= LIMIT_JT_ENTRIES)
		return ERR_TOO_BIG;
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 16;
		struct jt_entry *v = realloc(l->v, cap * sizeof(*v));
		if (!v)
			return ERR_NOMEM;
		l->v = v;
		l->cap = cap;
	}
	memset(&c, 0, sizeof(c));
	c.arch = dup_or_null(e->arch, &oom);
	c.product = dup_or_null(e->product, &oom);
	c.distri = dup_or_null(e->distri, &oom);
	c.flavor = dup_or_null(e->flavor, &oom);
	c.version = dup_or_null(e->version, &oom);
	c.machine = dup_or_null(e->machine, &oom);
	c.testsuite = dup_or_null(e->testsuite, &oom);
	c.name = dup_or_null(e->name, &oom);
	c.description = dup_or_null(e->description ? e->description : "", &oom);
	c.has_prio = e->has_prio;
	c.prio = e->prio;
	c.line = e->line;
	c.settings = e->settings ? json_incref(e->settings) : json_object();
	if (oom || !c.settings) {
		entry_release(&c);
		return ERR_NOMEM;
	}
	l->v[l->n++] = c;
	return 0;
}

/* --- parsing */

struct ctx {
	yaml_document_t doc;
	char *err;
	size_t errlen;
	struct jt_list *out;
	json_t *seen;  /* scenario keys already defined */
};

struct kv {
	const char *key;
	yaml_node_t *knode, *val;
};

struct kvs {
	struct kv *v;
	size_t n, cap;
};

static int fail(struct ctx *c, const yaml_node_t *n, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int fail(struct ctx *c, const yaml_node_t *n, const char *path, const char *fmt, ...)
{
	char what[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	if (n)
		snprintf(c->err, c->errlen, "line %zu, column %zu: %s: %s", n->start_mark.line + 1,
			 n->start_mark.column + 1, path, what);
	else
		snprintf(c->err, c->errlen, "%s: %s", path, what);
	return ERR_PROTO;
}

static yaml_node_t *node_at(struct ctx *c, int idx)
{
	return yaml_document_get_node(&c->doc, idx);
}

static const char *scalar(const yaml_node_t *n)
{
	return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

static bool is_null(const yaml_node_t *n)
{
	const char *s = scalar(n);

	return !n || (s && n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
		      (!*s || !strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null") || !strcmp(s, "NULL")));
}

static const char *type_name(const yaml_node_t *n)
{
	if (is_null(n))
		return "null";
	switch (n->type) {
	case YAML_SCALAR_NODE: return "a scalar";
	case YAML_SEQUENCE_NODE: return "a list";
	case YAML_MAPPING_NODE: return "a mapping";
	default: return "nothing";
	}
}

static int kvs_push(struct kvs *m, const char *key, yaml_node_t *kn, yaml_node_t *val)
{
	if (m->n == m->cap) {
		size_t cap = m->cap ? 2 * m->cap : 16;
		struct kv *v = realloc(m->v, cap * sizeof(*v));
		if (!v)
			return ERR_NOMEM;
		m->v = v;
		m->cap = cap;
	}
	m->v[m->n].key = key;
	m->v[m->n].knode = kn;
	m->v[m->n].val = val;
	m->n++;
	return 0;
}

static const struct kv *kvs_get(const struct kvs *m, const char *key)
{
	size_t i;

	for (i = 0; i < m->n; i++)
		if (!strcmp(m->v[i].key, key))
			return &m->v[i];
	return NULL;
}

static int collect(struct ctx *c, yaml_node_t *map, const char *path, struct kvs *m, bool merged, int depth);

/* Pairs brought in by a "<<" value: a mapping or a list of mappings. */
static int collect_merge(struct ctx *c, yaml_node_t *v, const char *path, struct kvs *m, int depth)
{
	yaml_node_item_t *it;

	if (depth >= JT_MERGE_DEPTH)
		return fail(c, v, path, "merge keys ('<<') nested deeper than %d", JT_MERGE_DEPTH);
	if (v->type == YAML_MAPPING_NODE)
		return collect(c, v, path, m, true, depth + 1);
	if (v->type != YAML_SEQUENCE_NODE)
		return fail(c, v, path, "'<<' must merge a mapping or a list of mappings, not %s", type_name(v));
	for (it = v->data.sequence.items.start; it < v->data.sequence.items.top; it++) {
		yaml_node_t *e = node_at(c, *it);
		int rc;
		if (!e || e->type != YAML_MAPPING_NODE)
			return fail(c, e ? e : v, path, "'<<' must merge a mapping or a list of mappings");
		if ((rc = collect(c, e, path, m, true, depth + 1)))
			return rc;
	}
	return 0;
}

/* The pairs of map: its own keys (a duplicate is an error) first, then
 * merged ones not given directly. */
static int collect(struct ctx *c, yaml_node_t *map, const char *path, struct kvs *m, bool merged, int depth)
{
	yaml_node_pair_t *p;
	size_t own_start = m->n;
	int rc;

	for (p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
		yaml_node_t *k = node_at(c, p->key), *v = node_at(c, p->value);
		const char *ks = scalar(k);
		if (!ks)
			return fail(c, k ? k : map, path, "keys must be scalars");
		if (!v)
			return fail(c, k, path, "key '%s' has no value", ks);
		if (!strcmp(ks, "<<") && k->data.scalar.style == YAML_PLAIN_SCALAR_STYLE)
			continue;
		if (kvs_get(m, ks)) {
			size_t i;
			bool own = false;
			for (i = own_start; i < m->n; i++)
				if (!strcmp(m->v[i].key, ks))
					own = true;
			if (merged || !own)
				continue; /* a key given more directly wins */
			return fail(c, k, path, "duplicate key '%s'", ks);
		}
		if ((rc = kvs_push(m, ks, k, v)))
			return rc;
	}
	for (p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
		yaml_node_t *k = node_at(c, p->key);
		if (!strcmp(scalar(k), "<<") && k->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
		    (rc = collect_merge(c, node_at(c, p->value), path, m, depth)))
			return rc;
	}
	return 0;
}

/* The pairs of n, which must be a mapping (null counts as empty when allow_null). */
static int pairs(struct ctx *c, yaml_node_t *n, const char *path, bool allow_null, struct kvs *m)
{
	int rc;

	m->v = NULL;
	m->n = m->cap = 0;
	if (allow_null && is_null(n))
		return 0;
	if (!n || n->type != YAML_MAPPING_NODE)
		return fail(c, n, path, "expected a mapping, found %s", type_name(n));
	/* On an error m holds nothing: callers leave at once without freeing. */
	if ((rc = collect(c, n, path, m, false, 0))) {
		free(m->v);
		m->v = NULL;
		m->n = m->cap = 0;
	}
	return rc;
}

static bool word_char(unsigned char ch)
{
	return isalnum(ch) || ch == '_' || ch >= 0x80;
}

static bool name_ok(const char *s, const char *extra)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!word_char((unsigned char)*s) && !strchr(extra, *s))
			return false;
	return true;
}

static bool arch_ok(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!islower((unsigned char)*s) && !isdigit((unsigned char)*s) && *s != '_')
			return false;
	return true;
}

/* openQA's setting names: [A-Z_+]+ then [A-Z0-9_]*. */
static bool setting_ok(const char *s)
{
	size_t i = 0;

	while (isupper((unsigned char)s[i]) || s[i] == '_' || s[i] == '+')
		i++;
	if (i == 0)
		return false;
	for (; s[i]; i++)
		if (!isupper((unsigned char)s[i]) && !isdigit((unsigned char)s[i]) && s[i] != '_')
			return false;
	return true;
}

static void subpath(char out[JT_PATH], const char *path, const char *key)
{
	/* A cut path still points the reader at the right place. */
	if (snprintf(out, JT_PATH, "%s/%s", path, key) >= JT_PATH)
		out[JT_PATH - 1] = '\0';
}

static int want_string(struct ctx *c, yaml_node_t *n, const char *path, const char **out)
{
	*out = scalar(n);
	if (!*out || (is_null(n) && n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE && **out))
		return fail(c, n, path, "expected a string, found %s", type_name(n));
	return 0;
}

static int want_prio(struct ctx *c, yaml_node_t *n, const char *path, long *out)
{
	const char *s = scalar(n);
	char *end;

	if (!s || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE || !*s)
		return fail(c, n, path, "priority must be a number, found %s", s ? "a string" : type_name(n));
	*out = strtol(s, &end, 10);
	if (*end || *out < -100000 || *out > 100000)
		return fail(c, n, path, "priority must be a whole number, found '%s'", s);
	return 0;
}

/* settings: a mapping of NAME: string, added into obj. */
static int want_settings(struct ctx *c, yaml_node_t *n, const char *path, json_t *obj)
{
	struct kvs m;
	char p[JT_PATH];
	size_t i;
	int rc = pairs(c, n, path, true, &m);

	for (i = 0; !rc && i < m.n; i++) {
		const char *v;
		subpath(p, path, m.v[i].key);
		if (!setting_ok(m.v[i].key))
			rc = fail(c, m.v[i].knode, p, "invalid setting name (use A-Z, 0-9, _ and a leading +)");
		else if (!(v = scalar(m.v[i].val)))
			rc = fail(c, m.v[i].val, p, "a setting's value must be a string, found %s", type_name(m.v[i].val));
		else if (json_object_set_new(obj, m.v[i].key, json_string(v)))
			rc = ERR_NOMEM;
	}
	free(m.v);
	return rc;
}

/* machine: a string or a list of strings, into a JSON array of strings. */
static int want_machines(struct ctx *c, yaml_node_t *n, const char *path, json_t *arr)
{
	yaml_node_item_t *it;
	const char *s;

	json_array_clear(arr);
	if ((s = scalar(n)) && !is_null(n))
		return json_array_append_new(arr, json_string(s)) ? ERR_NOMEM : 0;
	if (!n || n->type != YAML_SEQUENCE_NODE)
		return fail(c, n, path, "machine must be a name or a list of names, found %s", type_name(n));
	for (it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++) {
		yaml_node_t *e = node_at(c, *it);
		if (!(s = scalar(e)) || is_null(e))
			return fail(c, e ? e : n, path, "machine list entries must be names, found %s", type_name(e));
		if (json_array_append_new(arr, json_string(s)))
			return ERR_NOMEM;
	}
	return 0;
}

struct defaults {
	json_t *machines;  /* array */
	json_t *settings;  /* object */
	bool has_prio;
	long prio;
};

static int parse_defaults(struct ctx *c, yaml_node_t *n, const char *path, struct defaults *d)
{
	struct kvs m;
	char p[JT_PATH];
	size_t i;
	int rc = pairs(c, n, path, false, &m);

	if (!rc && !kvs_get(&m, "machine"))
		rc = fail(c, n, path, "missing 'machine'");
	if (!rc && !kvs_get(&m, "priority"))
		rc = fail(c, n, path, "missing 'priority'");
	for (i = 0; !rc && i < m.n; i++) {
		subpath(p, path, m.v[i].key);
		if (!strcmp(m.v[i].key, "machine"))
			rc = want_machines(c, m.v[i].val, p, d->machines);
		else if (!strcmp(m.v[i].key, "priority")) {
			rc = want_prio(c, m.v[i].val, p, &d->prio);
			d->has_prio = true;
		} else if (!strcmp(m.v[i].key, "settings"))
			rc = want_settings(c, m.v[i].val, p, d->settings);
		else
			rc = fail(c, m.v[i].knode, p, "unknown key (allowed: machine, priority, settings)");
	}
	free(m.v);
	return rc;
}

/* One scenario list entry (a test suite name, or one key with its attributes). */
static int parse_scenario(struct ctx *c, yaml_node_t *n, const char *path, const char *arch, const char *product,
			  yaml_node_t *prod_node, const struct defaults *d)
{
	struct jt_entry e;
	struct kvs m = { NULL, 0, 0 }, attr = { NULL, 0, 0 }, pm = { NULL, 0, 0 };
	json_t *machines = json_deep_copy(d->machines), *settings = json_deep_copy(d->settings), *v;
	char p[JT_PATH], key[1024];
	const char *suite = NULL, *s;
	char *tsuite = NULL;
	size_t i;
	int rc = 0;

	memset(&e, 0, sizeof(e));
	e.has_prio = d->has_prio;
	e.prio = d->prio;
	e.description = (char *)"";
	e.line = (int)n->start_mark.line + 1;
	if (!machines || !settings) {
		rc = ERR_NOMEM;
		goto out;
	}
	if (n->type == YAML_SCALAR_NODE && !is_null(n)) {
		suite = scalar(n);
		/* The name pattern of the mapping form holds for the plain form
		 * too: a name outside it names no test suite, and the YAML written
		 * back (which gives an entry its attributes as a mapping) could not
		 * be read again (found by tests/fuzz/fuzz_yaml). */
		if (!name_ok(suite, " _*.+-")) {
			rc = fail(c, n, path, "invalid test suite name '%s'", suite);
			goto out;
		}
	} else if (n->type == YAML_MAPPING_NODE) {
		if ((rc = pairs(c, n, path, false, &m)))
			goto out;
		if (m.n != 1) {
			rc = fail(c, n, path, "a scenario with attributes must have exactly one key (the test suite or job"
				  " template name), found %zu", m.n);
			goto out;
		}
		suite = m.v[0].key;
		subpath(p, path, suite);
		if (!name_ok(suite, " _*.+-")) {
			rc = fail(c, m.v[0].knode, p, "invalid test suite name");
			goto out;
		}
		if ((rc = pairs(c, m.v[0].val, p, true, &attr)))
			goto out;
		for (i = 0; i < attr.n; i++) {
			char ap[JT_PATH];
			const char *k = attr.v[i].key;
			yaml_node_t *val = attr.v[i].val;
			subpath(ap, p, k);
			if (!strcmp(k, "machine")) {
				if ((rc = want_machines(c, val, ap, machines)))
					goto out;
			} else if (!strcmp(k, "priority")) {
				if ((rc = want_prio(c, val, ap, &e.prio)))
					goto out;
				e.has_prio = true;
			} else if (!strcmp(k, "settings")) {
				if ((rc = want_settings(c, val, ap, settings)))
					goto out;
			} else if (!strcmp(k, "testsuite")) {
				e.name = (char *)suite;
				if (is_null(val)) {
					tsuite = NULL; /* openQA's empty test suite */
				} else if (!(s = scalar(val)) || !name_ok(s, " _*.+-")) {
					rc = fail(c, val, ap, "testsuite must be a test suite name or null");
					goto out;
				} else {
					tsuite = (char *)s;
				}
			} else if (!strcmp(k, "description")) {
				if ((rc = want_string(c, val, ap, &s)))
					goto out;
				e.description = (char *)s;
			} else {
				rc = fail(c, attr.v[i].knode, ap,
					  "unknown key (allowed: machine, priority, settings, testsuite, description)");
				goto out;
			}
		}
	} else {
		rc = fail(c, n, path, "a scenario must be a test suite name or a mapping, found %s", type_name(n));
		goto out;
	}
	e.arch = (char *)arch;
	e.product = (char *)product;
	e.testsuite = e.name ? tsuite : (char *)suite;
	/* The product's identity from products: (checked to exist by the caller). */
	if ((rc = pairs(c, prod_node, "/products", false, &pm)))
		goto out;
	e.distri = (char *)scalar(kvs_get(&pm, "distri")->val);
	e.flavor = (char *)scalar(kvs_get(&pm, "flavor")->val);
	e.version = (char *)scalar(kvs_get(&pm, "version")->val);
	e.settings = settings;
	if (json_array_size(machines) == 0) {
		rc = fail(c, n, path, "no machine for '%s' and no default machine for architecture '%s'", suite, arch);
		goto out;
	}
	json_array_foreach(machines, i, v) {
		e.machine = (char *)json_string_value(v);
		snprintf(key, sizeof(key), "%s\x1f%s\x1f%s\x1f%s\x1f%s", arch, product, e.machine,
			 e.testsuite ? e.testsuite : "", e.name ? e.name : "");
		if (json_object_get(c->seen, key)) {
			rc = fail(c, n, path, "job template name '%s' is defined more than once (for %s on %s); use a unique"
				  " name and set 'testsuite' to reuse a test suite", suite, product, e.machine);
			goto out;
		}
		if (json_object_set_new(c->seen, key, json_true())) {
			rc = ERR_NOMEM;
			goto out;
		}
		if ((rc = jt_list_add(c->out, &e))) {
			if (rc == ERR_TOO_BIG)
				fail(c, n, path, "more than %u job templates", LIMIT_JT_ENTRIES);
			goto out;
		}
	}
out:
	free(m.v);
	free(attr.v);
	free(pm.v);
	json_decref(machines);
	json_decref(settings);
	return rc;
}

static int parse_products(struct ctx *c, yaml_node_t *n, struct kvs *prods)
{
	size_t i, j;
	char p[JT_PATH];
	int rc = pairs(c, n, "/products", false, prods);

	for (i = 0; !rc && i < prods->n; i++) {
		struct kvs m;
		static const char *const req[] = { "distri", "flavor", "version" };
		subpath(p, "/products", prods->v[i].key);
		if (!name_ok(prods->v[i].key, "._*-")) {
			rc = fail(c, prods->v[i].knode, p, "invalid product name (use letters, digits and . _ * -)");
			break;
		}
		if ((rc = pairs(c, prods->v[i].val, p, false, &m)))
			break;
		for (j = 0; !rc && j < 3; j++) {
			const struct kv *f = kvs_get(&m, req[j]);
			const char *s;
			char fp[JT_PATH];
			if (!f) {
				rc = fail(c, prods->v[i].val, p, "missing '%s'", req[j]);
				break;
			}
			subpath(fp, p, req[j]);
			rc = want_string(c, f->val, fp, &s);
		}
		for (j = 0; !rc && j < m.n; j++)
			if (strcmp(m.v[j].key, "distri") && strcmp(m.v[j].key, "flavor") && strcmp(m.v[j].key, "version")) {
				char fp[JT_PATH];
				subpath(fp, p, m.v[j].key);
				rc = fail(c, m.v[j].knode, fp, "unknown key (allowed: distri, flavor, version)");
			}
		free(m.v);
	}
	return rc;
}

static int walk(struct ctx *c, yaml_node_t *root)
{
	struct kvs top = { NULL, 0, 0 }, prods = { NULL, 0, 0 }, defs = { NULL, 0, 0 }, archs = { NULL, 0, 0 };
	const struct kv *kp, *ks, *kd;
	struct defaults d = { NULL, NULL, false, 0 };
	size_t i, j;
	char p[JT_PATH];
	int rc;

	if ((rc = pairs(c, root, "/", false, &top)))
		goto out;
	for (i = 0; i < top.n; i++) {
		const char *k = top.v[i].key;
		if (strcmp(k, "products") && strcmp(k, "scenarios") && strcmp(k, "defaults") && k[0] != '.') {
			rc = fail(c, top.v[i].knode, "/", "unknown key '%s' (allowed: products, scenarios, defaults and"
				  " '.name' definitions for anchors)", k);
			goto out;
		}
	}
	kp = kvs_get(&top, "products");
	ks = kvs_get(&top, "scenarios");
	kd = kvs_get(&top, "defaults");
	if (!kp || !ks) {
		rc = fail(c, root, "/", "missing '%s'", kp ? "scenarios" : "products");
		goto out;
	}
	if ((rc = parse_products(c, kp->val, &prods)))
		goto out;
	if (kd && (rc = pairs(c, kd->val, "/defaults", false, &defs)))
		goto out;
	for (i = 0; i < defs.n; i++) {
		struct defaults check = { json_array(), json_object(), false, 0 };
		subpath(p, "/defaults", defs.v[i].key);
		if (!arch_ok(defs.v[i].key))
			rc = fail(c, defs.v[i].knode, p, "invalid architecture name (use a-z, 0-9 and _)");
		else if (!check.machines || !check.settings)
			rc = ERR_NOMEM;
		else /* also the defaults of architectures without scenarios */
			rc = parse_defaults(c, defs.v[i].val, p, &check);
		json_decref(check.machines);
		json_decref(check.settings);
		if (rc)
			goto out;
	}
	if ((rc = pairs(c, ks->val, "/scenarios", false, &archs)))
		goto out;
	for (i = 0; i < archs.n; i++) {
		struct kvs plist;
		const struct kv *da = kvs_get(&defs, archs.v[i].key);
		char ap[JT_PATH];
		subpath(ap, "/scenarios", archs.v[i].key);
		if (!arch_ok(archs.v[i].key)) {
			rc = fail(c, archs.v[i].knode, ap, "invalid architecture name (use a-z, 0-9 and _)");
			goto out;
		}
		json_decref(d.machines);
		json_decref(d.settings);
		d.machines = json_array();
		d.settings = json_object();
		d.has_prio = false;
		d.prio = 0;
		if (!d.machines || !d.settings) {
			rc = ERR_NOMEM;
			goto out;
		}
		if (da) {
			subpath(p, "/defaults", archs.v[i].key);
			if ((rc = parse_defaults(c, da->val, p, &d)))
				goto out;
		}
		if ((rc = pairs(c, archs.v[i].val, ap, true, &plist)))
			goto out;
		for (j = 0; !rc && j < plist.n; j++) {
			const struct kv *prod = kvs_get(&prods, plist.v[j].key);
			yaml_node_t *seq = plist.v[j].val;
			yaml_node_item_t *it;
			char pp[JT_PATH];
			subpath(pp, ap, plist.v[j].key);
			if (!prod) {
				rc = fail(c, plist.v[j].knode, pp, "product '%s' is not defined under 'products'",
					  plist.v[j].key);
				break;
			}
			if (is_null(seq))
				continue;
			if (seq->type != YAML_SEQUENCE_NODE) {
				rc = fail(c, seq, pp, "expected a list of test suites, found %s", type_name(seq));
				break;
			}
			for (it = seq->data.sequence.items.start; !rc && it < seq->data.sequence.items.top; it++) {
				char ip[JT_PATH];
				if (snprintf(ip, sizeof(ip), "%s/%d", pp, (int)(it - seq->data.sequence.items.start)) >=
				    (int)sizeof(ip))
					ip[sizeof(ip) - 1] = '\0';
				rc = parse_scenario(c, node_at(c, *it), ip, archs.v[i].key, plist.v[j].key, prod->val, &d);
			}
		}
		free(plist.v);
		if (rc)
			goto out;
	}
out:
	json_decref(d.machines);
	json_decref(d.settings);
	free(top.v);
	free(prods.v);
	free(defs.v);
	free(archs.v);
	return rc;
}

/* Refuse a document nested deeper than LIMIT_JT_DEPTH before loading it:
 * libyaml's loader takes time quadratic in the depth (100,000 levels: tens
 * of seconds), and the schema needs fewer than ten. This pass stops at the
 * first node too deep, so a hostile document costs no more than a sane one.
 * 0, ERR_PROTO (invalid YAML or too deep, where in err), ERR_NOMEM. */
/* libyaml's syntax error: where it was found and, when libyaml names the
 * construct it was reading, where that began (an indentation slip shows
 * up on the line after the one that slipped). */
static void syntax_error(const yaml_parser_t *parser, char *err, size_t errlen)
{
	const char *problem = parser->problem ? parser->problem : "syntax error";

	if (parser->context && (parser->context_mark.line != parser->problem_mark.line ||
				parser->context_mark.column != parser->problem_mark.column))
		snprintf(err, errlen, "line %zu, column %zu: invalid YAML: %s %s at line %zu, column %zu",
			 parser->problem_mark.line + 1, parser->problem_mark.column + 1, problem, parser->context,
			 parser->context_mark.line + 1, parser->context_mark.column + 1);
	else
		snprintf(err, errlen, "line %zu, column %zu: invalid YAML: %s%s%s", parser->problem_mark.line + 1,
			 parser->problem_mark.column + 1, problem, parser->context ? " " : "",
			 parser->context ? parser->context : "");
}

static int check_depth(const char *yaml, size_t len, char *err, size_t errlen)
{
	yaml_parser_t parser;
	yaml_event_t ev;
	int depth = 0, rc = 0;
	bool done = false;

	if (!yaml_parser_initialize(&parser))
		return ERR_NOMEM;
	yaml_parser_set_input_string(&parser, (const unsigned char *)yaml, len);
	while (!done && !rc) {
		if (!yaml_parser_parse(&parser, &ev)) {
			syntax_error(&parser, err, errlen);
			rc = ERR_PROTO;
			break;
		}
		switch (ev.type) {
		case YAML_SEQUENCE_START_EVENT:
		case YAML_MAPPING_START_EVENT:
			if (++depth > LIMIT_JT_DEPTH) {
				snprintf(err, errlen, "line %zu, column %zu: nested deeper than %d levels",
					 ev.start_mark.line + 1, ev.start_mark.column + 1, LIMIT_JT_DEPTH);
				rc = ERR_PROTO;
			}
			break;
		case YAML_SEQUENCE_END_EVENT:
		case YAML_MAPPING_END_EVENT:
			depth--;
			break;
		case YAML_STREAM_END_EVENT:
			done = true;
			break;
		default:
			break;
		}
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&parser);
	return rc;
}

int jt_yaml_parse(const char *yaml, size_t len, struct jt_list *l, char *err, size_t errlen)
{
	yaml_parser_t parser;
	struct ctx c;
	yaml_node_t *root;
	int rc;

	jt_list_release(l);
	if (len > LIMIT_JT_YAML) {
		snprintf(err, errlen, "template: %zu bytes, over the limit of %u", len, LIMIT_JT_YAML);
		return ERR_TOO_BIG;
	}
	if ((rc = check_depth(yaml, len, err, errlen)))
		return rc;
	memset(&c, 0, sizeof(c));
	c.err = err;
	c.errlen = errlen;
	c.out = l;
	if (!yaml_parser_initialize(&parser))
		return ERR_NOMEM;
	yaml_parser_set_input_string(&parser, (const unsigned char *)yaml, len);
	if (!yaml_parser_load(&parser, &c.doc)) {
		syntax_error(&parser, err, errlen);
		yaml_parser_delete(&parser);
		return ERR_PROTO;
	}
	yaml_parser_delete(&parser);
	c.seen = json_object();
	root = yaml_document_get_root_node(&c.doc);
	if (!root) {
		snprintf(err, errlen, "line 1: the template is empty (it needs 'products' and 'scenarios')");
		rc = ERR_PROTO;
	} else {
		rc = c.seen ? walk(&c, root) : ERR_NOMEM;
	}
	json_decref(c.seen);
	yaml_document_delete(&c.doc);
	if (rc)
		jt_list_release(l);
	return rc;
}

/* --- writing */

static bool looks_special(const char *s)
{
	static const char *const words[] = { "", "~", "null", "true", "false", "yes", "no", "on", "off", "y", "n" };
	size_t i;
	char *end;

	for (i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (!strcasecmp(s, words[i]))
			return true;
	(void)strtod(s, &end);
	return end != s && !*end;
}

static int add_str(yaml_document_t *d, const char *s)
{
	return yaml_document_add_scalar(d, NULL, (yaml_char_t *)s, -1,
					looks_special(s) ? YAML_SINGLE_QUOTED_SCALAR_STYLE : YAML_ANY_SCALAR_STYLE);
}

static int add_int(yaml_document_t *d, long v)
{
	char t[24];

	snprintf(t, sizeof(t), "%ld", v);
	return yaml_document_add_scalar(d, NULL, (yaml_char_t *)t, -1, YAML_PLAIN_SCALAR_STYLE);
}

static int add_pair(yaml_document_t *d, int map, const char *key, int val)
{
	int k = yaml_document_add_scalar(d, NULL, (yaml_char_t *)key, -1, YAML_ANY_SCALAR_STYLE);

	return k && val && yaml_document_append_mapping_pair(d, map, k, val);
}

/* The emitter's output and the first error appending to it (ERR_NOMEM or
 * ERR_TOO_BIG: libyaml only says the write failed). */
struct yaml_out {
	struct buf *b;
	int rc;
};

static int write_cb(void *data, unsigned char *buffer, size_t size)
{
	struct yaml_out *o = data;

	if (!o->rc)
		o->rc = buf_append(o->b, buffer, size);
	return o->rc == 0;
}

/* The node index stored under name in idx, created by make when missing. */
static int child(yaml_document_t *d, json_t *idx, const char *name, int parent, bool seq)
{
	json_t *v = json_object_get(idx, name);
	int n;

	if (v)
		return (int)json_integer_value(v);
	n = seq ? yaml_document_add_sequence(d, NULL, YAML_BLOCK_SEQUENCE_STYLE)
		: yaml_document_add_mapping(d, NULL, YAML_BLOCK_MAPPING_STYLE);
	if (!n || !add_pair(d, parent, name, n))
		return 0;
	if (json_object_set_new(idx, name, json_integer(n)))
		return 0; /* a second mapping under the same key would follow */
	return n;
}

int jt_yaml_dump(const struct jt_list *l, long default_prio, bool defaults, struct buf *out)
{
	struct yaml_out yo = { out, 0 };
	yaml_document_t d;
	yaml_emitter_t em;
	json_t *counts = json_object(), *defmachine = json_object(), *pidx = json_object(), *aidx = json_object(),
	       *lidx = json_object();
	int root, prods, scens, defs = 0, ok = 1;
	size_t i;
	int rc = ERR_NOMEM;

	if (!counts || !defmachine || !pidx || !aidx || !lidx)
		goto out_json;
	/* The most used machine of each architecture becomes its default. */
	for (i = 0; defaults && i < l->n; i++) {
		const struct jt_entry *e = &l->v[i];
		json_t *a = json_object_get(counts, e->arch);
		if (!a && json_object_set_new(counts, e->arch, a = json_object()))
			goto out_json; /* another default machine */
		if (e->machine && json_object_set_new(a, e->machine,
						      json_integer(json_integer_value(json_object_get(a, e->machine)) + 1)))
			goto out_json;
	}
	{
		const char *arch, *m;
		json_t *a, *n;
		json_object_foreach(counts, arch, a) {
			const char *best = NULL;
			json_int_t bn = 0;
			json_object_foreach(a, m, n)
				if (json_integer_value(n) > bn || (json_integer_value(n) == bn && best && strcmp(m, best) > 0)) {
					best = m;
					bn = json_integer_value(n);
				}
			if (best && json_object_set_new(defmachine, arch, json_string(best)))
				goto out_json;
		}
	}
	if (!yaml_document_initialize(&d, NULL, NULL, NULL, 1, 1))
		goto out_json;
	root = yaml_document_add_mapping(&d, NULL, YAML_BLOCK_MAPPING_STYLE);
	prods = yaml_document_add_mapping(&d, NULL, YAML_BLOCK_MAPPING_STYLE);
	ok = root && prods && add_pair(&d, root, "products", prods);
	if (ok && json_object_size(defmachine)) {
		const char *arch;
		json_t *m;
		defs = yaml_document_add_mapping(&d, NULL, YAML_BLOCK_MAPPING_STYLE);
		ok = defs && add_pair(&d, root, "defaults", defs);
		json_object_foreach(defmachine, arch, m) {
			int am = yaml_document_add_mapping(&d, NULL, YAML_BLOCK_MAPPING_STYLE);
			ok = ok && am && add_pair(&d, defs, arch, am) &&
			     add_pair(&d, am, "machine", add_str(&d, json_string_value(m))) &&
			     add_pair(&d, am, "priority", add_int(&d, default_prio));
		}
	}
	scens = yaml_document_add_mapping(&d, NULL, YAML_BLOCK_MAPPING_STYLE);
	ok = ok && scens && add_pair(&d, root, "scenarios", scens);
	for (i = 0; ok && i < l->n; i++) {
		const struct jt_entry *e = &l->v[i];
		const char *dm = json_string_value(json_object_get(defmachine, e->arch));
		const char *key = e->name ? e->name : e->testsuite ? e->testsuite : "-";
		char lkey[1024];
		int archmap, list, item;
		bool plain = !e->name && e->machine && dm && !strcmp(e->machine, dm) &&
			     (!e->has_prio || e->prio == default_prio) && json_object_size(e->settings) == 0 &&
			     !*e->description;
		if (!json_object_get(pidx, e->product)) {
			int pm = yaml_document_add_mapping(&d, NULL, YAML_BLOCK_MAPPING_STYLE);
			ok = pm && add_pair(&d, prods, e->product, pm) && add_pair(&d, pm, "distri", add_str(&d, e->distri)) &&
			     add_pair(&d, pm, "flavor", add_str(&d, e->flavor)) &&
			     add_pair(&d, pm, "version", add_str(&d, e->version)) &&
			     !json_object_set_new(pidx, e->product, json_true());
		}
		archmap = ok ? child(&d, aidx, e->arch, scens, false) : 0;
		snprintf(lkey, sizeof(lkey), "%s\x1f%s", e->arch, e->product);
		list = 0;
		if (archmap) {
			json_t *v = json_object_get(lidx, lkey);
			if (v) {
				list = (int)json_integer_value(v);
			} else if ((list = yaml_document_add_sequence(&d, NULL, YAML_BLOCK_SEQUENCE_STYLE)) &&
				   add_pair(&d, archmap, e->product, list) &&
				   !json_object_set_new(lidx, lkey, json_integer(list))) {
				/* indexed: the next entry of the list goes under it */
			} else {
				list = 0;
			}
		}
		ok = list != 0;
		if (!ok)
			break;
		if (plain) {
			item = add_str(&d, key);
		} else {
			int attrs = yaml_document_add_mapping(&d, NULL, YAML_BLOCK_MAPPING_STYLE);
			item = yaml_document_add_mapping(&d, NULL, YAML_BLOCK_MAPPING_STYLE);
			ok = attrs && item && add_pair(&d, item, key, attrs);
			if (ok && e->machine && (!dm || strcmp(e->machine, dm)))
				ok = add_pair(&d, attrs, "machine", add_str(&d, e->machine));
			if (ok && e->has_prio && (!defaults || e->prio != default_prio))
				ok = add_pair(&d, attrs, "priority", add_int(&d, e->prio));
			if (ok && e->name)
				ok = add_pair(&d, attrs, "testsuite",
					      e->testsuite ? add_str(&d, e->testsuite)
							   : yaml_document_add_scalar(&d, NULL, (yaml_char_t *)"null", -1,
										      YAML_PLAIN_SCALAR_STYLE));
			if (ok && json_object_size(e->settings)) {
				int sm = yaml_document_add_mapping(&d, NULL, YAML_BLOCK_MAPPING_STYLE);
				const char *sk;
				json_t *sv;
				ok = sm && add_pair(&d, attrs, "settings", sm);
				json_object_foreach(e->settings, sk, sv)
					ok = ok && add_pair(&d, sm, sk, add_str(&d, json_string_value(sv)));
			}
			if (ok && *e->description)
				ok = add_pair(&d, attrs, "description", add_str(&d, e->description));
		}
		ok = ok && item && yaml_document_append_sequence_item(&d, list, item);
	}
	if (!ok) {
		yaml_document_delete(&d);
		goto out_json;
	}
	if (!yaml_emitter_initialize(&em)) {
		yaml_document_delete(&d);
		goto out_json;
	}
	yaml_emitter_set_output(&em, write_cb, &yo);
	yaml_emitter_set_unicode(&em, 1);
	yaml_emitter_set_width(&em, -1);
	rc = 0;
	if (!yaml_emitter_open(&em) || !yaml_emitter_dump(&em, &d) || !yaml_emitter_close(&em))
		rc = yo.rc ? yo.rc : em.error == YAML_MEMORY_ERROR ? ERR_NOMEM : ERR_TOO_BIG;
	yaml_emitter_delete(&em); /* yaml_emitter_dump deleted the document */
out_json:
	json_decref(counts);
	json_decref(defmachine);
	json_decref(pidx);
	json_decref(aidx);
	json_decref(lidx);
	return rc;
}
