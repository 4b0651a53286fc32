/* SPDX-License-Identifier: MIT */
/* nethub.c - the relay hub of a parallel cluster's network (see nethub.h):
 * a forked child of the worker with one poll loop over its VM's
 * connection, the other hubs' connections and its listening sockets.
 * Peer wire format: the connecting side (C, the later job's hub) sends a
 * 36-byte hello ("VGH2", its job id and NICVLAN, both 64-bit big-endian,
 * and a 16-byte random nonce); the listening side (L) answers with its
 * own nonce and its proof (nethub_proof, side 'L'); C checks that proof
 * and sends its own (side 'C'); L checks it. Only then do frames pass,
 * both ways, sealed (AES-256-GCM under keys of this handshake: nethub.h);
 * the VM's side is framed as QEMU's stream netdev sends them (a 32-bit
 * big-endian length and the Ethernet frame). Each side's proof covers
 * both nonces, so a recorded handshake replayed fails; a byte beyond the
 * handshake before it ended, a wrong proof, a job or network not of this
 * cluster, a frame that does not open refuse the connection (logged,
 * closed). */
#define LOG_MODULE "nethub"
#include <errno.h>
#include <fcntl.h>
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include "net/hmac.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/log.h"
#include "util/time.h"
#include "worker/nethub.h"
#include "util/banned.h" /* last: after every system header */

#define ADDR_MAX 300
#define RETRY_S 1.0

/* Where a connection is in the handshake: an outgoing one connecting,
 * then waiting for the challenge; an accepted one waiting for the hello,
 * then for the proof; UP when frames pass. */
enum conn_state { C_CONNECTING, C_AWAIT_CHALLENGE, L_AWAIT_HELLO, L_AWAIT_PROOF, UP };

struct conn {
	int fd;             /* -1: none */
	enum conn_state st;
	double deadline;    /* the handshake must end by then */
	long long id;       /* an accepted one: the job its hello named */
	unsigned char nonce_c[NETHUB_NONCE_LEN], nonce_l[NETHUB_NONCE_LEN];
	bool sealed;        /* a hub's, after the handshake: frames sealed */
	unsigned char ktx[NETHUB_KEY_LEN], krx[NETHUB_KEY_LEN];
	uint64_t ntx, nrx;  /* frames sealed and opened so far */
	struct buf in, out;
};

struct peer {
	long long id;
	char addr[ADDR_MAX];
	struct conn c;
	double retry_at;
};

struct hub {
	long long id, vlan;
	char secret[NETHUB_SECRET_MAX + 1]; /* "": none yet */
	int vm_lfd, peer_lfd, ctl;
	struct conn vm;
	struct peer peers[NETHUB_MAX_PEERS];
	size_t npeers;
	struct conn pending[NETHUB_MAX_PEERS]; /* accepted, before the handshake ended */
	char ctl_line[ADDR_MAX + 32];
	size_t ctl_len;
	unsigned long long to_peers, from_peers, dropped;
};

static volatile sig_atomic_t hub_stop;

static void on_term(int sig)
{
	(void)sig;
	hub_stop = 1;
}

void nethub_init(struct nethub *h)
{
	h->pid = 0;
	h->ctl = -1;
	h->vm_port = h->peer_port = 0;
}

static void conn_init(struct conn *c)
{
	c->fd = -1;
	c->st = UP;
	c->deadline = 0;
	c->id = 0;
	c->sealed = false;
	c->ntx = c->nrx = 0;
	buf_init(&c->in, 2 * (NETHUB_FRAME_MAX + 4 + NETHUB_TAG_LEN));
	buf_init(&c->out, NETHUB_QUEUE_MAX + NETHUB_FRAME_MAX + 4 + NETHUB_TAG_LEN + NETHUB_HELLO_LEN);
}

static void conn_close(struct conn *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	c->st = UP;
	c->id = 0;
	c->sealed = false;
	c->ntx = c->nrx = 0;
	OPENSSL_cleanse(c->ktx, sizeof(c->ktx));
	OPENSSL_cleanse(c->krx, sizeof(c->krx));
	buf_reset(&c->in);
	buf_reset(&c->out);
}

static void put_be(unsigned char *p, uint64_t v, int n)
{
	for (int i = n - 1; i >= 0; i--, v >>= 8)
		p[i] = (unsigned char)(v & 255);
}

static uint64_t get_be(const unsigned char *p, int n)
{
	uint64_t v = 0;

	for (int i = 0; i < n; i++)
		v = v << 8 | p[i];
	return v;
}

static void iv_of(unsigned char iv[12], uint64_t seq)
{
	memset(iv, 0, 4);
	put_be(iv + 4, seq, 8);
}

int nethub_seal(const unsigned char key[NETHUB_KEY_LEN], uint64_t seq, const unsigned char *f, size_t n,
		unsigned char *out)
{
	EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
	unsigned char iv[12];
	int l = 0, l2 = 0, ok;

	if (!x || n > NETHUB_FRAME_MAX) {
		EVP_CIPHER_CTX_free(x);
		return ERR_IO;
	}
	iv_of(iv, seq);
	put_be(out, n + NETHUB_TAG_LEN, 4);
	ok = EVP_EncryptInit_ex(x, EVP_aes_256_gcm(), NULL, key, iv) == 1 &&
	     EVP_EncryptUpdate(x, NULL, &l, out, 4) == 1 && EVP_EncryptUpdate(x, out + 4, &l, f, (int)n) == 1 &&
	     EVP_EncryptFinal_ex(x, out + 4 + l, &l2) == 1 && (size_t)(l + l2) == n &&
	     EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_GCM_GET_TAG, NETHUB_TAG_LEN, out + 4 + n) == 1;
	EVP_CIPHER_CTX_free(x);
	return ok ? 0 : ERR_IO;
}

int nethub_open(const unsigned char key[NETHUB_KEY_LEN], uint64_t seq, const unsigned char *rec, size_t len,
		unsigned char *out)
{
	EVP_CIPHER_CTX *x;
	unsigned char iv[12], tag[NETHUB_TAG_LEN];
	size_t n = len - NETHUB_TAG_LEN;
	int l = 0, l2 = 0, ok;

	if (len <= NETHUB_TAG_LEN || n > NETHUB_FRAME_MAX || get_be(rec, 4) != len || !(x = EVP_CIPHER_CTX_new()))
		return ERR_PROTO;
	iv_of(iv, seq);
	memcpy(tag, rec + 4 + n, sizeof(tag));
	ok = EVP_DecryptInit_ex(x, EVP_aes_256_gcm(), NULL, key, iv) == 1 &&
	     EVP_DecryptUpdate(x, NULL, &l, rec, 4) == 1 && EVP_DecryptUpdate(x, out, &l, rec + 4, (int)n) == 1 &&
	     EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_GCM_SET_TAG, NETHUB_TAG_LEN, tag) == 1 &&
	     EVP_DecryptFinal_ex(x, out + l, &l2) == 1 && (size_t)(l + l2) == n;
	EVP_CIPHER_CTX_free(x);
	return ok ? 0 : ERR_PROTO;
}

/* Queue one frame on c (sealed when c is a hub's); dropped (and counted)
 * when its queue is full. */
static void queue_frame(struct hub *h, struct conn *c, const unsigned char *f, size_t n)
{
	static unsigned char sealed[4 + NETHUB_FRAME_MAX + NETHUB_TAG_LEN];
	unsigned char len[4];

	if (c->sealed) {
		if (c->out.len + 4 + n + NETHUB_TAG_LEN > NETHUB_QUEUE_MAX ||
		    nethub_seal(c->ktx, c->ntx, f, n, sealed) ||
		    buf_append(&c->out, sealed, 4 + n + NETHUB_TAG_LEN)) {
			h->dropped++;
			return;
		}
		c->ntx++;
		return;
	}
	put_be(len, n, 4);
	if (c->out.len + 4 + n > NETHUB_QUEUE_MAX || buf_append(&c->out, len, 4) ||
	    buf_append(&c->out, f, n)) {
		h->dropped++;
		return;
	}
}

/* A listening TCP socket: loopback (IPv4) for the VM, or every address
 * (IPv6 and IPv4 on one socket; IPv4 only where the host has no IPv6) on
 * *port, 0: the port the kernel picked in *port. The fd, or a negative
 * code. */
static int listen_on(bool loopback, unsigned *port, char *err, size_t errlen)
{
	union {
		struct sockaddr sa;
		struct sockaddr_in v4;
		struct sockaddr_in6 v6;
	} a;
	socklen_t alen;
	int fd = -1, one = 1, zero = 0;

	if (!loopback && (fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0)) >= 0) {
		memset(&a, 0, sizeof(a));
		a.v6.sin6_family = AF_INET6;
		a.v6.sin6_addr = in6addr_any;
		a.v6.sin6_port = htons((unsigned short)*port);
		(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero)) ||
		    bind(fd, &a.sa, sizeof(a.v6))) {
			int e = errno;
			close(fd);
			fd = -1;
			if (e != EADDRNOTAVAIL && e != EAFNOSUPPORT && e != ENOPROTOOPT) {
				snprintf(err, errlen, "relay hub: listening socket on port %u: %s", *port, strerror(e));
				return -e;
			}
		}
	}
	if (fd < 0) {
		if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0)) < 0) {
			snprintf(err, errlen, "relay hub: socket: %s", strerror(errno));
			return -errno;
		}
		memset(&a, 0, sizeof(a));
		a.v4.sin_family = AF_INET;
		a.v4.sin_addr.s_addr = htonl(loopback ? INADDR_LOOPBACK : INADDR_ANY);
		a.v4.sin_port = htons((unsigned short)(loopback ? 0 : *port));
		(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(fd, &a.sa, sizeof(a.v4))) {
			int e = errno;
			snprintf(err, errlen, "relay hub: listening socket on port %u: %s", loopback ? 0 : *port,
				 strerror(e));
			close(fd);
			return -e;
		}
	}
	alen = sizeof(a);
	if (listen(fd, 16) || getsockname(fd, &a.sa, &alen)) {
		int e = errno;
		snprintf(err, errlen, "relay hub: listening socket: %s", strerror(e));
		close(fd);
		return -e;
	}
	*port = ntohs(a.sa.sa_family == AF_INET6 ? a.v6.sin6_port : a.v4.sin_port);
	return fd;
}

int nethub_proof(const char *secret, char side, long long conn_id, long long listen_id, long long vlan,
		 const unsigned char nonce_c[NETHUB_NONCE_LEN], const unsigned char nonce_l[NETHUB_NONCE_LEN],
		 unsigned char out[NETHUB_PROOF_LEN])
{
	unsigned char m[13 + 1 + 24 + 2 * NETHUB_NONCE_LEN];

	memcpy(m, "vigil-relay-1", 13);
	m[13] = (unsigned char)side;
	put_be(m + 14, (uint64_t)conn_id, 8);
	put_be(m + 22, (uint64_t)listen_id, 8);
	put_be(m + 30, (uint64_t)vlan, 8);
	memcpy(m + 38, nonce_c, NETHUB_NONCE_LEN);
	memcpy(m + 38 + NETHUB_NONCE_LEN, nonce_l, NETHUB_NONCE_LEN);
	return hmac_sha256(secret, strlen(secret), m, sizeof(m), out);
}

/* Start a non-blocking connect to p's address, its hello queued (none
 * before the hub has the cluster's secret). */
static void peer_connect(struct hub *h, struct peer *p)
{
	struct addrinfo hints, *res = NULL, *ai;
	char host[ADDR_MAX], *colon;
	unsigned char hello[NETHUB_HELLO_LEN];
	int one = 1;

	p->retry_at = time_mono() + RETRY_S;
	if (!h->secret[0])
		return;
	snprintf(host, sizeof(host), "%s", p->addr);
	colon = strrchr(host, ':');
	if (!colon)
		return;
	*colon = '\0';
	if (host[0] == '[' && colon > host && colon[-1] == ']') { /* [v6]:port */
		colon[-1] = '\0';
		memmove(host, host + 1, strlen(host));
	}
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	if (getaddrinfo(host, colon + 1, &hints, &res) || !res) {
		log_warn("relay hub of job %lld: cannot resolve job %lld's hub at '%s'", h->id, p->id, p->addr);
		return;
	}
	for (ai = res; ai; ai = ai->ai_next) {
		int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
		if (fd < 0)
			continue;
		if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0 || errno == EINPROGRESS) {
			p->c.fd = fd;
			p->c.st = C_CONNECTING;
			p->c.deadline = time_mono() + NETHUB_HANDSHAKE_S;
			break;
		}
		close(fd);
	}
	freeaddrinfo(res);
	if (p->c.fd < 0)
		return;
	(void)setsockopt(p->c.fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	memcpy(hello, NETHUB_MAGIC, 4);
	put_be(hello + 4, (uint64_t)h->id, 8);
	put_be(hello + 12, (uint64_t)h->vlan, 8);
	if (hmac_random(p->c.nonce_c, NETHUB_NONCE_LEN)) {
		log_err("relay hub of job %lld: no random bytes for a nonce", h->id);
		conn_close(&p->c);
		return;
	}
	memcpy(hello + 20, p->c.nonce_c, NETHUB_NONCE_LEN);
	if (buf_append(&p->c.out, hello, NETHUB_HELLO_LEN))
		conn_close(&p->c);
}

static struct peer *find_peer(struct hub *h, long long id)
{
	for (size_t i = 0; i < h->npeers; i++)
		if (h->peers[i].id == id)
			return &h->peers[i];
	return NULL;
}

/* Whether s is a secret as nethub_secret takes it. */
static bool secret_ok(const char *s)
{
	size_t n = 0;

	for (; s[n]; n++)
		if (!((s[n] >= '0' && s[n] <= '9') || (s[n] >= 'a' && s[n] <= 'f')) || n >= NETHUB_SECRET_MAX)
			return false;
	return n >= NETHUB_SECRET_MIN;
}

/* One "JOB HOST:PORT" or "secret HEX" line from the worker. */
static void ctl_line(struct hub *h, char *line)
{
	char *sp = strchr(line, ' '), *end;
	struct peer *p;
	long long id;

	if (!sp)
		return;
	if (!strncmp(line, "secret ", 7)) {
		if (secret_ok(line + 7) && strcmp(h->secret, line + 7)) {
			if (h->secret[0])
				log_info("relay hub of job %lld: the cluster's secret changed", h->id);
			snprintf(h->secret, sizeof(h->secret), "%s", line + 7);
		}
		return;
	}
	*sp = '\0';
	id = strtoll(line, &end, 10);
	if (*end || id <= 0 || id == h->id || strlen(sp + 1) >= ADDR_MAX)
		return;
	if (!(p = find_peer(h, id))) {
		if (h->npeers == NETHUB_MAX_PEERS)
			return;
		p = &h->peers[h->npeers++];
		p->id = id;
		p->addr[0] = '\0';
		p->retry_at = 0;
		conn_init(&p->c);
	}
	if (!strcmp(p->addr, sp + 1))
		return;
	snprintf(p->addr, sizeof(p->addr), "%s", sp + 1);
	log_info("relay hub of job %lld: job %lld's hub is at %s", h->id, id, p->addr);
	if (id < h->id) { /* ours to connect: to the new address now */
		conn_close(&p->c);
		p->retry_at = 0;
	}
}

/* Read what the worker wrote; false when it has gone. */
static bool ctl_read(struct hub *h)
{
	char b[512];
	ssize_t n = recv(h->ctl, b, sizeof(b), 0);

	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
		return false;
	for (ssize_t i = 0; i < n; i++) {
		if (b[i] == '\n') {
			h->ctl_line[h->ctl_len] = '\0';
			ctl_line(h, h->ctl_line);
			h->ctl_len = 0;
		} else if (h->ctl_len + 1 < sizeof(h->ctl_line)) {
			h->ctl_line[h->ctl_len++] = b[i];
		}
	}
	return true;
}

/* Frames in c's input: to the other side. The VM's go to every connected
 * peer, a peer's (opened) to the VM. ERR_PROTO on a length beyond QEMU's
 * frames, ERR_INVALID on a sealed frame that does not open. */
static int dispatch(struct hub *h, struct conn *c, bool from_vm)
{
	static unsigned char plain[NETHUB_FRAME_MAX];
	size_t off = 0, max = NETHUB_FRAME_MAX + (c->sealed ? NETHUB_TAG_LEN : 0);
	int rc = 0;

	while (c->in.len - off >= 4) {
		const unsigned char *p = (const unsigned char *)c->in.data + off;
		uint64_t n = get_be(p, 4);
		if (n == 0 || n > max || (c->sealed && n <= NETHUB_TAG_LEN)) {
			rc = ERR_PROTO;
			break;
		}
		if (c->in.len - off - 4 < n)
			break;
		if (from_vm) {
			size_t sent = 0;
			for (size_t i = 0; i < h->npeers; i++)
				if (h->peers[i].c.fd >= 0 && h->peers[i].c.st == UP) {
					queue_frame(h, &h->peers[i].c, p + 4, n);
					sent++;
				}
			if (sent)
				h->to_peers++;
			else
				h->dropped++; /* no peer connected yet */
		} else if (c->sealed) {
			if (nethub_open(c->krx, c->nrx, p, n, plain)) {
				rc = ERR_INVALID;
				break;
			}
			c->nrx++;
			h->from_peers++;
			if (h->vm.fd >= 0)
				queue_frame(h, &h->vm, plain, n - NETHUB_TAG_LEN);
		} else {
			h->from_peers++;
			if (h->vm.fd >= 0)
				queue_frame(h, &h->vm, p + 4, n);
		}
		off += 4 + n;
	}
	buf_consume(&c->in, off);
	return rc;
}

/* Why a peer's dispatch failed. */
static const char *dispatch_why(int rc)
{
	return rc == ERR_INVALID ? "a frame that fails its authentication: not sealed with this connection's key,"
				   " altered, replayed or out of order" : "a frame longer than any Ethernet frame";
}

/* The frame keys of c after its handshake (listener: the listening side). */
static int conn_keys(struct hub *h, struct conn *c, bool listener, long long conn_id, long long listen_id)
{
	unsigned char kc[NETHUB_KEY_LEN], kl[NETHUB_KEY_LEN];

	if (nethub_proof(h->secret, 'c', conn_id, listen_id, h->vlan, c->nonce_c, c->nonce_l, kc) ||
	    nethub_proof(h->secret, 'l', conn_id, listen_id, h->vlan, c->nonce_c, c->nonce_l, kl))
		return ERR_IO;
	memcpy(c->ktx, listener ? kl : kc, NETHUB_KEY_LEN);
	memcpy(c->krx, listener ? kc : kl, NETHUB_KEY_LEN);
	OPENSSL_cleanse(kc, sizeof(kc));
	OPENSSL_cleanse(kl, sizeof(kl));
	c->sealed = true;
	c->ntx = c->nrx = 0;
	return 0;
}

/* Read what c has: false when it closed or broke. */
static bool conn_read(struct conn *c)
{
	char b[16384];

	for (;;) {
		size_t room = c->in.max - c->in.len;
		ssize_t n = read(c->fd, b, room < sizeof(b) ? room : sizeof(b));
		if (n > 0) {
			if (buf_append(&c->in, b, (size_t)n))
				return false;
			if ((size_t)n < sizeof(b))
				return true;
			continue;
		}
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return true;
		return false;
	}
}

/* Write what c has queued: false when it broke. */
static bool conn_write(struct conn *c)
{
	while (c->out.len) {
		ssize_t n = send(c->fd, c->out.data, c->out.len, MSG_NOSIGNAL);
		if (n > 0) {
			buf_consume(&c->out, (size_t)n);
			continue;
		}
		return n < 0 && (errno == EAGAIN || errno == EINTR);
	}
	return true;
}

/* An accepted connection's hello, once whole: its challenge queued, or
 * false to refuse it (logged). */
static bool hello_in(struct hub *h, struct conn *c)
{
	const unsigned char *p = (const unsigned char *)c->in.data;
	unsigned char ch[NETHUB_CHALLENGE_LEN];
	long long id, vlan;

	if (!c->in.len)
		return true;
	if (memcmp(p, NETHUB_MAGIC, c->in.len < 4 ? c->in.len : 4)) {
		log_warn("relay hub of job %lld: refused a hub connection (no relay hello: not a hub of this version,"
			 " or frames before the handshake)", h->id);
		return false;
	}
	if (c->in.len < NETHUB_HELLO_LEN)
		return true;
	id = (long long)get_be(p + 4, 8);
	vlan = (long long)get_be(p + 12, 8);
	if (c->in.len > NETHUB_HELLO_LEN) {
		log_warn("relay hub of job %lld: refused job %lld's hub connection (it sent frames before the"
			 " handshake ended)", h->id, id);
		return false;
	}
	if (vlan != h->vlan || id <= h->id) {
		log_warn("relay hub of job %lld: refused a hub connection (job %lld, network %lld: not a later job"
			 " of this network)", h->id, id, vlan);
		return false;
	}
	if (!find_peer(h, id) || !h->secret[0]) {
		/* Its worker learnt of us before ours of it: it tries again. */
		log_debug("relay hub of job %lld: job %lld's hub is not yet named by the server", h->id, id);
		return false;
	}
	c->id = id;
	memcpy(c->nonce_c, p + 20, NETHUB_NONCE_LEN);
	if (hmac_random(c->nonce_l, NETHUB_NONCE_LEN) ||
	    nethub_proof(h->secret, 'L', id, h->id, h->vlan, c->nonce_c, c->nonce_l, ch + NETHUB_NONCE_LEN)) {
		log_err("relay hub of job %lld: no random bytes or HMAC for a handshake", h->id);
		return false;
	}
	memcpy(ch, c->nonce_l, NETHUB_NONCE_LEN);
	buf_reset(&c->in);
	c->st = L_AWAIT_PROOF;
	return buf_append(&c->out, ch, sizeof(ch)) == 0;
}

/* An accepted connection's proof, once whole: the peer it is (the proof
 * consumed, frames may follow), NULL to wait (*bad: refuse it, logged). */
static struct peer *proof_in(struct hub *h, struct conn *c, bool *bad)
{
	unsigned char want[NETHUB_PROOF_LEN];
	struct peer *peer;

	*bad = false;
	if (c->in.len < NETHUB_PROOF_LEN)
		return NULL;
	*bad = true;
	if (nethub_proof(h->secret, 'C', c->id, h->id, h->vlan, c->nonce_c, c->nonce_l, want) ||
	    !hmac_equal(want, c->in.data, NETHUB_PROOF_LEN)) {
		log_warn("relay hub of job %lld: refused a hub connection claiming job %lld (a wrong handshake"
			 " proof: not this cluster's secret, or a replay)", h->id, c->id);
		return NULL;
	}
	if (!(peer = find_peer(h, c->id)) || conn_keys(h, c, true, c->id, h->id))
		return NULL;
	*bad = false;
	buf_consume(&c->in, NETHUB_PROOF_LEN);
	return peer;
}

/* An outgoing connection's challenge, once whole: true and its proof
 * queued (p is up), or true to wait; false to refuse it (logged). */
static bool challenge_in(struct hub *h, struct peer *p)
{
	struct conn *c = &p->c;
	unsigned char want[NETHUB_PROOF_LEN], mine[NETHUB_PROOF_LEN];

	if (c->in.len < NETHUB_CHALLENGE_LEN)
		return true;
	if (c->in.len > NETHUB_CHALLENGE_LEN) {
		log_warn("relay hub of job %lld: refused job %lld's hub at %s (it sent frames before the handshake"
			 " ended)", h->id, p->id, p->addr);
		return false;
	}
	memcpy(c->nonce_l, c->in.data, NETHUB_NONCE_LEN);
	if (nethub_proof(h->secret, 'L', h->id, p->id, h->vlan, c->nonce_c, c->nonce_l, want) ||
	    !hmac_equal(want, c->in.data + NETHUB_NONCE_LEN, NETHUB_PROOF_LEN)) {
		log_warn("relay hub of job %lld: refused job %lld's hub at %s (a wrong handshake proof: not this"
			 " cluster's secret, or a replay)", h->id, p->id, p->addr);
		return false;
	}
	if (nethub_proof(h->secret, 'C', h->id, p->id, h->vlan, c->nonce_c, c->nonce_l, mine) ||
	    buf_append(&c->out, mine, sizeof(mine)) || conn_keys(h, c, false, h->id, p->id))
		return false;
	buf_reset(&c->in);
	c->st = UP;
	log_info("relay hub of job %lld: connected to job %lld's hub at %s", h->id, p->id, p->addr);
	return true;
}

static void peer_gone(struct hub *h, struct peer *p, const char *why)
{
	const char *what = p->c.st == C_CONNECTING ? "not reached" :
			   p->c.st == UP ? "went away" : "was dropped in the handshake";

	log_info("relay hub of job %lld: job %lld's hub %s (%s)", h->id, p->id, what, why);
	conn_close(&p->c);
	p->retry_at = time_mono() + RETRY_S;
}

static void accept_one(int lfd, struct conn *slots, size_t nslots, bool nodelay)
{
	int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK), one = 1;
	size_t i;

	if (fd < 0)
		return;
	for (i = 0; i < nslots && slots[i].fd >= 0; i++)
		;
	if (i == nslots) {
		/* The VM's: a new connection replaces the old. Hubs: one that has
		 * not finished its handshake for longest makes room, so idle
		 * strangers cannot keep a member out for long. */
		i = 0;
		for (size_t k = 1; k < nslots; k++)
			if (slots[k].deadline < slots[i].deadline)
				i = k;
		conn_close(&slots[i]);
	}
	if (nodelay)
		(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	slots[i].fd = fd;
	slots[i].st = nslots == 1 ? UP : L_AWAIT_HELLO;
	slots[i].deadline = time_mono() + NETHUB_HANDSHAKE_S;
}

/* Connect to the peers whose turn it is (the older job's hub calls),
 * drop those and the strangers that did not finish the handshake in time. */
static void hub_timeouts(struct hub *h, double now)
{
	for (size_t i = 0; i < h->npeers; i++) {
		struct peer *p = &h->peers[i];
		if (p->c.fd < 0 && p->id < h->id && p->addr[0] && now >= p->retry_at)
			peer_connect(h, p);
		else if (p->c.fd >= 0 && p->c.st != UP && now > p->c.deadline)
			peer_gone(h, p, "no handshake in time");
	}
	for (size_t i = 0; i < NETHUB_MAX_PEERS; i++)
		if (h->pending[i].fd >= 0 && now > h->pending[i].deadline) {
			log_warn("relay hub of job %lld: closed a hub connection that did not finish the"
				 " handshake in %.0f s", h->id, NETHUB_HANDSHAKE_S);
			conn_close(&h->pending[i]);
		}
}

/* One round's poll set: each pollfd's kind (0 VM listen, 1 peer listen,
 * 2 ctl, 3 VM, then peers 'p' and pending 'q' with their index). */
struct pollset {
	struct pollfd pf[4 + 2 * NETHUB_MAX_PEERS];
	int kind[4 + 2 * NETHUB_MAX_PEERS];
	size_t idx[4 + 2 * NETHUB_MAX_PEERS];
	nfds_t n;
};

static void pollset_add(struct pollset *ps, int fd, bool out, int kind, size_t idx)
{
	ps->pf[ps->n] = (struct pollfd){ fd, (short)(POLLIN | (out ? POLLOUT : 0)), 0 };
	ps->kind[ps->n] = kind;
	ps->idx[ps->n++] = idx;
}

static void hub_pollset(const struct hub *h, struct pollset *ps)
{
	ps->n = 0;
	pollset_add(ps, h->vm_lfd, false, 0, 0);
	pollset_add(ps, h->peer_lfd, false, 1, 0);
	pollset_add(ps, h->ctl, false, 2, 0);
	if (h->vm.fd >= 0)
		pollset_add(ps, h->vm.fd, h->vm.out.len != 0, 3, 0);
	for (size_t i = 0; i < h->npeers; i++) {
		const struct conn *c = &h->peers[i].c;
		if (c->fd >= 0)
			pollset_add(ps, c->fd, c->out.len || c->st == C_CONNECTING, 'p', i);
	}
	for (size_t i = 0; i < NETHUB_MAX_PEERS; i++)
		if (h->pending[i].fd >= 0)
			pollset_add(ps, h->pending[i].fd, h->pending[i].out.len != 0, 'q', i);
}

/* Events on a peer hub's connection: its connect finished, its challenge,
 * its frames, what is queued for it. */
static void peer_event(struct hub *h, struct peer *p, short ev)
{
	int drc;

	if (p->c.fd < 0)
		return;
	if (p->c.st == C_CONNECTING && (ev & (POLLOUT | POLLERR | POLLHUP))) {
		int e = 0;
		socklen_t el = sizeof(e);
		if (getsockopt(p->c.fd, SOL_SOCKET, SO_ERROR, &e, &el) || e) {
			peer_gone(h, p, strerror(e ? e : errno));
			return;
		}
		p->c.st = C_AWAIT_CHALLENGE;
	}
	if (p->c.st == C_CONNECTING)
		return;
	if ((ev & (POLLIN | POLLHUP | POLLERR)) && !conn_read(&p->c))
		peer_gone(h, p, "connection closed");
	else if (p->c.st == C_AWAIT_CHALLENGE && !challenge_in(h, p))
		peer_gone(h, p, "its challenge was refused");
	else if (p->c.st == UP && (drc = dispatch(h, &p->c, false)))
		peer_gone(h, p, dispatch_why(drc));
	else if ((ev & POLLOUT) && !conn_write(&p->c))
		peer_gone(h, p, "send failed");
}

/* Events on a connection a hub made to this one: its hello and proof;
 * once proven, it becomes that peer's connection. */
static void pending_event(struct hub *h, struct conn *c, short ev)
{
	struct peer *p;
	bool bad;
	int drc;

	if (c->fd < 0)
		return;
	if (((ev & (POLLIN | POLLHUP | POLLERR)) && !conn_read(c)) || (c->st == L_AWAIT_HELLO && !hello_in(h, c)) ||
	    !conn_write(c)) {
		conn_close(c);
		return;
	}
	if (c->st != L_AWAIT_PROOF || !(p = proof_in(h, c, &bad))) {
		if (c->st == L_AWAIT_PROOF && bad)
			conn_close(c);
		return;
	}
	/* A new connection from that peer replaces its old one. */
	conn_close(&p->c);
	p->c.fd = c->fd;
	p->c.st = UP;
	p->c.sealed = true;
	memcpy(p->c.ktx, c->ktx, NETHUB_KEY_LEN);
	memcpy(p->c.krx, c->krx, NETHUB_KEY_LEN);
	p->c.ntx = p->c.nrx = 0;
	c->fd = -1;
	if (buf_append(&p->c.in, c->in.data, c->in.len)) {
		peer_gone(h, p, "out of memory");
		conn_close(c);
		return;
	}
	conn_close(c);
	log_info("relay hub of job %lld: job %lld's hub connected", h->id, p->id);
	if ((drc = dispatch(h, &p->c, false)))
		peer_gone(h, p, dispatch_why(drc));
}

/* Flush what this round queued without waiting for the next poll. */
static void hub_flush(struct hub *h)
{
	if (h->vm.fd >= 0 && h->vm.out.len && !conn_write(&h->vm))
		conn_close(&h->vm);
	for (size_t i = 0; i < h->npeers; i++) {
		struct peer *p = &h->peers[i];
		if (p->c.fd >= 0 && p->c.st != C_CONNECTING && p->c.out.len && !conn_write(&p->c))
			peer_gone(h, p, "send failed");
	}
}

static void hub_loop(struct hub *h)
{
	struct pollset ps;

	while (!hub_stop) {
		hub_timeouts(h, time_mono());
		hub_pollset(h, &ps);
		if (poll(ps.pf, ps.n, 250) < 0) {
			if (errno == EINTR)
				continue;
			log_err("relay hub of job %lld: poll: %s", h->id, strerror(errno));
			return;
		}
		for (nfds_t k = 0; k < ps.n; k++) {
			short ev = ps.pf[k].revents;
			if (!ev)
				continue;
			switch (ps.kind[k]) {
			case 0:
				accept_one(h->vm_lfd, &h->vm, 1, false);
				break;
			case 1:
				accept_one(h->peer_lfd, h->pending, NETHUB_MAX_PEERS, true);
				break;
			case 2:
				if (!ctl_read(h))
					return; /* the worker has gone */
				break;
			case 3:
				if (((ev & (POLLIN | POLLHUP | POLLERR)) && !conn_read(&h->vm)) ||
				    dispatch(h, &h->vm, true) || ((ev & POLLOUT) && !conn_write(&h->vm))) {
					log_info("relay hub of job %lld: the VM's connection ended", h->id);
					conn_close(&h->vm);
				}
				break;
			case 'p':
				peer_event(h, &h->peers[ps.idx[k]], ev);
				break;
			case 'q':
				pending_event(h, &h->pending[ps.idx[k]], ev);
				break;
			}
		}
		hub_flush(h);
	}
}

static void hub_run(struct hub *h, const sigset_t *mask, pid_t parent)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_term;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	sigprocmask(SIG_SETMASK, mask, NULL);
	(void)prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (getppid() != parent)
		return; /* the worker died before the line above */
	conn_init(&h->vm);
	for (size_t i = 0; i < NETHUB_MAX_PEERS; i++)
		conn_init(&h->pending[i]);
	hub_loop(h);
	log_info("relay hub of job %lld: %llu frames from the VM to its peers, %llu from peers to the VM,"
		 " %llu dropped (no peer yet, or a full queue)", h->id, h->to_peers, h->from_peers, h->dropped);
}

int nethub_start(struct nethub *h, long long job_id, long long vlan, unsigned peer_port, char *err,
		 size_t errlen)
{
	int vm_lfd = -1, peer_lfd = -1, pipefd[2] = { -1, -1 }, rc;
	sigset_t term, old;
	pid_t pid, parent = getpid();

	nethub_init(h);
	if (peer_port > 65535) {
		snprintf(err, errlen, "relay hub: port %u: expected 1..65535", peer_port);
		return ERR_INVALID;
	}
	if ((vm_lfd = listen_on(true, &h->vm_port, err, errlen)) < 0)
		return vm_lfd;
	h->peer_port = peer_port;
	if ((peer_lfd = listen_on(false, &h->peer_port, err, errlen)) < 0) {
		rc = peer_lfd;
		goto fail;
	}
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pipefd)) {
		rc = -errno;
		snprintf(err, errlen, "relay hub: socketpair: %s", strerror(errno));
		goto fail;
	}
	/* SIGTERM waits until the child has its own handler (else the
	 * worker's, inherited, would take a stop meant for the hub). */
	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	sigprocmask(SIG_BLOCK, &term, &old);
	pid = fork();
	if (pid < 0) {
		rc = -errno;
		snprintf(err, errlen, "relay hub: fork: %s", strerror(errno));
		sigprocmask(SIG_SETMASK, &old, NULL);
		goto fail;
	}
	if (pid == 0) {
		static struct hub hub; /* the child's own: large */
		hub.id = job_id;
		hub.vlan = vlan;
		hub.vm_lfd = vm_lfd;
		hub.peer_lfd = peer_lfd;
		hub.ctl = pipefd[0];
		close(pipefd[1]);
		(void)fcntl(hub.ctl, F_SETFL, O_NONBLOCK);
		setpgid(0, 0); /* the worker's kill of the runner's group spares it */
		hub_run(&hub, &old, parent);
		_exit(0);
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	close(vm_lfd);
	close(peer_lfd);
	close(pipefd[0]);
	h->pid = pid;
	h->ctl = pipefd[1];
	return 0;
fail:
	if (vm_lfd >= 0)
		close(vm_lfd);
	if (peer_lfd >= 0)
		close(peer_lfd);
	if (pipefd[0] >= 0) {
		close(pipefd[0]);
		close(pipefd[1]);
	}
	return rc;
}

/* One line to the hub; no SIGPIPE for the worker when the hub has gone. */
static int ctl_send(struct nethub *h, const char *line, size_t n)
{
	if (h->ctl < 0)
		return ERR_CLOSED;
	return send(h->ctl, line, n, MSG_NOSIGNAL | MSG_DONTWAIT) == (ssize_t)n ? 0 : ERR_IO;
}

int nethub_secret(struct nethub *h, const char *secret)
{
	char line[NETHUB_SECRET_MAX + 16];
	int n;

	if (!secret || !secret_ok(secret))
		return ERR_INVALID;
	n = snprintf(line, sizeof(line), "secret %s\n", secret);
	return ctl_send(h, line, (size_t)n);
}

int nethub_peer(struct nethub *h, long long job_id, const char *addr)
{
	char line[ADDR_MAX + 32];
	int n;

	if (h->ctl < 0)
		return ERR_CLOSED;
	if (strchr(addr, '\n') || strchr(addr, ' '))
		return ERR_INVALID;
	n = snprintf(line, sizeof(line), "%lld %s\n", job_id, addr);
	if (n < 0 || (size_t)n >= sizeof(line))
		return ERR_TOO_BIG;
	return ctl_send(h, line, (size_t)n);
}

void nethub_release(struct nethub *h)
{
	if (h->pid > 0) {
		double end = time_mono() + 10;
		int st;
		pid_t p;
		kill(h->pid, SIGTERM);
		/* It ends within its next poll; a name lookup may hold it longer. */
		while ((p = waitpid(h->pid, &st, WNOHANG)) == 0 && time_mono() < end)
			time_sleep_ms(20);
		if (p == 0) {
			kill(h->pid, SIGKILL);
			while (waitpid(h->pid, &st, 0) < 0 && errno == EINTR)
				;
		}
	}
	if (h->ctl >= 0)
		close(h->ctl);
	nethub_init(h);
}

/* A host name or IPv4 address: letters, digits, '.', '-', '_'. */
static bool name_ok(const char *s, size_t n)
{
	if (!n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
		      s[i] == '.' || s[i] == '-' || s[i] == '_'))
			return false;
	return true;
}

int nethub_parse_host(const char *arg, char *host, size_t hostlen, unsigned *port, char *err, size_t errlen)
{
	const char *colon = strchr(arg, ':'), *close_b = NULL, *ps = NULL;
	char v6[INET6_ADDRSTRLEN + 1];
	struct in6_addr a6;
	size_t hn;

	*port = 0;
	if (arg[0] == '[') { /* [v6] or [v6]:port */
		close_b = strchr(arg, ']');
		hn = close_b ? (size_t)(close_b - arg - 1) : 0;
		if (!close_b || hn >= sizeof(v6) || (close_b[1] && close_b[1] != ':'))
			goto bad;
		memcpy(v6, arg + 1, hn);
		v6[hn] = '\0';
		if (close_b[1])
			ps = close_b + 2;
	} else if (colon && strchr(colon + 1, ':')) { /* a bare v6 */
		if (strlen(arg) >= sizeof(v6))
			goto bad;
		snprintf(v6, sizeof(v6), "%s", arg);
	} else { /* a name or v4, maybe :port */
		hn = colon ? (size_t)(colon - arg) : strlen(arg);
		if (!name_ok(arg, hn) || hn + 1 > hostlen || hn > 253)
			goto bad;
		memcpy(host, arg, hn);
		host[hn] = '\0';
		if (colon)
			ps = colon + 1;
		v6[0] = '\0';
	}
	if (v6[0]) {
		if (inet_pton(AF_INET6, v6, &a6) != 1 || strlen(v6) + 3 > hostlen)
			goto bad;
		snprintf(host, hostlen, "[%s]", v6);
	}
	if (ps) {
		unsigned long v = 0;
		if (!*ps || strlen(ps) > 5)
			goto bad;
		for (const char *q = ps; *q; q++) {
			if (*q < '0' || *q > '9')
				goto bad;
			v = v * 10 + (unsigned long)(*q - '0');
		}
		if (v < 1 || v > 65535)
			goto bad;
		*port = (unsigned)v;
	}
	return 0;
bad:
	snprintf(err, errlen, "'%s': expected HOST or HOST:PORT (a host name or IPv4 address), an IPv6 address,"
		 " [IPv6] or [IPv6]:PORT (PORT 1..65535)", arg);
	return ERR_INVALID;
}
