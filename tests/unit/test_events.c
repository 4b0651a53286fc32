/* SPDX-License-Identifier: MIT */
/* test_events.c - event notifications without sinks: the [events]/[irc]/
 * [webhook]/[amqp] configuration and its errors, the outbox triggers of
 * migration 15 (nothing recorded without a sink; job, build and comment
 * events with openQA's data), and the IRC line and links. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "unit.h"
#include "server/db/db.h"
#include "server/events/events.h"
#include "server/events/events_int.h"
#include "util/conf.h"
#include "util/err.h"

static int parse(const char *text, struct events_config *cfg, char *err, size_t errlen)
{
	struct conf c;
	int rc;

	conf_init(&c);
	CHECK_INT(conf_parse(&c, text, strlen(text), err, errlen), 0);
	rc = events_config_parse(cfg, &c, err, errlen);
	conf_release(&c);
	return rc;
}

TEST(events_config)
{
	struct events_config cfg;
	char err[512];

	CHECK_INT(parse("[server]\nlisten = :1\n", &cfg, err, sizeof(err)), 0);
	CHECK(!events_config_any(&cfg));
	events_config_release(&cfg);

	CHECK_INT(parse("[events]\nbase-url = https://q.example\nretry-max = 5\n[irc]\nserver = irc:6667\nchannel = #c\n"
			"[webhook]\nurl = http://h/x\nsecret = s\nevents = job.done,build.done\n[amqp]\n",
			&cfg, err, sizeof(err)), 0);
	CHECK(events_config_any(&cfg));
	CHECK(cfg.irc.on && cfg.webhook.on && cfg.amqp.on);
	CHECK_STR(cfg.base_url, "https://q.example");
	CHECK_INT(cfg.retry_max_ms, 5000);
	CHECK_STR(cfg.irc_nick, "vigil");
	CHECK(!cfg.irc.kinds);
	CHECK_STR(cfg.webhook.kinds, "job.done,build.done");
	CHECK_STR(cfg.amqp_url, "amqp://guest:guest@localhost:5672/");
	CHECK_STR(cfg.amqp_exchange, "pubsub");
	CHECK_STR(cfg.amqp_prefix, "suse");
	events_config_release(&cfg);

	const char *bad[] = { "[irc]\nserver = x\n", "[irc]\nserver = x\nchannel = c\n", "[webhook]\nurl = ftp://x\nsecret = s\n",
			      "[webhook]\nurl = http://x\n", "[events]\nretry-max = 0\n", "[amqp]\nurl = http://x\n",
			      "[amqp]\nevents = job.done job.gone\n", "[irc]\nport = 1\n" };
	const char *want[] = { "-:1: [irc] needs 'channel ='", "channel: 'c' does not start with '#'", "is not an http://",
			       "-:1: [webhook] needs 'secret ='", "-:2: [events] retry-max: '0': expected 1..3600",
			       "is not an amqp:// URL", "-:2: [amqp] events: unknown event 'job.gone'",
			       "-:2: [irc] port: unknown key" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CHECK_INT(parse(bad[i], &cfg, err, sizeof(err)), ERR_INVALID);
		if (!strstr(err, want[i]))
			FAIL("'%s' lacks '%s'", err, want[i]);
		events_config_release(&cfg);
	}
}

static int count_events(struct db *db, const char *kind)
{
	int64_t n = -1;
	CHECK_INT(db_query_int(db, &n, "SELECT COUNT(*) FROM events WHERE kind = ?", "t", kind), 0);
	return (int)n;
}

static json_t *payload(struct db *db, const char *kind)
{
	struct db_stmt *st;
	json_t *j = NULL;

	CHECK_INT(db_prepare(db, &st, "SELECT payload FROM events WHERE kind = ? ORDER BY id DESC LIMIT 1", "t", kind),
		  0);
	if (db_step(st) == 1)
		j = json_loads(db_col_text(st, 0), 0, NULL);
	db_finalize(st);
	CHECK(j);
	return j;
}

static void add_job(struct db *db, const char *test, const char *build)
{
	CHECK(db_exec(db, "INSERT INTO jobs (test, build, distri, version, machine, t_created, t_updated)"
		      " VALUES (?, ?, 'd', '1', '64bit', '2026-01-01T00:00:00', '2026-01-01T00:00:00')", "tt", test,
		      build) == 1);
}

/* On PostgreSQL a sender reads no further than the events every
 * transaction has finished with: a later event committed first waits for
 * an earlier one still in its transaction (else the sender's cursor would
 * pass it for ever). */
TEST(events_outbox_horizon)
{
	struct db *a = unit_db(), *b = unit_db(), *r = unit_db();
	struct events_horizon h = { 0, 0, NULL };
	int64_t first = 0, second = 0;

	CHECK(db_exec(a, "INSERT INTO event_sinks (name, last_id) VALUES ('webhook', 0)", "") == 1);
	if (db_is_pg(a)) {
		CHECK_INT(db_begin(a), 0);
		add_job(a, "h1", "H");
		CHECK_INT(db_query_int(a, &first, "SELECT MAX(id) FROM events", ""), 0);
		add_job(b, "h2", "H"); /* committed at once, its event after a's */
		CHECK_INT(db_query_int(b, &second, "SELECT MAX(id) FROM events", ""), 0);
		CHECK(second > first);
		CHECK_INT(events__horizon_move(r, &h), 0);
		CHECK_INT(events__horizon_move(r, &h), 0);
		CHECK(h.limit < first);
		CHECK_INT(db_commit(a), 0);
		CHECK_INT(events__horizon_move(r, &h), 0);
		CHECK(h.limit >= second);
	} else {
		CHECK_INT(events__horizon_move(r, &h), 0);
		CHECK(h.limit == INT64_MAX);
	}
	free(h.snap);
	db_free(r);
	db_free(b);
	db_free(a);
}

TEST(events_outbox_triggers)
{
	struct db *db = unit_db();
	json_t *j;

	/* No sink: nothing is recorded. */
	add_job(db, "t0", "B0");
	CHECK_INT(count_events(db, "job.create"), 0);
	CHECK(db_exec(db, "INSERT INTO event_sinks (name, last_id) VALUES ('webhook', 0)", "") == 1);
	add_job(db, "t1", "B1");
	add_job(db, "t2", "B1");
	add_job(db, "t3", "B1");
	CHECK_INT(count_events(db, "job.create"), 3);
	j = payload(db, "job.create");
	CHECK_STR(json_string_value(json_object_get(j, "TEST")), "t3");
	CHECK_INT(json_integer_value(json_object_get(j, "remaining")), 3);
	json_decref(j);
	CHECK(db_exec(db, "UPDATE jobs SET state = 'running' WHERE test = 't1'", "") == 1);
	CHECK(db_exec(db, "UPDATE jobs SET state = 'running' WHERE test = 't1'", "") == 1); /* no change: no event */
	CHECK_INT(count_events(db, "job.start"), 1);
	CHECK(db_exec(db, "UPDATE jobs SET state = 'done', result = 'passed' WHERE test = 't1'", "") == 1);
	CHECK(db_exec(db, "UPDATE jobs SET state = 'done', result = 'failed' WHERE test = 't2'", "") == 1);
	CHECK_INT(count_events(db, "build.done"), 0);
	j = payload(db, "job.done");
	CHECK_STR(json_string_value(json_object_get(j, "result")), "failed");
	CHECK_INT(json_integer_value(json_object_get(j, "remaining")), 1);
	json_decref(j);
	CHECK(db_exec(db, "UPDATE jobs SET state = 'cancelled', result = 'user_cancelled' WHERE test = 't3'", "") == 1);
	CHECK_INT(count_events(db, "job.cancel"), 1);
	CHECK_INT(count_events(db, "build.done"), 1);
	j = payload(db, "build.done");
	CHECK_STR(json_string_value(json_object_get(j, "BUILD")), "B1");
	CHECK_INT(json_integer_value(json_object_get(j, "total")), 3);
	CHECK_INT(json_integer_value(json_object_get(j, "passed")), 1);
	CHECK_INT(json_integer_value(json_object_get(j, "failed")), 1);
	CHECK_INT(json_integer_value(json_object_get(j, "other")), 1);
	json_decref(j);
	/* B0 (created before the sink) finishing is a build of its own. */
	CHECK(db_exec(db, "UPDATE jobs SET state = 'done', result = 'passed' WHERE test = 't0'", "") == 1);
	CHECK_INT(count_events(db, "build.done"), 2);
	CHECK(db_exec(db, "INSERT INTO comments (job_id, text, user_name, t_created, t_updated)"
		      " VALUES (1, 'bsc#1 line1\nline2', 'alice', '2026-01-01T00:00:00', '2026-01-01T00:00:00')", "") == 1);
	j = payload(db, "comment.create");
	CHECK_STR(json_string_value(json_object_get(j, "user")), "alice");
	CHECK_STR(json_string_value(json_object_get(j, "created")), "2026-01-01T00:00:00Z");
	json_decref(j);
	db_free(db);
}

/* Migration 17: openQA's job.restart, job.update_result, job.delete,
 * comment.update and comment.delete. */
TEST(events_outbox_triggers_17)
{
	struct db *db = unit_db();
	json_t *j;
	char id[16];

	CHECK(db_exec(db, "INSERT INTO event_sinks (name, last_id) VALUES ('webhook', 0)", "") == 1);
	add_job(db, "t1", "B1");
	add_job(db, "t2", "B1");
	/* The result changes with the state: job.done, no job.update_result. */
	CHECK(db_exec(db, "UPDATE jobs SET state = 'done', result = 'failed' WHERE test = 't1'", "") == 1);
	CHECK_INT(count_events(db, "job.update_result"), 0);
	/* A finished job's result overridden: job.update_result. */
	CHECK(db_exec(db, "UPDATE jobs SET result = 'softfailed' WHERE test = 't1'", "") == 1);
	CHECK(db_exec(db, "UPDATE jobs SET result = 'softfailed' WHERE test = 't1'", "") == 1); /* no change */
	CHECK_INT(count_events(db, "job.update_result"), 1);
	j = payload(db, "job.update_result");
	CHECK_INT(json_integer_value(json_object_get(j, "id")), 1);
	CHECK_STR(json_string_value(json_object_get(j, "result")), "softfailed");
	CHECK_STR(json_string_value(json_object_get(j, "BUILD")), "B1");
	CHECK_INT(json_integer_value(json_object_get(j, "remaining")), 1);
	json_decref(j);
	/* A clone: job.restart of the original, result mapping old id to new. */
	add_job(db, "t1", "B1");
	CHECK(db_exec(db, "UPDATE jobs SET clone_id = 3 WHERE id = 1", "") == 1);
	CHECK_INT(count_events(db, "job.restart"), 1);
	j = payload(db, "job.restart");
	CHECK_INT(json_integer_value(json_object_get(j, "id")), 1);
	snprintf(id, sizeof(id), "%d", 1);
	CHECK_INT(json_integer_value(json_object_get(json_object_get(j, "result"), id)), 3);
	CHECK_STR(json_string_value(json_object_get(j, "TEST")), "t1");
	CHECK_INT(json_integer_value(json_object_get(j, "remaining")), 2);
	json_decref(j);
	/* Comments: an edit of the text, then the deletion. */
	CHECK(db_exec(db, "INSERT INTO comments (job_id, text, user_name, t_created, t_updated)"
		      " VALUES (2, 'first', 'alice', '2026-01-01T00:00:00', '2026-01-01T00:00:00')", "") == 1);
	CHECK(db_exec(db, "UPDATE comments SET text = 'second', t_updated = '2026-01-02T00:00:00' WHERE job_id = 2", "") ==
	      1);
	CHECK_INT(count_events(db, "comment.update"), 1);
	j = payload(db, "comment.update");
	CHECK_STR(json_string_value(json_object_get(j, "text")), "second");
	CHECK_STR(json_string_value(json_object_get(j, "updated")), "2026-01-02T00:00:00Z");
	CHECK_INT(json_integer_value(json_object_get(j, "job_id")), 2);
	json_decref(j);
	CHECK(db_exec(db, "DELETE FROM comments WHERE job_id = 2", "") == 1);
	j = payload(db, "comment.delete");
	CHECK_INT(json_integer_value(json_object_get(j, "job_id")), 2);
	CHECK_STR(json_string_value(json_object_get(j, "user")), "alice");
	json_decref(j);
	/* A deleted job: job.delete with what it was; its comments go too. */
	CHECK(db_exec(db, "INSERT INTO comments (job_id, text, user_name, t_created, t_updated)"
		      " VALUES (2, 'third', 'bob', '2026-01-01T00:00:00', '2026-01-01T00:00:00')", "") == 1);
	CHECK(db_exec(db, "DELETE FROM jobs WHERE id = 2", "") == 1);
	CHECK_INT(count_events(db, "job.delete"), 1);
	CHECK_INT(count_events(db, "comment.delete"), 2);
	j = payload(db, "job.delete");
	CHECK_INT(json_integer_value(json_object_get(j, "id")), 2);
	CHECK_STR(json_string_value(json_object_get(j, "TEST")), "t2");
	CHECK_STR(json_string_value(json_object_get(j, "result")), "none");
	json_decref(j);
	CHECK_INT(db_query_int(db, &(int64_t){ 0 }, "SELECT id FROM events WHERE kind = 'job.delete'"
			       " AND t_created LIKE '2___-__-__T__:__:__'", ""), 0);
	db_free(db);
}

TEST(events_line_and_link)
{
	json_t *d = json_pack("{s:s,s:s,s:s,s:i,s:i,s:i,s:i,s:i,s:n}", "BUILD", "a b&c", "DISTRI", "d", "VERSION", "1",
			      "passed", 3, "softfailed", 1, "failed", 2, "incomplete", 0, "other", 0, "group_id");
	struct events_event ev = { 8, "build.done", "2026-01-01T00:00:00", d };
	char *s = events__line("http://q:9526", &ev);

	CHECK_STR(s, "Build a b&c finished: 3 passed, 1 softfailed, 2 failed, 0 incomplete - "
		     "http://q:9526/tests/overview?distri=d&version=1&build=a+b%26c");
	free(s);
	json_object_set_new(d, "group_id", json_integer(4));
	json_object_set_new(d, "group", json_string("SLE 16"));
	json_object_set_new(d, "other", json_integer(2));
	s = events__line("http://q", &ev);
	CHECK_STR(s, "Build a b&c of SLE 16 finished: 3 passed, 1 softfailed, 2 failed, 0 incomplete, 2 other - "
		     "http://q/tests/overview?groupid=4&build=a+b%26c");
	free(s);
	json_decref(d);
	d = json_pack("{s:i,s:s,s:s,s:s}", "id", 42, "TEST", "boot", "MACHINE", "64bit", "result", "passed");
	ev = (struct events_event){ 9, "job.done", "2026-01-01T00:00:00", d };
	s = events__line("http://q", &ev);
	CHECK_STR(s, "Job 42 boot@64bit done: passed - http://q/tests/42");
	free(s);
	json_decref(d);
	d = json_pack("{s:i,s:i,s:s,s:s}", "id", 7, "job_id", 42, "user", "bob", "text", "a\nb");
	ev = (struct events_event){ 10, "comment.create", "2026-01-01T00:00:00", d };
	s = events__line("http://q", &ev);
	CHECK_STR(s, "bob commented on job 42 - http://q/tests/42");
	free(s);
	json_decref(d);
	d = json_pack("{s:i,s:i}", "id", 7, "job_id", 42);
	ev = (struct events_event){ 11, "comment.delete", "2026-01-01T00:00:00", d };
	s = events__line("http://q", &ev);
	CHECK_STR(s, "someone deleted a comment on job 42 - http://q/tests/42");
	free(s);
	json_decref(d);
}
