/* SPDX-License-Identifier: MIT */
/* distri.c - test distributions under DATA/tests/<name> served to workers:
 * a sha256 over the sorted paths and bytes of their regular files, and a
 * libarchive tar per hash cached in DATA/cache/. Links and special files
 * are skipped so nothing outside a distribution is ever served. */
#define LOG_MODULE "distri"
#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "server/store/distri.h"
#include "util/err.h"
#include "util/git.h"
#include "util/file.h"
#include "util/log.h"
#include "util/path.h"
#include "util/banned.h" /* last: after every system header */

bool distri_name_valid(const char *name)
{
	return name && artefact_name_valid(name, strlen(name));
}

struct distri_files {
	char **rel;
	size_t n, cap;
	uint64_t bytes;
};

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Collect regular files under root/rel (links and specials skipped). */
static int walk(const char *root, const char *rel, struct distri_files *f, int depth)
{
	char *dir = rel[0] ? path_join(root, rel) : strdup(root);
	DIR *d = NULL;
	struct dirent *e;
	int rc = 0;

	if (!dir)
		return ERR_NOMEM;
	if (depth > 16 || !(d = opendir(dir))) {
		rc = depth > 16 ? ERR_TOO_BIG : -errno;
		goto out;
	}
	while ((e = readdir(d))) {
		char sub[4096];
		struct stat stt;
		char *full;
		if (e->d_name[0] == '.')
			continue; /* ., .., and hidden files such as .git */
		if ((size_t)snprintf(sub, sizeof(sub), "%s%s%s", rel, rel[0] ? "/" : "", e->d_name) >= sizeof(sub))
			continue;
		full = path_join(root, sub);
		if (!full || lstat(full, &stt)) {
			free(full);
			continue;
		}
		free(full);
		if (S_ISDIR(stt.st_mode)) {
			if ((rc = walk(root, sub, f, depth + 1)))
				goto out;
		} else if (S_ISREG(stt.st_mode)) {
			if (f->n >= LIMIT_DISTRI_FILES || (f->bytes += (uint64_t)stt.st_size) > LIMIT_DISTRI_BYTES) {
				rc = ERR_TOO_BIG;
				goto out;
			}
			if (f->n == f->cap) {
				size_t cap = f->cap ? 2 * f->cap : 64;
				char **v = realloc(f->rel, cap * sizeof(*v));
				if (!v) {
					rc = ERR_NOMEM;
					goto out;
				}
				f->rel = v;
				f->cap = cap;
			}
			if (!(f->rel[f->n] = strdup(sub))) {
				rc = ERR_NOMEM;
				goto out;
			}
			f->n++;
		}
	}
out:
	if (d)
		closedir(d);
	free(dir);
	return rc;
}

static void files_release(struct distri_files *f)
{
	size_t i;

	for (i = 0; i < f->n; i++)
		free(f->rel[i]);
	free(f->rel);
}

static char *distri_root(const char *data_dir, const char *name)
{
	char rel[16 + LIMIT_ARTEFACT_NAME];

	snprintf(rel, sizeof(rel), "tests/%s", name);
	return path_join(data_dir, rel);
}

static int collect(const char *root, struct distri_files *f, char hash[ARTEFACTS_HASH_HEX])
{
	EVP_MD_CTX *ctx = NULL;
	unsigned char md[32];
	unsigned mdlen = 0, i;
	int rc;

	memset(f, 0, sizeof(*f));
	if (!file_is_dir(root))
		return ERR_NOT_FOUND;
	if ((rc = walk(root, "", f, 0)))
		return rc;
	qsort(f->rel, f->n, sizeof(f->rel[0]), cmp_str);
	if (!(ctx = EVP_MD_CTX_new()))
		return ERR_NOMEM;
	EVP_DigestInit_ex(ctx, EVP_sha256(), NULL);
	for (i = 0; i < f->n; i++) {
		char *full = path_join(root, f->rel[i]);
		int fd = full ? open(full, O_RDONLY | O_CLOEXEC | O_NOFOLLOW) : -1;
		free(full);
		if (fd < 0) {
			rc = -errno;
			break;
		}
		EVP_DigestUpdate(ctx, f->rel[i], strlen(f->rel[i]) + 1);
		rc = file_hash_update(ctx, fd);
		close(fd);
		if (rc)
			break;
		EVP_DigestUpdate(ctx, "", 1);
	}
	EVP_DigestFinal_ex(ctx, md, &mdlen);
	EVP_MD_CTX_free(ctx);
	file_hash_hex(md, 32, hash);
	return rc;
}

int distri_hash(const char *data_dir, const char *name, char hash[ARTEFACTS_HASH_HEX])
{
	struct distri_files f;
	char *root = distri_root(data_dir, name);
	int rc = root ? collect(root, &f, hash) : ERR_NOMEM;

	if (root)
		files_release(&f);
	free(root);
	return rc;
}

static int write_tar(const char *root, const struct distri_files *f, const char *out)
{
	struct archive *a = archive_write_new();
	struct archive_entry *e = NULL;
	char chunk[65536];
	size_t i;
	int rc = 0;

	if (!a)
		return ERR_NOMEM;
	archive_write_set_format_pax_restricted(a);
	if (archive_write_open_filename(a, out) != ARCHIVE_OK) {
		rc = ERR_IO;
		goto out;
	}
	for (i = 0; i < f->n && !rc; i++) {
		char *full = path_join(root, f->rel[i]);
		struct stat st;
		int fd = full ? open(full, O_RDONLY | O_CLOEXEC | O_NOFOLLOW) : -1;
		ssize_t n;
		free(full);
		if (fd < 0 || fstat(fd, &st)) {
			rc = fd < 0 ? -errno : ERR_IO;
			if (fd >= 0)
				close(fd);
			break;
		}
		e = archive_entry_new();
		archive_entry_set_pathname(e, f->rel[i]);
		archive_entry_set_size(e, st.st_size);
		archive_entry_set_filetype(e, AE_IFREG);
		archive_entry_set_perm(e, st.st_mode & 0755);
		archive_entry_set_mtime(e, st.st_mtime, 0);
		if (archive_write_header(a, e) != ARCHIVE_OK)
			rc = ERR_IO;
		while (!rc && (n = read(fd, chunk, sizeof(chunk))) > 0)
			if (archive_write_data(a, chunk, (size_t)n) != n)
				rc = ERR_IO;
		close(fd);
		archive_entry_free(e);
	}
	if (archive_write_close(a) != ARCHIVE_OK && !rc)
		rc = ERR_IO;
out:
	if (rc)
		log_err("distribution archive '%s': %s", out, archive_error_string(a) ? archive_error_string(a) : err_str(rc));
	archive_write_free(a);
	return rc;
}

int distri_archive(const char *data_dir, const char *name, char **path, char hash[ARTEFACTS_HASH_HEX])
{
	struct distri_files f;
	char *root = distri_root(data_dir, name), *cache = path_join(data_dir, "cache"), *out = NULL, *tmp = NULL;
	char rel[LIMIT_ARTEFACT_NAME + ARTEFACTS_HASH_HEX + 16];
	int rc;

	*path = NULL;
	memset(&f, 0, sizeof(f));
	if (!root || !cache) {
		rc = ERR_NOMEM;
		goto out;
	}
	if ((rc = collect(root, &f, hash)))
		goto out;
	if ((rc = file_mkdir_p(cache, 0700)))
		goto out;
	snprintf(rel, sizeof(rel), "distri-%s-%s.tar", name, hash);
	if (!(out = path_join(cache, rel))) {
		rc = ERR_NOMEM;
		goto out;
	}
	if (!file_exists(out)) {
		size_t n = strlen(out) + 8;
		if (!(tmp = malloc(n))) {
			rc = ERR_NOMEM;
			goto out;
		}
		snprintf(tmp, n, "%s.part", out);
		if ((rc = write_tar(root, &f, tmp)) || (rename(tmp, out) && (rc = -errno))) {
			(void)unlink(tmp);
			goto out;
		}
	}
	*path = out;
	out = NULL;
out:
	files_release(&f);
	free(root);
	free(cache);
	free(out);
	free(tmp);
	return rc;
}

int distri_git_head(const char *data_dir, const char *name, char out[GIT_HASH_MAX])
{
	char *root = distri_root(data_dir, name);
	int rc = root ? git_head(root, out) : ERR_NOMEM;

	free(root);
	return rc;
}
