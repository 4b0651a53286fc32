/* SPDX-License-Identifier: MIT */
/* fuzz_server.h - the real server for the targets that fuzz it over HTTP
 * (routes, multipart, ws): server.c runs in the fuzzing process on a
 * loopback port over a throwaway database in a temporary directory, made
 * on the first input and removed at exit; fuzz_client signs its requests
 * with an admin key, so handlers past the authentication are reached. */
#ifndef VIGIL_FUZZ_SERVER_H
#define VIGIL_FUZZ_SERVER_H

#include <stdio.h>
#include <stdlib.h>
#include "fuzz.h"
#include "net/http.h"
#include "server/http/api.h"
#include "server/store/auth.h"
#include "server/db/db.h"
#include "server/server.h"
#include "util/buf.h"
#include "util/log.h"

static struct server *fuzz_srv;
static struct http_client fuzz_client;
static char fuzz_dir[] = "/tmp/vigil-fuzz-server-XXXXXX";
static char fuzz_key[AUTH_KEY_LEN + 1], fuzz_secret[AUTH_KEY_LEN + 1];

static void fuzz_server_cleanup(void)
{
	char cmd[64];

	server_free(fuzz_srv);
	http_client_release(&fuzz_client);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", fuzz_dir);
	if (system(cmd) != 0)
		fprintf(stderr, "fuzz: could not remove %s\n", fuzz_dir);
}

static void fuzz_server_setup(void)
{
	struct server_config cfg = { .listen = "127.0.0.1:0", .threads = 2, .per_ip_limit = -1 };
	char err[256] = "", base[64], *path;
	struct db *db = NULL;
	int64_t id;

	log_set_stderr_level(LOG_ERR);
	if (!mkdtemp(fuzz_dir))
		abort();
	cfg.data_dir = fuzz_dir;
	path = server_db_path(fuzz_dir, NULL, err, sizeof(err));
	if (!path || db_open(&db, path, err, sizeof(err)) ||
	    auth_key_create(db, AUTH_ADMIN, 0, fuzz_key, fuzz_secret, &id)) {
		fprintf(stderr, "fuzz: database: %s\n", err);
		abort();
	}
	db_free(db);
	free(path);
	if (server_start(&fuzz_srv, &cfg, err, sizeof(err))) {
		fprintf(stderr, "fuzz: server: %s\n", err);
		abort();
	}
	snprintf(base, sizeof(base), "http://127.0.0.1:%u", server_port(fuzz_srv));
	if (http_client_init(&fuzz_client, base, fuzz_key, fuzz_secret))
		abort();
	atexit(fuzz_server_cleanup);
}

#endif
