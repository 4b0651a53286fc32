/* SPDX-License-Identifier: MIT */
/* casedir.h - a job's CASEDIR given as a git repository, as openQA takes
 * it: "URL[#REF]" (REF a branch, tag or commit). The worker clones it
 * (shallow when REF is a name) for each job it runs. */
#ifndef VIGIL_CASEDIR_H
#define VIGIL_CASEDIR_H

#include <stdbool.h>
#include <stddef.h>

#define CASEDIR_CLONE_TIMEOUT_MS (10 * 60 * 1000)

/* Whether casedir names a git repository: a URL with a scheme
 * (https://, git://, ssh://, file://...), scp-like "user@host:path", or
 * anything whose part before '#' ends in ".git". */
bool casedir_is_git(const char *casedir);

/* Clone casedir into dest (which must not exist). 0, or a negative code
 * with why telling what failed (git's own message included). */
int casedir_clone(const char *casedir, const char *dest, char *why, size_t whylen);

#endif
