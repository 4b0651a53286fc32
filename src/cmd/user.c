/* SPDX-License-Identifier: MIT */
/* user.c - `vigil user add|list|del|passwd|role`: the people who sign in to
 * the web UI of 'vigil serve', kept in its database. A password is read
 * from a terminal without echo, else from stdin or --password-file (first
 * line), never from the command line (other users can read argv). Each
 * change is written to the audit log with the actor "cli". */
#include <errno.h>
#include <getopt.h>
#include <openssl/crypto.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>
#include "cmd/cmd.h"
#include "server/store/audit.h"
#include "server/store/auth.h"
#include "server/db/db.h"
#include "server/server.h"
#include "server/store/users.h"
#include "util/err.h"
#include "util/banned.h" /* last: after every system header */

static const char user_usage[] =
	"usage: vigil user add NAME [--admin | --operator] [--password-file FILE] [--data DIR]\n"
	"       vigil user passwd NAME [--password-file FILE] [--data DIR]\n"
	"       vigil user role NAME admin|operator|user [--data DIR]\n"
	"       vigil user del NAME [--data DIR]\n"
	"       vigil user list [--data DIR]\n"
	"\n"
	"Manages the users who sign in to the web UI of 'vigil serve' (DIR/vigil.db).\n"
	"A user reads everything, as everyone does, and creates their own API keys;\n"
	"an operator also schedules, restarts and cancels jobs and comments; an\n"
	"admin also changes machines, products, test suites, job groups and job\n"
	"templates and reads the audit log. The password (8 to 1024 bytes) is asked\n"
	"for on a terminal, else read from the first line of stdin or of FILE; it is\n"
	"never taken from the command line. 'passwd' signs the user out everywhere;\n"
	"'del' also revokes their API keys.\n"
	"\n"
	"  --admin               the new user is an admin\n"
	"  --operator            the new user is an operator (default: user)\n"
	"  --password-file FILE  read the password from FILE's first line\n"
	"  --data DIR            data directory (default ./vigil-data), as given to\n"
	"                        'vigil serve'\n"
	"  --db URL              the PostgreSQL database given to 'vigil serve --db'\n"
	"  -h, --help            this text\n";

/* One line of f into out without its line end; false when none. */
static bool read_line(FILE *f, char *out, size_t len)
{
	size_t n;

	if (!fgets(out, (int)len, f))
		return false;
	n = strcspn(out, "\r\n");
	if (out[n] == '\0' && n == len - 1)
		return false; /* longer than the buffer */
	out[n] = '\0';
	return true;
}

/* Ask on the terminal with echo off. */
static bool ask(const char *prompt, char *out, size_t len)
{
	struct termios old, quiet;
	bool ok, restore;

	fputs(prompt, stderr);
	fflush(stderr);
	restore = tcgetattr(STDIN_FILENO, &old) == 0;
	if (restore) {
		quiet = old;
		quiet.c_lflag &= ~(tcflag_t)ECHO;
		(void)tcsetattr(STDIN_FILENO, TCSAFLUSH, &quiet);
	}
	ok = read_line(stdin, out, len);
	if (restore)
		(void)tcsetattr(STDIN_FILENO, TCSAFLUSH, &old);
	fputc('\n', stderr);
	return ok;
}

/* The new password into out: from file, else the terminal (twice), else stdin. */
static int read_password(const char *file, char *out, size_t len)
{
	char again[USERS_PASSWORD_MAX + 2];
	FILE *f;
	bool ok;

	if (file) {
		if (!(f = fopen(file, "r"))) {
			fprintf(stderr, "vigil user: cannot read '%s': %s\n", file, strerror(errno));
			return -1;
		}
		ok = read_line(f, out, len);
		fclose(f);
	} else if (isatty(STDIN_FILENO)) {
		ok = ask("password: ", out, len) && ask("again: ", again, sizeof(again));
		if (ok && strcmp(out, again)) {
			OPENSSL_cleanse(again, sizeof(again));
			fprintf(stderr, "vigil user: the two passwords differ\n");
			return -1;
		}
		OPENSSL_cleanse(again, sizeof(again));
	} else {
		ok = read_line(stdin, out, len);
	}
	if (!ok) {
		fprintf(stderr, "vigil user: no password given (one line of at most %d bytes)\n", USERS_PASSWORD_MAX);
		return -1;
	}
	return 0;
}

static void audit(struct db *db, const char *event, const char *name, const char *role)
{
	json_t *d = role ? json_pack("{s:s,s:s}", "user", name, "role", role) : json_pack("{s:s}", "user", name);

	if (audit_record(db, "cli", event, d))
		fprintf(stderr, "vigil user: warning: cannot write the audit log\n");
	json_decref(d);
}

static int list(struct db *db)
{
	json_t *a, *u;
	size_t i;

	if (users_list(db, &a)) {
		fprintf(stderr, "vigil user: cannot read the users\n");
		return 1;
	}
	json_array_foreach(a, i, u)
		printf("%s\t%s\t%s\n", json_string_value(json_object_get(u, "name")),
		       json_string_value(json_object_get(u, "role")), json_string_value(json_object_get(u, "t_created")));
	json_decref(a);
	return 0;
}

int cmd_user(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "data", required_argument, NULL, 'd' },
		{ "db", required_argument, NULL, 'D' },
		{ "admin", no_argument, NULL, 'a' },
		{ "operator", no_argument, NULL, 'o' },
		{ "password-file", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *data = "vigil-data", *dburl = NULL, *pwfile = NULL, *verb, *name = NULL, *rolearg = NULL;
	char err[512], pw[USERS_PASSWORD_MAX + 2];
	enum auth_level role = AUTH_PUBLIC;
	struct db *db = NULL;
	char *path = NULL;
	int c, rc = 1, want;

	if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		fputs(user_usage, stdout);
		return 0;
	}
	if (argc < 2) {
		fputs(user_usage, stderr);
		return 2;
	}
	verb = argv[1];
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
			role = AUTH_ADMIN;
			break;
		case 'o':
			role = AUTH_OPERATOR;
			break;
		case 'p':
			pwfile = optarg;
			break;
		case 'h':
			fputs(user_usage, stdout);
			return 0;
		default:
			fputs(user_usage, stderr);
			return 2;
		}
	}
	want = !strcmp(verb, "list") ? 0 : !strcmp(verb, "role") ? 2 : 1;
	if (strcmp(verb, "add") && strcmp(verb, "list") && strcmp(verb, "del") && strcmp(verb, "passwd") &&
	    strcmp(verb, "role")) {
		fprintf(stderr, "vigil user: unknown action '%s'\n%s", verb, user_usage);
		return 2;
	}
	if (argc - optind != want) {
		fprintf(stderr, "vigil user %s: expected %s\n%s", verb,
			want == 0 ? "no argument" : want == 1 ? "NAME" : "NAME and ROLE", user_usage);
		return 2;
	}
	if (want >= 1)
		name = argv[optind];
	if (want == 2) {
		rolearg = argv[optind + 1];
		if (auth_level_parse(rolearg, &role)) {
			fprintf(stderr, "vigil user role: '%s' is no role: admin, operator or user\n", rolearg);
			return 2;
		}
	}
	if (!strcmp(verb, "add") && users_name_check(name, err, sizeof(err))) {
		fprintf(stderr, "vigil user add: '%s': %s\n", name, err);
		return 2;
	}
	if ((!strcmp(verb, "add") || !strcmp(verb, "passwd")) && read_password(pwfile, pw, sizeof(pw)))
		return 1;
	umask(077);
	path = server_db_path(data, dburl, err, sizeof(err));
	if (!path || db_open(&db, path, err, sizeof(err))) {
		fprintf(stderr, "vigil user: %s\n", err);
		goto out;
	}
	if (!strcmp(verb, "list")) {
		rc = list(db);
	} else if (!strcmp(verb, "add")) {
		if (users_add(db, name, role, pw, err, sizeof(err))) {
			fprintf(stderr, "vigil user add: %s\n", err);
			goto out;
		}
		audit(db, "user_add", name, auth_level_name(role));
		rc = 0;
	} else if (!strcmp(verb, "passwd")) {
		if (users_set_password(db, name, pw, err, sizeof(err))) {
			fprintf(stderr, "vigil user passwd: %s\n", err);
			goto out;
		}
		audit(db, "user_passwd", name, NULL);
		rc = 0;
	} else if (!strcmp(verb, "del") || !strcmp(verb, "role")) {
		int r = !strcmp(verb, "del") ? users_delete(db, name) : users_set_role(db, name, role);
		if (r) {
			fprintf(stderr, "vigil user %s: %s\n", verb,
				r == ERR_NOT_FOUND ? "no such user" : "cannot change the database");
			goto out;
		}
		audit(db, !strcmp(verb, "del") ? "user_delete" : "user_role", name, rolearg);
		rc = 0;
	}
out:
	OPENSSL_cleanse(pw, sizeof(pw));
	db_free(db);
	free(path);
	return rc;
}
