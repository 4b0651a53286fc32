/* SPDX-License-Identifier: MIT */
/* util.h - small helpers: clocks, files, paths, strings, named limits. */
#ifndef VIGIL_UTIL_H
#define VIGIL_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "util/buf.h"

/* Named limits (bytes) used with struct buf and file reads. */
#define LIMIT_NEEDLE_JSON   (1u << 20)
#define LIMIT_VARS_JSON     (4u << 20)
#define LIMIT_QMP_MSG       (16u << 20)
#define LIMIT_PNG_FILE      (64u << 20)
#define LIMIT_LUA_FILE      (4u << 20)
#define LIMIT_SERIAL_LOG    (256u << 20)
#define LIMIT_IMAGE_PIXELS  (16384u * 16384u)

/* Monotonic time in seconds / milliseconds. */
double time_mono(void);
int64_t time_mono_ms(void);
/* Wall-clock time in seconds since the epoch (with fraction). */
double time_wall(void);
void sleep_ms(int ms);

/* Read a whole file into b (limit b->max). 0, -errno or ERR_TOO_BIG. */
int file_read_all(const char *path, struct buf *b);
/* Write data to path atomically (temp file + rename). 0 or -errno. */
int file_write_all(const char *path, const void *data, size_t len);
bool file_exists(const char *path);
bool dir_exists(const char *path);
/* mkdir -p; 0 or -errno. */
int mkdir_p(const char *path, unsigned mode);

/* Join a directory and a relative name into a new string; NULL on OOM. */
char *path_join(const char *dir, const char *name);
/* Absolute form of path (need not exist). New string or NULL. */
char *path_abs(const char *path);
/* Basename without extension ext (if it ends so). New string. */
char *path_stem(const char *path, const char *ext);
/* The directory part ("." if none). New string. */
char *path_dir(const char *path);

char *xstrdup(const char *s); /* aborts on OOM: for small strings only */
bool str_ends_with(const char *s, const char *suffix);
bool str_starts_with(const char *s, const char *prefix);
/* Parse a whole decimal string into *out; 0 or ERR_INVALID. */
int str_to_long(const char *s, long *out);
int str_to_double(const char *s, double *out);

#endif
