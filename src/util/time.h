/* SPDX-License-Identifier: MIT */
/* time.h - clocks: monotonic seconds and milliseconds for deadlines and
 * durations, wall-clock seconds for timestamps, a sleep that resumes
 * after signals. */
#ifndef VIGIL_UTIL_TIME_H
#define VIGIL_UTIL_TIME_H

#include <stdint.h>

/* Monotonic time in seconds / milliseconds. */
double time_mono(void);
int64_t time_mono_ms(void);
/* Wall-clock time in seconds since the epoch (with fraction). */
double time_wall(void);
/* Sleep ms milliseconds, resuming after a signal. */
void time_sleep_ms(int ms);

#endif
