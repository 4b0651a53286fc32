/* SPDX-License-Identifier: MIT */
/* apikey.c - `vigil apikey new --data DIR [--admin]`: creates an API key in
 * the server's database and prints "KEY SECRET". */
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "cmd/cmd.h"
#include "server/auth.h"
#include "server/db.h"
#include "server/server.h"
#include "util/banned.h" /* last: after every system header */

static const char apikey_usage[] =
	"usage: vigil apikey new [--data DIR] [--db URL] [--admin]\n"
	"\n"
	"Creates an API key for 'vigil serve' in DIR/vigil.db (created 0600 in a\n"
	"0700 directory if missing) and prints \"KEY SECRET\". Put them into\n"
	"~/.config/openqa/client.conf for openqa-cli:\n"
	"  [HOST]\n  key = KEY\n  secret = SECRET\n"
	"\n"
	"  --data DIR   data directory (default ./vigil-data), as given to 'vigil serve'\n"
	"  --db URL     the PostgreSQL database given to 'vigil serve --db'\n"
	"  --admin      the key may also change machines, products, test suites,\n"
	"               job groups and job templates (otherwise: jobs and isos)\n"
	"  -h, --help   this text\n";

int cmd_apikey(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "data", required_argument, NULL, 'd' },
		{ "db", required_argument, NULL, 'D' },
		{ "admin", no_argument, NULL, 'a' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *data = "vigil-data", *dburl = NULL;
	char key[AUTH_KEY_LEN + 1], secret[AUTH_KEY_LEN + 1], err[512];
	struct db *db = NULL;
	char *path;
	bool admin = false;
	int c, rc;

	if (argc < 2 || (strcmp(argv[1], "new") && strcmp(argv[1], "--help") && strcmp(argv[1], "-h"))) {
		fputs(apikey_usage, stderr);
		return 2;
	}
	if (strcmp(argv[1], "new")) {
		fputs(apikey_usage, stdout);
		return 0;
	}
	argc--;
	argv++;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			data = optarg;
			break;
		case 'D':
			dburl = optarg;
			break;
		case 'a':
			admin = true;
			break;
		case 'h':
			fputs(apikey_usage, stdout);
			return 0;
		default:
			fputs(apikey_usage, stderr);
			return 2;
		}
	}
	umask(077);
	path = server_db_path(data, dburl, err, sizeof(err));
	if (!path || db_open(&db, path, err, sizeof(err))) {
		fprintf(stderr, "vigil apikey: %s\n", err);
		free(path);
		return 1;
	}
	rc = auth_key_new(db, admin, key, secret);
	db_free(db);
	if (rc) {
		fprintf(stderr, "vigil apikey: cannot store the new key in %s\n", path);
		free(path);
		return 1;
	}
	free(path);
	printf("%s %s\n", key, secret);
	return 0;
}
