/* SPDX-License-Identifier: MIT */
/* deps.h - job dependencies (openQA's CHAINED, START_AFTER_TEST /
 * _START_AFTER; PARALLEL, PARALLEL_WITH / _PARALLEL): the rule deciding
 * what a child does given its parents, adding an edge (refusing cycles),
 * parsing START_AFTER_TEST entries, a job's parallel cluster, and what
 * happens when a job reaches a final state (its chained children unblocked,
 * skipped, or moved to the parent's clone; its parallel cluster stopped
 * when it did not end ok). All through the db module. */
#ifndef VIGIL_DEPS_H
#define VIGIL_DEPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct db;

/* openQA's dependency types (JobDependencies/Constants.pm). */
#define DEPS_CHAINED 1
#define DEPS_PARALLEL 2
#define DEPS_DIRECTLY_CHAINED 3

/* Parents one job may have, children one job may have (an install job
 * whose disk hundreds of tests boot from), and how deep chains recurse. */
#define DEPS_MAX_PARENTS 64
#define DEPS_MAX_CHILDREN 10000
#define DEPS_MAX_DEPTH 64
/* Jobs of one parallel cluster looked at (openQA sets no limit; real
 * clusters are a handful of jobs). */
#define DEPS_MAX_CLUSTER 64
/* One START_AFTER_TEST entry "test[@machine]". */
#define DEPS_MAX_ENTRY 256

enum deps_verdict {
	DEPS_READY, /* every chained parent ended passed or softfailed */
	DEPS_WAIT,  /* some parent has not ended yet */
	DEPS_SKIP,  /* some parent ended otherwise: the child ends cancelled/skipped */
};

/* What one chained parent in state/result means for its child. */
enum deps_verdict deps_parent_verdict(const char *state, const char *result);

/* True for openQA's final states (done, cancelled) and ok results. */
bool deps_state_final(const char *state);
bool deps_result_ok(const char *result);

/* Split one START_AFTER_TEST entry "test@machine" (or the legacy
 * "test:machine") into test and machine; machine is def_machine when the
 * entry names none. Surrounding spaces are dropped. 0, or ERR_INVALID for
 * an empty part or one of DEPS_MAX_ENTRY bytes or more. */
int deps_parse_entry(const char *entry, size_t len, const char *def_machine, char test[DEPS_MAX_ENTRY],
		     char machine[DEPS_MAX_ENTRY]);

/* Record parent -> child of type and block the child while the parent
 * runs; a child of a parent that already ended not ok is skipped at once.
 * 0; ERR_NOT_FOUND (no such parent); ERR_INVALID (the edge would close a
 * cycle or is a self-dependency; message in msg); or a db error. */
int deps_add(struct db *db, int64_t parent, int64_t child, int type, char *msg, size_t msglen);

/* Re-evaluate a scheduled child from its chained parents: blocked by the
 * first parent still running, unblocked, or ended cancelled/skipped (and
 * then its own children too). 0 or a db error. */
int deps_update_child(struct db *db, int64_t child);

/* Call after job_id reached a final state (or was cloned): its scheduled
 * children wait for its clone when it has one, else are unblocked (it
 * passed or softfailed) or skipped; when it ended not ok, the rest of its
 * parallel cluster is stopped (deps_stop_cluster). 0 or a db error. */
int deps_job_final(struct db *db, int64_t job_id);

enum deps_which {
	DEPS_ALL,          /* every child, any type */
	DEPS_WAITING,      /* chained children still scheduled */
	DEPS_SKIPPED,      /* chained children that ended skipped and have no clone */
};

/* The children of job_id of one kind, ordered by id, at most
 * DEPS_MAX_CHILDREN: *ids (the caller frees it; NULL when none) and *n.
 * 0, ERR_NOMEM, or a db error. */
int deps_children(struct db *db, int64_t job_id, enum deps_which which, int64_t **ids, size_t *n);

/* job_id's parallel cluster: job_id and every job reached from it through
 * parallel edges in either direction (openQA's cluster_jobs, parallel part),
 * ordered by id, at most DEPS_MAX_CLUSTER, into ids; *n their number.
 * 0 or a db error. */
int deps_cluster(struct db *db, int64_t job_id, int64_t ids[DEPS_MAX_CLUSTER], size_t *n);

/* Stop the other jobs of job_id's parallel cluster that have no result yet,
 * as openQA's _job_stop_cluster: a scheduled or assigned one ends
 * cancelled/skipped (its chained children follow), an executing one gets the
 * result parallel_failed (its worker is told to cancel it at its next
 * status update). *stopped counts them (may be NULL). 0 or a db error. */
int deps_stop_cluster(struct db *db, int64_t job_id, int *stopped);

/* 1 when every chained parent of job_id ended ok (or it has none), else 0. */
int deps_parents_ok(struct db *db, int64_t job_id);

#endif
