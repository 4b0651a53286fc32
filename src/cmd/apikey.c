/* SPDX-License-Identifier: MIT */
/* apikey.c - `vigil apikey new --data DIR [--admin] [--refuse-legacy]`:
 * creates an API key in the server's database and prints "KEY SECRET";
 * `vigil apikey set KEY --refuse-legacy|--accept-legacy` changes whether a
 * key takes openQA's legacy signatures; `vigil apikey list` shows the keys. */
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "cmd/cmd.h"
#include "server/store/auth.h"
#include "server/db/db.h"
#include "server/server.h"
#include "util/err.h"
#include "util/banned.h" /* last: after every system header */

static const char apikey_usage[] =
	"usage: vigil apikey new [--data DIR] [--db URL] [--admin] [--refuse-legacy]\n"
	"       vigil apikey set KEY [--data DIR] [--db URL] --refuse-legacy|--accept-legacy\n"
	"       vigil apikey list [--data DIR] [--db URL]\n"
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
	"  --refuse-legacy\n"
	"               the key takes only vigil's signatures (scheme 2: a nonce\n"
	"               and the body's hash signed, replays refused), as 'vigil\n"
	"               client' and 'vigil worker' send; openqa-cli and openQA's\n"
	"               worker sign the legacy way and are refused with it\n"
	"  --accept-legacy\n"
	"               take openQA's legacy signatures again (the default)\n"
	"  -h, --help   this text\n";

/* One line a key: KEY LEVEL [user NAME] legacy|no-legacy. Frees db, path. */
static int apikey_list(struct db *db, char *path)
{
	json_t *all = NULL, *k;
	size_t i;
	int rc = auth_keys_all(db, &all);

	db_free(db);
	free(path);
	if (rc) {
		fprintf(stderr, "vigil apikey list: cannot read the keys\n");
		return 1;
	}
	json_array_foreach(all, i, k) {
		const char *user = json_string_value(json_object_get(k, "user"));
		printf("%s %s%s%s %s\n", json_string_value(json_object_get(k, "key")),
		       json_string_value(json_object_get(k, "level")), user ? " user " : "", user ? user : "",
		       json_is_true(json_object_get(k, "refuse_legacy")) ? "no-legacy" : "legacy");
	}
	json_decref(all);
	return 0;
}

int cmd_apikey(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "data", required_argument, NULL, 'd' },
		{ "db", required_argument, NULL, 'D' },
		{ "admin", no_argument, NULL, 'a' },
		{ "refuse-legacy", no_argument, NULL, 'r' },
		{ "accept-legacy", no_argument, NULL, 'A' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *data = "vigil-data", *dburl = NULL;
	char key[AUTH_KEY_LEN + 1], secret[AUTH_KEY_LEN + 1], err[512];
	struct db *db = NULL;
	char *path;
	const char *verb, *setkey = NULL;
	bool admin = false;
	int c, rc, legacy = -1; /* -1: unchanged, 1: refuse, 0: accept */

	if (argc < 2 || (strcmp(argv[1], "new") && strcmp(argv[1], "set") && strcmp(argv[1], "list") &&
			 strcmp(argv[1], "--help") && strcmp(argv[1], "-h"))) {
		fputs(apikey_usage, stderr);
		return 2;
	}
	verb = argv[1];
	if (!strcmp(verb, "--help") || !strcmp(verb, "-h")) {
		fputs(apikey_usage, stdout);
		return 0;
	}
	argc--;
	argv++;
	if (!strcmp(verb, "set")) {
		if (argc < 2 || argv[1][0] == '-') {
			fprintf(stderr, "vigil apikey set: which key? (vigil apikey set KEY --refuse-legacy)\n");
			return 2;
		}
		setkey = argv[1];
		argc--;
		argv++;
	}
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
		case 'r':
			legacy = 1;
			break;
		case 'A':
			legacy = 0;
			break;
		case 'h':
			fputs(apikey_usage, stdout);
			return 0;
		default:
			fputs(apikey_usage, stderr);
			return 2;
		}
	}
	if (setkey && legacy < 0) {
		fprintf(stderr, "vigil apikey set: give --refuse-legacy or --accept-legacy\n");
		return 2;
	}
	if (optind < argc) {
		fprintf(stderr, "vigil apikey %s: unexpected argument '%s'\n", verb, argv[optind]);
		return 2;
	}
	umask(077);
	path = server_db_path(data, dburl, err, sizeof(err));
	if (!path || db_open(&db, path, err, sizeof(err))) {
		fprintf(stderr, "vigil apikey: %s\n", err);
		free(path);
		return 1;
	}
	if (!strcmp(verb, "list"))
		return apikey_list(db, path);
	if (setkey) {
		rc = auth_key_set_refuse_legacy(db, setkey, legacy == 1);
		db_free(db);
		free(path);
		if (rc) {
			fprintf(stderr, "vigil apikey set: %s\n", rc == ERR_NOT_FOUND ? "no such key" : "cannot change it");
			return 1;
		}
		return 0;
	}
	rc = auth_key_new(db, admin, key, secret);
	if (!rc && legacy == 1)
		rc = auth_key_set_refuse_legacy(db, key, true);
	db_free(db);
	free(path);
	if (rc) {
		fprintf(stderr, "vigil apikey: cannot store the new key in %s/vigil.db\n", data);
		return 1;
	}
	printf("%s %s\n", key, secret);
	return 0;
}
