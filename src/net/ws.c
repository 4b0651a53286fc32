/* SPDX-License-Identifier: MIT */
/* ws.c - WebSocket endpoints over a recv/send transport, framed by wslay's
 * event API. Owns the wslay context, the bytes read ahead of it and the
 * buffers of queued fragmented messages; never owns the transport. One
 * recursive mutex makes ws_send usable from other threads while one thread
 * pumps; an eventfd wakes that thread's poll. */
#include "net/ws.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>
#include <openssl/evp.h>
#include <openssl/sha.h>
#include <wslay/wslay.h>

#include "util/err.h"
#include "util/banned.h" /* last: after every system header */

/* A fragmented message being sent: wslay reads it through frag_read. */
struct ws_frag {
	struct ws_frag *next;
	uint8_t *data;
	size_t len, off, frag;
	bool done;
};

struct ws {
	wslay_event_context_ptr ctx;
	struct ws_transport t;
	ws_msg_fn on_msg;
	void *ud;
	uint8_t *pre;           /* read-ahead bytes, consumed first */
	size_t prelen, preoff;
	struct ws_frag *frags;
	pthread_mutex_t mu;     /* recursive: on_msg may call ws_send */
	int wake;               /* eventfd, or -1 */
	int io_err;             /* the transport's error that ended it, 0 if none */
	bool eof;               /* the peer's stream ended */
	bool over;              /* closed: nothing more to do */
	/* A close asked for while messages wait: wslay would send its close
	 * frame ahead of them, so it is queued once they have left. */
	bool close_pending;
	uint16_t close_status;
	char close_reason[124];
};

static ssize_t ws__recv(wslay_event_context_ptr ctx, uint8_t *buf, size_t len, int flags, void *user)
{
	struct ws *ws = user;
	ssize_t n;

	(void)flags;
	if (ws->preoff < ws->prelen) {
		n = (ssize_t)(ws->prelen - ws->preoff < len ? ws->prelen - ws->preoff : len);
		memcpy(buf, ws->pre + ws->preoff, (size_t)n);
		ws->preoff += (size_t)n;
		return n;
	}
	n = ws->t.recv(ws->t.io, buf, len);
	if (n > 0)
		return n;
	if (n == -EAGAIN || n == -EWOULDBLOCK || n == -EINTR) {
		wslay_event_set_error(ctx, WSLAY_ERR_WOULDBLOCK);
		return -1;
	}
	if (n == 0 || n == -ECONNRESET)
		ws->eof = true;
	else
		ws->io_err = (int)n;
	wslay_event_set_error(ctx, WSLAY_ERR_CALLBACK_FAILURE);
	return -1;
}

static ssize_t ws__send(wslay_event_context_ptr ctx, const uint8_t *data, size_t len, int flags, void *user)
{
	struct ws *ws = user;
	ssize_t n;

	(void)flags;
	n = ws->t.send(ws->t.io, data, len);
	if (n >= 0)
		return n;
	if (n == -EAGAIN || n == -EWOULDBLOCK || n == -EINTR) {
		wslay_event_set_error(ctx, WSLAY_ERR_WOULDBLOCK);
		return -1;
	}
	/* Writing to a peer that has gone is its stream ending. */
	if (n == -EPIPE || n == -ECONNRESET)
		ws->eof = true;
	else
		ws->io_err = (int)n;
	wslay_event_set_error(ctx, WSLAY_ERR_CALLBACK_FAILURE);
	return -1;
}

static int ws__genmask(wslay_event_context_ptr ctx, uint8_t *buf, size_t len, void *user)
{
	(void)user;
	if (getrandom(buf, len, 0) != (ssize_t)len) {
		wslay_event_set_error(ctx, WSLAY_ERR_CALLBACK_FAILURE);
		return -1;
	}
	return 0;
}

static void ws__on_msg(wslay_event_context_ptr ctx, const struct wslay_event_on_msg_recv_arg *arg, void *user)
{
	struct ws *ws = user;

	(void)ctx;
	if (ws->on_msg)
		ws->on_msg(ws->ud, (enum ws_opcode)arg->opcode, arg->msg, arg->msg_length,
			   arg->opcode == WSLAY_CONNECTION_CLOSE ? arg->status_code : 0);
}

static ssize_t ws__frag_read(wslay_event_context_ptr ctx, uint8_t *buf, size_t len,
			     const union wslay_event_msg_source *src, int *eof, void *user)
{
	struct ws_frag *f = src->data;
	size_t n = f->len - f->off;

	(void)ctx;
	(void)user;
	if (n > len)
		n = len;
	if (n > f->frag)
		n = f->frag;
	memcpy(buf, f->data + f->off, n);
	f->off += n;
	if (f->off == f->len) {
		*eof = 1;
		f->done = true;
	}
	return (ssize_t)n;
}

/* Frees the fragmented messages wslay has finished with. */
static void ws__reap(struct ws *ws, bool all)
{
	struct ws_frag **p = &ws->frags;

	while (*p) {
		struct ws_frag *f = *p;
		if (all || f->done) {
			*p = f->next;
			free(f->data);
			free(f);
		} else {
			p = &f->next;
		}
	}
}

static void ws__wake(struct ws *ws)
{
	uint64_t one = 1;

	if (ws->wake >= 0 && write(ws->wake, &one, sizeof(one)) < 0) {
		/* The counter is full: a wakeup is pending anyway. */
	}
}

struct ws *ws_new(enum ws_role role, const struct ws_transport *t, const void *pre, size_t prelen,
		  ws_msg_fn on_msg, void *ud)
{
	struct wslay_event_callbacks cb = {
		.recv_callback = ws__recv,
		.send_callback = ws__send,
		.genmask_callback = ws__genmask,
		.on_msg_recv_callback = ws__on_msg,
	};
	pthread_mutexattr_t ma;
	struct ws *ws = calloc(1, sizeof(*ws));
	int r;

	if (!ws)
		return NULL;
	ws->t = *t;
	ws->on_msg = on_msg;
	ws->ud = ud;
	ws->wake = -1;
	if (prelen) {
		ws->pre = malloc(prelen);
		if (!ws->pre)
			goto fail;
		memcpy(ws->pre, pre, prelen);
		ws->prelen = prelen;
	}
	r = role == WS_ROLE_SERVER ? wslay_event_context_server_init(&ws->ctx, &cb, ws)
				   : wslay_event_context_client_init(&ws->ctx, &cb, ws);
	if (r)
		goto fail;
	wslay_event_config_set_max_recv_msg_length(ws->ctx, LIMIT_WS_MSG);
	ws->wake = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (ws->wake < 0)
		goto fail;
	pthread_mutexattr_init(&ma);
	pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_RECURSIVE);
	r = pthread_mutex_init(&ws->mu, &ma);
	pthread_mutexattr_destroy(&ma);
	if (r)
		goto fail;
	return ws;
fail:
	if (ws->ctx)
		wslay_event_context_free(ws->ctx);
	if (ws->wake >= 0)
		close(ws->wake);
	free(ws->pre);
	free(ws);
	return NULL;
}

void ws_free(struct ws *ws)
{
	if (!ws)
		return;
	wslay_event_context_free(ws->ctx);
	ws__reap(ws, true);
	pthread_mutex_destroy(&ws->mu);
	close(ws->wake);
	free(ws->pre);
	free(ws);
}

static ssize_t ws__fd_recv(void *io, void *data, size_t len)
{
	int fd = *(int *)io;
	ssize_t n = recv(fd, data, len, 0);

	return n < 0 ? -errno : n;
}

static ssize_t ws__fd_send(void *io, const void *data, size_t len)
{
	int fd = *(int *)io;
	ssize_t n = send(fd, data, len, MSG_NOSIGNAL);

	return n < 0 ? -errno : n;
}

void ws_transport_fd(struct ws_transport *t, int fd)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl >= 0 && !(fl & O_NONBLOCK))
		fcntl(fd, F_SETFL, fl | O_NONBLOCK);
	t->recv = ws__fd_recv;
	t->send = ws__fd_send;
	t->fd = fd;
	t->io = &t->fd;
}

static int ws__queue_err(int r)
{
	if (r == WSLAY_ERR_NO_MORE_MSG)
		return ERR_CLOSED;
	if (r == WSLAY_ERR_NOMEM)
		return ERR_NOMEM;
	return ERR_INVALID;
}

int ws_send(struct ws *ws, enum ws_opcode op, const void *data, size_t len, size_t frag)
{
	int r = 0;

	if (op != WS_OP_TEXT && op != WS_OP_BINARY)
		return ERR_INVALID;
	pthread_mutex_lock(&ws->mu);
	ws__reap(ws, false);
	if (ws->over || ws->close_pending || wslay_event_get_close_sent(ws->ctx)) {
		r = ERR_CLOSED;
	} else if (frag == 0 || len <= frag) {
		struct wslay_event_msg m = { .opcode = (uint8_t)op, .msg = data, .msg_length = len };
		/* wslay copies the payload. */
		r = wslay_event_queue_msg(ws->ctx, &m);
		if (r)
			r = ws__queue_err(r);
	} else {
		struct ws_frag *f = calloc(1, sizeof(*f));
		struct wslay_event_fragmented_msg m = { .opcode = (uint8_t)op, .read_callback = ws__frag_read };

		if (!f || !(f->data = malloc(len))) {
			free(f);
			r = ERR_NOMEM;
			goto out;
		}
		memcpy(f->data, data, len);
		f->len = len;
		f->frag = frag;
		m.source.data = f;
		r = wslay_event_queue_fragmented_msg(ws->ctx, &m);
		if (r) {
			free(f->data);
			free(f);
			r = ws__queue_err(r);
			goto out;
		}
		f->next = ws->frags;
		ws->frags = f;
	}
out:
	pthread_mutex_unlock(&ws->mu);
	if (!r)
		ws__wake(ws);
	return r;
}

int ws_send_text(struct ws *ws, const char *text)
{
	return ws_send(ws, WS_OP_TEXT, text, strlen(text), 0);
}

int ws_ping(struct ws *ws, const void *data, size_t len)
{
	struct wslay_event_msg m = { .opcode = WSLAY_PING, .msg = data, .msg_length = len };
	int r;

	if (len > 125)
		return ERR_INVALID;
	pthread_mutex_lock(&ws->mu);
	if (ws->over)
		r = ERR_CLOSED;
	else if ((r = wslay_event_queue_msg(ws->ctx, &m)))
		r = ws__queue_err(r);
	pthread_mutex_unlock(&ws->mu);
	if (!r)
		ws__wake(ws);
	return r;
}

int ws_close(struct ws *ws, uint16_t status, const char *reason)
{
	size_t rlen = reason ? strlen(reason) : 0;
	int r;

	if (rlen > 123)
		return ERR_INVALID;
	pthread_mutex_lock(&ws->mu);
	if (ws->over || ws->close_pending) {
		r = ERR_CLOSED;
	} else if (wslay_event_get_queued_msg_count(ws->ctx)) {
		ws->close_pending = true;
		ws->close_status = status;
		memcpy(ws->close_reason, reason ? reason : "", rlen + 1);
		r = 0;
	} else if ((r = wslay_event_queue_close(ws->ctx, status, (const uint8_t *)reason, rlen))) {
		r = ws__queue_err(r);
	}
	pthread_mutex_unlock(&ws->mu);
	if (!r)
		ws__wake(ws);
	return r;
}

/* The answer once the connection is over. */
static int ws__end_code(struct ws *ws)
{
	uint16_t sent = wslay_event_get_status_code_sent(ws->ctx);

	if (ws->io_err)
		return ws->io_err;
	if (!wslay_event_get_close_received(ws->ctx) &&
	    (sent == WSLAY_CODE_PROTOCOL_ERROR || sent == WSLAY_CODE_MESSAGE_TOO_BIG ||
	     sent == WSLAY_CODE_INVALID_FRAME_PAYLOAD_DATA))
		return ERR_PROTO;
	return ERR_CLOSED;
}

int ws_pump(struct ws *ws)
{
	int r = 0;

	pthread_mutex_lock(&ws->mu);
	if (ws->over) {
		r = ws__end_code(ws);
		goto out;
	}
	/* Sending first lets a close queued by the caller leave before a
	 * read finds the stream ended. */
	if (wslay_event_want_write(ws->ctx) && wslay_event_send(ws->ctx) == WSLAY_ERR_NOMEM)
		r = ERR_NOMEM;
	if (!r && ws->close_pending && !wslay_event_get_queued_msg_count(ws->ctx)) {
		ws->close_pending = false;
		if (wslay_event_queue_close(ws->ctx, ws->close_status, (const uint8_t *)ws->close_reason,
					    strlen(ws->close_reason)) == 0 &&
		    wslay_event_send(ws->ctx) == WSLAY_ERR_NOMEM)
			r = ERR_NOMEM;
	}
	if (!r && wslay_event_want_read(ws->ctx) && wslay_event_recv(ws->ctx) == WSLAY_ERR_NOMEM)
		r = ERR_NOMEM;
	/* What the reading queued (pongs, the close echo) goes now. */
	if (!r && !ws->io_err && !ws->eof && wslay_event_want_write(ws->ctx) &&
	    wslay_event_send(ws->ctx) == WSLAY_ERR_NOMEM)
		r = ERR_NOMEM;
	ws__reap(ws, false);
	if (r) {
		ws->over = true;
		goto out;
	}
	if (ws->eof || ws->io_err ||
	    (!wslay_event_want_read(ws->ctx) && !wslay_event_want_write(ws->ctx))) {
		ws->over = true;
		r = ws__end_code(ws);
	}
out:
	pthread_mutex_unlock(&ws->mu);
	return r;
}

int ws_wait(struct ws *ws, int timeout_ms)
{
	struct pollfd p[2];
	uint64_t v;
	int r;

	if (ws->t.fd < 0)
		return ERR_INVALID;
	pthread_mutex_lock(&ws->mu);
	if (ws->over) {
		r = ws__end_code(ws);
		pthread_mutex_unlock(&ws->mu);
		return r;
	}
	p[0].fd = ws->t.fd;
	p[0].events = 0;
	/* Bytes read ahead count as readable. */
	if (wslay_event_want_read(ws->ctx))
		p[0].events |= POLLIN;
	if (wslay_event_want_write(ws->ctx))
		p[0].events |= POLLOUT;
	if (ws->preoff < ws->prelen)
		timeout_ms = 0;
	pthread_mutex_unlock(&ws->mu);
	p[1].fd = ws->wake;
	p[1].events = POLLIN;
	p[0].revents = p[1].revents = 0;
	r = poll(p, 2, timeout_ms);
	if (r < 0 && errno != EINTR)
		return -errno;
	if (p[1].revents & POLLIN && read(ws->wake, &v, sizeof(v)) < 0) {
		/* Raced with another reader of the counter: nothing lost. */
	}
	return ws_pump(ws);
}

bool ws_is_open(struct ws *ws)
{
	bool open;

	pthread_mutex_lock(&ws->mu);
	open = !ws->over;
	pthread_mutex_unlock(&ws->mu);
	return open;
}

uint16_t ws_close_status(struct ws *ws)
{
	uint16_t s;

	pthread_mutex_lock(&ws->mu);
	s = wslay_event_get_close_received(ws->ctx) ? wslay_event_get_status_code_received(ws->ctx) : 0;
	pthread_mutex_unlock(&ws->mu);
	return s;
}

int ws_accept_key(const char *key, char out[WS_ACCEPT_LEN + 1])
{
	static const char guid[] = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
	unsigned char in[WS_KEY_LEN + sizeof(guid) - 1], md[SHA_DIGEST_LENGTH];

	out[0] = '\0';
	if (!key || strlen(key) != WS_KEY_LEN)
		return ERR_INVALID;
	memcpy(in, key, WS_KEY_LEN);
	memcpy(in + WS_KEY_LEN, guid, sizeof(guid) - 1);
	if (!SHA1(in, sizeof(in), md))
		return ERR_IO;
	EVP_EncodeBlock((unsigned char *)out, md, SHA_DIGEST_LENGTH);
	return 0;
}

int ws_client_key(char out[WS_KEY_LEN + 1])
{
	unsigned char raw[16];

	out[0] = '\0';
	if (getrandom(raw, sizeof(raw), 0) != (ssize_t)sizeof(raw))
		return ERR_IO;
	EVP_EncodeBlock((unsigned char *)out, raw, sizeof(raw));
	return 0;
}
