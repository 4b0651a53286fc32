/* SPDX-License-Identifier: MIT */
/* investigate.h - the investigation of a failed job (openQA's
 * /tests/<id>/investigation_ajax): what changed since the last good job of
 * its scenario. Reads the jobs' result files under the data directory. */
#ifndef VIGIL_INVESTIGATE_H
#define VIGIL_INVESTIGATE_H

#include <jansson.h>
#include <stdint.h>

struct db;

/* Earlier jobs of the scenario looked at for the last good one. */
#define INVESTIGATE_LOOKBACK 200

/* openQA's investigate hash for job_id: "error" when the scenario has no
 * earlier finished job; else "last_good" ({"type": "link", "link",
 * "text"} or "not found"), "first_bad" (link, when failures came between),
 * and with a last good job: "diff_to_last_good" (text: "-KEY: old" /
 * "+KEY: new" of vars.json), "test_log" (git log of TEST_GIT_HASH's range
 * in DATA/tests/<DISTRI> or why not known); vigil's "last_good_id",
 * "settings_diff" [{"key", "last_good", "this"}], "needles_diff" [{"name",
 * "last_good", "this" ("matched" | "candidate" | null), "changed"}] and
 * "first_failure" {"module", "step", "this", "last_good"} (steps as
 * result-<module>.json details with "job", "module", "step"; the good
 * run's step of the same number and tags, else of the same tags, else of
 * the same number; null when it has none) or null. 0 and *out, ERR_NOT_FOUND,
 * ERR_NOMEM (a part of the answer could not be made: none is answered), or
 * an error. */
int investigate_job(struct db *db, const char *data_dir, int64_t job_id, json_t **out);

#endif
