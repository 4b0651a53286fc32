/* SPDX-License-Identifier: MIT */
/* params.c - application/x-www-form-urlencoded parameters from query strings
 * and request bodies, bounded by LIMIT_API_PARAMS, with small helpers the
 * handlers share. Parses untrusted bytes with explicit lengths. */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "server/http/api.h"
#include "server/store/jbuild.h"
#include "util/err.h"
#include "util/str.h"
#include "util/banned.h" /* last: after every system header */

void params_init(struct params *p)
{
	p->v = NULL;
	p->n = p->cap = 0;
}

void params_release(struct params *p)
{
	size_t i;

	for (i = 0; i < p->n; i++) {
		free(p->v[i].key);
		free(p->v[i].value);
	}
	free(p->v);
	params_init(p);
}

static int push(struct params *p, char *key, char *value)
{
	if (p->n >= LIMIT_API_PARAMS) {
		free(key);
		free(value);
		return ERR_TOO_BIG;
	}
	if (p->n == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 16;
		struct param *v = realloc(p->v, cap * sizeof(*v));
		if (!v) {
			free(key);
			free(value);
			return ERR_NOMEM;
		}
		p->v = v;
		p->cap = cap;
	}
	p->v[p->n].key = key;
	p->v[p->n].value = value;
	p->n++;
	return 0;
}

int params_add(struct params *p, const char *key, const char *value)
{
	char *k = strdup(key), *v = strdup(value);

	if (!k || !v) {
		free(k);
		free(v);
		return ERR_NOMEM;
	}
	return push(p, k, v);
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = (char)tolower((unsigned char)c);
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

#define DECODE_NOMEM ((size_t)-1) /* *bad of decode when out of memory */

/* Decode s[0..len) into a new string; NULL and *bad = offset on a bad
 * escape, or DECODE_NOMEM. */
static char *decode(const char *s, size_t len, size_t *bad)
{
	char *out = malloc(len + 1);
	size_t i, o = 0;

	if (!out) {
		*bad = DECODE_NOMEM;
		return NULL;
	}
	for (i = 0; i < len; i++) {
		if (s[i] == '+') {
			out[o++] = ' ';
		} else if (s[i] == '%') {
			if (len - i < 3 || hexval(s[i + 1]) < 0 || hexval(s[i + 2]) < 0 ||
			    (hexval(s[i + 1]) == 0 && hexval(s[i + 2]) == 0)) {
				*bad = i;
				free(out);
				return NULL;
			}
			out[o++] = (char)(hexval(s[i + 1]) * 16 + hexval(s[i + 2]));
			i += 2;
		} else if (s[i] == '\0') {
			*bad = i;
			free(out);
			return NULL;
		} else {
			out[o++] = s[i];
		}
	}
	out[o] = '\0';
	return out;
}

int params_parse(struct params *p, const char *s, size_t len, char *msg, size_t msglen)
{
	size_t pos = 0;

	while (pos < len) {
		const char *amp = memchr(s + pos, '&', len - pos);
		size_t end = amp ? (size_t)(amp - s) : len;
		const char *eq = memchr(s + pos, '=', end - pos);
		size_t keyend = eq ? (size_t)(eq - s) : end;
		size_t bad = 0;
		char *k, *v;
		int rc;

		if (end > pos) {
			k = decode(s + pos, keyend - pos, &bad);
			if (!k && bad == DECODE_NOMEM) {
				snprintf(msg, msglen, "out of memory");
				return ERR_NOMEM;
			}
			if (!k) {
				snprintf(msg, msglen, "bad percent escape in parameter name at byte %zu", pos + bad);
				return ERR_PROTO;
			}
			v = eq ? decode(eq + 1, end - keyend - 1, &bad) : strdup("");
			if (!v && (!eq || bad == DECODE_NOMEM)) {
				free(k);
				snprintf(msg, msglen, "out of memory");
				return ERR_NOMEM;
			}
			if (!v) {
				free(k);
				/* s is not NUL-terminated: the name is printed by its length */
				snprintf(msg, msglen, "bad percent escape in the value of '%.*s' at byte %zu",
					 (int)(keyend - pos < 40 ? keyend - pos : 40), s + pos, keyend + 1 + bad);
				return ERR_PROTO;
			}
			/* Everything behind the API is text: a name or value that is
			 * not UTF-8 is refused here, once for every route. */
			if (!str_utf8_valid(k, strlen(k), &bad) || !str_utf8_valid(v, strlen(v), &bad)) {
				size_t kl = strlen(k), n = kl > 40 ? 40 : kl;
				bool name_ok = str_utf8_valid(k, kl, NULL);
				while (name_ok && n < kl && ((unsigned char)k[n] & 0xc0) == 0x80)
					n--; /* cut the name on a character boundary */
				snprintf(msg, msglen, "parameter '%.*s': not valid UTF-8 (decoded byte %zu)",
					 name_ok ? (int)n : 10, name_ok ? k : "(its name)", bad);
				free(k);
				free(v);
				return ERR_PROTO;
			}
			if ((rc = push(p, k, v))) {
				if (rc == ERR_NOMEM)
					snprintf(msg, msglen, "out of memory");
				else
					snprintf(msg, msglen, "more than %u parameters", LIMIT_API_PARAMS);
				return rc;
			}
		}
		pos = end + 1;
	}
	return 0;
}

const char *params_get(const struct params *p, const char *key)
{
	size_t i;

	for (i = p->n; i-- > 0;)
		if (!strcmp(p->v[i].key, key))
			return p->v[i].value;
	return NULL;
}

void api_error(struct api_resp *out, int status, const char *fmt, ...)
{
	char text[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	/* The text may quote what the client sent (a path, a name) or be cut
	 * inside a character: JSON needs UTF-8, so each byte that is not
	 * becomes '?' (else json_pack fails and the answer is a 500). */
	for (;;) {
		size_t len = strlen(text), bad = 0;
		if (str_utf8_valid(text, len, &bad) || bad >= len)
			break;
		text[bad] = '?';
	}
	json_decref(out->json);
	out->status = status;
	out->json = json_pack("{s:s}", "error", text);
}

void api_error_code(struct api_resp *out, int rc, const char *msg)
{
	if (rc == ERR_NOMEM) {
		api_nomem(out);
		return;
	}
	api_error(out, rc == ERR_NOT_FOUND ? 404 : rc == ERR_INVALID ? 400 : rc == ERR_BADSTATE ? 403 : 500, "%s", msg);
}

void api_nomem(struct api_resp *out)
{
	api_error(out, 503, "out of memory: try again later");
}

void api_json(struct api_resp *out, json_t *j)
{
	json_decref(out->json);
	out->json = j;
	out->status = j ? 200 : 503; /* a NULL answer: its construction ran out of memory */
}

void api_json_text(struct api_resp *out, char *text)
{
	json_decref(out->json);
	out->json = NULL;
	free(out->text);
	out->text = text;
	out->ctype = "application/json";
	out->status = text ? 200 : 503;
}

char *api_upper(const char *s)
{
	char *u = strdup(s), *c;

	for (c = u; c && *c; c++)
		*c = (char)toupper((unsigned char)*c);
	return u;
}

int api_parse_id(const char *s, int64_t *out)
{
	long v;

	if (!s || str_to_long(s, &v) || v <= 0)
		return ERR_INVALID;
	*out = v;
	return 0;
}

/* Decimal digits at *s into *v (no sign, overflow refused); advances *s. */
static bool range_number(const char **s, uint64_t *v)
{
	const char *p = *s;
	uint64_t n = 0;

	if (!isdigit((unsigned char)*p))
		return false;
	for (; isdigit((unsigned char)*p); p++) {
		if (n > (UINT64_MAX - 9) / 10)
			return false;
		n = n * 10 + (uint64_t)(*p - '0');
	}
	*s = p;
	*v = n;
	return true;
}

enum api_range api_range_parse(const char *header, uint64_t size, uint64_t *first, uint64_t *last)
{
	const char *p = header;
	uint64_t a, b;

	if (!p || strncmp(p, "bytes=", 6))
		return API_RANGE_WHOLE;
	p += 6;
	while (*p == ' ')
		p++;
	if (strchr(p, ','))
		return API_RANGE_WHOLE; /* several ranges: the whole file answers them all */
	if (*p == '-') {
		p++;
		if (!range_number(&p, &b) || *p)
			return API_RANGE_WHOLE;
		if (b == 0 || size == 0)
			return API_RANGE_UNSATISFIABLE;
		*first = b >= size ? 0 : size - b;
		*last = size - 1;
		return API_RANGE_PARTIAL;
	}
	if (!range_number(&p, &a) || *p++ != '-')
		return API_RANGE_WHOLE;
	if (*p) {
		if (!range_number(&p, &b) || *p || b < a)
			return API_RANGE_WHOLE;
	} else {
		b = UINT64_MAX;
	}
	if (a >= size)
		return API_RANGE_UNSATISFIABLE;
	*first = a;
	*last = b >= size ? size - 1 : b;
	return API_RANGE_PARTIAL;
}

void api_json_built(const struct jbuild *b, struct api_resp *out, json_t *j)
{
	if (jbuild_failed(b) || !j) {
		json_decref(j);
		api_nomem(out);
		return;
	}
	api_json(out, j);
}
