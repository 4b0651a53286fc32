/* SPDX-License-Identifier: MIT */
/* asset_cache.h - the worker's asset cache, POOL/cache/assets/<type>/<key>/
 * (one directory per version of an asset, see worker.c's fetch_asset),
 * kept within a size: each use marks an entry's time, and the entries
 * used least recently go first; the current job's never. */
#ifndef VIGIL_WORKER_ASSET_CACHE_H
#define VIGIL_WORKER_ASSET_CACHE_H

#include <stddef.h>
#include <stdint.h>

#define ASSET_CACHE_DEFAULT_MB 51200 /* openQA's CACHELIMIT: 50 GB */

/* Mark the entry holding file (a path inside it) as used now. */
void asset_cache_touch(const char *file);

/* Remove the least recently used entries of POOL/cache/assets until they
 * take at most cap_bytes, never an entry holding one of the n paths in
 * keep. The bytes left; *removed (may be NULL) gets how many entries went. */
int64_t asset_cache_prune(const char *pool, int64_t cap_bytes, const char *const *keep, size_t n, int *removed);

#endif
