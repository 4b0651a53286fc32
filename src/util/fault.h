/* SPDX-License-Identifier: MIT */
/* fault.h - the disk-full fault of the fault suite (tests/faults/), in
 * vigil's own write path: with VIGIL_FAULT_ENOSPC=PATTERN:N in the
 * environment, writes to files whose path matches the glob PATTERN (fnmatch,
 * '*' crossing '/') fail with ENOSPC once this process has written N bytes
 * to such files in all (a write that crosses N is cut short there). The util
 * file helpers, the server's upload spooling and the database (a SQLite VFS
 * over the default one, server/db/db.c) go through it; unset, it costs one
 * check per write. */
#ifndef VIGIL_UTIL_FAULT_H
#define VIGIL_UTIL_FAULT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Whether VIGIL_FAULT_ENOSPC is set (and well formed: a malformed value is
 * reported once on stderr and ignored). */
bool fault_enospc_armed(void);
/* How many of len bytes to path may be written now: len, fewer, or 0 (the
 * disk is "full": fail with ENOSPC). Counts what it allows. */
size_t fault_enospc_allow(const char *path, size_t len);
/* write(2) to fd, which is the file path, under the fault: -1 with errno
 * ENOSPC where it strikes, else what write(2) returns. */
ssize_t fault_write(int fd, const void *data, size_t len, const char *path);

#endif
