/* SPDX-License-Identifier: MIT */
/* vars.c - the job's variable store, loaded from vars.json files and
 * --var K=V, written back as vars.json in the results. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "runner/core/vars.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/file.h"
#include "util/limits.h"
#include "util/str.h"
#include "util/banned.h" /* last: after every system header */

int vars_init(struct vars *v)
{
	v->obj = json_object();
	return v->obj ? 0 : ERR_NOMEM;
}

void vars_release(struct vars *v)
{
	json_decref(v->obj);
	v->obj = NULL;
}

const char *vars_get(const struct vars *v, const char *key)
{
	return json_string_value(json_object_get(v->obj, key));
}

const char *vars_get_cb(void *v, const char *key)
{
	return vars_get(v, key);
}

long vars_get_long(const struct vars *v, const char *key, long dflt)
{
	const char *s = vars_get(v, key);
	double d;
	if (!s || str_to_double(s, &d))
		return dflt;
	return (long)d;
}

double vars_get_double(const struct vars *v, const char *key, double dflt)
{
	const char *s = vars_get(v, key);
	double d;
	if (!s || str_to_double(s, &d))
		return dflt;
	return d;
}

int vars_get_bool(const struct vars *v, const char *key, int dflt)
{
	const char *s = vars_get(v, key);
	if (!s)
		return dflt;
	/* Perl truth: "", "0" are false. */
	return !(s[0] == '\0' || !strcmp(s, "0"));
}

int vars_valid_key(const char *key)
{
	size_t i, n = strlen(key);
	if (n == 0)
		return 0;
	if (n > 2 && !strcmp(key + n - 2, "[]"))
		n -= 2;
	for (i = 0; i < n; i++)
		if (!(isupper((unsigned char)key[i]) || isdigit((unsigned char)key[i]) || key[i] == '_'))
			return 0;
	return n > 0;
}

int vars_set(struct vars *v, const char *key, const char *value)
{
	if (!vars_valid_key(key))
		return ERR_INVALID;
	return json_object_set_new(v->obj, key, json_string(value)) ? ERR_NOMEM : 0;
}

/* The text of a scalar variable in *out (new string): 0, ERR_INVALID for
 * an object or array, ERR_NOMEM. */
static int json_to_var_text(json_t *val, char **out)
{
	char tmp[64];
	const char *t = tmp;

	switch (json_typeof(val)) {
	case JSON_STRING:
		t = json_string_value(val);
		break;
	case JSON_INTEGER:
		snprintf(tmp, sizeof(tmp), "%lld", (long long)json_integer_value(val));
		break;
	case JSON_REAL:
		snprintf(tmp, sizeof(tmp), "%.15g", json_real_value(val));
		break;
	case JSON_TRUE:
		t = "1";
		break;
	case JSON_FALSE:
		t = "0";
		break;
	case JSON_NULL:
		t = "";
		break;
	default:
		return ERR_INVALID;
	}
	return (*out = str_dup(t)) ? 0 : ERR_NOMEM;
}

int vars_load_file(struct vars *v, const char *path, int only_missing, char *err, size_t errlen)
{
	json_error_t jerr;
	json_t *root;
	const char *key;
	json_t *val;
	int rc = 0;

	root = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
	if (!root) {
		snprintf(err, errlen, "%s:%d:%d: %s", path, jerr.line, jerr.column, jerr.text);
		return ERR_PROTO;
	}
	if (!json_is_object(root)) {
		snprintf(err, errlen, "%s: expected a JSON object of variables", path);
		json_decref(root);
		return ERR_PROTO;
	}
	json_object_foreach(root, key, val) {
		char *text;
		if (!vars_valid_key(key)) {
			snprintf(err, errlen, "%s: variable '%s': keys must be upper case letters, digits and _", path, key);
			rc = ERR_INVALID;
			break;
		}
		if ((rc = json_to_var_text(val, &text))) {
			if (rc == ERR_NOMEM)
				snprintf(err, errlen, "%s: variable '%s': out of memory", path, key);
			else
				snprintf(err, errlen, "%s: variable '%s': value must be a string, number or boolean", path,
					 key);
			break;
		}
		if (!only_missing || !vars_get(v, key))
			rc = vars_set(v, key, text);
		free(text);
		if (rc)
			break;
	}
	json_decref(root);
	return rc;
}

int vars_set_assignment(struct vars *v, const char *kv, char *err, size_t errlen)
{
	const char *eq = strchr(kv, '=');
	char *key;
	size_t i;
	int rc;

	if (!eq || eq == kv) {
		snprintf(err, errlen, "variable '%s': expected KEY=VALUE", kv);
		return ERR_INVALID;
	}
	key = strndup(kv, (size_t)(eq - kv));
	if (!key)
		return ERR_NOMEM;
	for (i = 0; key[i]; i++)
		key[i] = (char)toupper((unsigned char)key[i]);
	rc = vars_set(v, key, eq + 1);
	if (rc == ERR_INVALID)
		snprintf(err, errlen, "variable '%s': keys must be letters, digits and _", key);
	free(key);
	return rc;
}

static int expand_one(const struct vars *v, const char *in, struct buf *out, char *err, size_t errlen)
{
	const char *p = in;
	int rc = 0;

	while (*p && !rc) {
		const char *end;
		if (p[0] == '$' && p[1] == '{' && (end = strchr(p + 2, '}'))) {
			char *name = strndup(p + 2, (size_t)(end - p - 2));
			const char *val;
			if (!name)
				return ERR_NOMEM;
			val = getenv(name);
			if (!val)
				val = vars_get(v, name);
			if (!val) {
				snprintf(err, errlen, "value '%s': ${%s} is neither an environment variable nor a job variable", in, name);
				free(name);
				return ERR_NOT_FOUND;
			}
			free(name);
			rc = buf_puts(out, val);
			p = end + 1;
		} else {
			rc = buf_append(out, p, 1);
			p++;
		}
	}
	return rc;
}

int vars_expand(struct vars *v, char *err, size_t errlen)
{
	const char *key;
	json_t *val;
	struct buf b;
	int rc = 0;

	buf_init(&b, LIMIT_VARS_JSON);
	json_object_foreach(v->obj, key, val) {
		const char *s = json_string_value(val);
		if (!s || !strstr(s, "${"))
			continue;
		buf_reset(&b);
		rc = expand_one(v, s, &b, err, errlen);
		if (rc)
			break;
		json_string_set(val, b.data ? b.data : "");
	}
	buf_release(&b);
	return rc;
}

int vars_save(const struct vars *v, const char *path)
{
	char *text = json_dumps(v->obj, JSON_INDENT(3) | JSON_SORT_KEYS);
	int rc;
	if (!text)
		return ERR_NOMEM;
	rc = file_write_all(path, text, strlen(text));
	free(text);
	return rc;
}
