/* SPDX-License-Identifier: MIT */
/* web_ssr.h - a page's first view made by the server: the main data of
 * the page (the job table, the module list) as HTML in <main>, so it is
 * on screen before any script ran, and the API answers it was made from
 * as data islands, which the page's scripts (web/api.js) take instead of
 * asking again before they render the interactive page over it.
 *
 * A page built once (web.c's web_page.once; docs/web.md "Pages built
 * once") is all written here: its renderer calls the domain layer as the
 * API's handlers do, holds the answers with web_ssr_keep, writes the
 * whole page through html.h (escaped by construction), and no island;
 * its script adds behaviour only. The job page (web_ssr_job.c) alone still
 * reads the API with web_ssr_get, exactly as its script does (same paths,
 * same parameters: the script finds the island by URL), and writes what
 * the script would show. The renderers: web_ssr_lists.c, web_ssr_tests.c,
 * web_ssr_job.c, web_ssr_admin.c. */
#ifndef VIGIL_WEB_SSR_H
#define VIGIL_WEB_SSR_H

#include <jansson.h>
#include <stdbool.h>
#include <time.h>
#include "server/http/api.h"
#include "server/pages/html.h"

#define WEB_SSR_MAX_GETS 8

struct web_ssr {
	struct api_req *req;  /* the page's request (its query in req->params) */
	struct html main;     /* what goes into <main> */
	struct html islands;  /* the answers read, as data islands */
	struct api_resp got[WEB_SSR_MAX_GETS];
	size_t ngot;
	json_t *kept[WEB_SSR_MAX_GETS]; /* the domain's answers (web_ssr_keep), owned */
	size_t nkept;
};

/* A page's renderer: writes into s->main; when it writes nothing, the
 * page shows its "Loading…" until the script renders. */
typedef void (*web_ssr_fn)(struct web_ssr *s);

void web_ssr_init(struct web_ssr *s, struct api_req *req);
void web_ssr_release(struct web_ssr *s);

/* GET url of the API as the page's user (api_subget): its JSON answer,
 * borrowed until web_ssr_release, also written as an island; NULL when
 * it did not answer 200. url is the very URL the page's script asks for
 * (parameter order aside). */
json_t *web_ssr_get(struct web_ssr *s, const char *url);

/* A page built once (web.c's web_page.once: its script adds behaviour,
 * never the same markup) reads the domain layer itself, as the API's
 * handlers do, and hands each answer here: v (owned; NULL is nothing)
 * is kept until web_ssr_release and returned, borrowed. No JSON text is
 * written or parsed on the way. */
json_t *web_ssr_keep(struct web_ssr *s, json_t *v);

/* A page built once that cannot show its data (no such group, a bad
 * parameter): the message app.js shows for a page that failed, as
 * <p class="error">This page could not be shown: MSG</p> in <main>. */
void web_ssr_error(struct web_ssr *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The page URL's query parameter key: its first value, as the scripts'
 * URLSearchParams.get() (not params_get's last); NULL when absent or empty. */
const char *web_ssr_param(const struct web_ssr *s, const char *key);

/* Helpers for renderers, reading the API's JSON. */
/* o[key] as a string ("" when absent or not a string). */
const char *web_ssr_str(const json_t *o, const char *key);
/* o[key] as text: a string as is, a number in decimal, true/false; nothing for null. */
void web_ssr_text(struct html *h, const json_t *o, const char *key);
/* A time of the API ("2026-12-04T10:00:00", UTC) as seconds since the
 * epoch; false when unreadable (Date.parse's NaN). */
bool web_ssr_time(const char *iso, time_t *out);
/* A time of the API ("2026-12-04T10:00:00", UTC) as web/dom.js's ago()
 * shows it ("3 min ago"). */
void web_ssr_ago(struct html *h, const char *iso);
/* The class web/dom.js's resultClass() gives a job's result/state
 * ("r-passed", "st-running") into out. */
void web_ssr_result_class(char *out, size_t len, const char *result, const char *state);
/* web/dom.js's duration(): "42 s", "3 min", "1 h 2 min", "2 d". */
void web_ssr_duration(struct html *h, double seconds);

/* web/admin-common.js's admin navigation, active the current page's path. */
void web_ssr_admin_nav(struct html *h, const char *active);

/* The renderers (web.c's pages name them). */
void web_ssr_dashboard(struct web_ssr *s);
void web_ssr_group(struct web_ssr *s);
void web_ssr_tests(struct web_ssr *s);
void web_ssr_overview(struct web_ssr *s);
void web_ssr_job(struct web_ssr *s);
void web_ssr_admin_table(struct web_ssr *s);
void web_ssr_admin_workers(struct web_ssr *s);
void web_ssr_templates(struct web_ssr *s);
void web_ssr_auditlog(struct web_ssr *s);
void web_ssr_admin_assets(struct web_ssr *s);
void web_ssr_admin_needles(struct web_ssr *s);

#endif
