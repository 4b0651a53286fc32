/* SPDX-License-Identifier: MIT */
/* locks.h - openQA's lock and multi-machine API for running jobs
 * (os-autoinst's lockapi and mmapi): the job token a worker's job signs its
 * calls with, named mutexes and barriers owned by a job and shared with its
 * parents and children, and the job's parallel relatives. */
#ifndef VIGIL_LOCKS_H
#define VIGIL_LOCKS_H
#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

struct db;

#define LOCKS_TOKEN_LEN 32 /* hex characters of a job token */

/* A new token for job_id (replacing an earlier one), into token. 0 or an error. */
int locks_token_issue(struct db *db, int64_t job_id, char token[LOCKS_TOKEN_LEN + 1]);
/* The job a token belongs to while that job has not ended: 0 and *job_id,
 * ERR_NOT_FOUND (unknown token, or the job is over), or an error. */
int locks_token_job(struct db *db, const char *token, int64_t *job_id);
/* Whether name is a valid lock name ([0-9A-Za-z_]+, as openQA). */
bool locks_name_valid(const char *name);

/* The results below follow openQA: 1 done (200), 0 not now / refused
 * (409), -1 never (410); an error code (< -1) for a database failure.
 * where: "" for the job and its parents, "all" for parents and children
 * too, or a job id as text (the lock is that job's). */
int locks_mutex_create(struct db *db, const char *name, int64_t job_id);
int locks_mutex_lock(struct db *db, const char *name, int64_t job_id, const char *where);
int locks_mutex_unlock(struct db *db, const char *name, int64_t job_id, const char *where);
int locks_barrier_create(struct db *db, const char *name, int64_t job_id, int64_t tasks);
int locks_barrier_wait(struct db *db, const char *name, int64_t job_id, const char *where, bool check_dead_job);
int locks_barrier_destroy(struct db *db, const char *name, int64_t job_id, const char *where);

/* mmapi: the ids of job_id's children (any dependency) in state "running",
 * "scheduled", or else "done" (a new array); the ids and states of its
 * parallel children ({"id": state}); the ids of its parallel parents.
 * 0 and *out, or an error. */
int locks_mm_children_in(struct db *db, int64_t job_id, const char *state, json_t **out);
int locks_mm_children(struct db *db, int64_t job_id, json_t **out);
int locks_mm_parents(struct db *db, int64_t job_id, json_t **out);

/* The relay network of a parallel cluster (NICNET=relay, worker/nethub.h):
 * where job_id's relay hub listens ("host:port", kept as the job's
 * setting NICRELAY_ADDR, replacing an earlier one); and the addresses of
 * the hubs of the other jobs of its cluster that have one, as
 * {"id": "host:port"}. 0 (and *out), or an error. */
int locks_relay_set(struct db *db, int64_t job_id, const char *addr);
int locks_relay_peers(struct db *db, int64_t job_id, json_t **out);
/* The secret of job_id's parallel cluster (a job alone is a cluster of
 * one), that its relay hubs prove to each other: random, made by the
 * first call of any member and kept per cluster (table relay_secrets,
 * under the cluster's first job), never a job setting. 0, ERR_IO (no
 * random bytes), or a db error. */
#define LOCKS_RELAY_SECRET_LEN 64 /* hex characters: 256 bits */
int locks_relay_secret(struct db *db, int64_t job_id, char out[LOCKS_RELAY_SECRET_LEN + 1]);

#endif
