/* SPDX-License-Identifier: MIT */
/* test_worker_uploads.c - defect 8 of issue 17 against a real `vigil
 * serve` (server_start in this process): a job whose results the server
 * refuses (here: the job was ended on the server while the worker still
 * uploaded) or cannot take (the server is gone) is never reported passed;
 * uploads are tried a bounded number of times, then the job ends
 * incomplete with the reason. The server runs in a child process (killed
 * for "gone"). The worker side is worker.c's own upload
 * path (worker__upload_all, worker__post, worker__final_result), shared
 * with the worker under openQA. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include "unit.h"
#include "net/http.h"
#include "server/store/auth.h"
#include "server/db/db.h"
#include "server/server.h"
#include "util/file.h"
#include "util/path.h"
#include "util/time.h"
#include "worker/worker_int.h"

struct rig {
	pid_t srv;
	struct worker w;
	struct worker_config cfg;
	volatile int stop;
	struct job_run r;
	char tr[600];
	long long job;
};

static void put(const char *dir, const char *name, const char *text)
{
	char *p = path_join(dir, name);

	CHECK(p);
	CHECK_INT(file_write_all(p, text, strlen(text)), 0);
	free(p);
}

/* A server with an admin key (on db_url, a PostgreSQL URL; NULL: the SQLite
 * file of its data directory), a worker registered with it (signing with
 * scheme 2), and a job that worker took; the job's output directory. */
static void rig_up(struct rig *g, const char *db_url)
{
	struct server_config sc;
	struct db *db = NULL;
	char err[256], key[AUTH_KEY_LEN + 1], secret[AUTH_KEY_LEN + 1], base[64], *data, *dbp, target[96];
	json_t *j;
	long st = 0;
	unsigned port = 0;
	int fds[2];

	memset(g, 0, sizeof(*g));
	data = path_join(unit_tmpdir(), "data");
	CHECK(data);
	dbp = server_db_path(data, db_url, err, sizeof(err));
	CHECK(dbp);
	CHECK_INT(db_open(&db, dbp, err, sizeof(err)), 0);
	CHECK_INT(auth_key_new(db, true, key, secret), 0);
	db_free(db);
	free(dbp);
	memset(&sc, 0, sizeof(sc));
	sc.listen = "127.0.0.1:0";
	sc.data_dir = data;
	sc.db = db_url;
	sc.threads = 2;
	CHECK_INT(pipe(fds), 0);
	g->srv = fork();
	CHECK(g->srv >= 0);
	if (g->srv == 0) {
		struct server *s = NULL;
		/* Dies with the test, even one that fails. */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() == 1)
			_exit(1);
		port = server_start(&s, &sc, err, sizeof(err)) ? 0 : server_port(s);
		if (write(fds[1], &port, sizeof(port)) != (ssize_t)sizeof(port) || !port)
			_exit(1);
		for (;;)
			pause();
	}
	close(fds[1]);
	CHECK_INT(read(fds[0], &port, sizeof(port)), sizeof(port));
	close(fds[0]);
	CHECK(port > 0);
	free(data);
	snprintf(base, sizeof(base), "http://127.0.0.1:%u", port);

	g->cfg.pool = unit_tmpdir();
	g->cfg.retry_ms = 1;
	g->cfg.hostname = "uploads";
	g->w.cfg = &g->cfg;
	g->w.stop = &g->stop;
	snprintf(g->w.hostname, sizeof(g->w.hostname), "uploads");
	buf_init(&g->w.resp, LIMIT_HTTP_RESPONSE);
	CHECK_INT(http_client_init(&g->w.http, base, key, secret), 0);
	g->w.http.sign = HTTP_SIGN_V2;
	CHECK_INT(worker__register(&g->w), 0);
	CHECK(g->w.id > 0);
	CHECK_INT(http_request(&g->w.http, "POST", "/api/v1/jobs", NULL, "TEST=up&DISTRI=x&ARCH=x86_64&WORKER_CLASS=qemu_x86_64",
			       strlen("TEST=up&DISTRI=x&ARCH=x86_64&WORKER_CLASS=qemu_x86_64"), 30, &st, &g->w.resp, err,
			       sizeof(err)), 0);
	CHECK_INT(st, 200);
	snprintf(target, sizeof(target), "/api/v1/workers/%lld/work?timeout=0", g->w.id);
	CHECK_INT(http_request(&g->w.http, "GET", target, NULL, NULL, 0, 30, &st, &g->w.resp, err, sizeof(err)), 0);
	CHECK_INT(st, 200);
	j = json_loads(g->w.resp.data, 0, NULL);
	CHECK(json_is_integer(json_object_get(json_object_get(j, "job"), "id")));
	g->job = json_integer_value(json_object_get(json_object_get(j, "job"), "id"));
	json_decref(j);

	g->r.id = g->job;
	g->r.dir = path_join(unit_tmpdir(), "job");
	g->r.out = path_join(g->r.dir, "out");
	CHECK(g->r.dir && g->r.out);
	snprintf(g->tr, sizeof(g->tr), "%s/testresults", g->r.out);
	CHECK_INT(file_mkdir_p(g->tr, 0700), 0);
	put(g->tr, "results.json", "{\"result\": \"passed\"}");
	put(g->r.out, "vigil-log.txt", "a log\n");
	put(g->r.dir, "runner-output.txt", "runner\n");
}

static void server_kill(struct rig *g)
{
	if (g->srv > 0) {
		kill(g->srv, SIGKILL);
		waitpid(g->srv, NULL, 0);
	}
	g->srv = 0;
}

static void rig_down(struct rig *g)
{
	server_kill(g);
	http_client_release(&g->w.http);
	buf_release(&g->w.resp);
	worker__files_release(&g->r);
	free(g->r.dir);
	free(g->r.out);
}

/* The runner said passed; what the job ends with. */
static void final(struct rig *g, char *result, size_t rlen, char *reason, size_t whylen)
{
	snprintf(result, rlen, "passed");
	reason[0] = '\0';
	worker__final_result(&g->r, result, rlen, reason, whylen);
}

TEST(worker_uploads_arrive_job_passes)
{
	struct rig g;
	char result[32], reason[300], *stored;

	rig_up(&g, unit_db_url());
	CHECK_INT(worker__upload_all(&g.w, &g.r, g.tr, time_mono() + 120), 0);
	CHECK(!g.r.upload_failed);
	stored = path_join(unit_tmpdir(), "data/testresults");
	CHECK(stored);
	{
		char p[800];
		snprintf(p, sizeof(p), "%s/%lld/vigil-log.txt", stored, g.job);
		CHECK(file_exists(p));
	}
	free(stored);
	final(&g, result, sizeof(result), reason, sizeof(reason));
	CHECK_STR(result, "passed");
	rig_down(&g);
}

TEST(worker_uploads_refused_job_incomplete)
{
	struct rig g;
	char result[32], reason[300], err[256], target[128];
	long st = 0;

	rig_up(&g, unit_db_url());
	/* The server ends the job while the worker still has results: every
	 * upload is refused from then on (404: not running on a worker). */
	snprintf(target, sizeof(target), "/api/v1/jobs/%lld/set_done?result=failed", g.job);
	CHECK_INT(http_request(&g.w.http, "POST", target, NULL, NULL, 0, 30, &st, &g.w.resp, err, sizeof(err)), 0);
	CHECK_INT(st, 200);
	CHECK_INT(worker__upload_all(&g.w, &g.r, g.tr, time_mono() + 120), -1);
	CHECK(g.r.upload_failed);
	CHECK(strstr(g.r.upload_why, "refused (HTTP 404)"));
	final(&g, result, sizeof(result), reason, sizeof(reason));
	CHECK_STR(result, "incomplete");
	CHECK(!strncmp(reason, "api failure: ", 13));
	CHECK(strstr(reason, "refused (HTTP 404)"));
	rig_down(&g);
}

TEST(worker_uploads_server_gone_bounded_then_incomplete)
{
	struct rig g;
	char result[32], reason[300];

	rig_up(&g, unit_db_url());
	server_kill(&g);
	/* Far deadline: only the bounded passes end the tries. */
	CHECK_INT(worker__upload_all(&g.w, &g.r, g.tr, time_mono() + 3600), -1);
	CHECK(g.r.upload_failed);
	CHECK(strstr(g.r.upload_why, "did not arrive"));
	final(&g, result, sizeof(result), reason, sizeof(reason));
	CHECK_STR(result, "incomplete");
	CHECK(strstr(reason, "did not arrive"));
	rig_down(&g);
}
