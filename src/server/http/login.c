/* SPDX-License-Identifier: MIT */
/* login.c - failed sign-in counting, the same-site check of sign-in
 * forms, return_to paths and the session cookie's text (see login.h). The
 * limit lives in memory only: a restart forgets it, which costs an
 * attacker a restart of the server per window. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "server/http/login.h"
#include "util/banned.h" /* last: after every system header */

struct login_limit_entry {
	char key[LOGIN_LIMIT_KEY];  /* "" when free */
	int64_t start;              /* the epoch second of the window's first failure */
	int fails;
};

void login_limit_init(struct login_limit *l)
{
	pthread_mutex_init(&l->lock, NULL);
	l->v = NULL;
}

void login_limit_release(struct login_limit *l)
{
	free(l->v);
	l->v = NULL;
	pthread_mutex_destroy(&l->lock);
}

static bool live(const struct login_limit_entry *e, int64_t now)
{
	return e->key[0] && now - e->start < LOGIN_WINDOW_S && now >= e->start;
}

/* The entry of key (truncated as stored), NULL if none. Under the lock. */
static struct login_limit_entry *find(struct login_limit *l, const char *key)
{
	size_t i;

	for (i = 0; l->v && i < LOGIN_LIMIT_ENTRIES; i++)
		if (l->v[i].key[0] && !strncmp(l->v[i].key, key, LOGIN_LIMIT_KEY - 1))
			return &l->v[i];
	return NULL;
}

int64_t login_limit_wait(struct login_limit *l, const char *key, int max, int64_t now)
{
	struct login_limit_entry *e;
	int64_t wait = 0;

	pthread_mutex_lock(&l->lock);
	e = find(l, key);
	if (e && live(e, now) && e->fails >= max)
		wait = e->start + LOGIN_WINDOW_S - now;
	pthread_mutex_unlock(&l->lock);
	return wait;
}

void login_limit_fail(struct login_limit *l, const char *key, int64_t now)
{
	struct login_limit_entry *e;
	size_t i;

	pthread_mutex_lock(&l->lock);
	if (!l->v && !(l->v = calloc(LOGIN_LIMIT_ENTRIES, sizeof(*l->v)))) {
		pthread_mutex_unlock(&l->lock);
		return; /* out of memory: nothing counted, the hash still costs its time */
	}
	e = find(l, key);
	if (e && live(e, now)) {
		e->fails++;
		pthread_mutex_unlock(&l->lock);
		return;
	}
	if (!e) {
		/* A free or stale slot, else the one whose window began first. */
		e = &l->v[0];
		for (i = 0; i < LOGIN_LIMIT_ENTRIES; i++) {
			if (!live(&l->v[i], now)) {
				e = &l->v[i];
				break;
			}
			if (l->v[i].start < e->start)
				e = &l->v[i];
		}
	}
	snprintf(e->key, sizeof(e->key), "%s", key);
	e->start = now;
	e->fails = 1;
	pthread_mutex_unlock(&l->lock);
}

void login_limit_clear(struct login_limit *l, const char *key)
{
	struct login_limit_entry *e;

	pthread_mutex_lock(&l->lock);
	if ((e = find(l, key)))
		memset(e, 0, sizeof(*e));
	pthread_mutex_unlock(&l->lock);
}

/* Whether url ("scheme://host[:port][/...]") names host[:port] exactly
 * (case-insensitive, as host names are). */
static bool url_is_host(const char *url, const char *host)
{
	const char *p = strstr(url, "://"), *end;
	size_t n;

	if (!p || !host || !*host)
		return false;
	p += 3;
	end = p + strcspn(p, "/?#");
	n = (size_t)(end - p);
	return n == strlen(host) && !strncasecmp(p, host, n) && !memchr(p, '@', n);
}

bool login_same_site(const char *origin, const char *referer, const char *host)
{
	if (origin)
		return url_is_host(origin, host);
	if (referer)
		return url_is_host(referer, host);
	return true;
}

bool login_return_to_ok(const char *s)
{
	size_t i, n = s ? strlen(s) : 0;

	if (n == 0 || n > LOGIN_RETURN_TO_MAX || s[0] != '/' || s[1] == '/')
		return false;
	for (i = 0; i < n; i++)
		if (s[i] == '\\' || (unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return false;
	return true;
}

char *login_cookie(const char *token, int64_t max_age, bool secure)
{
	char *out = NULL;

	if (asprintf(&out, LOGIN_COOKIE "=%s; Path=/; Max-Age=%lld; HttpOnly; SameSite=Lax%s", token ? token : "",
		     (long long)max_age, secure ? "; Secure" : "") < 0)
		return NULL;
	return out;
}
