/* SPDX-License-Identifier: MIT */
/* web_ssr.c - the first-view context of web_ssr.h and the helpers its
 * renderers share (text of JSON values, times as the page scripts show
 * them). */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "server/pages/web_ssr.h"
#include "util/banned.h" /* last: after every system header */

#define WEB_SSR_MAX_HTML (8u << 20)

void web_ssr_init(struct web_ssr *s, struct api_req *req)
{
	memset(s, 0, sizeof(*s));
	s->req = req;
	html_init(&s->main, WEB_SSR_MAX_HTML);
	html_init(&s->islands, WEB_SSR_MAX_HTML);
}

void web_ssr_release(struct web_ssr *s)
{
	size_t i;

	for (i = 0; i < s->ngot; i++)
		api_resp_release(&s->got[i]);
	for (i = 0; i < s->nkept; i++)
		json_decref(s->kept[i]);
	s->nkept = 0;
	html_release(&s->main);
	html_release(&s->islands);
	s->ngot = 0;
}

json_t *web_ssr_get(struct web_ssr *s, const char *url)
{
	struct api_resp *out;
	char *text;

	if (s->ngot == WEB_SSR_MAX_GETS)
		return NULL;
	out = &s->got[s->ngot];
	if (api_subget(s->req, url, out))
		return NULL;
	s->ngot++;
	if (out->raw) {
		/* the response cache's text of the answer (borrowed until the next get) */
		html_island(&s->islands, url, out->raw);
		out->raw = NULL;
		out->raw_len = 0;
		return out->json;
	}
	text = json_dumps(out->json, JSON_COMPACT);
	if (text)
		html_island(&s->islands, url, text);
	free(text);
	return out->json;
}

json_t *web_ssr_keep(struct web_ssr *s, json_t *v)
{
	if (!v)
		return NULL;
	if (s->nkept == WEB_SSR_MAX_GETS) {
		json_decref(v);
		return NULL;
	}
	s->kept[s->nkept++] = v;
	return v;
}

void web_ssr_error(struct web_ssr *s, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	HTML(&s->main, "<p class=\"error\">This page could not be shown: ");
	html_text(&s->main, msg);
	HTML(&s->main, "</p>");
}

const char *web_ssr_param(const struct web_ssr *s, const char *key)
{
	const struct params *p = &s->req->params;
	size_t i;

	/* the first value, as the scripts' URLSearchParams.get() */
	for (i = 0; i < p->n; i++)
		if (!strcmp(p->v[i].key, key))
			return *p->v[i].value ? p->v[i].value : NULL;
	return NULL;
}

const char *web_ssr_str(const json_t *o, const char *key)
{
	const char *v = json_string_value(json_object_get(o, key));

	return v ? v : "";
}

void web_ssr_text(struct html *h, const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);

	if (json_is_string(v))
		html_text(h, json_string_value(v));
	else if (json_is_integer(v))
		html_textf(h, "%lld", (long long)json_integer_value(v));
	else if (json_is_real(v))
		html_textf(h, "%g", json_real_value(v));
	else if (json_is_boolean(v))
		html_text(h, json_is_true(v) ? "true" : "false");
}

void web_ssr_duration(struct html *h, double seconds)
{
	long long s = seconds > 0 ? llround(seconds) : 0;

	if (s < 60)
		html_textf(h, "%lld s", s);
	else if (s < 3600)
		html_textf(h, "%lld min", s / 60);
	else if (s < 86400)
		html_textf(h, "%lld h %lld min", s / 3600, (s % 3600) / 60);
	else
		html_textf(h, "%lld d", s / 86400);
}

bool web_ssr_time(const char *iso, time_t *out)
{
	struct tm tm;

	memset(&tm, 0, sizeof(tm));
	if (!iso || !*iso || !strptime(iso, "%Y-%m-%dT%H:%M:%S", &tm))
		return false;
	*out = timegm(&tm); /* the API writes UTC ("Z" or no zone); a fraction of a second is ignored */
	return true;
}

void web_ssr_ago(struct html *h, const char *iso)
{
	time_t t;

	if (!iso || !*iso)
		return;
	if (!web_ssr_time(iso, &t)) {
		html_text(h, iso);
		return;
	}
	web_ssr_duration(h, difftime(time(NULL), t));
	HTML(h, " ago");
}

void web_ssr_result_class(char *out, size_t len, const char *result, const char *state)
{
	const char *v = state && *state && strcmp(state, "done") ? state : result && *result ? result : "none";
	size_t n = 0;

	if (len < 4) {
		if (len)
			out[0] = '\0';
		return;
	}
	memcpy(out, v == state ? "st-" : "r-", v == state ? 3 : 2);
	n = v == state ? 3 : 2;
	for (; *v && n + 1 < len; v++)
		if ((*v >= 'a' && *v <= 'z') || *v == '_')
			out[n++] = *v;
	out[n] = '\0';
}
