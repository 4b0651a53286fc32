/* SPDX-License-Identifier: MIT */
/* qmp.c - QEMU Machine Protocol client: handshake, commands, events. Owns
 * the socket and a bounded event queue; every message is one JSON line no
 * longer than LIMIT_QMP_MSG. Never trusts the peer: bad input is ERR_PROTO. */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#define LOG_MODULE "qmp"
#include "util/buf.h"
#include "util/err.h"
#include "util/limits.h"
#include "util/log.h"
#include "util/oom.h"
#include "util/time.h"
#include "vm/qmp.h"
#include "util/banned.h" /* last: after every system header */

struct qmp {
	pthread_mutex_t lock;
	int fd;
	int dead;              /* a fatal error was seen; later calls fail */
	int timeout_ms;
	struct qmp_clock clock; /* what every wait runs on (qmp.h) */
	unsigned long next_id;
	struct buf rbuf;       /* bytes read but not yet parsed into lines */
	json_t *events[QMP_EVENT_MAX];
	size_t ev_head, ev_len;
	unsigned long ev_dropped;
};

/* The clock's time (ms): QEMU's own with a clock given, else monotonic. */
static int64_t clock_now(const struct qmp_clock *c)
{
	return c && c->now_ms ? c->now_ms(c->ctx) : time_mono_ms();
}

/* A wait's end: timeout_ms on the clock, and QMP_WALL_FACTOR times that in
 * wall time for a QEMU that never gets a CPU. */
struct wait_end {
	int64_t at, wall; /* -1: none */
};

static struct wait_end wait_end(const struct qmp_clock *c, int timeout_ms)
{
	struct wait_end e = { clock_now(c) + timeout_ms, time_mono_ms() + (int64_t)timeout_ms * QMP_WALL_FACTOR };

	return e;
}

/* ms to poll before looking again: what is left of the wait, in slices of
 * at most 100 ms when the clock is QEMU's (it runs slower than the wall's);
 * 0 when the wait is over. */
static int wait_left(const struct qmp_clock *c, struct wait_end e)
{
	int64_t left = e.at - clock_now(c), wall = e.wall - time_mono_ms();

	if (left <= 0 || wall <= 0)
		return 0;
	if (wall < left)
		left = wall;
	if ((c->now_ms || c->alive) && left > 100)
		left = 100;
	return (int)left;
}

static void queue_event(struct qmp *q, json_t *ev)
{
	if (q->ev_len == QMP_EVENT_MAX) {
		json_t *old = q->events[q->ev_head];
		json_t *name = json_object_get(old, "event");

		log_warn("event queue full: dropping event '%s'",
			 json_is_string(name) ? json_string_value(name) : "?");
		json_decref(old);
		q->ev_head = (q->ev_head + 1) % QMP_EVENT_MAX;
		q->ev_len--;
		q->ev_dropped++;
	}
	q->events[(q->ev_head + q->ev_len) % QMP_EVENT_MAX] = ev;
	q->ev_len++;
}

/* Read one message (a JSON object on one line) by the end (wait_end; NULL:
 * none). Caller holds the lock. */
static int read_msg(struct qmp *q, const struct wait_end *end, json_t **out, char *err, size_t errlen)
{
	*out = NULL;
	if (q->dead) {
		err_set(err, errlen, "qmp connection is closed");
		return ERR_CLOSED;
	}
	for (;;) {
		char *nl = q->rbuf.len ? memchr(q->rbuf.data, '\n', q->rbuf.len) : NULL;
		char tmp[65536];
		struct pollfd pfd = { .fd = q->fd, .events = POLLIN };
		ssize_t n;
		int wait, rc;

		if (nl) {
			size_t linelen = (size_t)(nl - q->rbuf.data);
			json_error_t jerr;
			json_t *msg;
			bool nomem;

			if (linelen == 0 || (linelen == 1 && q->rbuf.data[0] == '\r')) {
				buf_consume(&q->rbuf, linelen + 1);
				continue;
			}
			msg = oom_json_loadb(q->rbuf.data, linelen, 0, &jerr, &nomem);
			buf_consume(&q->rbuf, linelen + 1);
			if (nomem) {
				err_set(err, errlen, "out of memory reading a qmp message");
				q->dead = 1;
				return ERR_NOMEM;
			}
			if (!msg || !json_is_object(msg)) {
				err_set(err, errlen, "malformed qmp message (column %d): %s",
					msg ? 0 : jerr.column, msg ? "not an object" : jerr.text);
				json_decref(msg);
				q->dead = 1;
				return ERR_PROTO;
			}
			*out = msg;
			return 0;
		}
		wait = end ? wait_left(&q->clock, *end) : -1;
		rc = poll(&pfd, 1, wait); /* 0 ms: only what is there already */
		if (rc < 0) {
			if (errno == EINTR)
				continue;
			rc = -errno;
			err_set(err, errlen, "qmp poll: %s", strerror(errno));
			q->dead = 1;
			return rc;
		}
		if (rc == 0 && q->clock.alive && !q->clock.alive(q->clock.ctx)) {
			err_set(err, errlen, "qemu exited before its qmp message");
			q->dead = 1;
			return ERR_CLOSED;
		}
		if (rc == 0 && end && !wait_left(&q->clock, *end)) {
			err_set(err, errlen, "no qmp message within the deadline");
			return ERR_TIMEOUT;
		}
		if (rc == 0)
			continue;
		n = read(q->fd, tmp, sizeof(tmp));
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			rc = -errno;
			err_set(err, errlen, "qmp read: %s", strerror(errno));
			q->dead = 1;
			return rc;
		}
		if (n == 0) {
			err_set(err, errlen, "qemu closed the qmp connection");
			q->dead = 1;
			return ERR_CLOSED;
		}
		if ((rc = buf_append(&q->rbuf, tmp, (size_t)n)) < 0) {
			q->dead = 1;
			if (rc == ERR_NOMEM) {
				err_set(err, errlen, "out of memory reading a qmp message");
				return ERR_NOMEM;
			}
			err_set(err, errlen, "qmp message longer than %u bytes", LIMIT_QMP_MSG);
			return ERR_PROTO;
		}
	}
}

static int write_all(struct qmp *q, const char *data, size_t len, char *err, size_t errlen)
{
	while (len) {
		ssize_t n = send(q->fd, data, len, MSG_NOSIGNAL);

		if (n < 0) {
			int rc = -errno;

			if (errno == EINTR)
				continue;
			q->dead = 1;
			err_set(err, errlen, "qmp write: %s", strerror(errno));
			return errno == EPIPE || errno == ECONNRESET ? ERR_CLOSED : rc;
		}
		data += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Send a command and wait for its reply; caller holds the lock. */
static int execute(struct qmp *q, const char *name, json_t *args, json_t **ret,
		   int timeout_ms, char *err, size_t errlen)
{
	json_t *cmd = NULL, *reply = NULL;
	char *text = NULL;
	unsigned long id = ++q->next_id;
	struct wait_end end = wait_end(&q->clock, timeout_ms);
	int rc;

	if (ret)
		*ret = NULL;
	if (q->dead) {
		err_set(err, errlen, "qmp connection is closed");
		return ERR_CLOSED;
	}
	cmd = json_pack("{s:s, s:I}", "execute", name, "id", (json_int_t)id);
	if (!cmd || (args && json_object_set(cmd, "arguments", args) < 0)) {
		rc = ERR_NOMEM;
		goto out;
	}
	text = json_dumps(cmd, JSON_COMPACT);
	if (!text) {
		rc = ERR_NOMEM;
		goto out;
	}
	log_debug("-> %s", text);
	if ((rc = write_all(q, text, strlen(text), err, errlen)) < 0 ||
	    (rc = write_all(q, "\n", 1, err, errlen)) < 0)
		goto out;
	for (;;) {
		json_t *rid, *val;

		rc = read_msg(q, &end, &reply, err, errlen);
		if (rc == ERR_TIMEOUT) {
			err_set(err, errlen, "no reply to qmp '%s' within %d ms", name, timeout_ms);
			q->dead = 1;
		}
		if (rc < 0)
			goto out;
		if (json_object_get(reply, "event")) {
			queue_event(q, reply);
			reply = NULL;
			continue;
		}
		rid = json_object_get(reply, "id");
		if (rid && !(json_is_integer(rid) && (unsigned long)json_integer_value(rid) == id)) {
			/* A late reply to an earlier, timed-out command: skip it. */
			json_decref(reply);
			reply = NULL;
			continue;
		}
		if ((val = json_object_get(reply, "return"))) {
			if (ret)
				*ret = json_incref(val);
			rc = 0;
			goto out;
		}
		if ((val = json_object_get(reply, "error"))) {
			const char *cls = json_string_value(json_object_get(val, "class"));
			const char *desc = json_string_value(json_object_get(val, "desc"));

			err_set(err, errlen, "%s: %s", cls ? cls : "Error", desc ? desc : "(no description)");
			rc = ERR_PROTO;
			goto out;
		}
		err_set(err, errlen, "qmp reply to '%s' has neither return nor error", name);
		q->dead = 1;
		rc = ERR_PROTO;
		goto out;
	}
out:
	free(text);
	json_decref(cmd);
	json_decref(reply);
	return rc;
}

/* The handshake on fd with the clock (NULL: monotonic) for every wait. */
static int connect_fd(int fd, const struct qmp_clock *clock, int timeout_ms, struct qmp **out, char *err,
		      size_t errlen)
{
	struct qmp *q = calloc(1, sizeof(*q));
	struct wait_end end;
	json_t *greet = NULL;
	int rc;

	*out = NULL;
	if (!q) {
		close(fd);
		return ERR_NOMEM;
	}
	pthread_mutex_init(&q->lock, NULL);
	q->fd = fd;
	q->timeout_ms = QMP_TIMEOUT_MS;
	if (clock)
		q->clock = *clock;
	buf_init(&q->rbuf, LIMIT_QMP_MSG);
	end = wait_end(&q->clock, timeout_ms);
	rc = read_msg(q, &end, &greet, err, errlen);
	if (rc < 0)
		goto out;
	if (!json_object_get(greet, "QMP")) {
		err_set(err, errlen, "qmp greeting lacks the \"QMP\" member");
		rc = ERR_PROTO;
		goto out;
	}
	rc = execute(q, "qmp_capabilities", NULL, NULL, timeout_ms, err, errlen);
out:
	json_decref(greet);
	if (rc < 0)
		qmp_close(q);
	else
		*out = q;
	return rc;
}

int qmp_connect_fd(int fd, struct qmp **out, char *err, size_t errlen)
{
	return connect_fd(fd, NULL, 10000, out, err, errlen);
}

int qmp_connect_clock(const char *path, int timeout_ms, const struct qmp_clock *clock, struct qmp **out, char *err,
		      size_t errlen)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct qmp_clock none = { 0 };
	struct wait_end end;
	int fd, rc;

	*out = NULL;
	if (!clock)
		clock = &none;
	end = wait_end(clock, timeout_ms);
	if (strlen(path) >= sizeof(sa.sun_path)) {
		err_set(err, errlen, "qmp socket path '%s' is too long", path);
		return ERR_INVALID;
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);
	for (;;) {
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			return -errno;
		if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0)
			break;
		rc = -errno;
		close(fd);
		if (clock->alive && !clock->alive(clock->ctx)) {
			err_set(err, errlen, "qemu exited before its qmp socket '%s' took a connection", path);
			return ERR_CLOSED;
		}
		if (!wait_left(clock, end)) {
			err_set(err, errlen, "cannot connect to qmp socket '%s': %s",
				path, err_str(rc));
			return rc;
		}
		time_sleep_ms(50);
	}
	return connect_fd(fd, clock, timeout_ms, out, err, errlen);
}

int qmp_connect(const char *path, int connect_timeout_ms, struct qmp **out, char *err, size_t errlen)
{
	return qmp_connect_clock(path, connect_timeout_ms, NULL, out, err, errlen);
}

void qmp_close(struct qmp *q)
{
	if (!q)
		return;
	if (q->fd >= 0)
		close(q->fd);
	while (q->ev_len) {
		json_decref(q->events[q->ev_head]);
		q->ev_head = (q->ev_head + 1) % QMP_EVENT_MAX;
		q->ev_len--;
	}
	buf_release(&q->rbuf);
	pthread_mutex_destroy(&q->lock);
	free(q);
}

void qmp_set_timeout(struct qmp *q, int timeout_ms)
{
	pthread_mutex_lock(&q->lock);
	q->timeout_ms = timeout_ms;
	pthread_mutex_unlock(&q->lock);
}

int qmp_command(struct qmp *q, const char *name, json_t *args, json_t **ret,
		char *err, size_t errlen)
{
	int rc;

	pthread_mutex_lock(&q->lock);
	rc = execute(q, name, args, ret, q->timeout_ms, err, errlen);
	pthread_mutex_unlock(&q->lock);
	return rc;
}

int qmp_hmp(struct qmp *q, const char *line, char *err, size_t errlen)
{
	json_t *args = json_pack("{s:s}", "command-line", line), *ret = NULL;
	int rc;

	if (!args)
		return ERR_NOMEM;
	rc = qmp_command(q, "human-monitor-command", args, &ret, err, errlen);
	json_decref(args);
	if (!rc && json_string_value(ret) && json_string_value(ret)[0]) {
		snprintf(err, errlen, "%s", json_string_value(ret));
		rc = ERR_IO;
	}
	json_decref(ret);
	return rc;
}

int qmp_next_event(struct qmp *q, int timeout_ms, json_t **event)
{
	struct wait_end end = wait_end(&q->clock, timeout_ms > 0 ? timeout_ms : 0);
	int rc = 0;

	*event = NULL;
	pthread_mutex_lock(&q->lock);
	while (!q->ev_len) {
		json_t *msg;

		rc = read_msg(q, &end, &msg, NULL, 0);
		if (rc < 0)
			break;
		if (json_object_get(msg, "event"))
			queue_event(q, msg);
		else
			json_decref(msg); /* a stray reply: nobody waits for it */
	}
	if (q->ev_len) {
		*event = q->events[q->ev_head];
		q->ev_head = (q->ev_head + 1) % QMP_EVENT_MAX;
		q->ev_len--;
		rc = 0;
	}
	pthread_mutex_unlock(&q->lock);
	return rc;
}

int qmp_query_status(struct qmp *q, char *status, size_t statuslen,
		     char *err, size_t errlen)
{
	json_t *ret = NULL;
	const char *s;
	int rc = qmp_command(q, "query-status", NULL, &ret, err, errlen);

	if (rc < 0)
		return rc;
	s = json_string_value(json_object_get(ret, "status"));
	if (!s) {
		err_set(err, errlen, "query-status reply lacks \"status\"");
		json_decref(ret);
		return ERR_PROTO;
	}
	snprintf(status, statuslen, "%s", s);
	json_decref(ret);
	return 0;
}

int qmp_alive(struct qmp *q)
{
	int dead;

	pthread_mutex_lock(&q->lock);
	dead = q->dead;
	pthread_mutex_unlock(&q->lock);
	return !dead;
}
