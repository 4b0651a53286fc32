/* SPDX-License-Identifier: MIT */
/* isos.h - POST /api/v1/isos: a scheduled product expanded into jobs,
 * products x job templates x machines, settings merged in openQA's order. */
#ifndef VIGIL_ISOS_H
#define VIGIL_ISOS_H

#include <jansson.h>

struct db;

/* params: the POSTed parameters, keys uppercased, string values; must hold
 * DISTRI VERSION FLAVOR ARCH. Creates the scheduled product and its jobs in
 * one transaction and sets *resp to openQA's response
 * {"scheduled_product_id","count","ids","failed"} (or with "error").
 * Returns the HTTP status: 200, 404 (no templates) or 500. */
int isos_schedule(struct db *db, const json_t *params, json_t **resp);

#endif
