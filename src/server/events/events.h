/* SPDX-License-Identifier: MIT */
/* events.h - event notifications of `vigil serve`: job created, started,
 * done or cancelled, build done, comment added, delivered to IRC, a
 * webhook and AMQP. The database writes each event into an outbox (the
 * events table, by triggers, in the transaction of the change); one
 * sender thread per sink drains it from where that sink left off, so a
 * request never waits for a sink and nothing is lost when a sink or the
 * server restarts (delivery is at least once). */
#ifndef VIGIL_EVENTS_H
#define VIGIL_EVENTS_H

#include <stdbool.h>
#include <stddef.h>

struct conf;

#define EVENTS_RETRY_MAX_MS 30000 /* longest wait between two attempts, default */
#define EVENTS_POLL_MS 250        /* how often an idle sender looks for new events */

struct events_sink_config {
	bool on;          /* its section is present */
	char *kinds;      /* comma-separated kinds it gets, NULL: its default */
};

struct events_config {
	char *base_url;         /* links in messages ("http://host:9526"); NULL: the server's own */
	long retry_max_ms;
	long poll_ms;
	struct events_sink_config irc, webhook, amqp;
	/* [irc] */
	char *irc_server;       /* host:port */
	char *irc_nick;
	char *irc_channel;
	char *irc_password;     /* NULL: none */
	/* [webhook] */
	char *webhook_url;
	char *webhook_secret;
	long webhook_timeout_s;
	/* [amqp] */
	char *amqp_url;         /* amqp://user:password@host:port/vhost */
	char *amqp_exchange;
	char *amqp_prefix;      /* routing keys PREFIX.openqa.job.done; "" for none */
};

/* Fill cfg from the [events], [irc], [webhook] and [amqp] sections of f
 * (sinks without a section stay off). 0, or ERR_INVALID with
 * "FILE:LINE: [section] key: ..." in err for an unknown key, a bad value
 * or a missing required one, or ERR_NOMEM ("out of memory"). cfg_release
 * frees it either way. */
int events_config_parse(struct events_config *cfg, const struct conf *f, char *err, size_t errlen);
void events_config_release(struct events_config *cfg);
/* Whether any sink is on. */
bool events_config_any(const struct events_config *cfg);

struct events;

/* Record which sinks are on in the database at db_path (a new sink starts
 * after the newest event; one no longer configured is forgotten, and with
 * none the triggers record nothing) and start a sender thread for each.
 * default_base_url is used when cfg has none. 0 and *out (NULL when no
 * sink is on), or an error with err. */
int events_start(struct events **out, const char *db_path, const struct events_config *cfg,
		 const char *default_base_url, char *err, size_t errlen);
/* Stop the senders (each finishes or abandons its current attempt; what
 * was not confirmed is sent again after a restart). NULL-safe. */
void events_stop(struct events *e);

#endif
