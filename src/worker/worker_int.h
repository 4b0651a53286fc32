/* SPDX-License-Identifier: MIT */
/* worker_int.h - what worker.c (the life cycle, vigil's protocol) and
 * openqa.c (openQA's protocol: WebSocket, status and upload formats,
 * shared directory) share inside the worker module. Not for other modules. */
#ifndef VIGIL_WORKER_INT_H
#define VIGIL_WORKER_INT_H

#include <jansson.h>
#include <stdbool.h>
#include <sys/types.h>
#include "net/http.h"
#include "util/buf.h"
#include "util/git.h"
#include "worker/dev_relay.h"
#include "worker/live_relay.h"
#include "worker/nethub.h"
#include "worker/worker.h"

#define WORKER_ASSET_TIMEOUT_S 3600
#define WORKER_ASSET_NAME_MAX 200
/* The characters the server takes in an artefact or asset name. */
#define WORKER_NAME_CHARS "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._+@-"
#define WORKER_UPLOAD_TRIES 3   /* one upload: tries on transport errors and 5xx */
#define WORKER_UPLOAD_ROUNDS 8  /* the end of a job: passes over the files not sent yet */
#define WORKER_UPLOAD_PAUSE_MAX_MS 30000 /* the longest wait between two passes */

struct uploaded {
	char *name; /* as sent, after the kind's prefix ("t/", "u/" or "f/") */
	long long size, mtime;
};

struct job_run {
	long long id;
	json_t *job;
	char *dir, *out;
	pid_t pid;
	int status;
	bool exited, cancelled, aborted;
	bool obsoleted;          /* openQA's "obsolete": incomplete with newbuild=1 */
	bool quit;               /* openQA's "quit": duplicated, incomplete, the worker stops */
	bool upload_failed;      /* some result did not reach the server: not passed */
	char upload_why[256];    /* the first upload that failed, and why */
	double kill_at;
	struct uploaded *files;  /* sorted by name */
	size_t nfiles, files_cap;
	bool too_many_files;     /* over WORKER_MAX_FILES: the rest not uploaded */
	const char *log;         /* the runner's output (runner-output.txt) */
	const char *resume;      /* the module a re-run resumes at (borrowed from the job), or NULL */
	struct live_relay live;  /* someone watches: frames in live posts */
	struct dev_relay dev;    /* developer mode: the runner's state */
	json_t *dev_queue;       /* the server's developer commands the runner has not taken yet */
	const json_t *settings;  /* the job's, borrowed */
	const char *distri;      /* the test distribution's directory, borrowed */
	json_t *oq_md5;          /* openQA: screenshot file -> md5 */
	json_t *oq_sent;         /* openQA: md5s of the images the server has */
	bool oq_order_sent;      /* openQA: test_order went with a status */
	double oq_next_status;   /* openQA: next worker_status over the WebSocket */
	int oq_livelog;          /* openQA: viewers of its live log/stream (livelog_start minus _stop) */
	struct nethub hub;       /* NICNET=relay: the job's relay hub (pid 0: none) */
	double hub_next;         /* when to ask the server for the peers' hubs next */
	size_t hub_peers;        /* peers the hub was told of */
};

struct oq_ws;

struct worker {
	const struct worker_config *cfg;
	struct http_client http;
	struct buf resp;
	long long id;
	char hostname[256];
	volatile int *stop;
	bool openqa;             /* the server is openQA (WebSocket, its formats) */
	struct oq_ws *ws;        /* openQA: the worker's WebSocket, NULL when not connected */
	bool quit;               /* openQA said quit (or incompatible): stop after this job */
};

/* One upload's request (a file, or a form), made by worker__post. */
typedef int (*worker_send_fn)(struct worker *w, const char *target, const void *arg, long *code, char *err,
			      size_t errlen);

/* relay_net.c: NICNET=relay (nethub.h). Start the job's hub when its
 * settings ask for the relay, setting NICRELAY_PORT in local (the
 * runner's settings) and posting the hub's address to the server. 0 (no
 * relay, or started), or -1 with why filled. */
int worker__relay_start(struct worker *w, struct job_run *r, json_t *local, char *why, size_t whylen);
/* Called from the job's loop: hand the hub the addresses of its peers'
 * hubs as the server learns them. */
void worker__relay_poll(struct worker *w, struct job_run *r);

/* worker.c */
/* An upload to target (what names it in the log and the job's reason):
 * send is tried up to WORKER_UPLOAD_TRIES times while the server is
 * unreachable or answers 5xx, waiting a little longer each time. 0 when
 * the server took it (200); -1 when it did not arrive (try again later);
 * -2 when the server refused it (another status: trying again would not
 * help). On -1 and -2 r->upload_why names the first such upload; on -2
 * r->upload_failed is set (the job is not passed). Shared by vigil's
 * protocol and openQA's. */
int worker__post(struct worker *w, struct job_run *r, const char *target, const char *what, worker_send_fn send,
		 const void *arg);
/* The result and reason the job ends with, from what the runner said
 * (result, reason: updated in place) and what happened to its uploads:
 * never passed when a result did not arrive. */
void worker__final_result(const struct job_run *r, char *result, size_t rlen, char *reason, size_t whylen);
/* Upload everything the job left (vigil's protocol), passing over the
 * files not sent yet up to WORKER_UPLOAD_ROUNDS times, until deadline
 * (time_mono). 0 when all arrived, -1 otherwise (r->upload_why says). */
int worker__upload_all(struct worker *w, struct job_run *r, const char *tr, double deadline);
/* Free the record of the files sent (r->files). */
void worker__files_release(struct job_run *r);

int worker__call(struct worker *w, const char *method, const char *target, const char *ctype, const char *body,
		 long timeout_s, long *status);
json_t *worker__read_json(const char *dir, const char *name);
void worker__run_job(struct worker *w, json_t *job);
int worker__register(struct worker *w);

/* openqa.c */
/* Serve openQA until *w->stop or the connection is lost: connect the
 * WebSocket, take jobs (grab_job, grab_jobs), report worker_status. 0 when
 * stopped, an error code to register again. */
int openqa_serve(struct worker *w);
/* While a job runs: the server's messages (cancel, abort, quit, obsolete,
 * livelog, developer session, a second job) and worker_status. */
void openqa_poll(struct worker *w, struct job_run *r);
/* The job's test distribution as openQA's worker finds it: CASEDIR (a
 * directory here), else the shared directory's tests/DISTRI[-VERSION];
 * PRODUCTDIR and NEEDLES_DIR made absolute in vars. New string, or NULL
 * with why. */
char *openqa_distribution(struct worker *w, json_t *vars, char *why, size_t whylen);
/* The local path of asset type/name: the shared factory/ when it is there,
 * else downloaded into POOL/cache/assets. New string, or NULL with why. */
char *openqa_asset(struct worker *w, long long job_id, const char *type, const char *name, char *why, size_t whylen);
/* POST status in openQA's format (test_order, result.<module>.details with
 * screenshot md5s) and upload the screenshots it does not know yet. final:
 * everything, after the run. -1 when the server refused it (the job is
 * not ours any more), 0 otherwise. */
int openqa_status(struct worker *w, struct job_run *r, bool final);
/* Upload the file at path as artefact filename (logs: image=0; ulog:
 * ulog=1). 0, or -1 when it did not arrive. */
int openqa_upload(struct worker *w, struct job_run *r, const char *path, const char *filename, bool ulog);
/* The end of a job's uploads: the logs, video and ulogs, as openQA's
 * worker names them. Number that did not arrive. */
int openqa_upload_logs(struct worker *w, struct job_run *r);
/* Upload path as asset name (chunked, openQA's format), scope "public" or
 * "private". 0 or -1. */
int openqa_upload_asset(struct worker *w, struct job_run *r, const char *path, const char *name, const char *scope);

/* POST target (the file at path as the body, or none) until an answer under
 * 500, the worker's stop or deadline; what names it in the log (worker.c). */
int worker__post_until(struct worker *w, const struct job_run *r, const char *target, const char *path,
		       long timeout_s, double deadline, const char *what, long *status, char *err, size_t errlen);
/* GET target into the file path (timeout_s each try), tried again on
 * transport errors and 5xx as worker__call is. 0 with *status, or the
 * transport error with err. */
int worker__download(struct worker *w, const char *target, const char *path, long timeout_s, long *status,
		     char *err, size_t errlen);
/* job_assets.c (each function's comment there says more): the job's test
 * distribution directory (new string; head its git commit), its bare asset
 * names replaced by cached copies (0 or -1 with why), whether it publishes,
 * its settings as the run ended (PUBLISH_* over them; NULL on OOM), the
 * published disks after a passed run (0 or -1 with why), and the assets the
 * test made (the number that did not arrive). */
char *worker__distribution(struct worker *w, const json_t *settings, char head[GIT_HASH_MAX], char *why,
			   size_t whylen);
int worker__resolve_assets(struct worker *w, long long job_id, json_t *settings, char *why, size_t whylen);
bool worker__publishes(const json_t *settings);
json_t *worker__final_settings(const json_t *settings, const char *out_dir);
int worker__publish_disks(struct worker *w, struct job_run *r, const json_t *settings, const char *vmdir,
			  double deadline, char *why, size_t whylen);
int worker__upload_made_assets(struct worker *w, struct job_run *r, double deadline);

#endif
