/* SPDX-License-Identifier: MIT */
/* audit.h - the audit log: who changed what and when, from the API, a
 * page or a command. One row per event: the actor (a user name, or
 * "key:KEY" for an API key that belongs to no user), the event name, a
 * JSON object of details. Owns the audit_events table. */
#ifndef VIGIL_AUDIT_H
#define VIGIL_AUDIT_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

struct db;

#define AUDIT_DETAIL_MAX 8192   /* bytes of an event's JSON details kept */
#define AUDIT_LIST_DEFAULT 50
#define AUDIT_LIST_MAX 500

/* Record an event now. detail (borrowed, NULL for {}) is stored as compact
 * JSON; one over AUDIT_DETAIL_MAX is replaced by {"truncated": true}.
 * 0, ERR_NOMEM, ERR_IO. A write: only while holding the writer token. */
int audit_record(struct db *db, const char *actor, const char *event, const json_t *detail);

/* One page of events, newest first, keyset by id: those older than before
 * (0: from the newest), or with after > 0 the limit events just newer than
 * after. *out: {"events": [{"id", "time", "user", "event", "details"}],
 * "older": bool, "newer": bool} (whether more lie beyond either end).
 * 0, ERR_IO, ERR_NOMEM. */
int audit_list(struct db *db, int64_t before, int64_t after, long limit, json_t **out);

#endif
