/* SPDX-License-Identifier: MIT */
/* oqcompat.c - openQA's own worker under vigil serve (see oqcompat.h):
 * multipart bodies through libmicrohttpd's post processor, step details
 * and md5-named screenshots into vigil's result layout. The video
 * transcoding is oqcompat_video.c. */
#define LOG_MODULE "oqcompat"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "server/oqcompat/oqcompat.h"
#include "util/err.h"
#include "util/file.h"
#include "util/log.h"
#include "util/path.h"
#include "util/str.h"
#include "util/banned.h" /* last: after every system header */

#define MP_CHUNK (64u << 10)
#define MP_FIELD_MAX 4096   /* bytes of one non-file field */

struct mp_state {
	struct oqcompat_upload *up;
	const char *dir;
	int fd;
	EVP_MD_CTX *sha;
	int err;
	char *msg;
	size_t msglen;
	bool file_seen;
};

static enum MHD_Result mp_iter(void *cls, enum MHD_ValueKind kind, const char *key, const char *filename,
			       const char *ctype, const char *te, const char *data, uint64_t off, size_t size)
{
	struct mp_state *m = cls;
	struct oqcompat_upload *up = m->up;

	(void)kind;
	(void)ctype;
	(void)te;
	if (!key)
		return MHD_YES;
	if (filename && !strcmp(key, "file")) {
		if (off == 0 && !m->file_seen) {
			if (strlen(filename) > LIMIT_ARTEFACT_NAME) {
				err_set(m->msg, m->msglen, "multipart: file name of %zu bytes", strlen(filename));
				m->err = ERR_PROTO;
				return MHD_NO;
			}
			snprintf(up->filename, sizeof(up->filename), "%s", filename);
			up->path = path_join(m->dir, "mp-XXXXXX");
			if (!up->path || (m->fd = mkostemp(up->path, O_CLOEXEC)) < 0) {
				m->err = up->path ? -errno : ERR_NOMEM;
				free(up->path);
				up->path = NULL;
				return MHD_NO;
			}
			m->file_seen = true;
		}
		if (size && m->fd >= 0) {
			const char *p = data;
			size_t left = size;
			while (left) {
				ssize_t w = write(m->fd, p, left);
				if (w < 0 && errno == EINTR)
					continue;
				if (w <= 0) {
					m->err = w < 0 ? -errno : ERR_IO;
					return MHD_NO;
				}
				p += w;
				left -= (size_t)w;
			}
			EVP_DigestUpdate(m->sha, data, size);
			up->len += size;
		}
		return MHD_YES;
	}
	/* A field: its value may come in pieces. */
	if (off == 0) {
		char *v = strndup(data, size);
		int rc = v ? params_add(&up->fields, key, v) : ERR_NOMEM;
		free(v);
		if (rc) {
			m->err = rc;
			return MHD_NO;
		}
	} else if (up->fields.n && !strcmp(up->fields.v[up->fields.n - 1].key, key)) {
		char **val = &up->fields.v[up->fields.n - 1].value;
		size_t have = strlen(*val);
		char *nv;
		if (have + size > MP_FIELD_MAX) {
			err_set(m->msg, m->msglen, "multipart: field '%s' over %u bytes", key, MP_FIELD_MAX);
			m->err = ERR_PROTO;
			return MHD_NO;
		}
		if (!(nv = realloc(*val, have + size + 1))) {
			m->err = ERR_NOMEM;
			return MHD_NO;
		}
		memcpy(nv + have, data, size);
		nv[have + size] = '\0';
		*val = nv;
	}
	return MHD_YES;
}

int oqcompat_multipart(struct MHD_Connection *con, const char *body, const char *dir, struct oqcompat_upload *up,
		       char *msg, size_t msglen)
{
	struct mp_state m = { .up = up, .dir = dir, .fd = -1, .msg = msg, .msglen = msglen };
	struct MHD_PostProcessor *pp = NULL;
	char *chunk = NULL;
	int fd = -1, rc = 0;

	memset(up, 0, sizeof(*up));
	params_init(&up->fields);
	if (!(m.sha = EVP_MD_CTX_new()) || !EVP_DigestInit_ex(m.sha, EVP_sha256(), NULL) ||
	    !(chunk = malloc(MP_CHUNK))) {
		rc = ERR_NOMEM;
		goto out;
	}
	pp = MHD_create_post_processor(con, MP_CHUNK, mp_iter, &m);
	if (!pp) {
		err_set(msg, msglen, "multipart: not a multipart/form-data body with a boundary");
		rc = ERR_PROTO;
		goto out;
	}
	if ((fd = open(body, O_RDONLY | O_CLOEXEC)) < 0) {
		rc = -errno;
		goto out;
	}
	for (;;) {
		ssize_t n = read(fd, chunk, MP_CHUNK);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = -errno;
			goto out;
		}
		if (n == 0)
			break;
		if (MHD_post_process(pp, chunk, (size_t)n) != MHD_YES) {
			rc = m.err ? m.err : ERR_PROTO;
			if (!m.err)
				err_set(msg, msglen, "multipart: the body does not parse");
			goto out;
		}
	}
	if (MHD_destroy_post_processor(pp) != MHD_YES && !m.file_seen) {
		pp = NULL;
		err_set(msg, msglen, "multipart: the body ends inside a part");
		rc = ERR_PROTO;
		goto out;
	}
	pp = NULL;
	if (!m.file_seen) {
		err_set(msg, msglen, "multipart: no 'file' part with a filename");
		rc = ERR_PROTO;
		goto out;
	}
	{
		unsigned char md[32];
		unsigned mdlen = 0, i;
		EVP_DigestFinal_ex(m.sha, md, &mdlen);
		for (i = 0; i < 32 && i < mdlen; i++)
			snprintf(up->sha256 + 2 * i, 3, "%02x", md[i]);
	}
out:
	if (pp)
		MHD_destroy_post_processor(pp);
	if (fd >= 0)
		close(fd);
	if (m.fd >= 0)
		close(m.fd);
	EVP_MD_CTX_free(m.sha);
	free(chunk);
	if (rc)
		oqcompat_upload_release(up);
	return rc;
}

void oqcompat_upload_release(struct oqcompat_upload *up)
{
	if (up->path)
		(void)unlink(up->path); /* gone already when it was stored */
	free(up->path);
	up->path = NULL;
	params_release(&up->fields);
}

static bool md5_valid(const char *md5)
{
	size_t i;

	if (!md5 || strlen(md5) != OQCOMPAT_MD5_HEX - 1)
		return false;
	for (i = 0; md5[i]; i++)
		if (!((md5[i] >= '0' && md5[i] <= '9') || (md5[i] >= 'a' && md5[i] <= 'f')))
			return false;
	return true;
}

/* DATA/testresults/<id>/.md5/<md5>[.thumb].png: a hard link to the
 * screenshot (thumbnail) the worker named by that md5. New string. */
static char *md5_path(const char *data_dir, int64_t job_id, const char *md5, bool thumb)
{
	char rel[80];

	snprintf(rel, sizeof(rel), ".md5/%s%s.png", md5, thumb ? ".thumb" : "");
	return artefact_path(data_dir, job_id, rel);
}

int oqcompat_note_image(const char *data_dir, int64_t job_id, const char *name, const char *md5, bool thumb)
{
	char *src = NULL, *dst = NULL, *dir = NULL;
	int rc;

	if (!md5_valid(md5))
		return ERR_INVALID;
	src = artefact_kind_path(data_dir, job_id, thumb ? ARTEFACT_THUMB : ARTEFACT_FILE, name);
	dst = md5_path(data_dir, job_id, md5, thumb);
	dir = artefact_path(data_dir, job_id, ".md5");
	if (!src || !dst || !dir) {
		rc = ERR_NOMEM;
		goto out;
	}
	if ((rc = file_mkdir_p(dir, 0700)))
		goto out;
	(void)unlink(dst);
	rc = link(src, dst) ? -errno : 0;
out:
	free(src);
	free(dst);
	free(dir);
	return rc;
}

json_t *oqcompat_known_images(const char *data_dir, int64_t job_id)
{
	json_t *a = json_array();
	char *dir = artefact_path(data_dir, job_id, ".md5");
	DIR *d = dir ? opendir(dir) : NULL;
	struct dirent *e;

	while (a && d && (e = readdir(d))) {
		char md5[OQCOMPAT_MD5_HEX];
		/* <md5>.png only: a thumbnail alone does not make an image known. */
		if (strlen(e->d_name) != OQCOMPAT_MD5_HEX - 1 + 4 || !str_ends_with(e->d_name, ".png"))
			continue;
		snprintf(md5, sizeof(md5), "%.32s", e->d_name);
		if (md5_valid(md5) && json_array_append_new(a, json_string(md5))) {
			json_decref(a); /* one missing would be uploaded again: none */
			a = NULL;
		}
	}
	if (d)
		closedir(d);
	free(dir);
	return a;
}

/* A screenshot the worker did not send again (its md5 known) appears in
 * a later step under a new name: link the stored one there. */
static void link_known(const char *data_dir, int64_t job_id, const char *name, const char *md5)
{
	for (int thumb = 0; thumb < 2; thumb++) {
		char *src = md5_path(data_dir, job_id, md5, thumb);
		char *dst = artefact_kind_path(data_dir, job_id, thumb ? ARTEFACT_THUMB : ARTEFACT_FILE, name);
		if (src && dst && file_exists(src) && !file_exists(dst) && link(src, dst))
			log_warn("job %lld: screenshot '%s' not linked from md5 %s: %s", (long long)job_id, name, md5,
				 strerror(errno));
		free(src);
		free(dst);
	}
}

int oqcompat_store_details(const char *data_dir, int64_t job_id, const json_t *status)
{
	const json_t *res = json_object_get(status, "result");
	const char *module;
	json_t *m;
	int first = 0;

	json_object_foreach((json_t *)res, module, m) {
		json_t *copy, *details, *d;
		char rel[LIMIT_ARTEFACT_NAME + 16], *path, *text;
		size_t i;
		int rc;

		if (!json_is_array(json_object_get(m, "details")))
			continue;
		snprintf(rel, sizeof(rel), "result-%s.json", module);
		if (!artefact_name_valid(rel, strlen(rel))) {
			log_warn("job %lld: module name '%s' refused for its results file", (long long)job_id, module);
			continue;
		}
		copy = json_deep_copy(m);
		details = json_object_get(copy, "details");
		rc = 0;
		json_array_foreach(details, i, d) {
			json_t *shot = json_object_get(d, "screenshot");
			if (json_is_object(shot)) {
				const char *name = json_string_value(json_object_get(shot, "name"));
				const char *md5 = json_string_value(json_object_get(shot, "md5"));
				if (name && artefact_name_valid(name, strlen(name)) && md5_valid(md5))
					link_known(data_dir, job_id, name, md5);
				if (name) {
					if (json_object_set_new(d, "screenshot", json_string(name)))
						rc = ERR_NOMEM; /* not stored with the worker's object in its place */
				} else
					json_object_del(d, "screenshot");
			}
		}
		path = rc ? NULL : artefact_path(data_dir, job_id, rel);
		text = copy && path ? json_dumps(copy, JSON_COMPACT) : NULL;
		rc = path && text ? file_write_all(path, text, strlen(text)) : ERR_NOMEM;
		if (rc == -ENOENT) {
			char *dir = artefact_path(data_dir, job_id, NULL);
			rc = dir ? file_mkdir_p(dir, 0700) : ERR_NOMEM;
			if (!rc)
				rc = file_write_all(path, text, strlen(text));
			free(dir);
		}
		if (rc && !first)
			first = rc;
		free(path);
		free(text);
		json_decref(copy);
	}
	return first;
}
