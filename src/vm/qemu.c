/* SPDX-License-Identifier: MIT */
/* qemu.c - the QEMU process: disk overlays, spawn with captured output,
 * stop and reap, exit reason. Owns the child and its output pipe; the VM
 * must never outlive vigil (PDEATHSIG, same process group). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <jansson.h>
#define LOG_MODULE "qemu"
#include "util/buf.h"
#include "util/err.h"
#include "util/file.h"
#include "util/log.h"
#include "util/path.h"
#include "util/proc.h"
#include "util/time.h"
#include "vm/qemu.h"
#include "vm/qmp.h"
#include "util/banned.h" /* last: after every system header */

#define QEMU_TAIL_LINES 8
#define QEMU_LINE_MAX 512

struct qemu {
	pid_t pid;
	pid_t tpm_pid;           /* our swtpm child, or 0 */
	char *tpm_lock;          /* its lock file in the workdir, removed after */
	int out_fd;              /* read end of QEMU's stdout/stderr */
	pthread_t reader;
	bool reader_started;
	int stop;                /* atomic: reader should end */
	pthread_mutex_t lock;    /* below */
	bool exited;
	bool eof;                /* the reader saw the end of QEMU's output */
	int status;              /* wait status once exited */
	char tail[QEMU_TAIL_LINES][QEMU_LINE_MAX];
	int tail_next, tail_count;
	int64_t starved_ns;      /* the most proc_run_delay_ns has said (lock) */
	int64_t starved_read_ms; /* when it was last read (lock) */
};

static int qemu_img(char *const argv[], char *err, size_t errlen)
{
	struct buf out;
	int status, rc;

	buf_init(&out, 64 * 1024);
	rc = proc_run(argv, 60000, &status, &out);
	if (rc == 0 && !(WIFEXITED(status) && WEXITSTATUS(status) == 0))
		rc = ERR_IO;
	if (rc < 0)
		snprintf(err, errlen, "qemu-img %s failed: %s", argv[1],
			 out.data ? out.data : err_str(rc));
	buf_release(&out);
	return rc;
}

/* The format of an existing disk image, by qemu-img info. New string. */
static char *detect_format(const char *path, char *err, size_t errlen)
{
	char *argv[] = { "qemu-img", "info", "--output=json", (char *)path, NULL };
	struct buf out;
	json_t *j = NULL;
	char *fmt = NULL;
	int status, rc;

	buf_init(&out, 1u << 20);
	rc = proc_run(argv, 30000, &status, &out);
	if (rc == 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0 && out.data)
		j = json_loads(out.data, 0, NULL);
	if (j && json_is_string(json_object_get(j, "format")))
		fmt = strdup(json_string_value(json_object_get(j, "format")));
	else
		snprintf(err, errlen, "cannot tell the format of disk image '%s': %s", path,
			 out.data ? out.data : "qemu-img info failed");
	json_decref(j);
	buf_release(&out);
	return fmt;
}

int qemu_prepare_disks(const struct qemu_cmd *cmd, char *err, size_t errlen)
{
	size_t i;

	for (i = 0; i < cmd->noverlays; i++) {
		const struct qemu_overlay *o = &cmd->overlays[i];
		char *fmt = NULL;
		int rc;

		(void)unlink(o->path);
		if (o->backing) {
			char *argv[] = { "qemu-img", "create", "-q", "-f", "qcow2", "-F", NULL,
					 "-b", o->backing, o->path, NULL };

			if (!file_exists(o->backing)) {
				snprintf(err, errlen, "disk image '%s' does not exist", o->backing);
				return ERR_NOT_FOUND;
			}
			fmt = o->backing_fmt ? strdup(o->backing_fmt) : detect_format(o->backing, err, errlen);
			if (!fmt)
				return o->backing_fmt ? ERR_NOMEM : ERR_INVALID;
			argv[6] = fmt;
			rc = qemu_img(argv, err, errlen);
			free(fmt);
		} else {
			char *argv[] = { "qemu-img", "create", "-q", "-f", "qcow2", o->path,
					 o->size ? o->size : "10G", NULL };

			rc = qemu_img(argv, err, errlen);
		}
		if (rc < 0)
			return rc;
		log_debug("created '%s'", o->path);
	}
	return 0;
}

/* Reap without blocking; caller holds the lock. */
static bool reap_locked(struct qemu *q)
{
	int st;

	if (q->exited)
		return true;
	if (waitpid(q->pid, &st, WNOHANG) == q->pid) {
		q->exited = true;
		q->status = st;
	}
	return q->exited;
}

static void *reader_main(void *arg)
{
	struct qemu *q = arg;
	char line[QEMU_LINE_MAX];
	size_t len = 0;

	while (!__atomic_load_n(&q->stop, __ATOMIC_ACQUIRE)) {
		struct pollfd pfd = { .fd = q->out_fd, .events = POLLIN };
		char tmp[4096];
		ssize_t n, i;
		int r = poll(&pfd, 1, 200);

		if (r <= 0)
			continue;
		n = read(q->out_fd, tmp, sizeof(tmp));
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0)
			break;
		for (i = 0; i < n; i++) {
			if (tmp[i] != '\n' && len < sizeof(line) - 1) {
				line[len++] = tmp[i];
				continue;
			}
			if (tmp[i] != '\n')
				continue; /* over-long line: the rest is dropped */
			line[len] = '\0';
			log_info("qemu: %s", line);
			pthread_mutex_lock(&q->lock);
			snprintf(q->tail[q->tail_next], QEMU_LINE_MAX, "%s", line);
			q->tail_next = (q->tail_next + 1) % QEMU_TAIL_LINES;
			if (q->tail_count < QEMU_TAIL_LINES)
				q->tail_count++;
			pthread_mutex_unlock(&q->lock);
			len = 0;
		}
	}
	if (len) {
		line[len] = '\0';
		log_info("qemu: %s", line);
	}
	pthread_mutex_lock(&q->lock);
	q->eof = true;
	pthread_mutex_unlock(&q->lock);
	return NULL;
}

static bool socket_exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISSOCK(st.st_mode);
}

/* swtpm serving cmd->tpm_sock, a child that ends when QEMU disconnects
 * (--terminate) or with vigil; waits until its socket exists. 0 or a
 * negative code; err says why. */
static int start_tpm(const struct qemu_cmd *cmd, pid_t *pid, char *err, size_t errlen)
{
	char state[4200], ctrl[4200];
	char *argv[] = { "swtpm", "socket", "--tpmstate", state, "--ctrl", ctrl, "--log", "level=1",
			 "--terminate", cmd->tpm2 ? "--tpm2" : NULL, NULL };
	pid_t parent = getpid();
	int64_t deadline;

	*pid = 0;
	if (cmd->tpm_own)
		(void)unlink(cmd->tpm_sock); /* stale, from a kept workdir */
	else if (socket_exists(cmd->tpm_sock))
		return 0; /* a TPM someone else runs (QEMUTPM_PATH_PREFIX) */
	if (file_mkdir_p(cmd->tpm_dir, 0700)) {
		snprintf(err, errlen, "QEMUTPM: cannot create '%s'", cmd->tpm_dir);
		return ERR_IO;
	}
	snprintf(state, sizeof(state), "dir=%s", cmd->tpm_dir);
	snprintf(ctrl, sizeof(ctrl), "type=unixio,path=%s", cmd->tpm_sock);
	*pid = fork();
	if (*pid < 0) {
		*pid = 0;
		snprintf(err, errlen, "QEMUTPM: cannot fork swtpm: %s", strerror(errno));
		return -errno;
	}
	if (*pid == 0)
		proc_child_exec(argv, -1, parent);
	deadline = time_mono_ms() + 10000;
	while (!socket_exists(cmd->tpm_sock)) {
		int st;

		if (waitpid(*pid, &st, WNOHANG) == *pid || time_mono_ms() > deadline) {
			if (kill(*pid, 0) == 0) {
				kill(*pid, SIGKILL);
				(void)waitpid(*pid, &st, 0);
			}
			*pid = 0;
			snprintf(err, errlen, "QEMUTPM: swtpm did not start (is Debian's swtpm installed? "
				 "scripts/install-deps)");
			return ERR_IO;
		}
		time_sleep_ms(20);
	}
	log_info("swtpm (pid %d) serves '%s'", (int)*pid, cmd->tpm_sock);
	return 0;
}

static void stop_tpm(struct qemu *q)
{
	int st, i;

	if (q->tpm_pid > 0) {
		/* It ends by itself once QEMU is gone (--terminate); a short wait. */
		for (i = 0; i < 50 && waitpid(q->tpm_pid, &st, WNOHANG) != q->tpm_pid; i++)
			time_sleep_ms(20);
		if (i == 50) {
			kill(q->tpm_pid, SIGKILL);
			while (waitpid(q->tpm_pid, &st, 0) < 0 && errno == EINTR)
				;
		}
		q->tpm_pid = 0;
	}
	if (q->tpm_lock) {
		/* swtpm's lock is a dot file the runner's cleaning would keep. */
		(void)unlink(q->tpm_lock);
		free(q->tpm_lock);
		q->tpm_lock = NULL;
	}
}

int qemu_start(const struct qemu_cmd *cmd, struct qemu **out, char *err, size_t errlen)
{
	struct qemu *q;
	int p[2], rc;
	pid_t parent = getpid();
	char *line;

	*out = NULL;
	q = calloc(1, sizeof(*q));
	if (!q)
		return ERR_NOMEM;
	pthread_mutex_init(&q->lock, NULL);
	(void)unlink(cmd->vnc_path);
	(void)unlink(cmd->qmp_path);
	(void)unlink(cmd->serial_path);
	if (cmd->virtio_path)
		(void)unlink(cmd->virtio_path);
	if (cmd->tpm_sock && (rc = start_tpm(cmd, &q->tpm_pid, err, errlen)) < 0)
		goto fail;
	if (q->tpm_pid && cmd->tpm_own && !(q->tpm_lock = path_join(cmd->tpm_dir, ".lock"))) {
		rc = ERR_NOMEM;
		goto fail;
	}
	if (pipe2(p, O_CLOEXEC) < 0) {
		rc = -errno;
		snprintf(err, errlen, "cannot create a pipe for qemu: %s", strerror(errno));
		goto fail;
	}
	line = qemu_cmd_string(cmd);
	log_info("starting %s", line ? line : cmd->argv[0]);
	free(line);
	q->pid = fork();
	if (q->pid < 0) {
		rc = -errno;
		close(p[0]);
		close(p[1]);
		snprintf(err, errlen, "cannot fork qemu: %s", strerror(errno));
		goto fail;
	}
	if (q->pid == 0)
		proc_child_exec(cmd->argv, p[1], parent);
	close(p[1]);
	q->out_fd = p[0];
	rc = pthread_create(&q->reader, NULL, reader_main, q);
	if (rc) {
		/* Without its reader QEMU could block on a full pipe: end it. */
		kill(q->pid, SIGKILL);
		while (waitpid(q->pid, NULL, 0) < 0 && errno == EINTR)
			;
		close(q->out_fd);
		snprintf(err, errlen, "cannot start the qemu output reader: %s", strerror(rc));
		rc = -rc;
		goto fail;
	}
	q->reader_started = true;
	*out = q;
	return 0;
fail:
	stop_tpm(q);
	pthread_mutex_destroy(&q->lock);
	free(q);
	return rc;
}

bool qemu_running(struct qemu *q)
{
	bool exited;

	pthread_mutex_lock(&q->lock);
	exited = reap_locked(q);
	pthread_mutex_unlock(&q->lock);
	return !exited;
}

pid_t qemu_pid(const struct qemu *q)
{
	return q->pid;
}

double qemu_starved(struct qemu *q)
{
	int64_t now = time_mono_ms(), ns = -1, most;
	bool read_now;

	/* Read /proc at most every 50 ms: waits ask often (a busy Lua loop's hook). */
	pthread_mutex_lock(&q->lock);
	read_now = q->starved_read_ms == 0 || now - q->starved_read_ms >= 50;
	if (read_now)
		q->starved_read_ms = now;
	pthread_mutex_unlock(&q->lock);
	if (read_now && q->pid > 0)
		ns = proc_run_delay_ns(q->pid);
	pthread_mutex_lock(&q->lock);
	if (ns > q->starved_ns)
		q->starved_ns = ns;
	most = q->starved_ns;
	pthread_mutex_unlock(&q->lock);
	return (double)most / 1e9;
}

static int64_t clock_now_ms(void *ctx)
{
	return time_mono_ms() - (int64_t)(qemu_starved(ctx) * 1000);
}

static int clock_alive(void *ctx)
{
	return qemu_running(ctx);
}

void qemu_qmp_clock(struct qemu *q, struct qmp_clock *out)
{
	out->now_ms = clock_now_ms;
	out->alive = clock_alive;
	out->ctx = q;
}

bool qemu_stopped(const struct qemu *q)
{
	char st = q->pid > 0 ? proc_state(q->pid) : 0;

	return st == 'T' || st == 't';
}

static bool wait_exit(struct qemu *q, int timeout_ms)
{
	int64_t deadline = time_mono_ms() + timeout_ms;

	for (;;) {
		if (!qemu_running(q))
			return true;
		if (time_mono_ms() >= deadline)
			return false;
		time_sleep_ms(20);
	}
}

void qemu_stop(struct qemu *q, struct qmp *qmp)
{
	if (!qemu_running(q))
		return;
	if (qmp) {
		char err[256];

		/* QEMU may close the socket before answering: ignore the reply. */
		(void)qmp_command(qmp, "quit", NULL, NULL, err, sizeof(err));
		if (wait_exit(q, 3000))
			return;
	}
	log_info("sending SIGTERM to qemu (pid %d)", (int)q->pid);
	kill(q->pid, SIGTERM);
	if (wait_exit(q, 3000))
		return;
	log_warn("qemu (pid %d) ignored SIGTERM: killing it", (int)q->pid);
	kill(q->pid, SIGKILL);
	pthread_mutex_lock(&q->lock);
	if (!q->exited) {
		int st;

		while (waitpid(q->pid, &st, 0) < 0 && errno == EINTR)
			;
		q->exited = true;
		q->status = st;
	}
	pthread_mutex_unlock(&q->lock);
}

void qemu_exit_reason(struct qemu *q, char *buf, size_t len)
{
	size_t used;
	int i;

	if (!len)
		return;
	buf[0] = '\0';
	if (qemu_running(q))
		return;
	/* Let the reader take in QEMU's last words (its dying message). */
	for (i = 0; i < 50; i++) {
		bool eof;

		pthread_mutex_lock(&q->lock);
		eof = q->eof;
		pthread_mutex_unlock(&q->lock);
		if (eof || !q->reader_started)
			break;
		time_sleep_ms(10);
	}
	pthread_mutex_lock(&q->lock);
	if (WIFEXITED(q->status))
		snprintf(buf, len, "qemu exited with status %d", WEXITSTATUS(q->status));
	else if (WIFSIGNALED(q->status))
		snprintf(buf, len, "qemu was killed by signal %d (%s)", WTERMSIG(q->status),
			 strsignal(WTERMSIG(q->status)));
	else
		snprintf(buf, len, "qemu ended (wait status %d)", q->status);
	for (i = 0; i < q->tail_count; i++) {
		int idx = (q->tail_next - q->tail_count + i + QEMU_TAIL_LINES) % QEMU_TAIL_LINES;

		used = strlen(buf);
		if (used + 1 >= len)
			break;
		snprintf(buf + used, len - used, "%s%s", i ? " | " : "; last output: ", q->tail[idx]);
	}
	pthread_mutex_unlock(&q->lock);
}

void qemu_free(struct qemu *q)
{
	if (!q)
		return;
	qemu_stop(q, NULL);
	if (q->reader_started) {
		/* The pipe reaches EOF once QEMU is gone; the flag covers a
		 * grandchild that kept it open. */
		__atomic_store_n(&q->stop, 1, __ATOMIC_RELEASE);
		pthread_join(q->reader, NULL);
	}
	close(q->out_fd);
	stop_tpm(q);
	pthread_mutex_destroy(&q->lock);
	free(q);
}

int qemu_publish_pflash_vars(const char *workdir, const char *dest, char *err, size_t errlen)
{
	char *src = path_join(workdir, QEMU_PFLASH_VARS_FILE);
	int rc;

	if (!src)
		return ERR_NOMEM;
	if (!file_exists(src)) {
		snprintf(err, errlen, "PUBLISH_PFLASH_VARS: the VM had no UEFI variables (set UEFI=1)");
		rc = ERR_NOT_FOUND;
	} else {
		char *argv[] = { "qemu-img", "convert", "-O", "qcow2", src, (char *)dest, NULL };

		rc = qemu_img(argv, err, errlen);
	}
	free(src);
	return rc;
}
