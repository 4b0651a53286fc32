/* SPDX-License-Identifier: MIT */
/* test_nethub.c - the relay hub of NICNET=relay (worker/nethub.c) with
 * real processes and sockets: two hubs on 127.0.0.1 and ::1, each with a
 * "VM" connected as QEMU's stream netdev connects (length-framed); frames
 * pass both ways between the VMs, a hello from outside the cluster is
 * refused, and a hub survives its peer going away: the peer's
 * replacement at a new address is joined and frames pass again. The
 * handshake, played by the test as a hub would: the cluster's secret
 * joins and its frames, sealed, pass both ways; a wrong one is refused on
 * either side, a replayed handshake, an altered or replayed frame and
 * frames before the handshake are refused, silent strangers
 * filling every place keep no member out. --relay-host's forms.
 * Every wait is a bounded poll. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "unit.h"
#include "util/err.h"
#include "util/time.h"
#include "worker/nethub.h"

#define SECRET "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define WRONG "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210"

static int connect_port(unsigned port)
{
	struct sockaddr_in a;
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	CHECK(fd >= 0);
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_port = htons((unsigned short)port);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	CHECK_INT(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	return fd;
}

static int connect_port6(unsigned port)
{
	struct sockaddr_in6 a;
	int fd = socket(AF_INET6, SOCK_STREAM, 0);

	CHECK(fd >= 0);
	memset(&a, 0, sizeof(a));
	a.sin6_family = AF_INET6;
	a.sin6_port = htons((unsigned short)port);
	a.sin6_addr = in6addr_loopback;
	CHECK_INT(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	return fd;
}

/* n bytes from fd within 60 s: true, or false when it closed first. */
static bool recv_all(int fd, unsigned char *b, size_t n)
{
	size_t got = 0;
	double end = time_mono() + 60;

	while (got < n) {
		struct pollfd p = { fd, POLLIN, 0 };
		int left = (int)((end - time_mono()) * 1000);
		ssize_t k;
		if (left <= 0 || poll(&p, 1, left) <= 0)
			FAIL("nothing from the hub within 60 s");
		k = recv(fd, b + got, n - got, 0);
		if (k <= 0)
			return false;
		got += (size_t)k;
	}
	return true;
}

/* Whether the hub closes fd (within 60 s, reading past anything it sent). */
static bool closed_by_hub(int fd)
{
	unsigned char b[256];
	double end = time_mono() + 60;

	for (;;) {
		struct pollfd p = { fd, POLLIN, 0 };
		int left = (int)((end - time_mono()) * 1000);
		ssize_t k;
		if (left <= 0 || poll(&p, 1, left) <= 0)
			return false;
		k = recv(fd, b, sizeof(b), 0);
		if (k <= 0)
			return true;
	}
}

/* A hello as job id of network vlan with nonce, into b. */
static void hello(unsigned char b[NETHUB_HELLO_LEN], long long id, long long vlan, unsigned char nonce_fill)
{
	memcpy(b, NETHUB_MAGIC, 4);
	for (int i = 0; i < 8; i++) {
		b[4 + i] = (unsigned char)((unsigned long long)id >> (56 - 8 * i));
		b[12 + i] = (unsigned char)((unsigned long long)vlan >> (56 - 8 * i));
	}
	memset(b + 20, nonce_fill, NETHUB_NONCE_LEN);
}

static void send_frame(int fd, unsigned char tag)
{
	unsigned char b[4 + 60];

	memset(b, tag, sizeof(b));
	b[0] = b[1] = b[2] = 0;
	b[3] = 60;
	CHECK_INT(send(fd, b, sizeof(b), MSG_NOSIGNAL), (long long)sizeof(b));
}

/* One frame on fd within ms: its tag byte, or -1. */
static int recv_frame(int fd, int ms)
{
	unsigned char b[4 + 60];
	size_t got = 0;
	double end = time_mono() + ms / 1000.0;

	while (got < sizeof(b)) {
		struct pollfd p = { fd, POLLIN, 0 };
		int left = (int)((end - time_mono()) * 1000);
		ssize_t n;
		if (left <= 0 || poll(&p, 1, left) <= 0)
			return -1;
		n = recv(fd, b + got, sizeof(b) - got, 0);
		if (n <= 0)
			return -1;
		got += (size_t)n;
	}
	CHECK_INT(b[3], 60);
	return b[4];
}

/* Send tagged frames from one VM until one reaches the other (the hubs
 * join in the background; until then frames are dropped, as on a
 * switch without the port): true when one did within 60 s. */
static bool passes(int from, int to, unsigned char tag)
{
	double end = time_mono() + 60;

	while (time_mono() < end) {
		int t;
		send_frame(from, tag);
		while ((t = recv_frame(to, 200)) >= 0)
			if (t == tag)
				return true;
	}
	return false;
}

/* The test as a hub: its connection and frame keys. */
struct fake {
	int fd;
	unsigned char ktx[NETHUB_KEY_LEN], krx[NETHUB_KEY_LEN];
	uint64_t ntx, nrx;
};

/* The frame keys of a handshake: nethub_proof with sides 'c' and 'l'. */
static void fake_keys(struct fake *f, bool listener, const char *secret, long long conn_id, long long listen_id,
		      long long vlan, const unsigned char *nc, const unsigned char *nl)
{
	unsigned char kc[NETHUB_KEY_LEN], kl[NETHUB_KEY_LEN];

	CHECK_INT(nethub_proof(secret, 'c', conn_id, listen_id, vlan, nc, nl, kc), 0);
	CHECK_INT(nethub_proof(secret, 'l', conn_id, listen_id, vlan, nc, nl, kl), 0);
	memcpy(f->ktx, listener ? kl : kc, NETHUB_KEY_LEN);
	memcpy(f->krx, listener ? kc : kl, NETHUB_KEY_LEN);
	f->ntx = f->nrx = 0;
}

/* A sealed tagged frame from the test's hub (tamper: one byte of its
 * ciphertext flipped); the hub may have closed already. */
static void fake_send(struct fake *f, unsigned char tag, bool tamper)
{
	unsigned char plain[60], b[4 + 60 + NETHUB_TAG_LEN];

	memset(plain, tag, sizeof(plain));
	CHECK_INT(nethub_seal(f->ktx, f->ntx++, plain, sizeof(plain), b), 0);
	if (tamper)
		b[10] ^= 1;
	(void)!send(f->fd, b, sizeof(b), MSG_NOSIGNAL);
}

/* One sealed frame to the test's hub within ms: its tag byte, or -1. */
static int fake_recv(struct fake *f, int ms)
{
	unsigned char b[4 + 60 + NETHUB_TAG_LEN], plain[60];
	size_t got = 0;
	double end = time_mono() + ms / 1000.0;

	while (got < sizeof(b)) {
		struct pollfd p = { f->fd, POLLIN, 0 };
		int left = (int)((end - time_mono()) * 1000);
		ssize_t n;
		if (left <= 0 || poll(&p, 1, left) <= 0)
			return -1;
		n = recv(f->fd, b + got, sizeof(b) - got, 0);
		if (n <= 0)
			return -1;
		got += (size_t)n;
	}
	CHECK_INT(nethub_open(f->krx, f->nrx++, b, sizeof(b) - 4, plain), 0);
	return plain[0];
}

/* passes() between the test's hub and a VM. */
static bool fake_passes(struct fake *f, int vm, bool to_vm, unsigned char tag)
{
	double end = time_mono() + 60;

	while (time_mono() < end) {
		int t;
		if (to_vm)
			fake_send(f, tag, false);
		else
			send_frame(vm, tag);
		while ((t = to_vm ? recv_frame(vm, 200) : fake_recv(f, 200)) >= 0)
			if (t == tag)
				return true;
	}
	return false;
}

/* The test as the connecting hub of job id (network vlan) to the hub of
 * job listen_id on port, with secret: the hub's challenge read and its
 * proof checked, this side's proof sent (and kept in proof_out when not
 * NULL). The connection, ready for frames. */
static struct fake handshake(bool v6, unsigned port, long long id, long long listen_id, long long vlan,
			     const char *secret, unsigned char nonce_fill, unsigned char proof_out[NETHUB_PROOF_LEN])
{
	unsigned char h[NETHUB_HELLO_LEN], ch[NETHUB_CHALLENGE_LEN], want[NETHUB_PROOF_LEN], mine[NETHUB_PROOF_LEN];
	struct fake f;

	f.fd = v6 ? connect_port6(port) : connect_port(port);
	hello(h, id, vlan, nonce_fill);
	CHECK_INT(send(f.fd, h, sizeof(h), MSG_NOSIGNAL), (long long)sizeof(h));
	CHECK(recv_all(f.fd, ch, sizeof(ch)));
	CHECK_INT(nethub_proof(SECRET, 'L', id, listen_id, vlan, h + 20, ch, want), 0);
	CHECK(!memcmp(want, ch + NETHUB_NONCE_LEN, NETHUB_PROOF_LEN)); /* the hub knows the cluster's secret */
	CHECK_INT(nethub_proof(secret, 'C', id, listen_id, vlan, h + 20, ch, mine), 0);
	CHECK_INT(send(f.fd, mine, sizeof(mine), MSG_NOSIGNAL), (long long)sizeof(mine));
	if (proof_out)
		memcpy(proof_out, mine, sizeof(mine));
	fake_keys(&f, false, secret, id, listen_id, vlan, h + 20, ch);
	return f;
}

TEST(nethub_relays_frames_and_survives_a_peer)
{
	struct nethub a, b, c;
	char addr[64], err[256] = "";
	unsigned char junk[NETHUB_HELLO_LEN];
	int va, vb, vc, x;

	CHECK_INT(nethub_start(&a, 5, 5, 0, err, sizeof(err)), 0);
	CHECK_INT(nethub_start(&b, 9, 5, 0, err, sizeof(err)), 0);
	CHECK_INT(nethub_secret(&a, SECRET), 0);
	CHECK_INT(nethub_secret(&b, SECRET), 0);
	CHECK_INT(nethub_secret(&b, "short"), ERR_INVALID);
	CHECK_INT(nethub_secret(&b, "0123456789ABCDEF0123456789ABCDEF"), ERR_INVALID); /* lowercase hex only */
	snprintf(addr, sizeof(addr), "127.0.0.1:%u", b.peer_port);
	CHECK_INT(nethub_peer(&a, 9, addr), 0);
	snprintf(addr, sizeof(addr), "127.0.0.1:%u", a.peer_port);
	CHECK_INT(nethub_peer(&b, 5, addr), 0);
	CHECK_INT(nethub_peer(&b, 6, "bad\naddress"), ERR_INVALID);
	CHECK_INT(nethub_peer(&b, 6, "x y"), ERR_INVALID);
	va = connect_port(a.vm_port);
	vb = connect_port(b.vm_port);
	CHECK(passes(va, vb, 0xa1));
	CHECK(passes(vb, va, 0xb1));

	/* Not of this cluster's network: refused (the hub closes it). */
	x = connect_port(a.peer_port);
	hello(junk, 9, 77, 1); /* job 9 on network 77 */
	CHECK_INT(send(x, junk, sizeof(junk), MSG_NOSIGNAL), (long long)sizeof(junk));
	CHECK(closed_by_hub(x));
	close(x);

	/* The peer hub goes away; its replacement elsewhere is joined. */
	close(vb);
	nethub_release(&b);
	CHECK_INT(nethub_start(&c, 9, 5, 0, err, sizeof(err)), 0);
	CHECK_INT(nethub_secret(&c, SECRET), 0);
	snprintf(addr, sizeof(addr), "[::1]:%u", a.peer_port); /* over IPv6 this time */
	CHECK_INT(nethub_peer(&c, 5, addr), 0);
	snprintf(addr, sizeof(addr), "[::1]:%u", c.peer_port);
	CHECK_INT(nethub_peer(&a, 9, addr), 0);
	vc = connect_port(c.vm_port);
	CHECK(passes(va, vc, 0xa2));
	CHECK(passes(vc, va, 0xc2));

	/* And the other way round: the hub that the later one connects to
	 * goes away and comes back at a new address. */
	close(va);
	nethub_release(&a);
	CHECK_INT(nethub_start(&a, 5, 5, 0, err, sizeof(err)), 0);
	CHECK_INT(nethub_secret(&a, SECRET), 0);
	snprintf(addr, sizeof(addr), "127.0.0.1:%u", a.peer_port);
	CHECK_INT(nethub_peer(&c, 5, addr), 0);
	snprintf(addr, sizeof(addr), "127.0.0.1:%u", c.peer_port);
	CHECK_INT(nethub_peer(&a, 9, addr), 0);
	va = connect_port(a.vm_port);
	CHECK(passes(vc, va, 0xc3));
	CHECK(passes(va, vc, 0xa3));
	close(va);
	close(vc);
	nethub_release(&a);
	nethub_release(&c);
}

/* A tagged frame's bytes into b. */
static void frame_bytes(unsigned char b[4 + 60], unsigned char tag)
{
	memset(b, tag, 4 + 60);
	b[0] = b[1] = b[2] = 0;
	b[3] = 60;
}

/* A frame to a hub that may have closed the connection already. */
static void send_frame_quiet(int fd, unsigned char tag)
{
	unsigned char b[4 + 60];

	frame_bytes(b, tag);
	(void)!send(fd, b, sizeof(b), MSG_NOSIGNAL);
}

TEST(nethub_handshake_refuses_wrong_secret_replay_and_early_frames)
{
	struct nethub a;
	char addr[64], err[256] = "";
	unsigned char h[NETHUB_HELLO_LEN], ch[NETHUB_CHALLENGE_LEN], proof[NETHUB_PROOF_LEN], nonce1[NETHUB_NONCE_LEN];
	unsigned char both[NETHUB_HELLO_LEN + 64];
	int va, x, lfd, idle[NETHUB_MAX_PEERS + 2];
	struct fake f;
	struct sockaddr_in la;
	socklen_t lalen = sizeof(la);

	CHECK_INT(nethub_start(&a, 5, 5, 0, err, sizeof(err)), 0);
	CHECK_INT(nethub_secret(&a, SECRET), 0);
	CHECK_INT(nethub_peer(&a, 9, "127.0.0.1:1"), 0); /* job 9 connects to a, never a to it */
	va = connect_port(a.vm_port);

	/* The cluster's secret joins: frames pass both ways. */
	f = handshake(false, a.peer_port, 9, 5, 5, SECRET, 0x11, proof);
	CHECK(fake_passes(&f, va, true, 0xd1));
	CHECK(fake_passes(&f, va, false, 0xd2));
	close(f.fd);

	/* A wrong secret: the hub's proof is right, ours is not; refused. */
	f = handshake(false, a.peer_port, 9, 5, 5, WRONG, 0x22, NULL);
	fake_send(&f, 0xe1, false);
	CHECK(closed_by_hub(f.fd));
	close(f.fd);

	/* The right secret, then a frame altered on the way, and one
	 * replayed: refused. */
	f = handshake(false, a.peer_port, 9, 5, 5, SECRET, 0x23, NULL);
	fake_send(&f, 0xe5, true);
	CHECK(closed_by_hub(f.fd));
	close(f.fd);
	f = handshake(false, a.peer_port, 9, 5, 5, SECRET, 0x24, NULL);
	CHECK(fake_passes(&f, va, true, 0xd5));
	f.ntx = 0;
	fake_send(&f, 0xe6, false); /* frame number 0 again */
	CHECK(closed_by_hub(f.fd));
	close(f.fd);

	/* A replay: the first handshake's hello and proof again. The hub's
	 * nonce is new, so the old proof is wrong; refused. */
	x = connect_port(a.peer_port);
	hello(h, 9, 5, 0x11);
	CHECK_INT(send(x, h, sizeof(h), MSG_NOSIGNAL), (long long)sizeof(h));
	CHECK(recv_all(x, ch, sizeof(ch)));
	CHECK_INT(send(x, proof, sizeof(proof), MSG_NOSIGNAL), (long long)sizeof(proof));
	send_frame_quiet(x, 0xe2);
	CHECK(closed_by_hub(x));
	close(x);

	/* Frames before the handshake: with no hello, and right after one. */
	x = connect_port(a.peer_port);
	send_frame_quiet(x, 0xe3);
	CHECK(closed_by_hub(x));
	close(x);
	x = connect_port(a.peer_port);
	hello(both, 9, 5, 0x33);
	frame_bytes(both + NETHUB_HELLO_LEN, 0xe4);
	CHECK_INT(send(x, both, sizeof(both), MSG_NOSIGNAL), (long long)sizeof(both));
	CHECK(closed_by_hub(x));
	close(x);

	/* Strangers that fill every slot and say nothing keep no member out:
	 * the longest waiting makes room. None of the refused ones' frames
	 * reached the VM: before the next good one it gets none of them. */
	for (int i = 0; i < NETHUB_MAX_PEERS + 2; i++)
		idle[i] = connect_port(a.peer_port);
	f = handshake(false, a.peer_port, 9, 5, 5, SECRET, 0x44, NULL);
	fake_send(&f, 0xd3, false);
	for (int t = -1; t != 0xd3;) {
		t = recv_frame(va, 60000);
		CHECK(t == 0xd1 || t == 0xd5 || t == 0xd3); /* a repeat of an earlier good one, or this; no 0xeN */
	}
	close(f.fd);
	CHECK(closed_by_hub(idle[0])); /* made room */
	for (int i = 0; i < NETHUB_MAX_PEERS + 2; i++)
		close(idle[i]);

	/* The other side: a hub that connects refuses a listener that does
	 * not prove the secret (the test listens as job 3). */
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	CHECK(lfd >= 0);
	memset(&la, 0, sizeof(la));
	la.sin_family = AF_INET;
	la.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	CHECK_INT(bind(lfd, (struct sockaddr *)&la, sizeof(la)), 0);
	CHECK_INT(listen(lfd, 4), 0);
	CHECK_INT(getsockname(lfd, (struct sockaddr *)&la, &lalen), 0);
	snprintf(addr, sizeof(addr), "127.0.0.1:%u", ntohs(la.sin_port));
	CHECK_INT(nethub_peer(&a, 3, addr), 0);
	{
		struct pollfd p = { lfd, POLLIN, 0 };
		CHECK_INT(poll(&p, 1, 60000), 1);
	}
	x = accept(lfd, NULL, NULL);
	CHECK(x >= 0);
	CHECK(recv_all(x, h, sizeof(h)));
	CHECK(!memcmp(h, NETHUB_MAGIC, 4));
	CHECK_INT(h[11], 5); /* job 5 ... */
	CHECK_INT(h[19], 5); /* ... of network 5 */
	memcpy(nonce1, h + 20, sizeof(nonce1));
	memset(ch, 0x55, NETHUB_NONCE_LEN);
	CHECK_INT(nethub_proof(WRONG, 'L', 5, 3, 5, h + 20, ch, ch + NETHUB_NONCE_LEN), 0);
	CHECK_INT(send(x, ch, sizeof(ch), MSG_NOSIGNAL), (long long)sizeof(ch));
	CHECK(closed_by_hub(x)); /* no proof of its own, no frames: closed */
	close(x);
	/* ... and takes one that does (it tries again each second). */
	{
		struct pollfd p = { lfd, POLLIN, 0 };
		CHECK_INT(poll(&p, 1, 60000), 1);
	}
	x = accept(lfd, NULL, NULL);
	CHECK(x >= 0);
	CHECK(recv_all(x, h, sizeof(h)));
	CHECK(memcmp(h + 20, nonce1, NETHUB_NONCE_LEN)); /* a fresh nonce */
	memset(ch, 0x66, NETHUB_NONCE_LEN);
	CHECK_INT(nethub_proof(SECRET, 'L', 5, 3, 5, h + 20, ch, ch + NETHUB_NONCE_LEN), 0);
	CHECK_INT(send(x, ch, sizeof(ch), MSG_NOSIGNAL), (long long)sizeof(ch));
	CHECK(recv_all(x, proof, sizeof(proof)));
	{
		unsigned char want[NETHUB_PROOF_LEN];
		CHECK_INT(nethub_proof(SECRET, 'C', 5, 3, 5, h + 20, ch, want), 0);
		CHECK(!memcmp(want, proof, sizeof(want)));
	}
	f.fd = x;
	fake_keys(&f, true, SECRET, 5, 3, 5, h + 20, ch);
	CHECK(fake_passes(&f, va, true, 0xd4));
	CHECK(fake_passes(&f, va, false, 0xd6));
	close(x);
	close(lfd);
	close(va);
	nethub_release(&a);
}

TEST(nethub_ipv6_and_relay_host_forms)
{
	struct nethub a;
	char err[256] = "", host[300];
	unsigned port = 1, fixed;
	struct fake f;
	int va, x;

	CHECK_INT(nethub_parse_host("worker3.example", host, sizeof(host), &port, err, sizeof(err)), 0);
	CHECK_STR(host, "worker3.example");
	CHECK_INT(port, 0);
	CHECK_INT(nethub_parse_host("10.0.0.2:7000", host, sizeof(host), &port, err, sizeof(err)), 0);
	CHECK_STR(host, "10.0.0.2");
	CHECK_INT(port, 7000);
	CHECK_INT(nethub_parse_host("::1", host, sizeof(host), &port, err, sizeof(err)), 0);
	CHECK_STR(host, "[::1]");
	CHECK_INT(port, 0);
	CHECK_INT(nethub_parse_host("[fd00::2]", host, sizeof(host), &port, err, sizeof(err)), 0);
	CHECK_STR(host, "[fd00::2]");
	CHECK_INT(nethub_parse_host("[::1]:4000", host, sizeof(host), &port, err, sizeof(err)), 0);
	CHECK_STR(host, "[::1]");
	CHECK_INT(port, 4000);
	const char *bad[] = { "", "a b", "host:", "host:0", "host:65536", "host:80x", "[::1", "[::1]x", "[nothost]",
			      "::g", "[::1]:", "a/b", "h:1:2:3", NULL };
	for (int i = 0; bad[i]; i++) {
		err[0] = '\0';
		if (nethub_parse_host(bad[i], host, sizeof(host), &port, err, sizeof(err)) != ERR_INVALID)
			FAIL("--relay-host '%s' taken", bad[i]);
		CHECK(strstr(err, "expected HOST") != NULL);
	}

	/* The peer port listens on IPv6 and IPv4 alike; a fixed port is taken. */
	CHECK_INT(nethub_start(&a, 5, 5, 70000, err, sizeof(err)), ERR_INVALID);
	CHECK_INT(nethub_start(&a, 5, 5, 0, err, sizeof(err)), 0);
	fixed = a.peer_port;
	nethub_release(&a);
	CHECK_INT(nethub_start(&a, 5, 5, fixed, err, sizeof(err)), 0);
	CHECK_INT(a.peer_port, fixed);
	CHECK_INT(nethub_secret(&a, SECRET), 0);
	CHECK_INT(nethub_peer(&a, 9, "[::1]:1"), 0);
	va = connect_port(a.vm_port);
	x = connect_port6(a.peer_port);
	close(x);
	f = handshake(true, a.peer_port, 9, 5, 5, SECRET, 0x77, NULL);
	CHECK(fake_passes(&f, va, true, 0xf1));
	close(f.fd);
	close(va);
	nethub_release(&a);
}
