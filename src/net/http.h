/* SPDX-License-Identifier: MIT */
/* http.h - the signed HTTP client of the worker and `vigil client`:
 * libcurl plus the signature headers of net/hmac.h: scheme 2 (X-API-Key,
 * X-API-Microtime, X-API-Nonce, X-API-Content-SHA256, X-API-Signature)
 * towards vigil's server, openQA's legacy ones (X-API-Key,
 * X-API-Microtime, X-API-Hash) towards openQA. One connection handle,
 * reused; not thread-safe. */
#ifndef VIGIL_NET_HTTP_H
#define VIGIL_NET_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include "util/buf.h"

#define LIMIT_HTTP_RESPONSE (8u << 20)

/* How requests are signed. AUTO: scheme 2 until a 403 comes without
 * vigil's X-Vigil-Signature header (openQA), then legacy from then on. */
enum http_sign { HTTP_SIGN_AUTO = 0, HTTP_SIGN_V2, HTTP_SIGN_LEGACY };

struct http_client {
	enum http_sign sign;
	char *base;      /* scheme://host[:port], no trailing slash */
	char *key;       /* NULL: unsigned requests */
	char *secret;
	void *curl;      /* CURL * */
	volatile int *cancel; /* when non-NULL and set, transfers abort (ERR_CLOSED) */
	const char *job_token; /* borrowed; non-NULL: sent as X-API-JobToken (a job's lock/mm calls) */
};

/* Fill c for base (a URL such as http://host:9526; a bare host gets
 * http://). key/secret may be NULL. 0 or ERR_NOMEM/ERR_IO. */
int http_client_init(struct http_client *c, const char *base, const char *key, const char *secret);
void http_client_release(struct http_client *c);

/* Send method target (path + query, already URL-encoded, e.g.
 * "/api/v1/jobs?x=1") with an optional body of content type ctype (NULL
 * body: none), waiting at most timeout_s. The response body goes to resp
 * (cleared first, limit resp->max), the status to *status. 0 when a
 * response came (any status), ERR_IO/ERR_TIMEOUT/ERR_CLOSED otherwise,
 * with curl's reason in err. */
int http_request(struct http_client *c, const char *method, const char *target, const char *ctype,
		 const void *body, size_t len, long timeout_s, long *status, struct buf *resp, char *err,
		 size_t errlen);

/* POST the file at path as the raw body (application/octet-stream). */
int http_upload_file(struct http_client *c, const char *target, const char *path, long timeout_s, long *status,
		     struct buf *resp, char *err, size_t errlen);

/* One field of a multipart/form-data body: a text value, or the file at
 * path sent with the file name filename (NULL: path's base name). */
struct http_part {
	const char *name;
	const char *value;    /* a text field when non-NULL */
	const char *path;     /* else this file's content */
	const char *filename;
};

/* POST the fields as multipart/form-data (openQA's artefact and asset
 * uploads; signed with the legacy scheme, whose signature covers no body:
 * ERR_INVALID when the client must sign with scheme 2). */
int http_upload_form(struct http_client *c, const char *target, const struct http_part *parts, size_t nparts,
		     long timeout_s, long *status, struct buf *resp, char *err, size_t errlen);

/* GET target into the file path (created 0600), following up to 3
 * redirects. The value of response header hdr (may be NULL) into
 * hdr_value. */
int http_download(struct http_client *c, const char *target, const char *path, long timeout_s, long *status,
		  const char *hdr, char *hdr_value, size_t hvlen, char *err, size_t errlen);

/* Append "key=value" URL-encoded to b, with '?' or '&' before it; spaces
 * become '+' (what openQA verifies the signature over). 0 or ERR_*. */
int http_query_add(struct buf *b, const char *key, const char *value);

/* Append "key=value" URL-encoded to the form body b, with '&' before it
 * unless b is empty (application/x-www-form-urlencoded). 0 or ERR_*. */
int http_form_add(struct buf *b, const char *key, const char *value);

#endif
