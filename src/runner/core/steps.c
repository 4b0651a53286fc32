/* SPDX-License-Identifier: MIT */
/* steps.c - records the running module's steps (see steps.h): numbered
 * screenshot and text files, frame times, details and dents. Writes the
 * module's results only; called by the screen checks and the test API. */
#define LOG_MODULE "steps"
#include <stdio.h>
#include <stdlib.h>
#include "runner/core/shots.h"
#include "runner/core/steps.h"
#include "util/err.h"
#include "util/log.h"
#include "video/video.h"
#include "util/banned.h" /* last: after every system header */

void steps_set(struct steps *s, json_t *d, const char *key, json_t *v)
{
	(void)results_set(&s->err, d, key, v);
}

/* Saves the frame as the module's next screenshot; returns its name. */
static char *save_frame(struct steps *s, const struct frame *f)
{
	char *name;
	int rc;

	if (!s->m)
		return NULL;
	name = results_next_name(s->m, "png");
	if (!name) {
		s->err = ERR_NOMEM;
		return NULL;
	}
	rc = s->shots ? shots_enqueue(s->shots, name, (struct frame *)f)
		      : results_save_image(s->testresults, name, f->img);
	if (rc == ERR_NOMEM)
		s->err = ERR_NOMEM;
	if (rc) {
		log_warn("could not save screenshot '%s': %s", name, err_str(rc));
		free(name);
		return NULL;
	}
	return name;
}

int64_t steps_frame(struct steps *s, json_t *d, const struct frame *f)
{
	int64_t ms;
	char *shot;

	if (!f)
		return -1;
	shot = save_frame(s, f);
	/* The frame's video time, as the encoder stamped it. */
	ms = video_time_ms(s->t0, f->t);
	steps_set(s, d, "frametime", results_frametime_json(ms, video_time_ms(s->t0, f->t + 0.04)));
	if (shot)
		steps_set(s, d, "screenshot", json_string(shot));
	free(shot);
	return ms;
}

void steps_add(struct steps *s, json_t *d, int64_t frame_ms)
{
	int line;

	if (!s->m) {
		json_decref(d);
		return;
	}
	if (!d) {
		s->err = ERR_NOMEM;
		return;
	}
	if (s->line && (line = s->line(s->line_ctx)) > 0)
		steps_set(s, d, "line", json_integer(line));
	if (!s->m->details && !(s->m->details = json_array())) {
		json_decref(d);
		s->err = ERR_NOMEM;
		return;
	}
	if (frame_ms >= 0 && results_add_step_time(s->m, json_array_size(s->m->details), frame_ms))
		log_warn("out of memory: step not in the video index");
	(void)results_append(&s->err, s->m->details, d);
}

void steps_screenshot(struct steps *s, const struct frame *f, const char *result)
{
	json_t *d = json_object();
	int64_t ms;

	steps_set(s, d, "result", json_string(result));
	ms = steps_frame(s, d, f);
	steps_add(s, d, ms);
}

void steps_text(struct steps *s, const char *title, const char *text, const char *result)
{
	json_t *d;
	char *name;
	int rc;

	if (!s->m)
		return;
	name = results_next_name(s->m, "txt");
	if (!name) {
		s->err = ERR_NOMEM;
		return;
	}
	if ((rc = results_save_text(s->testresults, name, text)) != 0) {
		log_warn("could not write '%s'", name);
		if (rc == ERR_NOMEM)
			s->err = ERR_NOMEM;
	}
	d = json_object();
	steps_set(s, d, "title", json_string(title));
	steps_set(s, d, "result", json_string(result));
	steps_set(s, d, "text", json_string(name));
	steps_add(s, d, -1);
	free(name);
}

int steps_save_image(struct steps *s, const char *name, struct image *img)
{
	struct frame *f;
	int rc;

	if (!s->shots) {
		rc = results_save_image(s->testresults, name, img);
		image_free(img);
		return rc;
	}
	f = frame_from_image(img);
	if (!f)
		return ERR_NOMEM;
	rc = shots_enqueue(s->shots, name, f);
	frame_unref(f);
	return rc;
}

void steps_dent(struct steps *s)
{
	if (!s->m)
		return;
	s->m->dents++;
	if (s->m->result != MODULE_FAIL)
		s->m->result = MODULE_SOFTFAIL;
}
