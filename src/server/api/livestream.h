/* SPDX-License-Identifier: MIT */
/* livestream.h - the live view's server-sent event streams
 * (GET /tests/<id>/streaming) and what they carry for each watched job:
 * the newest frame, the status (state, module, step, ...), the runner
 * output's tail and the end. A stream holds no handler thread: its
 * libmicrohttpd response is read by the I/O thread, which finds the next
 * event ready or suspends the connection; whoever publishes something new
 * for a job (a handler storing a worker's post, the housekeeping thread)
 * resumes that job's streams. Streams are limited per client address and
 * in all; a suspended connection sees no disconnect, so each second the
 * waiting streams' sockets are looked at (and a heartbeat comment goes
 * out after LIVESTREAM_HEARTBEAT_S of silence): one whose client left is
 * closed, and libmicrohttpd's free callback forgets it. Shared by all threads:
 * every call takes the hub's lock. Knows no SQL: api_live.c feeds it. */
#ifndef VIGIL_SERVER_LIVESTREAM_H
#define VIGIL_SERVER_LIVESTREAM_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LIVESTREAM_MAX 256           /* streams in all (503 beyond) */
#define LIVESTREAM_PER_CLIENT 32     /* streams from one client address (429 beyond) */
#define LIVESTREAM_HEARTBEAT_S 15
#define LIVESTREAM_LOG_KEEP (64u << 10) /* runner output kept per job for new viewers */
#define LIVESTREAM_RETRY_MS 2000     /* the browser's reconnection delay */

struct livestream;
struct MHD_Connection;
struct MHD_Response;

/* 0 and *out, or ERR_NOMEM. */
int livestream_new(struct livestream **out);
/* The server stops: streams end (suspended ones are resumed to say so)
 * and no new one opens. Call before stopping the daemon. */
void livestream_close(struct livestream *h);
/* After the daemon stopped (no stream left). NULL-safe. */
void livestream_free(struct livestream *h);

/* A new event stream of job for the request on con from client (an
 * address hash): *resp (the caller's to queue and destroy) sends
 * text/event-stream. It starts with a retry hint and whatever the job
 * has: status, output tail, frame, end. 0; ERR_TOO_BIG: the client has
 * LIVESTREAM_PER_CLIENT streams; ERR_BADSTATE: LIVESTREAM_MAX in all or
 * closing; ERR_NOMEM. */
int livestream_open(struct livestream *h, int64_t job, uint64_t client, struct MHD_Connection *con,
		    struct MHD_Response **resp);

/* Whether anyone streams job; how many streams it has; whether it has a
 * frame yet. */
bool livestream_watched(struct livestream *h, int64_t job);
size_t livestream_viewers(struct livestream *h, int64_t job);
bool livestream_has_frame(struct livestream *h, int64_t job);
/* The jobs streamed now, up to max of them into ids; their count. */
size_t livestream_jobs(struct livestream *h, int64_t *ids, size_t max);

/* Publish to job's streams (nothing when nobody streams it). frame: the
 * PNG's base64 (checked: only base64 characters), seq and the wall ms of
 * its capture (t) and writing (w): event "frame", data {"n", "t", "w",
 * "src": "data:image/png;base64,..."}. */
void livestream_frame(struct livestream *h, int64_t job, uint64_t seq, int64_t t, int64_t w, const char *b64,
		      size_t len);
/* Merge fields (an object, borrowed) into job's status: event "status"
 * with the whole object when it changed. */
void livestream_status(struct livestream *h, int64_t job, const json_t *fields);
/* New runner output: event "log", data a JSON string of it. */
void livestream_log(struct livestream *h, int64_t job, const char *text, size_t len);
/* New serial output of the guest (openQA's worker: serial0, the serial
 * terminals): event "serial", data a JSON string of it. */
void livestream_serial(struct livestream *h, int64_t job, const char *text, size_t len);
/* The job is over: event "end", data fields (borrowed), sent after
 * everything else; then the stream ends. */
void livestream_end(struct livestream *h, int64_t job, const json_t *fields);
/* Housekeeping, each second: streams silent for LIVESTREAM_HEARTBEAT_S
 * (monotonic seconds now) get a comment; a waiting stream whose client
 * closed its end is closed (and so forgotten). */
void livestream_sweep(struct livestream *h, double now);

#endif
