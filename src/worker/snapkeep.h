/* SPDX-License-Identifier: MIT */
/* snapkeep.h - the worker's kept VM disks: after a job that saved a
 * milestone snapshot its disks stay in POOL/snapshots/job-<id> for a time
 * and within a size cap (oldest evicted first), are listed to the server
 * with each work poll, and are copied for a job re-run from a milestone,
 * so the kept ones survive for another try. */
#ifndef VIGIL_SNAPKEEP_H
#define VIGIL_SNAPKEEP_H

#include <stddef.h>

#define SNAPKEEP_DEFAULT_S 3600
#define SNAPKEEP_DEFAULT_CAP_MB 4096
#define SNAPKEEP_MAX 256 /* kept jobs at most (the server's RERUN_MAX_HELD) */

/* Move vmdir (a job's --snapshots directory) to POOL/snapshots/job-<id>,
 * replacing an older one. 0 or -errno. */
int snapkeep_keep(const char *pool, long long job_id, const char *vmdir);

/* Delete kept disks older than keep_s seconds, then the oldest while the
 * kept ones take more than cap_mb MiB; with keep_s or cap_mb 0 all of them. */
void snapkeep_evict(const char *pool, long keep_s, long cap_mb);

/* The ids of the kept jobs, comma-separated, into out ("" for none; those
 * that do not fit are left out). */
void snapkeep_list(const char *pool, char *out, size_t outlen);

/* Copy the kept disks of job_id into dest (created; qcow2 files with
 * cp --reflink=auto, so a copy-on-write file system shares their blocks).
 * 0, ERR_NOT_FOUND (not kept), or an error. */
int snapkeep_copy(const char *pool, long long job_id, const char *dest);

#endif
