/* SPDX-License-Identifier: MIT */
/* worker.c - the worker's life cycle: register, long-poll, fetch the test
 * distribution (cached by content hash in POOL/cache), run `vigil run` in
 * its own process group with PDEATHSIG, post status every few seconds and
 * obey cancel, relay the live view while someone watches (live_relay.c),
 * upload screenshots and their thumbnails as they appear and everything
 * else (results, logs the test uploaded) at the end, set_done. The test
 * distribution, the assets a job names and those it publishes are
 * job_assets.c's. One thread; bad server answers are retried, never fatal, and
 * a job's end waits out a server that is away. */
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

/* The files of one job the worker keeps track of (sent, with their size
 * and time): past it the job's further files are not uploaded and the job
 * cannot pass (docs/worker.md). */
#define WORKER_MAX_FILES 100000

/* What an uploaded file is to the server: the artefact's flag (openQA's). */
enum upload_kind { UPLOAD_FILE, UPLOAD_THUMB, UPLOAD_ULOG };
static const char *const upload_flag[] = { NULL, "thumb", "ulog" };
static const char upload_prefix[] = { 'f', 't', 'u' };

/* How a request is tried again while the server is unreachable or answers
 * 5xx: the one shape of every retry of the worker (retry). */
struct retry {
	int tries;          /* at most; 0: until the deadline */
	double deadline;    /* time_mono() after which no try starts again; 0: none */
	long pause_ms;      /* the wait after the first failure, doubled after each */
	long pause_max_ms;  /* the longest wait */
	bool when_stopping; /* one try even when the worker stops (a job's end) */
	const char *what;   /* names the request in the log */
};

/* send(target, arg) until it gets an answer under 500 or how's tries,
 * deadline or the worker's stop end it, with how's waits between tries.
 * 0 with *status and the reply in w->resp (any status under 500, or the
 * last 5xx when the tries ran out), or the last transport error with its
 * reason in err. */
static int retry(struct worker *w, const struct retry *how, const char *target, worker_send_fn send, const void *arg,
		 long *status, char *err, size_t errlen)
{
	long pause = how->pause_ms;
	int i, rc = ERR_IO;

	*status = 0;
	snprintf(err, errlen, "the worker is stopping");
	if (*w->stop && !how->when_stopping)
		return rc;
	for (i = 1;; i++) {
		rc = send(w, target, arg, status, err, errlen);
		if (!rc && *status < 500)
			return 0;
		if ((how->tries && i >= how->tries) || (how->deadline && time_mono() > how->deadline) || *w->stop)
			return rc;
		log_warn("%s: %s, trying again", how->what, rc ? err : "server error");
		time_sleep_ms(pause);
		pause = pause * 2 > how->pause_max_ms ? how->pause_max_ms : pause * 2;
	}
}

struct request {
	const char *method, *ctype, *body;
	const char *path; /* a file to send or (download) to write, or NULL */
	long timeout_s;
};

static int send_request(struct worker *w, const char *target, const void *arg, long *status, char *err,
			size_t errlen)
{
	const struct request *q = arg;

	return http_request(&w->http, q->method, target, q->ctype, q->body, q->body ? strlen(q->body) : 0,
			    q->timeout_s, status, &w->resp, err, errlen);
}

static int send_upload(struct worker *w, const char *target, const void *arg, long *status, char *err,
		       size_t errlen)
{
	const struct request *q = arg;

	if (!q->path)
		return send_request(w, target, arg, status, err, errlen);
	return http_upload_file(&w->http, target, q->path, q->timeout_s, status, &w->resp, err, errlen);
}

static int send_download(struct worker *w, const char *target, const void *arg, long *status, char *err,
			 size_t errlen)
{
	const struct request *q = arg;

	return http_download(&w->http, target, q->path, q->timeout_s, status, NULL, NULL, 0, err, errlen);
}

/* A busy server (503: SQLite locked while another worker starts) is asked
 * again, as worker__call does. */
int worker__download(struct worker *w, const char *target, const char *path, long timeout_s, long *status,
		     char *err, size_t errlen)
{
	const struct request q = { .path = path, .timeout_s = timeout_s };
	const struct retry how = { .tries = 5, .pause_ms = 1000, .pause_max_ms = 8000, .what = target };

	return retry(w, &how, target, send_download, &q, status, err, errlen);
}

/* A request with retries on transport errors and 5xx; *status set. */
int worker__call(struct worker *w, const char *method, const char *target, const char *ctype, const char *body,
		long timeout_s, long *status)
{
	const struct request q = { .method = method, .ctype = ctype, .body = body, .timeout_s = timeout_s };
	const struct retry how = { .tries = 5, .pause_ms = 1000, .pause_max_ms = 8000, .what = target };
	char err[512];
	int rc = retry(w, &how, target, send_request, &q, status, err, sizeof(err));

	return rc ? rc : *status >= 500 ? ERR_IO : 0;
}

/* Seconds the end of a job retries a server that is away (--finish-deadline). */
static double finish_deadline(const struct worker *w)
{
	return w->cfg->finish_deadline_s > 0 ? (double)w->cfg->finish_deadline_s : WORKER_FINISH_DEADLINE_S;
}

/* POST target, with the file at path as the body (none when path is NULL),
 * until a response under 500 comes, the worker stops or deadline passes:
 * a job's end outlasts a server that is away (restarted, unreachable).
 * what names the request in the log. 0 with *status and the reply in
 * w->resp, or the last transport error with its reason in err. */
int worker__post_until(struct worker *w, const struct job_run *r, const char *target, const char *path,
			long timeout_s, double deadline, const char *what, long *status, char *err, size_t errlen)
{
	const struct request q = { .method = "POST", .path = path, .timeout_s = timeout_s };
	char name[WORKER_ASSET_NAME_MAX + 64];
	const struct retry how = { .deadline = deadline, .pause_ms = 2000, .pause_max_ms = 2000,
				   .when_stopping = true, .what = name };

	snprintf(name, sizeof(name), "job %lld: %s", r->id, what);
	return retry(w, &how, target, send_upload, &q, status, err, errlen);
}

static long retry_base_ms(const struct worker *w)
{
	return w->cfg && w->cfg->retry_ms > 0 ? w->cfg->retry_ms : 500;
}

int worker__post(struct worker *w, struct job_run *r, const char *target, const char *what, worker_send_fn send,
		 const void *arg)
{
	char err[512], name[WORKER_ASSET_NAME_MAX + 64];
	const struct retry how = { .tries = WORKER_UPLOAD_TRIES, .pause_ms = retry_base_ms(w),
				   .pause_max_ms = retry_base_ms(w) << WORKER_UPLOAD_TRIES, .what = name };
	long code = 0;
	int rc;

	snprintf(name, sizeof(name), "job %lld: upload of %s", r->id, what);
	rc = retry(w, &how, target, send, arg, &code, err, sizeof(err));
	if (!rc && code == 200)
		return 0;
	if (rc)
		log_warn("job %lld: upload of %s did not arrive: %s", r->id, what, err);
	else
		log_warn("job %lld: upload of %s refused (HTTP %ld): %s", r->id, what, code,
			 w->resp.data && *w->resp.data ? w->resp.data : "no reason given");
	if (!r->upload_why[0]) {
		if (rc)
			snprintf(r->upload_why, sizeof(r->upload_why), "%s did not arrive: %.160s", what, err);
		else
			snprintf(r->upload_why, sizeof(r->upload_why), "%s refused (HTTP %ld): %.120s", what, code,
				 w->resp.data ? w->resp.data : "");
	}
	if (rc || code >= 500)
		return -1;
	r->upload_failed = true;
	return -2;
}

void worker__final_result(const struct job_run *r, char *result, size_t rlen, char *reason, size_t whylen)
{
	/* Results the server does not have must not be reported passed. */
	if (r->upload_failed && !r->cancelled) {
		snprintf(result, rlen, "incomplete");
		snprintf(reason, whylen, "api failure: %s", r->upload_why[0] ? r->upload_why
				 : "some results could not be uploaded (see the worker's log)");
	}
	if (r->obsoleted) {
		snprintf(result, rlen, "incomplete");
		reason[0] = '\0';
	}
}

/* MemTotal of /proc/meminfo in MiB (0 when unknown): openQA's mem_max. */
static long long mem_total_mib(void)
{
	FILE *f = fopen("/proc/meminfo", "r");
	char line[256];
	long long kib = 0;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "MemTotal: %lld kB", &kib) == 1)
			break;
	if (f)
		fclose(f);
	return kib / 1024;
}

int worker__register(struct worker *w)
{
	struct buf q;
	long st = 0;
	json_t *j;
	int rc;

	buf_init(&q, 4096);
	buf_puts(&q, "/api/v1/workers");
	http_query_add(&q, "host", w->hostname);
	{
		char inst[24];
		snprintf(inst, sizeof(inst), "%ld", w->cfg->instance);
		http_query_add(&q, "instance", inst);
	}
	http_query_add(&q, "worker_class", w->cfg->classes ? w->cfg->classes : "qemu_x86_64,qemu_i686,qemu_i586");
	http_query_add(&q, "websocket_api_version", "1");
	/* What openQA's server requires besides (it refuses the registration
	 * without cpu_arch and mem_max); vigil's takes and ignores them. */
	{
		struct utsname un;
		char mem[32];
		http_query_add(&q, "cpu_arch", uname(&un) ? "x86_64" : un.machine);
		snprintf(mem, sizeof(mem), "%lld", mem_total_mib());
		http_query_add(&q, "mem_max", mem);
		http_query_add(&q, "isotovideo_interface_version", WORKER_ISOTOVIDEO_INTERFACE);
	}
	rc = worker__call(w, "POST", q.data, NULL, NULL, 30, &st);
	buf_release(&q);
	if (rc)
		return rc;
	j = json_loads(w->resp.data ? w->resp.data : "", 0, NULL);
	if (st != 200 || !json_is_integer(json_object_get(j, "id"))) {
		log_err("registration refused (HTTP %ld): %s", st, w->resp.data ? w->resp.data : "");
		json_decref(j);
		return ERR_PROTO;
	}
	w->id = json_integer_value(json_object_get(j, "id"));
	json_decref(j);
	log_info("registered as worker %lld (%s:%ld)", w->id, w->hostname, w->cfg->instance);
	return 0;
}

/* Start `vigil run`; the VM's disks stay in vmdir (--snapshots) for
 * publishing and keeping; with resume, it starts at that module from the
 * milestone snapshots already in vmdir. */
static pid_t spawn_runner(struct worker *w, const char *distri, const char *vars, const char *out, const char *log,
			  const char *vmdir, const char *resume)
{
	pid_t parent = getpid(), pid;
	char *argv[] = { (char *)w->cfg->self, "run", (char *)distri, "--vars", (char *)vars, "--out", (char *)out,
			 "--snapshots", (char *)vmdir, resume ? "--resume-from" : NULL, (char *)resume, NULL };
	int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	pid = fork();
	if (pid == 0) {
		/* Own process group: cancel kills the runner and its QEMU together. */
		setpgid(0, 0);
		proc_child_exec(argv, fd, parent);
	}
	if (pid > 0)
		setpgid(pid, pid); /* also from here: no race with an early kill */
	if (fd >= 0)
		close(fd);
	return pid;
}

/* The record of the file sent as key, or NULL with *at where it goes
 * (r->files is sorted by name). */
static struct uploaded *find_file(struct job_run *r, const char *key, size_t *at)
{
	size_t lo = 0, hi = r->nfiles;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(r->files[mid].name, key);
		if (!c)
			return &r->files[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	*at = lo;
	return NULL;
}

/* A record for key at its place at (from find_file), or NULL when memory
 * ran out (the file is then sent again at the next scan). */
static struct uploaded *add_file(struct job_run *r, const char *key, size_t at)
{
	char *name = strdup(key);

	if (!name || array_grow(&r->files, &r->files_cap, r->nfiles, sizeof(*r->files), 256)) {
		free(name);
		log_warn("job %lld: out of memory: '%s' may be uploaded again", r->id, key);
		return NULL;
	}
	memmove(&r->files[at + 1], &r->files[at], (r->nfiles - at) * sizeof(*r->files));
	r->nfiles++;
	r->files[at].name = name;
	return &r->files[at];
}

void worker__files_release(struct job_run *r)
{
	size_t i;

	for (i = 0; i < r->nfiles; i++)
		free(r->files[i].name);
	free(r->files);
	r->files = NULL;
	r->nfiles = r->files_cap = 0;
}

static int send_file(struct worker *w, const char *target, const void *path, long *code, char *err, size_t errlen)
{
	return http_upload_file(&w->http, target, path, 600, code, &w->resp, err, errlen);
}

/* Upload path as artefact name of that kind unless already sent
 * unchanged (or refused: it would be refused again). 0 when the server
 * has it, -1 when it did not arrive (to be tried again), -2 when refused. */
static int upload_one(struct worker *w, struct job_run *r, const char *path, enum upload_kind kind, const char *name)
{
	struct stat st;
	struct uploaded *u;
	struct buf q;
	char key[WORKER_ASSET_NAME_MAX + 8], what[WORKER_ASSET_NAME_MAX + 16];
	size_t at = 0;
	int rc;

	if (stat(path, &st) || !S_ISREG(st.st_mode))
		return 0;
	snprintf(key, sizeof(key), "%c/%s", upload_prefix[kind], name);
	u = find_file(r, key, &at);
	if (u && u->size == (long long)st.st_size && u->mtime == (long long)st.st_mtime)
		return 0;
	if (!u && r->nfiles >= WORKER_MAX_FILES) {
		/* Not sent: sent and not recorded, it would be sent at every scan. */
		if (!r->too_many_files)
			log_warn("job %lld: more than %d files: '%s' and the files after it not uploaded", r->id,
				 WORKER_MAX_FILES, name);
		if (!r->upload_why[0])
			snprintf(r->upload_why, sizeof(r->upload_why), "more than %d files to upload", WORKER_MAX_FILES);
		r->too_many_files = r->upload_failed = true;
		return -2;
	}
	buf_init(&q, 4096);
	buf_printf(&q, "/api/v1/jobs/%lld/artefact", r->id);
	http_query_add(&q, "file", name);
	if (upload_flag[kind])
		http_query_add(&q, upload_flag[kind], "1");
	snprintf(what, sizeof(what), "'%s'", name);
	rc = q.data ? worker__post(w, r, q.data, what, send_file, path) : -1;
	buf_release(&q);
	if (rc == -1)
		return -1;
	if (!u)
		u = add_file(r, key, at);
	if (u) {
		u->size = (long long)st.st_size;
		u->mtime = (long long)st.st_mtime;
	}
	return rc;
}

/* A log's file name as the server takes it: characters it refuses become
 * '_', as does a leading '.', cut to WORKER_ASSET_NAME_MAX bytes. */
static void upload_name(const char *in, char *out, size_t outlen)
{
	size_t i;

	snprintf(out, outlen, "%.*s", WORKER_ASSET_NAME_MAX, in);
	for (i = 0; out[i]; i++)
		if (!strchr(WORKER_NAME_CHARS, out[i]) || (i == 0 && out[i] == '.'))
			out[i] = '_';
}

/* Upload the files of dir (not recursive, no dot files) as artefacts of
 * that kind; only screenshots when pngs_only. Stops at the first file
 * that fails: 1 then, else 0. */
static int upload_dir(struct worker *w, struct job_run *r, const char *dir, enum upload_kind kind, bool pngs_only)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int failed = 0;

	if (!d)
		return 0;
	while ((e = readdir(d))) {
		char name[WORKER_ASSET_NAME_MAX + 1], *p;
		if (e->d_name[0] == '.' || (pngs_only && !str_ends_with(e->d_name, ".png")))
			continue;
		/* Screenshots and results keep their names (the results name
		 * them); only a test's uploaded logs are renamed when needed. */
		if (kind == UPLOAD_ULOG)
			upload_name(e->d_name, name, sizeof(name));
		else if (strlen(e->d_name) > WORKER_ASSET_NAME_MAX)
			continue; /* the server would refuse it */
		else
			snprintf(name, sizeof(name), "%.*s", WORKER_ASSET_NAME_MAX, e->d_name);
		if ((p = path_join(dir, e->d_name))) {
			failed += upload_one(w, r, p, kind, name) == -1 ? 1 : 0;
			free(p);
		}
		if (failed)
			break; /* the server is away: the caller tries again later */
	}
	closedir(d);
	return failed;
}

/* The screenshots and their thumbnails in testresults tr, as they appear
 * (a thumbnail after its screenshot). Number of failed uploads. */
static int upload_shots(struct worker *w, struct job_run *r, const char *tr, bool pngs_only)
{
	char *thumbs = path_join(tr, ".thumbs");
	int failed = upload_dir(w, r, tr, UPLOAD_FILE, pngs_only);

	if (!failed && thumbs)
		failed += upload_dir(w, r, thumbs, UPLOAD_THUMB, true);
	free(thumbs);
	return failed;
}

static void post_status(struct worker *w, struct job_run *r, bool uploading);

/* Everything the job left, uploaded; while the server is away (restarted,
 * unreachable, its disk full: 507) passed over again, WORKER_UPLOAD_ROUNDS
 * times at most and until deadline, with a status between the rounds:
 * uploads do not tell the server this worker is alive, and a worker
 * silent for --worker-timeout loses its job. 0 when all arrived. */
int worker__upload_all(struct worker *w, struct job_run *r, const char *tr, double deadline)
{
	long pause = retry_base_ms(w) * 4;
	int failed, round;

	for (round = 1;; round++) {
		char *p = path_join(r->dir, "runner-output.txt"), *ulogs = path_join(tr, "ulogs");
		failed = upload_shots(w, r, tr, false) + upload_dir(w, r, r->out, UPLOAD_FILE, false);
		if (ulogs)
			failed += upload_dir(w, r, ulogs, UPLOAD_ULOG, false);
		if (p)
			failed += upload_one(w, r, p, UPLOAD_FILE, "runner-output.txt") == -1 ? 1 : 0;
		free(p);
		free(ulogs);
		if (!failed || *w->stop || round >= WORKER_UPLOAD_ROUNDS || time_mono() > deadline)
			break;
		log_warn("job %lld: %d file(s) not uploaded yet, trying again (pass %d of %d)", r->id, failed, round + 1,
			 WORKER_UPLOAD_ROUNDS);
		post_status(w, r, true);
		time_sleep_ms(pause);
		pause = pause * 2 > WORKER_UPLOAD_PAUSE_MAX_MS ? WORKER_UPLOAD_PAUSE_MAX_MS : pause * 2;
	}
	if (failed)
		r->upload_failed = true;
	return failed || r->upload_failed ? -1 : 0;
}

json_t *worker__read_json(const char *dir, const char *name)
{
	char *p = path_join(dir, name);
	json_t *j = p ? json_load_file(p, 0, NULL) : NULL;

	free(p);
	return j;
}

static void post_status_vigil(struct worker *w, struct job_run *r, bool uploading);

/* POST status; handles the command in the reply. */
static void post_status(struct worker *w, struct job_run *r, bool uploading)
{
	if (w->openqa) {
		if (openqa_status(w, r, uploading))
			r->aborted = true;
		if ((r->cancelled || r->aborted) && !r->exited && r->kill_at == 0 && r->pid > 0) {
			kill(-r->pid, r->aborted ? SIGKILL : SIGTERM);
			r->kill_at = time_mono() + WORKER_CANCEL_GRACE_S;
		}
		return;
	}
	post_status_vigil(w, r, uploading);
}

static void post_status_vigil(struct worker *w, struct job_run *r, bool uploading)
{
	char *tr = path_join(r->out, "testresults");
	json_t *order = tr ? worker__read_json(tr, "test_order.json") : NULL, *res = json_object(), *m, *body;
	char target[128], err[512], *text;
	const char *current = NULL;
	bool before_resume = r->resume != NULL, lost = !res;
	long st = 0;
	size_t i;
	int rc = 0;

	json_array_foreach(order, i, m) {
		const char *name = json_string_value(json_object_get(m, "name"));
		char fn[300];
		json_t *mr;
		if (!name)
			continue;
		if (before_resume && !strcmp(name, r->resume))
			before_resume = false;
		snprintf(fn, sizeof(fn), "result-%s.json", name);
		mr = worker__read_json(tr, fn);
		if (mr) {
			lost = lost || json_object_set_new(res, name, json_pack("{s:O?,s:O?}", "result",
									       json_object_get(mr, "result"), "dents",
									       json_object_get(mr, "dents")));
			json_decref(mr);
		} else if (before_resume) {
			/* Resumed after it: the server copies it from the old job at the end. */
			lost = lost || json_object_set_new(res, name, json_pack("{s:s}", "result", "skip"));
		} else if (!current) {
			current = name;
			lost = lost || json_object_set_new(res, name, json_pack("{s:s}", "result", "running"));
		}
	}
	if (lost) { /* a module's result would be recorded missing */
		json_decref(res);
		res = NULL;
	}
	body = json_pack("{s:{s:I,s:o,s:o,s:s?,s:i}}", "status", "worker_id", (json_int_t)w->id, "test_order",
			 order ? order : json_array(), "result", res, "current_module", current, "uploading",
			 uploading ? 1 : 0);
	text = json_dumps(body, JSON_COMPACT);
	json_decref(body);
	free(tr);
	snprintf(target, sizeof(target), "/api/v1/jobs/%lld/status", r->id);
	/* One try: the next status comes in a few seconds anyway, and a server
	 * that is away must not keep this loop from seeing the runner end. */
	if (!text || (rc = http_request(&w->http, "POST", target, "application/json", text, strlen(text), 30, &st,
					&w->resp, err, sizeof(err))) || st >= 500) {
		if (text)
			log_warn("job %lld: status not delivered: %s", r->id, rc ? err : "server error");
		free(text);
		return; /* the next status tries again */
	}
	free(text);
	if (st >= 400 && st < 500) {
		log_warn("job %lld: status refused (HTTP %ld): %s; abandoning it", r->id, st,
			 w->resp.data ? w->resp.data : "");
		r->aborted = true;
	} else {
		json_t *j = json_loads(w->resp.data ? w->resp.data : "", 0, NULL);
		const char *cmd = json_string_value(json_object_get(j, "command"));
		if (cmd && !strcmp(cmd, "cancel") && !r->cancelled) {
			log_info("job %lld: cancelled by the server", r->id);
			r->cancelled = true;
		} else if (cmd && !strcmp(cmd, "abort")) {
			log_info("job %lld: no longer ours, aborting", r->id);
			r->aborted = true;
		}
		live_relay_set(&r->live, r->out, r->log, json_is_true(json_object_get(j, "live")) && !uploading);
		json_decref(j);
	}
	if ((r->cancelled || r->aborted) && !r->exited && r->kill_at == 0) {
		kill(-r->pid, r->aborted ? SIGKILL : SIGTERM);
		r->kill_at = time_mono() + WORKER_CANCEL_GRACE_S;
	}
}

/* Before a retry: the distribution's needles as the server has them now
 * (a needle saved in the editor lives there). The directory to reload
 * them from (borrowed: a cache entry of the pool), or NULL to keep the
 * runner's. Only for a distribution that comes from the server. */
static char *fresh_distribution(struct worker *w, struct job_run *r)
{
	const char *casedir = json_string_value(json_object_get(r->settings, "CASEDIR"));
	char why[512] = "", head[GIT_HASH_MAX], *dir;

	if ((casedir && casedir[0] == '/' && file_is_dir(casedir)) || casedir_is_git(casedir))
		return NULL;
	if (!(dir = worker__distribution(w, r->settings, head, why, sizeof(why))))
		log_warn("job %lld: retry with the needles the runner has: %s", r->id, why);
	else if (!strcmp(dir, r->distri))
		log_info("job %lld: retry: the distribution did not change", r->id);
	else
		log_info("job %lld: retry: needles from %s", r->id, dir);
	return dir;
}

/* The developer-mode commands waiting (r->dev_queue), sent on to the
 * runner in order; they wait on while it has no channel yet (a command
 * sent before the job started). */
static void dev_flush(struct worker *w, struct job_run *r)
{
	while (json_array_size(r->dev_queue)) {
		const json_t *c = json_array_get(r->dev_queue, 0);
		json_t *cmd = json_deep_copy(c), *reply = NULL;
		const char *action = json_string_value(json_object_get(c, "action"));
		char err[512], *dir = NULL;
		int rc;
		if (!cmd)
			return;
		if (action && !strcmp(action, "retry") && (dir = fresh_distribution(w, r)) &&
		    json_object_set_new(cmd, "distri_dir", json_string(dir))) {
			json_decref(cmd); /* a retry of the old code: sent with the next flush instead */
			free(dir);
			return;
		}
		rc = dev_relay_send(r->out, cmd, &reply, err, sizeof(err));
		if (rc == ERR_NOT_FOUND) {
			json_decref(cmd);
			free(dir);
			return;
		}
		if (rc)
			log_warn("job %lld: developer command not delivered: %s", r->id, err);
		else if (!json_is_true(json_object_get(reply, "ret")) && json_integer_value(json_object_get(reply, "ret")) != 1)
			log_warn("job %lld: the runner refused a developer command: %s", r->id,
				 json_string_value(json_object_get(reply, "error")));
		else
			log_info("job %lld: developer command %s delivered", r->id,
				 json_string_value(json_object_get(c, "cmd")));
		json_decref(reply);
		json_decref(cmd);
		free(dir);
		json_array_remove(r->dev_queue, 0);
	}
}

/* A pause on a failed check: its step's screenshot and the module's
 * result so far go up first, so the needle editor can open that step. */
static void dev_paused(struct worker *w, struct job_run *r, const json_t *state, const char *tr)
{
	const json_t *p = json_object_get(state, "paused");
	const char *kind = json_string_value(json_object_get(p, "kind"));
	const char *module = json_string_value(json_object_get(p, "module"));
	json_int_t version = json_integer_value(json_object_get(state, "version"));
	char rel[300], name[300], *path;

	if (!kind || strcmp(kind, "screen_mismatch") || !module || version == r->dev.shown_pause)
		return;
	r->dev.shown_pause = version;
	upload_shots(w, r, tr, true);
	snprintf(rel, sizeof(rel), ".devmode/result-%s.json", module);
	snprintf(name, sizeof(name), "result-%s.json", module);
	if ((path = path_join(r->out, rel)) && upload_one(w, r, path, UPLOAD_FILE, name))
		log_warn("job %lld: the paused module's result could not be uploaded", r->id);
	free(path);
}

/* POST the live view's news (body, taken; NULL: just ask whether someone
 * watches) and follow the reply's "live". One try: the next comes soon. */
static void post_live(struct worker *w, struct job_run *r, json_t *body)
{
	char target[128], err[512], *text = body ? json_dumps(body, JSON_COMPACT) : strdup("{}");
	long st = 0;
	json_t *j;

	json_decref(body);
	snprintf(target, sizeof(target), "/api/v1/jobs/%lld/live", r->id);
	if (!text || http_request(&w->http, "POST", target, "application/json", text, strlen(text), 10, &st, &w->resp,
				  err, sizeof(err)) ||
	    st != 200) {
		free(text);
		return; /* a status post or the next live post settles it */
	}
	free(text);
	j = json_loads(w->resp.data ? w->resp.data : "", 0, NULL);
	live_relay_set(&r->live, r->out, r->log, json_is_true(json_object_get(j, "live")));
	if (json_is_array(json_object_get(j, "developer"))) {
		if (!r->dev_queue)
			r->dev_queue = json_array();
		/* The server handed them over: lost, they are at least not lost silently. */
		if (!r->dev_queue || json_array_extend(r->dev_queue, json_object_get(j, "developer")))
			log_err("job %lld: developer command(s) dropped: out of memory", r->id);
		dev_flush(w, r);
	}
	json_decref(j);
}

static void job_result(struct job_run *r, char *result, size_t rlen, char *reason, size_t whylen)
{
	char *tr = path_join(r->out, "testresults");
	json_t *j = tr ? worker__read_json(tr, "results.json") : NULL;
	const char *res = json_string_value(json_object_get(j, "result"));
	const char *why = json_string_value(json_object_get(j, "reason"));

	reason[0] = '\0';
	if (r->cancelled) {
		snprintf(result, rlen, "user_cancelled");
		snprintf(reason, whylen, "cancelled by user");
	} else if (res && *res && strcmp(res, "none")) {
		snprintf(result, rlen, "%s", res);
		if (why)
			snprintf(reason, whylen, "%s", why);
	} else {
		int code = WIFEXITED(r->status) ? WEXITSTATUS(r->status) : -1;
		snprintf(result, rlen, "%s", code == 0 ? "passed" : code == 1 ? "failed" : "incomplete");
		if (WIFSIGNALED(r->status))
			snprintf(reason, whylen, "died: runner killed by signal %d", WTERMSIG(r->status));
		else if (code > 1)
			snprintf(reason, whylen, "died: runner exited with status %d", code);
	}
	if (!strcmp(result, "incomplete") && !reason[0])
		snprintf(reason, whylen, "backend died: see vigil-log.txt");
	json_decref(j);
	free(tr);
}

/* Mark the job done; while the server is away, tried again until the
 * deadline (after that the server ends the job itself when this worker
 * asks for new work). */
static void set_done(struct worker *w, struct job_run *r, const char *result, const char *reason)
{
	double deadline = time_mono() + finish_deadline(w);
	struct buf q;
	char wid[24], err[512];
	long st = 0;
	int rc;

	buf_init(&q, 8192);
	buf_printf(&q, "/api/v1/jobs/%lld/set_done", r->id);
	http_query_add(&q, "result", result);
	if (reason && *reason)
		http_query_add(&q, "reason", reason);
	snprintf(wid, sizeof(wid), "%lld", w->id);
	http_query_add(&q, "worker_id", wid);
	if (r->obsoleted)
		http_query_add(&q, "newbuild", "1"); /* openQA: result obsoleted */
	rc = worker__post_until(w, r, q.data, NULL, 60, deadline, "set_done", &st, err, sizeof(err));
	if (rc || st != 200)
		log_warn("job %lld: set_done failed (HTTP %ld): %s", r->id, st,
			 rc ? err : (w->resp.data ? w->resp.data : ""));
	else
		log_info("job %lld done: %s%s%s", r->id, result, reason && *reason ? ", " : "", reason ? reason : "");
	buf_release(&q);
}

/* True when the runner saved a milestone snapshot: a milestone module
 * passed (results.json in testresults tr). */
static bool saved_milestone(const char *tr)
{
	json_t *j = worker__read_json(tr, "results.json"), *m;
	bool saved = false;
	size_t i;

	json_array_foreach(json_object_get(j, "modules"), i, m) {
		const char *res = json_string_value(json_object_get(m, "result"));
		if (json_integer_value(json_object_get(json_object_get(m, "flags"), "milestone")) && res &&
		    (!strcmp(res, "ok") || !strcmp(res, "softfail")))
			saved = true;
	}
	json_decref(j);
	return saved;
}

/* A re-run pinned here ("resume": {"module", "job_id"}): the kept disks of
 * that job copied into vmdir (the kept ones stay for another try). The
 * module to resume at (borrowed from job), or NULL to run the job in full
 * when the disks are gone. */
static const char *resume_setup(struct worker *w, struct job_run *r, const json_t *resume, const char *vmdir)
{
	const char *module = json_string_value(json_object_get(resume, "module"));
	json_int_t from = json_integer_value(json_object_get(resume, "job_id"));
	int rc;

	if (!module || from <= 0)
		return NULL;
	rc = snapkeep_copy(w->cfg->pool, (long long)from, vmdir);
	if (rc) {
		log_warn("job %lld: disks of job %lld not available (%s): running it in full", r->id, (long long)from,
			 err_str(rc));
		(void)file_remove_tree(vmdir);
		return NULL;
	}
	log_info("job %lld: resuming at '%s' from the kept disks of job %lld", r->id, module, (long long)from);
	return module;
}

/* What worker__run_job owns for one job besides its job_run. */
struct job_files {
	char *distri;  /* the test distribution's directory */
	char *vars;    /* job-vars.json: the runner's settings */
	char *log;     /* runner-output.txt */
	char *tr;      /* out/testresults */
	char *vmdir;   /* the VM's disks (--snapshots) */
	json_t *local; /* the settings as the runner sees them (local asset paths) */
};

/* The runner's settings in local: the job's, with the commit of the
 * test code, where the server is and local paths for its assets. 0, or -1
 * with why. */
static int job_settings(struct worker *w, struct job_run *r, json_t *local, const char *head, char *why,
			size_t whylen)
{

	/* The commit of the test code, in vars.json as openQA's workers leave it. */
	if (head[0] && !json_object_get(local, "TEST_GIT_HASH") &&
	    json_object_set_new(local, "TEST_GIT_HASH", json_string(head)))
		goto nomem;
	/* Where the test process reaches the server (os-autoinst's mmapi and
	 * lockapi, with the job's JOBTOKEN), as openQA's workers set it. */
	if (!json_object_get(local, "OPENQA_URL") && json_object_set_new(local, "OPENQA_URL", json_string(w->cfg->host)))
		goto nomem;
	/* Under openQA its livehandler reaches the runner's command server
	 * (developer mode's WebSocket) as it reaches isotovideo's. */
	if (w->openqa && !json_object_get(local, "DEVELOPER_MODE_WS") &&
	    json_object_set_new(local, "DEVELOPER_MODE_WS", json_integer(1)))
		goto nomem;
	return worker__resolve_assets(w, r->id, local, why, whylen);
nomem:
	snprintf(why, whylen, "setup failure: out of memory");
	return -1;
}

/* Everything before the runner starts: the job's directory, its test
 * distribution, the runner's settings, the relay, the VM's directory; then
 * the runner started. 0, or -1 with why (the job ends incomplete). */
static int job_setup(struct worker *w, struct job_run *r, struct job_files *f, json_t *job, char *why, size_t whylen)
{
	const json_t *settings = json_object_get(job, "settings");
	const char *casedir = json_string_value(json_object_get(settings, "CASEDIR"));
	char rel[64], head[GIT_HASH_MAX] = "";

	snprintf(rel, sizeof(rel), "job-%lld", r->id);
	r->dir = path_join(w->cfg->pool, rel);
	r->out = r->dir ? path_join(r->dir, "out") : NULL;
	f->vars = r->dir ? path_join(r->dir, "job-vars.json") : NULL;
	f->log = r->dir ? path_join(r->dir, "runner-output.txt") : NULL;
	r->log = f->log; /* borrowed */
	f->tr = r->out ? path_join(r->out, "testresults") : NULL;
	f->vmdir = r->dir ? path_join(r->dir, "vm") : NULL;
	if (!f->tr || !f->vars || !f->log || !f->vmdir) {
		snprintf(why, whylen, "setup failure: out of memory");
		return -1;
	}
	log_info("job %lld: %s", r->id, json_string_value(json_object_get(job, "name")));
	(void)file_remove_tree(r->dir);
	if (file_mkdir_p(r->dir, 0700)) {
		snprintf(why, whylen, "setup failure: cannot create '%s'", r->dir);
		return -1;
	}
	/* The runner sees local paths for the server's assets. */
	if (!(f->local = json_deep_copy(settings))) {
		snprintf(why, whylen, "setup failure: out of memory");
		return -1;
	}
	/* Under openQA: its worker's lookup unless CASEDIR is a git URL. */
	if (w->openqa && !casedir_is_git(casedir))
		f->distri = openqa_distribution(w, f->local, why, whylen);
	else
		f->distri = worker__distribution(w, settings, head, why, whylen);
	if (!f->distri || job_settings(w, r, f->local, head, why, whylen))
		return -1;
	r->settings = settings;
	if (worker__relay_start(w, r, f->local, why, whylen))
		return -1;
	if (json_dump_file(f->local, f->vars, JSON_INDENT(1))) {
		snprintf(why, whylen, "setup failure: cannot write '%s'", f->vars);
		return -1;
	}
	r->distri = f->distri;
	r->resume = resume_setup(w, r, json_object_get(job, "resume"), f->vmdir);
	r->pid = spawn_runner(w, f->distri, f->vars, r->out, f->log, f->vmdir, r->resume);
	if (r->pid < 0) {
		snprintf(why, whylen, "setup failure: fork: %s", strerror(errno));
		return -1;
	}
	return 0;
}

/* vigil's protocol while the runner runs: the live view's news and
 * developer mode's state posted, the server's developer commands handed
 * to the runner. */
static void job_live(struct worker *w, struct job_run *r, const char *tr, double now)
{
	/* Live posts carry the view's news and developer mode's state, and
	 * bring developer commands: at least one a second, on or off. */
	json_t *body = r->live.on ? live_relay_update(&r->live, r->out, r->log) : NULL;
	json_t *dev = dev_relay_state(&r->dev, r->out);

	if (dev) {
		dev_paused(w, r, dev, tr);
		/* Lost when memory runs out: the server keeps the state it has
		 * until the next post (a second later). */
		if (body || (body = json_object()))
			(void)json_object_set_new(body, "developer", dev);
		else
			json_decref(dev);
	}
	if (json_array_size(r->dev_queue))
		dev_flush(w, r);
	if (body || now >= r->live.next_check) {
		post_live(w, r, body);
		r->live.next_check = time_mono() + LIVE_RELAY_CHECK_S;
	}
}

/* Until the runner exits: stop and cancel obeyed (SIGTERM, then SIGKILL
 * after the grace), status posted, the live view and developer mode
 * relayed, screenshots uploaded as they appear. */
static void job_watch(struct worker *w, struct job_run *r, const char *tr)
{
	double next_status = 0, next_scan = 0;

	while (!r->exited) {
		pid_t p = waitpid(r->pid, &r->status, WNOHANG);
		double now = time_mono();
		if (p == r->pid) {
			r->exited = true;
			break;
		}
		if (*w->stop && r->kill_at == 0) {
			kill(-r->pid, SIGTERM);
			r->kill_at = now + WORKER_CANCEL_GRACE_S;
		}
		if (r->kill_at > 0 && now > r->kill_at) {
			kill(-r->pid, SIGKILL);
			r->kill_at = now + 3600;
		}
		if (now >= next_status) {
			post_status(w, r, false);
			/* openQA's live view: a status each second, as its worker. */
			next_status = now + (w->openqa && r->live.on ? 1 : WORKER_STATUS_INTERVAL_S);
		}
		/* Under openQA commands come over the WebSocket; screenshots go up
		 * with the status that names them. */
		if (w->openqa)
			openqa_poll(w, r);
		else if (!r->aborted)
			job_live(w, r, tr, now);
		worker__relay_poll(w, r);
		if (now >= next_scan && !r->aborted && !w->openqa) {
			upload_shots(w, r, tr, true); /* screenshots as they appear */
			next_scan = now + 1;
		}
		time_sleep_ms(r->live.on ? LIVE_RELAY_NAP_MS : 200);
	}
}

/* openQA's "quit": the job is cloned for another worker and ends
 * incomplete here, as openQA's worker does. */
static void job_quit(struct worker *w, struct job_run *r)
{
	char target[96], err[256];
	long st = 0;

	snprintf(target, sizeof(target), "/api/v1/jobs/%lld/duplicate?dup_type_auto=1", r->id);
	if (http_request(&w->http, "POST", target, NULL, NULL, 0, 60, &st, &w->resp, err, sizeof(err)) || st != 200)
		log_warn("job %lld: duplicating it failed (HTTP %ld)", r->id, st);
	set_done(w, r, "incomplete", "quit: worker has been stopped or restarted");
}

/* After the runner exited: everything uploaded, the result decided (not
 * passed when a result did not arrive), the disks published for chained
 * jobs, set_done, the disks kept for re-runs. */
static void job_finish(struct worker *w, struct job_run *r, const struct job_files *f)
{
	char result[32], reason[512], why[512] = "";
	double deadline;

	post_status(w, r, true);
	if (r->aborted)
		return;
	deadline = time_mono() + finish_deadline(w);
	if (w->openqa ? openqa_upload_logs(w, r) != 0 : worker__upload_all(w, r, f->tr, deadline) != 0) {
		log_warn("job %lld: some files could not be uploaded", r->id);
		r->upload_failed = true;
	}
	if (!r->cancelled && worker__upload_made_assets(w, r, deadline)) {
		log_warn("job %lld: some assets it made could not be uploaded", r->id);
		r->upload_failed = true;
	}
	job_result(r, result, sizeof(result), reason, sizeof(reason));
	worker__final_result(r, result, sizeof(result), reason, sizeof(reason));
	/* A passed job hands its disks to the jobs chained after it, before
	 * set_done lets them start. */
	{
		json_t *fin = worker__final_settings(r->settings, r->out);
		const json_t *pub = fin ? fin : r->settings;
		if (worker__publishes(pub) && !r->cancelled && (!strcmp(result, "passed") || !strcmp(result, "softfailed")) &&
		    worker__publish_disks(w, r, pub, f->vmdir, deadline, why, sizeof(why))) {
			snprintf(result, sizeof(result), "incomplete");
			snprintf(reason, sizeof(reason), "%s", why);
		}
		json_decref(fin);
	}
	if (*w->stop && !r->cancelled && strcmp(result, "passed")) {
		snprintf(result, sizeof(result), "incomplete");
		snprintf(reason, sizeof(reason), "quit: worker stopped");
	}
	set_done(w, r, result, reason);
	if (w->cfg->keep_snapshots_s > 0 && w->cfg->snapshot_cap_mb > 0 && !r->cancelled &&
	    (r->resume || saved_milestone(f->tr)) && snapkeep_keep(w->cfg->pool, r->id, f->vmdir))
		log_warn("job %lld: its disks could not be kept", r->id);
}

void worker__run_job(struct worker *w, json_t *job)
{
	struct job_run r;
	struct job_files f;
	char why[512] = "";

	memset(&r, 0, sizeof(r));
	memset(&f, 0, sizeof(f));
	r.id = json_integer_value(json_object_get(job, "id"));
	r.pid = -1;
	nethub_init(&r.hub);
	if (job_setup(w, &r, &f, job, why, sizeof(why))) {
		set_done(w, &r, "incomplete", why);
		goto out;
	}
	job_watch(w, &r, f.tr);
	/* Whatever the runner left in its group (it normally takes QEMU down itself). */
	kill(-r.pid, SIGKILL);
	nethub_release(&r.hub); /* logs its frame counters */
	if (r.quit)
		job_quit(w, &r);
	else if (!r.aborted)
		job_finish(w, &r, &f);
out:
	nethub_release(&r.hub);
	if (r.dir && !getenv("VIGIL_WORKER_KEEP"))
		(void)file_remove_tree(r.dir);
	worker__files_release(&r);
	free(r.dir);
	free(r.out);
	free(f.distri);
	free(f.vars);
	free(f.log);
	free(f.tr);
	free(f.vmdir);
	json_decref(f.local);
	json_decref(r.dev_queue);
	json_decref(r.oq_md5);
	json_decref(r.oq_sent);
}

/* True when a 404 says why in an "error" text, as vigil's server does for
 * an unknown worker; openQA's answer for a route it lacks has none (an
 * HTML page, or {"error_status":404} to a JSON client). */
static bool vigil_404(const char *text)
{
	json_t *j = json_loads(text ? text : "", 0, NULL);
	bool yes = json_is_string(json_object_get(j, "error"));

	json_decref(j);
	return yes;
}

int worker_main(const struct worker_config *cfg, volatile int *stop)
{
	struct worker w;
	char target[128 + SNAPKEEP_MAX * 21], held[SNAPKEEP_MAX * 21];
	int rc;

	memset(&w, 0, sizeof(w));
	w.cfg = cfg;
	w.stop = stop;
	buf_init(&w.resp, LIMIT_HTTP_RESPONSE);
	if (cfg->hostname)
		snprintf(w.hostname, sizeof(w.hostname), "%s", cfg->hostname);
	else if (gethostname(w.hostname, sizeof(w.hostname) - 1))
		snprintf(w.hostname, sizeof(w.hostname), "localhost");
	if ((rc = file_mkdir_p(cfg->pool, 0700))) {
		log_err("pool directory '%s': %s", cfg->pool, err_str(rc));
		return rc;
	}
	if ((rc = http_client_init(&w.http, cfg->host, cfg->key, cfg->secret)))
		return rc;
	w.http.cancel = stop;
	w.openqa = cfg->server == WORKER_SERVER_OPENQA;
	/* vigil's server: scheme 2 only; openQA: its own; unknown: found out. */
	w.http.sign = w.openqa ? HTTP_SIGN_LEGACY : cfg->server == WORKER_SERVER_VIGIL ? HTTP_SIGN_V2 : HTTP_SIGN_AUTO;
	while (!*stop) {
		long st = 0;
		json_t *j, *job;
		if (w.id == 0) {
			if (worker__register(&w)) {
				time_sleep_ms(3000);
				continue;
			}
		}
		if (w.openqa) {
			/* openQA hands jobs only over its WebSocket. */
			if (openqa_serve(&w)) {
				w.id = 0;
				time_sleep_ms(3000);
			}
			continue;
		}
		/* The kept snapshots, so the server can pin re-runs from them here. */
		snapkeep_evict(cfg->pool, cfg->keep_snapshots_s, cfg->snapshot_cap_mb);
		snapkeep_list(cfg->pool, held, sizeof(held));
		snprintf(target, sizeof(target), "/api/v1/workers/%lld/work?timeout=%d&snapshots=%s", w.id, WORKER_POLL_S,
			 held);
		if (worker__call(&w, "GET", target, NULL, NULL, WORKER_POLL_S + 30, &st))
			continue;
		if (st == 404 && cfg->server == WORKER_SERVER_AUTO && !vigil_404(w.resp.data)) {
			/* No such route: openQA. */
			log_info("the server has no /work route: openQA, using its WebSocket protocol");
			w.openqa = true;
			w.http.sign = HTTP_SIGN_LEGACY;
			continue;
		}
		if (st == 404 || st == 403) {
			log_warn("work poll refused (HTTP %ld): registering again", st);
			w.id = 0;
			time_sleep_ms(1000);
			continue;
		}
		j = json_loads(w.resp.data ? w.resp.data : "", 0, NULL);
		job = json_object_get(j, "job");
		if (st == 200 && json_is_object(job) && json_is_integer(json_object_get(job, "id")) &&
		    json_is_object(json_object_get(job, "settings")))
			worker__run_job(&w, job);
		else if (st != 200)
			time_sleep_ms(2000);
		json_decref(j);
	}
	log_info("stopping");
	http_client_release(&w.http);
	buf_release(&w.resp);
	return 0;
}
