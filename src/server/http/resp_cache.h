/* SPDX-License-Identifier: MIT */
/* resp_cache.h - serialized JSON answers of read-only list routes, kept
 * while the database is unchanged. A dashboard polling jobs?limit=500 then
 * costs a copy instead of 2,000 queries and 400 KB of JSON building. Used
 * by the server's request thread only (not thread-safe). */
#ifndef VIGIL_RESP_CACHE_H
#define VIGIL_RESP_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RESP_CACHE_ENTRIES 16
#define RESP_CACHE_MAX_BODY (8u << 20)

struct resp_cache_entry {
	char *target;      /* request target: path and query */
	char *body;
	size_t len;
	int64_t stamp[2];  /* db_change_stamp when the body was made */
	uint64_t used;     /* LRU clock */
};

struct resp_cache {
	bool enabled;
	struct resp_cache_entry e[RESP_CACHE_ENTRIES];
	uint64_t clock;
	uint64_t hits, misses;
};

/* Enabled unless the environment says VIGIL_NO_RESPONSE_CACHE=1. */
void resp_cache_init(struct resp_cache *c);
void resp_cache_release(struct resp_cache *c);
/* Whether GET path may be cached: the list routes whose answer depends on
 * the database alone (no clock, no files). */
bool resp_cache_route(const char *path);
/* The body cached for target at this stamp (borrowed until the next
 * resp_cache_put), or NULL. */
const char *resp_cache_get(struct resp_cache *c, const char *target, const int64_t stamp[2], size_t *len);
/* Keep a copy of body for target and return it (borrowed like
 * resp_cache_get's); NULL when not cached (off, too big, out of memory). */
const char *resp_cache_put(struct resp_cache *c, const char *target, const int64_t stamp[2], const char *body,
		    size_t len);

#endif
