/* SPDX-License-Identifier: MIT */
/* distri.h - test distributions under DATA/tests/<name>: their names, a
 * content hash, and a tar archive of them cached in DATA/cache/ per hash,
 * as the worker fetches them. Never writes outside DATA/cache. */
#ifndef VIGIL_DISTRI_H
#define VIGIL_DISTRI_H

#include <stdbool.h>
#include "server/store/artefacts.h"
#include "util/git.h"

#define LIMIT_DISTRI_FILES   10000
#define LIMIT_DISTRI_BYTES   (256ull << 20)

/* True for a distribution name: same rules as an artefact name. */
bool distri_name_valid(const char *name);

/* The content hash of DATA/tests/<name> (paths and bytes of its regular
 * files, sorted) as hex into hash. 0, ERR_NOT_FOUND, ERR_TOO_BIG, -errno. */
int distri_hash(const char *data_dir, const char *name, char hash[ARTEFACTS_HASH_HEX]);

/* Build (once per hash) the tar archive of DATA/tests/<name> under
 * DATA/cache/ and return its path (new string) and hash. 0, ERR_NOT_FOUND,
 * ERR_TOO_BIG, ERR_IO, -errno. */
int distri_archive(const char *data_dir, const char *name, char **path, char hash[ARTEFACTS_HASH_HEX]);

/* The commit DATA/tests/<name> has checked out when it is a git work tree
 * (the worker records it as the job's TEST_GIT_HASH). 0, ERR_NOT_FOUND,
 * or ERR_NOMEM. */
int distri_git_head(const char *data_dir, const char *name, char out[GIT_HASH_MAX]);

#endif
