/* SPDX-License-Identifier: MIT */
/* html.c - the escaping HTML writer of html.h. */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "server/pages/html.h"
#include "util/banned.h" /* last: after every system header */

void html_init(struct html *h, size_t max)
{
	buf_init(&h->buf, max);
	h->err = 0;
}

void html_release(struct html *h)
{
	buf_release(&h->buf);
	h->err = 0;
}

static void put(struct html *h, const char *s, size_t n)
{
	if (!h->err && n)
		h->err = buf_append(&h->buf, s, n);
}

void html_lit_(struct html *h, const char *s, size_t n)
{
	put(h, s, n);
}

/* s[0..n) with the five markup characters as entities. */
static void escaped(struct html *h, const char *s, size_t n)
{
	size_t i, from = 0;

	for (i = 0; i < n; i++) {
		const char *e;

		switch (s[i]) {
		case '&': e = "&amp;"; break;
		case '<': e = "&lt;"; break;
		case '>': e = "&gt;"; break;
		case '"': e = "&quot;"; break;
		case '\'': e = "&#39;"; break;
		default: continue;
		}
		put(h, s + from, i - from);
		put(h, e, strlen(e));
		from = i + 1;
	}
	put(h, s + from, n - from);
}

void html_text(struct html *h, const char *s)
{
	if (s)
		escaped(h, s, strlen(s));
}

/* vprintf into a heap string (NULL on failure). */
static char *vformat(const char *fmt, va_list ap)
{
	va_list ap2;
	char *s;
	int n;

	va_copy(ap2, ap);
	n = vsnprintf(NULL, 0, fmt, ap2);
	va_end(ap2);
	if (n < 0 || !(s = malloc((size_t)n + 1)))
		return NULL;
	vsnprintf(s, (size_t)n + 1, fmt, ap);
	return s;
}

/* vformat, a failure recorded in h->err. */
static char *hformat(struct html *h, const char *fmt, va_list ap)
{
	char *s = vformat(fmt, ap);

	if (!s && !h->err)
		h->err = -1;
	return s;
}

void html_textf(struct html *h, const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	s = hformat(h, fmt, ap);
	va_end(ap);
	html_text(h, s);
	free(s);
}

void html_attr_(struct html *h, const char *name, const char *value)
{
	put(h, " ", 1);
	put(h, name, strlen(name));
	put(h, "=\"", 2);
	html_text(h, value ? value : "");
	put(h, "\"", 1);
}

void html_attrf_(struct html *h, const char *name, const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	s = hformat(h, fmt, ap);
	va_end(ap);
	html_attr_(h, name, s);
	free(s);
}

void html_href(struct html *h, const char *url)
{
	if (!url)
		return;
	if ((url[0] == '/' && url[1] != '/' && url[1] != '\\') || url[0] == '#' || !strncmp(url, "http://", 7) ||
	    !strncmp(url, "https://", 8))
		html_attr_(h, "href", url);
}

void html_hreff(struct html *h, const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	s = hformat(h, fmt, ap);
	va_end(ap);
	html_href(h, s);
	free(s);
}

/* value percent-encoded onto out: bytes in keep (and ASCII letters and
 * digits) as they are, ' ' as '+' when plus, every other byte as %XX. */
static int encode(struct buf *out, const char *value, const char *keep, bool plus)
{
	static const char hex[] = "0123456789ABCDEF";
	const unsigned char *p;
	int rc = 0;

	for (p = (const unsigned char *)value; *p && !rc; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || strchr(keep, *p)) {
			rc = buf_append(out, p, 1);
		} else if (*p == ' ' && plus) {
			rc = buf_puts(out, "+");
		} else {
			char e[3] = { '%', hex[*p >> 4], hex[*p & 15] };
			rc = buf_append(out, e, 3);
		}
	}
	return rc;
}

int html_query_add(struct buf *out, const char *key, const char *value)
{
	int rc;

	if (!value || !*value)
		return 0;
	rc = buf_puts(out, strchr(out->data ? out->data : "", '?') ? "&" : "?");
	rc = rc || buf_puts(out, key);
	rc = rc || buf_puts(out, "=");
	return rc || encode(out, value, "-_.*", true);
}

int html_uri_component(struct buf *out, const char *s)
{
	return encode(out, s, "-_.!~*'()", false);
}
