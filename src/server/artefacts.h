/* SPDX-License-Identifier: MIT */
/* artefacts.h - files of jobs on the server's disk: validated artefact
 * names, storing an upload under DATA/testresults/<id>/ (screenshots once
 * per content under DATA/images/<sha256>.png, hard-linked). Never writes
 * outside DATA. */
#ifndef VIGIL_ARTEFACTS_H
#define VIGIL_ARTEFACTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LIMIT_ARTEFACT_NAME 200
#define LIMIT_ARTEFACT       (512ull << 20)   /* one uploaded file */
#define ARTEFACTS_HASH_HEX   65               /* sha256 hex + NUL */

/* True for a name that stays inside its directory: 1..LIMIT_ARTEFACT_NAME
 * characters of [A-Za-z0-9._+@-], not starting with '.', so no '/', no
 * '..', no absolute path, no NUL (len is the byte length as received). */
bool artefact_name_valid(const char *name, size_t len);

/* Move the uploaded temporary file tmp (on the same file system) to
 * DATA/testresults/<job_id>/<name>; a .png is kept once under
 * DATA/images/<sha256>.png and hard-linked. name must be valid. 0, -errno,
 * or ERR_NOMEM; tmp is gone either way on success. */
int artefact_store(const char *data_dir, int64_t job_id, const char *name, const char *tmp);

/* The path DATA/testresults/<job_id>[/<name>] (name may be NULL). New string. */
char *artefact_path(const char *data_dir, int64_t job_id, const char *name);

#endif
