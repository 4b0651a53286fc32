/* SPDX-License-Identifier: MIT */
/* ws.h - WebSocket (RFC 6455) messages over any byte transport. Framing,
 * masking, fragmentation, ping/pong and the closing handshake are wslay's
 * (its event API); this module owns the wslay context and feeds it from a
 * transport given as recv/send callbacks, so the same code serves the
 * server side (a socket from libmicrohttpd's connection upgrade) and the
 * client side (libcurl CONNECT_ONLY). It does no HTTP: the opening
 * handshake is the caller's, helped by ws_accept_key/ws_client_key. */
#ifndef VIGIL_NET_WS_H
#define VIGIL_NET_WS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define LIMIT_WS_MSG (64u << 20)   /* bytes of one received message, fragments joined */
#define WS_ACCEPT_LEN 28           /* base64 of a SHA-1 */
#define WS_KEY_LEN 24              /* base64 of 16 random bytes */

/* Opcodes as on the wire. */
enum ws_opcode {
	WS_OP_TEXT = 0x1,
	WS_OP_BINARY = 0x2,
	WS_OP_CLOSE = 0x8,
	WS_OP_PING = 0x9,
	WS_OP_PONG = 0xa,
};

enum ws_role {
	WS_ROLE_SERVER,  /* receives masked frames, sends unmasked */
	WS_ROLE_CLIENT,  /* masks what it sends */
};

/* The transport. recv reads at most len bytes into data: the count, 0 when
 * the peer closed the stream, -EAGAIN when nothing is there now, another
 * negative code on failure. send writes at most len bytes: the count,
 * -EAGAIN when it cannot now, a negative code on failure. Both must not
 * block for long: ws_pump calls them until they answer -EAGAIN. */
typedef ssize_t (*ws_recv_fn)(void *io, void *data, size_t len);
typedef ssize_t (*ws_send_fn)(void *io, const void *data, size_t len);

struct ws_transport {
	ws_recv_fn recv;
	ws_send_fn send;
	void *io;   /* passed to both; borrowed */
	int fd;     /* for ws_wait (poll), or -1 when the caller waits itself */
};

/* A received message: text and binary ones whole (fragments joined), and
 * control frames (ping, pong, close) as they come. This module answers
 * pings and echoes a close itself (sent by the next ws_pump); data is
 * borrowed for the call. status is the close code for WS_OP_CLOSE (0 if the
 * peer sent none). The callback may call ws_send/ws_close on the same ws. */
typedef void (*ws_msg_fn)(void *ud, enum ws_opcode op, const uint8_t *data, size_t len, uint16_t status);

struct ws;

/* A WebSocket endpoint in role over t (copied; t->io stays the caller's).
 * pre/prelen: bytes already read from the stream past the HTTP handshake
 * (libmicrohttpd's extra_in, or what a client read with the 101 answer),
 * consumed before t->recv; copied. NULL on allocation failure. */
struct ws *ws_new(enum ws_role role, const struct ws_transport *t, const void *pre, size_t prelen,
		  ws_msg_fn on_msg, void *ud);

/* Frees ws (NULL-safe). Does not close the transport. */
void ws_free(struct ws *ws);

/* A transport over a connected socket fd (set non-blocking here; writes
 * with MSG_NOSIGNAL). t->io points into t itself: keep t where it is. */
void ws_transport_fd(struct ws_transport *t, int fd);

/* Queues a text (WS_OP_TEXT) or binary (WS_OP_BINARY) message of len bytes
 * (copied), sent by the next ws_pump. Messages longer than frag bytes go
 * out as continuation frames of at most frag bytes each; frag 0 sends one
 * frame. Safe from any thread: wakes a ws_wait in progress. 0, ERR_INVALID
 * (bad opcode), ERR_CLOSED (a close was already queued or sent), ERR_NOMEM. */
int ws_send(struct ws *ws, enum ws_opcode op, const void *data, size_t len, size_t frag);

/* ws_send of a NUL-terminated text in one frame. */
int ws_send_text(struct ws *ws, const char *text);

/* Queues a ping with up to 125 bytes of payload. 0, ERR_INVALID, ERR_CLOSED. */
int ws_ping(struct ws *ws, const void *data, size_t len);

/* Queues a close frame with status (0: none) and reason (may be NULL, at
 * most 123 bytes), sent after the messages queued before it. After it no
 * message can be queued. 0, ERR_CLOSED (one was already queued),
 * ERR_INVALID. */
int ws_close(struct ws *ws, uint16_t status, const char *reason);

/* Reads what the transport has (calling on_msg for each message) and
 * writes what is queued, until both would block. 0 while the connection
 * is open, ERR_CLOSED when it is over (the closing handshake done, or the
 * peer's stream ended), ERR_PROTO when the peer broke the protocol (a
 * close frame with code 1002 or 1009 was queued and sent if possible),
 * or the transport's negative code. */
int ws_pump(struct ws *ws);

/* Waits until t.fd is readable, writable while something is queued, a
 * ws_send from another thread, or timeout_ms (negative: no limit) and then
 * runs ws_pump. Its answer, or ERR_INVALID (no fd), -errno from poll. */
int ws_wait(struct ws *ws, int timeout_ms);

/* True until the closing handshake is over or the stream ended. */
bool ws_is_open(struct ws *ws);

/* The close code the peer sent (0 if none yet or none given). */
uint16_t ws_close_status(struct ws *ws);

/* Sec-WebSocket-Accept for a client's Sec-WebSocket-Key: base64 of
 * SHA-1(key + RFC 6455's GUID), into out. 0, ERR_INVALID (key NULL or not
 * WS_KEY_LEN characters), ERR_IO. */
int ws_accept_key(const char *key, char out[WS_ACCEPT_LEN + 1]);

/* A fresh random Sec-WebSocket-Key into out. 0 or ERR_IO. */
int ws_client_key(char out[WS_KEY_LEN + 1]);

#endif
