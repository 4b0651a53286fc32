/* SPDX-License-Identifier: MIT */
/* needle_edit.c - the needle editor's domain work: reading a step and its
 * candidates, checking a draft needle into openQA's saved layout, matching
 * it on the stored screenshot with image/match (the runner's matcher, the
 * decoded screenshot cached), saving NAME.json + NAME.png and committing
 * them with git (util/proc, no shell). Writes only below DATA/tests. */
#define LOG_MODULE "needle_edit"
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include "image/image.h"
#include "image/match.h"
#include "image/needle.h"
#include "server/store/jbuild.h"
#include "server/store/artefacts.h"
#include "server/store/needle_edit.h"
#include "server/store/needles.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/file.h"
#include "util/limits.h"
#include "util/log.h"
#include "util/oom.h"
#include "util/path.h"
#include "util/proc.h"
#include "util/str.h"
#include "util/time.h"
#include "util/banned.h" /* last: after every system header */

int needle_edit_name_check(const char *name, char *msg, size_t msglen)
{
	size_t n = name ? strlen(name) : 0, i;

	if (n == 0 || n > NEEDLE_EDIT_NAME_MAX) {
		snprintf(msg, msglen, "a needle name needs 1 to %d characters", NEEDLE_EDIT_NAME_MAX);
		return ERR_INVALID;
	}
	if (name[0] == '.' || name[0] == '-' || strstr(name, "..")) {
		snprintf(msg, msglen, "needle name '%s' may not start with '.' or '-' nor hold '..'", name);
		return ERR_INVALID;
	}
	for (i = 0; i < n; i++) {
		char c = name[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
		      c == '_' || c == '+' || c == '-')) {
			snprintf(msg, msglen, "needle name: only letters, digits and . _ + - are allowed");
			return ERR_INVALID;
		}
	}
	return 0;
}

/* Each '/'-separated segment of a subdirectory below needles/. */
static int subdir_check(const char *sub, char *msg, size_t msglen)
{
	char seg[NEEDLE_EDIT_NAME_MAX + 1];
	const char *p = sub;
	int depth = 0;

	while (p && *p) {
		size_t n = strcspn(p, "/");
		if (n == 0 || n > NEEDLE_EDIT_NAME_MAX || ++depth > 8) {
			snprintf(msg, msglen, "needle directory '%s' is not a plain relative path", sub);
			return ERR_INVALID;
		}
		memcpy(seg, p, n);
		seg[n] = '\0';
		if (needle_edit_name_check(seg, msg, msglen))
			return ERR_INVALID;
		p += n;
		if (*p == '/')
			p++;
	}
	return 0;
}

/* ---- the draft needle ---- */

/* An integer field in [lo, hi]: JSON integers, or reals without fraction. */
static int int_field(const json_t *o, const char *key, long lo, long hi, bool need, long *out, size_t ai,
		     char *msg, size_t msglen)
{
	const json_t *v = json_object_get(o, key);
	double d;

	if (!v || json_is_null(v)) {
		if (!need)
			return 1;
		snprintf(msg, msglen, "area %zu: %s is missing", ai + 1, key);
		return ERR_INVALID;
	}
	d = json_is_number(v) ? json_number_value(v) : -1e18;
	if (d != floor(d) || d < (double)lo || d > (double)hi) {
		snprintf(msg, msglen, "area %zu: %s must be a whole number from %ld to %ld", ai + 1, key, lo, hi);
		return ERR_INVALID;
	}
	*out = (long)d;
	return 0;
}

static int text_ok(const char *s)
{
	size_t n = strlen(s), i;

	if (n == 0 || n > NEEDLE_EDIT_TEXT_MAX)
		return 0;
	for (i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return 0;
	return 1;
}

static int norm_area(const json_t *a, size_t ai, int sw, int sh, json_t *into, int *kind, bool *click, char *msg,
		     size_t msglen)
{
	static const char *const types[] = { "match", "exclude", "ocr" };
	const json_t *t = json_object_get(a, "type"), *cp = json_object_get(a, "click_point");
	struct jbuild ab = JBUILD_INIT;
	long x, y, w, h, v;
	json_t *o = NULL;
	double m;
	int rc, k;

	if (!json_is_object(a)) {
		snprintf(msg, msglen, "area %zu must be an object", ai + 1);
		return ERR_INVALID;
	}
	if ((rc = int_field(a, "xpos", 0, sw - 1, true, &x, ai, msg, msglen)) ||
	    (rc = int_field(a, "ypos", 0, sh - 1, true, &y, ai, msg, msglen)) ||
	    (rc = int_field(a, "width", 1, sw, true, &w, ai, msg, msglen)) ||
	    (rc = int_field(a, "height", 1, sh, true, &h, ai, msg, msglen)))
		return rc;
	if (x + w > sw || y + h > sh) {
		snprintf(msg, msglen, "area %zu (%ld,%ld %ldx%ld) does not lie inside the %dx%d screenshot", ai + 1, x,
			 y, w, h, sw, sh);
		return ERR_INVALID;
	}
	for (k = 0; k < 3; k++)
		if (t && json_is_string(t) && !strcmp(json_string_value(t), types[k]))
			break;
	if (t && k == 3) {
		snprintf(msg, msglen, "area %zu: type must be match, exclude or ocr", ai + 1);
		return ERR_INVALID;
	}
	if (!t)
		k = 0;
	*kind = k;
	if (!(o = json_object()))
		return ERR_NOMEM;
	jbuild_set(&ab, o, "xpos", json_integer(x));
	jbuild_set(&ab, o, "ypos", json_integer(y));
	jbuild_set(&ab, o, "width", json_integer(w));
	jbuild_set(&ab, o, "height", json_integer(h));
	jbuild_set(&ab, o, "type", json_string(types[k]));
	v = json_object_get(a, "match") ? 0 : -1;
	if (v == 0) {
		const json_t *jm = json_object_get(a, "match");
		m = json_is_number(jm) ? json_number_value(jm) : -1;
		if (!(m > 0 && m <= 100)) {
			snprintf(msg, msglen, "area %zu: match must be a percentage above 0 up to 100", ai + 1);
			rc = ERR_INVALID;
			goto out;
		}
		if (m != 96.0)
			jbuild_set(&ab, o, "match", m == floor(m) ? json_integer((json_int_t)m) : json_real(m));
	}
	rc = int_field(a, "margin", 1, 10000, false, &v, ai, msg, msglen);
	if (rc < 0)
		goto out;
	if (rc == 0 && v != 50)
		jbuild_set(&ab, o, "margin", json_integer(v));
	rc = 0;
	if (cp && !json_is_null(cp)) {
		long cx, cy;
		if (*click) {
			snprintf(msg, msglen, "only one area may have a click point");
			rc = ERR_INVALID;
			goto out;
		}
		*click = true;
		if (json_is_string(cp) && !strcmp(json_string_value(cp), "center")) {
			jbuild_set(&ab, o, "click_point", json_string("center"));
		} else if (json_is_object(cp)) {
			/* needle.pm rejects a click point at 0 (its check is "true"). */
			if ((rc = int_field(cp, "xpos", 1, w, true, &cx, ai, msg, msglen)) ||
			    (rc = int_field(cp, "ypos", 1, h, true, &cy, ai, msg, msglen))) {
				snprintf(msg, msglen, "area %zu: the click point must lie inside the area, away from its edge at 0",
					 ai + 1);
				goto out;
			}
			jbuild_set(&ab, o, "click_point", json_pack("{s:I,s:I}", "xpos", (json_int_t)cx, "ypos",
									(json_int_t)cy));
		} else {
			snprintf(msg, msglen, "area %zu: click_point must be {xpos, ypos} or \"center\"", ai + 1);
			rc = ERR_INVALID;
			goto out;
		}
	}
	rc = jbuild_failed(&ab) || json_array_append(into, o) ? ERR_NOMEM : 0;
out:
	json_decref(o);
	return rc;
}

static int norm_props(const json_t *v, json_t *into, char *msg, size_t msglen)
{
	const json_t *p;
	size_t i;

	if (!v || json_is_null(v))
		return 0;
	if (!json_is_array(v) || json_array_size(v) > NEEDLE_EDIT_MAX_TAGS) {
		snprintf(msg, msglen, "properties must be an array of at most %d entries", NEEDLE_EDIT_MAX_TAGS);
		return ERR_INVALID;
	}
	json_array_foreach(v, i, p) {
		const json_t *pn = json_is_object(p) ? json_object_get(p, "name") : p;
		const json_t *pv = json_is_object(p) ? json_object_get(p, "value") : NULL;
		json_t *o;
		if (!json_is_string(pn) || !text_ok(json_string_value(pn)) ||
		    (pv && !json_is_null(pv) && (!json_is_string(pv) || strlen(json_string_value(pv)) > NEEDLE_EDIT_TEXT_MAX ||
						 (*json_string_value(pv) && !text_ok(json_string_value(pv)))))) {
			snprintf(msg, msglen, "properties: entry %zu needs a name (and a text value) without control characters",
				 i + 1);
			return ERR_INVALID;
		}
		o = json_pack("{s:s}", "name", json_string_value(pn));
		if (o && pv && json_is_string(pv) && *json_string_value(pv) &&
		    json_object_set_new(o, "value", json_string(json_string_value(pv)))) {
			json_decref(o);
			return ERR_NOMEM;
		}
		if (!o || json_array_append_new(into, o))
			return ERR_NOMEM;
	}
	return 0;
}

int needle_edit_normalise(const json_t *draft, int scr_w, int scr_h, bool for_save, json_t **out, char *msg,
			  size_t msglen)
{
	const json_t *areas = json_object_get(draft, "area"), *tags = json_object_get(draft, "tags"), *v;
	json_t *o = NULL, *ja, *jt, *jp;
	int rc = 0, kinds[3] = { 0, 0, 0 }, kind;
	bool click = false;
	size_t i;

	*out = NULL;
	if (!json_is_object(draft)) {
		snprintf(msg, msglen, "the needle must be a JSON object");
		return ERR_INVALID;
	}
	if (!json_is_array(areas) || json_array_size(areas) == 0 || json_array_size(areas) > NEEDLE_EDIT_MAX_AREAS) {
		snprintf(msg, msglen, "area must be an array of 1 to %d areas", NEEDLE_EDIT_MAX_AREAS);
		return ERR_INVALID;
	}
	if (tags && !json_is_null(tags) && (!json_is_array(tags) || json_array_size(tags) > NEEDLE_EDIT_MAX_TAGS)) {
		snprintf(msg, msglen, "tags must be an array of at most %d tags", NEEDLE_EDIT_MAX_TAGS);
		return ERR_INVALID;
	}
	o = json_object();
	ja = json_array();
	jt = json_array();
	jp = json_array();
	if (!o || !ja || !jt || !jp) {
		json_decref(ja);
		json_decref(jt);
		json_decref(jp);
		rc = ERR_NOMEM;
		goto out;
	}
	/* The key order of openQA's editor: area, tags, properties ('|', not
	 * '||': each call takes its value, also after one failed). */
	if (json_object_set_new(o, "area", ja) | json_object_set_new(o, "tags", jt) |
	    json_object_set_new(o, "properties", jp)) {
		rc = ERR_NOMEM;
		goto out;
	}
	json_array_foreach(areas, i, v) {
		if ((rc = norm_area(v, i, scr_w, scr_h, ja, &kind, &click, msg, msglen)))
			goto out;
		kinds[kind]++;
	}
	json_array_foreach(tags, i, v) {
		size_t k;
		bool dup = false;
		if (!json_is_string(v) || !text_ok(json_string_value(v)) || strchr(json_string_value(v), ' ')) {
			snprintf(msg, msglen, "tag %zu must be a non-empty text without spaces or control characters", i + 1);
			rc = ERR_INVALID;
			goto out;
		}
		for (k = 0; k < json_array_size(jt); k++)
			dup |= !strcmp(json_string_value(json_array_get(jt, k)), json_string_value(v));
		if (!dup && json_array_append_new(jt, json_string(json_string_value(v)))) {
			rc = ERR_NOMEM;
			goto out;
		}
	}
	if ((rc = norm_props(json_object_get(draft, "properties"), jp, msg, msglen)))
		goto out;
	if (kinds[0] + kinds[2] == 0) {
		snprintf(msg, msglen, "a needle needs at least one match or ocr area");
		rc = ERR_INVALID;
		goto out;
	}
	if (for_save && json_array_size(jt) == 0) {
		snprintf(msg, msglen, "a needle needs at least one tag");
		rc = ERR_INVALID;
		goto out;
	}
	if (for_save && kinds[0] + kinds[1] == 0) {
		snprintf(msg, msglen, "a needle cannot have only ocr areas");
		rc = ERR_INVALID;
		goto out;
	}
out:
	if (rc)
		json_decref(o);
	else
		*out = o;
	return rc;
}

/* ---- the step ---- */

static int read_json(const char *path, size_t limit, json_t **out, char *msg, size_t msglen)
{
	struct buf b;
	json_error_t je;
	bool nomem = false;
	int rc;

	*out = NULL;
	buf_init(&b, limit);
	rc = file_read_all(path, &b);
	if (rc == 0) {
		*out = oom_json_loadb((const char *)b.data, b.len, 0, &je, &nomem);
		if (!*out && nomem) {
			snprintf(msg, msglen, "'%s': %s", path, err_str(ERR_NOMEM));
			rc = ERR_NOMEM;
		} else if (!*out) {
			snprintf(msg, msglen, "'%s': line %d: %s", path, je.line, je.text);
			rc = ERR_PROTO;
		}
	} else {
		snprintf(msg, msglen, "cannot read '%s': %s", path, err_str(rc));
		if (rc == -ENOENT)
			rc = ERR_NOT_FOUND;
	}
	buf_release(&b);
	return rc;
}

/* The step's entry of result-<module>.json (borrowed from *result, which
 * the caller releases). */
static int step_entry(const char *data_dir, int64_t job_id, const char *module, long step, json_t **result,
		      const json_t **entry, char *msg, size_t msglen)
{
	char rel[LIMIT_ARTEFACT_NAME + 32], *path = NULL;
	const json_t *details;
	int rc;

	*result = NULL;
	if (!module || !artefact_name_valid(module, strlen(module)) || strlen(module) > LIMIT_ARTEFACT_NAME - 12) {
		snprintf(msg, msglen, "module name is not valid");
		return ERR_INVALID;
	}
	snprintf(rel, sizeof(rel), "result-%s.json", module);
	if (!(path = artefact_path(data_dir, job_id, rel)))
		return ERR_NOMEM;
	rc = read_json(path, LIMIT_RESULT_JSON, result, msg, msglen);
	free(path);
	if (rc == ERR_NOT_FOUND)
		snprintf(msg, msglen, "job %lld has no module '%s'", (long long)job_id, module);
	if (rc)
		return rc;
	details = json_object_get(*result, "details");
	if (!json_is_array(details) || step < 1 || (size_t)step > json_array_size(details) ||
	    !json_is_object(*entry = json_array_get(details, (size_t)step - 1))) {
		snprintf(msg, msglen, "module '%s' of job %lld has no step %ld", module, (long long)job_id, step);
		return ERR_NOT_FOUND;
	}
	if (!json_is_string(json_object_get(*entry, "screenshot")) ||
	    !artefact_name_valid(json_string_value(json_object_get(*entry, "screenshot")),
				 strlen(json_string_value(json_object_get(*entry, "screenshot"))))) {
		snprintf(msg, msglen, "step %ld of module '%s' has no screenshot", step, module);
		return ERR_NOT_FOUND;
	}
	return 0;
}

static char *needles_dir(const char *data_dir, const char *distri)
{
	char rel[LIMIT_ARTEFACT_NAME + 32];

	snprintf(rel, sizeof(rel), "tests/%s/needles", distri);
	return path_join(data_dir, rel);
}

/* A candidate {name, json, matched, needle, areas} (new), its JSON read
 * from the needles directory when json is a safe relative path. */
static json_t *candidate(struct jbuild *ab, const char *ndir, const char *name, const char *json, bool matched,
			 const json_t *areas)
{
	char msg[256], *sub = NULL, *path = NULL;
	json_t *c = json_pack("{s:s,s:s,s:b,s:O}", "name", name, "json", json, "matched", matched, "areas",
			      areas ? areas : json_null()), *nj = NULL;
	const char *slash = strrchr(json, '/');
	char base[NEEDLE_EDIT_NAME_MAX + 8];
	size_t bl;

	if (!c)
		return NULL;
	/* dir: where a save of the candidate goes (needles/ or its subdirectory). */
	if (!(sub = slash ? strndup(json, (size_t)(slash - json)) : strdup("")))
		jbuild_take(ab, NULL, "dir");
	bl = strlen(slash ? slash + 1 : json);
	if (sub && bl > 5 && bl < sizeof(base) && str_ends_with(json, ".json")) {
		memcpy(base, slash ? slash + 1 : json, bl - 5);
		base[bl - 5] = '\0';
		if (!subdir_check(sub, msg, sizeof(msg)) && !needle_edit_name_check(base, msg, sizeof(msg))) {
			int rc = (path = path_join(ndir, json)) ? read_json(path, LIMIT_NEEDLE_JSON, &nj, msg, sizeof(msg))
							       : ERR_NOMEM;
			if (rc == ERR_NOMEM)
				jbuild_take(ab, NULL, "needle");
			else if (!rc && json_is_object(nj)) {
				jbuild_set(ab, c, "dir", json_string(sub));
				jbuild_set(ab, c, "file_name", json_string(base));
			}
		}
	}
	jbuild_set(ab, c, "needle", nj && json_is_object(nj) ? json_incref(nj) : json_null());
	json_decref(nj);
	free(sub);
	free(path);
	return c;
}

int needle_edit_step(const char *data_dir, int64_t job_id, const char *distri, const char *module, long step,
		     json_t **out, char *msg, size_t msglen)
{
	struct jbuild ab = JBUILD_INIT;
	json_t *result = NULL, *o = NULL, *cands;
	const json_t *e, *v, *tags;
	char *ndir = NULL;
	size_t i;
	int rc;

	*out = NULL;
	if ((rc = step_entry(data_dir, job_id, module, step, &result, &e, msg, msglen)))
		goto out;
	tags = json_object_get(e, "tags");
	o = json_pack("{s:s,s:i,s:s,s:o,s:[]}", "module", module, "step", (int)step, "screenshot",
		      json_string_value(json_object_get(e, "screenshot")), "tags",
		      json_is_array(tags) ? json_deep_copy(tags) : json_array(), "candidates");
	if (!o || !(ndir = distri ? needles_dir(data_dir, distri) : NULL)) {
		rc = ERR_NOMEM;
		goto out;
	}
	cands = json_object_get(o, "candidates");
	/* The matched needle first, then the candidates that failed. */
	if (json_is_string(v = json_object_get(e, "needle")) && json_is_string(json_object_get(e, "json")))
		jbuild_append(&ab, cands, candidate(&ab, ndir, json_string_value(v),
						       json_string_value(json_object_get(e, "json")), true,
						       json_object_get(e, "area")));
	json_array_foreach(json_object_get(e, "needles"), i, v) {
		const json_t *n = json_object_get(v, "name"), *j = json_object_get(v, "json");
		json_t *c;
		if (!json_is_string(n) || !json_is_string(j))
			continue;
		if ((c = candidate(&ab, ndir, json_string_value(n), json_string_value(j), false, json_object_get(v, "area"))))
			jbuild_set(&ab, c, "error", json_incref(json_object_get(v, "error") ? json_object_get(v, "error")
												 : json_null()));
		jbuild_append(&ab, cands, c);
	}
	if (jbuild_failed(&ab)) {
		snprintf(msg, msglen, "%s", err_str(ERR_NOMEM));
		rc = ERR_NOMEM;
	}
out:
	if (rc)
		json_decref(o);
	else
		*out = o;
	json_decref(result);
	free(ndir);
	return rc;
}

int needle_edit_needle_png(const char *data_dir, const char *distri, const char *json, char **path, char *msg,
			   size_t msglen)
{
	char sub[NEEDLE_EDIT_NAME_MAX * 10], base[NEEDLE_EDIT_NAME_MAX + 8], *ndir = NULL;
	const char *slash = json ? strrchr(json, '/') : NULL, *b = slash ? slash + 1 : json;
	size_t bl = b ? strlen(b) : 0;
	int rc = 0;

	*path = NULL;
	if (!json || (slash && (size_t)(slash - json) >= sizeof(sub)) || bl <= 5 || bl - 5 >= sizeof(base) ||
	    !str_ends_with(b, ".json")) {
		snprintf(msg, msglen, "needle file name is not valid");
		return ERR_INVALID;
	}
	memcpy(sub, json, slash ? (size_t)(slash - json) : 0);
	sub[slash ? slash - json : 0] = '\0';
	memcpy(base, b, bl - 5);
	base[bl - 5] = '\0';
	if ((rc = subdir_check(sub, msg, msglen)) || (rc = needle_edit_name_check(base, msg, msglen)))
		return rc;
	memcpy(base + bl - 5, ".png", 5);
	if (!(ndir = needles_dir(data_dir, distri)))
		return ERR_NOMEM;
	{
		char rel[sizeof(sub) + sizeof(base) + 2];
		snprintf(rel, sizeof(rel), "%s%s%s", sub, *sub ? "/" : "", base);
		if (!(*path = path_join(ndir, rel)))
			rc = ERR_NOMEM;
	}
	free(ndir);
	return rc;
}

int needle_edit_step_png(const char *data_dir, int64_t job_id, const char *module, long step, char **path,
			 char *msg, size_t msglen)
{
	json_t *result = NULL;
	const json_t *e;
	int rc;

	*path = NULL;
	if ((rc = step_entry(data_dir, job_id, module, step, &result, &e, msg, msglen)) == 0 &&
	    !(*path = artefact_path(data_dir, job_id, json_string_value(json_object_get(e, "screenshot")))))
		rc = ERR_NOMEM;
	json_decref(result);
	return rc;
}

/* ---- the screenshot cache and the live match ---- */

struct needle_edit_shot {
	char *path;
	struct image *img;
	struct match_screen *ms;   /* stands for a fresh tinycv image on each match */
	pthread_mutex_t lock;      /* one match at a time on ms */
	int users;                 /* under the cache's lock */
	uint64_t used;
};

static void shot_free(struct needle_edit_shot *s)
{
	if (!s)
		return;
	match_screen_free(s->ms);
	image_free(s->img);
	pthread_mutex_destroy(&s->lock);
	free(s->path);
	free(s);
}

void needle_edit_cache_init(struct needle_edit_cache *c)
{
	memset(c, 0, sizeof(*c));
	pthread_mutex_init(&c->lock, NULL);
}

void needle_edit_cache_release(struct needle_edit_cache *c)
{
	size_t i;

	for (i = 0; i < NEEDLE_EDIT_CACHE_N; i++)
		shot_free(c->shots[i]);
	pthread_mutex_destroy(&c->lock);
	memset(c, 0, sizeof(*c));
}

/* The cached shot of path with one more user (release with shot_put),
 * decoding it on a miss outside the cache's lock. */
static int shot_get(struct needle_edit_cache *c, const char *path, struct needle_edit_shot **out, bool *hit,
		    char *msg, size_t msglen)
{
	struct needle_edit_shot *s = NULL, **slot = NULL;
	size_t i;
	int rc;

	*out = NULL;
	pthread_mutex_lock(&c->lock);
	for (i = 0; i < NEEDLE_EDIT_CACHE_N; i++) {
		if (c->shots[i] && !strcmp(c->shots[i]->path, path)) {
			s = c->shots[i];
			s->users++;
			s->used = ++c->tick;
			c->hits++;
			break;
		}
	}
	pthread_mutex_unlock(&c->lock);
	*hit = s != NULL;
	if (s) {
		*out = s;
		return 0;
	}
	if (!(s = calloc(1, sizeof(*s))) || !(s->path = strdup(path))) {
		free(s);
		return ERR_NOMEM;
	}
	pthread_mutex_init(&s->lock, NULL);
	if ((rc = image_load_png(path, &s->img, msg, msglen)) || !(s->ms = match_screen_new(s->img))) {
		shot_free(s);
		return rc ? rc : ERR_NOMEM;
	}
	s->users = 1;
	pthread_mutex_lock(&c->lock);
	c->misses++;
	s->used = ++c->tick;
	/* An empty slot, else the least recently used one nobody is using;
	 * when all are in use this shot is not kept. */
	for (i = 0; i < NEEDLE_EDIT_CACHE_N; i++) {
		struct needle_edit_shot **p = &c->shots[i];
		if (!*p) {
			slot = p;
			break;
		}
		if ((*p)->users == 0 && (!slot || (*p)->used < (*slot)->used))
			slot = p;
	}
	if (slot) {
		shot_free(*slot);
		*slot = s;
	} else {
		s->users = -1; /* not in the cache: freed by shot_put */
	}
	pthread_mutex_unlock(&c->lock);
	*out = s;
	return 0;
}

static void shot_put(struct needle_edit_cache *c, struct needle_edit_shot *s)
{
	if (s->users < 0) {
		shot_free(s);
		return;
	}
	pthread_mutex_lock(&c->lock);
	s->users--;
	pthread_mutex_unlock(&c->lock);
}

int needle_edit_shot_size(struct needle_edit_cache *c, const char *png_path, int *w, int *h, char *msg,
			  size_t msglen)
{
	struct needle_edit_shot *s;
	bool hit;
	int rc = shot_get(c, png_path, &s, &hit, msg, msglen);

	if (rc)
		return rc;
	*w = s->img->w;
	*h = s->img->h;
	shot_put(c, s);
	return 0;
}

/* os-autoinst's overall similarity of a result (openQA's map_error_to_avg
 * before rounding): percent from the mean squared error. */
static double overall_percent(double error)
{
	return (1.0 - sqrt(error > 0 ? error : 0)) * 100.0;
}

static double round2(double v)
{
	return floor(v * 100.0 + 0.5) / 100.0;
}

int needle_edit_match(struct needle_edit_cache *c, const char *png_path, const char *image_path,
		      const json_t *draft, json_t **out, char *msg, size_t msglen)
{
	struct jbuild ab = JBUILD_INIT;
	struct needle_edit_shot *s = NULL, *ns = NULL;
	struct match_result res = { 0 };
	struct needle *n = NULL;
	struct image *img = NULL;
	json_t *norm = NULL, *o = NULL, *areas;
	char *text = NULL;
	double t0 = time_mono();
	size_t i, k;
	bool hit = false, hit2 = false;
	int rc;

	*out = NULL;
	if ((rc = shot_get(c, png_path, &s, &hit, msg, msglen)))
		return rc;
	if ((rc = needle_edit_normalise(draft, s->img->w, s->img->h, false, &norm, msg, msglen)))
		goto out;
	/* Through the runner's own parser: the draft means what the saved
	 * needle will mean. */
	if (!(text = json_dumps(norm, JSON_COMPACT | JSON_PRESERVE_ORDER))) {
		rc = ERR_NOMEM;
		goto out;
	}
	if ((rc = needle_parse(text, strlen(text), "draft.json", &n, msg, msglen)))
		goto out;
	if (image_path && strcmp(image_path, png_path) &&
	    (rc = shot_get(c, image_path, &ns, &hit2, msg, msglen)))
		goto out;
	if (!(img = image_clone(ns ? ns->img : s->img))) {
		rc = ERR_NOMEM;
		goto out;
	}
	needle_image_adopt(n, img);
	pthread_mutex_lock(&s->lock);
	match_screen_reset(s->ms, s->img);
	rc = match_needle_err(s->ms, n, MATCH_RATIO_MARGIN, 0.0, &res, msg, msglen);
	pthread_mutex_unlock(&s->lock);
	if (rc)
		goto out;
	if (!(o = json_pack("{s:b,s:f,s:[]}", "match", res.ok, "similarity", round2(overall_percent(res.error)),
			    "areas"))) {
		rc = ERR_NOMEM;
		goto out;
	}
	areas = json_object_get(o, "areas");
	/* res.areas are the match areas in order: find each one's index. */
	for (i = 0, k = 0; i < n->nareas && k < res.nareas; i++) {
		const struct match_area_result *a = &res.areas[k];
		if (n->areas[i].type != NEEDLE_AREA_MATCH)
			continue;
		jbuild_append(&ab, areas, json_pack("{s:I,s:i,s:i,s:i,s:i,s:f,s:f,s:s}", "index", (json_int_t)i,
						       "x", a->x, "y", a->y, "w", a->w, "h", a->h, "similarity",
						       round2(a->similarity * 100.0), "required", n->areas[i].match,
						       "result", a->ok ? "ok" : "fail"));
		k++;
	}
	jbuild_set(&ab, o, "cached", json_boolean(hit));
	jbuild_set(&ab, o, "ms", json_real(round2((time_mono() - t0) * 1000.0)));
	if (jbuild_failed(&ab)) {
		snprintf(msg, msglen, "%s", err_str(ERR_NOMEM));
		rc = ERR_NOMEM;
		goto out;
	}
	*out = o;
	o = NULL;
out:
	match_result_release(&res);
	needle_free(n);
	json_decref(norm);
	json_decref(o);
	free(text);
	if (ns)
		shot_put(c, ns);
	shot_put(c, s);
	return rc;
}

/* ---- the save ---- */

/* Run git with args in dir; 0 when it exited 0 (its output in out, may
 * be NULL), else ERR_IO with its output in msg. */
static int git(const char *dir, const char *const *args, size_t nargs, struct buf *out, char *msg, size_t msglen)
{
	const char *argv[24];
	struct buf b;
	size_t n = 0, i;
	int rc, status = 0;

	if (nargs + 4 > sizeof(argv) / sizeof(argv[0]))
		return ERR_INVALID;
	argv[n++] = "git";
	argv[n++] = "-C";
	argv[n++] = dir;
	for (i = 0; i < nargs; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	buf_init(&b, 16384);
	rc = proc_run((char *const *)argv, NEEDLE_EDIT_GIT_MS, &status, &b);
	if (rc == 0 && !(WIFEXITED(status) && WEXITSTATUS(status) == 0))
		rc = ERR_IO;
	if (rc) {
		size_t l = b.len;
		while (l && (b.data[l - 1] == '\n' || b.data[l - 1] == ' '))
			l--;
		snprintf(msg, msglen, "git %s in '%s' failed: %.*s", args[0], dir, (int)(l > 400 ? 400 : l),
			 b.data ? (const char *)b.data : "");
	} else if (out) {
		buf_append(out, b.data ? (const void *)b.data : "", b.len);
	}
	buf_release(&b);
	return rc;
}

/* The top of the git repository holding dir when that top is dir itself
 * or top_allowed (compared as real paths), else NULL: the needles of a
 * data directory that happens to lie in some repository are not
 * committed to it. */
static char *git_top(const char *dir, const char *top_allowed)
{
	static const char *const args[] = { "rev-parse", "--show-toplevel" };
	char msg[512], *top = NULL, *rdir = realpath(dir, NULL), *rallow = realpath(top_allowed, NULL);
	struct buf b;

	buf_init(&b, 8192);
	if (rdir && rallow && git(dir, args, 2, &b, msg, sizeof(msg)) == 0 && buf_append(&b, "", 1) == 0) {
		char *t = (char *)b.data, *rt;
		t[strcspn(t, "\n")] = '\0';
		rt = realpath(t, NULL);
		if (rt && (!strcmp(rt, rdir) || !strcmp(rt, rallow)))
			top = rt;
		else
			free(rt);
	}
	buf_release(&b);
	free(rdir);
	free(rallow);
	return top;
}

/* Copy the file src to dst atomically. */
static int copy_file(const char *src, const char *dst)
{
	struct buf b;
	int rc;

	buf_init(&b, LIMIT_PNG_FILE);
	rc = file_read_all(src, &b);
	if (rc == 0)
		rc = file_write_all(dst, b.data ? (const void *)b.data : "", b.len);
	buf_release(&b);
	return rc;
}

/* Commit NAME.json and NAME.png of dir (inside a repository) with the
 * signed-in user as author; the commit's hash into o's "commit". */
static int commit(const struct needle_edit_save *s, const char *dir, json_t *o, char *msg, size_t msglen)
{
	char author[512], text[NEEDLE_EDIT_TEXT_MAX + 512], jname[NEEDLE_EDIT_NAME_MAX + 8], pname[sizeof(jname)];
	const char *add[] = { "add", "--", jname, pname };
	const char *ci[] = { "-c", "user.name=vigil", "-c", "user.email=vigil@localhost", "commit", "-q",
			     "--no-verify", author, "-m", text, "--", jname, pname };
	const char *same[] = { "diff", "--cached", "--quiet", "--", jname, pname };
	static const char *const head[] = { "rev-parse", "HEAD" };
	struct buf b;
	int rc;

	buf_init(&b, 256);
	snprintf(jname, sizeof(jname), "%s.json", s->name);
	snprintf(pname, sizeof(pname), "%s.png", s->name);
	snprintf(author, sizeof(author), "--author=%s", s->author && *s->author ? s->author : "vigil <vigil@localhost>");
	if (s->message && *s->message)
		snprintf(text, sizeof(text), "%s", s->message);
	else
		snprintf(text, sizeof(text), "%s for %s", s->name, s->job_name ? s->job_name : "a job");
	if ((rc = git(dir, add, 4, NULL, msg, msglen)))
		goto out;
	/* The same bytes saved again: nothing to commit (git would fail). */
	if (git(dir, same, 6, NULL, msg, msglen) == 0)
		goto out;
	if ((rc = git(dir, ci, 13, NULL, msg, msglen)) ||
	    (rc = git(dir, head, 2, &b, msg, msglen)) || (rc = buf_append(&b, "", 1)))
		goto out;
	b.data[strcspn((char *)b.data, "\n")] = '\0';
	/* committed, but an answer without its hash would say it was not: 503 */
	if (json_object_set_new(o, "commit", json_string((char *)b.data))) {
		snprintf(msg, msglen, "%s", err_str(ERR_NOMEM));
		rc = ERR_NOMEM;
	}
out:
	buf_release(&b);
	return rc;
}

int needle_edit_save(const struct needle_edit_save *s, json_t **out, char *msg, size_t msglen)
{
	char *ndir = NULL, *dir = NULL, *droot = NULL, *jpath = NULL, *ppath = NULL, *top = NULL, *text = NULL;
	char jrel[NEEDLE_EDIT_NAME_MAX * 10 + 16], prel[sizeof(jrel)], e[512], rel[LIMIT_ARTEFACT_NAME + 16];
	const char *sub = s->subdir ? s->subdir : "";
	struct needle *loaded = NULL;
	json_t *norm = NULL, *o = NULL;
	bool replaced;
	int rc, w = 0, h = 0;

	*out = NULL;
	if (!s->distri || !artefact_name_valid(s->distri, strlen(s->distri))) {
		snprintf(msg, msglen, "the job has no valid DISTRI");
		return ERR_INVALID;
	}
	if ((rc = needle_edit_name_check(s->name, msg, msglen)) || (rc = subdir_check(sub, msg, msglen)))
		return rc;
	if ((rc = image_png_info(s->png_path, &w, &h, e, sizeof(e)))) {
		snprintf(msg, msglen, "the step's screenshot: %s", e);
		return rc == -ENOENT ? ERR_NOT_FOUND : rc;
	}
	if ((rc = needle_edit_normalise(s->draft, w, h, true, &norm, msg, msglen)))
		return rc;
	snprintf(rel, sizeof(rel), "tests/%s", s->distri);
	snprintf(jrel, sizeof(jrel), "%s%s%s.json", sub, *sub ? "/" : "", s->name);
	snprintf(prel, sizeof(prel), "%s%s%s.png", sub, *sub ? "/" : "", s->name);
	droot = path_join(s->data_dir, rel);
	ndir = needles_dir(s->data_dir, s->distri);
	dir = *sub ? path_join(ndir, sub) : (ndir ? strdup(ndir) : NULL);
	jpath = ndir ? path_join(ndir, jrel) : NULL;
	ppath = ndir ? path_join(ndir, prel) : NULL;
	text = json_dumps(norm, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	if (!droot || !ndir || !dir || !jpath || !ppath || !text) {
		rc = ERR_NOMEM;
		goto out;
	}
	if (!file_is_dir(droot)) {
		snprintf(msg, msglen, "distribution '%s' is not on this server", s->distri);
		rc = ERR_NOT_FOUND;
		goto out;
	}
	if (!*sub && !file_is_dir(ndir) && (rc = file_mkdir_p(ndir, 0755))) {
		snprintf(msg, msglen, "cannot make '%s': %s", ndir, err_str(rc));
		goto out;
	}
	if (!file_is_dir(dir)) {
		snprintf(msg, msglen, "needle directory '%s' does not exist", sub);
		rc = ERR_NOT_FOUND;
		goto out;
	}
	replaced = file_exists(jpath) || file_exists(ppath);
	if (replaced && !s->overwrite) {
		snprintf(msg, msglen, "needle '%s' exists already", jrel);
		rc = ERR_BADSTATE;
		goto out;
	}
	/* The PNG first: a json without its png would be a broken needle. */
	if ((rc = copy_file(s->png_path, ppath))) {
		snprintf(msg, msglen, "cannot write '%s': %s", prel, err_str(rc));
		goto out;
	}
	{
		size_t l = strlen(text);
		text[l] = '\n';
		rc = file_write_all(jpath, text, l + 1);
		text[l] = '\0';
	}
	if (rc) {
		snprintf(msg, msglen, "cannot write '%s': %s", jrel, err_str(rc));
		goto out;
	}
	/* What the runner will make of it. */
	if ((rc = needle_load(ndir, jrel, &loaded, e, sizeof(e)))) {
		snprintf(msg, msglen, "the saved needle does not load: %s", e);
		rc = ERR_IO;
		goto out;
	}
	if (!(o = json_pack("{s:s,s:s,s:s,s:b,s:n}", "name", s->name, "json", jrel, "png", prel, "replaced", replaced,
			    "commit"))) {
		rc = ERR_NOMEM;
		goto out;
	}
	if ((top = git_top(dir, droot)) && (rc = commit(s, dir, o, msg, msglen)))
		goto out;
	*out = o;
	o = NULL;
out:
	json_decref(o);
	json_decref(norm);
	needle_free(loaded);
	free(text);
	free(droot);
	free(ndir);
	free(dir);
	free(jpath);
	free(ppath);
	free(top);
	return rc;
}
