/* SPDX-License-Identifier: MIT */
/* test_http_upload.c - http_upload_file sends its body again when curl
 * retries on a fresh connection: a kept-alive connection that the server
 * closes after reading a request (a restart, a cut network) made the upload
 * fail at once with "rewinding of the data stream failed" (the fault suite's
 * server and enospc kinds). */
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "unit.h"
#include "net/http.h"
#include "util/buf.h"
#include "util/file.h"

struct one_srv {
	int lfd;
	long got;   /* body bytes of the request answered after the retry */
};

/* Read one request (headers, then Content-Length bytes of body): its body
 * length, or -1 when the peer went away. */
static long read_request(int fd)
{
	char buf[8192];
	size_t have = 0;
	long cl = 0, body;
	char *end = NULL, *h;

	while (!end) {
		ssize_t n = read(fd, buf + have, sizeof(buf) - 1 - have);
		if (n <= 0)
			return -1;
		have += (size_t)n;
		buf[have] = '\0';
		end = strstr(buf, "\r\n\r\n");
	}
	if ((h = strcasestr(buf, "Content-Length:")))
		cl = strtol(h + 15, NULL, 10);
	body = (long)(have - (size_t)(end + 4 - buf));
	while (body < cl) {
		ssize_t n = read(fd, buf, sizeof(buf));
		if (n <= 0)
			return -1;
		body += n;
	}
	return cl;
}

static void *serve(void *arg)
{
	static const char ok[] = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
	struct one_srv *s = arg;
	int c = accept(s->lfd, NULL, NULL);

	/* The first request is answered and the connection kept; the second
	 * is read whole and the connection closed without an answer. */
	if (c < 0 || read_request(c) < 0 || write(c, ok, sizeof(ok) - 1) < 0 || read_request(c) < 0)
		return NULL;
	close(c);
	if ((c = accept(s->lfd, NULL, NULL)) < 0)
		return NULL;
	s->got = read_request(c);
	if (write(c, ok, sizeof(ok) - 1) < 0)
		s->got = -2;
	close(c);
	return NULL;
}

TEST(http_upload_resends_body_on_fresh_connection)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t alen = sizeof(a);
	struct one_srv s = { -1, -1 };
	struct http_client c;
	struct buf resp;
	pthread_t t;
	char base[64], path[512], body[1000], err[256] = "";
	long status = 0;

	s.lfd = socket(AF_INET, SOCK_STREAM, 0);
	CHECK(s.lfd >= 0);
	CHECK_INT(bind(s.lfd, (struct sockaddr *)&a, sizeof(a)), 0);
	CHECK_INT(listen(s.lfd, 4), 0);
	CHECK_INT(getsockname(s.lfd, (struct sockaddr *)&a, &alen), 0);
	snprintf(base, sizeof(base), "http://127.0.0.1:%d", ntohs(a.sin_port));
	memset(body, 'x', sizeof(body));
	snprintf(path, sizeof(path), "%s/body", unit_tmpdir());
	CHECK_INT(file_write_all(path, body, sizeof(body)), 0);
	CHECK_INT(pthread_create(&t, NULL, serve, &s), 0);
	CHECK_INT(http_client_init(&c, base, NULL, NULL), 0);
	buf_init(&resp, 4096);
	CHECK_INT(http_request(&c, "GET", "/first", NULL, NULL, 0, 60, &status, &resp, err, sizeof(err)), 0);
	CHECK_INT(status, 200);
	status = 0;
	if (http_upload_file(&c, "/upload", path, 60, &status, &resp, err, sizeof(err)))
		FAIL("upload: %s", err);
	CHECK_INT(status, 200);
	pthread_join(t, NULL);
	CHECK_INT(s.got, (long)sizeof(body));
	buf_release(&resp);
	http_client_release(&c);
	close(s.lfd);
}
