/* SPDX-License-Identifier: MIT */
/* fault.c - VIGIL_FAULT_ENOSPC: a write budget for the files matching a
 * pattern, read once from the environment, shared by every thread. */
#include <errno.h>
#include <fnmatch.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "util/fault.h"
#include "util/banned.h" /* last: after every system header */

static pthread_once_t once = PTHREAD_ONCE_INIT;
static char *pattern;            /* NULL: no fault */
static unsigned long long budget;
static atomic_ullong written;

static void parse(void)
{
	const char *v = getenv("VIGIL_FAULT_ENOSPC");
	const char *colon = v ? strrchr(v, ':') : NULL;
	char *end = NULL;
	unsigned long long n;

	if (!v || !*v)
		return;
	if (!colon || colon == v || !colon[1] || colon[1] == '-') {
		fprintf(stderr, "VIGIL_FAULT_ENOSPC='%s': expected PATTERN:BYTES, ignored\n", v);
		return;
	}
	errno = 0;
	n = strtoull(colon + 1, &end, 10);
	if (errno || *end) {
		fprintf(stderr, "VIGIL_FAULT_ENOSPC='%s': BYTES is not a number, ignored\n", v);
		return;
	}
	pattern = strndup(v, (size_t)(colon - v));
	budget = n;
}

bool fault_enospc_armed(void)
{
	pthread_once(&once, parse);
	return pattern != NULL;
}

size_t fault_enospc_allow(const char *path, size_t len)
{
	unsigned long long before, after;

	if (!fault_enospc_armed() || !path || fnmatch(pattern, path, 0) != 0)
		return len;
	before = atomic_load(&written);
	do {
		after = before + len > budget ? (before > budget ? before : budget) : before + len;
	} while (!atomic_compare_exchange_weak(&written, &before, after));
	return (size_t)(after - before);
}

ssize_t fault_write(int fd, const void *data, size_t len, const char *path)
{
	size_t n = len ? fault_enospc_allow(path, len) : 0;

	if (len && !n) {
		errno = ENOSPC;
		return -1;
	}
	return write(fd, data, n);
}
