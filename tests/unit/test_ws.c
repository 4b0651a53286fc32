/* SPDX-License-Identifier: MIT */
/* test_ws.c - net/ws.c: a server and a client endpoint talking over a
 * socketpair: text, fragmented and 1 MiB messages both ways, ping/pong,
 * the closing handshake, bytes read ahead of the context, a peer that
 * breaks the protocol or goes away, a send from another thread waking
 * ws_wait; RFC 6455's Sec-WebSocket-Accept example. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/socket.h>
#include <unistd.h>
#include "unit.h"
#include "net/ws.h"
#include "worker/oq_ws.h"
#include "net/http.h"
#include "server/store/auth.h"
#include "server/db/db.h"
#include "server/server.h"
#include "util/log.h"
#include "util/buf.h"
#include "util/err.h"

#define MAX_GOT 8

struct peer {
	struct ws_transport t;
	struct ws *ws;
	int n;                     /* messages received */
	enum ws_opcode op[MAX_GOT];
	struct buf msg[MAX_GOT];
	uint16_t status[MAX_GOT];
	struct buf wire;           /* what this side sent, when recording */
	bool record;
};

static void on_msg(void *ud, enum ws_opcode op, const uint8_t *data, size_t len, uint16_t status)
{
	struct peer *p = ud;

	if (p->n >= MAX_GOT)
		FAIL("more than %d messages", MAX_GOT);
	p->op[p->n] = op;
	p->status[p->n] = status;
	buf_init(&p->msg[p->n], 2u << 20);
	if (buf_append(&p->msg[p->n], data, len))
		FAIL("message of %zu bytes", len);
	p->n++;
}

static ssize_t rec_send(void *io, const void *data, size_t len)
{
	struct peer *p = io;
	ssize_t n = send(p->t.fd, data, len, MSG_NOSIGNAL);

	if (n < 0)
		return -errno;
	if (p->record && buf_append(&p->wire, data, (size_t)n))
		FAIL("recording");
	return n;
}

static ssize_t rec_recv(void *io, void *data, size_t len)
{
	struct peer *p = io;
	ssize_t n = recv(p->t.fd, data, len, 0);

	return n < 0 ? -errno : n;
}

static void peer_open(struct peer *p, enum ws_role role, int fd, const void *pre, size_t prelen)
{
	memset(p, 0, sizeof(*p));
	buf_init(&p->wire, 4u << 20);
	ws_transport_fd(&p->t, fd);
	/* Through the peer so the client's bytes can be recorded. */
	p->t.io = p;
	p->t.send = rec_send;
	p->t.recv = rec_recv;
	p->ws = ws_new(role, &p->t, pre, prelen, on_msg, p);
	CHECK(p->ws);
}

static void peer_close(struct peer *p)
{
	ws_free(p->ws);
	for (int i = 0; i < p->n; i++)
		buf_release(&p->msg[i]);
	buf_release(&p->wire);
	close(p->t.fd);
}

static void pair(struct peer *srv, struct peer *cli)
{
	int sv[2];

	CHECK_INT(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	peer_open(srv, WS_ROLE_SERVER, sv[0], NULL, 0);
	peer_open(cli, WS_ROLE_CLIENT, sv[1], NULL, 0);
}

/* Pumps both until a has n messages and b has m (the socketpair's buffer
 * is smaller than the big messages, so the two must take turns). */
static void pump_until(struct peer *a, int n, struct peer *b, int m)
{
	for (int i = 0; i < 100000 && (a->n < n || b->n < m); i++) {
		int ra = ws_pump(a->ws), rb = ws_pump(b->ws);
		if (ra || rb)
			FAIL("pump: %s / %s", err_str(ra), err_str(rb));
	}
	CHECK_INT(a->n, n);
	CHECK_INT(b->n, m);
}

TEST(ws_accept_key_rfc6455)
{
	char acc[WS_ACCEPT_LEN + 1], key[WS_KEY_LEN + 1], key2[WS_KEY_LEN + 1];

	/* RFC 6455 section 1.3's example. */
	CHECK_INT(ws_accept_key("dGhlIHNhbXBsZSBub25jZQ==", acc), 0);
	CHECK_STR(acc, "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");
	CHECK_INT(ws_accept_key("short", acc), ERR_INVALID);
	CHECK_INT(ws_accept_key(NULL, acc), ERR_INVALID);
	CHECK_INT(ws_client_key(key), 0);
	CHECK_INT(ws_client_key(key2), 0);
	CHECK_INT(strlen(key), WS_KEY_LEN);
	CHECK(strcmp(key, key2) != 0);
	CHECK_INT(ws_accept_key(key, acc), 0);
	CHECK_INT(strlen(acc), WS_ACCEPT_LEN);
}

TEST(ws_text_both_ways)
{
	struct peer s, c;

	pair(&s, &c);
	CHECK_INT(ws_send_text(c.ws, "{\"type\":\"worker_status\"}"), 0);
	CHECK_INT(ws_send_text(s.ws, "{\"type\":\"grab_job\"}"), 0);
	CHECK_INT(ws_send(c.ws, WS_OP_BINARY, "\0\1\2", 3, 0), 0);
	pump_until(&s, 2, &c, 1);
	CHECK_INT(s.op[0], WS_OP_TEXT);
	CHECK_STR(s.msg[0].data, "{\"type\":\"worker_status\"}");
	CHECK_INT(s.op[1], WS_OP_BINARY);
	CHECK_INT(s.msg[1].len, 3);
	CHECK(!memcmp(s.msg[1].data, "\0\1\2", 3));
	CHECK_INT(c.op[0], WS_OP_TEXT);
	CHECK_STR(c.msg[0].data, "{\"type\":\"grab_job\"}");
	CHECK_INT(ws_send(c.ws, WS_OP_PING, "x", 1, 0), ERR_INVALID);
	peer_close(&s);
	peer_close(&c);
}

TEST(ws_fragmented)
{
	struct peer s, c;
	char text[10000];
	const uint8_t *w;

	pair(&s, &c);
	for (size_t i = 0; i < sizeof(text); i++)
		text[i] = (char)('a' + i % 26);
	c.record = true;
	CHECK_INT(ws_send(c.ws, WS_OP_TEXT, text, sizeof(text), 1000), 0);
	pump_until(&s, 1, &c, 0);
	CHECK_INT(s.op[0], WS_OP_TEXT);
	CHECK_INT(s.msg[0].len, sizeof(text));
	CHECK(!memcmp(s.msg[0].data, text, sizeof(text)));
	/* It went out as fragments: a text frame without FIN, masked, of
	 * 1000 bytes (126 = 16-bit length), then continuation frames. */
	w = (const uint8_t *)c.wire.data;
	CHECK(c.wire.len > sizeof(text) + 10 * 6);
	CHECK_INT(w[0], 0x01);
	CHECK_INT(w[1], 0x80 | 126);
	CHECK_INT((w[2] << 8) | w[3], 1000);
	CHECK_INT(w[4 + 4 + 1000], 0x00);
	peer_close(&s);
	peer_close(&c);
}

TEST(ws_large_messages)
{
	struct peer s, c;
	size_t n = 1u << 20;
	uint8_t *big = malloc(n);
	char *text = malloc(n / 2);

	CHECK(big && text);
	pair(&s, &c);
	for (size_t i = 0; i < n; i++)
		big[i] = (uint8_t)(i * 7 + (i >> 12));
	CHECK_INT(ws_send(c.ws, WS_OP_BINARY, big, n, 0), 0);
	CHECK_INT(ws_send(s.ws, WS_OP_BINARY, big, n, 0), 0);
	/* Text must be UTF-8 (wslay checks): half a MiB of it in 4 KiB frames. */
	memset(text, 'v', n / 2);
	CHECK_INT(ws_send(s.ws, WS_OP_TEXT, text, n / 2, 4096), 0);
	pump_until(&s, 1, &c, 2);
	CHECK_INT(s.msg[0].len, n);
	CHECK(!memcmp(s.msg[0].data, big, n));
	CHECK_INT(c.msg[0].len, n);
	CHECK(!memcmp(c.msg[0].data, big, n));
	CHECK_INT(c.op[1], WS_OP_TEXT);
	CHECK_INT(c.msg[1].len, n / 2);
	CHECK(!memcmp(c.msg[1].data, text, n / 2));
	free(big);
	free(text);
	peer_close(&s);
	peer_close(&c);
}

TEST(ws_ping_pong)
{
	struct peer s, c;

	pair(&s, &c);
	CHECK_INT(ws_ping(c.ws, "hi", 2), 0);
	pump_until(&s, 1, &c, 1);
	CHECK_INT(s.op[0], WS_OP_PING);
	CHECK_INT(c.op[0], WS_OP_PONG);
	CHECK_INT(c.msg[0].len, 2);
	CHECK(!memcmp(c.msg[0].data, "hi", 2));
	CHECK_INT(ws_ping(c.ws, "x", 126), ERR_INVALID);
	peer_close(&s);
	peer_close(&c);
}

TEST(ws_closing_handshake)
{
	struct peer s, c;
	int rs = 0, rc = 0;

	pair(&s, &c);
	CHECK_INT(ws_send_text(s.ws, "last"), 0);
	CHECK_INT(ws_close(s.ws, 1000, "bye"), 0);
	CHECK_INT(ws_close(s.ws, 1000, NULL), ERR_CLOSED);
	CHECK_INT(ws_send_text(s.ws, "too late"), ERR_CLOSED);
	for (int i = 0; i < 1000 && (!rs || !rc); i++) {
		if (!rs)
			rs = ws_pump(s.ws);
		if (!rc)
			rc = ws_pump(c.ws);
	}
	CHECK_INT(rs, ERR_CLOSED);
	CHECK_INT(rc, ERR_CLOSED);
	CHECK(!ws_is_open(s.ws));
	CHECK(!ws_is_open(c.ws));
	CHECK_INT(c.n, 2);
	CHECK_STR(c.msg[0].data, "last");
	CHECK_INT(c.op[1], WS_OP_CLOSE);
	CHECK_INT(c.status[1], 1000);
	CHECK_INT(ws_close_status(c.ws), 1000);
	/* The client echoed the close; the server saw it. */
	CHECK_INT(s.n, 1);
	CHECK_INT(s.op[0], WS_OP_CLOSE);
	CHECK_INT(ws_close_status(s.ws), 1000);
	CHECK_INT(ws_pump(s.ws), ERR_CLOSED);
	CHECK_INT(ws_send_text(c.ws, "x"), ERR_CLOSED);
	peer_close(&s);
	peer_close(&c);
}

TEST(ws_read_ahead_bytes)
{
	struct peer s, c;
	int sv[2];
	char head[5];

	CHECK_INT(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	peer_open(&c, WS_ROLE_CLIENT, sv[1], NULL, 0);
	CHECK_INT(ws_send_text(c.ws, "hello server"), 0);
	CHECK_INT(ws_send_text(c.ws, "second"), 0);
	CHECK_INT(ws_pump(c.ws), 0);
	/* As an HTTP server would: the first bytes are read with the request. */
	CHECK_INT(recv(sv[0], head, sizeof(head), 0), (ssize_t)sizeof(head));
	peer_open(&s, WS_ROLE_SERVER, sv[0], head, sizeof(head));
	pump_until(&s, 2, &c, 0);
	CHECK_STR(s.msg[0].data, "hello server");
	CHECK_STR(s.msg[1].data, "second");
	peer_close(&s);
	peer_close(&c);
}

TEST(ws_protocol_error)
{
	struct peer s;
	int sv[2], r = 0;
	/* An unmasked text frame: a client must mask (RFC 6455 5.1). */
	static const uint8_t bad[] = { 0x81, 0x02, 'h', 'i' };
	uint8_t back[16];

	CHECK_INT(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	peer_open(&s, WS_ROLE_SERVER, sv[0], NULL, 0);
	CHECK_INT(write(sv[1], bad, sizeof(bad)), (ssize_t)sizeof(bad));
	for (int i = 0; i < 100 && !r; i++)
		r = ws_pump(s.ws);
	CHECK_INT(r, ERR_PROTO);
	CHECK_INT(s.n, 0);
	/* It said so: a close frame with 1002. */
	CHECK_INT(read(sv[1], back, sizeof(back)), 4);
	CHECK_INT(back[0], 0x88);
	CHECK_INT((back[2] << 8) | back[3], 1002);
	close(sv[1]);
	peer_close(&s);
}

TEST(ws_peer_gone)
{
	struct peer s;
	int sv[2], r = 0;

	CHECK_INT(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	peer_open(&s, WS_ROLE_SERVER, sv[0], NULL, 0);
	CHECK_INT(ws_pump(s.ws), 0);
	CHECK(ws_is_open(s.ws));
	close(sv[1]);
	for (int i = 0; i < 100 && !r; i++)
		r = ws_pump(s.ws);
	CHECK_INT(r, ERR_CLOSED);
	CHECK(!ws_is_open(s.ws));
	peer_close(&s);
}

static void *serve_thread(void *arg)
{
	struct peer *s = arg;
	int r = 0;

	while (!r)
		r = ws_wait(s->ws, -1);
	return (void *)(intptr_t)r;
}

TEST(ws_wait_woken_by_send)
{
	struct peer s, c;
	pthread_t th;
	void *ret;
	int r = 0;

	pair(&s, &c);
	CHECK_INT(pthread_create(&th, NULL, serve_thread, &s), 0);
	/* The server's thread sits in poll; this send must wake it. */
	CHECK_INT(ws_send_text(s.ws, "{\"type\":\"grab_job\"}"), 0);
	for (int i = 0; i < 1000 && c.n < 1 && !r; i++)
		r = ws_wait(c.ws, 60000);
	CHECK_INT(r, 0);
	CHECK_INT(c.n, 1);
	CHECK_STR(c.msg[0].data, "{\"type\":\"grab_job\"}");
	CHECK_INT(ws_close(c.ws, 1000, NULL), 0);
	for (int i = 0; i < 1000 && !r; i++)
		r = ws_wait(c.ws, 60000);
	CHECK_INT(r, ERR_CLOSED);
	CHECK_INT(pthread_join(th, &ret), 0);
	CHECK_INT((intptr_t)ret, ERR_CLOSED);
	CHECK_INT(s.n, 1);
	CHECK_INT(s.op[0], WS_OP_CLOSE);
	peer_close(&s);
	peer_close(&c);
}

/* Found by fuzz_ws: a connection that failed (refused, a bad answer to
 * the upgrade) left the inbox allocated, and the worker's caller frees
 * only the struct: one leak per reconnect. LeakSanitizer fails this test
 * without the fix. */
TEST(oq_ws_failed_connect_leaves_nothing)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t alen = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct oq_ws s;
	char base[64], err[256];

	CHECK(fd >= 0);
	CHECK(bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0);
	CHECK(getsockname(fd, (struct sockaddr *)&a, &alen) == 0);
	close(fd); /* nobody listens there now */
	snprintf(base, sizeof(base), "http://127.0.0.1:%u", ntohs(a.sin_port));
	CHECK(oq_ws_connect(&s, base, "/api/v1/ws/1", "K", "S", 5, err, sizeof(err)) != 0);
	CHECK(s.inbox == NULL);
	CHECK(s.ws == NULL);
}

/* Found by fuzz_ws: after an openQA worker's quit the server ended the
 * session but left the socket open until the next worker connected, so
 * the worker's side never saw the end. Now it sends a close: the worker's
 * receive ends (within the minute allowed here, not never). */
TEST(ws_workers_quit_closes_the_socket)
{
	struct server_config cfg = { .listen = "127.0.0.1:0", .threads = 2, .per_ip_limit = -1 };
	const char *form = "host=h&instance=1&worker_class=qemu_x86_64&websocket_api_version=1";
	char err[256] = "", key[AUTH_KEY_LEN + 1], secret[AUTH_KEY_LEN + 1], base[64], path[64], *dbp;
	struct server *srv = NULL;
	struct http_client c;
	struct db *db = NULL;
	struct oq_ws ws;
	struct buf resp;
	long status = 0;
	int64_t kid;
	json_t *j, *m;
	int rc = 0, i;

	log_set_stderr_level(LOG_ERR);
	cfg.data_dir = unit_tmpdir();
	cfg.db = unit_db_url();
	CHECK((dbp = server_db_path(cfg.data_dir, cfg.db, err, sizeof(err))) != NULL);
	CHECK_INT(db_open(&db, dbp, err, sizeof(err)), 0);
	CHECK_INT(auth_key_create(db, AUTH_ADMIN, 0, key, secret, &kid), 0);
	db_free(db);
	free(dbp);
	CHECK_INT(server_start(&srv, &cfg, err, sizeof(err)), 0);
	snprintf(base, sizeof(base), "http://127.0.0.1:%u", server_port(srv));
	CHECK_INT(http_client_init(&c, base, key, secret), 0);
	buf_init(&resp, LIMIT_HTTP_RESPONSE);
	CHECK_INT(http_request(&c, "POST", "/api/v1/workers", NULL, form, strlen(form), 60, &status, &resp, err,
			       sizeof(err)), 0);
	CHECK_INT(status, 200);
	CHECK((j = json_loadb(resp.data, resp.len, 0, NULL)) != NULL);
	snprintf(path, sizeof(path), "/api/v1/ws/%lld", (long long)json_integer_value(json_object_get(j, "id")));
	json_decref(j);
	buf_release(&resp);
	CHECK_INT(oq_ws_connect(&ws, base, path, key, secret, 60, err, sizeof(err)), 0);
	j = json_pack("{s:s}", "type", "quit");
	CHECK_INT(oq_ws_send(&ws, j), 0);
	json_decref(j);
	for (i = 0; i < 600 && rc == 0; i++) /* 600 x 100 ms */
		if ((m = oq_ws_recv(&ws, 100, &rc)))
			json_decref(m);
	CHECK_INT(rc, ERR_CLOSED);
	oq_ws_release(&ws);
	http_client_release(&c);
	server_free(srv);
}
