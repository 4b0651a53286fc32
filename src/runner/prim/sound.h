/* SPDX-License-Identifier: MIT */
/* sound.h - the sound primitives both front ends use (Lua's
 * start_audiocapture and assert_recorded_sound, Perl's backend_* commands
 * and verify_image). Each returns 0 or a negative code with err set. */
#ifndef VIGIL_RUNNER_SOUND_H
#define VIGIL_RUNNER_SOUND_H

#include <jansson.h>
#include <stddef.h>
#include "runner/core/job.h"

/* QEMU's wavcapture into path (relative: to the results directory). */
int sound_start(struct runner *r, const char *path, char *err, size_t errlen);
/* QEMU's stopcapture. */
int sound_stop(struct runner *r, char *err, size_t errlen);
/* One search of path (a PNG when is_png, else a sound file drawn as its
 * spectrogram) for the tags, recorded as a screen check. 1 matched
 * (*match: screen_check's match object, the caller's), 0 not (*near: a
 * near miss), negative with err set. */
int sound_check(struct runner *r, const char *path, int is_png, const char *const *tags, size_t ntags, int is_assert,
		json_t **match, int *near, char *err, size_t errlen);

#endif
