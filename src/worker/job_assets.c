/* SPDX-License-Identifier: MIT */
/* job_assets.c - what a job takes in and gives out besides its results:
 * the test distribution (a tarball or git checkout, cached by content hash
 * in POOL/cache), the assets its settings name (fetched through the asset
 * cache), and after a passed run the assets it publishes (PUBLISH_HDD_n
 * disks flattened, UEFI variables, made assets) uploaded to the server.
 * Used by worker.c's job steps (worker_int.h). */
#define LOG_MODULE "worker"
#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>
#include "net/http.h"
#include "util/array.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/file.h"
#include "util/git.h"
#include "util/log.h"
#include "util/path.h"
#include "util/proc.h"
#include "util/str.h"
#include "util/time.h"
#include "worker/asset_cache.h"
#include "worker/casedir.h"
#include "worker/dev_relay.h"
#include "worker/live_relay.h"
#include "worker/snapkeep.h"
#include "worker/worker.h"
#include "worker/worker_int.h"
#include "util/banned.h" /* last: after every system header */

#define WORKER_MAX_DISKS 16

/* Extract the tar at path into dir (which must not exist yet), refusing
 * absolute names, '..' and links out. */
static int extract(const char *tar, const char *dir)
{
	struct archive *a = archive_read_new(), *disk = archive_write_disk_new();
	struct archive_entry *e;
	int rc = 0, r;

	archive_read_support_format_tar(a);
	archive_write_disk_set_options(disk, ARCHIVE_EXTRACT_SECURE_NODOTDOT | ARCHIVE_EXTRACT_SECURE_SYMLINKS |
					     ARCHIVE_EXTRACT_PERM);
	if (archive_read_open_filename(a, tar, 65536) != ARCHIVE_OK) {
		rc = ERR_PROTO;
		goto out;
	}
	while ((r = archive_read_next_header(a, &e)) == ARCHIVE_OK) {
		const char *name = archive_entry_pathname(e);
		char *full;
		const void *blk;
		size_t sz;
		int64_t off;
		/* Names stay inside dir: libarchive's checks below refuse '..' and
		 * links out; absolute names are refused here since dir is prefixed. */
		if (!name || name[0] == '/' || archive_entry_filetype(e) != AE_IFREG) {
			if (name && name[0] != '/' && archive_entry_filetype(e) == AE_IFDIR)
				continue;
			log_err("distribution archive: entry '%s' refused", name ? name : "");
			rc = ERR_PROTO;
			break;
		}
		if (!(full = path_join(dir, name))) {
			rc = ERR_NOMEM;
			break;
		}
		archive_entry_set_pathname(e, full);
		free(full);
		if (archive_write_header(disk, e) != ARCHIVE_OK) {
			log_err("distribution archive: %s", archive_error_string(disk));
			rc = ERR_PROTO;
			break;
		}
		while ((r = archive_read_data_block(a, &blk, &sz, &off)) == ARCHIVE_OK)
			if (archive_write_data_block(disk, blk, sz, off) != ARCHIVE_OK) {
				rc = ERR_IO;
				break;
			}
		if (rc)
			break;
		archive_write_finish_entry(disk);
	}
	if (!rc && r != ARCHIVE_EOF)
		rc = ERR_PROTO;
out:
	archive_read_free(a);
	archive_write_free(disk);
	return rc;
}

/* The directory of the job's test distribution: CASEDIR when it is a
 * directory on this machine or a git repository (cloned), else DISTRI from
 * the server (cached). New string. head: the commit it holds when it is a
 * git work tree ("" when not known), what openQA records as TEST_GIT_HASH. */
char *worker__distribution(struct worker *w, const json_t *settings, char head[GIT_HASH_MAX], char *why,
			   size_t whylen)
{
	const char *casedir = json_string_value(json_object_get(settings, "CASEDIR"));
	const char *distri = json_string_value(json_object_get(settings, "DISTRI"));
	char target[512], rel[400], hash[80], err[400], *dir = NULL, *part = NULL, *tar = NULL, *cache = NULL;
	long st = 0;
	json_t *j = NULL;
	int rc;

	head[0] = '\0';
	if (casedir && casedir[0] == '/' && file_is_dir(casedir)) {
		(void)git_head(casedir, head); /* "" unless a git work tree */
		return strdup(casedir);
	}
	if (casedir_is_git(casedir)) {
		/* Cloned afresh for every job, as openQA's workers do. */
		dir = path_join(w->cfg->pool, "casedir");
		if (!dir) {
			snprintf(why, whylen, "setup failure: out of memory");
			return NULL;
		}
		(void)file_remove_tree(dir);
		if (casedir_clone(casedir, dir, why, whylen)) {
			free(dir);
			return NULL;
		}
		(void)git_head(dir, head);
		return dir;
	}
	if (!distri || !*distri || strchr(distri, '/') || distri[0] == '.') {
		snprintf(why, whylen, "setup failure: the job has neither a CASEDIR on this worker nor a DISTRI");
		return NULL;
	}
	snprintf(target, sizeof(target), "/api/v1/distributions/%s", distri);
	if (worker__call(w, "GET", target, NULL, NULL, 60, &st) || st != 200 ||
	    !(j = json_loads(w->resp.data ? w->resp.data : "", 0, NULL)) ||
	    !json_string_value(json_object_get(j, "hash"))) {
		snprintf(why, whylen, "setup failure: test distribution '%s' not available from the server (HTTP %ld)",
			 distri, st);
		goto out;
	}
	snprintf(hash, sizeof(hash), "%s", json_string_value(json_object_get(j, "hash")));
	if (json_string_value(json_object_get(j, "git_hash")) &&
	    strlen(json_string_value(json_object_get(j, "git_hash"))) < GIT_HASH_MAX)
		snprintf(head, GIT_HASH_MAX, "%s", json_string_value(json_object_get(j, "git_hash")));
	cache = path_join(w->cfg->pool, "cache");
	snprintf(rel, sizeof(rel), "%s-%.16s", distri, hash);
	dir = cache ? path_join(cache, rel) : NULL;
	if (!dir || file_mkdir_p(cache, 0700))
		goto fail;
	if (file_is_dir(dir))
		goto out; /* cached: same content hash */
	snprintf(rel, sizeof(rel), "%s-%.16s.part", distri, hash);
	part = path_join(cache, rel);
	snprintf(rel, sizeof(rel), "%s-%.16s.tar", distri, hash);
	tar = path_join(cache, rel);
	if (!part || !tar)
		goto fail;
	snprintf(target, sizeof(target), "/api/v1/distributions/%s/archive", distri);
	rc = worker__download(w, target, tar, 300, &st, err, sizeof(err));
	if (rc || st != 200) {
		snprintf(why, whylen, "setup failure: downloading test distribution '%s': %s", distri,
			 rc ? err : "HTTP error");
		goto fail;
	}
	(void)file_remove_tree(part);
	if (file_mkdir_p(part, 0700) || extract(tar, part) || rename(part, dir)) {
		snprintf(why, whylen, "setup failure: unpacking test distribution '%s' failed", distri);
		(void)file_remove_tree(part);
		goto fail;
	}
	log_info("test distribution '%s' %.16s cached in %s", distri, hash, dir);
	goto out;
fail:
	free(dir);
	dir = NULL;
out:
	if (tar)
		(void)unlink(tar);
	free(tar);
	free(part);
	free(cache);
	json_decref(j);
	return dir;
}

/* The asset type a setting names, as the server sees it; NULL for others. */
static const char *asset_type(const char *key)
{
	static const struct { const char *prefix; bool numbered; const char *type; } keys[] = {
		{ "ISO", false, "iso" },    { "ISO_", true, "iso" },       { "HDD_", true, "hdd" },
		{ "UEFI_PFLASH_VARS", false, "hdd" }, { "ASSET_", true, "other" }, { "KERNEL", false, "other" },
		{ "INITRD", false, "other" },
	};
	size_t i;

	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		size_t n = strlen(keys[i].prefix);
		if (!keys[i].numbered) {
			if (!strcmp(key, keys[i].prefix))
				return keys[i].type;
		} else if (!strncmp(key, keys[i].prefix, n) && key[n] && strspn(key + n, "0123456789") == strlen(key + n)) {
			return keys[i].type;
		}
	}
	return NULL;
}

/* True for a bare asset file name (what the server's factory/ holds), not
 * a path on this worker or a ${VAR} reference. */
static bool asset_name_ok(const char *v)
{
	size_t n = v ? strlen(v) : 0;

	return n > 0 && n <= WORKER_ASSET_NAME_MAX && v[0] != '.' && strspn(v, WORKER_NAME_CHARS) == n;
}

/* The local path of asset type/name, downloaded into POOL/cache/assets
 * unless the cached copy is current (same checksum, or same size and
 * mtime when the server knows no checksum). New string, or NULL with why. */
static char *fetch_asset(struct worker *w, const char *type, const char *name, char *why, size_t whylen)
{
	char target[512], key[80], rel[400], err[400], *dir = NULL, *file = NULL, *part = NULL;
	const char *sum;
	json_t *j = NULL;
	json_int_t size;
	struct stat sb;
	long st = 0;
	int rc;

	snprintf(target, sizeof(target), "/api/v1/assets/%s/%s", type, name);
	if (worker__call(w, "GET", target, NULL, NULL, 60, &st) || st != 200 ||
	    !(j = json_loads(w->resp.data ? w->resp.data : "", 0, NULL)) || !json_is_object(j)) {
		snprintf(why, whylen, "setup failure: asset %s/%s %s", type, name,
			 st == 404 ? "not found on the server" : "could not be looked up on the server");
		goto fail;
	}
	/* A fresh asset's size is null (openQA has not looked at it yet): then
	 * nothing to compare, and the cached copy is not trusted. */
	size = json_is_integer(json_object_get(j, "size")) ? json_integer_value(json_object_get(j, "size")) : -1;
	sum = json_string_value(json_object_get(j, "checksum"));
	if (sum && strlen(sum) >= 32 && strspn(sum, "0123456789abcdef") == strlen(sum))
		snprintf(key, sizeof(key), "%.32s", sum);
	else if (size < 0)
		snprintf(key, sizeof(key), "nosize");
	else
		snprintf(key, sizeof(key), "s%lld-m%lld", (long long)size,
			 (long long)json_integer_value(json_object_get(j, "mtime")));
	snprintf(rel, sizeof(rel), "cache/assets/%s/%s", type, key);
	if (!(dir = path_join(w->cfg->pool, rel)) || !(file = path_join(dir, name)))
		goto nomem;
	if (size >= 0 && stat(file, &sb) == 0 && (json_int_t)sb.st_size == size) {
		asset_cache_touch(file);
		goto out; /* cached */
	}
	if (file_mkdir_p(dir, 0700)) {
		snprintf(why, whylen, "setup failure: cannot create the asset cache '%s'", dir);
		goto fail;
	}
	snprintf(rel, sizeof(rel), ".%s.part", name);
	if (!(part = path_join(dir, rel)))
		goto nomem;
	snprintf(target, sizeof(target), "/assets/%s/%s", type, name);
	rc = http_download(&w->http, target, part, WORKER_ASSET_TIMEOUT_S, &st, NULL, NULL, 0, err, sizeof(err));
	if (rc || st != 200 || stat(part, &sb) || (size >= 0 && (json_int_t)sb.st_size != size)) {
		snprintf(why, whylen, "setup failure: downloading asset %s/%s: %s", type, name,
			 rc ? err : st != 200 ? "HTTP error" : "size differs from the server's");
		(void)unlink(part);
		goto fail;
	}
	if (rename(part, file)) {
		snprintf(why, whylen, "setup failure: asset cache '%s': %s", file, strerror(errno));
		(void)unlink(part);
		goto fail;
	}
	log_info("asset %s/%s (%lld bytes) cached in %s", type, name, (long long)sb.st_size, dir);
	asset_cache_touch(file);
	goto out;
nomem:
	snprintf(why, whylen, "setup failure: out of memory");
fail:
	free(file);
	file = NULL;
out:
	free(dir);
	free(part);
	json_decref(j);
	return file;
}

/* Replace every bare asset name among the settings by its cached copy. 0,
 * or -1 with why. */
int worker__resolve_assets(struct worker *w, long long job_id, json_t *settings, char *why, size_t whylen)
{
	const char *key, *used[64];
	size_t n = 0;
	json_t *v, *tmp;
	int removed;

	json_object_foreach_safe(settings, tmp, key, v) {
		const char *type = asset_type(key), *name = json_string_value(v);
		char *path;
		if (!type || !asset_name_ok(name))
			continue;
		path = w->openqa ? openqa_asset(w, job_id, type, name, why, whylen)
				 : fetch_asset(w, type, name, why, whylen);
		if (!path)
			return -1;
		if (json_object_set_new(settings, key, json_string(path))) { /* the runner would look for the name */
			free(path);
			snprintf(why, whylen, "setup failure: out of memory");
			return -1;
		}
		free(path);
		if (n < sizeof(used) / sizeof(used[0]))
			used[n++] = json_string_value(json_object_get(settings, key));
	}
	/* The cache stays within its size, this job's assets kept. */
	(void)asset_cache_prune(w->cfg->pool, (int64_t)(w->cfg->asset_cache_mb > 0 ? w->cfg->asset_cache_mb
										     : ASSET_CACHE_DEFAULT_MB) << 20,
				used, n, &removed);
	return 0;
}

/* True when the job publishes a disk (PUBLISH_HDD_n) or its UEFI
 * variables (PUBLISH_PFLASH_VARS). */
bool worker__publishes(const json_t *settings)
{
	const char *pv = json_string_value(json_object_get(settings, "PUBLISH_PFLASH_VARS"));
	int n;

	if (pv && *pv)
		return true;
	for (n = 1; n <= WORKER_MAX_DISKS; n++) {
		char key[32];
		const char *v;
		snprintf(key, sizeof(key), "PUBLISH_HDD_%d", n);
		if ((v = json_string_value(json_object_get(settings, key))) && *v)
			return true;
	}
	return false;
}

/* What the job publishes is what its variables say when the run ends, as
 * isotovideo reads vars.json back before handling the assets it made: the
 * settings with the run's PUBLISH_* variables (a test's set_var) over
 * them. New reference, or NULL on OOM. */
json_t *worker__final_settings(const json_t *settings, const char *out_dir)
{
	char *path = out_dir ? path_join(out_dir, "vars.json") : NULL;
	json_t *run = path ? json_load_file(path, 0, NULL) : NULL, *all = json_deep_copy(settings), *v;
	const char *k;

	free(path);
	if (all && json_is_object(run))
		json_object_foreach(run, k, v)
			if (!strncmp(k, "PUBLISH_", 8) && json_is_string(v) && json_object_set(all, k, v)) {
				json_decref(all); /* another disk would be published */
				all = NULL;
				break;
			}
	json_decref(run);
	return all;
}

/* Upload a file as an asset ("public", or "private": the server prefixes
 * the job id), trying again while the server is away. */
static int upload_asset(struct worker *w, struct job_run *r, const char *path, const char *name, const char *scope,
			double deadline)
{
	struct buf q;
	char err[512], what[WORKER_ASSET_NAME_MAX + 32];
	long code = 0;
	int rc;

	if (w->openqa)
		return openqa_upload_asset(w, r, path, name, scope);
	buf_init(&q, 4096);
	buf_printf(&q, "/api/v1/jobs/%lld/artefact", r->id);
	http_query_add(&q, "file", name);
	http_query_add(&q, "asset", scope);
	snprintf(what, sizeof(what), "upload of asset '%s'", name);
	rc = worker__post_until(w, r, q.data, path, WORKER_ASSET_TIMEOUT_S, deadline, what, &code, err,
				sizeof(err));
	buf_release(&q);
	if (rc || code != 200) {
		log_warn("job %lld: asset '%s' not accepted: %s", r->id, name, rc ? err : (w->resp.data ? w->resp.data : ""));
		return -1;
	}
	return 0;
}

/* PUBLISH_PFLASH_VARS=NAME: the runner wrote the run's UEFI variables as
 * out/NAME (a flattened qcow2); uploaded as asset hdd/NAME, for a chained
 * child's UEFI_PFLASH_VARS. 0, or -1 with why. */
static int publish_pflash_vars(struct worker *w, struct job_run *r, const json_t *settings, double deadline,
			       char *why, size_t whylen)
{
	const char *name = json_string_value(json_object_get(settings, "PUBLISH_PFLASH_VARS"));
	char *src;
	int rc;

	if (!name || !*name)
		return 0;
	if (!asset_name_ok(name)) {
		snprintf(why, whylen, "PUBLISH_PFLASH_VARS='%s': not a valid asset name ([A-Za-z0-9._+@-], no leading '.')",
			 name);
		return -1;
	}
	src = r->out ? path_join(r->out, name) : NULL;
	if (!src || !file_exists(src)) {
		snprintf(why, whylen, "PUBLISH_PFLASH_VARS: the run wrote no UEFI variables '%s' (UEFI=1?)", name);
		free(src);
		return -1;
	}
	log_info("job %lld: publishing its UEFI variables as hdd/%s", r->id, name);
	rc = upload_asset(w, r, src, name, "public", deadline);
	if (rc)
		snprintf(why, whylen, "api failure: uploading asset hdd/%s failed", name);
	free(src);
	return rc;
}

/* After a passed run: every PUBLISH_HDD_n disk of the VM (its overlay in
 * vmdir, flattened with qemu-img convert) uploaded as asset hdd/<name>, so
 * chained children can boot from it, and PUBLISH_PFLASH_VARS. 0, or -1
 * with why. */
int worker__publish_disks(struct worker *w, struct job_run *r, const json_t *settings, const char *vmdir,
			 double deadline, char *why, size_t whylen)
{
	int n;

	for (n = 1; n <= WORKER_MAX_DISKS; n++) {
		char key[32], rel[64], out_name[WORKER_ASSET_NAME_MAX + 16], *src = NULL, *dst = NULL;
		const char *name;
		struct buf out;
		int st = 0, rc;

		snprintf(key, sizeof(key), "PUBLISH_HDD_%d", n);
		name = json_string_value(json_object_get(settings, key));
		if (!name || !*name)
			continue;
		if (!asset_name_ok(name)) {
			snprintf(why, whylen, "%s='%s': not a valid asset name ([A-Za-z0-9._+@-], no leading '.')", key, name);
			return -1;
		}
		snprintf(rel, sizeof(rel), "hd%d-overlay.qcow2", n - 1);
		snprintf(out_name, sizeof(out_name), "publish-%s", name);
		src = path_join(vmdir, rel);
		dst = path_join(r->dir, out_name);
		if (!src || !dst || !file_exists(src)) {
			snprintf(why, whylen, "%s: the VM had no disk %d to publish", key, n);
			free(src);
			free(dst);
			return -1;
		}
		{
			char *argv[] = { "qemu-img", "convert", "-O", "qcow2", src, dst, NULL };
			buf_init(&out, 4096);
			rc = proc_run(argv, WORKER_ASSET_TIMEOUT_S * 1000, &st, &out);
		}
		if (rc || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
			snprintf(why, whylen, "%s: qemu-img convert of '%s' failed: %s", key, src,
				 out.data ? out.data : err_str(rc));
			rc = -1;
		} else {
			log_info("job %lld: publishing disk %d as hdd/%s", r->id, n, name);
			rc = upload_asset(w, r, dst, name, "public", deadline);
			if (rc)
				snprintf(why, whylen, "api failure: uploading asset hdd/%s failed", name);
		}
		buf_release(&out);
		(void)unlink(dst);
		free(src);
		free(dst);
		if (rc)
			return -1;
	}
	return publish_pflash_vars(w, r, settings, deadline, why, whylen);
}

/* The assets a test made with upload_asset (the command server keeps them
 * in out/assets_public and out/assets_private), uploaded as the server's
 * assets of that scope; the type follows the name (.iso, disk images,
 * other). The number that did not arrive. */
int worker__upload_made_assets(struct worker *w, struct job_run *r, double deadline)
{
	static const char *const scopes[] = { "public", "private" };
	int failed = 0;
	size_t i;

	for (i = 0; i < sizeof(scopes) / sizeof(scopes[0]); i++) {
		char sub[32];
		char *dir;
		DIR *d;
		struct dirent *e;

		snprintf(sub, sizeof(sub), "assets_%s", scopes[i]);
		dir = r->out ? path_join(r->out, sub) : NULL;
		d = dir ? opendir(dir) : NULL;
		while (d && (e = readdir(d))) {
			char *p;

			if (e->d_name[0] == '.' || !asset_name_ok(e->d_name))
				continue;
			p = path_join(dir, e->d_name);
			if (p && file_exists(p)) {
				log_info("job %lld: uploading its %s asset '%s'", r->id, scopes[i], e->d_name);
				failed += upload_asset(w, r, p, e->d_name, scopes[i], deadline) ? 1 : 0;
			}
			free(p);
		}
		if (d)
			closedir(d);
		free(dir);
	}
	return failed;
}
