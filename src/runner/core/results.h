/* SPDX-License-Identifier: MIT */
/* results.h - the results directory in openQA's layout:
 * testresults/result-<module>.json, testresults/<module>-<n>.png,
 * testresults/results.json, test_order.json. Owns no VM state. */
#ifndef VIGIL_RESULTS_H
#define VIGIL_RESULTS_H

#include <jansson.h>
#include "image/image.h"

enum module_result {
	MODULE_NONE,      /* not run (yet) */
	MODULE_OK,
	MODULE_SOFTFAIL,
	MODULE_FAIL,
	MODULE_SKIP,
};

enum job_result {
	JOB_PASSED,
	JOB_SOFTFAILED,
	JOB_FAILED,
	JOB_INCOMPLETE,
	JOB_TIMEOUT_EXCEEDED,
};

#define MODULE_FLAG_FATAL          1
#define MODULE_FLAG_MILESTONE      2
#define MODULE_FLAG_IGNORE_FAILURE 4
#define MODULE_FLAG_NO_ROLLBACK    8  /* a failure keeps the VM as it is */
#define MODULE_FLAG_ALWAYS_ROLLBACK 16 /* success too goes back to the last milestone */

/* A step that shows a frame: where it is in details, and the frame's
 * video time (video_time_ms) for the video index. */
struct step_time {
	size_t step;       /* index in details */
	int64_t ms;
};

struct module {
	char *name;        /* e.g. "boot" */
	char *script;      /* path relative to the distribution, e.g. "tests/boot.lua" */
	unsigned flags;
	enum module_result result;
	json_t *details;   /* array of step objects, owned */
	int dents;         /* soft failures recorded */
	int nfiles;        /* counter for <module>-<n>.png/.txt */
	int needs_review;  /* every failed check was a near miss */
	int hard_fail;     /* a failure that is not a near miss */
	int force_softfail; /* force_soft_failure: a failure ends as softfailed */
	double start, end; /* monotonic seconds */
	char *fail_message;
	int fail_line;     /* the module file's line the failure came from, 0 unknown */
	char *source_artefact; /* "source-<module>.lua", the copy of script in testresults; NULL none */
	struct step_time *times; /* ntimes, in step order */
	size_t ntimes;
	json_t *extra;     /* parse_extra_log's tests: [{name, category, flags, script, result}], owned; NULL none */
};

/* Free what m holds (name, script, details, fail_message, source_artefact,
 * times, extra); m itself
 * is the caller's. */
void results_module_release(struct module *m);

/* Adds tests (an array of openQA's {name, category, flags, script}, as
 * OpenQA::Parser's to_openqa gives them) to m->extra, as basetest's
 * register_extra_test_results: script "unk" becomes m's, each gets the
 * result of its testresults/result-<name>.json ("unk" when none). Returns
 * how many were added, ERR_PROTO when tests is not an array, or ERR_NOMEM
 * (what was added stays whole: no test without its result). */
int results_add_extra(const char *testresults, struct module *m, json_t *tests);

/* Checked insertions for the JSON that decides a result (docs/hardening.md's
 * out-of-memory policy: a result field or a step may not be dropped
 * silently): json_object_set_new(o, key, v) / json_object_set (v borrowed) /
 * json_array_append_new(a, v), v NULL when making it failed (owned by the
 * container or freed). The first failure sets *rc to ERR_NOMEM; an error
 * already in *rc is kept. Each returns *rc. */
int results_set(int *rc, json_t *o, const char *key, json_t *v);
int results_set_ref(int *rc, json_t *o, const char *key, json_t *v);
int results_append(int *rc, json_t *a, json_t *v);

/* json_dumps(obj, flags), whole or NULL (out of memory, or over 1 GiB):
 * jansson's json_dumps goes on without an object key whose allocation
 * failed and answers the text with a part missing. Free the text. */
char *results_dumps(const json_t *obj, size_t flags);

const char *module_result_name(enum module_result r);
const char *job_result_name(enum job_result r);
/* Flags as openQA's {"fatal":1,...} object (new reference; NULL out of memory). */
json_t *module_flags_json(unsigned flags);

/* Paths for the next numbered file of a module: "<module>-<n>.<ext>" (the
 * name is returned, relative to testresults/). New string. */
char *results_next_name(struct module *m, const char *ext);

/* Write an image as testresults/NAME (and a thumbnail in .thumbs/NAME).
 * 0 or negative. */
int results_save_image(const char *testresults, const char *name, const struct image *img);
/* Write text as testresults/NAME. */
int results_save_text(const char *testresults, const char *name, const char *text);

/* os-autoinst's "frametime" of a step: [ms, end_ms] (video milliseconds)
 * as strings of seconds with two decimals, rounded down, so a seek to one
 * lands on the frame and never on the one after it. New reference, NULL
 * out of memory. */
json_t *results_frametime_json(int64_t ms, int64_t end_ms);
/* Note that step (an index in m->details) shows a frame at video time ms.
 * 0 or ERR_NOMEM. */
int results_add_step_time(struct module *m, size_t step, int64_t ms);

/* testresults/result-<module>.json; with m->source_artefact, a top-level
 * "source": {"file": script, "artefact", "fail_line" when known}. 0, or
 * the error (ERR_NOMEM: nothing written rather than a part). */
int results_write_module(const char *testresults, const struct module *m);
/* testresults/results.json and test_order.json. reason may be NULL. 0, or
 * the error (ERR_NOMEM: neither written rather than a part). */
int results_write_job(const char *testresults, enum job_result r, int needs_review,
		      const char *reason, const struct module *mods, size_t n, double elapsed);
/* testresults/results.json only: test_order.json is another writer's (a
 * Perl distribution's test process writes it). */
int results_write_summary(const char *testresults, enum job_result r, int needs_review,
			  const char *reason, const struct module *mods, size_t n, double elapsed);

/* testresults/video_index.json: [{"module","step","time","screenshot"}]
 * for every step with a frame (its frametime, seconds into video.webm, as
 * a number), so a viewer can seek to a step. 0, or the error (ERR_NOMEM:
 * not written). */
int results_write_video_index(const char *testresults, const struct module *mods, size_t n);

/* The overall result from the modules (openQA's rules): any non-ignored
 * fail -> failed; else any softfail (or ignored fail) -> softfailed;
 * else passed. *needs_review set when every failure is a near miss. */
enum job_result results_job_from_modules(const struct module *mods, size_t n, int *needs_review);

/* Copy a needle's JSON (and its PNG when png_path is not NULL) into
 * testresults as needle-<name>.json/.png, once per job, so the job's
 * artefacts show the needle a step was judged by (areas, exclusions) and,
 * for a failed check, the candidate's picture. 0, ERR_INVALID (a name
 * that is no artefact name: nothing copied), -errno, ERR_TOO_BIG, ERR_NOMEM. */
int results_save_needle(const char *testresults, const char *name, const char *json_path, const char *png_path);

#endif
