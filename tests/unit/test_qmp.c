/* SPDX-License-Identifier: MIT */
/* test_qmp.c - the QMP client against a scripted fake server on a
 * socketpair: greeting, replies, interleaved events, errors, bad input. */
#include <pthread.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include "unit.h"
#include "util/err.h"
#include "vm/qmp.h"

/* The fake server reads a line, then writes the scripted answer for it. */
struct fake {
	int fd;
	const char *const *script; /* answers, one per received line; NULL ends */
	char got[8][512];          /* the lines received */
	int ngot;
};

static int read_line(int fd, char *out, size_t len)
{
	size_t n = 0;

	while (n + 1 < len) {
		char c;
		ssize_t r = read(fd, &c, 1);

		if (r <= 0)
			return -1;
		if (c == '\n')
			break;
		out[n++] = c;
	}
	out[n] = '\0';
	return 0;
}

static void *fake_main(void *arg)
{
	struct fake *f = arg;
	const char *greeting = "{\"QMP\": {\"version\": {}, \"capabilities\": []}}\r\n";
	int i;

	if (write(f->fd, greeting, strlen(greeting)) < 0)
		return NULL;
	for (i = 0; f->script[i]; i++) {
		char line[512];

		if (read_line(f->fd, line, sizeof(line)) < 0)
			break;
		if (f->ngot < 8)
			snprintf(f->got[f->ngot++], sizeof(f->got[0]), "%s", line);
		if (!strcmp(f->script[i], "CLOSE"))
			break;
		if (write(f->fd, f->script[i], strlen(f->script[i])) < 0)
			break;
	}
	shutdown(f->fd, SHUT_RDWR);
	close(f->fd);
	return NULL;
}

static struct qmp *start(struct fake *f, pthread_t *th, const char *const *script)
{
	int sv[2];
	struct qmp *q = NULL;
	char err[256] = "";

	CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
	memset(f, 0, sizeof(*f));
	f->fd = sv[1];
	f->script = script;
	CHECK(pthread_create(th, NULL, fake_main, f) == 0);
	CHECK_INT(qmp_connect_fd(sv[0], &q, err, sizeof(err)), 0);
	CHECK(q);
	return q;
}

TEST(qmp_command_and_events)
{
	static const char *const script[] = {
		"{\"return\": {}, \"id\": 1}\n",
		"{\"timestamp\": {\"seconds\": 1, \"microseconds\": 2}, \"event\": \"RESUME\"}\n"
		"{\"return\": {\"status\": \"running\", \"running\": true}, \"id\": 2}\n",
		"{\"event\": \"STOP\"}\n{\"error\": {\"class\": \"GenericError\", \"desc\": \"no such device\"}, \"id\": 3}\n",
		NULL,
	};
	struct fake f;
	pthread_t th;
	struct qmp *q = start(&f, &th, script);
	char status[32], err[256] = "";
	json_t *ev = NULL, *args = json_pack("{s:s}", "device", "cd0");

	CHECK_INT(qmp_query_status(q, status, sizeof(status), err, sizeof(err)), 0);
	CHECK_STR(status, "running");
	CHECK_INT(qmp_command(q, "eject", args, NULL, err, sizeof(err)), ERR_PROTO);
	CHECK_STR(err, "GenericError: no such device");
	CHECK(qmp_alive(q));
	CHECK_INT(qmp_next_event(q, 0, &ev), 0);
	CHECK_STR(json_string_value(json_object_get(ev, "event")), "RESUME");
	json_decref(ev);
	CHECK_INT(qmp_next_event(q, 0, &ev), 0);
	CHECK_STR(json_string_value(json_object_get(ev, "event")), "STOP");
	json_decref(ev);
	pthread_join(th, NULL);
	CHECK(strstr(f.got[0], "\"qmp_capabilities\""));
	CHECK(strstr(f.got[1], "\"query-status\""));
	CHECK(strstr(f.got[2], "\"arguments\":{\"device\":\"cd0\"}"));
	/* The fake has closed: no more events. */
	CHECK_INT(qmp_next_event(q, 1000, &ev), ERR_CLOSED);
	CHECK(!qmp_alive(q));
	json_decref(args);
	qmp_close(q);
}

TEST(qmp_malformed_reply)
{
	static const char *const script[] = {
		"{\"return\": {}}\n",
		"{\"return\": {\"status\": \"run\n",
		NULL,
	};
	struct fake f;
	pthread_t th;
	struct qmp *q = start(&f, &th, script);
	char err[256] = "";

	CHECK_INT(qmp_command(q, "cont", NULL, NULL, err, sizeof(err)), ERR_PROTO);
	CHECK(strstr(err, "malformed"));
	CHECK_INT(qmp_command(q, "cont", NULL, NULL, err, sizeof(err)), ERR_CLOSED);
	pthread_join(th, NULL);
	qmp_close(q);
}

TEST(qmp_peer_closes)
{
	static const char *const script[] = {
		"{\"return\": {}}\n",
		"CLOSE",
		NULL,
	};
	struct fake f;
	pthread_t th;
	struct qmp *q = start(&f, &th, script);
	char err[256] = "";

	CHECK_INT(qmp_command(q, "quit", NULL, NULL, err, sizeof(err)), ERR_CLOSED);
	pthread_join(th, NULL);
	qmp_close(q);
}

TEST(qmp_timeout)
{
	static const char *const script[] = {
		"{\"return\": {}}\n",
		"", /* answer nothing... */
		"", /* ...and wait for a line that never comes */
		NULL,
	};
	struct fake f;
	pthread_t th;
	struct qmp *q = start(&f, &th, script);
	char err[256] = "";
	json_t *ev = NULL;

	qmp_set_timeout(q, 200);
	CHECK_INT(qmp_next_event(q, 50, &ev), ERR_TIMEOUT);
	CHECK_INT(qmp_command(q, "stop", NULL, NULL, err, sizeof(err)), ERR_TIMEOUT);
	CHECK(strstr(err, "'stop'"));
	qmp_close(q);
	pthread_join(th, NULL);
}

TEST(qmp_bad_greeting)
{
	int sv[2];
	struct qmp *q = NULL;
	char err[256] = "";
	const char *g = "{\"hello\": 1}\n";

	CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
	CHECK(write(sv[1], g, strlen(g)) > 0);
	CHECK_INT(qmp_connect_fd(sv[0], &q, err, sizeof(err)), ERR_PROTO);
	CHECK(!q);
	close(sv[1]);
}

TEST(qmp_connect_missing_socket)
{
	struct qmp *q = NULL;
	char err[256] = "", path[300];

	snprintf(path, sizeof(path), "%s/none.sock", unit_tmpdir());
	CHECK(qmp_connect(path, 100, &q, err, sizeof(err)) < 0);
	CHECK(strstr(err, "none.sock"));
}

/* --- the clock of a starved QEMU (docs/hardening.md, "A busy host") --- */

/* A clock that stands still, as for a QEMU that waits for a CPU all the
 * time; its third reading lets the fake server answer (gate), so the
 * handshake comes long after the 100 ms timeout in wall time but with
 * none of QEMU's time spent. alive counts its calls and says "alive"
 * while alive_left is positive. */
struct still {
	int reads, gate[2], alive_left;
};

static int64_t still_now(void *ctx)
{
	struct still *s = ctx;

	if (++s->reads == 3 && write(s->gate[1], "g", 1) < 0)
		return 0;
	return 0;
}

static int still_alive(void *ctx)
{
	struct still *s = ctx;

	return s->alive_left-- > 0;
}

struct gated {
	int listen_fd, gate_fd;
	struct fake f;
};

/* Accepts one connection; answers (the greeting, then the script) only
 * once the gate opens, or never when gate_fd is -1 (it closes at the end). */
static void *gated_main(void *arg)
{
	struct gated *g = arg;
	char c;
	int fd = accept(g->listen_fd, NULL, NULL);

	if (fd < 0)
		return NULL;
	if (g->gate_fd < 0 || read(g->gate_fd, &c, 1) != 1) {
		char buf[64];
		while (read(fd, buf, sizeof(buf)) > 0)
			;
		close(fd);
		return NULL;
	}
	g->f.fd = fd;
	return fake_main(&g->f);
}

static int listen_at(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	unlink(path);
	CHECK(fd >= 0);
	CHECK(bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0);
	CHECK(listen(fd, 1) == 0);
	return fd;
}

TEST(qmp_clock_counts_only_qemu_time)
{
	static const char *const script[] = { "{\"return\": {}}\r\n", NULL };
	struct still s = { .alive_left = 1 << 30 };
	struct qmp_clock clock = { still_now, still_alive, &s };
	struct gated g = { 0 };
	struct qmp *q = NULL;
	char err[256] = "", path[300];
	pthread_t th;

	snprintf(path, sizeof(path), "%s/qmp.sock", unit_tmpdir());
	CHECK(pipe(s.gate) == 0);
	g.listen_fd = listen_at(path);
	g.gate_fd = s.gate[0];
	g.f.script = script;
	CHECK(pthread_create(&th, NULL, gated_main, &g) == 0);
	/* 100 ms of QEMU's time: the clock never moves, so the wait lasts
	 * until the server answers (bounded by QMP_WALL_FACTOR in wall time) */
	CHECK_INT(qmp_connect_clock(path, 100, &clock, &q, err, sizeof(err)), 0);
	CHECK(q);
	CHECK(s.reads >= 3);
	qmp_close(q);
	pthread_join(th, NULL);
	close(g.listen_fd);
	close(s.gate[0]);
	close(s.gate[1]);
}

TEST(qmp_clock_ends_when_qemu_exits)
{
	struct still s = { .alive_left = 2 };
	struct qmp_clock clock = { still_now, still_alive, &s };
	struct gated g = { 0 };
	struct qmp *q = NULL;
	char err[256] = "", path[300];
	pthread_t th;

	snprintf(path, sizeof(path), "%s/qmp.sock", unit_tmpdir());
	CHECK(pipe(s.gate) == 0);
	g.listen_fd = listen_at(path);
	g.gate_fd = -1; /* the server never greets */
	CHECK(pthread_create(&th, NULL, gated_main, &g) == 0);
	/* a minute of QEMU's time, but QEMU "exits" after two looks */
	CHECK_INT(qmp_connect_clock(path, 60000, &clock, &q, err, sizeof(err)), ERR_CLOSED);
	CHECK(!q);
	CHECK(strstr(err, "exited"));
	pthread_join(th, NULL);
	close(g.listen_fd);
	close(s.gate[0]);
	close(s.gate[1]);
}
