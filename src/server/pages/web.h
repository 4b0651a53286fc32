/* SPDX-License-Identifier: MIT */
/* web.h - the web UI's files, embedded in the binary from web/ by
 * scripts/embed-web, and the page routes that answer with its shell. */
#ifndef VIGIL_WEB_H
#define VIGIL_WEB_H

#include <stddef.h>

struct web_file {
	const char *name;   /* "/app.js": the path under web/, with a leading slash */
	const unsigned char *data;
	size_t len;
};

/* The embedded file at name ("/app.js"), NULL if none. */
const struct web_file *web_find(const char *name);
/* Its Content-Type from the name's extension. */
const char *web_ctype(const char *name);
/* Its ETag (a quoted hash of the bytes, made once): static text. */
const char *web_etag(const struct web_file *f);

#endif
