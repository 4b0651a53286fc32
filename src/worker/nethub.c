/* SPDX-License-Identifier: MIT */
/* nethub.c - the relay hub of a parallel cluster's network (see nethub.h):
 * a forked child of the worker with one poll loop over its VM's
 * connection, the other hubs' connections and its listening sockets.
 * Peer wire format: a 20-byte hello ("VGH1", the sender's job id and its
 * NICVLAN, both 64-bit big-endian) from the connecting side, then frames
 * both ways, each a 32-bit big-endian length and the Ethernet frame, as
 * QEMU's stream netdev sends them. */
#define LOG_MODULE "nethub"
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
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
#include "util/buf.h"
#include "util/err.h"
#include "util/log.h"
#include "util/time.h"
#include "worker/nethub.h"
#include "util/banned.h" /* last: after every system header */

#define HELLO_LEN 20
#define ADDR_MAX 300
#define RETRY_S 1.0

struct conn {
	int fd;             /* -1: none */
	bool connecting;    /* an outgoing connect not yet completed */
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
	int vm_lfd, peer_lfd, ctl;
	struct conn vm;
	struct peer peers[NETHUB_MAX_PEERS];
	size_t npeers;
	struct conn pending[NETHUB_MAX_PEERS]; /* accepted, before their hello */
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
	c->connecting = false;
	buf_init(&c->in, 2 * (NETHUB_FRAME_MAX + 4));
	buf_init(&c->out, NETHUB_QUEUE_MAX + NETHUB_FRAME_MAX + HELLO_LEN);
}

static void conn_close(struct conn *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	c->connecting = false;
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

/* Queue one frame on c; dropped (and counted) when its queue is full. */
static void queue_frame(struct hub *h, struct conn *c, const unsigned char *f, size_t n)
{
	unsigned char len[4];

	put_be(len, n, 4);
	if (c->out.len + 4 + n > NETHUB_QUEUE_MAX || buf_append(&c->out, len, 4) ||
	    buf_append(&c->out, f, n)) {
		h->dropped++;
		return;
	}
}

/* A listening TCP socket on host (NULL: every address), port 0: the port
 * the kernel picked in *port. The fd, or a negative code. */
static int listen_on(const char *host, unsigned *port, char *err, size_t errlen)
{
	struct sockaddr_in a;
	socklen_t alen = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0), one = 1;

	if (fd < 0) {
		snprintf(err, errlen, "relay hub: socket: %s", strerror(errno));
		return -errno;
	}
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(host ? INADDR_LOOPBACK : INADDR_ANY);
	(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) || listen(fd, 16) ||
	    getsockname(fd, (struct sockaddr *)&a, &alen)) {
		int e = errno;
		snprintf(err, errlen, "relay hub: listening socket: %s", strerror(e));
		close(fd);
		return -e;
	}
	*port = ntohs(a.sin_port);
	return fd;
}

/* Start a non-blocking connect to p's address, its hello queued. */
static void peer_connect(struct hub *h, struct peer *p)
{
	struct addrinfo hints, *res = NULL, *ai;
	char host[ADDR_MAX], *colon;
	unsigned char hello[HELLO_LEN];
	int one = 1;

	p->retry_at = time_mono() + RETRY_S;
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
			p->c.connecting = true;
			break;
		}
		close(fd);
	}
	freeaddrinfo(res);
	if (p->c.fd < 0)
		return;
	(void)setsockopt(p->c.fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	memcpy(hello, "VGH1", 4);
	put_be(hello + 4, (uint64_t)h->id, 8);
	put_be(hello + 12, (uint64_t)h->vlan, 8);
	if (buf_append(&p->c.out, hello, HELLO_LEN))
		conn_close(&p->c);
}

static struct peer *find_peer(struct hub *h, long long id)
{
	for (size_t i = 0; i < h->npeers; i++)
		if (h->peers[i].id == id)
			return &h->peers[i];
	return NULL;
}

/* One "JOB HOST:PORT" line from the worker. */
static void ctl_line(struct hub *h, char *line)
{
	char *sp = strchr(line, ' '), *end;
	struct peer *p;
	long long id;

	if (!sp)
		return;
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
 * peer, a peer's to the VM. ERR_PROTO on a length beyond QEMU's frames. */
static int dispatch(struct hub *h, struct conn *c, bool from_vm)
{
	size_t off = 0;
	int rc = 0;

	while (c->in.len - off >= 4) {
		const unsigned char *p = (const unsigned char *)c->in.data + off;
		uint64_t n = get_be(p, 4);
		if (n == 0 || n > NETHUB_FRAME_MAX) {
			rc = ERR_PROTO;
			break;
		}
		if (c->in.len - off - 4 < n)
			break;
		if (from_vm) {
			size_t sent = 0;
			for (size_t i = 0; i < h->npeers; i++)
				if (h->peers[i].c.fd >= 0) {
					queue_frame(h, &h->peers[i].c, p + 4, n);
					sent++;
				}
			if (sent)
				h->to_peers++;
			else
				h->dropped++; /* no peer connected yet */
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

/* A pending connection's hello, once whole: the peer it is, or NULL to
 * wait (*bad: refuse it). */
static struct peer *hello_of(struct hub *h, struct conn *c, bool *bad)
{
	const unsigned char *p = (const unsigned char *)c->in.data;
	long long id, vlan;
	struct peer *peer;

	*bad = false;
	if (c->in.len < HELLO_LEN)
		return NULL;
	id = (long long)get_be(p + 4, 8);
	vlan = (long long)get_be(p + 12, 8);
	if (memcmp(p, "VGH1", 4) || vlan != h->vlan || id <= h->id) {
		log_warn("relay hub of job %lld: refused a hub connection (job %lld, network %lld: not a later job"
			 " of this network)", h->id, id, vlan);
		*bad = true;
		return NULL;
	}
	if (!(peer = find_peer(h, id))) {
		/* Its worker learnt of us before ours of it: it tries again. */
		log_debug("relay hub of job %lld: job %lld's hub is not yet named by the server", h->id, id);
		*bad = true;
		return NULL;
	}
	buf_consume(&c->in, HELLO_LEN);
	return peer;
}

static void peer_gone(struct hub *h, struct peer *p, const char *why)
{
	log_info("relay hub of job %lld: job %lld's hub %s (%s)", h->id, p->id,
		 p->c.connecting ? "not reached" : "went away", why);
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
		if (nslots == 1) { /* the VM's: a new connection replaces the old */
			conn_close(&slots[0]);
			i = 0;
		} else {
			close(fd);
			return;
		}
	}
	if (nodelay)
		(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	slots[i].fd = fd;
}

static void hub_loop(struct hub *h)
{
	struct pollfd pf[3 + 2 * NETHUB_MAX_PEERS];
	/* What each pollfd is: 0 VM listen, 1 peer listen, 2 ctl, 3 VM, then
	 * peers ('p' + index) and pending ('q' + index). */
	int kind[3 + 2 * NETHUB_MAX_PEERS + 1];
	size_t idx[3 + 2 * NETHUB_MAX_PEERS + 1];

	while (!hub_stop) {
		double now = time_mono();
		nfds_t n = 0;

		for (size_t i = 0; i < h->npeers; i++) {
			struct peer *p = &h->peers[i];
			if (p->c.fd < 0 && p->id < h->id && p->addr[0] && now >= p->retry_at)
				peer_connect(h, p);
		}
		pf[n] = (struct pollfd){ h->vm_lfd, POLLIN, 0 };
		kind[n++] = 0;
		pf[n] = (struct pollfd){ h->peer_lfd, POLLIN, 0 };
		kind[n++] = 1;
		pf[n] = (struct pollfd){ h->ctl, POLLIN, 0 };
		kind[n++] = 2;
		if (h->vm.fd >= 0) {
			pf[n] = (struct pollfd){ h->vm.fd, (short)(POLLIN | (h->vm.out.len ? POLLOUT : 0)), 0 };
			kind[n++] = 3;
		}
		for (size_t i = 0; i < h->npeers; i++) {
			struct conn *c = &h->peers[i].c;
			if (c->fd < 0)
				continue;
			pf[n] = (struct pollfd){ c->fd, (short)(POLLIN | (c->out.len || c->connecting ? POLLOUT : 0)), 0 };
			kind[n] = 'p';
			idx[n++] = i;
		}
		for (size_t i = 0; i < NETHUB_MAX_PEERS; i++) {
			if (h->pending[i].fd < 0)
				continue;
			pf[n] = (struct pollfd){ h->pending[i].fd, POLLIN, 0 };
			kind[n] = 'q';
			idx[n++] = i;
		}
		if (poll(pf, n, 250) < 0) {
			if (errno == EINTR)
				continue;
			log_err("relay hub of job %lld: poll: %s", h->id, strerror(errno));
			return;
		}
		for (nfds_t k = 0; k < n; k++) {
			short ev = pf[k].revents;
			if (!ev)
				continue;
			switch (kind[k]) {
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
			case 'p': {
				struct peer *p = &h->peers[idx[k]];
				if (p->c.fd < 0)
					break;
				if (p->c.connecting && (ev & (POLLOUT | POLLERR | POLLHUP))) {
					int e = 0;
					socklen_t el = sizeof(e);
					if (getsockopt(p->c.fd, SOL_SOCKET, SO_ERROR, &e, &el) || e) {
						peer_gone(h, p, strerror(e ? e : errno));
						break;
					}
					p->c.connecting = false;
					log_info("relay hub of job %lld: connected to job %lld's hub at %s", h->id, p->id,
						 p->addr);
				}
				if (p->c.connecting)
					break;
				if ((ev & (POLLIN | POLLHUP | POLLERR)) && !conn_read(&p->c))
					peer_gone(h, p, "connection closed");
				else if (dispatch(h, &p->c, false))
					peer_gone(h, p, "a frame longer than any Ethernet frame");
				else if ((ev & POLLOUT) && !conn_write(&p->c))
					peer_gone(h, p, "send failed");
				break;
			}
			case 'q': {
				struct conn *c = &h->pending[idx[k]];
				struct peer *p;
				bool bad;
				if (!conn_read(c)) {
					conn_close(c);
					break;
				}
				if (!(p = hello_of(h, c, &bad))) {
					if (bad)
						conn_close(c);
					break;
				}
				/* A new connection from that peer replaces its old one. */
				conn_close(&p->c);
				p->c.fd = c->fd;
				c->fd = -1;
				if (buf_append(&p->c.in, c->in.data, c->in.len)) {
					peer_gone(h, p, "out of memory");
					conn_close(c);
					break;
				}
				conn_close(c);
				log_info("relay hub of job %lld: job %lld's hub connected", h->id, p->id);
				if (dispatch(h, &p->c, false))
					peer_gone(h, p, "a frame longer than any Ethernet frame");
				break;
			}
			}
		}
		/* Flush what this round queued without waiting for the next poll. */
		if (h->vm.fd >= 0 && h->vm.out.len && !conn_write(&h->vm))
			conn_close(&h->vm);
		for (size_t i = 0; i < h->npeers; i++) {
			struct peer *p = &h->peers[i];
			if (p->c.fd >= 0 && !p->c.connecting && p->c.out.len && !conn_write(&p->c))
				peer_gone(h, p, "send failed");
		}
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

int nethub_start(struct nethub *h, long long job_id, long long vlan, char *err, size_t errlen)
{
	int vm_lfd = -1, peer_lfd = -1, pipefd[2] = { -1, -1 }, rc;
	sigset_t term, old;
	pid_t pid, parent = getpid();

	nethub_init(h);
	if ((vm_lfd = listen_on("127.0.0.1", &h->vm_port, err, errlen)) < 0)
		return vm_lfd;
	if ((peer_lfd = listen_on(NULL, &h->peer_port, err, errlen)) < 0) {
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
	/* No SIGPIPE for the worker when the hub has gone. */
	return send(h->ctl, line, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT) == n ? 0 : ERR_IO;
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
