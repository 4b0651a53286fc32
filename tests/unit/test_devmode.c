/* SPDX-License-Identifier: MIT */
/* test_devmode.c - developer mode without a VM: the runner's channel
 * parses os-autoinst's commands, refuses bad ones and keeps its state
 * file; the server's queues deliver each job's commands once, in order,
 * up to their limit; the worker reaches the runner's socket. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "unit.h"
#include "runner/srv/devmode.h"
#include "server/store/developer.h"
#include "util/err.h"
#include "worker/dev_relay.h"

static json_t *cmd(struct devmode *d, const char *line)
{
	json_t *r = devmode_command(d, line);
	CHECK(r != NULL);
	return r;
}

TEST(devmode_channel_commands)
{
	char dir[] = "/tmp/vigil-devmode-XXXXXX", state[300];
	struct devmode_opts o = { .pause_at = "boot", .pause_on_failure = 1 };
	struct devmode *d = NULL;
	struct dev_relay rel = { 0 };
	json_t *r, *st;
	char err[256];

	CHECK(mkdtemp(dir) != NULL);
	CHECK_INT(devmode_start(dir, &o, &d), 0);
	r = cmd(d, "{\"cmd\": \"status\"}");
	CHECK_INT(json_integer_value(json_object_get(r, "ret")), 1);
	CHECK_STR(json_string_value(json_object_get(r, "pause_test_name")), "boot");
	CHECK(json_is_false(json_object_get(r, "pause_on_screen_mismatch")));
	CHECK_INT(json_integer_value(json_object_get(r, "test_execution_paused")), 0);
	CHECK(json_is_true(json_object_get(r, "pause_on_failure"))); /* PAUSE_ON_FAILURE */
	json_decref(r);
	r = cmd(d, "{\"cmd\": \"set_pause_on_failure\", \"flag\": false}");
	CHECK(json_is_false(json_object_get(r, "pause_on_failure")));
	json_decref(r);
	r = cmd(d, "{\"cmd\": \"set_pause_on_screen_mismatch\", \"pause_on\": \"check_screen\"}");
	CHECK_STR(json_string_value(json_object_get(r, "pause_on_screen_mismatch")), "check_screen");
	json_decref(r);
	r = cmd(d, "{\"cmd\": \"set_pause_on_next_command\", \"flag\": 1}");
	CHECK(json_is_true(json_object_get(r, "pause_on_next_command")));
	json_decref(r);
	r = cmd(d, "{\"cmd\": \"set_pause_at_test\", \"name\": null}");
	CHECK(json_is_null(json_object_get(r, "pause_test_name")));
	json_decref(r);
	/* Refused: not JSON, unknown, bad arguments. */
	static const char *const bad[] = { "nonsense", "{\"cmd\": \"reboot\"}",
					   "{\"cmd\": \"set_pause_on_screen_mismatch\", \"pause_on\": \"x\"}",
					   "{\"cmd\": \"resume_test_execution\", \"action\": \"jump\"}",
					   "{\"cmd\": \"resume_test_execution\", \"distri_dir\": \"relative\"}",
					   "{\"cmd\": \"set_pause_at_test\", \"name\": 3}" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		r = cmd(d, bad[i]);
		CHECK_INT(json_integer_value(json_object_get(r, "ret")), 0);
		CHECK(json_string_value(json_object_get(r, "error")) != NULL);
		json_decref(r);
	}
	/* Resume while not paused: taken, nothing happens. */
	r = cmd(d, "{\"cmd\": \"resume_test_execution\", \"action\": \"retry\"}");
	CHECK_INT(json_integer_value(json_object_get(r, "ret")), 1);
	CHECK(json_is_null(json_object_get(r, "paused")));
	json_decref(r);
	/* The state file, as the worker reads it, and the socket. */
	st = dev_relay_state(&rel, dir);
	CHECK(st != NULL);
	CHECK(json_is_true(json_object_get(st, "pause_on_next_command")));
	json_decref(st);
	CHECK(dev_relay_state(&rel, dir) == NULL); /* unchanged */
	r = json_pack("{s:s}", "cmd", "status");
	st = NULL;
	CHECK_INT(dev_relay_send(dir, r, &st, err, sizeof(err)), 0);
	CHECK_STR(json_string_value(json_object_get(st, "pause_on_screen_mismatch")), "check_screen");
	json_decref(st);
	devmode_stop(d);
	snprintf(state, sizeof(state), "%s/.devmode.json", dir);
	CHECK(access(state, F_OK) != 0);
	CHECK_INT(dev_relay_send(dir, r, &st, err, sizeof(err)), ERR_NOT_FOUND);
	json_decref(r);
	rmdir(dir);
	o.pause_on_mismatch = "sometimes";
	CHECK_INT(devmode_start("/tmp", &o, &d), ERR_INVALID);
}

TEST(developer_hub_queues)
{
	struct developer_hub *h = NULL;
	json_t *c = json_pack("{s:s}", "cmd", "resume_test_execution"), *q, *st;
	int i;

	CHECK_INT(developer_hub_new(&h), 0);
	CHECK(developer_take(h, 7) == NULL);
	CHECK(developer_state(h, 7) == NULL);
	for (i = 0; i < DEVELOPER_QUEUE_MAX; i++)
		CHECK_INT(developer_queue(h, 7, c), 0);
	CHECK_INT(developer_queue(h, 7, c), ERR_TOO_BIG);
	CHECK_INT(developer_pending(h, 7), DEVELOPER_QUEUE_MAX);
	CHECK_INT(developer_pending(h, 8), 0);
	q = developer_take(h, 7);
	CHECK_INT(json_array_size(q), DEVELOPER_QUEUE_MAX);
	json_decref(q);
	CHECK(developer_take(h, 7) == NULL); /* delivered once */
	st = json_pack("{s:i}", "version", 3);
	developer_set_state(h, 7, st);
	json_decref(st);
	st = developer_state(h, 7);
	CHECK_INT(json_integer_value(json_object_get(st, "version")), 3);
	json_decref(st);
	/* More jobs than slots: the least recently touched is forgotten. */
	for (i = 100; i < 100 + DEVELOPER_JOBS_MAX; i++)
		CHECK_INT(developer_queue(h, i, c), 0);
	CHECK(developer_state(h, 7) == NULL);
	CHECK_INT(developer_pending(h, 100 + DEVELOPER_JOBS_MAX - 1), 1);
	json_decref(c);
	developer_hub_free(h);
}
