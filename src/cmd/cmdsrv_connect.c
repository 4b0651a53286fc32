/* SPDX-License-Identifier: MIT */
/* cmdsrv_connect.c - `vigil cmdsrv-connect PORT`, internal: QEMU's user
 * networking runs it for each guest connection to the command server
 * (guestfwd=...-cmd:, as restrict=on forbids reaching the host itself).
 * stdin and stdout are the guest's connection; it is copied to
 * 127.0.0.1:PORT and back until both sides end. Writes nothing else. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "cmd/cmd.h"
#include "util/str.h"
#include "util/banned.h" /* last: after every system header */

/* Copy what from has to to; 0 at its end (then half-close to), 1 on. */
static int pump(int from, int to, int to_is_out)
{
	char chunk[65536];
	ssize_t n = read(from, chunk, sizeof(chunk)), w;
	char *p = chunk;

	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return 1;
	if (n <= 0) {
		/* stdout may be a pipe, not a socket: then close it. */
		if (shutdown(to, SHUT_WR) && to_is_out)
			close(to);
		return 0;
	}
	while (n > 0) {
		w = write(to, p, (size_t)n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= w;
	}
	return 1;
}

int cmd_cmdsrv_connect(int argc, char **argv)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	long port;
	int s, in_open = 1, out_open = 1;

	if (argc != 2 || str_to_long(argv[1], &port) || port < 1 || port > 65535)
		return 2;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sa.sin_port = htons((uint16_t)port);
	if ((s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0 ||
	    connect(s, (struct sockaddr *)&sa, sizeof(sa)))
		return 1;
	while (in_open || out_open) {
		struct pollfd p[2] = { { .fd = in_open ? 0 : -1, .events = POLLIN },
				       { .fd = out_open ? s : -1, .events = POLLIN } };
		int rc;

		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			return 1;
		}
		if (p[0].revents && (rc = pump(0, s, 0)) <= 0) {
			if (rc < 0)
				return 1;
			in_open = 0;
		}
		if (p[1].revents && (rc = pump(s, 1, 1)) <= 0) {
			if (rc < 0)
				return 1;
			/* The server answered and closed: the exchange is over. */
			return 0;
		}
	}
	return 0;
}
