/* SPDX-License-Identifier: MIT */
/* wshub.c - openQA's worker WebSocket in `vigil serve` (see
 * wshub.h). Owns the sessions: each an upgraded socket, a net/ws.c
 * endpoint, a database connection and a thread. The session's thread alone
 * writes its socket's state; the hub's lock guards only the lists. The
 * messages are openQA's (reference/openqa-api.md 4.3): worker_status,
 * accepted, rejected, quit from the worker; grab_job, info, cancel, abort
 * to it. */
#define LOG_MODULE "ws"
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "net/ws.h"
#include "server/db/db.h"
#include "server/store/jobs.h"
#include "server/store/locks.h"
#include "server/http/pool.h"
#include "server/sched/sched.h"
#include "server/api/watch.h"
#include "server/store/workers.h"
#include "server/api/wshub.h"
#include "util/err.h"
#include "util/log.h"
#include "util/time.h"
#include "util/banned.h" /* last: after every system header */

#define WS_EXPECT_MAX 1024 /* openQA workers remembered as expecting a socket */

struct ws_session {
	struct ws_session *next;
	struct wshub *hub;
	int64_t worker_id;
	struct ws_transport t;
	struct ws *ws;
	struct MHD_UpgradeResponseHandle *urh;
	struct db *db;
	pthread_t thread;
	bool started;
	bool done;              /* the thread has ended */
	/* The session thread's own state. */
	bool free;              /* the worker said it is free */
	bool quit;              /* the worker said quit */
	int64_t job_id;         /* the job handed out and not yet over, 0 if none */
	bool cancel_sent;
	int64_t last_seen_s;
	int64_t last_rx_ms;     /* monotonic: the last frame from the worker, pongs too */
	int64_t next_ping_ms;
	bool livelog_on;        /* livelog_start sent for job_id */
};

struct wshub {
	char *db_path;
	struct pool *pool;
	int64_t dead_ms;        /* a socket silent this long is a dead peer */
	struct watch_map *live; /* the server's watched jobs, or NULL */
	pthread_mutex_t lock;
	bool stopping;
	struct ws_session *sessions;
	int64_t expect[WS_EXPECT_MAX];
	size_t nexpect;
};

int wshub_new(struct wshub **out, const char *db_path, struct pool *pool, int dead_s)
{
	struct wshub *h = calloc(1, sizeof(*h));

	*out = NULL;
	if (!h || !(h->db_path = strdup(db_path))) {
		free(h);
		return ERR_NOMEM;
	}
	h->pool = pool;
	h->dead_ms = 1000LL * (dead_s > WS_WORKERS_DEAD_MIN_S ? dead_s : WS_WORKERS_DEAD_MIN_S);
	pthread_mutex_init(&h->lock, NULL);
	*out = h;
	return 0;
}

static void session_free(struct ws_session *s)
{
	ws_free(s->ws);
	if (s->urh)
		MHD_upgrade_action(s->urh, MHD_UPGRADE_ACTION_CLOSE);
	db_free(s->db);
	free(s);
}

/* Joins and frees the sessions whose threads have ended (all when all). */
static void reap(struct wshub *h, bool all)
{
	struct ws_session *gone = NULL, **p;

	pthread_mutex_lock(&h->lock);
	for (p = &h->sessions; *p;) {
		struct ws_session *s = *p;
		if (all || s->done) {
			*p = s->next;
			s->next = gone;
			gone = s;
		} else {
			p = &s->next;
		}
	}
	pthread_mutex_unlock(&h->lock);
	while (gone) {
		struct ws_session *s = gone;
		gone = s->next;
		if (s->started)
			pthread_join(s->thread, NULL);
		session_free(s);
	}
}

void wshub_free(struct wshub *h)
{
	if (!h)
		return;
	pthread_mutex_lock(&h->lock);
	h->stopping = true;
	pthread_mutex_unlock(&h->lock);
	reap(h, true);
	pthread_mutex_destroy(&h->lock);
	free(h->db_path);
	free(h);
}

void wshub_set_live(struct wshub *h, struct watch_map *live)
{
	h->live = live;
}

void wshub_expect(struct wshub *h, int64_t worker_id, bool expect)
{
	size_t i;

	pthread_mutex_lock(&h->lock);
	for (i = 0; i < h->nexpect && h->expect[i] != worker_id; i++)
		;
	if (expect && i == h->nexpect && h->nexpect < WS_EXPECT_MAX)
		h->expect[h->nexpect++] = worker_id;
	else if (!expect && i < h->nexpect)
		h->expect[i] = h->expect[--h->nexpect];
	pthread_mutex_unlock(&h->lock);
}

bool wshub_missing_cb(void *hub, int64_t worker_id)
{
	return wshub_missing(hub, worker_id);
}

bool wshub_missing(struct wshub *h, int64_t worker_id)
{
	bool expected = false, connected = false;
	struct ws_session *s;
	size_t i;

	pthread_mutex_lock(&h->lock);
	for (i = 0; i < h->nexpect; i++)
		expected |= h->expect[i] == worker_id;
	for (s = h->sessions; s; s = s->next)
		connected |= s->worker_id == worker_id && !s->done;
	pthread_mutex_unlock(&h->lock);
	return expected && !connected;
}

static void send_json(struct ws_session *s, json_t *j)
{
	char *text = j ? json_dumps(j, JSON_COMPACT) : NULL;

	if (!text || ws_send_text(s->ws, text))
		log_warn("worker %lld: cannot send a message on its WebSocket", (long long)s->worker_id);
	free(text);
	json_decref(j);
}

static void set_error(struct ws_session *s, const char *error)
{
	pool_write_begin(s->hub->pool);
	if (workers_set_error(s->db, s->worker_id, error) < 0 && error)
		log_warn("worker %lld: error not recorded: %s", (long long)s->worker_id, db_errmsg(s->db));
	pool_write_end(s->hub->pool);
}

/* Jobs handed to the worker and not accepted go back to the queue. */
static void requeue_assigned(struct ws_session *s, int64_t only)
{
	char now[DB_TIME_LEN];

	db_now(now);
	pool_write_begin(s->hub->pool);
	if (db_exec(s->db, "UPDATE jobs SET state = 'scheduled', assigned_worker_id = NULL, t_updated = ?"
		    " WHERE assigned_worker_id = ? AND state = 'assigned' AND (? = 0 OR id = ?)", "tiii", now,
		    s->worker_id, only, only) < 0 ||
	    db_exec(s->db, "UPDATE workers SET job_id = NULL WHERE id = ? AND (? = 0 OR job_id = ?)", "iii",
		    s->worker_id, only, only) < 0)
		log_warn("worker %lld: jobs not given back: %s", (long long)s->worker_id, db_errmsg(s->db));
	pool_write_end(s->hub->pool);
}

static void on_worker_status(struct ws_session *s, const json_t *m)
{
	const char *st = json_string_value(json_object_get(m, "status"));
	const char *reason = json_string_value(json_object_get(m, "reason"));

	if (st && !strcmp(st, "broken")) {
		char err[300];
		snprintf(err, sizeof(err), "%s", reason ? reason : "broken");
		set_error(s, err);
		s->free = false;
	} else if (st && !strcmp(st, "free")) {
		/* The status says free only between jobs: one it still held is
		 * over on its side (a job not yet accepted is not counted). */
		if (!s->free)
			set_error(s, NULL);
		s->free = true;
	} else if (st && !strcmp(st, "working")) {
		s->free = false;
	}
	send_json(s, json_pack("{s:s,s:i}", "type", "info", "seen", 1));
}

static void on_accepted(struct ws_session *s, const json_t *m)
{
	const json_t *id = json_object_get(m, "jobid");
	int64_t job = json_is_integer(id) ? json_integer_value(id) : 0;
	char now[DB_TIME_LEN];
	int rc;

	if (!job && json_is_string(id))
		job = strtoll(json_string_value(id), NULL, 10);
	db_now(now);
	pool_write_begin(s->hub->pool);
	rc = db_exec(s->db, "UPDATE jobs SET state = 'setup', t_updated = ? WHERE id = ? AND assigned_worker_id = ?"
		     " AND state = 'assigned'", "tii", now, job, s->worker_id);
	pool_write_end(s->hub->pool);
	if (rc < 0)
		log_warn("worker %lld: job %lld accepted but not recorded: %s", (long long)s->worker_id,
			 (long long)job, db_errmsg(s->db));
	else
		log_info("worker %lld accepted job %lld", (long long)s->worker_id, (long long)job);
}

static void on_rejected(struct ws_session *s, const json_t *m)
{
	const json_t *ids = json_object_get(m, "job_ids"), *v;
	const char *reason = json_string_value(json_object_get(m, "reason"));
	size_t i;

	json_array_foreach(ids, i, v) {
		int64_t job = json_is_integer(v) ? json_integer_value(v) : 0;
		if (job <= 0)
			continue;
		log_info("worker %lld rejected job %lld: %s", (long long)s->worker_id, (long long)job,
			 reason ? reason : "no reason given");
		requeue_assigned(s, job);
		if (job == s->job_id)
			s->job_id = 0;
	}
}

static void on_msg(void *ud, enum ws_opcode op, const uint8_t *data, size_t len, uint16_t status)
{
	struct ws_session *s = ud;
	json_error_t jerr;
	json_t *m;
	const char *type;

	(void)status;
	s->last_rx_ms = time_mono_ms();
	if (op != WS_OP_TEXT)
		return;
	m = json_loadb((const char *)data, len, 0, &jerr);
	if (!json_is_object(m)) {
		log_warn("worker %lld: WebSocket message is not a JSON object: %s", (long long)s->worker_id, jerr.text);
		(void)ws_close(s->ws, 1003, "expected a JSON object");
		json_decref(m);
		return;
	}
	type = json_string_value(json_object_get(m, "type"));
	if (!type)
		log_warn("worker %lld: WebSocket message without a type", (long long)s->worker_id);
	else if (!strcmp(type, "worker_status"))
		on_worker_status(s, m);
	else if (!strcmp(type, "accepted"))
		on_accepted(s, m);
	else if (!strcmp(type, "rejected"))
		on_rejected(s, m);
	else if (!strcmp(type, "quit"))
		s->quit = true;
	else
		log_debug("worker %lld: message '%s' ignored", (long long)s->worker_id, type);
	json_decref(m);
}

/* The job hash sent with grab_job: the job as GET /api/v1/jobs/<id> gives
 * it, settings with a fresh JOBTOKEN (openQA's worker signs its command
 * server and lock calls with it) and, with NICTYPE=tap, NICVLAN and NICMAC
 * (sched_job_network). NULL on failure. */
static json_t *grab_job_msg(struct ws_session *s, int64_t job_id)
{
	char token[LOCKS_TOKEN_LEN + 1];
	json_t *job = NULL, *settings;
	bool lost = false; /* a setting that could not be added: not sent so */
	int rc;

	if (jobs_to_json(s->db, job_id, false, &job))
		return NULL;
	settings = json_object_get(job, "settings");
	pool_write_begin(s->hub->pool);
	if (locks_token_issue(s->db, job_id, token) == 0 && json_is_object(settings))
		lost = json_object_set_new(settings, "JOBTOKEN", json_string(token)) != 0;
	else
		log_warn("job %lld: no job token issued: %s", (long long)job_id, db_errmsg(s->db));
	pool_write_end(s->hub->pool);
	/* NICTYPE=tap: the cluster's NICVLAN, as openQA's allocate_network (its
	 * worker's os-autoinst puts the tap device on that VLAN). */
	if (json_is_object(settings) && (rc = sched_job_network(s->db, job_id, settings, 0))) {
		if (rc == ERR_NOMEM)
			lost = true;
		else
			log_warn("job %lld: no network allocated: %s", (long long)job_id, db_errmsg(s->db));
	}
	if (lost || json_object_set_new(job, "assigned_worker_id", json_integer(s->worker_id))) {
		json_decref(job);
		return NULL;
	}
	return json_pack("{s:s,s:o}", "type", "grab_job", "job", job);
}

/* Once a tick: mark the worker seen, hand it a job when it is free, tell it
 * to cancel a job cancelled here, notice a job that is over. */
static void tick(struct ws_session *s)
{
	int64_t now = (int64_t)time(NULL), job;
	int rc;

	if (now - s->last_seen_s >= WS_WORKERS_SEEN_S) {
		pool_write_begin(s->hub->pool);
		(void)workers_seen(s->db, s->worker_id, now);
		pool_write_end(s->hub->pool);
		s->last_seen_s = now;
	}
	if (s->job_id) {
		struct db_stmt *st;
		bool over = true, cancelled = false, taken = false;
		if (db_prepare(s->db, &st, "SELECT state, result FROM jobs WHERE id = ? AND assigned_worker_id = ?", "ii",
			       s->job_id, s->worker_id) == 0) {
			int r = db_step(st);
			if (r == 1) {
				over = !strcmp(db_col_text(st, 0), "done") || !strcmp(db_col_text(st, 0), "cancelled");
				cancelled = !strcmp(db_col_text(st, 1), "user_cancelled");
			} else if (r == 0) {
				/* Given back to the queue or to another worker meanwhile. */
				taken = true;
			}
			db_finalize(st);
		}
		if (cancelled && !over && !s->cancel_sent) {
			send_json(s, json_pack("{s:s,s:I}", "type", "cancel", "jobid", (json_int_t)s->job_id));
			s->cancel_sent = true;
		}
		/* As vigil's status answer says abort: the job is not the worker's any more. */
		if (taken)
			send_json(s, json_pack("{s:s,s:I}", "type", "abort", "jobid", (json_int_t)s->job_id));
		if (over) {
			s->job_id = 0;
			s->cancel_sent = false;
			s->livelog_on = false;
		} else if (!taken && s->hub->live) {
			/* openQA's live view protocol: its worker then sends the log and
			 * the newest screen with each status (api_live_status). */
			bool watched = watch_active(s->hub->live, s->job_id, time_mono());
			if (watched != s->livelog_on) {
				send_json(s, json_pack("{s:s,s:I}", "type", watched ? "livelog_start" : "livelog_stop", "jobid",
						       (json_int_t)s->job_id));
				s->livelog_on = watched;
			}
		}
		return;
	}
	if (!s->free)
		return;
	pool_write_begin(s->hub->pool);
	rc = sched_pick(s->db, s->worker_id, &job);
	pool_write_end(s->hub->pool);
	if (rc == ERR_NOT_FOUND)
		return;
	if (rc) {
		log_warn("worker %lld: scheduler: %s", (long long)s->worker_id, db_errmsg(s->db));
		return;
	}
	json_t *msg = grab_job_msg(s, job);
	if (!msg) {
		log_err("worker %lld: cannot read job %lld to hand it out", (long long)s->worker_id, (long long)job);
		requeue_assigned(s, job);
		return;
	}
	log_info("job %lld handed to worker %lld over its WebSocket", (long long)job, (long long)s->worker_id);
	send_json(s, msg);
	s->job_id = job;
	/* Until its next status the worker counts as busy. */
	s->free = false;
}

/* Whether another live session serves the same worker. */
static bool other_session(struct wshub *h, const struct ws_session *s)
{
	const struct ws_session *o;
	bool found = false;

	pthread_mutex_lock(&h->lock);
	for (o = h->sessions; o; o = o->next)
		found |= o != s && o->worker_id == s->worker_id && !o->done;
	pthread_mutex_unlock(&h->lock);
	return found;
}

static void *session_main(void *arg)
{
	struct ws_session *s = arg;
	struct wshub *h = s->hub;
	int64_t next_tick = 0, stop_deadline = 0;
	bool dead = false;
	char err[256];
	int rc = 0;

	if (db_open(&s->db, h->db_path, err, sizeof(err))) {
		log_err("worker %lld: WebSocket session without a database: %s", (long long)s->worker_id, err);
		(void)ws_close(s->ws, 1011, "server error");
		(void)ws_pump(s->ws);
		goto out;
	}
	set_error(s, NULL);
	log_info("worker %lld: WebSocket connected", (long long)s->worker_id);
	s->last_rx_ms = time_mono_ms();
	s->next_ping_ms = s->last_rx_ms + WS_WORKERS_PING_MS;
	for (;;) {
		bool stop;
		pthread_mutex_lock(&h->lock);
		stop = h->stopping;
		pthread_mutex_unlock(&h->lock);
		if (stop && !stop_deadline) {
			(void)ws_close(s->ws, 1001, "server stopping");
			stop_deadline = time_mono_ms() + WS_WORKERS_CLOSE_WAIT_MS;
		}
		/* A worker that does not answer the close is not waited for. */
		if (stop_deadline && time_mono_ms() >= stop_deadline)
			break;
		rc = ws_wait(s->ws, WS_WORKERS_TICK_MS);
		if (rc)
			break;
		if (s->quit)
			break;
		/* A peer that answers nothing, not even pings, is gone. */
		if (!stop && time_mono_ms() - s->last_rx_ms >= h->dead_ms) {
			log_warn("worker %lld: nothing received for %lld s, not even a pong: taken for dead",
				 (long long)s->worker_id, (long long)(h->dead_ms / 1000));
			dead = true;
			break;
		}
		if (!stop && time_mono_ms() >= s->next_ping_ms) {
			if (ws_ping(s->ws, "vigil", 5))
				log_warn("worker %lld: ping not sent", (long long)s->worker_id);
			s->next_ping_ms = time_mono_ms() + WS_WORKERS_PING_MS;
		}
		if (!stop && time_mono_ms() >= next_tick) {
			tick(s);
			next_tick = time_mono_ms() + WS_WORKERS_TICK_MS;
		}
	}
	/* After quit the socket would stay open until the next upgrade reaps
	 * the session: close it now (the worker's side sees the close frame). */
	if (ws_is_open(s->ws) && !ws_close(s->ws, 1000, s->quit ? "quit" : NULL))
		(void)ws_pump(s->ws);
	log_info("worker %lld: WebSocket closed (%s)", (long long)s->worker_id,
		 s->quit ? "the worker quit" : dead ? "no answer" : err_str(rc));
	/* The worker may have connected again already (openQA's worker
	 * registers anew after a job): that session owns its state now. */
	if (!other_session(h, s)) {
		requeue_assigned(s, 0);
		set_error(s, s->quit ? "graceful disconnect" : dead ? "WebSocket dead: no answer to pings" : "WebSocket closed");
	}
out:
	pthread_mutex_lock(&h->lock);
	s->done = true;
	pthread_mutex_unlock(&h->lock);
	return NULL;
}

static void upgraded(void *cls, struct MHD_Connection *con, void *req_cls, const char *extra_in, size_t extra_in_size,
		     MHD_socket sock, struct MHD_UpgradeResponseHandle *urh)
{
	struct ws_session *s = cls;
	struct wshub *h = s->hub;

	(void)con;
	(void)req_cls;
	s->urh = urh;
	/* Frames are small and answered one by one: no Nagle delay on them
	 * (a pong behind an unacknowledged frame waited 40 ms). */
	(void)setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &(int){ 1 }, sizeof(int));
	ws_transport_fd(&s->t, sock);
	s->ws = ws_new(WS_ROLE_SERVER, &s->t, extra_in, extra_in_size, on_msg, s);
	pthread_mutex_lock(&h->lock);
	s->next = h->sessions;
	h->sessions = s;
	if (!s->ws || h->stopping || pthread_create(&s->thread, NULL, session_main, s))
		s->done = true;
	else
		s->started = true;
	pthread_mutex_unlock(&h->lock);
	if (!s->started)
		log_err("worker %lld: cannot start its WebSocket session", (long long)s->worker_id);
}

static int answer(struct MHD_Connection *con, unsigned status, const char *text)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(strlen(text), (void *)text, MHD_RESPMEM_MUST_COPY);
	int ret;

	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
	ret = MHD_queue_response(con, status, r);
	MHD_destroy_response(r);
	return ret;
}

int wshub_upgrade(struct wshub *h, struct MHD_Connection *con, struct db *db, int64_t worker_id)
{
	const char *upgrade = MHD_lookup_connection_value(con, MHD_HEADER_KIND, MHD_HTTP_HEADER_UPGRADE);
	const char *key = MHD_lookup_connection_value(con, MHD_HEADER_KIND, "Sec-WebSocket-Key");
	char accept[WS_ACCEPT_LEN + 1];
	struct MHD_Response *r;
	struct ws_session *s;
	int64_t n;
	int ret;

	reap(h, false);
	if (!upgrade || strcasecmp(upgrade, "websocket") || ws_accept_key(key, accept))
		return answer(con, MHD_HTTP_BAD_REQUEST,
			      "{\"error\":\"expected a WebSocket handshake (Upgrade: websocket, Sec-WebSocket-Key)\"}");
	if (db_query_int(db, &n, "SELECT id FROM workers WHERE id = ?", "i", worker_id))
		return answer(con, MHD_HTTP_NOT_FOUND, "{\"error\":\"unknown worker; register first\"}");
	s = calloc(1, sizeof(*s));
	if (!s)
		return MHD_NO;
	s->hub = h;
	s->worker_id = worker_id;
	r = MHD_create_response_for_upgrade(upgraded, s);
	if (!r) {
		free(s);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_UPGRADE, "websocket");
	MHD_add_response_header(r, "Sec-WebSocket-Accept", accept);
	ret = MHD_queue_response(con, MHD_HTTP_SWITCHING_PROTOCOLS, r);
	MHD_destroy_response(r);
	/* Without the upgrade the session was never listed: free it here. */
	if (ret != MHD_YES)
		free(s);
	return ret;
}
