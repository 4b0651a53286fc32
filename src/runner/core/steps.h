/* SPDX-License-Identifier: MIT */
/* steps.h - the steps of the running module: each screenshot, needle
 * match, check failure or text detail becomes one entry of the module's
 * details (result-<module>.json), with its file: a PNG through the
 * screenshot writer, a TXT at once. The only writer of a module's details
 * and dents; knows nothing of the VM, the needles or Lua. */
#ifndef VIGIL_STEPS_H
#define VIGIL_STEPS_H

#include <jansson.h>
#include "image/frame.h"
#include "runner/core/results.h"

struct shots;

/* Filled by the runner; every field borrowed. */
struct steps {
	const char *testresults; /* the directory the files go to */
	struct shots *shots;     /* screenshot writer; NULL: PNGs written at once */
	double t0;               /* time_mono() of video time 0: QEMU's start */
	struct module *m;        /* the module running now; NULL: steps dropped */
	/* The line of the module's file that made the step being added (0:
	 * unknown); NULL: steps carry no line. The runner's: it knows Lua. */
	int (*line)(void *ctx);
	void *line_ctx;
	/* ERR_NOMEM once a step was dropped or lost a field for want of
	 * memory (the out-of-memory policy: the details decide the verdict
	 * shown); the runner ends the job incomplete. 0 otherwise. */
	int err;
};

/* json_object_set_new(d, key, v) on a step: v NULL (making it failed) or
 * a failed insertion sets s->err (results_set). */
void steps_set(struct steps *s, json_t *d, const char *key, json_t *v);

/* Save f as the module's next screenshot and add "frametime" (its video
 * time and 40 ms later, as os-autoinst) and "screenshot" to step d, in
 * that order. Returns f's video time in ms for steps_add; f NULL: nothing
 * added, -1. */
int64_t steps_frame(struct steps *s, json_t *d, const struct frame *f);

/* Append step d to the module's details (the reference is taken over),
 * with "line": the module file's line that made it, when known;
 * frame_ms: steps_frame's value, the time of the frame d shows, or -1.
 * d NULL (making it failed) or a failed append sets s->err. */
void steps_add(struct steps *s, json_t *d, int64_t frame_ms);

/* A screenshot step of f: {"result", "frametime", "screenshot"}. */
void steps_screenshot(struct steps *s, const struct frame *f, const char *result);

/* A text step: text written as testresults/<module>-<n>.txt and
 * {"title", "result", "text": its name}. */
void steps_text(struct steps *s, const char *title, const char *text, const char *result);

/* Save img (ownership taken, freed in every case) as testresults/NAME
 * with its thumbnail, through the screenshot writer: an image that
 * belongs to a step, such as a failed check's difference heat-map.
 * 0 or ERR_NOMEM. */
int steps_save_image(struct steps *s, const char *name, struct image *img);

/* A soft failure: one more dent, and the module softfailed unless it has
 * failed. */
void steps_dent(struct steps *s);

#endif
