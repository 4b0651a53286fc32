/* SPDX-License-Identifier: MIT */
/* needle.h - openQA needles: NAME.json + NAME.png parsed as os-autoinst's
 * needle.pm reads them, loaded recursively from a needles directory, and
 * indexed by tag. A broken needle is reported (file and field) and skipped,
 * never trusted. Not thread-safe: lazy image and matcher caches. */
#ifndef VIGIL_NEEDLE_H
#define VIGIL_NEEDLE_H

#include <stddef.h>
#include "image/image.h"

#define NEEDLE_DEFAULT_MATCH  96.0  /* percent, os-autoinst's `|| 96` */
#define NEEDLE_DEFAULT_MARGIN 50.0  /* pixels, needle.pm's `|| 50` */
#define NEEDLE_MAX_AREAS      1024
#define NEEDLE_MAX_TAGS       1024

enum needle_area_type {
	NEEDLE_AREA_MATCH,
	NEEDLE_AREA_EXCLUDE,
	NEEDLE_AREA_OCR,
};

struct needle_area {
	int x, y, w, h;              /* in needle image coordinates */
	enum needle_area_type type;
	double match;                /* required similarity in percent (default 96) */
	double margin;               /* pixels (default 50); may be fractional as in Perl */
	int has_click_point;
	int click_center;            /* click_point "center": (w/2, h/2) */
	int click_x, click_y;        /* relative to the area's top-left */
	char *click_id;              /* NULL when the click point has no id */
};

struct needle {
	char *name;        /* basename of the json without ".json" */
	char *file;        /* json path relative to the needles dir */
	char *json_path;   /* full paths */
	char *png_path;
	char **tags;       /* unique, in file order */
	size_t ntags;
	char **properties; /* property names (string or {name,value} form) */
	size_t nproperties;
	int workaround;    /* has the "workaround" property */
	char *workaround_value; /* {name:"workaround", value:...} text, or NULL */
	struct needle_area *areas;
	size_t nareas;
	/* Lazily decoded PNG with exclude areas painted green; see needle_image. */
	struct image *img;
	int img_state;     /* 0 not tried, 1 loaded, negative: error code */
	char *img_err;
	int failure_told;  /* a match failure was logged (needle_tell_failure) */
	/* Matcher cache (prepared areas), owned by match.c. */
	void *prep;
	void (*prep_free)(void *prep);
};

/* Parse needle JSON text. file_label names the file in messages (e.g. the
 * path relative to the needles dir); the needle's name and file are derived
 * from it (basename without ".json"). Paths (json_path/png_path) are left
 * NULL. Returns 0 and a new needle in *out, or ERR_PROTO/ERR_TOO_BIG/ERR_NOMEM
 * with err = "needle 'FILE': FIELD: what is wrong". */
int needle_parse(const char *json, size_t len, const char *file_label,
		 struct needle **out, char *err, size_t errlen);

/* Read DIR/REL (a .json file), parse it and check its PNG (present, a
 * PNG whose chunks are all there: image_png_info) and that every match
 * and ocr area lies inside the PNG. 0 or a negative code with err filled
 * ("needle 'REL': what is wrong"). */
int needle_load(const char *dir, const char *rel, struct needle **out, char *err, size_t errlen);

void needle_free(struct needle *n); /* NULL-safe */

/* The needle's image (decoded once, exclude areas painted (0,255,0)).
 * *out is borrowed, valid until needle_free. 0 or a negative code with err
 * naming the PNG; a failure is remembered and returned again. */
int needle_image(struct needle *n, const struct image **out, char *err, size_t errlen);

/* True the first time it is called for n, false after: a caller that
 * logs why n could not be matched logs it once per needle, not per frame. */
int needle_tell_failure(struct needle *n);

/* Free the cached image (it is decoded again on the next needle_image);
 * the matcher calls this once it has prepared the needle's areas. */
void needle_image_drop(struct needle *n);

/* Give n the image its PNG would hold (takes ownership of img, which
 * must not be NULL): exclude areas are painted as needle_image paints
 * them, and the matcher uses it without a file (the needle editor's draft
 * needle). 0 or ERR_INVALID (img NULL). */
int needle_image_adopt(struct needle *n, struct image *img);

/* Whether the needle carries tag (exact string). */
/* An area as people type it: "X,Y,W,H" or "X,Y,W,H,match|exclude|ocr"
 * (default match, with the default match level and margin), W and H above
 * 0: 0, else ERR_INVALID. */
int needle_area_parse(const char *spec, struct needle_area *a);
int needle_has_tag(const struct needle *n, const char *tag);
/* Whether it carries every space-separated tag of expr (AND). */
int needle_match_expr(const struct needle *n, const char *expr);

/* Write DIR/NAME.json + DIR/NAME.png: the PNG is the whole screenshot, as
 * openQA needles store it. Areas must lie inside the screen (ERR_INVALID and
 * err otherwise); match/margin are written when they differ from the
 * defaults. properties may be NULL. 0 or a negative code. */
int needle_write(const char *dir, const char *name, const struct image *screen,
		 const char *const *tags, size_t ntags,
		 const struct needle_area *areas, size_t nareas,
		 const char *const *properties, size_t nproperties,
		 char *err, size_t errlen);

/* All needles of a directory, sorted by name, names unique. */
struct needle_set {
	struct needle **needles;
	size_t n;
	char *dir;
};

typedef void (*needle_warn_fn)(void *ctx, const char *msg);

/* Load every *.json below dir (recursive, symlinks followed, loops cut),
 * visiting entries in name order; on duplicate names the last one wins, as
 * in os-autoinst. Each broken needle is reported through warn (may be NULL)
 * and skipped. Returns 0, or a negative code when dir itself cannot be read
 * (the set is then valid and empty). Call needle_set_release afterwards in
 * every case. */
int needle_set_load(struct needle_set *set, const char *dir, needle_warn_fn warn, void *ctx);
void needle_set_release(struct needle_set *set);
size_t needle_set_count(const struct needle_set *set);
/* Needle by name (borrowed) or NULL. */
struct needle *needle_set_get(const struct needle_set *set, const char *name);
/* The k-th match area of n (a match result's areas follow them in order),
 * or NULL. */
const struct needle_area *needle_match_area(const struct needle *n, size_t k);

/* Needles matching any of the tag expressions (OR); each expression is
 * space-separated tags that must all be present (AND). *out is a new array
 * (caller frees the array, not the needles: they are borrowed from set),
 * sorted by name without duplicates; returns the count (*out NULL when 0
 * or on OOM). */
size_t needle_set_find(const struct needle_set *set, const char *const *exprs, size_t nexprs,
		       struct needle ***out);

#endif
