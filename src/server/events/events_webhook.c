/* SPDX-License-Identifier: MIT */
/* events_webhook.c - the webhook sink: each event is one JSON POST to the
 * configured URL, signed with HMAC-SHA256 of the body under the shared
 * secret (X-Vigil-Signature-256: sha256=HEX); any 2xx answer confirms it,
 * anything else is retried by the sender loop. Owns one curl handle. */
#define LOG_MODULE "events"
#include <curl/curl.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "server/events/events_int.h"
#include "util/err.h"
#include "util/banned.h" /* last: after every system header */

struct webhook {
	const struct events_env *env;
	CURL *curl;
};

static int wh_open(void **ctx, const struct events_env *env, char *err, size_t errlen)
{
	struct webhook *w = calloc(1, sizeof(*w));

	if (!w) {
		err_set(err, errlen, "out of memory");
		return ERR_NOMEM;
	}
	w->env = env;
	*ctx = w;
	return 0;
}

/* Abort a transfer when the server stops. */
static int progress(void *p, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
	const struct webhook *w = p;
	(void)dt, (void)dn, (void)ut, (void)un;
	return atomic_load(w->env->stop) ? 1 : 0;
}

static size_t discard(char *ptr, size_t size, size_t n, void *ud)
{
	(void)ptr, (void)ud;
	return size * n;
}

static int wh_send(void *ctx, const struct events_event *ev, bool *confirmed, char *err, size_t errlen)
{
	struct webhook *w = ctx;
	const struct events_config *cfg = w->env->cfg;
	struct curl_slist *h = NULL;
	char created[32], hdr[160], sig[2 * EVP_MAX_MD_SIZE + 1], cerr[CURL_ERROR_SIZE] = "";
	unsigned char mac[EVP_MAX_MD_SIZE];
	unsigned maclen = 0, i;
	char *body = NULL;
	json_t *env;
	long status = 0;
	CURLcode cc;
	int rc = ERR_IO;

	*confirmed = false;
	snprintf(created, sizeof(created), "%sZ", ev->created);
	env = json_pack("{s:I,s:s,s:s,s:O}", "id", (json_int_t)ev->id, "event", ev->kind, "created", created, "data",
			ev->data);
	body = env ? json_dumps(env, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
	json_decref(env);
	if (!body) {
		err_set(err, errlen, "out of memory");
		return ERR_NOMEM;
	}
	if (!HMAC(EVP_sha256(), cfg->webhook_secret, (int)strlen(cfg->webhook_secret), (const unsigned char *)body,
		  strlen(body), mac, &maclen)) {
		err_set(err, errlen, "cannot compute the signature");
		goto out;
	}
	for (i = 0; i < maclen; i++)
		snprintf(sig + 2 * i, 3, "%02x", mac[i]);
	if (!w->curl && !(w->curl = curl_easy_init())) {
		err_set(err, errlen, "cannot start curl");
		goto out;
	}
	h = curl_slist_append(h, "Content-Type: application/json");
	snprintf(hdr, sizeof(hdr), "X-Vigil-Event: %s", ev->kind);
	h = curl_slist_append(h, hdr);
	snprintf(hdr, sizeof(hdr), "X-Vigil-Delivery: %lld", (long long)ev->id);
	h = curl_slist_append(h, hdr);
	snprintf(hdr, sizeof(hdr), "X-Vigil-Signature-256: sha256=%s", sig);
	h = curl_slist_append(h, hdr);
	h = curl_slist_append(h, "Expect:");
	if (!h) {
		err_set(err, errlen, "out of memory");
		rc = ERR_NOMEM;
		goto out;
	}
	curl_easy_reset(w->curl);
	curl_easy_setopt(w->curl, CURLOPT_URL, cfg->webhook_url);
	curl_easy_setopt(w->curl, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(w->curl, CURLOPT_POSTFIELDSIZE, (long)strlen(body));
	curl_easy_setopt(w->curl, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(w->curl, CURLOPT_USERAGENT, "vigil-events");
	curl_easy_setopt(w->curl, CURLOPT_TIMEOUT, cfg->webhook_timeout_s);
	curl_easy_setopt(w->curl, CURLOPT_CONNECTTIMEOUT, cfg->webhook_timeout_s);
	curl_easy_setopt(w->curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(w->curl, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(w->curl, CURLOPT_XFERINFOFUNCTION, progress);
	curl_easy_setopt(w->curl, CURLOPT_XFERINFODATA, w);
	curl_easy_setopt(w->curl, CURLOPT_WRITEFUNCTION, discard);
	curl_easy_setopt(w->curl, CURLOPT_ERRORBUFFER, cerr);
	curl_easy_setopt(w->curl, CURLOPT_PROTOCOLS_STR, "http,https");
	cc = curl_easy_perform(w->curl);
	if (cc != CURLE_OK) {
		err_set(err, errlen, "POST %s: %s", cfg->webhook_url, cerr[0] ? cerr : curl_easy_strerror(cc));
		goto out;
	}
	curl_easy_getinfo(w->curl, CURLINFO_RESPONSE_CODE, &status);
	if (status < 200 || status > 299) {
		err_set(err, errlen, "POST %s: answered %ld", cfg->webhook_url, status);
		goto out;
	}
	*confirmed = true;
	rc = 0;
out:
	if (w->curl)
		curl_easy_setopt(w->curl, CURLOPT_HTTPHEADER, NULL);
	curl_slist_free_all(h);
	free(body);
	return rc;
}

static int wh_flush(void *ctx, char *err, size_t errlen)
{
	(void)ctx, (void)err, (void)errlen;
	return 0;
}

static void wh_reset(void *ctx)
{
	struct webhook *w = ctx;

	curl_easy_cleanup(w->curl);
	w->curl = NULL;
}

static void wh_close(void *ctx)
{
	wh_reset(ctx);
	free(ctx);
}

const struct events_sink_ops events__webhook_ops = {
	"webhook", NULL, wh_open, wh_send, wh_flush, NULL, wh_reset, wh_close,
};
