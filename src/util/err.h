/* SPDX-License-Identifier: MIT */
/* err.h - the one table of error codes. Functions return 0 or a negative
 * code from here; system call failures return -errno directly. */
#ifndef VIGIL_ERR_H
#define VIGIL_ERR_H

enum {
	ERR_BASE = -10000,
	ERR_NOMEM,      /* allocation failed */
	ERR_IO,         /* read/write failed (errno lost) */
	ERR_PROTO,      /* a peer or file broke its protocol/format */
	ERR_TIMEOUT,    /* a deadline passed */
	ERR_TOO_BIG,    /* input over a named limit */
	ERR_NOT_FOUND,  /* no such thing */
	ERR_INVALID,    /* bad argument or value */
	ERR_CLOSED,     /* the peer went away */
	ERR_BADSTATE,      /* not possible in the current state */
};

/* Human-readable text for a code from this table or a -errno value. Borrowed. */
const char *err_str(int code);

#include <stddef.h>

/* Format a message into err (err may be NULL or errlen 0: nothing done). */
void err_set(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
