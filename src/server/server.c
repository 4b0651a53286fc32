/* SPDX-License-Identifier: MIT */
/* server.c - HTTP plumbing of the API. libmicrohttpd's one I/O thread reads
 * headers and bodies (under LIMIT_API_BODY; artefact uploads streamed to a
 * temporary file under LIMIT_ARTEFACT instead), then suspends the connection
 * and queues the request for the handler threads (pool.c: each client's
 * requests in order, the clients in turn), which parse,
 * authenticate, dispatch with their own database connection and response
 * cache, build the response and resume the connection; the I/O thread then
 * sends it. Writers run one at a time (the pool's writer token), readers
 * alongside (and on PostgreSQL the work polls: work_poll). Long polls are parked suspended, off the handler threads; the
 * housekeeping thread resumes them each second, ends the jobs of lost
 * workers and looks after the live view's event streams (livestream.c:
 * read by the I/O thread, suspended while nothing is new). Owns the daemon, the threads and the database connections; the
 * handlers live in api_*.c. */
#define LOG_MODULE "server"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "server/http/api.h"
#include "server/api/api_fields.h"
#include "server/api/api_live.h"
#include "server/store/developer.h"
#include "server/store/artefacts.h"
#include "server/store/assets.h"
#include "server/store/workers.h"
#include "net/hmac.h"
#include "server/store/auth.h"
#include "server/db/db.h"
#include "server/events/events.h"
#include "server/http/http_resp.h"
#include "server/http/login.h"
#include "server/store/users.h"
#include "server/api/livestream.h"
#include "server/http/pool.h"
#include "server/store/rejudge.h"
#include "server/api/watch.h"
#include "server/pages/web.h"
#include "server/api/wshub.h"
#include "server/store/rerun.h"
#include "server/http/resp_cache.h"
#include "server/store/retention.h"
#include "server/server.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/fault.h"
#include "util/file.h"
#include "util/oom.h"
#include "util/log.h"
#include "util/path.h"
#include "util/proc.h"
#include "util/str.h"
#include "util/time.h"
#include "util/banned.h" /* last: after every system header */

/* What one handler thread owns: nothing here is shared between threads. */
struct handler {
	struct db *db;
	struct resp_cache cache;
};

struct server {
	struct MHD_Daemon *mhd;
	struct db *db;            /* the I/O thread's: upload authentication */
	unsigned port;
	char *data_dir;
	char *db_path;
	int worker_timeout_s;
	unsigned header_timeout_s;
	struct pool *pool;
	struct handler *handlers;
	unsigned nthreads;
	char *hold_dir;           /* test hook, see test_hold() */
	/* Parked long polls and the suspended-connection count; the lock also
	 * orders every suspend before its resume. */
	pthread_mutex_t lock;
	pthread_cond_t idle;      /* inflight dropped to 0 */
	size_t inflight;          /* connections suspended by us, not yet handled again */
	bool closing;             /* queue nothing more: the daemon stops */
	struct MHD_Connection **parked;
	size_t nparked, cap_parked;
	/* The workers of the work polls in the server (queued, handled or
	 * parked), one entry a poll: the lost-worker check spares them. */
	int64_t *polling;
	size_t npolling, cap_polling;
	bool stopping;
	pthread_t timer;
	bool timer_started;
	pthread_mutex_t timer_lock;
	pthread_cond_t timer_cond;
	struct watch_map live;    /* watched jobs, shared by the handlers */
	struct login_limit login_limit; /* failed sign-ins, shared by the handlers */
	bool secure_cookies;
	long rerun_wait_s;         /* serve --rerun-wait */
	long cleanup_interval_s;   /* serve --cleanup-interval; <= 0: never */
	struct livestream *streams; /* the live view's event streams */
	struct rejudge_store *rejudge; /* the last re-judge per job */
	struct developer_hub *developer; /* developer mode's commands and states */
	struct wshub *wshub;     /* openQA workers' WebSockets (wshub.c) */
	struct events *events;     /* the event senders (events.c), NULL when none */
	bool pg;                   /* on PostgreSQL: work polls run beside the writer (work_poll) */
};

/* One request, created in the URI log callback (which sees the target
 * before libmicrohttpd decodes it) and freed when the request completes.
 * While suspended (queued, handled or parked) only its handler thread
 * touches it; the I/O thread again once resumed. */
struct conn_req {
	struct pool_item item;  /* first: the pool hands it back as this */
	struct MHD_Connection *con;
	const char *url, *method; /* libmicrohttpd's, valid for the request */
	bool suspended;         /* counted in server.inflight */
	bool done;              /* the handler built resp (NULL: drop the connection) */
	struct MHD_Response *resp;
	unsigned status;
	char *target;
	struct buf body;
	bool started;
	bool too_big;
	bool stream;        /* an upload route: the body goes to upload_fd */
	bool ws;            /* openQA's worker WebSocket (ws_start) */
	int upload_fd;
	int upload_err;     /* errno of a failed spooling (ENOSPC: answered 507) */
	char *upload_tmp;
	uint64_t upload_len;
	uint64_t upload_limit; /* LIMIT_ARTEFACT, or LIMIT_ASSET for an asset upload */
	EVP_MD_CTX *sha;       /* hashes the upload as it streams in */
	char sha_hex[ARTEFACTS_HASH_HEX];
	int64_t poll_deadline_ms;
	bool nonce_spent;      /* checked in full once: a parked long poll handled again checks the headers only */
	bool writes;           /* route_writes: audited, never taken for a reader that wrote */
	int64_t poll_worker;   /* a work poll's worker, in server.polling until completed; 0 if none */
};

static const struct api_route *const route_tables[] = {
	api_jobs_routes, api_isos_routes, api_tables_routes, api_workers_routes, api_assets_routes,
	api_comments_routes, api_yaml_routes, api_live_routes, api_devmode_routes, api_needles_routes, web_routes, api_users_routes,
	api_audit_routes, api_rejudge_routes, api_needle_edit_routes, api_rerun_routes, api_review_routes,
	api_locks_routes, api_cleanup_routes,
};

const struct api_route *api_route_at(size_t i)
{
	const struct api_route *r;
	size_t t;

	for (t = 0; t < sizeof(route_tables) / sizeof(route_tables[0]); t++)
		for (r = route_tables[t]; r->method; r++)
			if (i-- == 0)
				return r;
	return NULL;
}

static void *uri_log_cb(void *cls, const char *uri, struct MHD_Connection *con)
{
	struct conn_req *r = calloc(1, sizeof(*r));

	(void)cls;
	(void)con;
	if (!r)
		return NULL;
	r->target = strdup(uri ? uri : "/");
	r->upload_fd = -1;
	buf_init(&r->body, LIMIT_API_BODY);
	return r;
}

static void inflight_done(struct server *s, struct conn_req *r)
{
	if (!r->suspended)
		return;
	pthread_mutex_lock(&s->lock);
	r->suspended = false;
	if (--s->inflight == 0)
		pthread_cond_broadcast(&s->idle);
	pthread_mutex_unlock(&s->lock);
}

static void completed_cb(void *cls, struct MHD_Connection *con, void **req_cls, enum MHD_RequestTerminationCode toe)
{
	struct server *s = cls;
	struct conn_req *r = *req_cls;

	/* Waiting for the next request on a kept-alive connection is waiting
	 * for headers again. Not for a WebSocket: its connection ends here,
	 * called while libmicrohttpd holds the lock that the option takes. */
	if (toe == MHD_REQUEST_TERMINATED_COMPLETED_OK && !(r && r->ws))
		(void)MHD_set_connection_option(con, MHD_CONNECTION_OPTION_TIMEOUT, s->header_timeout_s);
	if (!r)
		return;
	inflight_done(s, r);
	if (r->poll_worker) {
		size_t i;
		pthread_mutex_lock(&s->lock);
		for (i = 0; i < s->npolling && s->polling[i] != r->poll_worker; i++)
			;
		if (i < s->npolling)
			s->polling[i] = s->polling[--s->npolling];
		pthread_mutex_unlock(&s->lock);
	}
	if (r->resp)
		MHD_destroy_response(r->resp);
	free(r->target);
	buf_release(&r->body);
	if (r->upload_fd >= 0)
		close(r->upload_fd);
	if (r->upload_tmp)
		(void)unlink(r->upload_tmp); /* gone already when the handler kept the file */
	free(r->upload_tmp);
	EVP_MD_CTX_free(r->sha);
	free(r);
	*req_cls = NULL;
}

/* Match path against pattern segment by segment; '#' takes a decimal id,
 * '*' one whole segment (into name, LIMIT_API_NAME bytes). */
static bool route_match(const char *pattern, const char *path, int64_t *id, char *name)
{
	while (*pattern && *path) {
		if (*pattern == '*') {
			size_t n = strcspn(path, "/");
			if (n == 0 || n >= LIMIT_API_NAME)
				return false;
			memcpy(name, path, n);
			name[n] = '\0';
			path += n;
			pattern++;
			continue;
		}
		if (*pattern == '#') {
			const char *e = path;
			char num[24];
			while (*e >= '0' && *e <= '9')
				e++;
			if (e == path || (size_t)(e - path) >= sizeof(num))
				return false;
			memcpy(num, path, (size_t)(e - path));
			num[e - path] = '\0';
			if (api_parse_id(num, id))
				return false;
			path = e;
			pattern++;
			continue;
		}
		if (*pattern != *path)
			return false;
		pattern++;
		path++;
	}
	/* A trailing slash is the same route, as in Mojolicious. */
	if (*path == '/' && path[1] == '\0')
		path++;
	return !*pattern && !*path;
}

static const struct api_route *route_find(const char *method, const char *path, int64_t *id, char *name,
					  bool *path_known)
{
	size_t t;
	const struct api_route *r;

	*path_known = false;
	for (t = 0; t < sizeof(route_tables) / sizeof(route_tables[0]); t++)
		for (r = route_tables[t]; r->method; r++) {
			if (!route_match(r->pattern, path, id, name))
				continue;
			*path_known = true;
			if (!strcmp(r->method, method))
				return r;
		}
	return NULL;
}

static bool content_type_is(const char *ct, const char *want)
{
	size_t n = strlen(want);

	return ct && !strncasecmp(ct, want, n) && (ct[n] == '\0' || ct[n] == ';' || ct[n] == ' ');
}

/* Parse query and body into req; on bad input fill out and return nonzero. */
static int parse_request(struct api_req *req, struct conn_req *r, const char *ctype, struct api_resp *out)
{
	const char *q = strchr(r->target, '?');
	char msg[256];
	json_error_t jerr;
	bool nomem = false;
	int rc;

	if (q && (rc = params_parse(&req->params, q + 1, strlen(q + 1), msg, sizeof(msg)))) {
		if (rc == ERR_NOMEM)
			api_nomem(out);
		else
			api_error(out, 400, "bad query string: %s", msg);
		return -1;
	}
	if (r->body.len == 0)
		return 0;
	if (content_type_is(ctype, "application/json")) {
		req->json = oom_json_loadb(r->body.data, r->body.len, JSON_REJECT_DUPLICATES, &jerr, &nomem);
		if (nomem) {
			api_nomem(out);
			return -1;
		}
		if (!req->json) {
			api_error(out, 400, "malformed JSON body: %s at line %d, column %d", jerr.text, jerr.line,
				  jerr.column);
			return -1;
		}
		return 0;
	}
	if (!ctype || content_type_is(ctype, "application/x-www-form-urlencoded")) {
		if ((rc = params_parse(&req->params, r->body.data, r->body.len, msg, sizeof(msg)))) {
			if (rc == ERR_NOMEM)
				api_nomem(out);
			else
				api_error(out, 400, "bad form body: %s", msg);
			return -1;
		}
		return 0;
	}
	api_error(out, 415, "unsupported Content-Type '%s': send application/x-www-form-urlencoded or application/json",
		  ctype);
	return -1;
}

const char *api_header(const struct api_req *req, const char *name)
{
	return req->con ? MHD_lookup_connection_value(req->con, MHD_HEADER_KIND, name) : NULL;
}

const char *api_cookie(const struct api_req *req, const char *name)
{
	return req->con ? MHD_lookup_connection_value(req->con, MHD_COOKIE_KIND, name) : NULL;
}

/* A request with a session cookie and no API key: the session's user acts
 * with their role; a write must carry the session's X-CSRF-Token, else it
 * is anonymous. writes: the request holds the writer token, so the
 * session's expiry may slide forward. */
static int authenticate_session(struct db *db, struct MHD_Connection *con, struct api_req *req,
				const struct api_route *route, const char *cookie, bool writes,
				struct users_session *sess, struct api_resp *out)
{
	if (users_session_check(db, cookie, (int64_t)time(NULL), writes, sess) == 0) {
		if (!strcmp(req->method, "GET") ||
		    users_csrf_ok(sess, MHD_lookup_connection_value(con, MHD_HEADER_KIND, "X-CSRF-Token"))) {
			req->session = sess;
			req->level = sess->user.role;
		} else {
			req->csrf_failed = true;
		}
	}
	if (req->level >= route->level)
		return 0;
	if (req->csrf_failed)
		api_error(out, 403, "missing or wrong X-CSRF-Token (a page sends its session's token, "
			  "from GET /api/v1/session, with every write)");
	else if (req->session)
		api_error(out, 403, route->level == AUTH_ADMIN ? "Administrator level required" : "Operator level required");
	else
		api_error(out, 403, "not signed in (or the session expired): sign in, or sign the request with an API key");
	return -1;
}

/* The signature headers of a request on con. */
static void sig_headers(struct MHD_Connection *con, const char *method, const char *target, struct auth_sig *sig)
{
	memset(sig, 0, sizeof(*sig));
	sig->key = MHD_lookup_connection_value(con, MHD_HEADER_KIND, "X-API-Key");
	sig->microtime = MHD_lookup_connection_value(con, MHD_HEADER_KIND, "X-API-Microtime");
	sig->hash = MHD_lookup_connection_value(con, MHD_HEADER_KIND, "X-API-Hash");
	sig->nonce = MHD_lookup_connection_value(con, MHD_HEADER_KIND, "X-API-Nonce");
	sig->content_sha256 = MHD_lookup_connection_value(con, MHD_HEADER_KIND, "X-API-Content-SHA256");
	sig->signature = MHD_lookup_connection_value(con, MHD_HEADER_KIND, "X-API-Signature");
	sig->method = method;
	sig->target = target;
}

/* body_sha256: the hex SHA-256 of the body received (scheme 2 compares
 * it and spends the nonce). */
static int authenticate(struct db *db, struct MHD_Connection *con, struct api_req *req, const char *method,
			const char *body_sha256, const struct api_route *route, bool writes,
			struct users_session *sess, struct api_resp *out)
{
	struct auth_sig sig;
	const char *cookie;
	char msg[512];
	int rc;

	sig_headers(con, method, req->target, &sig);
	sig.body_sha256 = body_sha256;
	cookie = sig.key ? NULL : MHD_lookup_connection_value(con, MHD_COOKIE_KIND, LOGIN_COOKIE);
	req->level = AUTH_PUBLIC;
	if (cookie)
		return authenticate_session(db, con, req, route, cookie, writes, sess, out);
	if (route->level == AUTH_PUBLIC && !sig.key)
		return 0;
	if ((rc = auth_check_sig(db, &sig, time_wall(), &req->level, msg, sizeof(msg)))) {
		if (rc == ERR_NOMEM) {
			api_nomem(out);
			return -1;
		}
		if (rc == ERR_IO) {
			log_warn("%s %s: %s", req->method, req->target, msg);
			api_error(out, 503, "%s", msg);
			return -1;
		}
		if (route->level == AUTH_PUBLIC)
			return 0; /* a read with a bad key is still a public read */
		log_warn("%s %s: authentication failed: %s", req->method, req->target, msg);
		api_error(out, 403, "%s", msg);
		return -1;
	}
	req->key = sig.key;
	if (req->level < route->level) {
		api_error(out, 403, route->level == AUTH_ADMIN ? "Administrator level required" : "Operator level required");
		return -1;
	}
	return 0;
}

/* The client's address as text ("" when unknown). */
static void client_addr_text(struct MHD_Connection *con, char *out, size_t len)
{
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(con, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	const struct sockaddr *sa = ci ? ci->client_addr : NULL;
	socklen_t salen = sa && sa->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);

	out[0] = '\0';
	if (!sa || (sa->sa_family != AF_INET && sa->sa_family != AF_INET6) ||
	    getnameinfo(sa, salen, out, (socklen_t)len, NULL, 0, NI_NUMERICHOST))
		out[0] = '\0';
}

/* The request as the handlers see it: what the connection brought and
 * the server's shared state; addr holds the client's address text. */
static void req_init(struct server *s, struct handler *h, struct conn_req *r, struct api_req *req, char *addr,
		     size_t addrlen)
{
	struct MHD_Connection *con = r->con;

	memset(req, 0, sizeof(*req));
	params_init(&req->params);
	req->db = h->db;
	req->data_dir = s->data_dir;
	req->port = s->port;
	req->poll_deadline_ms = &r->poll_deadline_ms;
	pthread_mutex_lock(&s->lock);
	req->stopping = s->stopping;
	pthread_mutex_unlock(&s->lock);
	if (r->stream && r->upload_tmp) {
		req->upload = r->upload_tmp;
		req->upload_len = r->upload_len;
		if (r->sha) {
			unsigned char md[32];
			unsigned mdlen = 0, i;
			EVP_DigestFinal_ex(r->sha, md, &mdlen);
			for (i = 0; i < 32 && i < mdlen; i++)
				snprintf(r->sha_hex + 2 * i, 3, "%02x", md[i]);
			req->upload_sha256 = r->sha_hex;
		}
	}
	req->method = !strcmp(r->method, "HEAD") ? "GET" : r->method;
	req->path = r->url;
	req->target = r->target;
	req->accept = MHD_lookup_connection_value(con, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT);
	req->if_none_match = MHD_lookup_connection_value(con, MHD_HEADER_KIND, MHD_HTTP_HEADER_IF_NONE_MATCH);
	req->range = MHD_lookup_connection_value(con, MHD_HEADER_KIND, MHD_HTTP_HEADER_RANGE);
	req->live = &s->live;
	req->con = con;
	client_addr_text(con, addr, addrlen);
	req->client_addr = addr;
	req->login_limit = &s->login_limit;
	req->secure_cookies = s->secure_cookies;
	req->rerun_wait_s = s->rerun_wait_s;
	req->streams = s->streams;
	req->rejudge = s->rejudge;
	req->developer = s->developer;
	req->wshub = s->wshub;
	req->ws_missing = s->wshub ? wshub_missing_cb : NULL;
	req->worker_timeout_s = s->worker_timeout_s;
	req->client = r->item.client;
}

/* A body over its limit (413), or an authenticated upload that could not
 * be kept: the server's fault, not the client's; a full disk is 507,
 * which a worker retries. True when out holds that answer. */
static bool body_refused(const struct conn_req *r, struct api_resp *out)
{
	if (r->too_big) {
		if (r->stream)
			api_error(out, 413, "upload over the limit of %llu bytes", (unsigned long long)r->upload_limit);
		else
			api_error(out, 413, "request body over the limit of %u bytes", LIMIT_API_BODY);
		return true;
	}
	if (r->stream && r->upload_err) {
		if (r->upload_err == ENOSPC || r->upload_err == EDQUOT)
			api_error(out, 507, "cannot store the upload: %s (the server's disk is full); try again later",
				  strerror(r->upload_err));
		else
			api_error(out, 500, "cannot store the upload: %s", strerror(r->upload_err));
		return true;
	}
	return false;
}

/* A cacheable GET's JSON answer kept for the same target at the same
 * change stamp; out then carries the cached bytes. */
static void cache_answer(struct handler *h, const char *target, const int64_t stamp[2], struct api_resp *out)
{
	char *dumped;
	const char *body;

	if (!out->json && !(out->text && out->ctype && !strcmp(out->ctype, "application/json")))
		return;
	dumped = out->json ? json_dumps(out->json, JSON_COMPACT) : NULL;
	body = out->json ? dumped : out->text;
	if (body && (out->raw = resp_cache_put(&h->cache, target, stamp, body, strlen(body)))) {
		out->raw_len = strlen(out->raw);
		json_decref(out->json);
		out->json = NULL;
		free(out->text);
		out->text = NULL;
	}
	free(dumped);
}

static void dispatch(struct server *s, struct handler *h, struct conn_req *r, struct api_resp *out)
{
	struct MHD_Connection *con = r->con;
	const char *url = r->url, *method = r->method;
	struct api_req req;
	struct users_session sess;
	const struct api_route *route;
	const struct api_field *fields;
	char name[LIMIT_API_NAME], addr[INET6_ADDRSTRLEN + 8], body_sha[HMAC2_HEX_LEN + 1];
	const char *body_hash = "";
	int64_t stamp[2], after[2];
	bool known, cacheable, stamped = false;

	req_init(s, h, r, &req, addr, sizeof(addr));
	if (body_refused(r, out))
		goto out;
	name[0] = '\0';
	route = route_find(req.method, url, &req.id, name, &known);
	req.name = name[0] ? name : NULL;
	if (!route) {
		if (known)
			api_error(out, 404, "no route for %s %s (the path exists for other methods)", method, url);
		else
			api_error(out, 404, "no route for %s %s", method, url);
		goto out;
	}
	req.arg = route->arg;
	/* Authenticate before looking at the body: strangers learn nothing from parse errors. */
	if (r->stream)
		body_hash = req.upload_sha256 ? req.upload_sha256
			    : MHD_lookup_connection_value(con, MHD_HEADER_KIND, "X-API-Content-SHA256");
	else if (MHD_lookup_connection_value(con, MHD_HEADER_KIND, "X-API-Signature") &&
		 !hmac_sha256_hex(r->body.data, r->body.len, body_sha))
		body_hash = body_sha;
	if (authenticate(h->db, con, &req, method, r->nonce_spent ? NULL : body_hash, route, r->writes, &sess, out))
		goto out;
	r->nonce_spent = true;
	if (!r->stream &&
	    parse_request(&req, r, MHD_lookup_connection_value(con, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE), out))
		goto out;
	if (r->stream) {
		/* The body is the file: only the query string holds parameters. */
		const char *q = strchr(r->target, '?');
		char msg[256];
		if (q && params_parse(&req.params, q + 1, strlen(q + 1), msg, sizeof(msg))) {
			api_error(out, 400, "bad query string: %s", msg);
			goto out;
		}
	}
	/* Every field's type, presence and bounds (api_fields.c), before any
	 * handler: a bad field is refused naming it, nothing written. */
	if ((fields = api_fields_of(route)) && api_fields_check(&req, fields, out))
		goto out;
	if (!r->writes)
		stamped = db_change_stamp(h->db, stamp) == 0;
	cacheable = stamped && !r->stream && !strcmp(req.method, "GET") && resp_cache_route(url);
	if (cacheable && (out->raw = resp_cache_get(&h->cache, r->target, stamp, &out->raw_len))) {
		out->status = 200;
		goto out;
	}
	db_clear_error(h->db);
	route->fn(&req, out);
	/* A write the database refused for want of space is the server's state,
	 * not a fault of the request: 507, which clients may retry; the
	 * transaction was rolled back, so nothing of it is kept. */
	if (out->status >= 500 && out->status != 507 && db_disk_full(h->db)) {
		const char *was = json_string_value(json_object_get(out->json, "error"));
		char text[600];
		snprintf(text, sizeof(text), "%s", was ? was : "");
		api_error(out, 507, "the server's disk is full, nothing was stored; try again later%s%s%s",
			  *text ? " (" : "", text, *text ? ")" : "");
		log_err("%s %s: disk full", method, url);
	}
	/* The audit log: every successful write (the writer token is held). */
	if (r->writes && !out->audited && out->status >= 200 && out->status < 300)
		api_audit_request(&req, route, out);
	if (out->file) {
		out->range = req.range; /* valid while the connection waits for the answer */
		out->if_none_match = req.if_none_match;
	}
	/* A reader runs beside the writer: one that wrote must be listed in route_writes. */
	if (stamped && db_change_stamp(h->db, after) == 0 && after[1] != stamp[1])
		log_err("%s %s wrote to the database without the writer token: add its route to route_writes",
			method, url);
	if (cacheable && out->status == 200 && !out->suspend)
		cache_answer(h, r->target, stamp, out);
out:
	json_decref(req.json);
	params_release(&req.params);
}

static bool upload_route(const char *url)
{
	int64_t id;
	char name[LIMIT_API_NAME];

	return route_match("/api/v1/jobs/#/artefact", url, &id, name);
}

/* An upload's first call: authenticate from the headers alone (the HMAC
 * covers no body), then open the temporary file the body streams into.
 * Failures are answered once the body has been read (and dropped). */
static enum MHD_Result stream_start(struct server *s, struct MHD_Connection *con, struct conn_req *r, const char *cl)
{
	struct auth_sig sig;
	enum auth_level level = AUTH_PUBLIC;
	char msg[256], *dir = NULL;
	long n;
	int rc;

	r->stream = true;
	/* Assets (disk images) may be far larger than other artefacts. */
	r->upload_limit = strstr(r->target, "?asset=") || strstr(r->target, "&asset=") ? LIMIT_ASSET : LIMIT_ARTEFACT;
	if (cl && !str_to_long(cl, &n) && (uint64_t)n > r->upload_limit) {
		r->too_big = true;
		return MHD_YES;
	}
	/* The headers only: the body's hash and the nonce are checked in dispatch. */
	sig_headers(con, "POST", r->target, &sig);
	if (!sig.key || auth_check_sig(s->db, &sig, time_wall(), &level, msg, sizeof(msg)) || level < AUTH_OPERATOR)
		return MHD_YES; /* dispatch answers 403 */
	dir = path_join(s->data_dir, "testresults/.incoming");
	if (!dir || (rc = file_mkdir_p(dir, 0700))) {
		r->upload_err = dir ? -rc : ENOMEM;
		free(dir);
		return MHD_YES;
	}
	r->upload_tmp = path_join(dir, "up-XXXXXX");
	free(dir);
	if (!r->upload_tmp) {
		r->upload_err = ENOMEM;
		return MHD_YES;
	}
	r->upload_fd = mkostemp(r->upload_tmp, O_CLOEXEC);
	if (r->upload_fd >= 0 && (r->sha = EVP_MD_CTX_new()))
		EVP_DigestInit_ex(r->sha, EVP_sha256(), NULL);
	if (r->upload_fd < 0) {
		r->upload_err = errno;
		log_err("cannot create an upload file in '%s': %s", r->upload_tmp, strerror(errno));
		free(r->upload_tmp);
		r->upload_tmp = NULL;
	}
	return MHD_YES;
}

/* openQA's worker WebSocket, GET /api/v1/ws/<id>: checked from the headers
 * (signed as any API call, operator level) and upgraded on this thread;
 * the session runs on its own (wshub.c). */
static enum MHD_Result ws_start(struct server *s, struct MHD_Connection *con, struct conn_req *r, int64_t worker_id)
{
	struct auth_sig sig;
	const char *key;
	char empty_sha[HMAC2_HEX_LEN + 1];
	enum auth_level level = AUTH_PUBLIC;
	char msg[256] = "", body[400], *text;
	struct MHD_Response *resp;
	enum MHD_Result ret;
	json_t *j;

	r->ws = true;
	sig_headers(con, "GET", r->target, &sig);
	key = sig.key;
	if (!hmac_sha256_hex("", 0, empty_sha))
		sig.body_sha256 = empty_sha; /* an upgrade has no body */
	if (key && !auth_check_sig(s->db, &sig, time_wall(), &level, msg, sizeof(msg)) && level >= AUTH_OPERATOR &&
	    workers_key_check(s->db, worker_id, key, msg, sizeof(msg)) != ERR_INVALID)
		return wshub_upgrade(s->wshub, con, s->db, worker_id) == MHD_YES ? MHD_YES : MHD_NO;
	if (!key)
		snprintf(msg, sizeof(msg), "no API key");
	else if (level < AUTH_OPERATOR)
		snprintf(msg, sizeof(msg), "Operator level required");
	log_warn("GET %s: WebSocket refused: %s", r->target, msg);
	j = json_pack("{s:s}", "error", msg);
	text = j ? json_dumps(j, JSON_COMPACT) : NULL;
	json_decref(j);
	snprintf(body, sizeof(body), "%s", text ? text : "{}");
	free(text);
	resp = MHD_create_response_from_buffer(strlen(body), body, MHD_RESPMEM_MUST_COPY);
	if (!resp)
		return MHD_NO;
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
	MHD_add_response_header(resp, "X-Vigil-Signature", "2");
	ret = MHD_queue_response(con, MHD_HTTP_FORBIDDEN, resp);
	MHD_destroy_response(resp);
	return ret;
}

static void stream_write(struct conn_req *r, const char *data, size_t len)
{
	if (r->too_big || r->upload_fd < 0)
		return;
	if (r->upload_len + len > r->upload_limit) {
		r->too_big = true;
		return;
	}
	while (len) {
		ssize_t w = fault_write(r->upload_fd, data, len, r->upload_tmp);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			r->upload_err = w < 0 ? errno : ENOSPC; /* a regular file writes 0 bytes only when full */
			log_err("upload file '%s': %s", r->upload_tmp, strerror(r->upload_err));
			close(r->upload_fd);
			r->upload_fd = -1;
			(void)unlink(r->upload_tmp);
			free(r->upload_tmp);
			r->upload_tmp = NULL;
			return;
		}
		if (r->sha)
			EVP_DigestUpdate(r->sha, data, (size_t)w);
		data += w;
		len -= (size_t)w;
		r->upload_len += (uint64_t)w;
	}
}

/* Park a long poll (suspended already, off the handler threads); the
 * housekeeping thread resumes it within a second and the handler runs
 * again. False when the list is full. While stopping, resumed at once: the
 * handler then answers. */
static bool park(struct server *s, struct MHD_Connection *con)
{
	bool ok = true;

	pthread_mutex_lock(&s->lock);
	if (s->stopping) {
		MHD_resume_connection(con);
		pthread_mutex_unlock(&s->lock);
		return true;
	}
	if (s->nparked == s->cap_parked) {
		size_t cap = s->cap_parked ? 2 * s->cap_parked : 64;
		struct MHD_Connection **v = cap <= 2 * SERVER_CONNECTION_LIMIT ?
			realloc(s->parked, cap * sizeof(*v)) : NULL;
		if (v) {
			s->parked = v;
			s->cap_parked = cap;
		} else {
			ok = false;
		}
	}
	if (ok)
		s->parked[s->nparked++] = con;
	pthread_mutex_unlock(&s->lock);
	return ok;
}

static void resume_all(struct server *s)
{
	size_t i;

	pthread_mutex_lock(&s->lock);
	for (i = 0; i < s->nparked; i++)
		MHD_resume_connection(s->parked[i]);
	s->nparked = 0;
	pthread_mutex_unlock(&s->lock);
}

/* The retention cleanup (retention.c) under the writer token, its outcome logged. */
static void cleanup_now(struct server *s, struct db *db)
{
	json_t *done = NULL;

	pool_write_begin(s->pool);
	if (retention_run(db, s->data_dir, (int64_t)time(NULL), &done))
		log_err("cleanup: %s", db_errmsg(db));
	pool_write_end(s->pool);
	if (done && (json_array_size(json_object_get(done, "jobs")) || json_array_size(json_object_get(done, "logs")) ||
		     json_array_size(json_object_get(done, "assets")) ||
		     json_integer_value(json_object_get(done, "removed_images"))))
		log_info("cleanup: %zu jobs, the logs of %zu jobs, %zu assets and %lld stored screenshots removed",
			 json_array_size(json_object_get(done, "jobs")), json_array_size(json_object_get(done, "logs")),
			 json_array_size(json_object_get(done, "assets")),
			 (long long)json_integer_value(json_object_get(done, "removed_images")));
	json_decref(done);
}

/* Housekeeping: resume parked polls every second; every few seconds end
 * the jobs of workers silent for worker_timeout_s (own connection, under
 * the writer token like any writing request); every cleanup_interval_s
 * the retention cleanup. */
static void *timer_main(void *arg)
{
	struct server *s = arg;
	struct db *db = NULL;
	char err[256];
	int tick = 0, every = s->worker_timeout_s / 4;
	int64_t next_cleanup = s->cleanup_interval_s > 0 ? (int64_t)time(NULL) + s->cleanup_interval_s : 0;

	if (every < 1)
		every = 1;
	if (every > 5)
		every = 5;
	if (db_open(&db, s->db_path, err, sizeof(err)))
		log_err("lost-worker check disabled: %s", err);
	for (;;) {
		struct timespec ts;
		bool stop;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += 1;
		pthread_mutex_lock(&s->timer_lock);
		pthread_mutex_lock(&s->lock);
		stop = s->stopping;
		pthread_mutex_unlock(&s->lock);
		if (!stop)
			(void)pthread_cond_timedwait(&s->timer_cond, &s->timer_lock, &ts);
		pthread_mutex_unlock(&s->timer_lock);
		pthread_mutex_lock(&s->lock);
		stop = s->stopping;
		pthread_mutex_unlock(&s->lock);
		resume_all(s);
		if (stop)
			break;
		if (db)
			api_live_tick(db, s->streams, &s->live);
		if (db && ++tick % every == 0) {
			int64_t *contact = NULL;
			size_t nc = 0;
			bool nomem = false;
			int n = 0;
			/* A worker whose poll waits in the server is in contact (no
			 * memory to copy them: no check this time rather than a wrong one). */
			pthread_mutex_lock(&s->lock);
			if (s->npolling && !(contact = malloc(s->npolling * sizeof(*contact))))
				nomem = true;
			else if (s->npolling)
				memcpy(contact, s->polling, (nc = s->npolling) * sizeof(*contact));
			pthread_mutex_unlock(&s->lock);
			if (!nomem) {
				pool_write_begin(s->pool);
				if (workers_reap_but(db, (int64_t)time(NULL), s->worker_timeout_s, contact, nc, &n))
					log_err("lost-worker check: %s", db_errmsg(db));
				pool_write_end(s->pool);
			}
			free(contact);
		}
		if (db && next_cleanup && (int64_t)time(NULL) >= next_cleanup) {
			cleanup_now(s, db);
			next_cleanup = (int64_t)time(NULL) + s->cleanup_interval_s;
		}
	}
	db_free(db);
	return NULL;
}

/* Whether a request may write the database, and so runs only with the
 * writer token: every method but GET and HEAD, and the GET routes listed
 * here (dispatch logs a reader that wrote). */
static bool route_writes(const char *method, const char *url)
{
	static const char *const writing_gets[] = {
		"/api/v1/workers/#/work",  /* marks the worker seen, assigns a job */
		"/api/v1/assets/*/*",      /* records a file found in factory/ */
		"/api/v1/session",         /* slides the session's expiry forward */
	};
	char name[LIMIT_API_NAME];
	int64_t id;
	size_t i;

	/* A worker's live view post only reads: its frames must not wait for writers. */
	if (!strcmp(method, "POST") && route_match("/api/v1/jobs/#/live", url, &id, name))
		return false;
	/* A re-judge reads and computes: other writers must not wait for it. */
	if (!strcmp(method, "POST") && route_match("/api/v1/jobs/#/rejudge", url, &id, name))
		return false;
	/* The needle editor's live match only reads, at the pace of a drag. */
	if (!strcmp(method, "POST") && route_match("/api/v1/jobs/#/needle_match", url, &id, name))
		return false;
	if (strcmp(method, "GET") && strcmp(method, "HEAD"))
		return true;
	for (i = 0; i < sizeof(writing_gets) / sizeof(writing_gets[0]); i++)
		if (route_match(writing_gets[i], url, &id, name))
			return true;
	return false;
}

/* A worker's work poll. On PostgreSQL it runs without the writer token,
 * beside the other writers, as it would on another server sharing the
 * database: its assignment is a serial transaction in the database
 * (sched.c), its other writes single statements on the worker's own rows.
 * Queued behind one token, 1,000 polls waited for each other's commits
 * (docs/database.md, "The scheduler at scale"). */
static bool work_poll(const char *method, const char *url)
{
	char name[LIMIT_API_NAME];
	int64_t id;

	return !strcmp(method, "GET") && route_match("/api/v1/workers/#/work", url, &id, name);
}

/* The worker of a work poll, counted in s->polling from its first queueing
 * to its completion (under s->lock). Not counted when out of memory: the
 * worker then relies on its last contact, as before. */
static void polling_add(struct server *s, struct conn_req *r, const char *method, const char *url)
{
	char name[LIMIT_API_NAME];
	int64_t id;

	if (r->poll_worker || strcmp(method, "GET") || !route_match("/api/v1/workers/#/work", url, &id, name) || id <= 0)
		return;
	if (s->npolling == s->cap_polling) {
		size_t cap = s->cap_polling ? 2 * s->cap_polling : 64;
		int64_t *v = cap <= SIZE_MAX / sizeof(*v) ? realloc(s->polling, cap * sizeof(*v)) : NULL;
		if (!v)
			return;
		s->polling = v;
		s->cap_polling = cap;
	}
	s->polling[s->npolling++] = id;
	r->poll_worker = id;
}

/* Test hook of tests/integration/test_server_conc.sh, off unless the
 * environment held VIGIL_TEST_HOLD_DIR=DIR when the server started: a
 * request whose target holds vigil_test_hold=NAME ([a-z0-9]{1,32}) writes
 * DIR/NAME.held once it occupies its handler thread (and the writer token
 * for a writer), then waits there until DIR/NAME exists, at most
 * SERVER_TEST_HOLD_MAX_S. It stands for a slow handler. */
static void test_hold(struct server *s, const char *target)
{
	const char *q = strchr(target, '?'), *v;
	char name[40], *file = NULL, *marker = NULL;
	size_t n;
	int64_t end;

	if (!s->hold_dir || !q || !(v = strstr(q, "vigil_test_hold=")))
		return;
	v += strlen("vigil_test_hold=");
	n = strspn(v, "abcdefghijklmnopqrstuvwxyz0123456789");
	if (n == 0 || n > 32)
		return;
	memcpy(name, v, n);
	name[n] = '\0';
	file = path_join(s->hold_dir, name);
	memcpy(name + n, ".held", 6);
	marker = path_join(s->hold_dir, name);
	if (file && marker && file_write_all(marker, "", 0) == 0) {
		end = time_mono_ms() + SERVER_TEST_HOLD_MAX_S * 1000;
		while (!file_exists(file) && time_mono_ms() < end)
			time_sleep_ms(20);
	}
	free(file);
	free(marker);
}

/* A handler thread's part of a request (the pool's run callback): the
 * response is built here and the I/O thread sends it once resumed. */
static void run_request(void *ctx, unsigned idx, struct pool_item *item)
{
	struct server *s = ctx;
	struct conn_req *r = (struct conn_req *)item;
	struct api_resp out;

	memset(&out, 0, sizeof(out));
	test_hold(s, r->target);
	dispatch(s, &s->handlers[idx], r, &out);
	if (out.suspend) {
		api_resp_release(&out);
		if (park(s, r->con))
			return;
		api_error(&out, 503, "too many waiting workers");
	}
	log_info("%s %s -> %d", r->method, r->target, out.status ? out.status : 500);
	r->resp = http_resp_make(&out, &r->status);
	r->done = true;
	api_resp_release(&out);
	/* The I/O thread may complete and free r as soon as it is resumed. */
	pthread_mutex_lock(&s->lock);
	MHD_resume_connection(r->con);
	pthread_mutex_unlock(&s->lock);
}

/* The client's address as the pool's client key (without the port: one
 * client, many connections), FNV-1a. */
static uint64_t client_key(struct MHD_Connection *con)
{
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(con, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	const struct sockaddr *sa = ci ? ci->client_addr : NULL;
	const unsigned char *b = NULL;
	uint64_t h = 1469598103934665603ull;
	size_t n = 0, i;

	if (sa && sa->sa_family == AF_INET) {
		b = (const unsigned char *)&((const struct sockaddr_in *)(const void *)sa)->sin_addr;
		n = 4;
	} else if (sa && sa->sa_family == AF_INET6) {
		b = (const unsigned char *)&((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr;
		n = 16;
	}
	for (i = 0; i < n; i++)
		h = (h ^ b[i]) * 1099511628211ull;
	return h;
}

/* Hand a complete request to the handler threads: suspend the connection
 * (under the lock, so no handler can resume it first) and queue it. When
 * the queue is full or the server is stopping, answer 503 at once. */
static enum MHD_Result queue_request(struct server *s, struct MHD_Connection *con, struct conn_req *r,
				     const char *url, const char *method)
{
	struct MHD_Response *resp;
	struct api_resp out;
	enum MHD_Result ret;
	unsigned status = 503;
	bool closing;

	r->con = con;
	r->url = url;
	r->method = method;
	r->writes = route_writes(method, url);
	r->item.writes = r->writes && !(s->pg && work_poll(method, url));
	r->item.client = client_key(con);
	pthread_mutex_lock(&s->lock);
	closing = s->closing;
	if (!closing && pool_push(s->pool, &r->item) == 0) {
		MHD_suspend_connection(con);
		r->suspended = true;
		s->inflight++;
		polling_add(s, r, method, url);
		pthread_mutex_unlock(&s->lock);
		return MHD_YES;
	}
	pthread_mutex_unlock(&s->lock);
	memset(&out, 0, sizeof(out));
	api_error(&out, 503, closing ? "the server is stopping" : "too many requests waiting: try again later");
	log_warn("%s %s -> 503 (%s)", method, r->target, closing ? "stopping" : "queue full");
	resp = http_resp_make(&out, &status);
	api_resp_release(&out);
	if (!resp)
		return MHD_NO;
	ret = MHD_queue_response(con, status, resp);
	MHD_destroy_response(resp);
	return ret;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *con, const char *url, const char *method,
			     const char *version, const char *upload_data, size_t *upload_data_size, void **req_cls)
{
	struct server *s = cls;
	struct conn_req *r = *req_cls;

	(void)version;
	if (!r)
		return MHD_NO; /* out of memory in uri_log_cb: drop the connection */
	if (!r->started) {
		const char *cl = MHD_lookup_connection_value(con, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
		long n;
		r->started = true;
		if (!r->target)
			return MHD_NO;
		/* The headers are in: the header timeout is over, a body may take
		 * its time as long as it keeps coming. */
		(void)MHD_set_connection_option(con, MHD_CONNECTION_OPTION_TIMEOUT, (unsigned)SERVER_CONNECTION_TIMEOUT_S);
		if (!strcmp(method, "POST") && upload_route(url))
			return stream_start(s, con, r, cl);
		{
			int64_t wid;
			char wname[LIMIT_API_NAME];
			if (!strcmp(method, "GET") && route_match("/api/v1/ws/#", url, &wid, wname))
				return ws_start(s, con, r, wid);
		}
		if (cl && !str_to_long(cl, &n) && n > (long)LIMIT_API_BODY)
			r->too_big = true; /* answered below without reading the body */
		else
			return MHD_YES;
	}
	if (*upload_data_size) {
		if (r->stream)
			stream_write(r, upload_data, *upload_data_size);
		else if (!r->too_big && buf_append(&r->body, upload_data, *upload_data_size))
			r->too_big = true;
		*upload_data_size = 0;
		return MHD_YES;
	}
	inflight_done(s, r); /* back from a handler thread or the parked list */
	if (r->done) {
		enum MHD_Result ret;
		if (!r->resp)
			return MHD_NO;
		ret = MHD_queue_response(con, r->status, r->resp);
		MHD_destroy_response(r->resp);
		r->resp = NULL;
		return ret;
	}
	if (r->upload_fd >= 0) {
		close(r->upload_fd);
		r->upload_fd = -1;
	}
	return queue_request(s, con, r, url, method);
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	char msg[512];

	(void)cls;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	msg[strcspn(msg, "\n")] = '\0';
	/* A client that leaves mid-answer (a closed live view) is routine. */
	if (strstr(msg, "closed by remote peer") || strstr(msg, "no longer available for sending") ||
	    strstr(msg, "closed by remote side with incomplete request"))
		log_debug("libmicrohttpd: %s", msg);
	else
		log_warn("libmicrohttpd: %s", msg);
}

char *server_db_path(const char *data_dir, const char *db, char *err, size_t errlen)
{
	int rc;

	if (db && strncmp(db, "postgresql://", 13) && strncmp(db, "postgres://", 11)) {
		snprintf(err, errlen, "--db '%s': expected a postgresql:// URL (without --db: DATA/vigil.db, SQLite)", db);
		return NULL;
	}
	if ((rc = file_mkdir_p(data_dir, 0700))) {
		snprintf(err, errlen, "cannot create data directory '%s': %s", data_dir, err_str(rc));
		return NULL;
	}
	return db ? strdup(db) : path_join(data_dir, "vigil.db");
}

static int resolve(const char *listen, struct sockaddr_storage *ss, socklen_t *sslen, char *err, size_t errlen)
{
	const char *colon = strrchr(listen, ':');
	char host[256];
	size_t hl;
	struct addrinfo hints, *ai = NULL;
	int rc;

	if (!colon || !colon[1]) {
		snprintf(err, errlen, "--listen '%s': expected ADDR:PORT, e.g. 127.0.0.1:9526", listen);
		return ERR_INVALID;
	}
	hl = (size_t)(colon - listen);
	if (hl >= 2 && listen[0] == '[' && listen[hl - 1] == ']') {
		listen++;
		hl -= 2;
	}
	if (hl >= sizeof(host)) {
		snprintf(err, errlen, "--listen '%s': address too long", listen);
		return ERR_INVALID;
	}
	memcpy(host, listen, hl);
	host[hl] = '\0';
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
	rc = getaddrinfo(hl ? host : NULL, colon + 1, &hints, &ai);
	if (rc || !ai) {
		snprintf(err, errlen, "--listen '%s': %s", listen, gai_strerror(rc));
		return ERR_INVALID;
	}
	memcpy(ss, ai->ai_addr, ai->ai_addrlen);
	*sslen = ai->ai_addrlen;
	freeaddrinfo(ai);
	return 0;
}

/* Uploads a killed server left half-written (they never reached their
 * place: the worker sends them again). */
static void clean_incoming(const char *data_dir)
{
	char *dir = path_join(data_dir, "testresults/.incoming");
	DIR *d = dir ? opendir(dir) : NULL;
	struct dirent *e;

	while (d && (e = readdir(d))) {
		char *p;
		if (strncmp(e->d_name, "up-", 3) || !(p = path_join(dir, e->d_name)))
			continue;
		if (unlink(p) == 0)
			log_info("removed the unfinished upload '%s'", p);
		free(p);
	}
	if (d)
		closedir(d);
	free(dir);
}

static void raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		(void)setrlimit(RLIMIT_NOFILE, &rl); /* best effort: the connection limit still applies */
	}
}

unsigned server_default_threads(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	if (n < 2)
		return 4;
	return n > SERVER_MAX_THREADS / 2 ? SERVER_MAX_THREADS : (unsigned)(2 * n);
}

/* One database connection and response cache per handler thread. */
static int handlers_open(struct server *s, char *err, size_t errlen)
{
	unsigned i;
	int rc;

	if (!(s->handlers = calloc(s->nthreads, sizeof(*s->handlers))))
		return ERR_NOMEM;
	for (i = 0; i < s->nthreads; i++) {
		resp_cache_init(&s->handlers[i].cache);
		if ((rc = db_open(&s->handlers[i].db, s->db_path, err, errlen)))
			return rc;
	}
	return 0;
}

static void handlers_close(struct server *s)
{
	unsigned i;

	for (i = 0; s->handlers && i < s->nthreads; i++) {
		resp_cache_release(&s->handlers[i].cache);
		db_free(s->handlers[i].db);
	}
	free(s->handlers);
	s->handlers = NULL;
}

/* A listening socket on ss, made before privileges are dropped. */
static int bind_socket(const struct sockaddr_storage *ss, socklen_t sslen, const char *listen_on, int *fd,
		       char *err, size_t errlen)
{
	int one = 1, e;

	*fd = socket(ss->ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (*fd < 0 || setsockopt(*fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(*fd, (const struct sockaddr *)ss, sslen) || listen(*fd, SOMAXCONN)) {
		e = errno;
		snprintf(err, errlen, "cannot listen on '%s': %s", listen_on, err_str(-e));
		if (*fd >= 0)
			close(*fd);
		*fd = -1;
		return -e;
	}
	return 0;
}

int server_start(struct server **out, const struct server_config *cfg, char *err, size_t errlen)
{
	struct server *s = NULL;
	struct sockaddr_storage ss;
	socklen_t sslen = 0;
	char *dbpath = NULL;
	const char *hold = getenv("VIGIL_TEST_HOLD_DIR");
	const union MHD_DaemonInfo *info;
	/* poll(), not epoll: libmicrohttpd 0.9.75's epoll loop stops accepting
	 * for good once the connection limit has been reached while closed
	 * connections wait in the kernel's queue (test_server_conc.sh floods it). */
	unsigned flags = MHD_USE_POLL_INTERNAL_THREAD | MHD_USE_ERROR_LOG | MHD_ALLOW_SUSPEND_RESUME |
			 MHD_ALLOW_UPGRADE;
	unsigned conns = cfg->connection_limit ? cfg->connection_limit : SERVER_CONNECTION_LIMIT;
	struct MHD_OptionItem listen_opt[2] = { { MHD_OPTION_END, 0, NULL }, { MHD_OPTION_END, 0, NULL } };
	int rc, lfd = -1;

	*out = NULL;
	if ((rc = resolve(cfg->listen, &ss, &sslen, err, errlen)))
		return rc;
	if (ss.ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	/* --user: bind while still root (a port below 1024), then become the
	 * user before anything is created under the data directory. */
	if (cfg->user && ((rc = bind_socket(&ss, sslen, cfg->listen, &lfd, err, errlen)) ||
			  (rc = proc_drop_privileges(cfg->user, err, errlen)))) {
		if (lfd >= 0)
			close(lfd);
		return rc;
	}
	listen_opt[0] = lfd >= 0 ? (struct MHD_OptionItem){ MHD_OPTION_LISTEN_SOCKET, lfd, NULL } :
				   (struct MHD_OptionItem){ MHD_OPTION_SOCK_ADDR, 0, &ss };
	if (!(dbpath = server_db_path(cfg->data_dir, cfg->db, err, errlen))) {
		if (lfd >= 0)
			close(lfd);
		return ERR_IO;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		rc = ERR_NOMEM;
		goto out;
	}
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->idle, NULL);
	pthread_mutex_init(&s->timer_lock, NULL);
	pthread_cond_init(&s->timer_cond, NULL);
	watch_init(&s->live);
	login_limit_init(&s->login_limit);
	s->secure_cookies = cfg->secure_cookies;
	s->rerun_wait_s = cfg->rerun_wait_s > 0 ? cfg->rerun_wait_s : RERUN_WAIT_DEFAULT_S;
	s->cleanup_interval_s = cfg->cleanup_interval_s ? cfg->cleanup_interval_s : SERVER_CLEANUP_INTERVAL_S;
	if ((rc = livestream_new(&s->streams)) || (rc = rejudge_store_new(&s->rejudge)) ||
	    (rc = developer_hub_new(&s->developer))) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	s->worker_timeout_s = cfg->worker_timeout_s > 0 ? cfg->worker_timeout_s : WORKERS_DEFAULT_TIMEOUT_S;
	s->header_timeout_s = cfg->header_timeout_s > 0 ? cfg->header_timeout_s : SERVER_HEADER_TIMEOUT_S;
	s->nthreads = cfg->threads ? cfg->threads : server_default_threads();
	if (s->nthreads > SERVER_MAX_THREADS)
		s->nthreads = SERVER_MAX_THREADS;
	if (!(s->data_dir = strdup(cfg->data_dir)) || !(s->db_path = strdup(dbpath)) ||
	    (hold && *hold && !(s->hold_dir = strdup(hold)))) {
		rc = ERR_NOMEM;
		goto out;
	}
	if (s->hold_dir)
		log_warn("test hook on: requests with vigil_test_hold=NAME wait for '%s/NAME'", s->hold_dir);
	if ((rc = db_open(&s->db, dbpath, err, errlen)) || (rc = handlers_open(s, err, errlen)))
		goto out;
	s->pg = db_is_pg(s->db);
	if (workers_grace(s->db, (int64_t)time(NULL)))
		log_warn("cannot reset the workers' last-seen times: %s", db_errmsg(s->db));
	clean_incoming(s->data_dir);
	raise_nofile();
	/* Each connection queues one request at most: the queue cannot fill up. */
	if ((rc = pool_new(&s->pool, s->nthreads, conns, run_request, s))) {
		snprintf(err, errlen, "cannot start %u handler threads: %s", s->nthreads, err_str(rc));
		goto out;
	}
	if ((rc = wshub_new(&s->wshub, dbpath, s->pool, s->worker_timeout_s))) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	wshub_set_live(s->wshub, &s->live);
	s->mhd = MHD_start_daemon(flags, 0, NULL, NULL, handle, s,
				  MHD_OPTION_EXTERNAL_LOGGER, mhd_log, s,
				  MHD_OPTION_ARRAY, listen_opt,
				  MHD_OPTION_CONNECTION_LIMIT, conns,
				  MHD_OPTION_PER_IP_CONNECTION_LIMIT,
				  cfg->per_ip_limit < 0 ? 0u : cfg->per_ip_limit ? (unsigned)cfg->per_ip_limit :
				  (unsigned)SERVER_PER_IP_LIMIT,
				  MHD_OPTION_CONNECTION_TIMEOUT, s->header_timeout_s,
				  MHD_OPTION_URI_LOG_CALLBACK, uri_log_cb, s,
				  MHD_OPTION_NOTIFY_COMPLETED, completed_cb, s,
				  MHD_OPTION_END);
	if (!s->mhd && lfd >= 0)
		close(lfd);
	lfd = -1; /* libmicrohttpd's from here: it closes it when it stops */
	if (!s->mhd) {
		snprintf(err, errlen, "cannot listen on '%s' (address in use or not permitted?)", cfg->listen);
		rc = ERR_IO;
		goto out;
	}
	info = MHD_get_daemon_info(s->mhd, MHD_DAEMON_INFO_BIND_PORT);
	s->port = info ? info->port : 0;
	if (pthread_create(&s->timer, NULL, timer_main, s)) {
		snprintf(err, errlen, "cannot start the housekeeping thread");
		rc = ERR_IO;
		goto out;
	}
	s->timer_started = true;
	{
		char base[300];
		const char *colon = strrchr(cfg->listen, ':');
		int hl = colon ? (int)(colon - cfg->listen) : 0;
		/* Links in messages: the address served, unless [events] base-url says otherwise. */
		snprintf(base, sizeof(base), "http://%.*s:%u", hl && strncmp(cfg->listen, "0.0.0.0", 7) ? hl : 9,
			 hl && strncmp(cfg->listen, "0.0.0.0", 7) ? cfg->listen : "localhost", s->port);
		if ((rc = events_start(&s->events, dbpath, cfg->events, base, err, errlen)))
			goto out;
	}
	rc = 0;
out:
	free(dbpath);
	if (rc) {
		server_free(s);
		return rc;
	}
	*out = s;
	return 0;
}

void server_free(struct server *s)
{
	if (!s)
		return;
	events_stop(s->events);
	s->events = NULL;
	pthread_mutex_lock(&s->lock);
	s->stopping = true;
	pthread_mutex_unlock(&s->lock);
	if (s->timer_started) {
		pthread_mutex_lock(&s->timer_lock);
		pthread_cond_signal(&s->timer_cond);
		pthread_mutex_unlock(&s->timer_lock);
		pthread_join(s->timer, NULL);
	}
	resume_all(s);
	if (s->streams)
		livestream_close(s->streams);
	/* The WebSockets close while the daemon that upgraded them still runs. */
	wshub_free(s->wshub);
	s->wshub = NULL;
	if (s->mhd) {
		/* Let resumed polls answer before the connections close, then
		 * queue nothing more and wait for every suspended connection to
		 * come back: libmicrohttpd must not stop with one suspended. */
		MHD_quiesce_daemon(s->mhd);
		time_sleep_ms(100);
		pthread_mutex_lock(&s->lock);
		s->closing = true;
		while (s->inflight > 0)
			pthread_cond_wait(&s->idle, &s->lock);
		pthread_mutex_unlock(&s->lock);
		MHD_stop_daemon(s->mhd);
	}
	pool_free(s->pool);
	handlers_close(s);
	watch_release(&s->live);
	login_limit_release(&s->login_limit);
	livestream_free(s->streams);
	rejudge_store_free(s->rejudge);
	developer_hub_free(s->developer);
	db_free(s->db);
	free(s->parked);
	free(s->polling);
	free(s->data_dir);
	free(s->db_path);
	free(s->hold_dir);
	pthread_cond_destroy(&s->idle);
	pthread_cond_destroy(&s->timer_cond);
	pthread_mutex_destroy(&s->timer_lock);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

unsigned server_port(const struct server *s)
{
	return s->port;
}
