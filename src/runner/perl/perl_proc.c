/* SPDX-License-Identifier: MIT */
/* perl_proc.c - the Perl runner's test process (perl_run): OUT/vars.json,
 * the embedded bootstrap unpacked, os-autoinst's test process started on a
 * socketpair, its JSON-line messages read and answered by perl_answer
 * (perl.c) until tests_done, then its end (a grace, then signals) and the
 * results read back. */
#define LOG_MODULE "perl"
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "image/frame.h"
#include "image/needle.h"
#include "runner/prim/keys.h"
#include "runner/perl/perl.h"
#include "runner/perl/perl_int.h"
#include "runner/core/job.h"
#include "runner/prim/screen.h"
#include "runner/core/shots.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/file.h"
#include "util/log.h"
#include "util/path.h"
#include "util/proc.h"
#include "util/str.h"
#include "util/time.h"
#include "vm/serial.h"
#include "vm/vnc.h"
#include "util/banned.h" /* last: after every system header */

/* OUT/vars.json as isotovideo leaves it for the test process. */
static int write_vars(struct runner *r, char *err, size_t errlen)
{
	const char *casedir = vars_get(&r->vars, "CASEDIR");
	char *abs = casedir ? path_abs(casedir) : NULL, *vp;
	int rc = 0;

	if (abs)
		rc = vars_set(&r->vars, "CASEDIR", abs);
	if (!rc && !vars_get(&r->vars, "PRODUCTDIR"))
		rc = vars_set(&r->vars, "PRODUCTDIR", abs ? abs : r->distri_dir);
	/* both sides read the needles vigil loaded */
	if (!rc && r->needles && r->needles->dir)
		rc = vars_set(&r->vars, "NEEDLES_DIR", r->needles->dir);
	if (!rc && !vars_get(&r->vars, "BACKEND"))
		rc = vars_set(&r->vars, "BACKEND", "qemu");
	/* backend::qemu's default, which save_storage_drives reads */
	if (!rc && !vars_get(&r->vars, "NUMDISKS"))
		rc = vars_set(&r->vars, "NUMDISKS", "1");
	free(abs);
	vp = path_join(r->out_dir, "vars.json");
	if (!rc)
		rc = vp ? vars_save(&r->vars, vp) : ERR_NOMEM;
	if (rc)
		snprintf(err, errlen, "%s: %s", vp ? vp : "vars.json", err_str(rc));
	free(vp);
	return rc;
}

/* testapi's sound checks run `snd2png WAV PNG` from PATH: vigil's own
 * (cmd/snd2png.c), BOOT/bin/snd2png, first on the test process's PATH. */
static int write_snd2png(struct perl *p, char *err, size_t errlen)
{
	char self[4096], *bin = path_join(p->boot_dir, "bin"), *sh = bin ? path_join(bin, "snd2png") : NULL;
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	struct buf b;
	int rc = sh ? file_mkdir_p(bin, 0755) : ERR_NOMEM;

	buf_init(&b, 8192);
	self[n > 0 ? n : 0] = '\0';
	if (!rc && (n <= 0 || strchr(self, '\''))) {
		snprintf(err, errlen, "cannot name vigil's own binary for snd2png");
		rc = ERR_INVALID;
	} else if (!rc && (rc = buf_printf(&b, "#!/bin/sh\nexec '%s' snd2png \"$@\"\n", self)) == 0 &&
		   (rc = file_write_all(sh, b.data, b.len)) == 0 && chmod(sh, 0755)) {
		rc = -errno;
	}
	if (rc && rc != ERR_INVALID)
		snprintf(err, errlen, "cannot write '%s': %s", sh ? sh : "snd2png", err_str(rc));
	buf_release(&b);
	free(sh);
	free(bin);
	return rc;
}

static int unpack_boot(struct runner *r, struct perl *p, char *err, size_t errlen)
{
	size_t i;
	int rc = 0;

	p->boot_dir = path_join(r->workdir, "perl");
	if (!p->boot_dir)
		return ERR_NOMEM;
	for (i = 0; perl_files[i].name && !rc; i++) {
		char *path = path_join(p->boot_dir, perl_files[i].name), *dir = path ? str_dup(path) : NULL;
		if (dir && strrchr(dir, '/'))
			*strrchr(dir, '/') = '\0';
		rc = path && dir ? file_mkdir_p(dir, 0755) : ERR_NOMEM;
		if (!rc)
			rc = file_write_all(path, perl_files[i].data, perl_files[i].len);
		if (rc)
			snprintf(err, errlen, "cannot write '%s': %s", path ? path : perl_files[i].name, err_str(rc));
		free(dir);
		free(path);
	}
	if (!rc)
		rc = write_snd2png(p, err, errlen);
	return rc;
}

/* Removes dir and everything in it (the unpacked bootstrap, Inline's
 * cache), so the work directory can go, as the worker removes its pools. */
static void remove_tree(const char *dir)
{
	int rc = dir ? file_remove_tree(dir) : 0;

	if (rc)
		log_warn("could not remove '%s': %s", dir, err_str(rc));
}

/* os-autoinst's pool directory has ulogs/ beside testresults/, and
 * parse_extra_log opens "ulogs/<file>" from the test process's cwd (OUT);
 * vigil's command server keeps uploads in testresults/ulogs (docs/cmdsrv.md).
 * OUT/ulogs links there for the run and goes afterwards (unlink_ulogs). */
static void link_ulogs(struct runner *r)
{
	char *lnk = path_join(r->out_dir, "ulogs");

	if (lnk && symlink("testresults/ulogs", lnk) && errno != EEXIST)
		log_warn("cannot link '%s' to testresults/ulogs: %s", lnk, strerror(errno));
	free(lnk);
}

static void unlink_ulogs(struct runner *r)
{
	char *lnk = path_join(r->out_dir, "ulogs");
	struct stat st;

	if (lnk && lstat(lnk, &st) == 0 && S_ISLNK(st.st_mode))
		(void)unlink(lnk);
	free(lnk);
}

extern char **environ;

static int spawn(struct runner *r, struct perl *p, char *err, size_t errlen)
{
	int sv[2], logfd, nullfd;
	char *script = path_join(p->boot_dir, "vigil_autotest.pl"), *logp = path_join(r->out_dir, "autoinst-log.txt");
	char *inline_dir = NULL, *pathv = NULL, **envp = NULL;
	size_t n = 0, i, j;
	pid_t pid;

	if (!script || !logp)
		goto nomem;
	while (environ[n])
		n++;
	envp = calloc(n + 4, sizeof(*envp));
	if (!envp || asprintf(&inline_dir, "PERL_INLINE_DIRECTORY=%s/inline", r->workdir) < 0 ||
	    asprintf(&pathv, "PATH=%s/bin:%s", p->boot_dir, getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin") < 0)
		goto nomem;
	for (i = 0, j = 0; i < n; i++)
		if (strncmp(environ[i], "PATH=", 5))
			envp[j++] = environ[i];
	envp[j++] = "ANSI_COLORS_DISABLED=1";
	envp[j++] = inline_dir;
	envp[j] = pathv;
	{
		char *idir = path_join(r->workdir, "inline");
		if (idir)
			(void)file_mkdir_p(idir, 0700);
		free(idir);
	}
	logfd = open(logp, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	nullfd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (logfd < 0 || nullfd < 0 || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)) {
		snprintf(err, errlen, "cannot start perl: %s: %s", logp, strerror(errno));
		if (logfd >= 0)
			close(logfd);
		if (nullfd >= 0)
			close(nullfd);
		free(script);
		free(logp);
		free(inline_dir);
		free(pathv);
		free(envp);
		return -errno;
	}
	pid = fork();
	if (pid == 0) {
		/* only async-signal-safe calls until exec; a process group of its
		 * own: the terminal's ^C is vigil's, which ends the test process
		 * with an EOF and SIGTERM, so it saves the module as canceled */
		setpgid(0, 0);
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (sv[1] == 3) {
			int fl = fcntl(3, F_GETFD);
			fcntl(3, F_SETFD, fl & ~FD_CLOEXEC);
		} else {
			dup2(sv[1], 3);
		}
		dup2(nullfd, 0);
		dup2(logfd, 1);
		dup2(logfd, 2);
		if (chdir(r->out_dir) != 0)
			_exit(126);
		execve("/usr/bin/perl", (char *[]){ "perl", script, "3", NULL }, envp);
		_exit(127);
	}
	close(sv[1]);
	close(logfd);
	close(nullfd);
	free(logp);
	free(inline_dir);
	free(pathv);
	free(envp);
	if (pid < 0) {
		snprintf(err, errlen, "cannot start perl %s: %s", script, strerror(errno));
		free(script);
		close(sv[0]);
		return -errno;
	}
	log_info("started the test process %d: perl %s 3 (log: autoinst-log.txt)", (int)pid, script);
	free(script);
	p->fd = sv[0];
	p->pid = pid;
	return 0;
nomem:
	free(script);
	free(logp);
	free(inline_dir);
	free(pathv);
	free(envp);
	snprintf(err, errlen, "out of memory");
	return ERR_NOMEM;
}

/* Waits up to secs for the test process to exit: 1 reaped, 0 still there. */
static int reap(struct perl *p, double secs)
{
	double until = time_mono() + secs;

	while (p->pid > 0) {
		pid_t w = waitpid(p->pid, &p->status, WNOHANG);
		if (w == p->pid || (w < 0 && errno != EINTR)) {
			p->pid = -1;
			return 1;
		}
		if (time_mono() >= until)
			return 0;
		time_sleep_ms(50);
	}
	return 1;
}

static void stop_process(struct perl *p, int gentle)
{
	if (p->fd >= 0)
		close(p->fd); /* an EOF: Perl saves the running module as canceled */
	p->fd = -1;
	if (p->pid <= 0)
		return;
	if (reap(p, gentle ? PERL_EXIT_GRACE_S : 2.0))
		return;
	kill(p->pid, SIGTERM);
	if (reap(p, 5.0))
		return;
	kill(p->pid, SIGKILL);
	reap(p, 5.0);
}

/* Perl's last error in autoinst-log.txt, for an early end's reason: the
 * lines after its last log line ("[time] [level] ..."), up to 3, joined
 * with "; ". */
static void log_tail(struct runner *r, char *out, size_t len)
{
	char *path = path_join(r->out_dir, "autoinst-log.txt");
	size_t end, start, o = 0, first = 0, i;
	int nlines = 0;
	struct buf b;

	out[0] = '\0';
	buf_init(&b, 64u << 20);
	if (path && file_read_all(path, &b) == 0 && b.len) {
		/* walk back over the trailing lines that are not log lines */
		end = b.len;
		first = b.len;
		while (end > 0 && nlines < 3) {
			while (end > 0 && (b.data[end - 1] == '\n' || b.data[end - 1] == ' '))
				end--;
			start = end;
			while (start > 0 && b.data[start - 1] != '\n')
				start--;
			if (start == end || b.data[start] == '[')
				break;
			first = start;
			end = start;
			nlines++;
		}
		for (i = first; i < b.len && o + 3 < len; i++) {
			if (b.data[i] == '\n') {
				if (i + 1 < b.len && o + 3 < len) {
					out[o++] = ';';
					out[o++] = ' ';
				}
				continue;
			}
			out[o++] = b.data[i];
		}
		while (o > 0 && (out[o - 1] == ' ' || out[o - 1] == ';'))
			o--;
		out[o] = '\0';
	}
	buf_release(&b);
	free(path);
}

/* One line from the test process: answer it. 0, or negative (malformed). */
static int handle_line(struct runner *r, struct perl *p, const char *line, size_t len)
{
	json_error_t jerr;
	json_t *msg = json_loadb(line, len, 0, &jerr), *reply = NULL;
	char *text;
	size_t off, n;
	int rc = 0;

	if (!json_is_object(msg) || !json_is_string(json_object_get(msg, "cmd"))) {
		runner__abort(r, JOB_INCOMPLETE, "the Perl test process sent a malformed message (%s): %.100s",
			      msg ? "no cmd" : jerr.text, line);
		json_decref(msg);
		return ERR_PROTO;
	}
	log_debug("<<< %s", json_string_value(json_object_get(msg, "cmd")));
	if (!perl_answer(r, p, msg, &reply)) {
		json_decref(msg);
		return 0;
	}
	if (json_object_get(msg, "json_cmd_token"))
		(void)results_set_ref(&rc, reply, "json_cmd_token", json_object_get(msg, "json_cmd_token"));
	json_decref(msg);
	text = rc ? NULL : results_dumps(reply, JSON_COMPACT);
	json_decref(reply);
	if (!text)
		return ERR_NOMEM;
	n = strlen(text);
	text[n] = '\n'; /* json_dumps's NUL becomes the line end */
	for (off = 0; off < n + 1;) {
		ssize_t w = write(p->fd, text + off, n + 1 - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			rc = ERR_CLOSED;
			break;
		}
		off += (size_t)w;
	}
	free(text);
	return rc;
}

static void loop(struct runner *r, struct perl *p)
{
	char chunk[65536];

	while (!p->done && !r->abort && !r->signal) {
		struct pollfd pfd = { .fd = p->fd, .events = POLLIN };
		ssize_t n;
		char *nl;
		int rc;

		if (runner__clock(r) >= r->deadline) {
			runner__abort(r, JOB_TIMEOUT_EXCEEDED, "MAX_JOB_TIME exceeded");
			break;
		}
		if (p->scheduled && runner__vm_dead(r))
			break;
		rc = poll(&pfd, 1, PERL_POLL_MS);
		if (rc <= 0)
			continue;
		n = read(p->fd, chunk, sizeof(chunk));
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0) {
			char tail[400], how[64];
			reap(p, 5.0);
			if (p->pid > 0)
				snprintf(how, sizeof(how), "its socket closed, still running");
			else if (WIFEXITED(p->status))
				snprintf(how, sizeof(how), "exit status %d", WEXITSTATUS(p->status));
			else
				snprintf(how, sizeof(how), "signal %d", WTERMSIG(p->status));
			log_tail(r, tail, sizeof(tail));
			runner__abort(r, JOB_INCOMPLETE, "the Perl test process ended %s (%s)%s%s",
				      p->scheduled ? "without tests_done" : "before its schedule was loaded", how,
				      tail[0] ? ": " : "", tail);
			break;
		}
		if (buf_append(&p->in, chunk, (size_t)n)) {
			runner__abort(r, JOB_INCOMPLETE, "the Perl test process sent a message over %u bytes", LIMIT_PERL_MSG);
			break;
		}
		while (!p->done && !r->abort && (nl = memchr(p->in.data, '\n', p->in.len))) {
			size_t len = (size_t)(nl - p->in.data);
			rc = handle_line(r, p, p->in.data, len);
			buf_consume(&p->in, len + 1);
			if (runner__results_nomem(r, 0, ""))
				break;
			if (rc == ERR_CLOSED) {
				runner__abort(r, JOB_INCOMPLETE, "the Perl test process closed its socket");
				break;
			}
			if (runner__results_nomem(r, rc, "an answer to the Perl test process could not be made"))
				break;
			if (rc)
				break;
		}
	}
}

void perl_run(struct runner *r)
{
	struct perl p = { .fd = -1, .pid = -1, .running = -1, .ended = -1 };
	char err[1024] = "";

	buf_init(&p.in, LIMIT_PERL_MSG);
	link_ulogs(r);
	if (write_vars(r, err, sizeof(err)) || unpack_boot(r, &p, err, sizeof(err)) || spawn(r, &p, err, sizeof(err))) {
		runner__abort(r, JOB_INCOMPLETE, "%s", err[0] ? err : "out of memory");
		goto out;
	}
	loop(r, &p);
	if (!p.done)
		log_info("stopping the test process");
	stop_process(&p, p.done);
	perl__say_ended(r, &p);
	if (p.pid < 0 && p.done && !(WIFEXITED(p.status) && WEXITSTATUS(p.status) == 0))
		log_warn("the test process exited with status %d after tests_done", p.status);
	if (p.done && p.died && !r->abort)
		runner__abort(r, JOB_INCOMPLETE, "the Perl test process died: see autoinst-log.txt");
	if (p.done)
		perl_read_vars(r); /* run_all's last save */
	(void)runner__results_nomem(r, perl_load_results(r), "the Perl test process's results could not be read");
out:
	stop_process(&p, 0);
	perl__frames_release(&p);
	if (p.ref)
		frame_unref(p.ref);
	buf_release(&p.in);
	remove_tree(p.boot_dir);
	free(p.boot_dir);
	unlink_ulogs(r);
	{
		char *idir = path_join(r->workdir, "inline");
		remove_tree(idir); /* Inline::Python's cache */
		free(idir);
	}
}
