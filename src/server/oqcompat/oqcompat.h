/* SPDX-License-Identifier: MIT */
/* oqcompat.h - what openQA's own worker sends that vigil's worker does not:
 * multipart/form-data artefact uploads (parsed with libmicrohttpd's post
 * processor), the steps inside its status updates (result.<module>.details,
 * written as vigil's result-<module>.json), screenshots named by md5
 * (known_images), and isotovideo's Theora video.ogv made a WebM on arrival.
 * Writes only under the job's DATA/testresults/<id>/. */
#ifndef VIGIL_OQCOMPAT_H
#define VIGIL_OQCOMPAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>
#include "server/http/api.h"
#include "server/store/artefacts.h"

#define OQCOMPAT_MD5_HEX 33   /* md5 hex + NUL */
#define OQCOMPAT_CHUNK_MAX (256u << 20) /* one chunk record of a chunked asset upload */

/* A multipart body's parts: the one file part ("file", with a filename)
 * and the fields beside it. */
struct oqcompat_upload {
	struct params fields;               /* image, thumb, md5, ulog, asset, ... */
	char *path;                         /* the file part's bytes, a temporary file (owned; unlinked by release) */
	char filename[LIMIT_ARTEFACT_NAME + 1];
	char sha256[ARTEFACTS_HASH_HEX];    /* of the file part */
	uint64_t len;
};

/* Parses the multipart/form-data body in body (a file) of the request on
 * con (its Content-Type gives the boundary) into up; the file part is
 * written to a new file in dir. 0, or ERR_PROTO (not multipart, no file
 * part, a filename over LIMIT_ARTEFACT_NAME; what in msg), ERR_NOMEM, -errno. */
int oqcompat_multipart(struct MHD_Connection *con, const char *body, const char *dir, struct oqcompat_upload *up,
		       char *msg, size_t msglen);
void oqcompat_upload_release(struct oqcompat_upload *up);

/* Records that the stored screenshot (thumb: its thumbnail) name of the job
 * has the md5 the worker computed (md5 32 lowercase hex). 0, ERR_INVALID
 * (not an md5), -errno. */
int oqcompat_note_image(const char *data_dir, int64_t job_id, const char *name, const char *md5, bool thumb);

/* The md5s of the job's screenshots recorded so far, a new JSON array;
 * NULL when out of memory. */
json_t *oqcompat_known_images(const char *data_dir, int64_t job_id);

/* Writes result-<module>.json for each module of status.result that has
 * details, as vigil's runner writes it (a step's screenshot {name, md5}
 * becomes its name), and links a screenshot the worker did not send again
 * (its md5 known) under its new name. 0 or the first error. */
int oqcompat_store_details(const char *data_dir, int64_t job_id, const json_t *status);

/* Transcodes the job's video.ogv (Theora, as isotovideo 4.6 writes it) to
 * video.webm (VP8) beside it with FFmpeg's libraries, for browsers without
 * Theora; the .ogv stays. 0, or an error with what in msg. */
int oqcompat_video_webm(const char *data_dir, int64_t job_id, char *msg, size_t msglen);

/* One chunk of openQA's chunked asset upload (oqcompat_chunk.c): the
 * Storable record in rec_path, for asset name of job_id, written at its
 * offset into DATA/factory/.chunks/<job>-<name> after its SHA-1 is
 * checked. 0 with *assembled NULL while chunks are due; after the last
 * one, the whole file's SHA-256 checked against the record's, 0 with
 * *assembled the file's path (the caller's: store or unlink it) and its
 * SHA-256 in sha256_hex. ERR_PROTO (a bad record or checksum; what in
 * msg), ERR_TOO_BIG, ERR_NOMEM, -errno. */
int oqcompat_chunk(const char *data_dir, int64_t job_id, const char *name, const char *rec_path, char **assembled,
		   char sha256_hex[65], char *msg, size_t msglen);

#endif
