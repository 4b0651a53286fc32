/* SPDX-License-Identifier: MIT */
/* events_int.h - inside the events module: one event as the senders see
 * it and the interface each sink (events_irc.c, events_webhook.c,
 * events_amqp.c) implements for the sender loop of events.c. */
#ifndef VIGIL_EVENTS_INT_H
#define VIGIL_EVENTS_INT_H

#include <jansson.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include "server/events/events.h"

struct events_event {
	int64_t id;         /* the outbox row: increasing, the delivery id */
	const char *kind;   /* "job.done", "comment.create", ...: known_kinds in events.c */
	const char *created; /* "YYYY-MM-DDTHH:MM:SS" (UTC) */
	json_t *data;       /* openQA's event data, completed by the sender (borrowed) */
};

/* What a sink may read while it works. */
struct events_env {
	const struct events_config *cfg;
	const char *base_url;
	atomic_bool *stop;  /* set when the server stops: give up waiting */
};

struct events_sink_ops {
	const char *name;   /* event_sinks.name and the config section */
	const char *default_kinds;
	/* A new context; no connection yet. 0 or an error with err. */
	int (*open)(void **ctx, const struct events_env *env, char *err, size_t errlen);
	/* Deliver one event (connecting first when needed). *confirmed when
	 * the sink has acknowledged it (else flush confirms it). 0, or an
	 * error with err: the sender resets the sink and tries again later
	 * from the first unconfirmed event. */
	int (*send)(void *ctx, const struct events_event *ev, bool *confirmed, char *err, size_t errlen);
	/* Confirm everything sent so far. 0 or an error with err. */
	int (*flush)(void *ctx, char *err, size_t errlen);
	/* Nothing to send for now: keep the connection alive (IRC answers the
	 * server's PINGs). NULL when nothing to do; a failure is the sink's to
	 * handle (drop the connection quietly, connect again on the next send). */
	void (*idle)(void *ctx);
	/* Drop the connection after an error. */
	void (*reset)(void *ctx);
	void (*close)(void *ctx);
};

extern const struct events_sink_ops events__irc_ops;
extern const struct events_sink_ops events__webhook_ops;
extern const struct events_sink_ops events__amqp_ops;

/* Where a sender may read the outbox up to (events.c says why): every
 * event with an id up to limit is final (committed or never will be). */
struct events_horizon {
	int64_t limit;   /* INT64_MAX on SQLite */
	int64_t pending; /* the next limit, once the transactions of snap ended */
	char *snap;      /* pg_current_snapshot() then, NULL when none waits; the caller frees it */
};
struct db;
/* Move h on as far as the database allows now. 0 or a db error. */
int events__horizon_move(struct db *db, struct events_horizon *h);

/* The overview page of the build of a build.done event, or a job's page
 * (/tests/ID) for the other kinds: a new string, NULL when out of memory. */
char *events__link(const char *base_url, const struct events_event *ev);
/* The one-line text of an event for humans (IRC): a new string. */
char *events__line(const char *base_url, const struct events_event *ev);

#endif
