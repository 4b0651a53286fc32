/* SPDX-License-Identifier: MIT */
/* needle_edit.h - the needle editor's server side: a step's screenshot and
 * candidate needles, a draft needle checked and written in openQA's layout,
 * matched live against the stored screenshot with the runner's own matcher
 * (image/needle + image/match; decoded screenshots kept in a small LRU),
 * and saved as NAME.json + NAME.png into the distribution's needles
 * directory, committed to git when that directory is a repository. */
#ifndef VIGIL_NEEDLE_EDIT_H
#define VIGIL_NEEDLE_EDIT_H

#include <jansson.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LIMIT_NEEDLE_EDIT_BODY (64u << 10)  /* bytes of a saved draft (the json field) */
#define NEEDLE_EDIT_NAME_MAX   128          /* bytes of a needle name or a subdirectory segment */
#define NEEDLE_EDIT_MAX_AREAS  64           /* areas of a draft needle */
#define NEEDLE_EDIT_MAX_TAGS   64
#define NEEDLE_EDIT_TEXT_MAX   1024         /* a tag, a property name or value, a commit message */
#define NEEDLE_EDIT_CACHE_N    4            /* screenshots kept decoded */
#define NEEDLE_EDIT_GIT_MS     30000        /* a git command's time limit */

/* Whether name may name a needle (or one directory segment): 1 ..
 * NEEDLE_EDIT_NAME_MAX characters of [A-Za-z0-9._+-], not starting with
 * '.' or '-', no "..". 0, or ERR_INVALID with why in msg. */
int needle_edit_name_check(const char *name, char *msg, size_t msglen);

/* Check a draft needle (the editor's JSON: tags, area[] with xpos, ypos,
 * width, height, type match|exclude|ocr, optional match 1..100, margin
 * 1..10000, click_point {xpos, ypos} or "center"; properties as names or
 * {name, value}) against a screenshot of scr_w x scr_h and make it the
 * object openQA's editor saves: {"area": [{xpos, ypos, width, height,
 * type, match (only when not 96), margin (only when not 50),
 * click_point}], "tags": [...], "properties": [{"name", "value"?}]}.
 * for_save also demands a tag and a match or exclude area beside any ocr
 * area (openQA's rules). 0 and *out (new), ERR_INVALID with the field in
 * msg, ERR_NOMEM. */
int needle_edit_normalise(const json_t *draft, int scr_w, int scr_h, bool for_save, json_t **out, char *msg,
			  size_t msglen);

/* The step of a finished job that the editor opens: reads
 * DATA/testresults/<job_id>/result-<module>.json and answers {"module",
 * "step", "screenshot" (the file name), "tags" (the step's), "candidates":
 * [{"name", "json" (path below the needles dir), "matched", "needle" (its
 * JSON read from DATA/tests/<distri>/needles, null when unreadable),
 * "areas" (the step's recorded areas)}]}. step counts from 1.
 * 0 and *out, ERR_NOT_FOUND (no such module or step, or no screenshot),
 * ERR_INVALID (bad module name), ERR_PROTO (malformed result file). */
int needle_edit_step(const char *data_dir, int64_t job_id, const char *distri, const char *module, long step,
		     json_t **out, char *msg, size_t msglen);

/* The full path of the step's screenshot (new string in *path). Errors as
 * needle_edit_step. */
int needle_edit_step_png(const char *data_dir, int64_t job_id, const char *module, long step, char **path,
			 char *msg, size_t msglen);

struct needle_edit_shot;

/* Decoded screenshots by path, least recently used first out. Entries in
 * use are never freed; each is matched by one thread at a time. */
struct needle_edit_cache {
	pthread_mutex_t lock;
	struct needle_edit_shot *shots[NEEDLE_EDIT_CACHE_N];
	uint64_t tick;
	uint64_t hits, misses;
};

void needle_edit_cache_init(struct needle_edit_cache *c);
void needle_edit_cache_release(struct needle_edit_cache *c);

/* The size of the screenshot at png_path (decoded into the cache). 0 or
 * the decoder's error with msg. */
int needle_edit_shot_size(struct needle_edit_cache *c, const char *png_path, int *w, int *h, char *msg,
			  size_t msglen);

/* Match draft (an unchecked draft needle, see needle_edit_normalise) on
 * the screenshot at png_path, exactly as the runner's assert_screen would
 * on its first search (margin search, no threshold). The needle's image
 * is the screenshot itself (what a save writes) or, when image_path is
 * not NULL, that PNG (a candidate needle's image: how the edited old
 * needle would fare).
 * *out: {"match": bool, "similarity" (openQA's percent from the error),
 * "areas": [{"index" (in draft.area), "x", "y", "w", "h", "similarity"
 * (percent), "required" (percent), "result": "ok"|"fail"}], "ms" (time
 * spent here), "cached" (the screenshot was decoded already)}.
 * 0, ERR_INVALID (msg), ERR_NOMEM, or the decoder's error. */
int needle_edit_match(struct needle_edit_cache *c, const char *png_path, const char *image_path,
		      const json_t *draft, json_t **out, char *msg, size_t msglen);

/* The PNG path of the needle whose JSON lies at json below
 * DATA/tests/<distri>/needles (new string in *path). 0, ERR_INVALID (an
 * unsafe path; msg), ERR_NOMEM. */
int needle_edit_needle_png(const char *data_dir, const char *distri, const char *json, char **path, char *msg,
			   size_t msglen);

/* A save of the editor. */
struct needle_edit_save {
	const char *data_dir;
	const char *distri;     /* the job's DISTRI (a valid distribution name) */
	const char *subdir;     /* below needles/ ("" or NULL: needles/ itself), each segment checked */
	const char *name;       /* needle name, checked */
	const json_t *draft;    /* the draft needle, checked here */
	const char *png_path;   /* the full screenshot, copied as NAME.png */
	bool overwrite;         /* replace an existing NAME.json / NAME.png */
	const char *author;     /* "Name <email>" for the git commit */
	const char *message;    /* commit message (NULL: "NAME for JOB") */
	const char *job_name;   /* the job's name, for the default message */
};

/* Write NAME.png (the screenshot's bytes) and NAME.json (the normalised
 * draft) into DATA/tests/<distri>/needles[/subdir] (needles/ is made when
 * the distribution has none), check that the needle loads as the runner
 * loads it, and commit both files when the needles directory or the
 * distribution directory is the top of a git repository. *out: {"name",
 * "json" (path below needles/), "png", "replaced": bool, "commit": hash
 * or null}. 0; ERR_BADSTATE when the needle exists and overwrite is
 * false; ERR_INVALID (bad name, subdir or draft; msg); ERR_NOT_FOUND (no
 * such distribution or subdir); ERR_IO (a write or git failed; msg). */
int needle_edit_save(const struct needle_edit_save *s, json_t **out, char *msg, size_t msglen);

#endif
