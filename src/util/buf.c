/* SPDX-License-Identifier: MIT */
/* buf.c - growable buffers; every growth is checked against the limit
 * before allocating. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "util/buf.h"
#include "util/err.h"
#include "util/banned.h" /* last: after every system header */

void buf_init(struct buf *b, size_t max)
{
	b->data = NULL;
	b->len = b->cap = 0;
	b->max = max;
}

void buf_release(struct buf *b)
{
	free(b->data);
	buf_init(b, b->max);
}

void buf_reset(struct buf *b)
{
	b->len = 0;
	if (b->data)
		b->data[0] = '\0';
}

static int buf_reserve(struct buf *b, size_t extra)
{
	size_t need, cap;
	char *p;

	if (extra > b->max || b->len > b->max - extra)
		return ERR_TOO_BIG;
	need = b->len + extra + 1;
	if (need <= b->cap)
		return 0;
	cap = b->cap ? b->cap : 64;
	while (cap < need)
		cap = cap > SIZE_MAX / 2 ? need : cap * 2;
	p = realloc(b->data, cap);
	if (!p)
		return ERR_NOMEM;
	b->data = p;
	b->cap = cap;
	return 0;
}

int buf_append(struct buf *b, const void *data, size_t len)
{
	int rc = buf_reserve(b, len);
	if (rc)
		return rc;
	if (len)
		memcpy(b->data + b->len, data, len);
	b->len += len;
	b->data[b->len] = '\0';
	return 0;
}

int buf_puts(struct buf *b, const char *s)
{
	return buf_append(b, s, strlen(s));
}

int buf_printf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	int n, rc;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return ERR_INVALID;
	rc = buf_reserve(b, (size_t)n);
	if (rc)
		return rc;
	va_start(ap, fmt);
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
	return 0;
}

void buf_consume(struct buf *b, size_t n)
{
	if (n >= b->len) {
		buf_reset(b);
		return;
	}
	memmove(b->data, b->data + n, b->len - n);
	b->len -= n;
	b->data[b->len] = '\0';
}

char *buf_steal(struct buf *b)
{
	char *p = b->data;
	if (!p)
		p = calloc(1, 1);
	buf_init(b, b->max);
	return p;
}
