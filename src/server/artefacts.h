/* SPDX-License-Identifier: MIT */
/* artefacts.h - files of jobs on the server's disk: validated artefact
 * names, storing an upload under DATA/testresults/<id>/ (screenshots once
 * per content under DATA/images/<sha256>.png, hard-linked), and test
 * distributions under DATA/tests/<name> served as content-hashed tar
 * archives cached in DATA/cache/. Never writes outside DATA. */
#ifndef VIGIL_ARTEFACTS_H
#define VIGIL_ARTEFACTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LIMIT_ARTEFACT_NAME 200
#define LIMIT_ARTEFACT       (512ull << 20)   /* one uploaded file */
#define LIMIT_DISTRI_FILES   10000
#define LIMIT_DISTRI_BYTES   (256ull << 20)
#define ARTEFACTS_HASH_HEX   65               /* sha256 hex + NUL */

/* True for a name that stays inside its directory: 1..LIMIT_ARTEFACT_NAME
 * characters of [A-Za-z0-9._+@-], not starting with '.', so no '/', no
 * '..', no absolute path, no NUL (len is the byte length as received). */
bool artefact_name_valid(const char *name, size_t len);

/* True for a distribution name: same rules as an artefact name. */
bool distri_name_valid(const char *name);

/* Move the uploaded temporary file tmp (on the same file system) to
 * DATA/testresults/<job_id>/<name>; a .png is kept once under
 * DATA/images/<sha256>.png and hard-linked. name must be valid. 0, -errno,
 * or ERR_NOMEM; tmp is gone either way on success. */
int artefact_store(const char *data_dir, int64_t job_id, const char *name, const char *tmp);

/* The path DATA/testresults/<job_id>[/<name>] (name may be NULL). New string. */
char *artefact_path(const char *data_dir, int64_t job_id, const char *name);

/* The content hash of DATA/tests/<name> (paths and bytes of its regular
 * files, sorted) as hex into hash. 0, ERR_NOT_FOUND, ERR_TOO_BIG, -errno. */
int distri_hash(const char *data_dir, const char *name, char hash[ARTEFACTS_HASH_HEX]);

/* Build (once per hash) the tar archive of DATA/tests/<name> under
 * DATA/cache/ and return its path (new string) and hash. 0, ERR_NOT_FOUND,
 * ERR_TOO_BIG, ERR_IO, -errno. */
int distri_archive(const char *data_dir, const char *name, char **path, char hash[ARTEFACTS_HASH_HEX]);

#endif
