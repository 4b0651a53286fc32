/* SPDX-License-Identifier: MIT */
/* isos.h - scheduled products (POST /api/v1/isos): one expanded into jobs,
 * products x job templates x machines, settings merged in openQA's order,
 * and read back as openQA's JSON. */
#ifndef VIGIL_ISOS_H
#define VIGIL_ISOS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct db;

/* params: the POSTed parameters, keys uppercased, string values; must hold
 * DISTRI VERSION FLAVOR ARCH. Creates the scheduled product and its jobs in
 * one transaction and sets *resp to openQA's response
 * {"scheduled_product_id","count","ids","failed"} (or with "error").
 * Returns the HTTP status: 200, 404 (no templates), 400 (a job's settings
 * refused), 503 (out of memory: nothing stored) or 500. */
int isos_schedule(struct db *db, const json_t *params, json_t **resp);

/* GET /api/v1/isos/<id>: the scheduled product as openQA's JSON, with
 * "job_ids" when job_ids. 0 and *out (new object); ERR_NOT_FOUND or
 * ERR_IO with the text in msg. */
int isos_get(struct db *db, int64_t id, bool job_ids, json_t **out, char *msg, size_t msglen);

#endif
