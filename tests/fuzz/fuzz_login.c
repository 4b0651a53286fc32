/* SPDX-License-Identifier: MIT */
/* fuzz_login.c - what a sign-in request brings: the return_to target, the
 * Origin/Referer/Host check, user names, and a password checked against a
 * stored hash; then a session cookie and an X-CSRF-Token checked against
 * the one session of a throwaway database (made once in a temporary
 * directory, removed at exit):
 * "RETURN_TO\0ORIGIN\0REFERER\0HOST\0NAME\0PASSWORD\0COOKIE\0CSRF".
 * Only the right password, the session's own token and its own CSRF token
 * are accepted. */
#include <stdio.h>
#include <time.h>
#include "fuzz.h"
#include "server/store/auth.h"
#include "server/db/db.h"
#include "server/http/login.h"
#include "server/server.h"
#include "server/store/users.h"
#include "util/log.h"

/* "secret", 1,000 rounds: the fewest users_password_verify takes */
static const char *stored = "pbkdf2-sha256$1000$MDEyMzQ1Njc4OWFiY2RlZg==$tiKWHy4FAGCWE8gn6GtKhaxD2OeeAUUWXFT/p1aaNl8=";
static char dir[] = "/tmp/vigil-fuzz-login-XXXXXX";
static struct db *db;
static char token[USERS_TOKEN_HEX + 1];
static struct users_session sess;

static void cleanup(void)
{
	char cmd[64];

	db_free(db);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "fuzz_login: could not remove %s\n", dir);
}

static void setup(void)
{
	struct users_user u;
	char err[256] = "", *path;

	log_set_stderr_level(LOG_ERR);
	if (!mkdtemp(dir))
		abort();
	atexit(cleanup);
	path = server_db_path(dir, NULL, err, sizeof(err));
	/* The user's row as users_add makes it, with the cheap hash below
	 * (users_add's 310,000 rounds take seconds under ASan). */
	if (!path || db_open(&db, path, err, sizeof(err)) ||
	    db_exec(db, "INSERT INTO users (name, role, password, provider, t_created, t_updated) "
		    "VALUES ('alice', ?, ?, 'local', '2026-01-01 00:00:00', '2026-01-01 00:00:00')", "tt",
		    auth_level_name(AUTH_OPERATOR), stored) != 1) {
		fprintf(stderr, "fuzz_login: %s\n", db ? db_errmsg(db) : err);
		abort();
	}
	memset(&u, 0, sizeof(u));
	u.id = db_last_id(db);
	snprintf(u.name, sizeof(u.name), "alice");
	u.role = AUTH_OPERATOR;
	if (users_session_new(db, &u, (int64_t)time(NULL), token, &sess)) {
		fprintf(stderr, "fuzz_login: %s\n", err);
		abort();
	}
	free(path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *part[8], *s, msg[256];
	struct users_session got;

	if (!db)
		setup();
	s = fuzz_fields(data, size, part, 8);
	(void)login_return_to_ok(part[0]);
	(void)login_same_site(*part[1] ? part[1] : NULL, *part[2] ? part[2] : NULL, *part[3] ? part[3] : NULL);
	(void)users_name_check(part[4], msg, sizeof(msg));
	if (strlen(part[5]) < 64 && users_password_verify(part[5], stored) != !strcmp(part[5], "secret"))
		abort(); /* only the password matches */
	/* The cookie: the session's token (the seeds hold "@TOKEN@") or nothing. */
	if (!strcmp(part[6], "@TOKEN@"))
		part[6] = token;
	if ((users_session_check(db, part[6], (int64_t)time(NULL), false, &got) == 0) != !strcmp(part[6], token))
		abort();
	if (users_csrf_ok(&sess, *part[7] ? part[7] : NULL) && strcmp(part[7], sess.csrf))
		abort();
	free(s);
	return 0;
}
