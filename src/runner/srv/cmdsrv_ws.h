/* SPDX-License-Identifier: MIT */
/* cmdsrv_ws.h - the command server's developer-mode WebSocket (GET
 * /<JOBTOKEN>/ws), as os-autoinst's commands.pm serves it to openQA's
 * livehandler: JSON commands in (set_pause_at_test, resume_test_execution,
 * status, ...), handed to the runner's developer mode (runner/srv/devmode.c);
 * its answers and every change of its state (pauses, resumes, the current
 * module) broadcast to all clients in os-autoinst's messages. Framing is
 * net/ws.c's; each client has its own thread. Internal to runner/srv/cmdsrv.c. */
#ifndef VIGIL_RUNNER_CMDSRV_WS_H
#define VIGIL_RUNNER_CMDSRV_WS_H

#include <jansson.h>
#include <microhttpd.h>

/* os-autoinst's developer-mode version (OpenQA::Isotovideo::Interface 4.6):
 * openQA's livehandler wants major 1. */
#define CMDSRV_DEVEL_MAJOR 1
#define CMDSRV_DEVEL_MINOR 1
#define CMDSRV_WS_CLIENTS 16     /* clients at once at most */
#define CMDSRV_WS_PING_MS 10000  /* keeps a peer's inactivity timeout (Mojolicious: 20-40 s) away */

struct cmdsrv_ws;
struct devmode;

/* A hub with no developer mode yet. NULL on allocation failure. */
struct cmdsrv_ws *cmdsrv_ws_new(void);
/* Serve d (NULL: stop; the clients are closed). */
void cmdsrv_ws_set_devmode(struct cmdsrv_ws *h, struct devmode *d);
/* Answer a GET ws: the upgrade (101), 400 (not a WebSocket handshake),
 * 501 (no developer mode) or 503 (too many clients). */
enum MHD_Result cmdsrv_ws_upgrade(struct cmdsrv_ws *h, struct MHD_Connection *con);
/* Close every client, join their threads, free. NULL-safe. */
void cmdsrv_ws_free(struct cmdsrv_ws *h);

/* os-autoinst's answer to "status" from developer mode's state (see
 * devmode_state): running, current_test_full_name, pause_test_name,
 * pause_on_screen_mismatch, pause_on_next_command, pause_on_failure,
 * test_execution_paused, tags, devel_mode_*_version. New reference.
 * Exported for the unit tests. */
json_t *cmdsrv_ws_status(const json_t *state);

#endif
