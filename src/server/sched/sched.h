/* SPDX-License-Identifier: MIT */
/* sched.h - the scheduler: the job a worker gets, by WORKER_CLASS (every
 * class of the job offered by the worker, as openQA's check_class) and
 * priority; parallel clusters all at once or not at all. Through the db module; callers serialise access to one
 * connection. */
#ifndef VIGIL_SCHED_H
#define VIGIL_SCHED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

struct db;

/* Scheduled jobs looked at per pick (highest priority first). */
#define SCHED_SCAN_LIMIT 500

/* True when every class in needed[0..n) is one of the comma-separated
 * classes of offered (AND semantics, as openQA's check_class). A job with no
 * class matches no worker. */
bool sched_classes_match(const char *offered, const char *const *needed, size_t n);

/* Assign to worker_id the scheduled, unblocked job of lowest priority number
 * (then lowest id) whose WORKER_CLASS values the worker all offers: state
 * assigned, assigned_worker_id set. A re-run pinned to another worker is
 * not offered; pins past their deadline or whose worker no longer keeps the
 * snapshot are released first (rerun_release_due).
 * Parallel clusters (deps_cluster), as openQA: a job whose cluster has every
 * job scheduled, unblocked and unpinned is assigned only when each other job
 * of it gets a distinct free worker (registered, seen within
 * WORKERS_DEFAULT_TIMEOUT_S, no job) offering its classes, all in one
 * transaction: those are reserved (assigned to their worker, whose job_id
 * stays unset) and handed out by this function at their worker's next call,
 * before anything else. A job whose relative already executes is assigned
 * alone; a cluster with a blocked or otherwise waiting job waits whole.
 * 0 and *job_id, ERR_NOT_FOUND when none fits, or a db error. */
int sched_pick(struct db *db, int64_t worker_id, int64_t *job_id);

/* The network of a job handed out with NICTYPE=tap (openQA's
 * allocate_network; runner side: qemu_args.c), into its settings where
 * unset: NICVLAN, the id of the first job of its parallel cluster (one
 * network per cluster); NICMAC, 52:54:00 and the job id's three low bytes
 * (distinct per job); NICMCAST_PORT, port (the server's, so that two
 * servers on one host keep their networks apart; skipped when 0). 0,
 * ERR_NOMEM or a db error. */
int sched_job_network(struct db *db, int64_t job_id, json_t *settings, unsigned port);

#endif
