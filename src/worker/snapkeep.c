/* SPDX-License-Identifier: MIT */
/* snapkeep.c - the worker's kept VM disks (POOL/snapshots/job-<id>): kept
 * after a job with a milestone snapshot, evicted by age and total size
 * (oldest first, by the directory's mtime, set when kept), listed for the
 * server, copied for a re-run. Touches nothing outside POOL/snapshots
 * and the copy's destination. */
#define LOG_MODULE "worker"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "util/err.h"
#include "util/file.h"
#include "util/log.h"
#include "util/path.h"
#include "util/proc.h"
#include "util/str.h"
#include "worker/snapkeep.h"
#include "util/banned.h" /* last: after every system header */

#define SNAPKEEP_COPY_TIMEOUT_MS (30 * 60 * 1000)

struct kept {
	long long id;
	time_t mtime;
	unsigned long long bytes;
};

static char *kept_dir(const char *pool, long long job_id)
{
	char rel[64];

	snprintf(rel, sizeof(rel), "snapshots/job-%lld", job_id);
	return path_join(pool, rel);
}

/* The kept jobs, oldest first. Number found (at most SNAPKEEP_MAX). */
static size_t scan(const char *pool, struct kept *k)
{
	char *root = path_join(pool, "snapshots");
	DIR *d = root ? opendir(root) : NULL;
	struct dirent *e;
	size_t n = 0, i, j;

	while (d && (e = readdir(d)) && n < SNAPKEEP_MAX) {
		long v;
		struct stat sb;
		char *p;
		if (strncmp(e->d_name, "job-", 4) || str_to_long(e->d_name + 4, &v) || v <= 0)
			continue;
		if (!(p = path_join(root, e->d_name)))
			continue;
		if (!stat(p, &sb) && S_ISDIR(sb.st_mode)) {
			k[n].id = v;
			k[n].mtime = sb.st_mtime;
			k[n].bytes = (unsigned long long)file_disk_bytes(p, false);
			n++;
		}
		free(p);
	}
	if (d)
		closedir(d);
	free(root);
	for (i = 1; i < n; i++) /* insertion sort: a few entries */
		for (j = i; j > 0 && k[j].mtime < k[j - 1].mtime; j--) {
			struct kept t = k[j];
			k[j] = k[j - 1];
			k[j - 1] = t;
		}
	return n;
}

int snapkeep_keep(const char *pool, long long job_id, const char *vmdir)
{
	char *root = path_join(pool, "snapshots"), *dst = kept_dir(pool, job_id);
	int rc = 0;

	if (!root || !dst) {
		rc = ERR_NOMEM;
		goto out;
	}
	if ((rc = file_mkdir_p(root, 0700)))
		goto out;
	(void)file_remove_tree(dst);
	if (rename(vmdir, dst)) {
		rc = -errno;
		goto out;
	}
	/* The age counts from now, not from when the VM made the directory. */
	(void)utimensat(AT_FDCWD, dst, NULL, 0);
	log_info("job %lld: disks kept in %s for a re-run from a milestone", job_id, dst);
out:
	free(root);
	free(dst);
	return rc;
}

void snapkeep_evict(const char *pool, long keep_s, long cap_mb)
{
	struct kept k[SNAPKEEP_MAX];
	size_t n = scan(pool, k), i;
	unsigned long long total = 0, cap = (unsigned long long)cap_mb << 20;
	time_t now = time(NULL);

	for (i = 0; i < n; i++)
		total += k[i].bytes;
	for (i = 0; i < n; i++) {
		char *dir;
		if (keep_s > 0 && cap_mb > 0 && now - k[i].mtime < keep_s && total <= cap)
			continue;
		if (!(dir = kept_dir(pool, k[i].id)))
			continue;
		(void)file_remove_tree(dir);
		log_info("job %lld: kept disks evicted (%llu MiB)", k[i].id, k[i].bytes >> 20);
		total -= k[i].bytes;
		free(dir);
	}
}

void snapkeep_list(const char *pool, char *out, size_t outlen)
{
	struct kept k[SNAPKEEP_MAX];
	size_t n = scan(pool, k), i, len = 0;

	if (outlen)
		out[0] = '\0';
	for (i = 0; i < n; i++) {
		int w = snprintf(out + len, outlen - len, "%s%lld", len ? "," : "", k[i].id);
		if (w < 0 || (size_t)w >= outlen - len) {
			out[len] = '\0';
			break;
		}
		len += (size_t)w;
	}
}

int snapkeep_copy(const char *pool, long long job_id, const char *dest)
{
	char *src = kept_dir(pool, job_id);
	DIR *d = NULL;
	struct dirent *e;
	int rc = 0;

	if (!src)
		return ERR_NOMEM;
	if (!file_is_dir(src)) {
		rc = ERR_NOT_FOUND;
		goto out;
	}
	if ((rc = file_mkdir_p(dest, 0700)) || !(d = opendir(src))) {
		rc = rc ? rc : -errno;
		goto out;
	}
	/* The disks only: the VM's sockets and logs are made afresh. */
	while (!rc && (e = readdir(d))) {
		char *from, *to;
		int st = 0;
		if (!str_ends_with(e->d_name, ".qcow2"))
			continue;
		from = path_join(src, e->d_name);
		to = path_join(dest, e->d_name);
		if (from && to) {
			char *argv[] = { "cp", "--reflink=auto", "--", from, to, NULL };
			rc = proc_run(argv, SNAPKEEP_COPY_TIMEOUT_MS, &st, NULL);
			if (!rc && (!WIFEXITED(st) || WEXITSTATUS(st)))
				rc = ERR_IO;
		} else {
			rc = ERR_NOMEM;
		}
		free(from);
		free(to);
	}
out:
	if (d)
		closedir(d);
	free(src);
	return rc;
}
