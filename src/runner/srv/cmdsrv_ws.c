/* SPDX-License-Identifier: MIT */
/* cmdsrv_ws.c - the developer-mode WebSocket of the command server (see
 * cmdsrv_ws.h). Owns the clients: an upgraded socket, a net/ws.c endpoint
 * and a thread each. Locks: developer mode's lock (held while it calls
 * watch) may take the hub's, which may take a ws's own; a client's thread
 * holds none of them while it hands a command to developer mode, and its
 * on_msg only queues (it runs under the ws's lock). */
#define LOG_MODULE "cmdsrv"
#include "runner/srv/cmdsrv_ws.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include "net/ws.h"
#include "runner/srv/devmode.h"
#include "util/err.h"
#include "util/log.h"
#include "util/time.h"
#include "util/banned.h" /* last: after every system header */

#define CMDSRV_WS_TICK_MS 200

struct client {
	struct client *next;
	struct cmdsrv_ws *hub;
	struct ws_transport t;
	struct ws *ws;
	struct MHD_UpgradeResponseHandle *urh;
	pthread_t thread;
	bool started, done;
	pthread_mutex_t qlock;
	json_t *inbox;          /* texts received, not yet handled (under qlock) */
};

struct cmdsrv_ws {
	pthread_mutex_t lock;   /* the list, dev, last */
	struct client *clients;
	size_t nclients;
	bool stopping;
	struct devmode *dev;
	json_t *last;           /* developer mode's state as last broadcast */
};

static json_t *tags_array(const char *tags)
{
	json_t *a = json_array();
	const char *p = tags ? tags : "";

	while (a && *p) {
		size_t n = strcspn(p, " ,");
		if (n)
			json_array_append_new(a, json_stringn(p, n));
		p += n;
		p += strspn(p, " ,");
	}
	return a;
}

json_t *cmdsrv_ws_status(const json_t *state)
{
	const char *cur = json_string_value(json_object_get(state, "current_test"));
	json_t *paused = json_object_get(state, "paused"), *tep = json_object_get(state, "test_execution_paused");
	json_t *mis = json_object_get(state, "pause_on_screen_mismatch"), *at = json_object_get(state, "pause_test_name");

	return json_pack("{s:s,s:s?,s:n,s:O?,s:O,s:i,s:i,s:o,s:o,s:i,s:i}", "running", cur ? cur : "",
			 "current_test_full_name", cur && *cur ? cur : NULL, "current_api_function",
			 "pause_test_name", json_is_string(at) ? at : NULL,
			 "pause_on_screen_mismatch", json_is_string(mis) ? mis : json_false(),
			 "pause_on_next_command", json_is_true(json_object_get(state, "pause_on_next_command")),
			 "pause_on_failure", json_is_true(json_object_get(state, "pause_on_failure")),
			 "test_execution_paused", tep ? json_incref(tep) : json_integer(0),
			 "tags", tags_array(json_string_value(json_object_get(paused, "tags"))),
			 "devel_mode_major_version", CMDSRV_DEVEL_MAJOR, "devel_mode_minor_version", CMDSRV_DEVEL_MINOR);
}

/* Send msg (stolen) to every client. Under h->lock. */
static void broadcast_locked(struct cmdsrv_ws *h, json_t *msg)
{
	char *text = msg ? json_dumps(msg, JSON_COMPACT) : NULL;
	struct client *c;

	if (text)
		for (c = h->clients; c; c = c->next)
			if (c->ws && !c->done)
				(void)ws_send_text(c->ws, text);
	free(text);
	json_decref(msg);
}

static void broadcast(struct cmdsrv_ws *h, json_t *msg)
{
	pthread_mutex_lock(&h->lock);
	broadcast_locked(h, msg);
	pthread_mutex_unlock(&h->lock);
}

/* Developer mode changed (its lock held): os-autoinst's event messages for
 * what changed (set_current_test, paused, resume_test_execution), then the
 * whole status, to every client. */
static void on_change(void *ud, const json_t *state)
{
	struct cmdsrv_ws *h = ud;
	json_t *last, *p, *lp;
	const char *cur, *lcur;

	pthread_mutex_lock(&h->lock);
	last = h->last;
	cur = json_string_value(json_object_get(state, "current_test"));
	lcur = json_string_value(json_object_get(last, "current_test"));
	if (cur && *cur && (!lcur || strcmp(cur, lcur)))
		broadcast_locked(h, json_pack("{s:s,s:s}", "set_current_test", cur, "current_test_full_name", cur));
	p = json_object_get(state, "paused");
	lp = json_object_get(last, "paused");
	if (json_is_object(p) && !json_is_object(lp))
		broadcast_locked(h, json_pack("{s:O,s:O}", "paused", p, "reason", json_object_get(p, "reason")));
	else if (!json_is_object(p) && json_is_object(lp))
		broadcast_locked(h, json_pack("{s:n}", "resume_test_execution"));
	broadcast_locked(h, cmdsrv_ws_status(state));
	h->last = json_deep_copy(state);
	json_decref(last);
	pthread_mutex_unlock(&h->lock);
}

/* One command from a client, os-autoinst's form: {"cmd": NAME, ...}. The
 * answers go to every client, as commands.pm broadcasts isotovideo's. */
static void handle_command(struct cmdsrv_ws *h, const char *text)
{
	json_t *cmd = json_loads(text, 0, NULL), *reply = NULL;
	const char *name = json_string_value(json_object_get(cmd, "cmd"));
	struct devmode *d;

	pthread_mutex_lock(&h->lock);
	d = h->dev;
	pthread_mutex_unlock(&h->lock);
	log_info("developer command from a WebSocket client: %.200s", text);
	if (!json_is_object(cmd) || !name) {
		broadcast(h, json_pack("{s:i,s:s}", "ret", 0, "error", "expected a JSON object with \"cmd\""));
		goto out;
	}
	if (!d) {
		broadcast(h, json_pack("{s:i,s:s}", "ret", 0, "error", "developer mode has ended"));
		goto out;
	}
	if (!strcmp(name, "set_assert_screen_timeout")) {
		broadcast(h, json_pack("{s:i,s:s}", "ret", 0, "error",
				       "set_assert_screen_timeout: not supported by vigil (set the check's own timeout)"));
		goto out;
	}
	if (!strcmp(name, "status")) {
		json_t *st = devmode_state(d);
		broadcast(h, st ? cmdsrv_ws_status(st) : NULL);
		json_decref(st);
		goto out;
	}
	/* A change calls on_change (the new status) from within. */
	reply = devmode_command(d, text);
	if (!json_is_true(json_object_get(reply, "ret")) && json_integer_value(json_object_get(reply, "ret")) != 1) {
		broadcast(h, json_pack("{s:i,s:O?}", "ret", 0, "error", json_object_get(reply, "error")));
		goto out;
	}
	if (!strcmp(name, "set_pause_at_test"))
		broadcast(h, json_pack("{s:O}", "set_pause_at_test", json_object_get(reply, "pause_test_name")));
	else if (!strcmp(name, "set_pause_on_screen_mismatch"))
		broadcast(h, json_pack("{s:O}", "set_pause_on_screen_mismatch",
				       json_object_get(reply, "pause_on_screen_mismatch")));
	else if (!strcmp(name, "set_pause_on_next_command"))
		broadcast(h, json_pack("{s:i}", "set_pause_on_next_command",
				       json_is_true(json_object_get(reply, "pause_on_next_command"))));
	else if (!strcmp(name, "set_pause_on_failure"))
		broadcast(h, json_pack("{s:i}", "set_pause_on_failure",
				       json_is_true(json_object_get(reply, "pause_on_failure"))));
	broadcast(h, json_pack("{s:i}", "ret", 1));
out:
	json_decref(reply);
	json_decref(cmd);
}

static void on_msg(void *ud, enum ws_opcode op, const uint8_t *data, size_t len, uint16_t status)
{
	struct client *c = ud;

	(void)status;
	if (op != WS_OP_TEXT)
		return;
	pthread_mutex_lock(&c->qlock);
	if (json_array_size(c->inbox) < 64)
		json_array_append_new(c->inbox, json_stringn((const char *)data, len));
	pthread_mutex_unlock(&c->qlock);
}

static void *client_main(void *arg)
{
	struct client *c = arg;
	struct cmdsrv_ws *h = c->hub;
	int64_t next_ping = time_mono_ms() + CMDSRV_WS_PING_MS;
	int rc = 0;

	log_info("developer-mode WebSocket client connected");
	for (;;) {
		json_t *in;
		bool stop;
		size_t i;

		pthread_mutex_lock(&h->lock);
		stop = h->stopping || !h->dev;
		pthread_mutex_unlock(&h->lock);
		if (stop || (rc = ws_wait(c->ws, CMDSRV_WS_TICK_MS)))
			break;
		pthread_mutex_lock(&c->qlock);
		in = c->inbox;
		c->inbox = json_array();
		pthread_mutex_unlock(&c->qlock);
		for (i = 0; i < json_array_size(in); i++)
			handle_command(h, json_string_value(json_array_get(in, i)));
		json_decref(in);
		if (time_mono_ms() >= next_ping) {
			(void)ws_ping(c->ws, "vigil", 5);
			next_ping = time_mono_ms() + CMDSRV_WS_PING_MS;
		}
	}
	if (ws_is_open(c->ws) && !ws_close(c->ws, 1001, "job over"))
		(void)ws_pump(c->ws);
	log_info("developer-mode WebSocket client gone (%s)", rc ? err_str(rc) : "the job's end");
	pthread_mutex_lock(&h->lock);
	c->done = true;
	pthread_mutex_unlock(&h->lock);
	return NULL;
}

static void client_free(struct client *c)
{
	ws_free(c->ws);
	if (c->urh)
		MHD_upgrade_action(c->urh, MHD_UPGRADE_ACTION_CLOSE);
	json_decref(c->inbox);
	pthread_mutex_destroy(&c->qlock);
	free(c);
}

/* Join and free the clients that ended (all of them when all). */
static void reap(struct cmdsrv_ws *h, bool all)
{
	struct client *gone = NULL, **p;

	pthread_mutex_lock(&h->lock);
	for (p = &h->clients; *p;) {
		struct client *c = *p;
		if (all || c->done) {
			*p = c->next;
			c->next = gone;
			gone = c;
			h->nclients--;
		} else {
			p = &c->next;
		}
	}
	pthread_mutex_unlock(&h->lock);
	while (gone) {
		struct client *c = gone;
		gone = c->next;
		if (c->started)
			pthread_join(c->thread, NULL);
		client_free(c);
	}
}

static void upgraded(void *cls, struct MHD_Connection *con, void *req_cls, const char *extra_in, size_t extra_in_size,
		     MHD_socket sock, struct MHD_UpgradeResponseHandle *urh)
{
	struct client *c = cls;
	struct cmdsrv_ws *h = c->hub;

	(void)con;
	(void)req_cls;
	c->urh = urh;
	(void)setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &(int){ 1 }, sizeof(int));
	ws_transport_fd(&c->t, sock);
	c->ws = ws_new(WS_ROLE_SERVER, &c->t, extra_in, extra_in_size, on_msg, c);
	pthread_mutex_lock(&h->lock);
	if (h->stopping || !h->dev) {
		/* Developer mode ended meanwhile: nothing to serve. */
		pthread_mutex_unlock(&h->lock);
		client_free(c);
		return;
	}
	c->next = h->clients;
	h->clients = c;
	h->nclients++;
	if (!c->ws || !c->inbox || pthread_create(&c->thread, NULL, client_main, c))
		c->done = true;
	else
		c->started = true;
	pthread_mutex_unlock(&h->lock);
	if (!c->started)
		log_err("cannot start a developer-mode WebSocket session");
}

static enum MHD_Result answer(struct MHD_Connection *con, unsigned status, const char *text)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(strlen(text), (void *)text, MHD_RESPMEM_MUST_COPY);
	enum MHD_Result ret;

	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; charset=utf-8");
	ret = MHD_queue_response(con, status, r);
	MHD_destroy_response(r);
	return ret;
}

enum MHD_Result cmdsrv_ws_upgrade(struct cmdsrv_ws *h, struct MHD_Connection *con)
{
	const char *upgrade = MHD_lookup_connection_value(con, MHD_HEADER_KIND, MHD_HTTP_HEADER_UPGRADE);
	const char *key = MHD_lookup_connection_value(con, MHD_HEADER_KIND, "Sec-WebSocket-Key");
	char accept[WS_ACCEPT_LEN + 1];
	struct MHD_Response *r;
	struct client *c;
	enum MHD_Result ret;
	bool dev, full;

	reap(h, false);
	pthread_mutex_lock(&h->lock);
	dev = h->dev != NULL;
	full = h->nclients >= CMDSRV_WS_CLIENTS;
	pthread_mutex_unlock(&h->lock);
	if (!dev)
		return answer(con, 501, "developer mode is not running in this job\n");
	if (!upgrade || strcasecmp(upgrade, "websocket") || ws_accept_key(key, accept))
		return answer(con, 400, "ws: expected a WebSocket handshake (Upgrade: websocket, Sec-WebSocket-Key)\n");
	if (full)
		return answer(con, 503, "ws: too many developer-mode clients\n");
	if (!(c = calloc(1, sizeof(*c))))
		return MHD_NO;
	c->hub = h;
	pthread_mutex_init(&c->qlock, NULL);
	c->inbox = json_array();
	/* No extension is taken (permessage-deflate, which openQA's
	 * livehandler offers, is not answered: plain frames). */
	if (!(r = MHD_create_response_for_upgrade(upgraded, c))) {
		client_free(c);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_UPGRADE, "websocket");
	MHD_add_response_header(r, "Sec-WebSocket-Accept", accept);
	ret = MHD_queue_response(con, MHD_HTTP_SWITCHING_PROTOCOLS, r);
	MHD_destroy_response(r);
	return ret;
}

struct cmdsrv_ws *cmdsrv_ws_new(void)
{
	struct cmdsrv_ws *h = calloc(1, sizeof(*h));

	if (h)
		pthread_mutex_init(&h->lock, NULL);
	return h;
}

void cmdsrv_ws_set_devmode(struct cmdsrv_ws *h, struct devmode *d)
{
	struct devmode *old;
	json_t *st = d ? devmode_state(d) : NULL;

	pthread_mutex_lock(&h->lock);
	old = h->dev;
	h->dev = d;
	json_decref(h->last);
	h->last = st;
	pthread_mutex_unlock(&h->lock);
	/* Outside the hub's lock: watch takes developer mode's. */
	if (old && old != d)
		devmode_watch(old, NULL, NULL);
	if (d)
		devmode_watch(d, on_change, h);
	else
		reap(h, true);
}

void cmdsrv_ws_free(struct cmdsrv_ws *h)
{
	if (!h)
		return;
	cmdsrv_ws_set_devmode(h, NULL);
	pthread_mutex_lock(&h->lock);
	h->stopping = true;
	pthread_mutex_unlock(&h->lock);
	reap(h, true);
	json_decref(h->last);
	pthread_mutex_destroy(&h->lock);
	free(h);
}
