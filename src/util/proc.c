/* SPDX-License-Identifier: MIT */
/* proc.c - running helper programs (qemu-img, tesseract): fork + exec with
 * the child tied to the forking thread, output collected, a time limit;
 * a process' state and how long its threads waited for a CPU (/proc). */
#include <errno.h>
#include <pwd.h>
#include <grp.h>
#include <dirent.h>
#include <dirent.h>
#include <inttypes.h>
#include <stdlib.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include "util/buf.h"
#include "util/err.h"
#include "util/proc.h"
#include "util/time.h"
#include "util/banned.h" /* last: after every system header */

/* The child's side of a fork: die with the forking thread, keep stdio on
 * the pipe, drop every other descriptor, exec. Only async-signal-safe
 * calls here. */
void proc_child_exec(char *const argv[], int out_fd, pid_t parent)
{
	int devnull;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(126); /* the parent died before prctl took effect */
	devnull = open("/dev/null", O_RDONLY);
	if (devnull >= 0)
		dup2(devnull, 0);
	if (out_fd >= 0) {
		dup2(out_fd, 1);
		dup2(out_fd, 2);
	}
	close_range(3, ~0U, 0);
	signal(SIGPIPE, SIG_DFL);
	execvp(argv[0], argv);
	{
		static const char msg[] = "exec failed: no such program or not executable\n";

		if (write(2, msg, sizeof(msg) - 1) < 0)
			_exit(127);
	}
	_exit(127);
}

int proc_run(char *const argv[], int timeout_ms, int *status, struct buf *out)
{
	int64_t deadline = time_mono_ms() + timeout_ms;
	int p[2], rc = 0;
	pid_t pid, parent = getpid();
	bool killed = false;

	*status = 0;
	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	pid = fork();
	if (pid < 0) {
		rc = -errno;
		close(p[0]);
		close(p[1]);
		return rc;
	}
	if (pid == 0)
		proc_child_exec(argv, p[1], parent);
	close(p[1]);
	for (;;) {
		struct pollfd pfd = { .fd = p[0], .events = POLLIN };
		int64_t left = deadline - time_mono_ms();
		char tmp[4096];
		ssize_t n;
		int r;

		if (left <= 0) {
			kill(pid, SIGKILL);
			killed = true;
			break;
		}
		r = poll(&pfd, 1, (int)left);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			continue;
		n = read(p[0], tmp, sizeof(tmp));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (out)
			(void)buf_append(out, tmp, (size_t)n); /* full: keep the start */
	}
	close(p[0]);
	while (waitpid(pid, status, 0) < 0 && errno == EINTR)
		;
	return killed ? ERR_TIMEOUT : rc;
}


int proc_drop_privileges(const char *user, char *err, size_t errlen)
{
	struct passwd pw, *res = NULL;
	char buf[4096];
	int e;

	e = getpwnam_r(user, &pw, buf, sizeof(buf), &res);
	if (e || !res) {
		snprintf(err, errlen, "user '%s': %s", user, e ? err_str(-e) : "no such user");
		return e ? -e : ERR_NOT_FOUND;
	}
	if (pw.pw_uid == 0) {
		snprintf(err, errlen, "user '%s' is root: name an unprivileged user", user);
		return ERR_INVALID;
	}
	/* Groups first: once the uid is gone, they can no longer be changed. */
	if (initgroups(pw.pw_name, pw.pw_gid) || setgid(pw.pw_gid) || setuid(pw.pw_uid)) {
		e = errno;
		snprintf(err, errlen, "cannot become user '%s': %s", user, err_str(-e));
		return -e;
	}
	if (setuid(0) == 0 || geteuid() == 0) {
		snprintf(err, errlen, "user '%s': root could be regained after dropping it", user);
		return ERR_INVALID;
	}
	return 0;
}

char proc_state(pid_t pid)
{
	char path[64], text[512];
	const char *rp;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%lld/stat", (long long)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return 0;
	n = read(fd, text, sizeof(text) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	text[n] = '\0';
	/* "pid (comm) S ...": comm may hold spaces and parentheses; the
	 * state follows the last ')'. */
	rp = strrchr(text, ')');
	return rp && rp[1] == ' ' && rp[2] ? rp[2] : 0;
}


int64_t proc_run_delay_ns(pid_t pid)
{
	char path[96], text[128];
	int64_t most = -1;
	struct dirent *e;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%lld/task", (long long)pid);
	if (!(d = opendir(path)))
		return -1;
	while ((e = readdir(d))) {
		unsigned long long run = 0, wait = 0;
		ssize_t n;
		int fd;

		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%lld/task/%.20s/schedstat", (long long)pid, e->d_name);
		if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
			continue; /* the thread ended meanwhile */
		n = read(fd, text, sizeof(text) - 1);
		close(fd);
		if (n <= 0)
			continue;
		text[n] = '\0';
		/* "time on a CPU, time runnable waiting for one, timeslices" (ns) */
		if (sscanf(text, "%llu %llu", &run, &wait) == 2 && (int64_t)wait > most)
			most = (int64_t)wait;
	}
	closedir(d);
	return most;
}
