/* SPDX-License-Identifier: MIT */
/* steps.c - records the running module's steps (see steps.h): numbered
 * screenshot and text files, frame times, details and dents. Writes the
 * module's results only; called by the screen checks and the test API. */
#define LOG_MODULE "steps"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "runner/shots.h"
#include "runner/steps.h"
#include "util/err.h"
#include "util/log.h"

/* Seconds since QEMU's start with two decimals, as os-autoinst writes
 * them, rounded down from the millisecond the video gives the frame: a
 * seek to this time lands on the frame, never on the one after it. */
static char *frametime_str(const struct steps *s, double t, char *buf, size_t len)
{
	double v = t - s->t0;
	long long cs = v > 0 ? llround(v * 1000.0) / 10 : 0;

	snprintf(buf, len, "%lld.%02lld", cs / 100, cs % 100);
	return buf;
}

static json_t *frametime_json(const struct steps *s, const struct frame *f)
{
	char a[32], b[32];
	json_t *ft = json_array();
	json_array_append_new(ft, json_string(frametime_str(s, f->t, a, sizeof(a))));
	json_array_append_new(ft, json_string(frametime_str(s, f->t + 0.04, b, sizeof(b))));
	return ft;
}

/* Saves the frame as the module's next screenshot; returns its name. */
static char *save_frame(struct steps *s, const struct frame *f)
{
	char *name;
	int rc;

	if (!s->m)
		return NULL;
	name = results_next_name(s->m, "png");
	if (!name)
		return NULL;
	rc = s->shots ? shots_enqueue(s->shots, name, (struct frame *)f)
		      : results_save_image(s->testresults, name, f->img);
	if (rc) {
		log_warn("could not save screenshot '%s': %s", name, err_str(rc));
		free(name);
		return NULL;
	}
	return name;
}

void steps_frame(struct steps *s, json_t *d, const struct frame *f)
{
	char *shot;

	if (!f)
		return;
	shot = save_frame(s, f);
	json_object_set_new(d, "frametime", frametime_json(s, f));
	if (shot)
		json_object_set_new(d, "screenshot", json_string(shot));
	free(shot);
}

void steps_add(struct steps *s, json_t *d)
{
	if (!s->m) {
		json_decref(d);
		return;
	}
	if (!s->m->details)
		s->m->details = json_array();
	json_array_append_new(s->m->details, d);
}

void steps_screenshot(struct steps *s, const struct frame *f, const char *result)
{
	json_t *d = json_object();

	json_object_set_new(d, "result", json_string(result));
	steps_frame(s, d, f);
	steps_add(s, d);
}

void steps_text(struct steps *s, const char *title, const char *text, const char *result)
{
	json_t *d;
	char *name;

	if (!s->m)
		return;
	name = results_next_name(s->m, "txt");
	if (!name)
		return;
	if (results_save_text(s->testresults, name, text))
		log_warn("could not write '%s'", name);
	d = json_object();
	json_object_set_new(d, "title", json_string(title));
	json_object_set_new(d, "result", json_string(result));
	json_object_set_new(d, "text", json_string(name));
	steps_add(s, d);
	free(name);
}

void steps_dent(struct steps *s)
{
	if (!s->m)
		return;
	s->m->dents++;
	if (s->m->result != MODULE_FAIL)
		s->m->result = MODULE_SOFTFAIL;
}
