/* SPDX-License-Identifier: MIT */
/* util.c - clocks, whole-file I/O, paths and string parsing. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "util/util.h"
#include "util/err.h"

double time_mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int64_t time_mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

double time_wall(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

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
		return -ENOMEM;
	snprintf(tmp, plen + 16, "%s.tmp%ld", path, (long)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		rc = -errno;
		goto out;
	}
	while (len > 0) {
		ssize_t n = write(fd, p, len);
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

bool dir_exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

int mkdir_p(const char *path, unsigned mode)
{
	char *p = strdup(path), *s;
	int rc = 0;

	if (!p)
		return -ENOMEM;
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

char *path_join(const char *dir, const char *name)
{
	size_t dl = strlen(dir), nl = strlen(name);
	char *p;

	if (nl && name[0] == '/')
		return strdup(name);
	p = malloc(dl + nl + 2);
	if (!p)
		return NULL;
	memcpy(p, dir, dl);
	if (dl && dir[dl - 1] != '/')
		p[dl++] = '/';
	memcpy(p + dl, name, nl + 1);
	return p;
}

char *path_abs(const char *path)
{
	char cwd[PATH_MAX];
	if (path[0] == '/')
		return strdup(path);
	if (!getcwd(cwd, sizeof(cwd)))
		return NULL;
	return path_join(cwd, path);
}

char *path_stem(const char *path, const char *ext)
{
	const char *b = strrchr(path, '/');
	size_t len;
	char *s;

	b = b ? b + 1 : path;
	len = strlen(b);
	if (ext && str_ends_with(b, ext))
		len -= strlen(ext);
	s = malloc(len + 1);
	if (!s)
		return NULL;
	memcpy(s, b, len);
	s[len] = '\0';
	return s;
}

char *path_dir(const char *path)
{
	const char *b = strrchr(path, '/');
	char *s;
	if (!b)
		return strdup(".");
	if (b == path)
		return strdup("/");
	s = malloc((size_t)(b - path) + 1);
	if (!s)
		return NULL;
	memcpy(s, path, (size_t)(b - path));
	s[b - path] = '\0';
	return s;
}

char *xstrdup(const char *s)
{
	char *p = strdup(s ? s : "");
	if (!p)
		abort();
	return p;
}

bool str_ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);
	return a >= b && memcmp(s + a - b, suffix, b) == 0;
}

bool str_starts_with(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

int str_to_long(const char *s, long *out)
{
	char *end;
	long v;
	if (!s || !*s)
		return ERR_INVALID;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end)
		return ERR_INVALID;
	*out = v;
	return 0;
}

int str_to_double(const char *s, double *out)
{
	char *end;
	double v;
	if (!s || !*s)
		return ERR_INVALID;
	errno = 0;
	v = strtod(s, &end);
	if (errno || *end)
		return ERR_INVALID;
	*out = v;
	return 0;
}
