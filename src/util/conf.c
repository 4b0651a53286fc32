/* SPDX-License-Identifier: MIT */
/* conf.c - the INI reader: bounded, line by line over an explicit length,
 * never trusting the file; entries keep their line so that every error
 * names file, line and key. Owns the entries it parsed. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "util/array.h"
#include "util/buf.h"
#include "util/conf.h"
#include "util/err.h"
#include "util/file.h"
#include "util/banned.h" /* last: after every system header */

void conf_init(struct conf *c)
{
	memset(c, 0, sizeof(*c));
}

void conf_release(struct conf *c)
{
	size_t i;

	for (i = 0; i < c->n; i++) {
		free(c->e[i].section);
		free(c->e[i].key);
		free(c->e[i].value);
	}
	for (i = 0; i < c->nsections; i++)
		free(c->sections[i]);
	free(c->e);
	free(c->sections);
	free(c->section_lines);
	free(c->path);
	memset(c, 0, sizeof(*c));
}

static void trim(const char **s, size_t *len)
{
	while (*len && isspace((unsigned char)**s)) {
		(*s)++;
		(*len)--;
	}
	while (*len && isspace((unsigned char)(*s)[*len - 1]))
		(*len)--;
}

static char *dupn(const char *s, size_t n)
{
	char *p = malloc(n + 1);
	if (p) {
		memcpy(p, s, n);
		p[n] = '\0';
	}
	return p;
}

static int add_section(struct conf *c, const char *name, size_t len, int line)
{
	size_t i;
	char **ns;
	int *nl;

	for (i = 0; i < c->nsections; i++)
		if (strlen(c->sections[i]) == len && !memcmp(c->sections[i], name, len))
			return 0;
	ns = realloc(c->sections, (c->nsections + 1) * sizeof(*ns));
	if (!ns)
		return ERR_NOMEM;
	c->sections = ns;
	nl = realloc(c->section_lines, (c->nsections + 1) * sizeof(*nl));
	if (!nl)
		return ERR_NOMEM;
	c->section_lines = nl;
	if (!(c->sections[c->nsections] = dupn(name, len)))
		return ERR_NOMEM;
	c->section_lines[c->nsections++] = line;
	return 0;
}

static int add_entry(struct conf *c, const char *sec, const char *k, size_t kl, const char *v, size_t vl, int line)
{
	struct conf_entry *e;

	if (array_grow(&c->e, &c->cap, c->n, sizeof(*c->e), 16))
		return ERR_NOMEM;
	e = &c->e[c->n];
	e->section = dupn(sec, strlen(sec));
	e->key = dupn(k, kl);
	e->value = dupn(v, vl);
	e->line = line;
	if (!e->section || !e->key || !e->value) {
		free(e->section);
		free(e->key);
		free(e->value);
		return ERR_NOMEM;
	}
	c->n++;
	return 0;
}

int conf_parse(struct conf *c, const char *text, size_t len, char *err, size_t errlen)
{
	size_t pos = 0;
	int line = 0, rc;
	char sec[256] = "";

	if (len > LIMIT_CONF_FILE) {
		err_set(err, errlen, "%zu bytes, over the limit of %u", len, LIMIT_CONF_FILE);
		return ERR_TOO_BIG;
	}
	while (pos < len) {
		const char *l = text + pos, *eq, *k, *v;
		size_t ll, kl, vl;
		const char *nl = memchr(l, '\n', len - pos);

		ll = nl ? (size_t)(nl - l) : len - pos;
		pos += ll + 1;
		line++;
		if (memchr(l, '\0', ll)) {
			err_set(err, errlen, "line %d: NUL byte", line);
			return ERR_PROTO;
		}
		trim(&l, &ll);
		if (!ll || l[0] == '#' || l[0] == ';')
			continue;
		if (l[0] == '[') {
			const char *close = memchr(l, ']', ll);
			const char *n = l + 1;
			size_t nlen;
			if (!close) {
				err_set(err, errlen, "line %d: section header without ']'", line);
				return ERR_PROTO;
			}
			nlen = (size_t)(close - n);
			trim(&n, &nlen);
			if (nlen >= sizeof(sec)) {
				err_set(err, errlen, "line %d: section name longer than %zu bytes", line, sizeof(sec) - 1);
				return ERR_PROTO;
			}
			memcpy(sec, n, nlen);
			sec[nlen] = '\0';
			if ((rc = add_section(c, n, nlen, line)))
				return rc;
			continue;
		}
		eq = memchr(l, '=', ll);
		if (!eq) {
			err_set(err, errlen, "line %d: expected 'name = value' or '[section]'", line);
			return ERR_PROTO;
		}
		k = l;
		kl = (size_t)(eq - l);
		v = eq + 1;
		vl = ll - kl - 1;
		trim(&k, &kl);
		trim(&v, &vl);
		if (!kl) {
			err_set(err, errlen, "line %d: a value without a name before '='", line);
			return ERR_PROTO;
		}
		if ((rc = add_entry(c, sec, k, kl, v, vl, line)))
			return rc;
	}
	return 0;
}

int conf_load(struct conf *c, const char *path, char *err, size_t errlen)
{
	struct buf b;
	char msg[256];
	int rc;

	buf_init(&b, LIMIT_CONF_FILE);
	rc = file_read_all(path, &b);
	if (rc) {
		err_set(err, errlen, "%s: %s", path, rc == ERR_TOO_BIG ? "over 256 KiB" : err_str(rc));
		goto out;
	}
	free(c->path);
	c->path = dupn(path, strlen(path));
	if (!c->path) {
		rc = ERR_NOMEM;
		err_set(err, errlen, "%s: out of memory", path);
		goto out;
	}
	rc = conf_parse(c, b.data ? b.data : "", b.len, msg, sizeof(msg));
	if (rc)
		err_set(err, errlen, "%s: %s", path, msg);
out:
	buf_release(&b);
	return rc;
}

const struct conf_entry *conf_get(const struct conf *c, const char *section, const char *key)
{
	size_t i = c->n;

	while (i-- > 0)
		if (!strcmp(c->e[i].section, section) && !strcmp(c->e[i].key, key))
			return &c->e[i];
	return NULL;
}

bool conf_has_section(const struct conf *c, const char *section)
{
	size_t i;

	for (i = 0; i < c->nsections; i++)
		if (!strcmp(c->sections[i], section))
			return true;
	return false;
}

void conf_where(const struct conf *c, const struct conf_entry *e, char *out, size_t outlen)
{
	snprintf(out, outlen, "%s:%d", c->path ? c->path : "-", e ? e->line : 0);
}

int conf_check_sections(const struct conf *c, const char *const *known, char *err, size_t errlen)
{
	size_t i, j;

	for (i = 0; i < c->n; i++)
		if (!c->e[i].section[0]) {
			err_set(err, errlen, "%s:%d: '%s' outside any [section]", c->path ? c->path : "-", c->e[i].line,
				c->e[i].key);
			return ERR_INVALID;
		}
	for (i = 0; i < c->nsections; i++) {
		for (j = 0; known[j]; j++)
			if (!strcmp(c->sections[i], known[j]))
				break;
		if (!known[j]) {
			char list[256] = "";
			for (j = 0; known[j]; j++)
				snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s[%s]", j ? ", " : "", known[j]);
			err_set(err, errlen, "%s:%d: unknown section [%s] (known: %s)", c->path ? c->path : "-",
				c->section_lines[i], c->sections[i], list);
			return ERR_INVALID;
		}
	}
	return 0;
}

int conf_bool(const char *v, bool *out)
{
	static const char *const yes[] = { "true", "yes", "on", "1" }, *const no[] = { "false", "no", "off", "0" };
	size_t i;

	for (i = 0; i < 4; i++) {
		if (!strcasecmp(v, yes[i])) {
			*out = true;
			return 0;
		}
		if (!strcasecmp(v, no[i])) {
			*out = false;
			return 0;
		}
	}
	return ERR_INVALID;
}

int conf_pick(const char *cli, const char **path, char *err, size_t errlen)
{
	const char *env = getenv("VIGIL_CONFIG");

	*path = NULL;
	if (cli) {
		if (!file_exists(cli)) {
			err_set(err, errlen, "--config %s: no such file", cli);
			return ERR_NOT_FOUND;
		}
		*path = cli;
		return 0;
	}
	if (env && *env) {
		if (!file_exists(env)) {
			err_set(err, errlen, "$VIGIL_CONFIG %s: no such file", env);
			return ERR_NOT_FOUND;
		}
		*path = env;
		return 0;
	}
	if (file_exists(CONF_DEFAULT_PATH))
		*path = CONF_DEFAULT_PATH;
	return 0;
}

const char *conf_argv_value(int argc, char **argv, const char *name, bool *missing)
{
	const char *v = NULL;
	size_t nl = strlen(name);
	int i;

	*missing = false;
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--"))
			break;
		if (strncmp(a, "--", 2) || strncmp(a + 2, name, nl))
			continue;
		if (a[2 + nl] == '=') {
			v = a + 3 + nl;
			*missing = false;
		} else if (a[2 + nl] == '\0') {
			if (i + 1 < argc) {
				v = argv[++i];
				*missing = false;
			} else {
				*missing = true;
			}
		}
	}
	return v;
}

int conf_apply_options(const struct conf *c, const char *section, const struct option *opts,
		       const char *const *skip, conf_opt_fn fn, void *ctx, char *err, size_t errlen)
{
	size_t i, j;
	char where[600], msg[512];

	for (i = 0; i < c->n; i++) {
		const struct conf_entry *e = &c->e[i];
		const struct option *o = NULL;
		bool skipped = false, on = true;

		if (strcmp(e->section, section))
			continue;
		conf_where(c, e, where, sizeof(where));
		for (j = 0; skip && skip[j]; j++)
			if (!strcmp(skip[j], e->key))
				skipped = true;
		for (j = 0; !skipped && opts[j].name; j++)
			if (!strcmp(opts[j].name, e->key))
				o = &opts[j];
		if (!o) {
			err_set(err, errlen, "%s: [%s] %s: unknown key (the keys are the long options of the command, "
				"see --help)", where, section, e->key);
			return ERR_INVALID;
		}
		if (o->has_arg == no_argument) {
			if (conf_bool(e->value, &on)) {
				err_set(err, errlen, "%s: [%s] %s: '%s' is not a boolean (true or false)", where, section,
					e->key, e->value);
				return ERR_INVALID;
			}
			if (!on)
				continue;
		} else if (!e->value[0] && o->has_arg == required_argument) {
			err_set(err, errlen, "%s: [%s] %s: no value", where, section, e->key);
			return ERR_INVALID;
		}
		msg[0] = '\0';
		if (fn(ctx, o->val, o->has_arg == no_argument ? NULL : e->value, msg, sizeof(msg))) {
			err_set(err, errlen, "%s: [%s] %s: %s", where, section, e->key, msg[0] ? msg : "bad value");
			return ERR_INVALID;
		}
	}
	return 0;
}
