/* SPDX-License-Identifier: MIT */
/* serial.c - serial console capture: owns the socket, the log file and a
 * bounded memory copy; one reader thread; writers from any thread. Never
 * interprets the bytes: matching is the runner's job. */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#define LOG_MODULE "serial"
#include "util/buf.h"
#include "util/err.h"
#include "util/limits.h"
#include "util/log.h"
#include "util/time.h"
#include "vm/serial.h"
#include "util/banned.h" /* last: after every system header */

struct serial {
	int fd;
	FILE *log;
	pthread_t thread;
	bool thread_started;
	int stop;               /* atomic */
	pthread_mutex_t lock;   /* mem, base, total, alive; with cond */
	pthread_mutex_t wlock;  /* writers */
	pthread_cond_t cond;
	struct buf mem;         /* the newest output; mem.data[0] is at offset base */
	size_t base, total;
	bool alive;
};

static void append(struct serial *s, const char *data, size_t n)
{
	if (s->log && (fwrite(data, 1, n, s->log) != n || fflush(s->log) != 0))
		log_warn("cannot write the serial log: %s", strerror(errno));
	pthread_mutex_lock(&s->lock);
	if (s->mem.len + n > s->mem.max) {
		/* Forget the older half: waiters only look at recent output. */
		size_t drop = s->mem.len / 2 + (n > s->mem.max / 2 ? s->mem.len / 2 : 0);

		buf_consume(&s->mem, drop);
		s->base += drop;
	}
	if (buf_append(&s->mem, data, n) < 0) {
		s->base += s->mem.len + n;
		buf_reset(&s->mem);
	}
	s->total += n;
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
}

static void *reader_main(void *arg)
{
	struct serial *s = arg;
	char tmp[4096];

	while (!__atomic_load_n(&s->stop, __ATOMIC_ACQUIRE)) {
		struct pollfd pfd = { .fd = s->fd, .events = POLLIN };
		int rc = poll(&pfd, 1, 200);
		ssize_t n;

		if (rc < 0 && errno == EINTR)
			continue;
		if (rc < 0) {
			log_warn("serial poll failed: %s", strerror(errno));
			break;
		}
		if (rc == 0)
			continue;
		n = read(s->fd, tmp, sizeof(tmp));
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0) {
			if (n < 0)
				log_warn("serial read failed: %s", strerror(errno));
			else
				log_info("the serial port closed");
			break;
		}
		append(s, tmp, (size_t)n);
	}
	pthread_mutex_lock(&s->lock);
	s->alive = false;
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

int serial_open(const char *sock_path, const char *log_path, int timeout_ms,
		struct serial **out, char *err, size_t errlen)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int64_t deadline = time_mono_ms() + timeout_ms;
	struct serial *s = NULL;
	pthread_condattr_t ca;
	int rc;

	*out = NULL;
	if (strlen(sock_path) >= sizeof(sa.sun_path)) {
		snprintf(err, errlen, "serial socket path '%s' is too long", sock_path);
		return ERR_INVALID;
	}
	memcpy(sa.sun_path, sock_path, strlen(sock_path) + 1);
	s = calloc(1, sizeof(*s));
	if (!s)
		return ERR_NOMEM;
	s->fd = -1;
	pthread_mutex_init(&s->lock, NULL);
	pthread_mutex_init(&s->wlock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&s->cond, &ca);
	pthread_condattr_destroy(&ca);
	buf_init(&s->mem, LIMIT_SERIAL_LOG);
	for (;;) {
		s->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (s->fd < 0) {
			rc = -errno;
			goto fail;
		}
		if (connect(s->fd, (struct sockaddr *)&sa, sizeof(sa)) == 0)
			break;
		rc = -errno;
		close(s->fd);
		s->fd = -1;
		if (time_mono_ms() >= deadline) {
			snprintf(err, errlen, "cannot connect to serial socket '%s': %s",
				 sock_path, err_str(rc));
			rc = rc == -ENOENT ? ERR_TIMEOUT : rc;
			goto fail;
		}
		time_sleep_ms(50);
	}
	if (log_path) {
		s->log = fopen(log_path, "ae");
		if (!s->log) {
			rc = -errno;
			snprintf(err, errlen, "cannot open serial log '%s': %s", log_path, strerror(errno));
			goto fail;
		}
	}
	s->alive = true;
	rc = pthread_create(&s->thread, NULL, reader_main, s);
	if (rc) {
		s->alive = false;
		rc = -rc;
		snprintf(err, errlen, "cannot start the serial reader: %s", strerror(-rc));
		goto fail;
	}
	s->thread_started = true;
	*out = s;
	return 0;
fail:
	serial_close(s);
	return rc;
}

void serial_close(struct serial *s)
{
	if (!s)
		return;
	if (s->thread_started) {
		__atomic_store_n(&s->stop, 1, __ATOMIC_RELEASE);
		pthread_join(s->thread, NULL);
	}
	if (s->fd >= 0)
		close(s->fd);
	if (s->log)
		fclose(s->log);
	buf_release(&s->mem);
	pthread_cond_destroy(&s->cond);
	pthread_mutex_destroy(&s->wlock);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

int serial_write(struct serial *s, const void *data, size_t len)
{
	const char *p = data;
	int rc = 0;

	pthread_mutex_lock(&s->wlock);
	while (len) {
		ssize_t n = send(s->fd, p, len, MSG_NOSIGNAL);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			rc = (errno == EPIPE || errno == ECONNRESET) ? ERR_CLOSED : -errno;
			break;
		}
		p += n;
		len -= (size_t)n;
	}
	pthread_mutex_unlock(&s->wlock);
	return rc;
}

size_t serial_len(struct serial *s)
{
	size_t n;

	pthread_mutex_lock(&s->lock);
	n = s->total;
	pthread_mutex_unlock(&s->lock);
	return n;
}

int serial_snapshot(struct serial *s, size_t from, char **data, size_t *len, size_t *start)
{
	size_t off, n;
	char *copy;

	pthread_mutex_lock(&s->lock);
	if (from < s->base)
		from = s->base;
	if (from > s->total)
		from = s->total;
	off = from - s->base;
	n = s->total - from;
	copy = malloc(n + 1);
	if (copy) {
		if (n)
			memcpy(copy, s->mem.data + off, n);
		copy[n] = '\0';
	}
	pthread_mutex_unlock(&s->lock);
	if (!copy)
		return ERR_NOMEM;
	*data = copy;
	*len = n;
	if (start)
		*start = from;
	return 0;
}

int serial_wait_change(struct serial *s, size_t known_len, int timeout_ms)
{
	struct timespec ts;
	int rc = 0;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_sec += timeout_ms / 1000;
	ts.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&s->lock);
	while (s->total <= known_len) {
		if (!s->alive) {
			rc = ERR_CLOSED;
			break;
		}
		if (pthread_cond_timedwait(&s->cond, &s->lock, &ts) == ETIMEDOUT) {
			rc = s->total > known_len ? 0 : ERR_TIMEOUT;
			break;
		}
	}
	pthread_mutex_unlock(&s->lock);
	return rc;
}

bool serial_alive(struct serial *s)
{
	bool alive;

	pthread_mutex_lock(&s->lock);
	alive = s->alive;
	pthread_mutex_unlock(&s->lock);
	return alive;
}
