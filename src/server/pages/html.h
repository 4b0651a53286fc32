/* SPDX-License-Identifier: MIT */
/* html.h - HTML written by the server (web pages' first view) escaped by
 * construction: markup enters only as string literals (HTML(), the
 * attribute-name macros reject anything else at compile time); every
 * value goes through html_text / an attribute writer, which escape it;
 * links take same-site paths and http(s) URLs only. Errors are sticky:
 * write on, check h->err once at the end. */
#ifndef VIGIL_HTML_H
#define VIGIL_HTML_H

#include <stddef.h>
#include "util/buf.h"

struct html {
	struct buf buf;
	int err; /* the first buf error, 0 while none */
};

void html_init(struct html *h, size_t max);
void html_release(struct html *h);

/* Markup: a string literal only ("" lit "" fails to compile otherwise). */
#define HTML(h, lit) html_lit_((h), "" lit "", sizeof("" lit "") - 1)
void html_lit_(struct html *h, const char *s, size_t n);

/* Text (NULL writes nothing): & < > " ' escaped. */
void html_text(struct html *h, const char *s);
void html_textf(struct html *h, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* An attribute ' name="value"', the value escaped; name a literal. */
#define HTML_ATTR(h, name, value) html_attr_((h), "" name "", (value))
#define HTML_ATTRF(h, name, ...) html_attrf_((h), "" name "", __VA_ARGS__)
void html_attr_(struct html *h, const char *name, const char *value);
void html_attrf_(struct html *h, const char *name, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* ' href="url"' when url is a same-site path ("/x", not "//x"), a place
 * in the page ("#x") or an http(s) URL; nothing otherwise. */
void html_href(struct html *h, const char *url);
/* The same for a URL made with printf (its values are escaped with the rest). */
void html_hreff(struct html *h, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Append one query parameter to the URL in out: "?key=value" when out has
 * no '?' yet, else "&key=value"; value percent-encoded as a browser's
 * URLSearchParams does; nothing when value is NULL or "". */
int html_query_add(struct buf *out, const char *key, const char *value);

/* s percent-encoded onto out as encodeURIComponent() does (UTF-8 bytes;
 * letters, digits and -_.!~*'() as they are): 0, else a buf error. */
int html_uri_component(struct buf *out, const char *s);

#endif
