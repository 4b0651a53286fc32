/* SPDX-License-Identifier: MIT */
/* serial.h - the guest's serial port as a two-way unix socket (QEMU
 * -chardev socket,server=on). A reader thread appends every byte to a log
 * file (serial0.txt) and to a bounded in-memory copy that waiters watch.
 * Offsets are absolute byte counts since the connection was made. */
#ifndef VIGIL_SERIAL_H
#define VIGIL_SERIAL_H

#include <stdbool.h>
#include <stddef.h>

struct serial;

/* Connect to the socket at sock_path, retrying for up to timeout_ms while
 * it is absent or refuses, open log_path for appending (NULL: no file), and
 * start the reader. The in-memory copy keeps at most LIMIT_SERIAL_LOG bytes
 * (older output is forgotten, the file keeps all). *out is the caller's.
 * Errors: -errno, ERR_TIMEOUT; err says what. */
int serial_open(const char *sock_path, const char *log_path, int timeout_ms,
		struct serial **out, char *err, size_t errlen);

/* Stop the reader, close socket and file. NULL-safe. */
void serial_close(struct serial *s);

/* Write all of data to the guest. 0, ERR_CLOSED, or -errno. */
int serial_write(struct serial *s, const void *data, size_t len);

/* Bytes received so far. */
size_t serial_len(struct serial *s);

/* A NUL-terminated copy of the output from offset from to the end (the
 * caller frees *data). If from is older than the memory keeps, the copy
 * starts at the oldest byte kept; *start (if not NULL) gets the offset the
 * copy starts at. 0 or ERR_NOMEM. */
int serial_snapshot(struct serial *s, size_t from, char **data, size_t *len, size_t *start);

/* Wait until more than known_len bytes have arrived. 0, ERR_TIMEOUT, or
 * ERR_CLOSED (the peer closed and no newer byte is there). */
int serial_wait_change(struct serial *s, size_t known_len, int timeout_ms);

/* false once the socket closed or failed. */
bool serial_alive(struct serial *s);

#endif
