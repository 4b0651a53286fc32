/* SPDX-License-Identifier: MIT */
/* wshub.h - openQA's worker WebSocket (/api/v1/ws/<id>) in `vigil
 * serve`: the connection upgrade, one thread per connected openQA worker
 * (its own database connection, writes under the pool's writer token) that
 * hands it jobs with grab_job, answers worker_status, takes accepted,
 * rejected and quit, and sends cancel for a job cancelled in vigil, abort
 * for one taken from it (given back to the queue or another worker). The
 * hub also tells which registered workers expect a WebSocket and have none
 * (the workers list shows them offline). vigil's own workers (the long
 * poll) never come here. */
#ifndef VIGIL_WSHUB_H
#define VIGIL_WSHUB_H

#include <stdbool.h>
#include <stdint.h>
#include <jansson.h>

struct wshub;
struct db;
struct pool;
struct watch_map;
struct MHD_Connection;

/* How often a connected worker's session looks for work and for a
 * cancelled job, in milliseconds (a message from the worker wakes it too). */
#define WS_WORKERS_TICK_MS 1000
/* How long a stopping server waits for a worker to answer its close frame. */
#define WS_WORKERS_CLOSE_WAIT_MS 3000
/* How often a connected worker is marked seen (the lost-worker check
 * must not end the jobs of a worker that only keeps its socket open). */
#define WS_WORKERS_SEEN_S 5
/* A ping to each worker this often; a socket over which nothing came
 * (not even a pong) for the hub's dead time is a dead peer (its host gone
 * without closing the TCP connection, or the process stopped). */
#define WS_WORKERS_PING_MS 5000
#define WS_WORKERS_DEAD_MIN_S 15

/* A hub for the server whose database is db_path, writers serialised by
 * pool; a socket silent for dead_s (at least WS_WORKERS_DEAD_MIN_S: the
 * server's worker timeout) is closed as dead. 0, ERR_NOMEM. */
int wshub_new(struct wshub **out, const char *db_path, struct pool *pool, int dead_s);

/* The server's watched jobs (api_live.c's): a job of an openQA worker
 * that someone watches gets livelog_start, livelog_stop when nobody does.
 * Set before the first session; borrowed. */
void wshub_set_live(struct wshub *h, struct watch_map *live);

/* Closes every session (close frame 1001), waits for their threads and
 * frees the hub. NULL-safe. */
void wshub_free(struct wshub *h);

/* Called by the server's I/O thread for GET /api/v1/ws/<id>, after the
 * request's signature was checked (db: the I/O thread's connection, for
 * the worker's row): answers 101 and starts the session, or an error (400
 * not a WebSocket request, 404 unknown worker). Returns
 * libmicrohttpd's MHD_YES/MHD_NO as an int. */
int wshub_upgrade(struct wshub *h, struct MHD_Connection *con, struct db *db, int64_t worker_id);

/* A registration said websocket_api_version (expect=true), or the worker
 * asked for work the vigil way (false). */
void wshub_expect(struct wshub *h, int64_t worker_id, bool expect);

/* True when the worker registered as an openQA worker and has no
 * WebSocket open now. */
bool wshub_missing(struct wshub *h, int64_t worker_id);
/* The same for the domain's workers_list_all (hub: a struct wshub). */
bool wshub_missing_cb(void *hub, int64_t worker_id);

#endif
