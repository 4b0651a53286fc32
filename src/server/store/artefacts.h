/* SPDX-License-Identifier: MIT */
/* artefacts.h - files of jobs on the server's disk: validated artefact
 * names, storing an upload under DATA/testresults/<id>/ (screenshots and
 * their thumbnails once per content under DATA/images/<sha256>.png,
 * hard-linked), thumbnails in its .thumbs/ and uploaded logs in its ulogs/
 * (as openQA keeps them), listing them. Never writes outside DATA. */
#ifndef VIGIL_ARTEFACTS_H
#define VIGIL_ARTEFACTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#define LIMIT_ARTEFACT_NAME 200
#define LIMIT_ARTEFACT       (512ull << 20)   /* one uploaded file */
#define ARTEFACTS_HASH_HEX   65               /* sha256 hex + NUL */

/* True for a name that stays inside its directory: 1..LIMIT_ARTEFACT_NAME
 * characters of [A-Za-z0-9._+@-], not starting with '.', so no '/', no
 * '..', no absolute path, no NUL (len is the byte length as received). */
bool artefact_name_valid(const char *name, size_t len);

/* What an artefact is, and so where it lies in the job's directory. */
enum artefact_kind {
	ARTEFACT_FILE,  /* a result file or screenshot: <dir>/<name> */
	ARTEFACT_THUMB, /* a screenshot's thumbnail (a .png): <dir>/.thumbs/<name> */
	ARTEFACT_ULOG,  /* a log the test uploaded (upload_logs): <dir>/ulogs/<name> */
};

/* Move the uploaded temporary file tmp (on the same file system) to the
 * place of an artefact of that kind (artefact_kind_path); a screenshot or
 * thumbnail (.png) is kept once under DATA/images/<sha256>.png and
 * hard-linked. name must be valid. 0, -errno, or ERR_NOMEM; tmp is gone
 * either way on success. */
int artefact_store(const char *data_dir, int64_t job_id, enum artefact_kind kind, const char *name, const char *tmp);

/* The path DATA/testresults/<job_id>[/<name>] (name may be NULL). New string. */
char *artefact_path(const char *data_dir, int64_t job_id, const char *name);

/* The path of artefact name of that kind (NULL: its directory). New string. */
char *artefact_kind_path(const char *data_dir, int64_t job_id, enum artefact_kind kind, const char *name);

/* The names of the job's artefacts of that kind, sorted, as a new JSON
 * array: with ARTEFACT_FILE the screenshots (.png) when pngs, else the
 * other files; directories and names starting with '.' never. A job
 * without artefacts has an empty array. NULL when out of memory. */
json_t *artefact_list(const char *data_dir, int64_t job_id, enum artefact_kind kind, bool pngs);

#endif
