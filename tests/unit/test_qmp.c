/* SPDX-License-Identifier: MIT */
/* test_qmp.c - the QMP client against a scripted fake server on a
 * socketpair: greeting, replies, interleaved events, errors, bad input. */
#include <pthread.h>
#include <string.h>
#include <sys/socket.h>
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
