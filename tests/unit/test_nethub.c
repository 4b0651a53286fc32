/* SPDX-License-Identifier: MIT */
/* test_nethub.c - the relay hub of NICNET=relay (worker/nethub.c) with
 * real processes and sockets: two hubs on 127.0.0.1, each with a "VM"
 * connected as QEMU's stream netdev connects (length-framed); frames
 * pass both ways between the VMs, a hello from outside the cluster is
 * refused, and a hub survives its peer going away: the peer's
 * replacement at a new address is joined and frames pass again. Every
 * wait is a bounded poll. */
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

TEST(nethub_relays_frames_and_survives_a_peer)
{
	struct nethub a, b, c;
	char addr[64], err[256] = "";
	unsigned char junk[20];
	int va, vb, vc, x;

	CHECK_INT(nethub_start(&a, 5, 5, err, sizeof(err)), 0);
	CHECK_INT(nethub_start(&b, 9, 5, err, sizeof(err)), 0);
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
	memcpy(junk, "VGH1", 4);
	memset(junk + 4, 0, 16);
	junk[11] = 9;  /* job 9 ... */
	junk[19] = 77; /* ... on network 77 */
	CHECK_INT(send(x, junk, sizeof(junk), MSG_NOSIGNAL), 20);
	{
		struct pollfd p = { x, POLLIN, 0 };
		char ch;
		CHECK_INT(poll(&p, 1, 60000), 1);
		CHECK_INT(recv(x, &ch, 1, 0), 0);
	}
	close(x);

	/* The peer hub goes away; its replacement elsewhere is joined. */
	close(vb);
	nethub_release(&b);
	CHECK_INT(nethub_start(&c, 9, 5, err, sizeof(err)), 0);
	snprintf(addr, sizeof(addr), "127.0.0.1:%u", a.peer_port);
	CHECK_INT(nethub_peer(&c, 5, addr), 0);
	snprintf(addr, sizeof(addr), "127.0.0.1:%u", c.peer_port);
	CHECK_INT(nethub_peer(&a, 9, addr), 0);
	vc = connect_port(c.vm_port);
	CHECK(passes(va, vc, 0xa2));
	CHECK(passes(vc, va, 0xc2));

	/* And the other way round: the hub that the later one connects to
	 * goes away and comes back at a new address. */
	close(va);
	nethub_release(&a);
	CHECK_INT(nethub_start(&a, 5, 5, err, sizeof(err)), 0);
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
