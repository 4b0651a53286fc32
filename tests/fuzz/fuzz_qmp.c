/* SPDX-License-Identifier: MIT */
/* fuzz_qmp.c - what QEMU's monitor sends, as qmp.c reads it: the input is
 * the whole stream from the peer (greeting, replies, events), written into
 * a socket pair before the handshake; then one command and the events. */
#include <sys/socket.h>
#include <unistd.h>
#include "fuzz.h"
#include "vm/qmp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct qmp *q = NULL;
	json_t *ev = NULL, *ret = NULL;
	char err[256];
	int sv[2], buf = 1 << 20;
	size_t off = 0;

	/* The whole input must fit in the socket buffer: nothing reads the
	 * other end while it is written. */
	if (size > 128 * 1024 || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		return 0;
	(void)setsockopt(sv[1], SOL_SOCKET, SO_SNDBUF, &buf, sizeof(buf));
	(void)setsockopt(sv[0], SOL_SOCKET, SO_RCVBUF, &buf, sizeof(buf));
	while (off < size) {
		ssize_t w = write(sv[1], data + off, size - off);
		if (w <= 0)
			break;
		off += (size_t)w;
	}
	shutdown(sv[1], SHUT_WR);
	if (qmp_connect_fd(sv[0], &q, err, sizeof(err)) == 0) {
		qmp_set_timeout(q, 1000);
		if (qmp_command(q, "query-status", NULL, &ret, err, sizeof(err)) == 0)
			json_decref(ret);
		while (qmp_next_event(q, 0, &ev) == 0)
			json_decref(ev);
		qmp_close(q);
	}
	close(sv[1]);
	return 0;
}
