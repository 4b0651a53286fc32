/* SPDX-License-Identifier: MIT */
/* fuzz_vnc.c - what a VNC server sends, as vigil's client code takes it
 * (vm/vnc.c on libvncclient): the input is the whole stream from the
 * server (version, security, ServerInit with the framebuffer's size, then
 * framebuffer updates, DesktopSize resizes, cursor and other messages),
 * written by a thread into a Unix socket that vnc_connect connects to, then
 * closed. vnc.c's framebuffer allocation, update rows and frame building
 * (scaled or pasted into 64x48 frames) see it; the frames must stay
 * 64x48. A crash, leak or sanitizer report fails the target.
 * Left out: an RFB 3.3 handshake whose server-chosen security type is one
 * of the Diffie-Hellman schemes (30 Apple ARD, 113 UltraVNC MSLogon II,
 * 0xfffffffa MSLogon): libvncclient 0.9.14 then feeds the server's numbers
 * to libgcrypt, which aborts the process on a zero modulus - a library
 * defect vigil cannot reach around without parsing the handshake itself;
 * its peer is the QEMU it started, on a socket in its own 0700 directory. */
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include "fuzz.h"
#include "image/frame.h"
#include "image/image.h"
#include "util/err.h"
#include "util/log.h"
#include "vm/vnc.h"

static char dir[] = "/tmp/vigil-fuzz-vnc-XXXXXX";
static char sock_path[108];
static int lfd = -1;

struct feed {
	const uint8_t *data;
	size_t size;
};

static void cleanup(void)
{
	close(lfd);
	unlink(sock_path);
	rmdir(dir);
}

static void setup(void)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };

	log_set_stderr_level(LOG_ERR);
	if (!mkdtemp(dir))
		abort();
	snprintf(sock_path, sizeof(sock_path), "%s/vnc", dir);
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", sock_path);
	lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&a, sizeof(a)) || listen(lfd, 4))
		abort();
	atexit(cleanup);
}

/* The server: one connection, the input written while what the client
 * sends is read and dropped, then the end of the stream. */
static void *server_main(void *arg)
{
	const struct feed *f = arg;
	size_t off = 0;
	char junk[4096];
	int fd = accept(lfd, NULL, NULL);

	if (fd < 0)
		return NULL;
	while (off < f->size) {
		struct pollfd p = { fd, POLLIN | POLLOUT, 0 };
		if (poll(&p, 1, -1) < 1 || (p.revents & (POLLERR | POLLHUP)))
			break;
		if (p.revents & POLLIN && read(fd, junk, sizeof(junk)) <= 0)
			break;
		if (p.revents & POLLOUT) {
			ssize_t w = send(fd, f->data + off, f->size - off, MSG_NOSIGNAL);
			if (w <= 0)
				break;
			off += (size_t)w;
		}
	}
	shutdown(fd, SHUT_WR);
	while (read(fd, junk, sizeof(junk)) > 0)
		;
	close(fd);
	return NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct feed f = { data, size };
	struct vnc *v = NULL;
	struct frame *fr;
	uint64_t seq = 0;
	pthread_t th;
	char err[256];

	if (lfd < 0)
		setup();
	if (size >= 16 && memcmp(data, "RFB 003.007\n", 12) && memcmp(data, "RFB 003.008\n", 12)) {
		uint32_t t = (uint32_t)data[12] << 24 | (uint32_t)data[13] << 16 | (uint32_t)data[14] << 8 | data[15];
		if (t == 30 || t == 113 || t == 0xfffffffau)
			return 0;
	}
	if (pthread_create(&th, NULL, server_main, &f))
		abort();
	if (vnc_connect(sock_path, 64, 48, 0, &v, err, sizeof(err)) == 0) {
		while (vnc_next_frame(v, seq, 10000, &fr) == 0) {
			if (fr->img->w != 64 || fr->img->h != 48)
				abort();
			seq = fr->seq;
			frame_unref(fr);
		}
		vnc_close(v);
	}
	pthread_join(th, NULL);
	return 0;
}
