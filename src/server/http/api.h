/* SPDX-License-Identifier: MIT */
/* api.h - what the REST handlers (api_*.c) share with server.c: the parsed
 * request, the response, form parameters, and the route tables. Handlers
 * run on the server's handler threads, each with its own database
 * connection (req->db), writers one at a time (see server.c); they parse
 * the request, read and write only through the domain modules (jobs.c,
 * tables.c, comments.c, ...: no SQL here), and answer every bad input with
 * a 4xx JSON error, never by exiting. */
#ifndef VIGIL_API_H
#define VIGIL_API_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "server/store/auth.h"

struct db;
struct jbuild;

/* Named limits of one API request. */
#define LIMIT_API_BODY   (1u << 20)   /* form or JSON body bytes */
#define LIMIT_API_PARAMS 4096         /* form/query parameters */
#define LIMIT_API_NAME   256          /* a '*' route segment */

struct param {
	char *key;
	char *value;
};

/* Form parameters in the order received (query string first, then body). */
struct params {
	struct param *v;
	size_t n, cap;
};

void params_init(struct params *p);
void params_release(struct params *p);
/* Add the pairs of an application/x-www-form-urlencoded text (+ is a space,
 * %XX decoded). 0, ERR_PROTO (bad escape or NUL; where in msg), ERR_TOO_BIG, ERR_NOMEM. */
int params_parse(struct params *p, const char *s, size_t len, char *msg, size_t msglen);
/* Append one pair (copied). 0 or ERR_NOMEM/ERR_TOO_BIG. */
int params_add(struct params *p, const char *key, const char *value);
/* The last value of key, as Mojolicious' param(); NULL if absent. Borrowed. */
const char *params_get(const struct params *p, const char *key);

/* A Range header over a file of size bytes (RFC 9110, one range of
 * "bytes=A-B", "bytes=A-" or "bytes=-N"): API_RANGE_PARTIAL with the
 * inclusive bounds in *first and *last, API_RANGE_UNSATISFIABLE (416), or
 * API_RANGE_WHOLE for no header, several ranges, another unit or a header
 * that does not parse (the whole file is sent, as the RFC allows). */
enum api_range { API_RANGE_WHOLE, API_RANGE_PARTIAL, API_RANGE_UNSATISFIABLE };
enum api_range api_range_parse(const char *header, uint64_t size, uint64_t *first, uint64_t *last);

struct watch_map;
struct users_session;
struct login_limit;
struct livestream;
struct rejudge_store;
struct developer_hub;
struct wshub;
struct MHD_Connection;
struct MHD_Response;

struct api_req {
	struct db *db;
	const char *method;     /* GET, POST, PUT, DELETE (HEAD is served as GET) */
	const char *path;       /* decoded path, no query */
	const char *target;     /* raw request target as sent */
	struct params params;   /* query + form body */
	json_t *json;           /* the body when it was application/json, else NULL */
	int64_t id;             /* the number matched by '#' in the route, else 0 */
	const void *arg;        /* the route's argument */
	enum auth_level level;  /* what the request's key allows */
	const char *data_dir;   /* the server's DATA directory */
	unsigned port;          /* the server's HTTP port (0 when unknown) */
	const char *name;       /* the segment matched by '*' in the route, else NULL */
	const char *upload;     /* streamed body of an upload route: a temporary file the handler may rename */
	uint64_t upload_len;
	const char *upload_sha256; /* hex sha256 of the streamed body, hashed as it arrived */
	int64_t *poll_deadline_ms; /* long polls: per-connection deadline (monotonic ms), 0 before the first try */
	bool stopping;          /* the server is shutting down: answer long polls now */
	const char *key;        /* the API key that signed the request (borrowed), NULL when unsigned */
	const char *accept;     /* the Accept header (borrowed), NULL when absent */
	const char *if_none_match; /* the If-None-Match header (borrowed), NULL when absent */
	const char *range;      /* the Range header (borrowed), NULL when absent */
	struct watch_map *live;  /* watched jobs (the server's, shared, locked inside) */
	/* Sign-in (api_users.c). session: the browser session of the request's
	 * cookie when there was no API key (for a write only when it carried
	 * the session's X-CSRF-Token; csrf_failed tells that it did not), else NULL. */
	const struct users_session *session;
	bool csrf_failed;
	const char *client_addr;         /* the client's address as text */
	struct login_limit *login_limit; /* failed sign-ins (the server's, shared, locked inside) */
	bool secure_cookies;             /* cookies go out with Secure (serve --secure-cookies) */
	long rerun_wait_s;               /* how long a pinned re-run waits for its worker (serve --rerun-wait) */
	struct livestream *streams; /* the live view's event streams (the server's, shared) */
	struct MHD_Connection *con; /* the request's connection: api_header, api_cookie, streamed answers */
	uint64_t client;        /* the client's address as a hash */
	struct rejudge_store *rejudge; /* the last re-judge per job (the server's, shared, locked inside) */
	struct developer_hub *developer; /* developer mode's queues and states (the server's, shared) */
	struct wshub *wshub;  /* openQA workers' WebSockets (the server's, shared, locked inside) */
	/* wshub_missing_cb: whether an openQA worker has no WebSocket open, for
	 * the pages, which do not include api/ (store/workers.h's workers_missing_fn) */
	bool (*ws_missing)(void *hub, int64_t worker_id);
	int worker_timeout_s;   /* a worker silent this long is dead (serve --worker-timeout) */
};

struct api_resp {
	int status;
	json_t *json;       /* owned; sent as application/json */
	char *text;         /* owned; sent as text/plain when json is NULL */
	char *file;         /* owned path; its bytes are sent when json and text are NULL */
	const char *ctype;  /* Content-Type of file or text (static text; text defaults to text/plain) */
	const char *hdr_name; /* one extra response header (static name), value below */
	char hdr_value[96];
	bool suspend;       /* long poll: park the connection, retry the handler later */
	const char *raw;    /* borrowed JSON text sent as is (the response cache) */
	size_t raw_len;
	const unsigned char *bytes; /* static bytes sent as is with ctype (the embedded web files) */
	size_t bytes_len;
	bool web;           /* a page or web file: sent with the CSP and the other browser headers */
	bool immutable;     /* bytes that never change under their URL: cached by browsers for good */
	char *set_cookie;   /* owned: a Set-Cookie header value, or NULL */
	char *location;     /* owned: a Location header value (with a 3xx status), or NULL */
	bool audited;       /* the handler recorded its own audit event: server.c records none */
	const char *range;  /* the request's Range header for a file answer (borrowed; set by server.c) */
	const char *if_none_match; /* its If-None-Match header, likewise: a file's ETag there answers 304 */
	struct MHD_Response *stream; /* owned; a response that streams (livestream.c), sent as is */
};

/* Set a JSON error {"error": text} (server.c adds error_status). */
void api_error(struct api_resp *out, int status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Answer a failed domain call, msg as the error text: ERR_NOT_FOUND 404,
 * ERR_INVALID 400, ERR_BADSTATE 403 (not allowed in this state),
 * ERR_NOMEM 503 (api_nomem), else 500. */
void api_error_code(struct api_resp *out, int rc, const char *msg);
/* 503 {"error": "out of memory: try again later"}: the out-of-memory
 * policy (docs/hardening.md); the server carries on. */
void api_nomem(struct api_resp *out);
/* Set a 200 JSON body (takes ownership of j; NULL means out of memory → 503). */
void api_json(struct api_resp *out, json_t *j);
/* A 200 answer of JSON text (taken; NULL: out of memory, 503) written
 * without a jansson tree. */
void api_json_text(struct api_resp *out, char *text);
/* Answer j (200, as api_json) unless b recorded a failure or j is NULL:
 * then 503 out of memory (api_nomem), j freed. */
void api_json_built(const struct jbuild *b, struct api_resp *out, json_t *j);

typedef void (*api_handler)(struct api_req *req, struct api_resp *out);

/* pattern: a path whose '#' segment matches a decimal id (into req->id)
 * and whose '*' segment matches one path segment (into req->name). */
struct api_route {
	const char *method;
	const char *pattern;
	enum auth_level level;
	api_handler fn;
	const void *arg;
};

/* Route tables, each ended by an entry with method NULL. */
extern const struct api_route api_jobs_routes[];
extern const struct api_route api_isos_routes[];
extern const struct api_route api_tables_routes[];
extern const struct api_route api_workers_routes[];
extern const struct api_route api_rerun_routes[];
extern const struct api_route api_comments_routes[];
extern const struct api_route api_yaml_routes[];
extern const struct api_route api_assets_routes[];
extern const struct api_route api_live_routes[];
extern const struct api_route api_devmode_routes[];
extern const struct api_route api_needles_routes[];
extern const struct api_route web_routes[];
extern const struct api_route api_users_routes[];
extern const struct api_route api_audit_routes[];
extern const struct api_route api_rejudge_routes[];
extern const struct api_route api_needle_edit_routes[];
extern const struct api_route api_review_routes[];
extern const struct api_route api_locks_routes[];
extern const struct api_route api_cleanup_routes[];

/* The i-th route of all the server's tables (in the order the router
 * tries them), NULL past the last: what the fuzz target and the bad input
 * test walk, so a new route is covered without an edit there. */
const struct api_route *api_route_at(size_t i);

void api_resp_release(struct api_resp *out);

/* A request header (name case-insensitive) or cookie; NULL when absent.
 * Borrowed for the request (server.c). */
const char *api_header(const struct api_req *req, const char *name);
const char *api_cookie(const struct api_req *req, const char *name);
/* Who acts in req, for the audit log: the session's user name, the name of
 * the user owning the request's API key, "key:KEY" for a key of no user,
 * else "anonymous" (api_audit.c). */
void api_actor(const struct api_req *req, char *out, size_t outlen);
/* Record a successful write in the audit log (server.c calls it once per
 * writing request unless the handler set out->audited; worker traffic
 * is left out). Failures are logged, never answered (api_audit.c). */
void api_audit_request(const struct api_req *req, const struct api_route *route, const struct api_resp *out);

/* Uppercase ASCII copy of s (new string), NULL when out of memory. */
char *api_upper(const char *s);
/* Parse a whole decimal id > 0. 0 or ERR_INVALID. */
int api_parse_id(const char *s, int64_t *out);

#endif
