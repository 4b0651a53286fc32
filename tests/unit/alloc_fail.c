/* SPDX-License-Identifier: MIT */
/* alloc_fail.c - the wrapped allocators of the unit binary (alloc_fail.h):
 * pass-through unless armed; armed, the nth allocation returns NULL with
 * errno ENOMEM. jansson allocates through them once util/oom.c routed it
 * (its malloc is vigil's code, so wrapped too). Single
 * threaded use: each unit test runs in its own process. */
#include <errno.h>
#include <execinfo.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "alloc_fail.h"
#include "util/oom.h"

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
char *__real_strdup(const char *s);
char *__real_strndup(const char *s, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t n);
char *__wrap_strdup(const char *s);
char *__wrap_strndup(const char *s, size_t n);

static bool armed, fired;
static long count, target;

/* True when this allocation is the one to fail. */
static bool fail_now(void)
{
	if (!armed || oom_trusted_parse() || ++count != target)
		return false;
	fired = true;
	/* VIGIL_ALLOC_FAIL_TRACE=1: where the failed allocation was asked for. */
	if (getenv("VIGIL_ALLOC_FAIL_TRACE")) {
		void *frames[16];
		armed = false;
		backtrace_symbols_fd(frames, backtrace(frames, 16), 2);
		armed = true;
	}
	errno = ENOMEM;
	return true;
}

void *__wrap_malloc(size_t n)
{
	return fail_now() ? NULL : __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t size)
{
	return fail_now() ? NULL : __real_calloc(n, size);
}

void *__wrap_realloc(void *p, size_t n)
{
	return fail_now() ? NULL : __real_realloc(p, n);
}

char *__wrap_strdup(const char *s)
{
	return fail_now() ? NULL : __real_strdup(s);
}

char *__wrap_strndup(const char *s, size_t n)
{
	return fail_now() ? NULL : __real_strndup(s, n);
}

void alloc_fail_arm(long nth)
{
	count = 0;
	target = nth;
	fired = false;
	oom_init(); /* jansson's allocations through vigil's (wrapped) malloc */
	armed = true;
}

bool alloc_fail_disarm(void)
{
	armed = false;
	return fired;
}
