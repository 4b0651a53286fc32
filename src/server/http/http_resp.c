/* SPDX-License-Identifier: MIT */
/* http_resp.c - libmicrohttpd responses from a handler's api_resp: JSON
 * (with error_status), text, bytes, a cached body, a live stream, a file
 * whole or one byte range (206/416); the headers every answer carries
 * (nosniff, the signature scheme, cookies, redirects, the web UI's CSP).
 * Made on the handler thread; server.c queues them. */
#define LOG_MODULE "server"
#include <fcntl.h>
#include <jansson.h>
#include <microhttpd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
#include "server/http/api.h"
#include "server/http/http_resp.h"
#include "util/banned.h" /* last: after every system header */

/* The answer of a file (takes fd): whole, or the one byte range the
 * client asked for (206, so a browser can seek in a video), or 416; or
 * 304 when the client holds it already. Its ETag is made of the file's
 * inode, size and modification time, so a file written again (a running
 * job's log) gets a new one; it is sent Cache-Control: no-cache, so a
 * browser asks again on each view but a screenshot it has comes back as
 * a 304 without its bytes. */
static struct MHD_Response *file_resp(struct api_resp *out, int fd, const struct stat *st, unsigned *status)
{
	struct MHD_Response *resp;
	uint64_t size = (uint64_t)st->st_size, first = 0, last = 0;
	enum api_range rng = out->status == 200 ? api_range_parse(out->range, size, &first, &last) : API_RANGE_WHOLE;
	char cr[80], etag[80];

	snprintf(etag, sizeof(etag), "\"%llx-%llx-%llx.%lx\"", (unsigned long long)st->st_ino, (unsigned long long)size,
		 (unsigned long long)st->st_mtim.tv_sec, (unsigned long)st->st_mtim.tv_nsec);
	*status = (unsigned)out->status;
	if (out->status == 200 && out->if_none_match && strstr(out->if_none_match, etag)) {
		close(fd);
		resp = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
		if (resp) {
			MHD_add_response_header(resp, MHD_HTTP_HEADER_ETAG, etag);
			MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
		}
		*status = MHD_HTTP_NOT_MODIFIED;
		return resp;
	}
	if (rng == API_RANGE_UNSATISFIABLE) {
		close(fd);
		resp = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
		snprintf(cr, sizeof(cr), "bytes */%llu", (unsigned long long)size);
		*status = MHD_HTTP_RANGE_NOT_SATISFIABLE;
	} else if (rng == API_RANGE_PARTIAL) {
		resp = MHD_create_response_from_fd_at_offset64(last - first + 1, fd, first); /* takes fd */
		snprintf(cr, sizeof(cr), "bytes %llu-%llu/%llu", (unsigned long long)first, (unsigned long long)last,
			 (unsigned long long)size);
		*status = MHD_HTTP_PARTIAL_CONTENT;
	} else {
		resp = MHD_create_response_from_fd(size, fd); /* takes fd */
	}
	if (!resp) {
		if (rng != API_RANGE_UNSATISFIABLE)
			close(fd);
		return NULL;
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_ACCEPT_RANGES, "bytes");
	if (out->status == 200) {
		MHD_add_response_header(resp, MHD_HTTP_HEADER_ETAG, etag);
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
	}
	if (rng != API_RANGE_WHOLE)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_RANGE, cr);
	if (rng != API_RANGE_UNSATISFIABLE)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
					out->ctype ? out->ctype : "application/octet-stream");
	if (out->hdr_name)
		MHD_add_response_header(resp, out->hdr_name, out->hdr_value);
	return resp;
}

/* The response to out, made on the handler thread (out->raw is borrowed
 * from its cache, so it is copied now); NULL when out of memory (the
 * connection is then dropped). *status: what to send it with. */
static struct MHD_Response *make_resp_body(struct api_resp *out, unsigned *status)
{
	struct MHD_Response *resp;
	char *body = NULL;
	const char *ctype = "application/json";

	if (out->stream) {
		/* livestream.c set its headers. */
		resp = out->stream;
		out->stream = NULL;
		*status = (unsigned)out->status;
		return resp;
	}
	if (out->bytes) {
		resp = MHD_create_response_from_buffer(out->bytes_len, (void *)out->bytes, MHD_RESPMEM_PERSISTENT);
		if (resp) {
			MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, out->ctype);
			if (out->hdr_name)
				MHD_add_response_header(resp, out->hdr_name, out->hdr_value);
			MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL,
						out->immutable ? "public, max-age=31536000, immutable" : "no-cache");
		}
		*status = (unsigned)out->status;
		return resp;
	}
	if (out->raw) {
		resp = MHD_create_response_from_buffer(out->raw_len, (void *)out->raw, MHD_RESPMEM_MUST_COPY);
		if (resp)
			MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
		*status = (unsigned)out->status;
		return resp;
	}
	if (!out->json && !out->text && out->file) {
		int fd = open(out->file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
		struct stat st;
		if (fd < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode)) {
			if (fd >= 0)
				close(fd);
			out->status = 404;
			out->json = json_pack("{s:s}", "error", "file vanished");
		} else {
			return file_resp(out, fd, &st, status);
		}
	}
	if (!out->json && !out->text && (out->status == 503 || out->status >= 400)) {
		/* The answer's JSON could not be made: out of memory (api_nomem). */
		static const char nomem[] = "{\"error\":\"out of memory: try again later\",\"error_status\":503}";
		resp = MHD_create_response_from_buffer(sizeof(nomem) - 1, (void *)nomem, MHD_RESPMEM_PERSISTENT);
		if (resp)
			MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
		*status = 503;
		return resp;
	}
	if (!out->json && !out->text) {
		out->status = 500;
		out->json = json_pack("{s:s}", "error", "internal error: no response");
	}
	if (out->json) {
		if (out->status != 200 && json_is_object(out->json) && json_object_get(out->json, "error"))
			/* Optional: the status line says it too (hardening.md allows it to be lost). */
			(void)json_object_set_new(out->json, "error_status", json_integer(out->status));
		body = json_dumps(out->json, JSON_COMPACT);
	} else {
		body = out->text; /* taken: the job list's is large */
		out->text = NULL;
		ctype = out->ctype ? out->ctype : "text/plain; charset=utf-8";
	}
	if (!body)
		return NULL;
	resp = MHD_create_response_from_buffer(strlen(body), body, MHD_RESPMEM_MUST_FREE);
	if (!resp) {
		free(body);
		return NULL;
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
	if (out->hdr_name)
		MHD_add_response_header(resp, out->hdr_name, out->hdr_value);
	if (out->web && !(out->hdr_name && !strcasecmp(out->hdr_name, MHD_HTTP_HEADER_CACHE_CONTROL)))
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
	*status = (unsigned)out->status;
	return resp;
}

/* make_resp_body with the headers every answer carries: no content
 * sniffing, and for pages and web files the CSP and no framing. */
struct MHD_Response *http_resp_make(struct api_resp *out, unsigned *status)
{
	struct MHD_Response *resp = make_resp_body(out, status);

	if (!resp)
		return NULL;
	MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
	/* vigil's clients sign with scheme 2 where this is seen (net/http.c). */
	MHD_add_response_header(resp, "X-Vigil-Signature", "2");
	if (out->set_cookie)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_SET_COOKIE, out->set_cookie);
	if (out->location)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_LOCATION, out->location);
	if (out->web) {
		MHD_add_response_header(resp, "Content-Security-Policy", HTTP_CSP);
		MHD_add_response_header(resp, "X-Frame-Options", "DENY");
		MHD_add_response_header(resp, "Referrer-Policy", "same-origin");
	}
	return resp;
}

void api_resp_release(struct api_resp *out)
{
	if (out->stream)
		MHD_destroy_response(out->stream);
	json_decref(out->json);
	free(out->text);
	free(out->file);
	free(out->set_cookie);
	free(out->location);
	memset(out, 0, sizeof(*out));
}
