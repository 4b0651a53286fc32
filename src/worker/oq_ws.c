/* SPDX-License-Identifier: MIT */
/* oq_ws.c - the worker's WebSocket client glue for openQA (see oq_ws.h):
 * connection and Upgrade handshake over libcurl's CONNECT_ONLY, the
 * redirect to openQA's websockets daemon, the transport callbacks that
 * net/ws.c frames over. Owns the connection; writes no frames itself. */
#define LOG_MODULE "worker"
#include <curl/curl.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include "net/hmac.h"
#include "net/ws.h"
#include "util/err.h"
#include "util/log.h"
#include "util/time.h"
#include "worker/oq_ws.h"
#include "util/banned.h" /* last: after every system header */

/* Wait until fd is readable (events POLLIN) or writable, at most ms. */
static int wait_fd(int fd, short events, int ms)
{
	struct pollfd p = { fd, events, 0 };
	int n;

	do
		n = poll(&p, 1, ms);
	while (n < 0 && errno == EINTR);
	return n;
}

/* Write all of data; 0 or ERR_IO/ERR_TIMEOUT. */
static int send_all(struct oq_ws *s, const void *data, size_t len, int timeout_ms)
{
	const char *p = data;
	double deadline = time_mono() + timeout_ms / 1000.0;

	while (len) {
		size_t n = 0;
		CURLcode cc = curl_easy_send(s->curl, p, len, &n);
		if (cc == CURLE_AGAIN) {
			if (time_mono() > deadline)
				return ERR_TIMEOUT;
			wait_fd(s->fd, POLLOUT, 1000);
			continue;
		}
		if (cc != CURLE_OK)
			return ERR_IO;
		p += n;
		len -= n;
	}
	return 0;
}

/* Read what is there into b (at most room); 0 with *got (0 when nothing
 * yet), or ERR_CLOSED at EOF, ERR_IO. */
static int recv_some(struct oq_ws *s, char *b, size_t room, size_t *got)
{
	CURLcode cc = curl_easy_recv(s->curl, b, room, got);

	if (cc == CURLE_AGAIN) {
		*got = 0;
		return 0;
	}
	if (cc != CURLE_OK)
		return ERR_IO;
	return *got ? 0 : ERR_CLOSED;
}

/* The value of header name in the response head (NUL-terminated, lines
 * end in CRLF), copied into out; false when absent. */
static bool header(const char *head, const char *name, char *out, size_t outlen)
{
	size_t n = strlen(name);
	const char *p = strstr(head, "\r\n");

	while (p && p[2]) {
		const char *line = p + 2, *end = strstr(line, "\r\n");
		if (!end)
			break;
		if ((size_t)(end - line) > n && !strncasecmp(line, name, n) && line[n] == ':') {
			const char *v = line + n + 1;
			while (*v == ' ' || *v == '\t')
				v++;
			snprintf(out, outlen, "%.*s", (int)(end - v), v);
			return true;
		}
		p = end;
	}
	return false;
}

static void close_conn(struct oq_ws *s)
{
	if (s->curl)
		curl_easy_cleanup(s->curl);
	s->curl = NULL;
	s->fd = -1;
}

/* One handshake at url. 0 upgraded, 1 redirected (location set), or an
 * error code with err. */
static int handshake(struct oq_ws *s, const char *url, const char *key, const char *secret, long timeout_s,
		     char *location, size_t loclen, char *err, size_t errlen)
{
	CURLU *u = curl_url();
	char *host = NULL, *port = NULL, *path = NULL, *query = NULL, req[4096], target[1024], mt[32];
	char hash[HMAC_HEX_LEN + 1] = "", wskey[WS_KEY_LEN + 1], accept[64], want[WS_ACCEPT_LEN + 1];
	char head[OQ_WS_HANDSHAKE_MAX];
	size_t have = 0;
	long code = 0;
	curl_socket_t fd = CURL_SOCKET_BAD;
	double deadline = time_mono() + (double)timeout_s;
	int rc = 0, n;

	close_conn(s);
	if (!u || curl_url_set(u, CURLUPART_URL, url, 0) || curl_url_get(u, CURLUPART_HOST, &host, 0) ||
	    curl_url_get(u, CURLUPART_PATH, &path, 0)) {
		err_set(err, errlen, "websocket URL '%s' not understood", url);
		rc = ERR_INVALID;
		goto out;
	}
	(void)curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT);
	(void)curl_url_get(u, CURLUPART_QUERY, &query, 0);
	snprintf(target, sizeof(target), "%s%s%s", path, query ? "?" : "", query ? query : "");
	if (!(s->curl = curl_easy_init())) {
		rc = ERR_NOMEM;
		goto out;
	}
	curl_easy_setopt(s->curl, CURLOPT_URL, url);
	curl_easy_setopt(s->curl, CURLOPT_CONNECT_ONLY, 1L);
	curl_easy_setopt(s->curl, CURLOPT_CONNECTTIMEOUT, 10L);
	curl_easy_setopt(s->curl, CURLOPT_NOSIGNAL, 1L);
	if (curl_easy_perform(s->curl) != CURLE_OK ||
	    curl_easy_getinfo(s->curl, CURLINFO_ACTIVESOCKET, &fd) != CURLE_OK || fd == CURL_SOCKET_BAD) {
		err_set(err, errlen, "websocket: cannot connect to %s", url);
		rc = ERR_IO;
		goto out;
	}
	s->fd = (int)fd;
	if ((rc = ws_client_key(wskey)))
		goto out;
	snprintf(mt, sizeof(mt), "%lld", (long long)time(NULL));
	if (key && secret && hmac_sign(secret, target, mt, hash)) {
		err_set(err, errlen, "websocket: cannot sign %s", target);
		rc = ERR_INVALID;
		goto out;
	}
	n = snprintf(req, sizeof(req),
		     "GET %s HTTP/1.1\r\nHost: %s:%s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
		     "Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n"
		     "X-API-Microtime: %s\r\n%s%s%s%s%s"
		     "Accept: application/json\r\n\r\n",
		     target, host, port ? port : "80", wskey, mt, key && secret ? "X-API-Key: " : "",
		     key && secret ? key : "", key && secret ? "\r\nX-API-Hash: " : "", key && secret ? hash : "",
		     key && secret ? "\r\n" : "");
	if (n < 0 || (size_t)n >= sizeof(req)) {
		rc = ERR_TOO_BIG;
		goto out;
	}
	if ((rc = send_all(s, req, (size_t)n, timeout_s * 1000))) {
		err_set(err, errlen, "websocket: sending the handshake to %s failed", url);
		goto out;
	}
	/* Read the response head byte by byte up to the blank line, so the
	 * first frames after it stay in the socket for the framing. */
	for (;;) {
		size_t got = 0;
		if (have + 1 >= sizeof(head)) {
			err_set(err, errlen, "websocket: response head from %s over %zu bytes", url, sizeof(head));
			rc = ERR_TOO_BIG;
			goto out;
		}
		if ((rc = recv_some(s, head + have, 1, &got))) {
			err_set(err, errlen, "websocket: %s closed the connection during the handshake", url);
			goto out;
		}
		if (!got) {
			if (time_mono() > deadline) {
				err_set(err, errlen, "websocket: no handshake answer from %s", url);
				rc = ERR_TIMEOUT;
				goto out;
			}
			wait_fd(s->fd, POLLIN, 1000);
			continue;
		}
		have += got;
		head[have] = '\0';
		if (have >= 4 && !memcmp(head + have - 4, "\r\n\r\n", 4))
			break;
	}
	if (sscanf(head, "HTTP/1.%*d %ld", &code) != 1) {
		err_set(err, errlen, "websocket: %s answered no HTTP status", url);
		rc = ERR_PROTO;
		goto out;
	}
	if (code == 301 || code == 302 || code == 303 || code == 307 || code == 308) {
		if (!header(head, "Location", location, loclen) || !*location) {
			err_set(err, errlen, "websocket: %s redirected without a Location", url);
			rc = ERR_PROTO;
			goto out;
		}
		rc = 1;
		goto out;
	}
	if (code != 101) {
		err_set(err, errlen, "websocket: %s refused the upgrade (HTTP %ld)", url, code);
		rc = ERR_PROTO;
		goto out;
	}
	if ((rc = ws_accept_key(wskey, want)))
		goto out;
	if (!header(head, "Sec-WebSocket-Accept", accept, sizeof(accept)) || strcmp(accept, want)) {
		err_set(err, errlen, "websocket: %s answered a wrong Sec-WebSocket-Accept", url);
		rc = ERR_PROTO;
		goto out;
	}
	snprintf(s->url, sizeof(s->url), "%s", url);
out:
	if (rc < 0)
		close_conn(s);
	curl_free(host);
	curl_free(port);
	curl_free(path);
	curl_free(query);
	curl_url_cleanup(u);
	return rc;
}

/* net/ws.c's transport: bytes from and to the socket, through libcurl
 * (which would also carry TLS). */
static ssize_t transport_recv(void *io, void *data, size_t len)
{
	struct oq_ws *s = io;
	size_t got = 0;
	CURLcode cc = curl_easy_recv(s->curl, data, len, &got);

	if (cc == CURLE_AGAIN)
		return -EAGAIN;
	return cc == CURLE_OK ? (ssize_t)got : ERR_IO;
}

static ssize_t transport_send(void *io, const void *data, size_t len)
{
	struct oq_ws *s = io;
	size_t n = 0;
	CURLcode cc = curl_easy_send(s->curl, data, len, &n);

	if (cc == CURLE_AGAIN)
		return -EAGAIN;
	return cc == CURLE_OK ? (ssize_t)n : ERR_IO;
}

/* A message from net/ws.c: text ones queued as JSON objects. */
static void on_message(void *ud, enum ws_opcode op, const uint8_t *data, size_t len, uint16_t status)
{
	struct oq_ws *s = ud;
	json_t *j;
	json_error_t je;

	if (op == WS_OP_CLOSE) {
		log_info("websocket %s closed by the server (code %u)", s->url, (unsigned)status);
		s->closed = 1;
		return;
	}
	if (op == WS_OP_PING || op == WS_OP_PONG)
		return;
	if (op != WS_OP_TEXT) {
		log_warn("websocket %s: binary message of %zu bytes ignored", s->url, len);
		return;
	}
	j = json_loadb((const char *)data, len, 0, &je);
	if (!json_is_object(j)) {
		log_warn("websocket %s: message is not a JSON object (%s): %.*s", s->url,
			 j ? "not an object" : je.text, (int)(len > 200 ? 200 : len), (const char *)data);
		json_decref(j);
		return;
	}
	if (json_array_append_new(s->inbox, j)) {
		/* A message lost (a job offered, a cancel): not silently. The
		 * connection ends; the worker registers again and the server
		 * tells it its state anew. */
		log_err("websocket %s: message dropped: out of memory; closing", s->url);
		s->closed = 1;
	}
}

int oq_ws_connect(struct oq_ws *s, const char *base, const char *path, const char *key, const char *secret,
		  long timeout_s, char *err, size_t errlen)
{
	char url[1024], location[1024];
	int i, rc = ERR_PROTO;

	memset(s, 0, sizeof(*s));
	s->fd = -1;
	if (!(s->inbox = json_array()))
		return ERR_NOMEM;
	snprintf(url, sizeof(url), "%s%s", base, path);
	for (i = 0; i <= OQ_WS_MAX_REDIRECTS; i++) {
		rc = handshake(s, url, key, secret, timeout_s, location, sizeof(location), err, errlen);
		if (rc != 1)
			break;
		log_debug("websocket %s redirected to %s", url, location);
		if (location[0] == '/')
			snprintf(url, sizeof(url), "%s%s", base, location);
		else
			snprintf(url, sizeof(url), "%s", location);
		rc = ERR_PROTO;
	}
	if (rc == ERR_PROTO && i > OQ_WS_MAX_REDIRECTS)
		err_set(err, errlen, "websocket: more than %d redirects from %s%s", OQ_WS_MAX_REDIRECTS, base, path);
	if (rc) {
		/* Nothing is left for the caller to release. */
		close_conn(s);
		json_decref(s->inbox);
		s->inbox = NULL;
		return rc;
	}
	s->transport.recv = transport_recv;
	s->transport.send = transport_send;
	s->transport.io = s;
	s->transport.fd = s->fd;
	/* The handshake was read up to its blank line: nothing read ahead. */
	if (!(s->ws = ws_new(WS_ROLE_CLIENT, &s->transport, NULL, 0, on_message, s))) {
		err_set(err, errlen, "websocket: out of memory");
		close_conn(s);
		json_decref(s->inbox);
		s->inbox = NULL;
		return ERR_NOMEM;
	}
	log_info("websocket connected to %s", s->url);
	return 0;
}

int oq_ws_send(struct oq_ws *s, const json_t *msg)
{
	char *text;
	int rc;

	if (!s->ws || s->closed)
		return ERR_CLOSED;
	if (!(text = json_dumps(msg, JSON_COMPACT)))
		return ERR_NOMEM;
	rc = ws_send_text(s->ws, text);
	free(text);
	if (!rc) {
		rc = ws_pump(s->ws);
		if (rc == ERR_CLOSED)
			s->closed = 1;
		rc = rc == ERR_CLOSED || rc == 0 ? rc : ERR_IO;
	}
	return rc;
}

json_t *oq_ws_recv(struct oq_ws *s, int timeout_ms, int *rc)
{
	double deadline = time_mono() + timeout_ms / 1000.0;

	*rc = 0;
	for (;;) {
		int r;
		if (json_array_size(s->inbox)) {
			json_t *j = json_incref(json_array_get(s->inbox, 0));
			json_array_remove(s->inbox, 0);
			return j;
		}
		if (s->closed || !s->ws) {
			*rc = ERR_CLOSED;
			return NULL;
		}
		/* Frames that are there: messages, pings answered, close. */
		if ((r = ws_pump(s->ws)) < 0) {
			if (r != ERR_CLOSED)
				log_warn("websocket %s: %s", s->url, err_str(r));
			s->closed = 1;
			continue;
		}
		if (json_array_size(s->inbox) || s->closed)
			continue;
		{
			double left = deadline - time_mono();
			if (left <= 0)
				return NULL;
			wait_fd(s->fd, POLLIN, left > 1 ? 1000 : (int)(left * 1000) + 1);
		}
	}
}

void oq_ws_release(struct oq_ws *s)
{
	if (s->ws) {
		if (!s->closed && !ws_close(s->ws, 1000, "worker stops"))
			(void)ws_pump(s->ws);
		ws_free(s->ws);
	}
	s->ws = NULL;
	close_conn(s);
	json_decref(s->inbox);
	s->inbox = NULL;
}
