/* SPDX-License-Identifier: MIT */
/* shots.h - writes step screenshots (PNG + thumbnail) on a background
 * thread, so a screen check reports its result without waiting for the
 * PNG encoder. Frames are referenced while queued. */
#ifndef VIGIL_SHOTS_H
#define VIGIL_SHOTS_H

struct shots;
struct frame;

/* A writer for testresults dir (borrowed string, must outlive it). NULL on OOM. */
struct shots *shots_new(const char *testresults);
/* Wait until every queued screenshot is written. NULL-safe. */
void shots_flush(struct shots *s);
/* Queue frame f (referenced) to be written as NAME (copied). Blocks only
 * while SHOTS_QUEUE_MAX screenshots wait. 0 or ERR_NOMEM. */
int shots_enqueue(struct shots *s, const char *name, struct frame *f);
/* Write everything still queued, stop the thread, free. NULL-safe.
 * Returns the number of screenshots that could not be written. */
int shots_free(struct shots *s);

#define SHOTS_QUEUE_MAX 64

#endif
