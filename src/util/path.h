/* SPDX-License-Identifier: MIT */
/* path.h - path strings: join, absolute form, stem, directory part. */
#ifndef VIGIL_UTIL_PATH_H
#define VIGIL_UTIL_PATH_H

/* Join a directory and a relative name into a new string; NULL on OOM. */
char *path_join(const char *dir, const char *name);
/* Absolute form of path (need not exist). New string or NULL. */
char *path_abs(const char *path);
/* Basename without extension ext (if it ends so). New string. */
char *path_stem(const char *path, const char *ext);
/* The directory part ("." if none). New string. */
char *path_dir(const char *path);

#endif
