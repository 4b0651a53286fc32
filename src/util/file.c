/* SPDX-License-Identifier: MIT */
/* file.c - whole-file reads under a buffer's limit, atomic whole-file
 * writes (temporary file + rename; under VIGIL_FAULT_ENOSPC, fault.h),
 * existence checks and mkdir -p, a file's digest (OpenSSL's EVP). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "util/err.h"
#include "util/fault.h"
#include "util/file.h"
#include "util/path.h"
#include "util/banned.h" /* last: after every system header */

int file_read_all(const char *path, struct buf *b)
{
	char chunk[65536];
	int fd, rc = 0;
	ssize_t n;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	for (;;) {
		n = read(fd, chunk, sizeof(chunk));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			rc = -errno;
			break;
		}
		if (n == 0)
			break;
		rc = buf_append(b, chunk, (size_t)n);
		if (rc)
			break;
	}
	close(fd);
	if (!rc && !b->data)
		rc = buf_append(b, "", 0);
	return rc;
}

int file_write_all(const char *path, const void *data, size_t len)
{
	char *tmp;
	size_t plen = strlen(path);
	const char *p = data;
	int fd, rc = 0;

	tmp = malloc(plen + 16);
	if (!tmp)
		return ERR_NOMEM;
	snprintf(tmp, plen + 16, "%s.tmp%ld", path, (long)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		rc = -errno;
		goto out;
	}
	while (len > 0) {
		ssize_t n = fault_write(fd, p, len, path);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			rc = -errno;
			break;
		}
		p += n;
		len -= (size_t)n;
	}
	if (close(fd) != 0 && !rc)
		rc = -errno;
	if (!rc && rename(tmp, path) != 0)
		rc = -errno;
	if (rc)
		unlink(tmp);
out:
	free(tmp);
	return rc;
}

bool file_exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

bool file_is_dir(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

int file_mkdir_p(const char *path, unsigned mode)
{
	char *p = strdup(path), *s;
	int rc = 0;

	if (!p)
		return ERR_NOMEM;
	for (s = p + 1; ; s++) {
		if (*s == '/' || *s == '\0') {
			char c = *s;
			*s = '\0';
			if (mkdir(p, mode) != 0 && errno != EEXIST) {
				rc = -errno;
				break;
			}
			*s = c;
			if (!c)
				break;
		}
	}
	free(p);
	return rc;
}

int file_dir_within(const char *root, const char *dir)
{
	char *r = realpath(root, NULL), *d = realpath(dir, NULL);
	size_t rl;
	int rc;

	if (!r || !d) {
		rc = -errno;
		goto out;
	}
	rl = strlen(r);
	/* "/" as root holds everything; else a prefix ending at a separator. */
	rc = (rl == 1 || (!strncmp(d, r, rl) && (d[rl] == '/' || d[rl] == '\0'))) ? 0 : ERR_INVALID;
out:
	free(r);
	free(d);
	return rc;
}

int file_remove_tree(const char *path)
{
	struct dirent *e;
	struct stat sb;
	int rc = 0;
	DIR *d;

	if (lstat(path, &sb))
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISDIR(sb.st_mode))
		return unlink(path) && errno != ENOENT ? -errno : 0;
	if (!(d = opendir(path)))
		return -errno;
	while ((e = readdir(d))) {
		char *p;
		int r;
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (!(p = path_join(path, e->d_name))) {
			rc = rc ? rc : ERR_NOMEM;
			continue;
		}
		if ((r = file_remove_tree(p)) && !rc)
			rc = r;
		free(p);
	}
	closedir(d);
	if (rmdir(path) && errno != ENOENT && !rc)
		rc = -errno;
	return rc;
}

long long file_disk_bytes(const char *dir, bool recursive)
{
	struct dirent *e;
	long long sum = 0;
	DIR *d = opendir(dir);

	if (!d)
		return 0;
	while ((e = readdir(d))) {
		struct stat sb;
		char *p;
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (!(p = path_join(dir, e->d_name)))
			continue;
		if (!lstat(p, &sb)) {
			if (S_ISREG(sb.st_mode))
				sum += (long long)sb.st_blocks * 512;
			else if (recursive && S_ISDIR(sb.st_mode))
				sum += file_disk_bytes(p, true);
		}
		free(p);
	}
	closedir(d);
	return sum;
}

int file_hash_update(EVP_MD_CTX *ctx, int fd)
{
	unsigned char chunk[65536];
	ssize_t got;

	while ((got = read(fd, chunk, sizeof(chunk))) != 0) {
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return -errno;
		if (!EVP_DigestUpdate(ctx, chunk, (size_t)got))
			return ERR_NOMEM;
	}
	return 0;
}

int file_hash_fd(int fd, enum file_hash_alg alg, unsigned char md[FILE_HASH_MAX], unsigned *len)
{
	unsigned char all[EVP_MAX_MD_SIZE];
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	int rc = ERR_NOMEM;

	*len = 0;
	if (!ctx || !EVP_DigestInit_ex(ctx, alg == FILE_HASH_MD5 ? EVP_md5() : EVP_sha256(), NULL))
		goto out;
	if ((rc = file_hash_update(ctx, fd)))
		goto out;
	rc = EVP_DigestFinal_ex(ctx, all, len) && *len <= FILE_HASH_MAX ? 0 : ERR_NOMEM;
	if (!rc)
		memcpy(md, all, *len);
out:
	EVP_MD_CTX_free(ctx);
	return rc;
}

int file_hash(const char *path, enum file_hash_alg alg, unsigned char md[FILE_HASH_MAX], unsigned *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc;

	*len = 0;
	if (fd < 0)
		return -errno;
	rc = file_hash_fd(fd, alg, md, len);
	close(fd);
	return rc;
}

void file_hash_hex(const unsigned char *md, unsigned len, char *hex)
{
	static const char digits[] = "0123456789abcdef";
	unsigned i;

	for (i = 0; i < len; i++) {
		hex[2 * i] = digits[md[i] >> 4];
		hex[2 * i + 1] = digits[md[i] & 15];
	}
	hex[2 * len] = '\0';
}
