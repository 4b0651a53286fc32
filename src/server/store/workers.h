/* SPDX-License-Identifier: MIT */
/* workers.h - workers: registration by (host, instance), liveness
 * (t_seen), abandoning the jobs of a lost or restarted worker (ended
 * incomplete and cloned once, as openQA), job status, job modules and
 * set_done. The scheduler's pick is sched.h. All through the db module;
 * callers serialise access to one connection. */
#ifndef VIGIL_WORKERS_H
#define VIGIL_WORKERS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct db;

/* openQA's default classes of a qemu worker on x86_64. */
#define WORKERS_DEFAULT_CLASS "qemu_x86_64,qemu_i686,qemu_i586"
/* Seconds without any request after which a worker's job is abandoned. */
#define WORKERS_DEFAULT_TIMEOUT_S 60
#define LIMIT_WORKER_HOST  255   /* bytes of a worker's host name (a DNS name's most) */
#define LIMIT_WORKER_CLASS 4096  /* bytes of its comma-separated WORKER_CLASS */
#define WORKERS_CPU_ARCH_MAX 64 /* bytes of a registration's cpu_arch */
/* Register (or re-register) the worker host:instance offering classes
 * (comma-separated; NULL or "" for WORKERS_DEFAULT_CLASS). A worker that
 * registers again has abandoned whatever it ran: its assigned jobs are
 * rescheduled, its running ones end incomplete and are cloned. 0 and *id,
 * ERR_INVALID (empty host), or a db error. */
int workers_register(struct db *db, const char *host, long instance, const char *classes, int64_t now_s,
		     int64_t *id);

/* What the worker said of its host at registration: cpu_arch (NULL:
 * unknown) and mem_max in MiB (negative: unknown). 0 or a db error. */
int workers_set_caps(struct db *db, int64_t worker_id, const char *cpu_arch, int64_t mem_max);

/* At server start: count every worker as seen at now_s. While the server
 * was down nobody could reach it, so a worker gets a full timeout from the
 * restart to report again before its job is abandoned. 0 or a db error. */
int workers_grace(struct db *db, int64_t now_s);

/* Mark the worker seen at now_s. 0, ERR_NOT_FOUND, or a db error. */
int workers_seen(struct db *db, int64_t worker_id, int64_t now_s);
/* workers_seen of a worker asking for work anew: its error cleared too, in
 * the same statement (one commit a poll fewer). Same returns. */
int workers_seen_asking(struct db *db, int64_t worker_id, int64_t now_s);

/* End every job still in an execution state on worker_id: assigned ones go
 * back to scheduled, later ones end done/incomplete with reason (unless a
 * result is already set, e.g. user_cancelled) and get one clone. With
 * keep_reserved, a job reserved for the worker with its parallel cluster
 * (sched.h) and not handed out yet is left to it. *n counts the jobs. 0 or
 * a db error. Must not run inside a transaction. */
int workers_abandon_jobs(struct db *db, int64_t worker_id, const char *reason, bool keep_reserved, int *n);

/* Set (error NULL: clear) the worker's error; a worker with one and no
 * job is listed "offline". 0, ERR_NOT_FOUND, or a db error. */
int workers_set_error(struct db *db, int64_t worker_id, const char *error);

/* Abandon the jobs of workers not seen since now_s - timeout_s with the
 * reason "abandoned: worker N (host:instance) lost, no status for T s".
 * *n counts the jobs. 0 or a db error. */
int workers_reap(struct db *db, int64_t now_s, int timeout_s, int *n);
/* workers_reap sparing the workers contact[0..ncontact) (a request of
 * theirs is in the server now: queued, handled or a parked poll): those are
 * marked seen at now_s instead. A worker waiting for its answer is not
 * lost. 0 or a db error. */
int workers_reap_but(struct db *db, int64_t now_s, int timeout_s, const int64_t *contact, size_t ncontact, int *n);

/* Apply a worker's status body ({"worker_id", "test_order", "result",
 * "uploading"}) to job_id: assigned/setup → running, uploading → uploading,
 * module rows created and results updated (ok→passed, fail→failed, ...).
 * *command is set to "cancel" when the job was cancelled meanwhile (or
 * stopped with its parallel cluster: parallel_failed), "abort"
 * when the job is no longer this worker's to run, else NULL (static text).
 * 0, ERR_NOT_FOUND, ERR_INVALID (worker mismatch, message in msg), or a db error. */
int workers_job_status(struct db *db, int64_t job_id, const json_t *status, const char **command, char *msg,
		       size_t msglen);

/* Finish job_id: state done, result (if still none) from result or, when
 * NULL, from the module results, reason (when the result or the reason was
 * still unknown, as openQA), the worker freed. worker_id 0
 * skips the worker check. 0, ERR_NOT_FOUND, ERR_INVALID (bad result or
 * worker, message in msg), or a db error. */
int workers_job_done(struct db *db, int64_t job_id, int64_t worker_id, const char *result, const char *reason,
		     char *msg, size_t msglen);

/* Worker routes act only for the key a worker registered with
 * (workers.api_key; NULL: bound to no key, as before migration 12).
 * workers_key_check: whether key may act for worker_id: 0, ERR_NOT_FOUND
 * (no such worker), ERR_INVALID (bound to another key: why in msg), or a
 * db error. workers_job_key_check: the same for the worker holding job_id
 * (0 when no worker holds it). workers_bound_key: the key bound to the
 * worker registered as host:instance into key ("" for none): 0,
 * ERR_NOT_FOUND, or a db error. workers_set_key: bind id to key (NULL:
 * none). */
int workers_key_check(struct db *db, int64_t worker_id, const char *key, char *msg, size_t msglen);
int workers_job_key_check(struct db *db, int64_t job_id, const char *key, char *msg, size_t msglen);
int workers_bound_key(struct db *db, const char *host, long instance, char *key, size_t keylen);
int workers_set_key(struct db *db, int64_t id, const char *key);

/* The worker holding job_id while it executes (assigned, setup, running,
 * uploading): 0 and *worker_id (0 when no worker is recorded),
 * ERR_NOT_FOUND (no such job, or not executing), or a db error. */
int workers_job_holder(struct db *db, int64_t job_id, int64_t *worker_id);

/* The job's modules as openQA's [{name, category, result, flags}]. New array. */
json_t *workers_job_modules(struct db *db, int64_t job_id);

/* GET /api/v1/workers shape: {"workers": [...]}. A worker not seen for
 * timeout_s (> 0) is "dead", as openQA says; else "running" with a job,
 * "offline" with an error, "idle". New object or NULL. */
json_t *workers_list_json(struct db *db, int64_t now_s, int timeout_s);

/* Whether worker id, an openQA worker, has no WebSocket open now (the
 * server's hub, ctx, knows; api/wshub.h's wshub_missing_cb). */
typedef bool (*workers_missing_fn)(void *ctx, int64_t worker_id);

/* The workers as GET /api/v1/workers and the workers' page show them:
 * workers_list_json's, each with "snapshots" (the jobs whose disks it
 * keeps, rerun_held_json), and an openQA worker that missing(ctx, id)
 * says has no WebSocket (missing NULL: none) "offline", with that as its
 * error when it has none, unless it is "dead". New object or NULL (out
 * of memory). */
json_t *workers_list_all(struct db *db, int64_t now_s, int timeout_s, workers_missing_fn missing, void *ctx);

#endif
