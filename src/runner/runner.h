/* SPDX-License-Identifier: MIT */
/* runner.h - one job: a test distribution run against one VM, from its
 * variables and results directory to the job result. What `vigil run`
 * needs; the context the runner's files share is in core/job.h. */
#ifndef VIGIL_RUNNER_H
#define VIGIL_RUNNER_H

#include <stddef.h>
#include <stdio.h>
#include "runner/core/results.h"

struct runner;

/* --interactive: ask the person at the terminal. Prints prompt, reads one
 * line into answer (terminated, without its line end). 0, or negative at
 * the end of the input or when the job was interrupted. */
typedef int (*runner_ask_fn)(void *ctx, const char *prompt, char *answer, size_t len);

/* The job as the command line describes it; strings are borrowed for
 * runner_new only. */
struct runner_opts {
	const char *distri_dir;     /* DISTRI_DIR as given */
	const char *const *assigns; /* --var K=V, in order; they win over files */
	size_t nassigns;
	const char *vars_file;      /* --vars FILE (openQA's vars.json), or NULL */
	const char *out_dir;        /* --out DIR, or NULL: results/<distri>-<time> */
	const char *snapshots;      /* --snapshots DIR, or NULL */
	const char *resume_from;    /* --resume-from MODULE (needs snapshots), or NULL */
	int explore;                /* --explore: every distinct frame in OUT/explore/ */
	runner_ask_fn ask;          /* --interactive: offer a needle for an unknown tag; NULL off */
	void *ask_ctx;
	const char *pause_at;       /* --pause-at MODULE: developer mode (runner/srv/devmode.h), or NULL */
	const char *pause_on_mismatch; /* --pause-on-mismatch: "assert_screen", or NULL */
};

/* Set up a job: its variables (--var over --vars over DISTRI_DIR/vars.json,
 * CASEDIR defaulting to DISTRI_DIR, ${NAME} expanded), the results
 * directory with testresults/, the VM's work directory, vigil-log.txt and
 * vars.json. *out is the caller's (runner_free). 0, or ERR_INVALID (bad
 * directory, variable or option), ERR_IO, ERR_NOMEM; err then says what
 * and on which input. */
int runner_new(const struct runner_opts *o, struct runner **out, char *err, size_t errlen);

/* Run the distribution: the schedule, every module against the VM, the
 * results files and vars.json as the tests left them. Returns the job
 * result; progress goes to stdout. */
enum job_result runner_run(struct runner *r);

/* From a signal handler (async-signal-safe): take the VM down, so every
 * wait sees it gone and the job ends incomplete with what was captured. */
void runner_interrupt(struct runner *r, int sig);

/* Why the job ended early, or NULL when it ran to its end. Borrowed. */
const char *runner_reason(const struct runner *r);
/* The absolute results directory. Borrowed, valid until runner_free. */
const char *runner_out_dir(const struct runner *r);

/* `vigil run --list-testapi`: print the Lua test API's globals, one
 * "NAME\tfunction|variable" line each, sorted. 0 or ERR_NOMEM. */
int runner_list_testapi(FILE *out);

/* Free the job's context and close its log file. NULL-safe. */
void runner_free(struct runner *r);

#endif
