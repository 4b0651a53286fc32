/* SPDX-License-Identifier: MIT */
/* assets.c - the assets table and DATA/factory: validated types and names,
 * registration from stat (size, mtime; the sha256 of uploads, hashed while
 * they stream in), openQA's JSON rows, storing uploads, deleting. Never
 * hashes a file on the caller's thread: a checksum is either given or
 * absent, and workers then key their cache by size and mtime. */
#define LOG_MODULE "assets"
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "server/store/artefacts.h"
#include "server/store/assets.h"
#include "server/store/jbuild.h"
#include "server/db/db.h"
#include "util/err.h"
#include "util/file.h"
#include "util/log.h"
#include "util/path.h"
#include "util/str.h"
#include "util/banned.h" /* last: after every system header */

static const char *const types[] = { "iso", "hdd", "repo", "other", NULL };

bool asset_type_valid(const char *type)
{
	size_t i;

	for (i = 0; type && types[i]; i++)
		if (!strcmp(type, types[i]))
			return true;
	return false;
}

bool asset_name_valid(const char *name)
{
	return name && artefact_name_valid(name, strlen(name));
}

/* True when key is prefix followed by one or more digits only. */
static bool numbered(const char *key, const char *prefix)
{
	size_t n = strlen(prefix);
	const char *p;

	if (strncmp(key, prefix, n) || !key[n])
		return false;
	for (p = key + n; *p; p++)
		if (!isdigit((unsigned char)*p))
			return false;
	return true;
}

const char *asset_type_of_setting(const char *key)
{
	if (!key)
		return NULL;
	if (!strcmp(key, "ISO") || numbered(key, "ISO_"))
		return "iso";
	if (numbered(key, "HDD_") || !strcmp(key, "UEFI_PFLASH_VARS"))
		return "hdd";
	if (numbered(key, "REPO_"))
		return "repo";
	if (numbered(key, "ASSET_") || !strcmp(key, "KERNEL") || !strcmp(key, "INITRD"))
		return "other";
	return NULL;
}

const char *asset_type_of_name(const char *name)
{
	if (str_ends_with(name, ".iso"))
		return "iso";
	if (str_ends_with(name, ".qcow2") || str_ends_with(name, ".raw") || str_ends_with(name, ".vhd") ||
	    str_ends_with(name, ".vhdx"))
		return "hdd";
	return "other";
}

char *asset_path(const char *data_dir, const char *type, const char *name)
{
	char rel[32 + LIMIT_ARTEFACT_NAME];

	if (!asset_type_valid(type) || (name && !asset_name_valid(name)))
		return NULL;
	if (name)
		snprintf(rel, sizeof(rel), "factory/%s/%s", type, name);
	else
		snprintf(rel, sizeof(rel), "factory/%s", type);
	return path_join(data_dir, rel);
}

int assets_register(struct db *db, const char *data_dir, const char *type, const char *name, const char *checksum,
		    int64_t job_id, int64_t *id)
{
	char *path = asset_path(data_dir, type, name), now[DB_TIME_LEN];
	struct stat st;
	int rc;

	if (!path)
		return asset_type_valid(type) && asset_name_valid(name) ? ERR_NOMEM : ERR_INVALID;
	if (stat(path, &st) || !S_ISREG(st.st_mode)) {
		free(path);
		return ERR_NOT_FOUND;
	}
	free(path);
	db_now(now);
	/* A changed file loses a checksum nobody vouched for. */
	rc = db_exec(db,
		     "INSERT INTO assets (type, name, size, mtime_s, checksum, last_use_job_id, t_created, t_updated)"
		     " VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (type, name) DO UPDATE SET"
		     " checksum = CASE WHEN excluded.checksum IS NOT NULL THEN excluded.checksum"
		     " WHEN assets.size = excluded.size AND assets.mtime_s = excluded.mtime_s THEN assets.checksum END,"
		     " size = excluded.size, mtime_s = excluded.mtime_s,"
		     " last_use_job_id = COALESCE(excluded.last_use_job_id, assets.last_use_job_id),"
		     " t_updated = excluded.t_updated",
		     "ttiitItt", type, name, (int64_t)st.st_size, (int64_t)st.st_mtime, checksum, job_id, now, now);
	if (rc < 0)
		return rc;
	return db_query_int(db, id, "SELECT id FROM assets WHERE type = ? AND name = ?", "tt", type, name);
}

int assets_find(struct db *db, const char *data_dir, const char *type, const char *name, int64_t *id)
{
	char *path = asset_path(data_dir, type, name);
	struct stat st;
	int64_t size = -1, mtime = -1;
	struct db_stmt *q;
	int rc, exists;

	if (!path)
		return ERR_NOT_FOUND;
	exists = stat(path, &st) == 0 && S_ISREG(st.st_mode);
	free(path);
	if ((rc = db_prepare(db, &q, "SELECT id, size, mtime_s FROM assets WHERE type = ? AND name = ?", "tt", type,
			     name)))
		return rc;
	rc = db_step(q);
	if (rc == 1) {
		*id = db_col_int(q, 0);
		size = db_col_null(q, 1) ? -1 : db_col_int(q, 1);
		mtime = db_col_int(q, 2);
	}
	db_finalize(q);
	if (rc < 0)
		return rc;
	if (!exists)
		return rc == 1 ? 0 : ERR_NOT_FOUND; /* a registered asset whose file is gone: size says so */
	if (rc == 1 && size == (int64_t)st.st_size && mtime == (int64_t)st.st_mtime)
		return 0;
	/* Placed under factory/ by hand, or replaced: (re)register from stat. */
	return assets_register(db, data_dir, type, name, NULL, 0, id);
}

/* One row, or NULL: out of memory. */
static json_t *row_json(struct db_stmt *q)
{
	struct jbuild b = JBUILD_INIT;
	json_t *a = json_object();
	static const char *const texts[] = { "type", "name" };
	size_t i;

	if (!a)
		return NULL;
	jbuild_set(&b, a, "id", json_integer(db_col_int(q, 0)));
	for (i = 0; i < 2; i++)
		jbuild_set(&b, a, texts[i], json_string(db_col_text(q, 1 + (int)i)));
	jbuild_set(&b, a, "size", db_col_null(q, 3) ? json_null() : json_integer(db_col_int(q, 3)));
	jbuild_set(&b, a, "checksum", db_col_text(q, 4) ? json_string(db_col_text(q, 4)) : json_null());
	jbuild_set(&b, a, "last_use_job_id", db_col_null(q, 5) ? json_null() : json_integer(db_col_int(q, 5)));
	jbuild_set(&b, a, "fixed", json_integer(db_col_int(q, 6)));
	/* openQA's raw rows carry "YYYY-MM-DD HH:MM:SS". */
	for (i = 0; i < 2; i++) {
		char t[DB_TIME_LEN];
		snprintf(t, sizeof(t), "%s", db_col_text(q, 7 + (int)i) ? db_col_text(q, 7 + (int)i) : "");
		if (t[10] == 'T')
			t[10] = ' ';
		jbuild_set(&b, a, i ? "t_updated" : "t_created", json_string(t));
	}
	jbuild_set(&b, a, "mtime", json_integer(db_col_int(q, 9)));
	return jbuild_done(&b, a);
}

#define ASSET_COLS "id, type, name, size, checksum, last_use_job_id, fixed, t_created, t_updated, mtime_s"

int assets_json(struct db *db, int64_t id, json_t **out)
{
	struct db_stmt *q;
	int rc;

	*out = NULL;
	if ((rc = db_prepare(db, &q, "SELECT " ASSET_COLS " FROM assets WHERE id = ?", "i", id)))
		return rc;
	if ((rc = db_step(q)) == 1)
		*out = row_json(q);
	db_finalize(q);
	if (rc < 0)
		return rc;
	return rc == 0 ? ERR_NOT_FOUND : *out ? 0 : ERR_NOMEM;
}

/* The settings that can name an asset of type, as an SQL list of constant
 * keys ('ISO', 'ISO_0', ... 'ISO_<ASSETS_USAGE_NUMBERS - 1>'): exact keys,
 * so the (key, value) index finds the jobs with one look-up each. */
static void usage_keys(const char *type, char *out, size_t len)
{
	static const struct {
		const char *type, *plain, *numbered;
	} fam[] = {
		{ "iso", "'ISO'", "ISO_" },
		{ "hdd", "'UEFI_PFLASH_VARS'", "HDD_" },
		{ "repo", NULL, "REPO_" },
		{ "other", "'KERNEL', 'INITRD'", "ASSET_" },
	};
	size_t i, used = 0;
	int k;

	out[0] = '\0';
	for (i = 0; i < sizeof(fam) / sizeof(fam[0]); i++) {
		if (strcmp(fam[i].type, type))
			continue;
		if (fam[i].plain)
			used += (size_t)snprintf(out + used, len - used, "%s", fam[i].plain);
		for (k = 0; k < ASSETS_USAGE_NUMBERS && used < len; k++)
			used += (size_t)snprintf(out + used, len - used, "%s'%s%d'", used ? ", " : "", fam[i].numbered, k);
	}
}

/* Add "jobs" (how many jobs name the asset in their settings) and
 * "last_jobs" (the newest ASSETS_USAGE_SHOWN of their ids) to a row. */
static void add_usage(struct db *db, struct jbuild *b, json_t *a)
{
	const char *type = json_string_value(json_object_get(a, "type")), *name = json_string_value(json_object_get(a, "name"));
	char keys[1024], sql[1400];
	json_t *ids = jbuild_take(b, json_array(), "last_jobs");
	struct db_stmt *q;
	int64_t n = 0;

	if (!ids)
		return;
	usage_keys(type ? type : "", keys, sizeof(keys));
	if (keys[0] && name) {
		/* keys holds constant text only; the name is bound. */
		snprintf(sql, sizeof(sql), "SELECT COUNT(DISTINCT job_id) FROM job_settings WHERE key IN (%s) AND value = ?",
			 keys);
		(void)db_query_int(db, &n, sql, "t", name); /* on error the row shows no usage */
		snprintf(sql, sizeof(sql),
			 "SELECT DISTINCT job_id FROM job_settings WHERE key IN (%s) AND value = ? ORDER BY job_id DESC LIMIT ?",
			 keys);
		if (n > 0 && !db_prepare(db, &q, sql, "ti", name, (int64_t)ASSETS_USAGE_SHOWN)) {
			while (!jbuild_failed(b) && db_step(q) == 1)
				jbuild_append(b, ids, json_integer(db_col_int(q, 0)));
			db_finalize(q);
		}
	}
	jbuild_set(b, a, "jobs", json_integer(n));
	jbuild_set(b, a, "last_jobs", ids);
}

json_t *assets_list_json(struct db *db, long limit, long offset)
{
	struct jbuild b = JBUILD_INIT;
	json_t *list = jbuild_take(&b, json_array(), "assets");
	struct db_stmt *q;

	if (list && !db_prepare(db, &q, "SELECT " ASSET_COLS " FROM assets ORDER BY id LIMIT ? OFFSET ?", "ii",
				(int64_t)limit, (int64_t)offset)) {
		while (!jbuild_failed(&b) && db_step(q) == 1)
			jbuild_append(&b, list, row_json(q));
		db_finalize(q);
	}
	/* After the rows are read: one statement at a time per connection. */
	{
		size_t i;
		json_t *a;
		json_array_foreach(list, i, a)
			if (!jbuild_failed(&b))
				add_usage(db, &b, a);
	}
	if (jbuild_failed(&b)) {
		json_decref(list);
		return NULL;
	}
	return json_pack("{s:o}", "assets", list);
}

int assets_store(struct db *db, const char *data_dir, const char *type, const char *name, const char *tmp,
		 const char *checksum, int64_t job_id, int64_t *id)
{
	char *dir = asset_path(data_dir, type, NULL), *dest = asset_path(data_dir, type, name);
	int rc;

	if (!dir || !dest) {
		rc = ERR_INVALID;
		goto out;
	}
	if ((rc = file_mkdir_p(dir, 0755)))
		goto out;
	if ((rc = file_dir_within(data_dir, dir))) {
		log_err("asset %s/%s refused: '%s' leads out of the data directory (a symbolic link?)", type, name, dir);
		goto out;
	}
	if (rename(tmp, dest)) {
		rc = -errno;
		goto out;
	}
	(void)chmod(dest, 0644);
	rc = assets_register(db, data_dir, type, name, checksum, job_id, id);
	if (!rc)
		log_info("asset %s/%s stored (job %lld)", type, name, (long long)job_id);
out:
	free(dir);
	free(dest);
	return rc;
}

int assets_delete(struct db *db, const char *data_dir, int64_t id)
{
	struct db_stmt *q;
	char type[16] = "", name[LIMIT_ARTEFACT_NAME + 1] = "", *path;
	int rc;

	if ((rc = db_prepare(db, &q, "SELECT type, name FROM assets WHERE id = ?", "i", id)))
		return rc;
	rc = db_step(q);
	if (rc == 1) {
		snprintf(type, sizeof(type), "%s", db_col_text(q, 0));
		snprintf(name, sizeof(name), "%s", db_col_text(q, 1));
	}
	db_finalize(q);
	if (rc != 1)
		return rc == 0 ? ERR_NOT_FOUND : rc;
	path = asset_path(data_dir, type, name);
	if (path && unlink(path) && errno != ENOENT)
		log_warn("asset %s/%s: cannot remove '%s': %s", type, name, path, strerror(errno));
	free(path);
	rc = db_exec(db, "DELETE FROM assets WHERE id = ?", "i", id);
	return rc < 0 ? rc : 0;
}

int assets_id(struct db *db, const char *type, const char *name, int64_t *id)
{
	return db_query_int(db, id, "SELECT id FROM assets WHERE type = ? AND name = ?", "tt", type, name);
}
