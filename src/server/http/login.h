/* SPDX-License-Identifier: MIT */
/* login.h - the HTTP side of signing in, apart from the database: the
 * in-memory limit on failed sign-ins (per client address and per user
 * name, shared by the handler threads, locked inside), the same-site check
 * of a sign-in form's Origin/Referer, the return_to path check, and the
 * session cookie's text. Every function takes the time as an argument, so
 * tests need no clock. */
#ifndef VIGIL_LOGIN_H
#define VIGIL_LOGIN_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LOGIN_COOKIE "vigil_session"
#define LOGIN_WINDOW_S 60          /* failures count within this many seconds */
#define LOGIN_MAX_FAILS_USER 5     /* per user name and window; the next try is refused */
#define LOGIN_MAX_FAILS_ADDR 20    /* per client address (many users may share one) */
#define LOGIN_LIMIT_ENTRIES 4096   /* names and addresses tracked at once */
#define LOGIN_LIMIT_KEY 96         /* bytes of a tracked key kept ("user:NAME", "addr:IP") */
#define LOGIN_RETURN_TO_MAX 2048

struct login_limit_entry;

struct login_limit {
	pthread_mutex_t lock;
	struct login_limit_entry *v; /* LOGIN_LIMIT_ENTRIES, allocated on the first failure */
};

void login_limit_init(struct login_limit *l);
void login_limit_release(struct login_limit *l);
/* Seconds key must wait before it may try again at now (0: it may try),
 * once it failed max times within LOGIN_WINDOW_S. */
int64_t login_limit_wait(struct login_limit *l, const char *key, int max, int64_t now);
/* Count one failure of key at now. When the table is full, the entry whose
 * window started first is forgotten. */
void login_limit_fail(struct login_limit *l, const char *key, int64_t now);
/* Forget key's failures (a successful sign-in). */
void login_limit_clear(struct login_limit *l, const char *key);

/* Whether a sign-in POST comes from a page of this site: its Origin, else
 * its Referer, names host (the request's Host header: host[:port]). A
 * request with neither (a program, not a browser) passes; "null" and a
 * missing host do not. */
bool login_same_site(const char *origin, const char *referer, const char *host);
/* Whether s is a path of this site to go back to after signing in: starts
 * with one '/', no backslash, no control character, at most
 * LOGIN_RETURN_TO_MAX bytes. */
bool login_return_to_ok(const char *s);
/* The Set-Cookie value of the session cookie: HttpOnly, SameSite=Lax,
 * Path=/, Max-Age max_age (0 with an empty token deletes it), Secure when
 * secure. A new string, NULL when out of memory. */
char *login_cookie(const char *token, int64_t max_age, bool secure);

#endif
