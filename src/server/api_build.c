/* SPDX-License-Identifier: MIT */
/* api_build.c - the checked insertions of api_build.h: the first one
 * that fails is recorded (and logged once), and api_build_answer turns a
 * recorded failure into the 503 of the out-of-memory policy. */
#define LOG_MODULE "api"
#include <stdio.h>
#include "server/api_build.h"
#include "server/api.h"
#include "util/log.h"
#include "util/banned.h" /* last: after every system header */

static void failed(struct api_build *b, const char *what)
{
	if (b->failed)
		return;
	b->failed = true;
	snprintf(b->what, sizeof(b->what), "%s", what ? what : "?");
	log_warn("JSON left incomplete at '%s': out of memory", b->what);
}

void api_build_set(struct api_build *b, json_t *o, const char *key, json_t *v)
{
	if (!v || json_object_set_new(o, key, v))
		failed(b, key);
}

void api_build_set_ref(struct api_build *b, json_t *o, const char *key, json_t *v)
{
	if (!v || json_object_set(o, key, v))
		failed(b, key);
}

void api_build_append(struct api_build *b, json_t *a, json_t *v)
{
	if (!v || json_array_append_new(a, v))
		failed(b, "[]");
}

json_t *api_build_take(struct api_build *b, json_t *v, const char *what)
{
	if (!v)
		failed(b, what);
	return v;
}

void api_build_answer(struct api_build *b, struct api_resp *out, json_t *j)
{
	if (b->failed || !j) {
		json_decref(j);
		api_nomem(out);
		return;
	}
	api_json(out, j);
}

json_t *api_build_done(struct api_build *b, json_t *j)
{
	if (b->failed || !j) {
		if (!j)
			failed(b, "?");
		json_decref(j);
		return NULL;
	}
	return j;
}
