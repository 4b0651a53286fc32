/* SPDX-License-Identifier: MIT */
/* db.c - `vigil db copy SQLITE_FILE POSTGRESQL_URL` moves a server's data
 * from SQLite to PostgreSQL; `vigil db schema DATABASE` prints a database's
 * schema as dialect-neutral lines (two agree when their lines do). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "cmd/cmd.h"
#include "server/db/db.h"
#include "server/db/db_tools.h"
#include "util/banned.h" /* last: after every system header */

static const char db_usage[] =
	"usage: vigil db copy SQLITE_FILE POSTGRESQL_URL\n"
	"       vigil db schema SQLITE_FILE|POSTGRESQL_URL\n"
	"\n"
	"copy: moves a server's data from its SQLite database (DATA/vigil.db) into\n"
	"a new, empty PostgreSQL database: every table and row, ids kept, in one\n"
	"transaction; the PostgreSQL schema is created first. Stop the server\n"
	"before, then start it with the same --data DIR and --db POSTGRESQL_URL.\n"
	"schema: the tables, columns (types as integer/text), keys and indexes of\n"
	"a database (migrated to the current version first), one per line.\n"
	"\n"
	"A PostgreSQL URL: postgresql://USER@HOST[:PORT]/NAME, or\n"
	"postgresql:///NAME?host=/SOCKET/DIR for a local socket.\n";

static struct db *open_db(const char *target, bool must_exist)
{
	char err[512];
	struct db *db = NULL;
	struct stat st;

	if (must_exist && stat(target, &st)) {
		fprintf(stderr, "vigil db: '%s': no such SQLite database\n", target);
		return NULL;
	}
	if (db_open(&db, target, err, sizeof(err))) {
		fprintf(stderr, "vigil db: %s\n", err);
		return NULL;
	}
	return db;
}

int cmd_db(int argc, char **argv)
{
	struct db *from = NULL, *to = NULL;
	char err[512], *text = NULL;
	int rc = 1;

	if (argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		fputs(db_usage, stdout);
		return 0;
	}
	if (argc == 4 && !strcmp(argv[1], "copy")) {
		if (db_is_pg_target(argv[2]) || !db_is_pg_target(argv[3])) {
			fprintf(stderr, "vigil db copy: expected a SQLite file, then a postgresql:// URL\n");
			return 2;
		}
		umask(077);
		if (!(from = open_db(argv[2], true)) || !(to = open_db(argv[3], false)))
			goto out;
		if (db_copy(from, to, stdout, err, sizeof(err))) {
			fprintf(stderr, "vigil db copy: %s\n", err);
			goto out;
		}
		printf("copied %s to %s\n", argv[2], argv[3]);
		rc = 0;
	} else if (argc == 3 && !strcmp(argv[1], "schema")) {
		if (!(from = open_db(argv[2], !db_is_pg_target(argv[2]))))
			goto out;
		if (db_schema_text(from, &text)) {
			fprintf(stderr, "vigil db schema: cannot read the schema of %s: %s\n", argv[2], db_errmsg(from));
			goto out;
		}
		fputs(text, stdout);
		rc = 0;
	} else {
		fputs(db_usage, stderr);
		return 2;
	}
out:
	free(text);
	db_free(from);
	db_free(to);
	return rc;
}
