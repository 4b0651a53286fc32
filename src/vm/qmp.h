/* SPDX-License-Identifier: MIT */
/* qmp.h - QEMU Machine Protocol client over a unix socket: handshake,
 * synchronous commands, a bounded queue of asynchronous events. Thread-safe:
 * one mutex serialises every use of the socket. Knows nothing of QEMU's
 * process; a dead peer shows as ERR_CLOSED or ERR_TIMEOUT, never a hang. */
#ifndef VIGIL_QMP_H
#define VIGIL_QMP_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

struct qmp;

/* Events kept until read; beyond this the oldest is dropped (logged). */
#define QMP_EVENT_MAX 256
/* Default deadline for one command's reply. */
#define QMP_TIMEOUT_MS 30000

/* What a QMP wait runs on. now_ms: a clock in ms that stands still while
 * QEMU waits for a CPU (qemu_qmp_clock: monotonic time less qemu_starved),
 * so a busy host makes a wait longer in wall time instead of failing it;
 * NULL: monotonic time. alive: 0 once QEMU has exited, which ends a wait
 * at once (ERR_CLOSED); NULL: not asked. Every wait is also bounded by
 * QMP_WALL_FACTOR times its timeout in wall time, for a QEMU that is
 * runnable but never runs. */
struct qmp_clock {
	int64_t (*now_ms)(void *ctx);
	int (*alive)(void *ctx);
	void *ctx;
};
#define QMP_WALL_FACTOR 30

/* Connect to the QMP socket at path, retrying for up to connect_timeout_ms
 * while it does not exist or refuses (QEMU creates it shortly after start),
 * read the greeting and negotiate capabilities. On success *out is the
 * caller's (qmp_close). Errors: -errno of the last connect attempt,
 * ERR_TIMEOUT, ERR_CLOSED, ERR_PROTO (bad greeting); err says what. */
int qmp_connect(const char *path, int connect_timeout_ms, struct qmp **out,
		char *err, size_t errlen);
/* qmp_connect whose waits (the connection, the greeting, the capabilities'
 * reply, every later command's reply and event) run on clock (copied;
 * NULL: monotonic time, as qmp_connect): timeout_ms is QEMU's time. */
int qmp_connect_clock(const char *path, int timeout_ms, const struct qmp_clock *clock, struct qmp **out, char *err,
		      size_t errlen);

/* Same handshake on an already connected stream socket fd (ownership of fd
 * passes to the qmp object, also on failure). For tests and fd passing. */
int qmp_connect_fd(int fd, struct qmp **out, char *err, size_t errlen);

/* Close the socket and free everything, queued events included. NULL-safe. */
void qmp_close(struct qmp *q);

/* Deadline for each later command's reply (default QMP_TIMEOUT_MS). */
void qmp_set_timeout(struct qmp *q, int timeout_ms);

/* Execute command name with args (a JSON object, borrowed, may be NULL) and
 * wait for its reply; events read meanwhile are queued. On success returns 0
 * and, if ret is not NULL, *ret is a new reference to the "return" value.
 * Errors: ERR_PROTO with "Class: desc" in err when QEMU answers with an
 * error, or when the peer sends a malformed or oversized (LIMIT_QMP_MSG)
 * line; ERR_CLOSED when the peer closed; ERR_TIMEOUT; -errno. After
 * ERR_CLOSED/ERR_TIMEOUT/malformed input the connection is dead and every
 * later call fails with ERR_CLOSED. */
int qmp_command(struct qmp *q, const char *name, json_t *args, json_t **ret,
		char *err, size_t errlen);

/* One human monitor command line through human-monitor-command (savevm,
 * loadvm, wavcapture, ...): QEMU answers "" on success, else its error
 * text, which goes into err and makes ERR_IO. 0, ERR_NOMEM, or as
 * qmp_command. */
int qmp_hmp(struct qmp *q, const char *line, char *err, size_t errlen);

/* The oldest queued event (a new reference the caller must json_decref, an
 * object with "event", "data", "timestamp"), reading the socket for up to
 * timeout_ms (0: only what is already there) if none is queued.
 * 0, ERR_TIMEOUT when none arrived, ERR_CLOSED, ERR_PROTO. */
int qmp_next_event(struct qmp *q, int timeout_ms, json_t **event);

/* query-status: copies the run state ("running", "paused", "shutdown",
 * "prelaunch", "inmigrate", ...) into status. Errors as qmp_command. */
int qmp_query_status(struct qmp *q, char *status, size_t statuslen,
		     char *err, size_t errlen);

/* Whether the connection still works (no close/timeout/protocol error seen). */
int qmp_alive(struct qmp *q);

#endif
