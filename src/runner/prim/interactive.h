/* SPDX-License-Identifier: MIT */
/* interactive.h - `vigil run --interactive`: a check asks for a tag no
 * needle carries, so the VM is stopped and the person at the terminal is
 * offered to make the needle from the screen now (name and areas asked
 * through the runner's ask function), written with needle_write into the
 * needles directory, which is then loaded again. */
#ifndef VIGIL_INTERACTIVE_H
#define VIGIL_INTERACTIVE_H

#include <stddef.h>
#include "image/needle.h"
#include "runner/core/job.h"

/* Most match areas one answer may give. */
#define INTERACTIVE_MAX_AREAS 16

/* Offer the needle for tags (the check's expressions; the needle gets the
 * first one's tags) to the person at the terminal; check names the test
 * API call for the messages. The VM is stopped while asking and the time
 * asked is added to MAX_JOB_TIME. 1: the needle was written and r's
 * needles loaded again (check once more); 0: declined or the input ended
 * (r->ask is then cleared); negative: the job was interrupted. */
int interactive_make_needle(struct runner *r, const char *const *tags, size_t ntags, const char *check);

/* Parse an answer of areas: "X,Y,W,H" separated by spaces or ';', or
 * "full" / "" for the whole w x h screen. Areas are match areas with the
 * default level and margin. 0 with *n set, or ERR_INVALID. */
int interactive_parse_areas(const char *s, int w, int h, struct needle_area *areas, size_t max, size_t *n);

#endif
