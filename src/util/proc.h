/* SPDX-License-Identifier: MIT */
/* proc.h - running helper programs: fork + exec, output, time limit; a
 * process' state and how long it waited for a CPU; and giving up root for a named user. */
#ifndef VIGIL_PROC_H
#define VIGIL_PROC_H

#include <stdint.h>
#include <sys/types.h>
#include "util/buf.h"

/* The child's side of a fork: PR_SET_PDEATHSIG(SIGKILL) (fires when the
 * forking *thread* exits), stdin from /dev/null, stdout and stderr to
 * out_fd (if >= 0), every other descriptor closed, then execvp. Never
 * returns. Async-signal-safe. */
void proc_child_exec(char *const argv[], int out_fd, pid_t parent) __attribute__((noreturn));

/* Run argv (PATH searched), collect stdout and stderr into out (may be
 * NULL; when full the start is kept), kill it at timeout_ms. *status gets
 * the wait status. 0, ERR_TIMEOUT (killed), or -errno. */
int proc_run(char *const argv[], int timeout_ms, int *status, struct buf *out);

/* The state letter of process pid from /proc/<pid>/stat (R, S, D, T for
 * stopped by a signal, t for stopped by a tracer, Z, ...), or 0 when it
 * cannot be read (no such process). */
char proc_state(pid_t pid);

/* How long the thread of process pid that waited longest for a CPU has
 * waited, in nanoseconds: the largest run_delay (time runnable but not
 * running, the second field of /proc/<pid>/task/<tid>/schedstat) over its
 * threads; -1 when it cannot be read (no such process, no schedstat). */
int64_t proc_run_delay_ns(pid_t pid);

/* Become user (a name from the password database): its groups, its gid,
 * its uid, and check that root cannot be regained. 0, or ERR_NOT_FOUND
 * (no such user), ERR_INVALID (the user is root) or -errno, with err. */
int proc_drop_privileges(const char *user, char *err, size_t errlen);

#endif
