/* SPDX-License-Identifier: MIT */
/* runner.c - runs every unit test (or those named on the command line),
 * each in its own process, and prints "N passed, N failed". With
 * VIGIL_TEST_DB=postgresql://... it runs the tests that use unit_db() on
 * that PostgreSQL database (tests/integration/test_pg_suites.sh). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <libpq-fe.h>
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#endif
#include "unit.h"
#include "registry.h"
#include "server/db/db.h"
#include "util/path.h"

static char tmpdir[256];

const char *unit_tmpdir(void)
{
	return tmpdir;
}

/* Empties the PostgreSQL database at url once per test process (a later
 * unit_db() in the same test, or in its children, shares the data). */
static void pg_reset(const char *url)
{
	static int done;
	PGconn *c;
	PGresult *r;

	if (done)
		return;
	c = PQconnectdb(url);
	if (PQstatus(c) != CONNECTION_OK)
		FAIL("VIGIL_TEST_DB %s: %s", url, PQerrorMessage(c));
	r = PQexec(c, "SET client_min_messages = warning; DROP SCHEMA IF EXISTS public CASCADE; CREATE SCHEMA public");
	if (PQresultStatus(r) != PGRES_COMMAND_OK)
		FAIL("VIGIL_TEST_DB %s: cannot empty it: %s", url, PQerrorMessage(c));
	PQclear(r);
	PQfinish(c);
	done = 1;
}

const char *unit_db_url(void)
{
	const char *url = getenv("VIGIL_TEST_DB");

	if (!url || !*url)
		return NULL;
	if (!db_is_pg_target(url))
		FAIL("VIGIL_TEST_DB=%s: not a postgresql:// URL", url);
	pg_reset(url);
	return url;
}

struct db *unit_db(void)
{
	struct db *db = NULL;
	char err[256], *path;
	const char *url = getenv("VIGIL_TEST_DB");

	if (url && *url) {
		if (!db_is_pg_target(url))
			FAIL("VIGIL_TEST_DB=%s: not a postgresql:// URL", url);
		pg_reset(url);
		if (db_open(&db, url, err, sizeof(err)))
			FAIL("db_open %s: %s", url, err);
		return db;
	}
	path = path_join(unit_tmpdir(), "vigil.db");
	if (db_open(&db, path, err, sizeof(err)))
		FAIL("db_open %s: %s", path, err);
	free(path);
	return db;
}

static int run_one(const struct unit_test *t)
{
	pid_t pid;
	int status;
	char cmd[300];

	snprintf(tmpdir, sizeof(tmpdir), "/tmp/vigil-unit-%s-XXXXXX", t->name);
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		/* Guards against a hung test, not a speed check: CPU time (which
		 * other load does not stretch) and a wall-clock limit generous
		 * enough for a machine busy with other work. */
		struct rlimit cpu = { 300, 300 };
		setrlimit(RLIMIT_CPU, &cpu);
		alarm(1200);
		t->fn();
		fflush(NULL);
#if defined(__SANITIZE_ADDRESS__)
		/* _exit skips LeakSanitizer's check at exit: run it here, so
		 * memory a test's code path loses fails the test. */
		if (__lsan_do_recoverable_leak_check()) {
			fprintf(stderr, "memory leaked (LeakSanitizer's report above)\n");
			_exit(1);
		}
#endif
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &status, 0) < 0)
		return 1;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", tmpdir);
	if (WIFSIGNALED(status))
		fprintf(stderr, "  killed by signal %d\n", WTERMSIG(status));
	return !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

int main(int argc, char **argv)
{
	size_t n = sizeof(unit_tests) / sizeof(unit_tests[0]), i;
	int passed = 0, failed = 0, a;
	const char *pg = getenv("VIGIL_TEST_DB");

	if (pg && *pg)
		printf("# on PostgreSQL (VIGIL_TEST_DB): the tests that call unit_db()\n");

	for (i = 0; i < n; i++) {
		const struct unit_test *t = &unit_tests[i];
		if (pg && *pg && !t->uses_db)
			continue;
		if (argc > 1) {
			for (a = 1; a < argc; a++)
				if (strstr(t->name, argv[a]))
					break;
			if (a == argc)
				continue;
		}
		if (run_one(t)) {
			printf("FAIL %s\n", t->name);
			failed++;
		} else {
			printf("ok   %s\n", t->name);
			passed++;
		}
		fflush(stdout);
	}
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
