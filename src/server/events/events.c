/* SPDX-License-Identifier: MIT */
/* events.c - the event outbox's senders: the [events]/[irc]/[webhook]/
 * [amqp] configuration, one thread per configured sink with its own
 * database connection that reads the events after the sink's cursor,
 * completes their data (settings, links), hands them to the sink and moves
 * the cursor once the sink confirmed them; failures are retried with a
 * growing pause, never dropped. Owns its threads and connections; the
 * events themselves are written by the database's triggers (migration 15). */
#define LOG_MODULE "events"
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "net/http.h"
#include "server/db/db.h"
#include "server/events/events.h"
#include "server/events/events_int.h"
#include "util/buf.h"
#include "util/conf.h"
#include "util/err.h"
#include "util/log.h"
#include "util/str.h"
#include "util/banned.h" /* last: after every system header */

#define EVENTS_BATCH 200
#define EVENTS_RETRY_MIN_MS 250
#define EVENTS_PRUNE_EVERY 20 /* batches between two prunes of delivered events */

static const char *const known_kinds[] = { "job.create", "job.start", "job.done", "job.cancel", "job.restart",
					   "job.update_result", "job.delete", "build.done", "comment.create",
					   "comment.update", "comment.delete", NULL };

/* ---- configuration ---- */

struct key_spec {
	const char *section, *key;
	size_t off;      /* of a char * or long in events_config */
	char type;       /* 's' string, 'l' long (lo..hi), 'k' kinds list */
	long lo, hi;
};

#define S(f) offsetof(struct events_config, f)
static const struct key_spec keys[] = {
	{ "events", "base-url", S(base_url), 's', 0, 0 },
	{ "events", "retry-max", S(retry_max_ms), 'l', 1, 3600 },
	{ "events", "poll-ms", S(poll_ms), 'l', 10, 60000 },
	{ "irc", "server", S(irc_server), 's', 0, 0 },
	{ "irc", "nick", S(irc_nick), 's', 0, 0 },
	{ "irc", "channel", S(irc_channel), 's', 0, 0 },
	{ "irc", "password", S(irc_password), 's', 0, 0 },
	{ "irc", "events", S(irc.kinds), 'k', 0, 0 },
	{ "webhook", "url", S(webhook_url), 's', 0, 0 },
	{ "webhook", "secret", S(webhook_secret), 's', 0, 0 },
	{ "webhook", "timeout", S(webhook_timeout_s), 'l', 1, 600 },
	{ "webhook", "events", S(webhook.kinds), 'k', 0, 0 },
	{ "amqp", "url", S(amqp_url), 's', 0, 0 },
	{ "amqp", "exchange", S(amqp_exchange), 's', 0, 0 },
	{ "amqp", "topic-prefix", S(amqp_prefix), 's', 0, 0 },
	{ "amqp", "events", S(amqp.kinds), 'k', 0, 0 },
};
#undef S

static bool kind_known(const char *k, size_t len)
{
	size_t i;

	for (i = 0; known_kinds[i]; i++)
		if (strlen(known_kinds[i]) == len && !strncmp(known_kinds[i], k, len))
			return true;
	return false;
}

/* Whether kind is in the comma-separated list. */
static bool kind_in(const char *list, const char *kind)
{
	size_t kl = strlen(kind);
	const char *p = list;

	while (*p) {
		size_t n;
		while (*p == ' ' || *p == ',')
			p++;
		n = strcspn(p, ", ");
		if (n == kl && !strncmp(p, kind, kl))
			return true;
		p += n;
	}
	return false;
}

static int check_kinds(const char *v, char *msg, size_t len)
{
	const char *p = v;
	size_t n;

	while (*p) {
		while (*p == ' ' || *p == ',')
			p++;
		n = strcspn(p, ", ");
		if (n && !kind_known(p, n)) {
			err_set(msg, len, "unknown event '%.*s' (known: job.create, job.start, job.done, job.cancel, "
				"build.done, comment.create)", (int)n, p);
			return ERR_INVALID;
		}
		p += n;
	}
	return 0;
}

static int need(const struct conf *f, const char *section, const char *key, const char *v, char *err,
		size_t errlen)
{
	size_t i;

	if (v && *v)
		return 0;
	for (i = 0; i < f->nsections; i++)
		if (!strcmp(f->sections[i], section))
			break;
	err_set(err, errlen, "%s:%d: [%s] needs '%s ='", f->path ? f->path : "-",
		i < f->nsections ? f->section_lines[i] : 0, section, key);
	return ERR_INVALID;
}

int events_config_parse(struct events_config *cfg, const struct conf *f, char *err, size_t errlen)
{
	static const char *const sections[] = { "events", "irc", "webhook", "amqp" };
	char where[600], msg[300];
	size_t i, j;

	memset(cfg, 0, sizeof(*cfg));
	cfg->retry_max_ms = EVENTS_RETRY_MAX_MS;
	cfg->poll_ms = EVENTS_POLL_MS;
	cfg->webhook_timeout_s = 10;
	for (i = 0; i < f->n; i++) {
		const struct conf_entry *e = &f->e[i];
		const struct key_spec *k = NULL;
		bool ours = false;
		for (j = 0; j < 4; j++)
			ours = ours || !strcmp(e->section, sections[j]);
		if (!ours)
			continue;
		for (j = 0; j < sizeof(keys) / sizeof(keys[0]); j++)
			if (!strcmp(keys[j].section, e->section) && !strcmp(keys[j].key, e->key))
				k = &keys[j];
		conf_where(f, e, where, sizeof(where));
		if (!k) {
			err_set(err, errlen, "%s: [%s] %s: unknown key (see docs/events.md)", where, e->section, e->key);
			return ERR_INVALID;
		}
		if (k->type == 'l') {
			long v;
			if (str_to_long(e->value, &v) || v < k->lo || v > k->hi) {
				err_set(err, errlen, "%s: [%s] %s: '%s': expected %ld..%ld", where, e->section, e->key,
					e->value, k->lo, k->hi);
				return ERR_INVALID;
			}
			/* retry-max is given in seconds */
			*(long *)((char *)cfg + k->off) = !strcmp(k->key, "retry-max") ? v * 1000 : v;
			continue;
		}
		if (k->type == 'k' && check_kinds(e->value, msg, sizeof(msg))) {
			err_set(err, errlen, "%s: [%s] %s: %s", where, e->section, e->key, msg);
			return ERR_INVALID;
		}
		free(*(char **)((char *)cfg + k->off));
		if (!(*(char **)((char *)cfg + k->off) = str_dup(e->value)))
			goto nomem;
	}
	cfg->irc.on = conf_has_section(f, "irc");
	cfg->webhook.on = conf_has_section(f, "webhook");
	cfg->amqp.on = conf_has_section(f, "amqp");
	if (cfg->irc.on && (need(f, "irc", "server", cfg->irc_server, err, errlen) ||
			    need(f, "irc", "channel", cfg->irc_channel, err, errlen)))
		return ERR_INVALID;
	if (cfg->irc.on && !cfg->irc_nick && !(cfg->irc_nick = str_dup("vigil")))
		goto nomem;
	if (cfg->irc.on && cfg->irc_channel[0] != '#' && cfg->irc_channel[0] != '&') {
		err_set(err, errlen, "%s: [irc] channel: '%s' does not start with '#'", f->path ? f->path : "-",
			cfg->irc_channel);
		return ERR_INVALID;
	}
	if (cfg->webhook.on && (need(f, "webhook", "url", cfg->webhook_url, err, errlen) ||
				need(f, "webhook", "secret", cfg->webhook_secret, err, errlen)))
		return ERR_INVALID;
	if (cfg->webhook.on && strncmp(cfg->webhook_url, "http://", 7) && strncmp(cfg->webhook_url, "https://", 8)) {
		err_set(err, errlen, "%s: [webhook] url: '%s' is not an http:// or https:// URL", f->path ? f->path : "-",
			cfg->webhook_url);
		return ERR_INVALID;
	}
	if (cfg->amqp.on) {
		if ((!cfg->amqp_url && !(cfg->amqp_url = str_dup("amqp://guest:guest@localhost:5672/"))) ||
		    (!cfg->amqp_exchange && !(cfg->amqp_exchange = str_dup("pubsub"))) ||
		    (!cfg->amqp_prefix && !(cfg->amqp_prefix = str_dup("suse"))))
			goto nomem;
		if (strncmp(cfg->amqp_url, "amqp://", 7)) {
			err_set(err, errlen, "%s: [amqp] url: '%s' is not an amqp:// URL", f->path ? f->path : "-",
				cfg->amqp_url);
			return ERR_INVALID;
		}
	}
	return 0;
nomem:
	err_set(err, errlen, "%s: out of memory", f->path ? f->path : "-");
	return ERR_NOMEM;
}

void events_config_release(struct events_config *cfg)
{
	size_t j;

	for (j = 0; j < sizeof(keys) / sizeof(keys[0]); j++)
		if (keys[j].type != 'l') {
			free(*(char **)((char *)cfg + keys[j].off));
			*(char **)((char *)cfg + keys[j].off) = NULL;
		}
}

bool events_config_any(const struct events_config *cfg)
{
	return cfg && (cfg->irc.on || cfg->webhook.on || cfg->amqp.on);
}

/* ---- links and lines ---- */

char *events__link(const char *base_url, const struct events_event *ev)
{
	struct buf b;
	const json_t *d = ev->data;
	json_int_t id = json_integer_value(json_object_get(d, "id"));
	char num[32];

	buf_init(&b, 4096);
	if (buf_puts(&b, base_url))
		goto fail;
	if (!strcmp(ev->kind, "build.done")) {
		const json_t *g = json_object_get(d, "group_id");
		if (buf_puts(&b, "/tests/overview"))
			goto fail;
		if (json_is_integer(g)) {
			snprintf(num, sizeof(num), "%lld", (long long)json_integer_value(g));
			if (http_query_add(&b, "groupid", num))
				goto fail;
		} else if (http_query_add(&b, "distri", json_string_value(json_object_get(d, "DISTRI"))) ||
			   http_query_add(&b, "version", json_string_value(json_object_get(d, "VERSION")))) {
			goto fail;
		}
		if (http_query_add(&b, "build", json_string_value(json_object_get(d, "BUILD"))))
			goto fail;
		return buf_steal(&b);
	}
	if (!strncmp(ev->kind, "comment.", 8))
		id = json_integer_value(json_object_get(d, "job_id"));
	if (id > 0 && buf_printf(&b, "/tests/%lld", (long long)id))
		goto fail;
	return buf_steal(&b);
fail:
	buf_release(&b);
	return NULL;
}

static long long num_of(const json_t *d, const char *k)
{
	return (long long)json_integer_value(json_object_get(d, k));
}

static const char *str_of(const json_t *d, const char *k)
{
	const char *s = json_string_value(json_object_get(d, k));
	return s ? s : "";
}

char *events__line(const char *base_url, const struct events_event *ev)
{
	const json_t *d = ev->data;
	char *link = events__link(base_url, ev);
	struct buf b;
	int rc;

	if (!link)
		return NULL;
	buf_init(&b, 4096);
	if (!strcmp(ev->kind, "build.done")) {
		const char *g = str_of(d, "group");
		rc = buf_printf(&b, "Build %s%s%s%s finished: %lld passed, %lld softfailed, %lld failed, %lld incomplete",
				str_of(d, "BUILD"), *g ? " of " : "", g, "", num_of(d, "passed"), num_of(d, "softfailed"),
				num_of(d, "failed"), num_of(d, "incomplete"));
		if (!rc && num_of(d, "other"))
			rc = buf_printf(&b, ", %lld other", num_of(d, "other"));
		if (!rc)
			rc = buf_printf(&b, " - %s", link);
	} else if (!strncmp(ev->kind, "comment.", 8)) {
		const char *what = !strcmp(ev->kind, "comment.create") ? "commented on"
				   : !strcmp(ev->kind, "comment.update") ? "edited a comment on" : "deleted a comment on";
		rc = buf_printf(&b, "%s %s %s %lld - %s", *str_of(d, "user") ? str_of(d, "user") : "someone", what,
				json_is_integer(json_object_get(d, "job_id")) ? "job" : "group",
				json_is_integer(json_object_get(d, "job_id")) ? num_of(d, "job_id") : num_of(d, "group_id"),
				link);
	} else {
		const char *r = str_of(d, "result");
		rc = buf_printf(&b, "Job %lld %s@%s %s%s%s - %s", num_of(d, "id"), str_of(d, "TEST"), str_of(d, "MACHINE"),
				ev->kind + 4, *r ? ": " : "", r, link);
	}
	free(link);
	if (rc) {
		buf_release(&b);
		return NULL;
	}
	/* One IRC line: no line breaks from a user's text. */
	for (size_t i = 0; i < b.len; i++)
		if (b.data[i] == '\r' || b.data[i] == '\n')
			b.data[i] = ' ';
	return buf_steal(&b);
}

/* ---- the senders ---- */

struct sink_thread {
	struct events *e;
	const struct events_sink_ops *ops;
	const char *kinds;
	void *ctx;
	pthread_t thread;
	bool started;
};

struct events {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	atomic_bool stop;
	char *db_path;
	char *base_url;
	const struct events_config *cfg;
	struct events_env env;
	struct sink_thread sinks[3];
	size_t nsinks;
};

/* Wait ms or until stopped; true when stopped. */
static bool pause_ms(struct events *e, long ms)
{
	struct timespec ts;
	bool stop;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += ms / 1000;
	ts.tv_nsec += (ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&e->lock);
	while (!(stop = atomic_load(&e->stop)) && pthread_cond_timedwait(&e->cond, &e->lock, &ts) != ETIMEDOUT)
		;
	pthread_mutex_unlock(&e->lock);
	return stop || atomic_load(&e->stop);
}

/* Add the job's settings to a job event's data: ISO and HDD_1 as openQA's
 * AMQP plugin does, every setting for job.create (openQA sends the posted
 * ones). The job may be gone: then nothing is added. 0, or ERR_NOMEM when
 * a setting could not be added (the event is sent later, whole). */
static int complete_data(struct db *db, const char *kind, json_t *d)
{
	const json_t *id = json_object_get(d, "id");
	bool all = !strcmp(kind, "job.create");
	struct db_stmt *st;

	if (strncmp(kind, "job.", 4) || !json_is_integer(id))
		return 0;
	if (db_prepare(db, &st, "SELECT key, value FROM job_settings WHERE job_id = ? ORDER BY id", "i",
		       (int64_t)json_integer_value(id)))
		return 0;
	while (db_step(st) == 1) {
		const char *k = db_col_text(st, 0), *v = db_col_text(st, 1);
		if (!k || !v)
			continue;
		if ((all || !strcmp(k, "ISO") || !strcmp(k, "HDD_1")) && !json_object_get(d, k) &&
		    json_object_set_new(d, k, json_string(v))) {
			db_finalize(st);
			return ERR_NOMEM;
		}
	}
	db_finalize(st);
	return 0;
}

struct batch {
	int64_t id[EVENTS_BATCH];
	char kind[EVENTS_BATCH][24];
	char created[EVENTS_BATCH][DB_TIME_LEN];
	json_t *data[EVENTS_BATCH];
	size_t n;
};

static void batch_clear(struct batch *b)
{
	size_t i;

	for (i = 0; i < b->n; i++)
		json_decref(b->data[i]);
	b->n = 0;
}

/* Where a sender may read up to. On PostgreSQL an event's id is drawn
 * when its transaction inserts it, not when it commits, and transactions
 * of several connections commit in any order: event 11 may be visible while
 * event 10 is not yet, and a sender that read 11 would never see 10. So a
 * sender reads only up to a horizon below which every event is final: the
 * sequence's value at one moment (read first), made the horizon once every
 * transaction then in progress has ended (the snapshot read next lists
 * them). Every event is inserted by a trigger of a write to jobs or
 * comments, so its transaction has its id (and is in that list) before it
 * draws the event's. On SQLite one writer at a time commits in id order. */
int events__horizon_move(struct db *db, struct events_horizon *h)
{
	struct db_stmt *st;
	int64_t seq = 0, running = 0;
	int rc;

	if (!db_is_pg(db)) {
		h->limit = INT64_MAX;
		return 0;
	}
	if (h->snap) {
		if ((rc = db_query_int(db, &running, "SELECT COUNT(*) FROM pg_snapshot_xip(CAST(? AS pg_snapshot)) x"
				       " WHERE pg_xact_status(x) = 'in progress'", "t", h->snap)))
			return rc;
		if (running)
			return 0;
		h->limit = h->pending;
		free(h->snap);
		h->snap = NULL;
	}
	if ((rc = db_query_int(db, &seq, "SELECT COALESCE(pg_sequence_last_value("
			       "CAST(pg_get_serial_sequence('events', 'id') AS regclass)), 0)", "")))
		return rc;
	if ((rc = db_prepare(db, &st, "SELECT s::text, (SELECT COUNT(*) FROM pg_snapshot_xip(s))"
			     " FROM pg_current_snapshot() s", "")))
		return rc;
	if ((rc = db_step(st)) == 1) {
		if (!db_col_int(st, 1))
			h->limit = seq > h->limit ? seq : h->limit;
		else if ((h->snap = strdup(db_col_text(st, 0) ? db_col_text(st, 0) : "")))
			h->pending = seq;
		else
			rc = ERR_NOMEM;
	}
	db_finalize(st);
	return rc < 0 ? rc : 0;
}

static int batch_read(struct db *db, int64_t after, struct events_horizon *h, struct batch *b)
{
	struct db_stmt *st;
	int rc;

	b->n = 0;
	if ((rc = events__horizon_move(db, h)))
		return rc;
	if (h->limit <= after)
		return 0;
	rc = db_prepare(db, &st, "SELECT id, kind, payload, t_created FROM events WHERE id > ? AND id <= ?"
			" ORDER BY id LIMIT 200", "ii", after, h->limit);
	if (rc)
		return rc;
	while ((rc = db_step(st)) == 1 && b->n < EVENTS_BATCH) {
		json_error_t je;
		const char *p = db_col_text(st, 2);
		json_t *d = p ? json_loads(p, 0, &je) : NULL;
		b->id[b->n] = db_col_int(st, 0);
		snprintf(b->kind[b->n], sizeof(b->kind[0]), "%s", db_col_text(st, 1) ? db_col_text(st, 1) : "");
		snprintf(b->created[b->n], sizeof(b->created[0]), "%s", db_col_text(st, 3) ? db_col_text(st, 3) : "");
		b->data[b->n++] = json_is_object(d) ? d : (json_decref(d), json_object());
	}
	db_finalize(st);
	return rc < 0 ? rc : 0;
}

static void *sink_main(void *arg)
{
	struct sink_thread *t = arg;
	struct events *e = t->e;
	const char *name = t->ops->name;
	struct db *db = NULL;
	struct batch *b = calloc(1, sizeof(*b));
	char err[512];
	int64_t cursor = 0, done = 0;
	struct events_horizon hz = { 0, 0, NULL };
	long backoff = EVENTS_RETRY_MIN_MS, failures = 0, batches = 0;

	if (!b || db_open(&db, e->db_path, err, sizeof(err))) {
		log_err("%s: cannot start: %s", name, b ? err : "out of memory");
		goto out;
	}
	if (db_query_int(db, &cursor, "SELECT last_id FROM event_sinks WHERE name = ?", "t", name))
		cursor = 0;
	while (!atomic_load(&e->stop)) {
		int64_t confirmed = cursor;
		size_t i;
		int rc;

		if ((rc = batch_read(db, cursor, &hz, b))) {
			log_warn("%s: cannot read the outbox: %s", name, db_errmsg(db));
			batch_clear(b);
			if (pause_ms(e, e->cfg->poll_ms * 4))
				break;
			continue;
		}
		if (!b->n) {
			/* Idle: events every sink has confirmed are not needed any more. */
			if (batches && db_exec(db, "DELETE FROM events WHERE id <= (SELECT MIN(last_id) FROM event_sinks)",
					       "") < 0)
				log_warn("%s: cannot prune delivered events: %s", name, db_errmsg(db));
			batches = 0;
			if (t->ops->idle)
				t->ops->idle(t->ctx);
			if (pause_ms(e, e->cfg->poll_ms))
				break;
			continue;
		}
		err[0] = '\0';
		for (i = 0; i < b->n && !rc; i++) {
			struct events_event ev = { b->id[i], b->kind[i], b->created[i], b->data[i] };
			bool ok = false;
			if (t->kinds && !kind_in(t->kinds, ev.kind)) {
				if (confirmed == (i ? b->id[i - 1] : cursor))
					confirmed = ev.id; /* nothing of ours unconfirmed before it */
				continue;
			}
			if ((rc = complete_data(db, ev.kind, b->data[i]))) {
				snprintf(err, sizeof(err), "out of memory");
				break;
			}
			rc = t->ops->send(t->ctx, &ev, &ok, err, sizeof(err));
			if (!rc && ok && confirmed == (i ? b->id[i - 1] : cursor))
				confirmed = ev.id;
			if (!rc)
				done++;
		}
		if (!rc)
			rc = t->ops->flush(t->ctx, err, sizeof(err));
		if (!rc)
			confirmed = b->id[b->n - 1];
		batch_clear(b);
		if (confirmed != cursor) {
			if (db_exec(db, "UPDATE event_sinks SET last_id = ? WHERE name = ? AND last_id < ?", "iti", confirmed,
				    name, confirmed) < 0)
				log_warn("%s: cannot record delivery up to event %lld: %s", name, (long long)confirmed,
					 db_errmsg(db));
			cursor = confirmed;
		}
		if (rc) {
			if (!failures++)
				log_warn("%s: %s; trying again (events after %lld wait)", name, err[0] ? err : err_str(rc),
					 (long long)cursor);
			else
				log_debug("%s: attempt %ld failed: %s", name, failures, err[0] ? err : err_str(rc));
			t->ops->reset(t->ctx);
			if (pause_ms(e, backoff))
				break;
			backoff = backoff * 2 > e->cfg->retry_max_ms ? e->cfg->retry_max_ms : backoff * 2;
			continue;
		}
		if (failures)
			log_info("%s: delivering again after %ld failed attempts", name, failures);
		failures = 0;
		backoff = EVENTS_RETRY_MIN_MS;
		if (++batches % EVENTS_PRUNE_EVERY == 0 &&
		    db_exec(db, "DELETE FROM events WHERE id <= (SELECT MIN(last_id) FROM event_sinks)", "") < 0)
			log_warn("%s: cannot prune delivered events: %s", name, db_errmsg(db));
	}
out:
	log_debug("%s: sender stops after %lld deliveries", name, (long long)done);
	free(hz.snap);
	free(b);
	db_free(db);
	return NULL;
}

/* The event_sinks rows: one per configured sink (a new one starts after
 * the newest event), none for the others. */
static int sync_sinks(struct db *db, struct events *e, char *err, size_t errlen)
{
	static const char *const all[] = { "irc", "webhook", "amqp" };
	const struct events_sink_config *on[] = { &e->cfg->irc, &e->cfg->webhook, &e->cfg->amqp };
	size_t i;
	int rc;

	/* Serial: "insert unless one exists" reads, then writes (servers
	 * starting together would both insert). */
	if ((rc = db_begin_serial(db)))
		goto fail;
	for (i = 0; i < 3; i++) {
		if (on[i]->on)
			rc = db_exec(db, "INSERT INTO event_sinks (name, last_id) SELECT ?, (SELECT COALESCE(MAX(id), 0) FROM events)"
				     " WHERE NOT EXISTS (SELECT 1 FROM event_sinks WHERE name = ?)", "tt", all[i], all[i]);
		else
			rc = db_exec(db, "DELETE FROM event_sinks WHERE name = ?", "t", all[i]);
		if (rc < 0) {
			db_rollback(db);
			goto fail;
		}
	}
	/* With no sink left, nothing is owed to anyone. */
	if ((rc = db_exec(db, "DELETE FROM events WHERE NOT EXISTS (SELECT 1 FROM event_sinks)"
			  " OR id <= (SELECT MIN(last_id) FROM event_sinks)", "")) < 0) {
		db_rollback(db);
		goto fail;
	}
	if ((rc = db_commit(db)))
		goto fail;
	return 0;
fail:
	err_set(err, errlen, "events: cannot record the sinks: %s", db_errmsg(db));
	return rc ? rc : ERR_IO;
}

int events_start(struct events **out, const char *db_path, const struct events_config *cfg,
		 const char *default_base_url, char *err, size_t errlen)
{
	static const struct events_config none;
	const struct events_sink_ops *ops[] = { &events__irc_ops, &events__webhook_ops, &events__amqp_ops };
	struct events *e = NULL;
	struct db *db = NULL;
	size_t i;
	int rc;

	*out = NULL;
	e = calloc(1, sizeof(*e));
	if (!e)
		return ERR_NOMEM;
	pthread_mutex_init(&e->lock, NULL);
	pthread_cond_init(&e->cond, NULL);
	atomic_init(&e->stop, false);
	e->cfg = cfg ? cfg : &none;
	e->db_path = str_dup(db_path);
	e->base_url = str_dup(e->cfg->base_url ? e->cfg->base_url : default_base_url);
	if (!e->db_path || !e->base_url) {
		err_set(err, errlen, "events: out of memory");
		rc = ERR_NOMEM;
		goto fail;
	}
	/* no trailing slash: links append "/tests/..." */
	while (*e->base_url && e->base_url[strlen(e->base_url) - 1] == '/')
		e->base_url[strlen(e->base_url) - 1] = '\0';
	e->env = (struct events_env){ e->cfg, e->base_url, &e->stop };
	if ((rc = db_open(&db, db_path, err, errlen)))
		goto fail;
	rc = sync_sinks(db, e, err, errlen);
	db_free(db);
	if (rc)
		goto fail;
	if (!events_config_any(cfg)) {
		events_stop(e);
		return 0;
	}
	for (i = 0; i < 3; i++) {
		const struct events_sink_config *sc = i == 0 ? &cfg->irc : i == 1 ? &cfg->webhook : &cfg->amqp;
		struct sink_thread *t;
		if (!sc->on)
			continue;
		t = &e->sinks[e->nsinks++];
		t->e = e;
		t->ops = ops[i];
		t->kinds = sc->kinds ? sc->kinds : ops[i]->default_kinds;
		if ((rc = ops[i]->open(&t->ctx, &e->env, err, errlen)))
			goto fail;
		if (pthread_create(&t->thread, NULL, sink_main, t)) {
			err_set(err, errlen, "events: cannot start the %s sender", ops[i]->name);
			rc = ERR_IO;
			goto fail;
		}
		t->started = true;
		log_info("sending %s to %s", t->kinds ? t->kinds : "every event", ops[i]->name);
	}
	*out = e;
	return 0;
fail:
	events_stop(e);
	return rc;
}

void events_stop(struct events *e)
{
	size_t i;

	if (!e)
		return;
	pthread_mutex_lock(&e->lock);
	atomic_store(&e->stop, true);
	pthread_cond_broadcast(&e->cond);
	pthread_mutex_unlock(&e->lock);
	for (i = 0; i < e->nsinks; i++) {
		struct sink_thread *t = &e->sinks[i];
		if (t->started)
			pthread_join(t->thread, NULL);
		if (t->ctx)
			t->ops->close(t->ctx);
	}
	pthread_cond_destroy(&e->cond);
	pthread_mutex_destroy(&e->lock);
	free(e->db_path);
	free(e->base_url);
	free(e);
}
