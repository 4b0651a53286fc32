/* SPDX-License-Identifier: MIT */
/* server.h - the HTTP server of `vigil serve`: libmicrohttpd's epoll thread
 * for the connections, a pool of handler threads (one database connection
 * each) for the requests, openQA's /api/v1 routes, the database in
 * DATA/vigil.db. */
#ifndef VIGIL_SERVER_H
#define VIGIL_SERVER_H

#include <stdbool.h>
#include <stddef.h>

#define SERVER_CONNECTION_LIMIT 512
#define SERVER_PER_IP_LIMIT 64          /* connections from one address */
#define SERVER_HEADER_TIMEOUT_S 10      /* silence before complete headers, or idle between requests */
#define SERVER_CONNECTION_TIMEOUT_S 120 /* silence while a body comes in */
#define SERVER_MAX_THREADS 256
#define SERVER_TEST_HOLD_MAX_S 120      /* the test hook's longest wait (server.c) */

struct server;
struct events_config;

struct server_config {
	const char *listen;    /* "ADDR:PORT", "[V6ADDR]:PORT" or ":PORT" */
	const char *data_dir;  /* created 0700 if missing */
	const char *db;        /* a postgresql:// URL; NULL: the SQLite file DATA_DIR/vigil.db */
	unsigned connection_limit;  /* 0: SERVER_CONNECTION_LIMIT */
	int worker_timeout_s;       /* silence after which a worker is lost; 0: WORKERS_DEFAULT_TIMEOUT_S */
	unsigned threads;           /* handler threads; 0: server_default_threads() */
	int per_ip_limit;           /* connections per client address; 0: SERVER_PER_IP_LIMIT, < 0: none */
	unsigned header_timeout_s;  /* 0: SERVER_HEADER_TIMEOUT_S */
	bool secure_cookies;        /* session cookies with Secure (served over TLS by a proxy) */
	long rerun_wait_s;          /* a pinned re-run waits this long for its worker; 0: RERUN_WAIT_DEFAULT_S */
	const char *user;           /* NULL, or become this user once the address is bound */
	const struct events_config *events; /* NULL or no sink on: no event notifications (events.h) */
	long cleanup_interval_s;    /* retention runs every this many seconds; 0: SERVER_CLEANUP_INTERVAL_S, < 0: never */
};

#define SERVER_CLEANUP_INTERVAL_S 3600

/* The handler threads when not configured: twice the online CPUs, at
 * least 4, at most SERVER_MAX_THREADS. */
unsigned server_default_threads(void);

/* Open (or create) DATA_DIR/vigil.db with path given by server_db_path, bind
 * and start serving on libmicrohttpd's own thread and the handler threads.
 * 0, or an error code with the reason in err. */
int server_start(struct server **out, const struct server_config *cfg, char *err, size_t errlen);
/* Stop serving, wait for the thread, close the database. NULL-safe. */
void server_free(struct server *s);
/* The port actually bound (useful with port 0). */
unsigned server_port(const struct server *s);

/* Create data_dir (0700) and return the database to open as a new string:
 * db when given (a postgresql:// URL), else DATA_DIR/vigil.db; NULL with the
 * reason in err (db neither NULL nor a postgresql:// URL among them). */
char *server_db_path(const char *data_dir, const char *db, char *err, size_t errlen);

#endif
