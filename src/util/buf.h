/* SPDX-License-Identifier: MIT */
/* buf.h - growable byte buffers with a hard maximum. The data is always
 * NUL-terminated so text can be used as a C string. */
#ifndef VIGIL_BUF_H
#define VIGIL_BUF_H

#include <stddef.h>

struct buf {
	char *data;    /* NULL until the first append; NUL-terminated */
	size_t len;
	size_t cap;
	size_t max;    /* appends beyond this fail with ERR_TOO_BIG */
};

void buf_init(struct buf *b, size_t max);
void buf_release(struct buf *b);
void buf_reset(struct buf *b); /* len = 0, keep memory */
/* 0, ERR_NOMEM or ERR_TOO_BIG (buffer unchanged on error). */
int buf_append(struct buf *b, const void *data, size_t len);
int buf_puts(struct buf *b, const char *s);
int buf_printf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Remove the first n bytes. */
void buf_consume(struct buf *b, size_t n);
/* Take ownership of the data (caller frees); the buffer is left empty. */
char *buf_steal(struct buf *b);

#endif
