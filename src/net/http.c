/* SPDX-License-Identifier: MIT */
/* http.c - libcurl requests signed as openQA's clients sign them. The
 * target is signed exactly as it is put on the wire, so callers encode
 * queries with http_query_add before signing. */
#define LOG_MODULE "http"
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "net/hmac.h"
#include "net/http.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/log.h"
#include "util/banned.h" /* last: after every system header */

int http_client_init(struct http_client *c, const char *base, const char *key, const char *secret)
{
	size_t n;

	memset(c, 0, sizeof(*c));
	curl_global_init(CURL_GLOBAL_DEFAULT);
	if (strstr(base, "://")) {
		c->base = strdup(base);
	} else {
		n = strlen(base) + 8;
		if ((c->base = malloc(n)))
			snprintf(c->base, n, "http://%s", base);
	}
	if (!c->base)
		return ERR_NOMEM;
	n = strlen(c->base);
	while (n && c->base[n - 1] == '/')
		c->base[--n] = '\0';
	if ((key && !(c->key = strdup(key))) || (secret && !(c->secret = strdup(secret))))
		return ERR_NOMEM;
	c->curl = curl_easy_init();
	return c->curl ? 0 : ERR_IO;
}

void http_client_release(struct http_client *c)
{
	if (c->curl)
		curl_easy_cleanup(c->curl);
	free(c->base);
	free(c->key);
	free(c->secret);
	memset(c, 0, sizeof(*c));
}

/* curl escapes a space as "%20" (and '%' as "%25"): spaces become '+',
 * the query form that openQA's server verifies the signature over (its
 * clients sign "+"; Mojo keeps a received "+" as it is). */
static void plus_spaces(char *s)
{
	char *o = s;

	for (; s && *s; s++) {
		if (s[0] == '%' && s[1] == '2' && s[2] == '0') {
			*o++ = '+';
			s += 2;
		} else {
			*o++ = *s;
		}
	}
	if (o)
		*o = '\0';
}

int http_query_add(struct buf *b, const char *key, const char *value)
{
	char *k = curl_easy_escape(NULL, key, 0), *v = curl_easy_escape(NULL, value ? value : "", 0);
	int rc;

	plus_spaces(k);
	plus_spaces(v);
	rc = k && v ? buf_printf(b, "%s%s=%s", b->data && strchr(b->data, '?') ? "&" : "?", k, v) : ERR_NOMEM;

	curl_free(k);
	curl_free(v);
	return rc;
}

int http_form_add(struct buf *b, const char *key, const char *value)
{
	char *k = curl_easy_escape(NULL, key, 0), *v = curl_easy_escape(NULL, value ? value : "", 0);
	int rc;

	plus_spaces(k);
	plus_spaces(v);
	rc = k && v ? buf_printf(b, "%s%s=%s", b->len ? "&" : "", k, v) : ERR_NOMEM;

	curl_free(k);
	curl_free(v);
	return rc;
}

static size_t write_buf(char *p, size_t sz, size_t n, void *arg)
{
	struct buf *b = arg;
	return buf_append(b, p, sz * n) ? 0 : sz * n;
}

static size_t write_fd(char *p, size_t sz, size_t n, void *arg)
{
	int fd = *(int *)arg;
	size_t len = sz * n, off = 0;

	while (off < len) {
		ssize_t w = write(fd, p + off, len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return 0;
		off += (size_t)w;
	}
	return len;
}

struct hdr_want {
	const char *name;
	char *value;
	size_t len;
};

static size_t header_cb(char *p, size_t sz, size_t n, void *arg)
{
	struct hdr_want *h = arg;
	size_t len = sz * n, nl = h->name ? strlen(h->name) : 0;

	if (h->name && len > nl + 1 && !strncasecmp(p, h->name, nl) && p[nl] == ':') {
		const char *v = p + nl + 1;
		size_t vl = len - nl - 1;
		while (vl && (*v == ' ' || *v == '\t')) {
			v++;
			vl--;
		}
		while (vl && (v[vl - 1] == '\r' || v[vl - 1] == '\n' || v[vl - 1] == ' '))
			vl--;
		if (vl >= h->len)
			vl = h->len - 1;
		memcpy(h->value, v, vl);
		h->value[vl] = '\0';
	}
	return len;
}

static int progress_cb(void *arg, curl_off_t a, curl_off_t b, curl_off_t c2, curl_off_t d)
{
	volatile int *cancel = arg;

	(void)a;
	(void)b;
	(void)c2;
	(void)d;
	return cancel && *cancel;
}

/* Common part: URL, signing headers, timeouts; then perform. */
static int perform(struct http_client *c, const char *method, const char *target, struct curl_slist *hdrs,
		   long timeout_s, long *status, char *err, size_t errlen)
{
	CURL *h = c->curl;
	char url[8192], line[128], mt[32], hash[HMAC_HEX_LEN + 1];
	CURLcode cc;
	int rc = 0;

	if ((size_t)snprintf(url, sizeof(url), "%s%s", c->base, target) >= sizeof(url)) {
		snprintf(err, errlen, "URL too long");
		curl_slist_free_all(hdrs);
		return ERR_TOO_BIG;
	}
	if (c->key && c->secret) {
		snprintf(mt, sizeof(mt), "%lld", (long long)time(NULL));
		if ((rc = hmac_sign(c->secret, target, mt, hash))) {
			snprintf(err, errlen, "cannot sign %s %s: %s", method, target, err_str(rc));
			curl_slist_free_all(hdrs);
			return rc;
		}
		snprintf(line, sizeof(line), "X-API-Key: %s", c->key);
		hdrs = curl_slist_append(hdrs, line);
		snprintf(line, sizeof(line), "X-API-Microtime: %s", mt);
		hdrs = curl_slist_append(hdrs, line);
		snprintf(line, sizeof(line), "X-API-Hash: %s", hash);
		hdrs = curl_slist_append(hdrs, line);
	}
	hdrs = curl_slist_append(hdrs, "Accept: application/json");
	hdrs = curl_slist_append(hdrs, "Expect:");
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
	curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
	curl_easy_setopt(h, CURLOPT_TIMEOUT, timeout_s);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, 10L);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, progress_cb);
	curl_easy_setopt(h, CURLOPT_XFERINFODATA, (void *)c->cancel);
	cc = curl_easy_perform(h);
	if (cc != CURLE_OK) {
		snprintf(err, errlen, "%s %s%s: %s", method, c->base, target, curl_easy_strerror(cc));
		rc = cc == CURLE_OPERATION_TIMEDOUT ? ERR_TIMEOUT : cc == CURLE_ABORTED_BY_CALLBACK ? ERR_CLOSED : ERR_IO;
	} else {
		curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, status);
	}
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, NULL);
	curl_slist_free_all(hdrs);
	return rc;
}

int http_request(struct http_client *c, const char *method, const char *target, const char *ctype,
		 const void *body, size_t len, long timeout_s, long *status, struct buf *resp, char *err,
		 size_t errlen)
{
	CURL *h = c->curl;
	struct curl_slist *hdrs = NULL;
	char line[160];

	curl_easy_reset(h);
	buf_reset(resp);
	if (body || !strcmp(method, "POST")) {
		snprintf(line, sizeof(line), "Content-Type: %s", ctype ? ctype : "application/x-www-form-urlencoded");
		hdrs = curl_slist_append(hdrs, line);
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, body ? (const char *)body : "");
		curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)(body ? len : 0));
	}
	if (!strcmp(method, "HEAD"))
		curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, write_buf);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, resp);
	return perform(c, method, target, hdrs, timeout_s, status, err, errlen);
}

static size_t read_fd(char *p, size_t sz, size_t n, void *arg)
{
	ssize_t r;

	do
		r = read(*(int *)arg, p, sz * n);
	while (r < 0 && errno == EINTR);
	return r < 0 ? CURL_READFUNC_ABORT : (size_t)r;
}

/* Back to the start of the body when curl sends it again: on a fresh
 * connection after a kept-alive one turned out dead mid-request (a server
 * restarted, a network cut). Without it the upload fails at once with
 * "rewinding of the data stream failed". */
static int seek_fd(void *arg, curl_off_t off, int origin)
{
	return lseek(*(int *)arg, (off_t)off, origin) < 0 ? CURL_SEEKFUNC_CANTSEEK : CURL_SEEKFUNC_OK;
}

int http_upload_file(struct http_client *c, const char *target, const char *path, long timeout_s, long *status,
		     struct buf *resp, char *err, size_t errlen)
{
	CURL *h = c->curl;
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc;

	if (fd < 0 || fstat(fd, &st)) {
		rc = -errno;
		snprintf(err, errlen, "'%s': %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return rc;
	}
	curl_easy_reset(h);
	buf_reset(resp);
	curl_easy_setopt(h, CURLOPT_POST, 1L);
	curl_easy_setopt(h, CURLOPT_READFUNCTION, read_fd);
	curl_easy_setopt(h, CURLOPT_READDATA, &fd);
	curl_easy_setopt(h, CURLOPT_SEEKFUNCTION, seek_fd);
	curl_easy_setopt(h, CURLOPT_SEEKDATA, &fd);
	curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)st.st_size);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, write_buf);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, resp);
	rc = perform(c, "POST", target, curl_slist_append(NULL, "Content-Type: application/octet-stream"), timeout_s,
		     status, err, errlen);
	close(fd);
	return rc;
}

int http_upload_form(struct http_client *c, const char *target, const struct http_part *parts, size_t nparts,
		     long timeout_s, long *status, struct buf *resp, char *err, size_t errlen)
{
	CURL *h = c->curl;
	curl_mime *mime;
	size_t i;
	int rc;

	curl_easy_reset(h);
	buf_reset(resp);
	if (!(mime = curl_mime_init(h)))
		return ERR_NOMEM;
	for (i = 0; i < nparts; i++) {
		curl_mimepart *part = curl_mime_addpart(mime);
		CURLcode cc;
		if (!part) {
			curl_mime_free(mime);
			return ERR_NOMEM;
		}
		curl_mime_name(part, parts[i].name);
		if (parts[i].value) {
			cc = curl_mime_data(part, parts[i].value, CURL_ZERO_TERMINATED);
		} else {
			cc = curl_mime_filedata(part, parts[i].path);
			if (cc == CURLE_OK && parts[i].filename)
				cc = curl_mime_filename(part, parts[i].filename);
			if (cc == CURLE_OK)
				cc = curl_mime_type(part, "application/octet-stream");
		}
		if (cc != CURLE_OK) {
			snprintf(err, errlen, "field '%s'%s%s: %s", parts[i].name, parts[i].path ? " file " : "",
				 parts[i].path ? parts[i].path : "", curl_easy_strerror(cc));
			curl_mime_free(mime);
			return cc == CURLE_READ_ERROR ? ERR_NOT_FOUND : ERR_IO;
		}
	}
	curl_easy_setopt(h, CURLOPT_MIMEPOST, mime);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, write_buf);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, resp);
	rc = perform(c, "POST", target, NULL, timeout_s, status, err, errlen);
	curl_easy_setopt(h, CURLOPT_MIMEPOST, NULL);
	curl_mime_free(mime);
	return rc;
}

int http_download(struct http_client *c, const char *target, const char *path, long timeout_s, long *status,
		  const char *hdr, char *hdr_value, size_t hvlen, char *err, size_t errlen)
{
	CURL *h = c->curl;
	struct hdr_want want = { hdr, hdr_value, hvlen };
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600), rc;

	if (fd < 0) {
		snprintf(err, errlen, "'%s': %s", path, strerror(errno));
		return -errno;
	}
	if (hdr_value && hvlen)
		hdr_value[0] = '\0';
	curl_easy_reset(h);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, write_fd);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &fd);
	curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, header_cb);
	curl_easy_setopt(h, CURLOPT_HEADERDATA, &want);
	/* openQA sends a job's asset on from /tests/<id>/asset/... to /assets/... */
	curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 1L);
	curl_easy_setopt(h, CURLOPT_MAXREDIRS, 3L);
	rc = perform(c, "GET", target, NULL, timeout_s, status, err, errlen);
	if (close(fd) && !rc)
		rc = ERR_IO;
	return rc;
}
