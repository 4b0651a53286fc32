/* SPDX-License-Identifier: MIT */
/* resp_cache.c - a small LRU of serialized answers keyed by request target
 * and validated by the database's change stamp (see resp_cache.h). Owns
 * its copies; never decides what is cacheable beyond resp_cache_route. */
#include <stdlib.h>
#include <string.h>
#include "server/http/resp_cache.h"
#include "util/banned.h" /* last: after every system header */

void resp_cache_init(struct resp_cache *c)
{
	const char *off = getenv("VIGIL_NO_RESPONSE_CACHE");

	memset(c, 0, sizeof(*c));
	c->enabled = !(off && !strcmp(off, "1"));
}

static void entry_clear(struct resp_cache_entry *e)
{
	free(e->target);
	free(e->body);
	memset(e, 0, sizeof(*e));
}

void resp_cache_release(struct resp_cache *c)
{
	size_t i;

	for (i = 0; i < RESP_CACHE_ENTRIES; i++)
		entry_clear(&c->e[i]);
}

bool resp_cache_route(const char *path)
{
	static const char *const lists[] = { "/api/v1/jobs", "/api/v1/job_groups", "/api/v1/machines",
					     "/api/v1/products", "/api/v1/test_suites", "/api/v1/job_templates" };
	size_t i, n;

	for (i = 0; i < sizeof(lists) / sizeof(lists[0]); i++) {
		n = strlen(lists[i]);
		if (!strncmp(path, lists[i], n) && (!path[n] || (path[n] == '/' && !path[n + 1])))
			return true;
	}
	return false;
}

const char *resp_cache_get(struct resp_cache *c, const char *target, const int64_t stamp[2], size_t *len)
{
	size_t i;

	if (!c->enabled)
		return NULL;
	for (i = 0; i < RESP_CACHE_ENTRIES; i++) {
		struct resp_cache_entry *e = &c->e[i];
		if (!e->target || strcmp(e->target, target))
			continue;
		if (e->stamp[0] != stamp[0] || e->stamp[1] != stamp[1]) {
			entry_clear(e);
			break;
		}
		e->used = ++c->clock;
		c->hits++;
		*len = e->len;
		return e->body;
	}
	c->misses++;
	return NULL;
}

const char *resp_cache_put(struct resp_cache *c, const char *target, const int64_t stamp[2], const char *body,
			   size_t len)
{
	struct resp_cache_entry *e = NULL;
	size_t i;

	if (!c->enabled || len > RESP_CACHE_MAX_BODY)
		return NULL;
	for (i = 0; i < RESP_CACHE_ENTRIES; i++) {
		if (c->e[i].target && !strcmp(c->e[i].target, target)) {
			e = &c->e[i];
			break;
		}
		if (!e || c->e[i].used < e->used)
			e = &c->e[i];
	}
	entry_clear(e);
	e->target = strdup(target);
	e->body = malloc(len + 1);
	if (!e->target || !e->body) {
		entry_clear(e);
		return NULL;
	}
	memcpy(e->body, body, len);
	e->body[len] = '\0';
	e->len = len;
	e->stamp[0] = stamp[0];
	e->stamp[1] = stamp[1];
	e->used = ++c->clock;
	return e->body;
}
