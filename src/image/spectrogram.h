/* SPDX-License-Identifier: MIT */
/* spectrogram.h - a sound file (WAV, anything libsndfile reads) as the
 * 1024x768 greyscale spectrogram os-autoinst's snd2png draws, which sound
 * needles are matched against. Reads the file, owns nothing after. */
#ifndef VIGIL_SPECTROGRAM_H
#define VIGIL_SPECTROGRAM_H

#include <stddef.h>
#include "image/image.h"

#define SPECTROGRAM_W 1024
#define SPECTROGRAM_H 768
/* The most samples (frames x channels) read: 10 minutes of 48 kHz stereo
 * fit; a capture longer than the 1024 columns' 10 s is cut anyway. */
#define LIMIT_SOUND_SAMPLES (64u << 20)

/* The spectrogram of sound file path, pixel for pixel what os-autoinst
 * 4.6's snd2png (Debian 12) draws: 10 ms windows with half a window of
 * overlap on each side, magnitudes of 0-3200 Hz in 255 rows of 3 pixels,
 * black the loudest, leading and trailing silence (under a tenth of the
 * loudest) cut. *out: a new RGB image (grey, r = g = b). 0, ERR_PROTO
 * (not a sound file, a sample rate under 6400 Hz: err says which),
 * ERR_TOO_BIG (over LIMIT_SOUND_SAMPLES) or ERR_NOMEM. */
int spectrogram_from_file(const char *path, struct image **out, char *err, size_t errlen);

#endif
