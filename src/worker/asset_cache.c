/* SPDX-License-Identifier: MIT */
/* asset_cache.c - the worker's asset cache kept within its size (see
 * asset_cache.h): entries are POOL/cache/assets/<type>/<key>/ directories,
 * their time of last use the directory's mtime, set on each use. */
#define LOG_MODULE "worker"
#include <dirent.h>
#include <stdbool.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "util/file.h"
#include "util/log.h"
#include "util/path.h"
#include "worker/asset_cache.h"
#include "util/banned.h" /* last: after every system header */

void asset_cache_touch(const char *file)
{
	char *dir = path_dir(file);

	if (dir)
		(void)utimensat(AT_FDCWD, dir, NULL, 0);
	free(dir);
}

struct entry {
	char *dir;
	int64_t bytes;
	struct timespec used;
};

static int by_use(const void *x, const void *y)
{
	const struct entry *a = x, *b = y;

	if (a->used.tv_sec != b->used.tv_sec)
		return a->used.tv_sec < b->used.tv_sec ? -1 : 1;
	return a->used.tv_nsec < b->used.tv_nsec ? -1 : a->used.tv_nsec > b->used.tv_nsec;
}

static bool kept(const char *dir, const char *const *keep, size_t n)
{
	size_t len = strlen(dir), i;

	for (i = 0; i < n; i++)
		if (keep[i] && !strncmp(keep[i], dir, len) && keep[i][len] == '/')
			return true;
	return false;
}

int64_t asset_cache_prune(const char *pool, int64_t cap_bytes, const char *const *keep, size_t n, int *removed)
{
	char *root = path_join(pool, "cache/assets");
	struct entry *ents = NULL;
	size_t cnt = 0, cap = 0, i;
	int64_t total = 0;
	struct dirent *t;
	DIR *types;

	if (removed)
		*removed = 0;
	if (!root || !(types = opendir(root))) {
		free(root);
		return 0;
	}
	while ((t = readdir(types))) {
		char *tdir = t->d_name[0] == '.' ? NULL : path_join(root, t->d_name);
		struct dirent *k;
		DIR *keys = tdir ? opendir(tdir) : NULL;
		while (keys && (k = readdir(keys))) {
			struct stat sb;
			char *kdir = k->d_name[0] == '.' ? NULL : path_join(tdir, k->d_name);
			if (kdir && !lstat(kdir, &sb) && S_ISDIR(sb.st_mode)) {
				if (cnt == cap) {
					struct entry *m = realloc(ents, (cap = cap ? 2 * cap : 32) * sizeof(*ents));
					if (!m) {
						free(kdir);
						break;
					}
					ents = m;
				}
				ents[cnt] = (struct entry){ kdir, (int64_t)file_disk_bytes(kdir, false), sb.st_mtim };
				total += ents[cnt++].bytes;
				kdir = NULL;
			}
			free(kdir);
		}
		if (keys)
			closedir(keys);
		free(tdir);
	}
	closedir(types);
	qsort(ents, cnt, sizeof(*ents), by_use);
	for (i = 0; i < cnt && total > cap_bytes; i++) {
		if (kept(ents[i].dir, keep, n))
			continue;
		if (file_remove_tree(ents[i].dir)) {
			log_warn("asset cache: cannot remove %s: %s", ents[i].dir, strerror(errno));
			continue;
		}
		total -= ents[i].bytes;
		if (removed)
			(*removed)++;
		log_info("asset cache: %s removed (%lld bytes, least recently used; the cache keeps %lld MiB)",
			 ents[i].dir, (long long)ents[i].bytes, (long long)(cap_bytes >> 20));
	}
	for (i = 0; i < cnt; i++)
		free(ents[i].dir);
	free(ents);
	free(root);
	return total;
}
