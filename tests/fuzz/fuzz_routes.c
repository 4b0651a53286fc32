/* SPDX-License-Identifier: MIT */
/* fuzz_routes.c - the query string and body of every route, through the
 * real server: `vigil serve`'s server.c runs in this process on a loopback
 * port over a throwaway database (made once, in a temporary directory), and
 * each input becomes one request signed with an admin key, so the handler
 * is reached. The input: byte 0 picks the route (api_route_at, so a new
 * route is fuzzed without an edit here), byte 1 the Content-Type, then
 * "SEGMENT\0QUERY\0BODY": SEGMENT fills the route's '#' and '*' segments
 * (percent-encoded; "1" when empty), QUERY follows '?' (bytes curl would
 * refuse are percent-encoded, the rest, bad escapes too, go as they are).
 * The two routes that wait on purpose (a worker's long poll, the live
 * view's event stream) are left out. A handler that crashes, leaks or
 * trips a sanitizer fails the target; a 500 answer does too (the request
 * is the client's fault or fine, never the server's; 501 and 503 are
 * answers the server gives on purpose). */
#include "fuzz_server.h"

/* Append s, percent-encoding what may not stand in a URL as it is (all of
 * it when seg: one path segment). */
static void url_add(struct buf *b, const char *s, bool seg)
{
	static const char hex[] = "0123456789ABCDEF";

	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c > 0x20 && c < 0x7f && c != '#' && c != '"' && c != '<' && c != '>' && c != '\\' &&
		    c != '^' && c != '`' && c != '{' && c != '|' && c != '}' &&
		    (!seg || (c != '/' && c != '?' && c != '%'))) {
			buf_append(b, s, 1);
		} else {
			char e[3] = { '%', hex[c >> 4], hex[c & 15] };
			buf_append(b, e, 3);
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const ctypes[] = { "application/json", "application/x-www-form-urlencoded", NULL,
					      "multipart/form-data; boundary=XyZ", "text/plain" };
	static size_t nroutes;
	const struct api_route *r;
	struct buf target, resp;
	char *part[3], *s, err[256];
	const char *p, *ctype;
	long status = 0;

	if (!fuzz_srv) {
		fuzz_server_setup();
		while (api_route_at(nroutes))
			nroutes++;
	}
	if (size < 2)
		return 0;
	r = api_route_at(data[0] % nroutes);
	if (!strcmp(r->pattern, "/api/v1/workers/#/work") || !strcmp(r->pattern, "/tests/#/streaming"))
		return 0;
	ctype = ctypes[data[1] % (sizeof(ctypes) / sizeof(ctypes[0]))];
	s = fuzz_fields(data + 2, size - 2, part, 3);
	buf_init(&target, 1 << 20);
	buf_init(&resp, LIMIT_HTTP_RESPONSE);
	for (p = r->pattern; *p; p++) {
		if (*p == '#' || *p == '*')
			url_add(&target, *part[0] ? part[0] : "1", true);
		else
			buf_append(&target, p, 1);
	}
	if (*part[1]) {
		buf_append(&target, "?", 1);
		url_add(&target, part[1], false);
	}
	buf_append(&target, "", 1);
	if (http_request(&fuzz_client, r->method, target.data, ctype, *part[2] ? part[2] : NULL, strlen(part[2]), 60,
			 &status, &resp, err, sizeof(err)) == 0 &&
	    status == 500) {
		fprintf(stderr, "fuzz_routes: %s %s answered %ld: %.*s\n", r->method, target.data, status,
			(int)(resp.len < 500 ? resp.len : 500), resp.data ? resp.data : "");
		abort();
	}
	buf_release(&target);
	buf_release(&resp);
	free(s);
	return 0;
}
