/* SPDX-License-Identifier: MIT */
/* oom.c - jansson's allocations counted per thread (oom.h): a parse that
 * returned NULL while one of them failed ran out of memory. */
#include <pthread.h>
#include <stdlib.h>
#include "util/oom.h"
#include "util/banned.h" /* last: after every system header */

static _Thread_local unsigned long failed;
static _Thread_local int trusted;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void *counting_malloc(size_t n)
{
	void *p = malloc(n);

	if (!p)
		failed++;
	return p;
}

static void install(void)
{
	json_set_alloc_funcs(counting_malloc, free);
}

void oom_init(void)
{
	pthread_once(&once, install);
}

json_t *oom_json_loadb(const char *buf, size_t len, size_t flags, json_error_t *error, bool *nomem)
{
	unsigned long before;
	json_t *j;

	oom_init();
	before = failed;
	j = json_loadb(buf, len, flags, error);
	if (nomem)
		*nomem = !j && (failed != before || json_error_code(error) == json_error_out_of_memory);
	return j;
}

json_t *oom_json_loadb_trusted(const char *buf, size_t len, bool *nomem)
{
	json_error_t error;
	json_t *j;

	trusted++;
	j = oom_json_loadb(buf, len, 0, &error, nomem);
	trusted--;
	return j;
}

bool oom_trusted_parse(void)
{
	return trusted > 0;
}
