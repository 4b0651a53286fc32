/* SPDX-License-Identifier: MIT */
/* git.h - the commit a git work tree has checked out, asked of the git
 * program (openQA records it as TEST_GIT_HASH for the investigation). */
#ifndef VIGIL_UTIL_GIT_H
#define VIGIL_UTIL_GIT_H

/* A commit id in hex (SHA-1 or SHA-256) and its NUL. */
#define GIT_HASH_MAX 65

/* The commit HEAD names in the work tree dir (which must hold .git) into
 * out. 0; ERR_NOT_FOUND (no git work tree, no commit yet, or no git
 * program); ERR_NOMEM. */
int git_head(const char *dir, char out[GIT_HASH_MAX]);

#endif
