/* SPDX-License-Identifier: MIT */
/* jsonw.c - JSON strings and numbers appended to a buf (RFC 8259): runs of
 * bytes that need no escape are copied at once. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include "util/jsonw.h"
#include "util/banned.h" /* last: after every system header */

/* The length of the valid UTF-8 sequence at s (lead byte >= 0x80); 0 if it
 * is not one (overlong, a surrogate, above U+10FFFF, cut short). */
static size_t utf8_len(const unsigned char *s)
{
	unsigned char c = s[0];
	size_t n, i;
	uint32_t cp;

	if (c >= 0xc2 && c <= 0xdf)
		n = 2, cp = c & 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3, cp = c & 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4, cp = c & 0x07;
	else
		return 0;
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0; /* also the terminating NUL */
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if ((n == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	return n;
}

int jsonw_str(struct buf *b, const char *s)
{
	const unsigned char *p = (const unsigned char *)s, *run;
	int rc;

	if (!s)
		return buf_append(b, "null", 4);
	if ((rc = buf_append(b, "\"", 1)))
		return rc;
	for (;;) {
		char esc[8];
		size_t n;
		for (run = p; *p >= 0x20 && *p != '"' && *p != '\\' && *p < 0x80; p++)
			;
		if (p > run && (rc = buf_append(b, run, (size_t)(p - run))))
			return rc;
		if (!*p)
			break;
		if (*p >= 0x80) {
			if ((n = utf8_len(p)))
				rc = buf_append(b, p, n);
			else
				rc = buf_append(b, "\xef\xbf\xbd", 3), n = 1; /* U+FFFD */
			p += n;
		} else {
			switch (*p) {
			case '"': rc = buf_append(b, "\\\"", 2); break;
			case '\\': rc = buf_append(b, "\\\\", 2); break;
			case '\n': rc = buf_append(b, "\\n", 2); break;
			case '\r': rc = buf_append(b, "\\r", 2); break;
			case '\t': rc = buf_append(b, "\\t", 2); break;
			case '\b': rc = buf_append(b, "\\b", 2); break;
			case '\f': rc = buf_append(b, "\\f", 2); break;
			default:
				snprintf(esc, sizeof(esc), "\\u%04x", *p);
				rc = buf_append(b, esc, 6);
			}
			p++;
		}
		if (rc)
			return rc;
	}
	return buf_append(b, "\"", 1);
}

int jsonw_key(struct buf *b, const char *s)
{
	int rc = jsonw_str(b, s);

	return rc ? rc : buf_append(b, ":", 1);
}

int jsonw_int(struct buf *b, int64_t v)
{
	char t[24];
	int n = snprintf(t, sizeof(t), "%" PRId64, v);

	return buf_append(b, t, (size_t)n);
}
