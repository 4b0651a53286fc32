/* SPDX-License-Identifier: MIT */
/* out_files.h - names of the files in a job's OUT directory that the
 * runner writes and the worker reads: their one interface besides the
 * results themselves (the two sides share no other module). */
#ifndef VIGIL_UTIL_OUT_FILES_H
#define VIGIL_UTIL_OUT_FILES_H

/* The command server's port, as decimal text, once it listens. */
#define CMDSRV_PORT_FILE ".cmdsrv-port"
/* Developer mode: the runner's state (JSON) and its command channel. */
#define DEVMODE_SOCK_FILE ".devmode.sock"
#define DEVMODE_STATE_FILE ".devmode.json"

#endif
