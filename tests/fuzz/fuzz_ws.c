/* SPDX-License-Identifier: MIT */
/* fuzz_ws.c - WebSocket frames (net/ws.c over wslay) and openQA's worker
 * messages on both ends. Byte 0 picks what the rest is:
 *   0, 1  the byte stream from a client (to a server-role ws) or from a
 *         server (to a client-role ws), read from memory until it ends;
 *   2     messages from an openQA worker, NUL-separated, each sent as one
 *         text frame over a real WebSocket to the real server's
 *         /api/v1/ws/<id> (fuzz_server.h, a worker registered the openQA
 *         way), then a close: wshub.c's handling of worker_status,
 *         accepted, rejected, quit and anything else;
 *   3     what an openQA server answers the worker's upgrade request and
 *         then sends (src/worker/oq_ws.c): the HTTP answer and the frames,
 *         written by a thread on a loopback port, "@ACCEPT@" replaced by
 *         the Sec-WebSocket-Accept of the worker's key. Inputs naming
 *         another host ("://") are skipped: a redirect must not leave the
 *         machine.
 * A crash, leak or sanitizer report fails the target. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>
#include <jansson.h>
#include "fuzz_server.h"
#include "net/ws.h"
#include "worker/oq_ws.h"

struct mem_io {
	const uint8_t *data;
	size_t len, off;
};

static ssize_t mem_recv(void *io, void *data, size_t len)
{
	struct mem_io *m = io;
	size_t n = m->len - m->off;

	if (n > len)
		n = len;
	memcpy(data, m->data + m->off, n);
	m->off += n;
	return (ssize_t)n; /* 0 at the end: the peer closed */
}

static ssize_t mem_send(void *io, const void *data, size_t len)
{
	(void)io;
	(void)data;
	return (ssize_t)len;
}

static void on_msg(void *ud, enum ws_opcode op, const uint8_t *data, size_t len, uint16_t status)
{
	size_t *sum = ud;
	size_t i;

	(void)op;
	(void)status;
	for (i = 0; i < len; i++)
		*sum += data[i];
}

static void frames(enum ws_role role, const uint8_t *data, size_t size)
{
	struct mem_io m = { data, size, 0 };
	struct ws_transport t = { mem_recv, mem_send, &m, -1 };
	size_t sum = 0;
	/* A few bytes read ahead with the handshake, as libmicrohttpd hands them. */
	size_t pre = size > 0 ? data[0] % 8 : 0;
	struct ws *ws;
	int i;

	if (pre > size)
		pre = size;
	m.off = pre;
	if (!(ws = ws_new(role, &t, data, pre, on_msg, &sum)))
		abort();
	for (i = 0; i < 64 && ws_pump(ws) == 0; i++)
		;
	ws_free(ws);
}

static int64_t worker_id;
static struct oq_ws wconn;   /* kept open across inputs while the server keeps it */
static bool wconn_open;

struct sync {
	bool pong;
	bool closed;
};

static void on_server_msg(void *ud, enum ws_opcode op, const uint8_t *data, size_t len, uint16_t status)
{
	struct sync *y = ud;

	(void)status;
	if (op == WS_OP_PONG && len == 4 && !memcmp(data, "sync", 4))
		y->pong = true;
	else if (op == WS_OP_CLOSE)
		y->closed = true;
}

/* Connect to the server as the openQA worker (oq_ws.c's handshake), then
 * read the frames with a ws of our own that sees the pongs. */
static void worker_connect(struct sync *y)
{
	char path[64], err[256];

	if (!worker_id) {
		const char *form = "host=fuzz&instance=1&worker_class=qemu_x86_64&websocket_api_version=1";
		struct buf resp;
		long status = 0;
		json_t *j;
		buf_init(&resp, LIMIT_HTTP_RESPONSE);
		if (http_request(&fuzz_client, "POST", "/api/v1/workers", NULL, form, strlen(form), 60, &status, &resp,
				 err, sizeof(err)) || status != 200 ||
		    !(j = json_loadb(resp.data, resp.len, 0, NULL)))
			abort();
		worker_id = json_integer_value(json_object_get(j, "id"));
		json_decref(j);
		buf_release(&resp);
	}
	snprintf(path, sizeof(path), "/api/v1/ws/%lld", (long long)worker_id);
	if (oq_ws_connect(&wconn, fuzz_client.base, path, fuzz_key, fuzz_secret, 60, err, sizeof(err))) {
		fprintf(stderr, "fuzz_ws: %s\n", err);
		abort();
	}
	ws_free(wconn.ws);
	if (!(wconn.ws = ws_new(WS_ROLE_CLIENT, &wconn.transport, NULL, 0, on_server_msg, y)))
		abort();
	wconn_open = true;
}

/* The messages, then a ping: its pong says the server has handled them
 * (it reads in order). Only JSON objects are sent: anything else makes the
 * server close (unit-tested), and each new session costs a database
 * connection. quit ends the connection; the next input connects again. */
static void worker_messages(const uint8_t *data, size_t size)
{
	static struct sync y;
	char *s, *p, *e;
	int rc = 0, i;

	y.pong = y.closed = false;
	if (!wconn_open)
		worker_connect(&y);
	s = fuzz_str(data, size);
	for (p = s; p < s + size; p = e + 1) {
		e = memchr(p, '\0', (size_t)(s + size - p));
		if (!e)
			e = s + size;
		json_t *j = json_loadb(p, (size_t)(e - p), 0, NULL);
		bool obj = json_is_object(j);
		json_decref(j);
		if (obj && ws_send(wconn.ws, WS_OP_TEXT, p, (size_t)(e - p), 0))
			break;
	}
	(void)ws_ping(wconn.ws, "sync", 4);
	for (i = 0; i < 6000 && !y.pong && !y.closed && (rc = ws_wait(wconn.ws, 10)) == 0; i++)
		;
	if (rc || y.closed || !y.pong) {
		oq_ws_release(&wconn);
		wconn_open = false;
	}
	free(s);
}

struct fake {
	int lfd;
	int wake[2];  /* written when the worker's side is done */
	const uint8_t *data;
	size_t size;
};

/* The fake openQA server: the connections of one oq_ws_connect (a
 * redirect makes another), each answered with the input, until the
 * worker's side says it is done. */
static void *fake_main(void *arg)
{
	struct fake *f = arg;
	int n;

	for (n = 0; n <= OQ_WS_MAX_REDIRECTS; n++) {
		struct pollfd pfd[2] = { { f->lfd, POLLIN, 0 }, { f->wake[0], POLLIN, 0 } };
		char head[OQ_WS_HANDSHAKE_MAX + 1], key[64] = "", acc[WS_ACCEPT_LEN + 1] = "", *k;
		size_t got = 0, i;
		int fd;
		if (poll(pfd, 2, -1) < 1 || pfd[1].revents || (fd = accept(f->lfd, NULL, NULL)) < 0)
			break;
		while (got < OQ_WS_HANDSHAKE_MAX) {
			ssize_t r = read(fd, head + got, OQ_WS_HANDSHAKE_MAX - got);
			if (r <= 0)
				break;
			got += (size_t)r;
			head[got] = '\0';
			if (strstr(head, "\r\n\r\n"))
				break;
		}
		head[got] = '\0';
		if ((k = strcasestr(head, "Sec-WebSocket-Key: ")))
			sscanf(k + 19, "%63[^\r\n]", key);
		(void)ws_accept_key(key, acc);
		for (i = 0; i < f->size; i++) {
			const uint8_t *b = f->data + i;
			if (f->size - i >= 8 && !memcmp(b, "@ACCEPT@", 8)) {
				if (send(fd, acc, strlen(acc), MSG_NOSIGNAL) < 0)
					break;
				i += 7;
			} else if (send(fd, b, 1, MSG_NOSIGNAL) != 1) {
				break;
			}
		}
		shutdown(fd, SHUT_WR);
		/* Read what the worker sends (pongs, its close) until it hangs up. */
		pfd[0].fd = fd;
		while (poll(pfd, 2, -1) > 0 && !pfd[1].revents && read(fd, head, sizeof(head)) > 0)
			;
		close(fd);
		if (pfd[1].revents)
			break;
	}
	return NULL;
}

static void server_stream(const uint8_t *data, size_t size)
{
	static int lfd = -1;
	static unsigned port;
	struct fake f;
	struct oq_ws ws;
	pthread_t th;
	char base[64], err[256];
	json_t *m;
	int rc, i;

	if (memmem(data, size, "://", 3))
		return;
	if (lfd < 0) {
		struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
		socklen_t alen = sizeof(a);
		lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (lfd < 0 || bind(lfd, (struct sockaddr *)&a, sizeof(a)) || listen(lfd, 8) ||
		    getsockname(lfd, (struct sockaddr *)&a, &alen))
			abort();
		port = ntohs(a.sin_port);
	}
	f.lfd = lfd;
	f.data = data;
	f.size = size;
	if (pipe(f.wake) || pthread_create(&th, NULL, fake_main, &f))
		abort();
	snprintf(base, sizeof(base), "http://127.0.0.1:%u", port);
	if (oq_ws_connect(&ws, base, "/api/v1/ws/1", "KEY", "SECRET", 60, err, sizeof(err)) == 0) {
		for (i = 0; i < 600; i++) {
			if ((m = oq_ws_recv(&ws, 100, &rc)))
				json_decref(m);
			else if (rc)
				break;
		}
		oq_ws_release(&ws);
	}
	if (write(f.wake[1], "", 1) != 1)
		abort();
	pthread_join(th, NULL);
	close(f.wake[0]);
	close(f.wake[1]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	switch (data[0] % 4) {
	case 0:
		frames(WS_ROLE_SERVER, data + 1, size - 1);
		break;
	case 1:
		frames(WS_ROLE_CLIENT, data + 1, size - 1);
		break;
	case 2:
		if (!fuzz_srv)
			fuzz_server_setup();
		worker_messages(data + 1, size - 1);
		break;
	default:
		server_stream(data + 1, size - 1);
		break;
	}
	return 0;
}
