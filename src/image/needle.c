/* SPDX-License-Identifier: MIT */
/* needle.c - openQA needle files: JSON parsing with needle.pm's defaults
 * (Perl truthiness, numbers as strings), lazy PNG loading with exclude areas
 * painted green, recursive directory loading and the tag index. Every field
 * of a needle file is untrusted: errors name the file and the field. */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <jansson.h>
#include "image/needle.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/file.h"
#include "util/jsonv.h"
#include "util/limits.h"
#include "util/oom.h"
#include "util/path.h"
#include "util/str.h"
#include "util/banned.h" /* last: after every system header */

#define NEEDLE_MAX_DEPTH 64

void needle_free(struct needle *n)
{
	size_t i;

	if (!n)
		return;
	if (n->prep && n->prep_free)
		n->prep_free(n->prep);
	free(n->name);
	free(n->file);
	free(n->json_path);
	free(n->png_path);
	for (i = 0; i < n->ntags; i++)
		free(n->tags[i]);
	free(n->tags);
	for (i = 0; i < n->nproperties; i++)
		free(n->properties[i]);
	free(n->properties);
	free(n->workaround_value);
	for (i = 0; i < n->nareas; i++)
		free(n->areas[i].click_id);
	free(n->areas);
	image_free(n->img);
	free(n->img_err);
	free(n);
}

/* Error context: "needle 'FILE': " + the rest. */
struct perr {
	char *buf;
	size_t len;
	const char *file;
};

static int fail(struct perr *pe, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(struct perr *pe, const char *fmt, ...)
{
	va_list ap;
	int k;

	if (!pe->buf || pe->len == 0)
		return ERR_PROTO;
	k = snprintf(pe->buf, pe->len, "needle '%s': ", pe->file);
	if (k < 0 || (size_t)k >= pe->len)
		return ERR_PROTO;
	va_start(ap, fmt);
	vsnprintf(pe->buf + k, pe->len - (size_t)k, fmt, ap);
	va_end(ap);
	return ERR_PROTO;
}

/* A JSON value read the way Perl numifies it. Returns 1 and *out for a
 * number or a numeric string, 0 for absent/null, -1 for anything else.
 * *truthy gets Perl truthiness ("0" and "" are false, "0.0" is true). */
static int perl_num(const json_t *v, double *out, int *truthy)
{
	double d;

	*out = 0;
	*truthy = 0;
	if (!v || json_is_null(v))
		return 0;
	if (json_is_integer(v)) {
		*out = (double)json_integer_value(v);
		*truthy = *out != 0;
		return 1;
	}
	if (json_is_real(v)) {
		*out = json_real_value(v);
		*truthy = *out != 0;
		return 1;
	}
	if (json_is_string(v)) {
		const char *s = json_string_value(v);
		if (!*s)
			return -1;
		if (str_to_double(s, &d) || !isfinite(d))
			return -1;
		*out = d;
		*truthy = strcmp(s, "0") != 0;
		return 1;
	}
	return -1;
}

/* An integer coordinate as the XS layer gets it (truncated toward zero). */
static int area_int(struct perr *pe, const json_t *area, size_t ai, const char *key,
		    int required, int *out)
{
	const json_t *v = json_object_get(area, key);
	double d;
	int t, r = perl_num(v, &d, &t);

	if (r < 0)
		return fail(pe, "area %zu: %s must be a number, not %s", ai, key, jsonv_kind(v));
	if (r == 0 && required)
		return fail(pe, "area %zu: %s is missing", ai, key);
	if (d > 1e8 || d < -1e8)
		return fail(pe, "area %zu: %s is out of range", ai, key);
	*out = (int)d;
	return 0;
}

static int parse_click_point(struct perr *pe, const json_t *cp, size_t ai, struct needle_area *a)
{
	double d;
	int t, r;

	if (json_is_string(cp)) {
		if (strcmp(json_string_value(cp), "center"))
			return fail(pe, "area %zu: click_point: invalid value '%s' (want \"center\" or {xpos,ypos})",
				    ai, json_string_value(cp));
		a->has_click_point = 1;
		a->click_center = 1;
		return 0;
	}
	if (!json_is_object(cp))
		return fail(pe, "area %zu: click_point must be \"center\" or an object, not %s", ai, jsonv_kind(cp));
	/* needle.pm's is_click_point_valid: xpos and ypos must be truthy. */
	r = perl_num(json_object_get(cp, "xpos"), &d, &t);
	if (r <= 0 || !t)
		return fail(pe, "area %zu: click_point: xpos missing, zero or not a number", ai);
	a->click_x = (int)d;
	r = perl_num(json_object_get(cp, "ypos"), &d, &t);
	if (r <= 0 || !t)
		return fail(pe, "area %zu: click_point: ypos missing, zero or not a number", ai);
	a->click_y = (int)d;
	cp = json_object_get(cp, "id");
	if (cp && !json_is_null(cp)) {
		if (!json_is_string(cp))
			return fail(pe, "area %zu: click_point: id must be a string, not %s", ai, jsonv_kind(cp));
		a->click_id = strdup(json_string_value(cp));
		if (!a->click_id)
			return ERR_NOMEM;
	}
	a->has_click_point = 1;
	return 0;
}

static int parse_area(struct perr *pe, const json_t *ja, size_t ai, struct needle_area *a)
{
	const json_t *v;
	double d;
	int t, r, rc;

	if (!json_is_object(ja))
		return fail(pe, "area %zu: must be an object, not %s", ai, jsonv_kind(ja));
	if ((rc = area_int(pe, ja, ai, "xpos", 1, &a->x)) || (rc = area_int(pe, ja, ai, "ypos", 1, &a->y)) ||
	    (rc = area_int(pe, ja, ai, "width", 1, &a->w)) || (rc = area_int(pe, ja, ai, "height", 1, &a->h)))
		return rc;
	if (a->w <= 0 || a->h <= 0)
		return fail(pe, "area %zu: width and height must be positive (%dx%d)", ai, a->w, a->h);
	v = json_object_get(ja, "type");
	a->type = NEEDLE_AREA_MATCH;
	if (v && !json_is_null(v)) {
		const char *s;
		if (!json_is_string(v))
			return fail(pe, "area %zu: type must be a string, not %s", ai, jsonv_kind(v));
		s = json_string_value(v);
		if (!strcmp(s, "match") || !*s)
			a->type = NEEDLE_AREA_MATCH;
		else if (!strcmp(s, "exclude"))
			a->type = NEEDLE_AREA_EXCLUDE;
		else if (!strcmp(s, "ocr"))
			a->type = NEEDLE_AREA_OCR;
		else
			return fail(pe, "area %zu: unknown type '%s'", ai, s);
	}
	r = perl_num(json_object_get(ja, "match"), &d, &t);
	if (r < 0)
		return fail(pe, "area %zu: match must be a number, not %s", ai,
			    jsonv_kind(json_object_get(ja, "match")));
	/* A level above 100 % can never be reached, and one below 0 is no
	 * level: both are mistakes a needle could otherwise carry silently. */
	if (t && (d < 0 || d > 100))
		return fail(pe, "area %zu: match %g is not a percentage (0 to 100)", ai, d);
	a->match = t ? d : NEEDLE_DEFAULT_MATCH;
	r = perl_num(json_object_get(ja, "margin"), &d, &t);
	if (r < 0)
		return fail(pe, "area %zu: margin must be a number, not %s", ai,
			    jsonv_kind(json_object_get(ja, "margin")));
	if (t && (d < 0 || d > 1e6))
		return fail(pe, "area %zu: margin %g is out of range", ai, d);
	a->margin = t ? d : NEEDLE_DEFAULT_MARGIN;
	v = json_object_get(ja, "click_point");
	/* Perl: `if (my $cp = $area->{click_point})` - a false value means none. */
	if (v && !json_is_null(v) && !json_is_false(v) &&
	    !(json_is_string(v) && (!*json_string_value(v) || !strcmp(json_string_value(v), "0"))) &&
	    !(json_is_number(v) && json_number_value(v) == 0))
		return parse_click_point(pe, v, ai, a);
	return 0;
}

static char *name_from_label(const char *label)
{
	const char *b = strrchr(label, '/');
	b = b ? b + 1 : label;
	return path_stem(b, ".json");
}

static int parse_tags(struct perr *pe, const json_t *root, struct needle *n)
{
	const json_t *v = json_object_get(root, "tags");
	size_t i, j, cnt;

	if (!v || json_is_null(v))
		return 0;
	if (!json_is_array(v))
		return fail(pe, "tags must be an array of strings, not %s", jsonv_kind(v));
	cnt = json_array_size(v);
	if (cnt > NEEDLE_MAX_TAGS)
		return fail(pe, "tags: more than %d tags", NEEDLE_MAX_TAGS);
	n->tags = calloc(cnt ? cnt : 1, sizeof(char *));
	if (!n->tags)
		return ERR_NOMEM;
	for (i = 0; i < cnt; i++) {
		const json_t *t = json_array_get(v, i);
		if (!json_is_string(t))
			return fail(pe, "tags: entry %zu must be a string, not %s", i + 1, jsonv_kind(t));
		/* needle.pm registers a duplicate tag once. */
		for (j = 0; j < n->ntags; j++)
			if (!strcmp(n->tags[j], json_string_value(t)))
				break;
		if (j < n->ntags)
			continue;
		n->tags[n->ntags] = strdup(json_string_value(t));
		if (!n->tags[n->ntags])
			return ERR_NOMEM;
		n->ntags++;
	}
	return 0;
}

static int parse_properties(struct perr *pe, const json_t *root, struct needle *n)
{
	const json_t *v = json_object_get(root, "properties");
	size_t i, cnt;

	if (!v || json_is_null(v))
		return 0;
	if (!json_is_array(v))
		return fail(pe, "properties must be an array, not %s", jsonv_kind(v));
	cnt = json_array_size(v);
	if (cnt > NEEDLE_MAX_TAGS)
		return fail(pe, "properties: too many entries");
	n->properties = calloc(cnt ? cnt : 1, sizeof(char *));
	if (!n->properties)
		return ERR_NOMEM;
	for (i = 0; i < cnt; i++) {
		const json_t *p = json_array_get(v, i), *pn, *pv = NULL;
		const char *name;
		if (json_is_string(p)) {
			name = json_string_value(p);
		} else if (json_is_object(p)) {
			pn = json_object_get(p, "name");
			if (!json_is_string(pn))
				return fail(pe, "properties: entry %zu: name must be a string", i + 1);
			name = json_string_value(pn);
			pv = json_object_get(p, "value");
		} else {
			return fail(pe, "properties: entry %zu must be a string or {name,value}, not %s",
				    i + 1, jsonv_kind(p));
		}
		n->properties[n->nproperties] = strdup(name);
		if (!n->properties[n->nproperties])
			return ERR_NOMEM;
		n->nproperties++;
		if (!strcmp(name, "workaround")) {
			n->workaround = 1;
			if (pv && json_is_string(pv) && !n->workaround_value) {
				n->workaround_value = strdup(json_string_value(pv));
				if (!n->workaround_value)
					return ERR_NOMEM;
			}
		}
	}
	return 0;
}

static int parse_areas(struct perr *pe, const json_t *root, struct needle *n)
{
	const json_t *v = json_object_get(root, "area");
	size_t i, j, cnt;
	int rc, gotmatch = 0, cp_noid = 0, cp_id = 0;

	if (!v || json_is_null(v))
		return fail(pe, "area is missing (a needle needs at least one match area)");
	if (!json_is_array(v))
		return fail(pe, "area must be an array, not %s", jsonv_kind(v));
	cnt = json_array_size(v);
	if (cnt > NEEDLE_MAX_AREAS)
		return fail(pe, "area: more than %d areas", NEEDLE_MAX_AREAS);
	n->areas = calloc(cnt ? cnt : 1, sizeof(*n->areas));
	if (!n->areas)
		return ERR_NOMEM;
	for (i = 0; i < cnt; i++) {
		struct needle_area *a = &n->areas[i];
		rc = parse_area(pe, json_array_get(v, i), i + 1, a);
		n->nareas = i + 1;
		if (rc)
			return rc;
		if (a->type != NEEDLE_AREA_EXCLUDE)
			gotmatch = 1;
		if (!a->has_click_point)
			continue;
		/* needle.pm: one click point without id, or ids on all of them. */
		if (cp_noid || (!a->click_id && cp_id))
			return fail(pe, "area %zu: more than one area with a click point without assigning ids to each", i + 1);
		if (a->click_id) {
			cp_id = 1;
			for (j = 0; j < i; j++)
				if (n->areas[j].click_id && !strcmp(n->areas[j].click_id, a->click_id))
					return fail(pe, "area %zu: click_point: duplicate id '%s' (also in area %zu)",
						    i + 1, a->click_id, j + 1);
		} else {
			cp_noid = 1;
		}
	}
	if (!gotmatch)
		return fail(pe, "area: missing match area (need one of type match or ocr)");
	return 0;
}

int needle_parse(const char *json, size_t len, const char *file_label,
		 struct needle **out, char *err, size_t errlen)
{
	struct perr pe = { err, errlen, file_label };
	struct needle *n = NULL;
	json_t *root = NULL;
	json_error_t je;
	bool nomem;
	int rc;

	*out = NULL;
	if (err && errlen)
		err[0] = '\0';
	if (len > LIMIT_NEEDLE_JSON) {
		fail(&pe, "file is larger than %u bytes", LIMIT_NEEDLE_JSON);
		return ERR_TOO_BIG;
	}
	root = oom_json_loadb(json, len, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &je, &nomem);
	if (nomem) {
		fail(&pe, "out of memory");
		return ERR_NOMEM;
	}
	if (!root)
		return fail(&pe, "broken json at line %d column %d: %s", je.line, je.column, je.text);
	if (!json_is_object(root)) {
		rc = fail(&pe, "top level must be an object, not %s", jsonv_kind(root));
		goto out;
	}
	n = calloc(1, sizeof(*n));
	if (!n) {
		rc = ERR_NOMEM;
		goto out;
	}
	n->file = strdup(file_label);
	n->name = name_from_label(file_label);
	if (!n->file || !n->name) {
		rc = ERR_NOMEM;
		goto out;
	}
	if ((rc = parse_tags(&pe, root, n)) || (rc = parse_properties(&pe, root, n)) ||
	    (rc = parse_areas(&pe, root, n)))
		goto out;
	*out = n;
	n = NULL;
out:
	if (rc == ERR_NOMEM)
		fail(&pe, "out of memory");
	needle_free(n);
	json_decref(root);
	return rc;
}

/* A match or ocr area that does not lie wholly inside the needle's PNG can
 * never match (os-autoinst scores it 0 on every screen): refuse it at load,
 * where the file and the reason are reported once. Exclude areas outside
 * the image are ignored, as os-autoinst's replacerect ignores them. */
static int check_areas(const struct needle *n, int w, int h, const char *rel, char *err, size_t errlen)
{
	size_t i;

	for (i = 0; i < n->nareas; i++) {
		const struct needle_area *a = &n->areas[i];
		if (a->type == NEEDLE_AREA_EXCLUDE)
			continue;
		if (a->x < 0 || a->y < 0 || (long)a->x + a->w > w || (long)a->y + a->h > h) {
			snprintf(err, errlen,
				 "needle '%s': area %zu (xpos %d, ypos %d, %dx%d) lies outside its %dx%d PNG",
				 rel, i + 1, a->x, a->y, a->w, a->h, w, h);
			return ERR_PROTO;
		}
	}
	return 0;
}

int needle_load(const char *dir, const char *rel, struct needle **out, char *err, size_t errlen)
{
	struct needle *n = NULL;
	struct buf b;
	char *json_path = NULL, *png_path = NULL;
	char e[512];
	int rc, w, h;

	*out = NULL;
	buf_init(&b, LIMIT_NEEDLE_JSON);
	json_path = path_join(dir, rel);
	if (!json_path) {
		rc = ERR_NOMEM;
		goto out;
	}
	rc = file_read_all(json_path, &b);
	if (rc) {
		snprintf(err, errlen, "needle '%s': cannot read: %s", rel, err_str(rc));
		goto out;
	}
	rc = needle_parse(b.data, b.len, rel, &n, err, errlen);
	if (rc)
		goto out;
	/* NAME.png beside NAME.json (needle.pm: dirname($json)/$name.png). */
	{
		size_t jl = strlen(json_path);
		png_path = malloc(jl + 5);
		if (!png_path) {
			rc = ERR_NOMEM;
			goto out;
		}
		memcpy(png_path, json_path, jl - 5);
		memcpy(png_path + jl - 5, ".png", 5);
	}
	rc = image_png_info(png_path, &w, &h, e, sizeof(e));
	if (rc) {
		if (rc == -ENOENT)
			snprintf(err, errlen, "needle '%s': png: %s.png is missing", rel, n->name);
		else
			snprintf(err, errlen, "needle '%s': png: %s", rel, e);
		goto out;
	}
	if ((rc = check_areas(n, w, h, rel, err, errlen)))
		goto out;
	n->json_path = json_path;
	n->png_path = png_path;
	json_path = png_path = NULL;
	*out = n;
	n = NULL;
out:
	needle_free(n);
	free(json_path);
	free(png_path);
	buf_release(&b);
	return rc;
}

int needle_image(struct needle *n, const struct image **out, char *err, size_t errlen)
{
	struct image *img = NULL;
	char e[512];
	size_t i;
	int rc;

	*out = NULL;
	if (n->img_state == 1) {
		*out = n->img;
		return 0;
	}
	if (n->img_state < 0) {
		snprintf(err, errlen, "%s", n->img_err ? n->img_err : err_str(n->img_state));
		return n->img_state;
	}
	if (!n->png_path) {
		rc = ERR_NOT_FOUND;
		snprintf(e, sizeof(e), "needle '%s': png: no image file", n->file);
	} else {
		rc = image_load_png(n->png_path, &img, e, sizeof(e));
	}
	if (rc) {
		n->img_state = rc;
		n->img_err = strdup(e);
		snprintf(err, errlen, "%s", e);
		return rc;
	}
	/* As needle.pm's _load_image: exclude areas painted solid green;
	 * out-of-range ones are skipped as replacerect does. */
	for (i = 0; i < n->nareas; i++) {
		const struct needle_area *a = &n->areas[i];
		if (a->type != NEEDLE_AREA_EXCLUDE)
			continue;
		if (a->x < 0 || a->y < 0 || (long)a->x + a->w > img->w || (long)a->y + a->h > img->h)
			continue;
		image_fill_rect(img, a->x, a->y, a->w, a->h, 0, 255, 0);
	}
	n->img = img;
	n->img_state = 1;
	*out = img;
	return 0;
}

int needle_tell_failure(struct needle *n)
{
	if (n->failure_told)
		return 0;
	n->failure_told = 1;
	return 1;
}

void needle_image_drop(struct needle *n)
{
	if (n->img_state != 1)
		return;
	image_free(n->img);
	n->img = NULL;
	n->img_state = 0;
}

int needle_image_adopt(struct needle *n, struct image *img)
{
	size_t i;

	if (!img)
		return ERR_INVALID;
	needle_image_drop(n);
	for (i = 0; i < n->nareas; i++) {
		const struct needle_area *a = &n->areas[i];
		if (a->type == NEEDLE_AREA_EXCLUDE && a->x >= 0 && a->y >= 0 && (long)a->x + a->w <= img->w &&
		    (long)a->y + a->h <= img->h)
			image_fill_rect(img, a->x, a->y, a->w, a->h, 0, 255, 0);
	}
	n->img = img;
	n->img_state = 1;
	return 0;
}

int needle_has_tag(const struct needle *n, const char *tag)
{
	size_t i;

	for (i = 0; i < n->ntags; i++)
		if (!strcmp(n->tags[i], tag))
			return 1;
	return 0;
}

int needle_match_expr(const struct needle *n, const char *expr)
{
	const char *p = expr;
	char tag[512];
	int any = 0;

	for (;;) {
		size_t l;
		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p)
			break;
		l = strcspn(p, " \t");
		if (l >= sizeof(tag))
			return 0;
		memcpy(tag, p, l);
		tag[l] = '\0';
		if (!needle_has_tag(n, tag))
			return 0;
		any = 1;
		p += l;
	}
	return any;
}

/* ---- writing ---- */

int needle_write(const char *dir, const char *name, const struct image *screen,
		 const char *const *tags, size_t ntags,
		 const struct needle_area *areas, size_t nareas,
		 const char *const *properties, size_t nproperties,
		 char *err, size_t errlen)
{
	static const char *const type_names[] = { "match", "exclude", "ocr" };
	json_t *root = NULL, *jt, *ja, *jp;
	char *base = NULL, *jpath = NULL, *ppath = NULL, *text = NULL;
	size_t i, l;
	int rc = 0, gotmatch = 0;

	if (!name || !*name || strchr(name, '/')) {
		snprintf(err, errlen, "needle name '%s' is not a plain file name", name ? name : "");
		return ERR_INVALID;
	}
	if (nareas == 0) {
		snprintf(err, errlen, "needle '%s': at least one area is needed", name);
		return ERR_INVALID;
	}
	for (i = 0; i < nareas; i++) {
		const struct needle_area *a = &areas[i];
		if (a->w <= 0 || a->h <= 0 || a->x < 0 || a->y < 0 ||
		    (long)a->x + a->w > screen->w || (long)a->y + a->h > screen->h) {
			snprintf(err, errlen, "needle '%s': area %zu (%d,%d %dx%d) does not lie inside the %dx%d screenshot",
				 name, i + 1, a->x, a->y, a->w, a->h, screen->w, screen->h);
			return ERR_INVALID;
		}
		if (a->type != NEEDLE_AREA_EXCLUDE)
			gotmatch = 1;
	}
	if (!gotmatch) {
		snprintf(err, errlen, "needle '%s': needs at least one match or ocr area", name);
		return ERR_INVALID;
	}
	root = json_object();
	jt = json_array();
	ja = json_array();
	jp = json_array();
	json_object_set_new(root, "tags", jt);
	json_object_set_new(root, "properties", jp);
	json_object_set_new(root, "area", ja);
	for (i = 0; i < ntags; i++)
		json_array_append_new(jt, json_string(tags[i]));
	for (i = 0; i < nproperties; i++)
		json_array_append_new(jp, json_string(properties[i]));
	for (i = 0; i < nareas; i++) {
		const struct needle_area *a = &areas[i];
		json_t *o = json_object();
		json_object_set_new(o, "xpos", json_integer(a->x));
		json_object_set_new(o, "ypos", json_integer(a->y));
		json_object_set_new(o, "width", json_integer(a->w));
		json_object_set_new(o, "height", json_integer(a->h));
		json_object_set_new(o, "type", json_string(type_names[a->type]));
		if (a->type == NEEDLE_AREA_MATCH) {
			if (a->match > 0 && a->match != NEEDLE_DEFAULT_MATCH)
				json_object_set_new(o, "match", a->match == floor(a->match) ?
						    json_integer((json_int_t)a->match) : json_real(a->match));
			if (a->margin > 0 && a->margin != NEEDLE_DEFAULT_MARGIN)
				json_object_set_new(o, "margin", a->margin == floor(a->margin) ?
						    json_integer((json_int_t)a->margin) : json_real(a->margin));
		}
		if (a->has_click_point) {
			if (a->click_center) {
				json_object_set_new(o, "click_point", json_string("center"));
			} else {
				json_t *cp = json_object();
				json_object_set_new(cp, "xpos", json_integer(a->click_x));
				json_object_set_new(cp, "ypos", json_integer(a->click_y));
				if (a->click_id)
					json_object_set_new(cp, "id", json_string(a->click_id));
				json_object_set_new(o, "click_point", cp);
			}
		}
		json_array_append_new(ja, o);
	}
	text = json_dumps(root, JSON_INDENT(3) | JSON_PRESERVE_ORDER);
	l = strlen(name);
	base = malloc(l + 6);
	if (!text || !base) {
		rc = ERR_NOMEM;
		goto out;
	}
	snprintf(base, l + 6, "%s.json", name);
	jpath = path_join(dir, base);
	snprintf(base, l + 6, "%s.png", name);
	ppath = path_join(dir, base);
	if (!jpath || !ppath) {
		rc = ERR_NOMEM;
		goto out;
	}
	/* PNG first: a json without its png would be a broken needle. */
	rc = image_save_png(screen, ppath);
	if (rc) {
		snprintf(err, errlen, "cannot write '%s': %s", ppath, err_str(rc));
		goto out;
	}
	l = strlen(text);
	text[l] = '\n';
	rc = file_write_all(jpath, text, l + 1);
	text[l] = '\0';
	if (rc)
		snprintf(err, errlen, "cannot write '%s': %s", jpath, err_str(rc));
out:
	json_decref(root);
	free(text);
	free(base);
	free(jpath);
	free(ppath);
	return rc;
}

/* ---- needle sets ---- */

struct loader {
	struct needle_set *set;
	size_t cap;
	needle_warn_fn warn;
	void *ctx;
	dev_t dev[NEEDLE_MAX_DEPTH];
	ino_t ino[NEEDLE_MAX_DEPTH];
	int depth;
};

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void warnf(struct loader *ld, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void warnf(struct loader *ld, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	if (!ld->warn)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	ld->warn(ld->ctx, msg);
}

static int add_needle(struct loader *ld, struct needle *n)
{
	struct needle_set *s = ld->set;
	size_t i;

	/* Last wins on duplicate names, as os-autoinst's %needles. */
	for (i = 0; i < s->n; i++) {
		if (!strcmp(s->needles[i]->name, n->name)) {
			warnf(ld, "needle '%s': replaces '%s' of the same name", n->file, s->needles[i]->file);
			needle_free(s->needles[i]);
			s->needles[i] = n;
			return 0;
		}
	}
	if (s->n == ld->cap) {
		size_t nc = ld->cap ? ld->cap * 2 : 64;
		struct needle **p = realloc(s->needles, nc * sizeof(*p));
		if (!p)
			return ERR_NOMEM;
		s->needles = p;
		ld->cap = nc;
	}
	s->needles[s->n++] = n;
	return 0;
}

static int walk(struct loader *ld, const char *rel)
{
	char *path = NULL, **names = NULL;
	size_t nn = 0, cap = 0, i;
	struct dirent *de;
	struct stat st;
	DIR *d = NULL;
	int rc = 0, k;

	path = *rel ? path_join(ld->set->dir, rel) : strdup(ld->set->dir);
	if (!path)
		return ERR_NOMEM;
	if (stat(path, &st) != 0) {
		rc = -errno;
		goto out;
	}
	for (k = 0; k < ld->depth; k++) {
		if (ld->dev[k] == st.st_dev && ld->ino[k] == st.st_ino) {
			warnf(ld, "needles directory '%s': symlink loop, skipped", path);
			goto out;
		}
	}
	if (ld->depth >= NEEDLE_MAX_DEPTH) {
		warnf(ld, "needles directory '%s': nested too deep, skipped", path);
		goto out;
	}
	d = opendir(path);
	if (!d) {
		rc = -errno;
		goto out;
	}
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.' && (!de->d_name[1] || (de->d_name[1] == '.' && !de->d_name[2])))
			continue;
		if (nn == cap) {
			size_t nc = cap ? cap * 2 : 32;
			char **p = realloc(names, nc * sizeof(*p));
			if (!p) {
				rc = ERR_NOMEM;
				goto out;
			}
			names = p;
			cap = nc;
		}
		names[nn] = strdup(de->d_name);
		if (!names[nn]) {
			rc = ERR_NOMEM;
			goto out;
		}
		nn++;
	}
	closedir(d);
	d = NULL;
	if (nn)
		qsort(names, nn, sizeof(*names), cmp_str);
	ld->dev[ld->depth] = st.st_dev;
	ld->ino[ld->depth] = st.st_ino;
	ld->depth++;
	for (i = 0; i < nn && !rc; i++) {
		char *r = *rel ? path_join(rel, names[i]) : strdup(names[i]);
		char *full = r ? path_join(ld->set->dir, r) : NULL;
		struct stat es;
		if (!r || !full) {
			rc = ERR_NOMEM;
		} else if (stat(full, &es) != 0) {
			/* A dangling symlink: not a needle. */
			if (str_ends_with(names[i], ".json"))
				warnf(ld, "needle '%s': cannot read: %s", r, err_str(-errno));
		} else if (S_ISDIR(es.st_mode)) {
			int wr = walk(ld, r);
			if (wr == ERR_NOMEM)
				rc = wr;
			else if (wr)
				warnf(ld, "needles directory '%s': %s", r, err_str(wr));
		} else if (S_ISREG(es.st_mode) && str_ends_with(names[i], ".json")) {
			struct needle *n = NULL;
			char err[1024];
			int lr = needle_load(ld->set->dir, r, &n, err, sizeof(err));
			if (lr == ERR_NOMEM)
				rc = lr;
			else if (lr)
				warnf(ld, "%s", err);
			else if ((rc = add_needle(ld, n)))
				needle_free(n);
		}
		free(r);
		free(full);
	}
	ld->depth--;
out:
	if (d)
		closedir(d);
	for (i = 0; i < nn; i++)
		free(names[i]);
	free(names);
	free(path);
	return rc;
}

static int cmp_needle(const void *a, const void *b)
{
	return strcmp((*(struct needle *const *)a)->name, (*(struct needle *const *)b)->name);
}

int needle_set_load(struct needle_set *set, const char *dir, needle_warn_fn warn, void *ctx)
{
	struct loader ld;
	int rc;

	memset(set, 0, sizeof(*set));
	memset(&ld, 0, sizeof(ld));
	set->dir = strdup(dir);
	if (!set->dir)
		return ERR_NOMEM;
	ld.set = set;
	ld.warn = warn;
	ld.ctx = ctx;
	rc = walk(&ld, "");
	if (set->n)
		qsort(set->needles, set->n, sizeof(*set->needles), cmp_needle);
	return rc;
}

void needle_set_release(struct needle_set *set)
{
	size_t i;

	if (!set)
		return;
	for (i = 0; i < set->n; i++)
		needle_free(set->needles[i]);
	free(set->needles);
	free(set->dir);
	memset(set, 0, sizeof(*set));
}

size_t needle_set_count(const struct needle_set *set)
{
	return set ? set->n : 0;
}

const struct needle_area *needle_match_area(const struct needle *n, size_t k)
{
	size_t i;

	for (i = 0; i < n->nareas; i++)
		if (n->areas[i].type == NEEDLE_AREA_MATCH && k-- == 0)
			return &n->areas[i];
	return NULL;
}

struct needle *needle_set_get(const struct needle_set *set, const char *name)
{
	size_t lo = 0, hi = set->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(set->needles[mid]->name, name);
		if (!c)
			return set->needles[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

size_t needle_set_find(const struct needle_set *set, const char *const *exprs, size_t nexprs,
		       struct needle ***out)
{
	struct needle **r;
	size_t i, j, k = 0;

	*out = NULL;
	if (!set || set->n == 0 || nexprs == 0)
		return 0;
	r = malloc(set->n * sizeof(*r));
	if (!r)
		return 0;
	/* The set is sorted by unique name, so one pass keeps that order. */
	for (i = 0; i < set->n; i++) {
		for (j = 0; j < nexprs; j++) {
			if (exprs[j] && needle_match_expr(set->needles[i], exprs[j])) {
				r[k++] = set->needles[i];
				break;
			}
		}
	}
	if (k == 0) {
		free(r);
		return 0;
	}
	*out = r;
	return k;
}

int needle_area_parse(const char *spec, struct needle_area *a)
{
	char tmp[128], *p, *parts[6];
	size_t n = 0;
	long v[4];
	int i;

	if (strlen(spec) >= sizeof(tmp))
		return ERR_INVALID;
	memcpy(tmp, spec, strlen(spec) + 1);
	p = tmp;
	while (n < 6) {
		parts[n++] = p;
		p = strchr(p, ',');
		if (!p)
			break;
		*p++ = '\0';
	}
	if (p || n < 4 || n > 5)
		return ERR_INVALID;
	for (i = 0; i < 4; i++)
		if (str_to_long(parts[i], &v[i]) || v[i] < 0 || v[i] > 1000000)
			return ERR_INVALID;
	memset(a, 0, sizeof(*a));
	a->x = (int)v[0];
	a->y = (int)v[1];
	a->w = (int)v[2];
	a->h = (int)v[3];
	a->type = NEEDLE_AREA_MATCH;
	a->match = NEEDLE_DEFAULT_MATCH;
	a->margin = NEEDLE_DEFAULT_MARGIN;
	if (n == 5) {
		if (!strcmp(parts[4], "match"))
			a->type = NEEDLE_AREA_MATCH;
		else if (!strcmp(parts[4], "exclude"))
			a->type = NEEDLE_AREA_EXCLUDE;
		else if (!strcmp(parts[4], "ocr"))
			a->type = NEEDLE_AREA_OCR;
		else
			return ERR_INVALID;
	}
	if (a->w <= 0 || a->h <= 0)
		return ERR_INVALID;
	return 0;
}
