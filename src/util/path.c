/* SPDX-License-Identifier: MIT */
/* path.c - path strings: join, absolute form, stem, directory part. Each
 * result is a new string the caller frees; nothing touches the disk. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "util/path.h"
#include "util/str.h"
#include "util/banned.h" /* last: after every system header */

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
