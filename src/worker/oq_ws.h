/* SPDX-License-Identifier: MIT */
/* oq_ws.h - the worker's WebSocket to openQA (/api/v1/ws/<worker id>):
 * the HTTP/1.1 Upgrade handshake written over a libcurl CONNECT_ONLY
 * connection (Debian 12's libcurl has no WebSocket support), signed like
 * every API request, following openQA's redirect to its websockets daemon;
 * the frames themselves are net/ws.c's. Messages are JSON text frames. */
#ifndef VIGIL_WORKER_OQ_WS_H
#define VIGIL_WORKER_OQ_WS_H

#include <jansson.h>
#include <stddef.h>
#include "net/ws.h"

#define OQ_WS_MAX_REDIRECTS 3
#define OQ_WS_HANDSHAKE_MAX 16384

struct oq_ws {
	void *curl;          /* CURL *, CONNECT_ONLY */
	int fd;              /* its socket, -1 when closed */
	struct ws_transport transport; /* libcurl's recv/send for net/ws.c */
	struct ws *ws;       /* net/ws.c's connection */
	json_t *inbox;       /* received messages not yet taken */
	int closed;          /* the peer closed or the connection failed */
	char url[512];       /* where it is connected */
};

/* Connect to base (http://host:port) path (e.g. "/api/v1/ws/7"), signed
 * with key/secret, following up to OQ_WS_MAX_REDIRECTS redirects (openQA's
 * web UI sends the worker to its websockets daemon). 0, or ERR_PROTO
 * (refused: the HTTP status and body in err), ERR_IO, ERR_TIMEOUT; on
 * failure nothing is left to release. */
int oq_ws_connect(struct oq_ws *s, const char *base, const char *path, const char *key, const char *secret,
		  long timeout_s, char *err, size_t errlen);

/* Send msg (borrowed) as one text frame. 0 or ERR_CLOSED/ERR_NOMEM/ERR_IO. */
int oq_ws_send(struct oq_ws *s, const json_t *msg);

/* The next message, waiting at most timeout_ms (0: only what arrived);
 * new reference, or NULL with *rc 0 (nothing yet) or ERR_CLOSED (the
 * connection is gone: close frame, EOF or error). A message that is not a
 * JSON object is skipped with a warning. */
json_t *oq_ws_recv(struct oq_ws *s, int timeout_ms, int *rc);

/* Close (a close frame when still open) and free everything. */
void oq_ws_release(struct oq_ws *s);

#endif
