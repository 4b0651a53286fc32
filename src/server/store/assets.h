/* SPDX-License-Identifier: MIT */
/* assets.h - openQA's assets: files under DATA/factory/{iso,hdd,repo,other}
 * named by job settings (ISO, HDD_n, KERNEL, ...), registered in the assets
 * table (size, mtime, sha256 when known) and served to workers, which cache
 * them. Names are single path segments; nothing outside DATA/factory is
 * ever read, written or deleted. */
#ifndef VIGIL_ASSETS_H
#define VIGIL_ASSETS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct db;

#define LIMIT_ASSET (64ull << 30) /* one uploaded asset (a disk image) */

/* True for iso, hdd, repo, other. */
bool asset_type_valid(const char *type);

/* True for a name that stays inside its type directory: the artefact name
 * rules (1..LIMIT_ARTEFACT_NAME of [A-Za-z0-9._+@-], no leading '.'). */
bool asset_name_valid(const char *name);

/* The asset type a setting names (ISO, ISO_n → iso; HDD_n,
 * UEFI_PFLASH_VARS → hdd; REPO_n → repo; ASSET_n, KERNEL, INITRD → other),
 * or NULL for other keys. Static text. */
const char *asset_type_of_setting(const char *key);

/* The type of an uploaded file by its name, as openQA: .iso → iso;
 * .qcow2 .raw .vhd .vhdx → hdd; else other. Static text. */
const char *asset_type_of_name(const char *name);

/* DATA/factory/<type>[/<name>] (name may be NULL). New string; type and
 * name must be valid. */
char *asset_path(const char *data_dir, const char *type, const char *name);

/* Register (or refresh) type/name from the file under DATA/factory: size
 * and mtime from stat; checksum (sha256 hex) when given, else kept only if
 * the file is unchanged. job_id (0: none) becomes last_use_job_id.
 * 0 and *id; ERR_NOT_FOUND (no such file); ERR_INVALID; or a db error. */
int assets_register(struct db *db, const char *data_dir, const char *type, const char *name, const char *checksum,
		    int64_t job_id, int64_t *id);

/* The id of type/name, registering the file when it exists but has no
 * row yet (or changed). 0, ERR_NOT_FOUND, or a db error. */
int assets_find(struct db *db, const char *data_dir, const char *type, const char *name, int64_t *id);

/* The id of the row of type/name (the file is not looked at). 0 and *id,
 * ERR_NOT_FOUND, or a db error. */
int assets_id(struct db *db, const char *type, const char *name, int64_t *id);

/* One row as openQA's JSON {id, type, name, size, checksum,
 * last_use_job_id, fixed, t_created, t_updated} plus vigil's mtime into
 * *out (new object). 0, ERR_NOT_FOUND (no such row), ERR_NOMEM or a db
 * error (*out NULL). */
int assets_json(struct db *db, int64_t id, json_t **out);

/* Numbered settings (ISO_0 ... HDD_19) looked at for an asset's jobs. */
#define ASSETS_USAGE_NUMBERS 20
/* Job ids listed per asset in "last_jobs". */
#define ASSETS_USAGE_SHOWN 5

/* {"assets": [...]} ordered by id, limit/offset applied; each row also
 * has "jobs" (how many jobs name it in ISO, ISO_n, HDD_n, UEFI_PFLASH_VARS,
 * REPO_n, ASSET_n, KERNEL or INITRD, n < ASSETS_USAGE_NUMBERS, by its
 * type) and "last_jobs" (their newest ASSETS_USAGE_SHOWN ids, newest
 * first). New object, or NULL: out of memory. */
json_t *assets_list_json(struct db *db, long limit, long offset);
/* The limit of a list when none is asked for (the API's, the page's). */
#define ASSETS_LIST_DEFAULT 1000

/* Move the uploaded temporary file tmp to DATA/factory/<type>/<name>
 * (replacing it) and register it with checksum. 0 and *id, or an error. */
int assets_store(struct db *db, const char *data_dir, const char *type, const char *name, const char *tmp,
		 const char *checksum, int64_t job_id, int64_t *id);

/* Delete the row and the file. 0, ERR_NOT_FOUND, or an error. */
int assets_delete(struct db *db, const char *data_dir, int64_t id);

#endif
