/* SPDX-License-Identifier: MIT */
/* err.c - text for the error table and for negative errno values. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "util/err.h"
#include "util/banned.h" /* last: after every system header */

const char *err_str(int code)
{
	switch (code) {
	case 0: return "success";
	case ERR_NOMEM: return "out of memory";
	case ERR_IO: return "input/output error";
	case ERR_PROTO: return "protocol or format error";
	case ERR_TIMEOUT: return "timed out";
	case ERR_TOO_BIG: return "too big";
	case ERR_NOT_FOUND: return "not found";
	case ERR_INVALID: return "invalid argument";
	case ERR_CLOSED: return "connection closed";
	case ERR_BADSTATE: return "invalid state";
	}
	if (code < 0 && code > ERR_BASE)
		return strerror(-code);
	return "unknown error";
}

void err_set(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}
