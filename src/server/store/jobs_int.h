/* SPDX-License-Identifier: MIT */
/* jobs_int.h - what jobs.c and jobs_hash.c share inside the jobs module. */
#ifndef VIGIL_SERVER_JOBS_INT_H
#define VIGIL_SERVER_JOBS_INT_H

/* The longest setting value (and a job name) in bytes. */
#define LIMIT_SETTING_TEXT (1u << 20)

/* openQA's job name from the settings get(ctx, key) finds (NULL or empty:
 * none): jobs_name over a JSON object, or over a batch's rows. New
 * string, NULL when out of memory. */
char *jobs__name_of(const char *(*get)(const void *ctx, const char *key), const void *ctx);

#endif
