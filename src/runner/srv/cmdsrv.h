/* SPDX-License-Identifier: MIT */
/* cmdsrv.h - the runner's command server: os-autoinst's commands.pm
 * routes (/<JOBTOKEN>/data, uploadlog, upload_asset, current_script,
 * files, assets, vars, isotovideo/version) on 127.0.0.1, for the guest
 * (over user networking) and Perl's testapi, and the developer-mode
 * WebSocket (ws) that openQA's livehandler connects to. Runs on its own MHD
 * threads (and one per WebSocket client); it reads only what it copied at
 * start, the vars set under its lock and developer mode's thread-safe
 * calls. */
#ifndef VIGIL_RUNNER_CMDSRV_H
#define VIGIL_RUNNER_CMDSRV_H


#include <stddef.h>
#include <jansson.h>
#include "util/out_files.h"

/* An upload bigger than this is refused (os-autoinst's 20 GiB). */
#define LIMIT_CMDSRV_UPLOAD (20ull << 30)
/* A form field other than the file (upname, target). */
#define LIMIT_CMDSRV_FIELD 256
/* The address the guest reaches the server at when user networking is
 * restricted (vigil's default): QEMU forwards it to the server. */
#define CMDSRV_GUEST_IP "10.0.2.100"
/* OUT/<this>: the port the server listens on, written once it does (the
 * worker's status carries it to openQA as cmd_srv_url). */

struct cmdsrv;

/* What the server serves; strings are copied by cmdsrv_start. */
struct cmdsrv_conf {
	const char *token;    /* JOBTOKEN: every route is under /<token>/ */
	const char *casedir;  /* CASEDIR: data/ under it */
	const char *out_dir;  /* OUT: current_script, files/, assets_*, testresults/ulogs */
	const char *assetdir; /* ASSETDIR (assets/<type>/<name>), or NULL */
	const char *vars_file; /* /vars reads this vars.json at each request (Perl), or NULL: the vars set */
	unsigned port;        /* 0: a free port */
	int listen_any;       /* listen on every address (0.0.0.0), as os-autoinst, not only 127.0.0.1 */
};

struct devmode;

/* Listen on 127.0.0.1 and serve. *out is the caller's (cmdsrv_free).
 * 0, or ERR_NOMEM/ERR_IO with err filled. */
int cmdsrv_start(const struct cmdsrv_conf *c, struct cmdsrv **out, char *err, size_t errlen);
/* The port listened on. */
unsigned cmdsrv_port(const struct cmdsrv *s);
/* Replace what /vars serves with a copy of vars (a JSON object). 0 or
 * ERR_NOMEM. Thread-safe. */
int cmdsrv_set_vars(struct cmdsrv *s, const json_t *vars);
/* Serve the developer-mode WebSocket (GET /<token>/ws, os-autoinst's
 * messages: docs/cmdsrv.md) over d, or stop (d NULL; the clients are
 * closed). Until then ws answers 501. d must outlive the server or be
 * unset first. */
void cmdsrv_set_devmode(struct cmdsrv *s, struct devmode *d);
/* Stop serving (waits for requests in progress) and free. NULL-safe. */
void cmdsrv_free(struct cmdsrv *s);

/* A random job token (letters and digits) of len - 1 characters. 0 or ERR_IO. */
int cmdsrv_make_token(char *out, size_t len);

/* Internal, exported for the unit tests. */
enum cmdsrv_kind {
	CMDSRV_DATA,           /* GET data[/relpath] */
	CMDSRV_UPLOADLOG,      /* POST uploadlog/<name> */
	CMDSRV_UPLOAD_ASSET,   /* POST upload_asset/<name> */
	CMDSRV_CURRENT_SCRIPT, /* GET current_script */
	CMDSRV_FILES,          /* GET files/<relpath> */
	CMDSRV_ASSETS,         /* GET assets/<type>/<name>[/relpath] */
	CMDSRV_VARS,           /* GET vars */
	CMDSRV_ISOTOVIDEO,     /* GET isotovideo/<cmd> */
	CMDSRV_WS,             /* GET ws: the developer-mode WebSocket */
};

struct cmdsrv_route {
	enum cmdsrv_kind kind;
	const char *rest;      /* borrowed from the url: what follows the route's name ("" none) */
};

/* Map method + url (decoded path) to a route. 0, or the HTTP status to
 * answer: 403 (not under /<token>/), 404 (no such route, or a ".."
 * component), 405 (wrong method). */
int cmdsrv_route_parse(const char *method, const char *url, const char *token, struct cmdsrv_route *rt);
/* 1 when rel is a relative path without a ".." component, else 0. */
int cmdsrv_path_allowed(const char *rel);
/* Write the regular files under dir (recursively, sorted) to fd as a
 * cpio "newc" archive, named prefix + their path under dir, as
 * commands.pm does for data/. 0, or negative with err filled. */
int cmdsrv_cpio_dir(const char *dir, const char *prefix, int fd, char *err, size_t errlen);

struct runner;
/* Start the command server of job r when its VM has user networking
 * (NICTYPE=user) or DEVELOPER_MODE_WS is set: JOBTOKEN (made when unset),
 * QEMUPORT and QEMU_HOST_IP set in its variables, OUT/cmdsrv_port written,
 * r->cmdsrv and r->hooks.vars_changed set. 0 (also when none is needed),
 * or the error (logged; the job runs without it). */
int cmdsrv_job_start(struct runner *r);

#endif
