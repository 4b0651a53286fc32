/* SPDX-License-Identifier: MIT */
/* api_devmode.c - developer mode of a running job (docs/devmode.md):
 * people send os-autoinst's developer-mode commands, queued per job
 * (developer.c) until the job's worker takes them with the answer to its
 * next live post (api_live.c, within a second), which also brings the
 * runner's developer state back, streamed to the live view as the
 * "developer" field of its status events.
 *
 *   method path                          level     what
 *   POST   /api/v1/jobs/<id>/developer   operator  (scheduled or running; 409 else)
 *                                                   {"command", "args": {...}} as JSON, or the form
 *                                                  command=...&name=&pause_on=&flag=&action= → 200 {"job_id",
 *                                                  "queued": the runner's command, "pending", "developer"}
 *   GET    /api/v1/jobs/<id>/developer   public    {"job_id", "developer": the state or null, "pending"}
 */
#define LOG_MODULE "api"
#include <stdbool.h>
#include <string.h>
#include "server/http/api.h"
#include "server/store/developer.h"
#include "server/store/jobs.h"
#include "util/err.h"
#include "util/banned.h" /* last: after every system header */

#define DEVMODE_NAME_MAX 127

/* An argument from the JSON body's "args", else the form's field of that
 * name (as a string); borrowed, NULL when absent. */
static const json_t *arg(struct api_req *req, const char *key, json_t **tmp)
{
	const json_t *args = json_object_get(req->json, "args"), *v = json_object_get(args, key);
	const char *s;

	if (v || req->json)
		return v;
	if (!(s = params_get(&req->params, key)))
		return NULL;
	json_decref(*tmp);
	*tmp = json_string(s);
	return *tmp;
}

/* A boolean argument: true, 1, "1", "true", "on". */
static bool truthy(const json_t *v)
{
	const char *s = json_string_value(v);

	if (s)
		return !strcmp(s, "1") || !strcmp(s, "true") || !strcmp(s, "on");
	return json_is_true(v) || (json_is_integer(v) && json_integer_value(v) != 0);
}

/* The runner's command for the request (new reference), or NULL with
 * the error answered. */
static json_t *build(struct api_req *req, struct api_resp *out)
{
	const json_t *c = json_object_get(req->json, "command");
	const char *name = req->json ? json_string_value(c ? c : json_object_get(req->json, "cmd"))
				     : params_get(&req->params, "command");
	json_t *tmp = NULL, *cmd = NULL;
	const json_t *v;
	const char *s;

	if (!name) {
		api_error(out, 400, "missing \"command\": set_pause_at_test, set_pause_on_screen_mismatch, "
				    "set_pause_on_next_command, set_pause_on_failure or resume_test_execution");
		return NULL;
	}
	if (!strcmp(name, "set_pause_at_test")) {
		v = arg(req, "name", &tmp);
		s = json_string_value(v);
		if (v && !json_is_null(v) && (!s || strlen(s) > DEVMODE_NAME_MAX))
			api_error(out, 400, "set_pause_at_test: \"name\" must be a module's name or null");
		else
			cmd = json_pack("{s:s,s:s?}", "cmd", name, "name", s && *s ? s : NULL);
	} else if (!strcmp(name, "set_pause_on_screen_mismatch")) {
		v = arg(req, "pause_on", &tmp);
		s = json_string_value(v);
		if (s && (!*s || !strcmp(s, "false") || !strcmp(s, "0")))
			s = NULL;
		if (s && strcmp(s, "assert_screen") && strcmp(s, "check_screen"))
			api_error(out, 400, "set_pause_on_screen_mismatch: \"pause_on\" must be \"assert_screen\", "
					    "\"check_screen\" or false");
		else
			cmd = json_pack("{s:s,s:o}", "cmd", name, "pause_on", s ? json_string(s) : json_false());
	} else if (!strcmp(name, "set_pause_on_next_command") || !strcmp(name, "set_pause_on_failure")) {
		cmd = json_pack("{s:s,s:b}", "cmd", name, "flag", truthy(arg(req, "flag", &tmp)));
	} else if (!strcmp(name, "resume_test_execution")) {
		s = json_string_value(arg(req, "action", &tmp));
		if (s && *s && strcmp(s, "continue") && strcmp(s, "retry") && strcmp(s, "skip"))
			api_error(out, 400, "resume_test_execution: \"action\" must be \"continue\", \"retry\" or \"skip\"");
		else
			cmd = json_pack("{s:s,s:s?}", "cmd", name, "action", s && *s ? s : NULL);
	} else {
		api_error(out, 400, "unknown developer command '%.64s'", name);
	}
	json_decref(tmp);
	if (!cmd && !out->json && !out->text)
		api_error(out, 500, "out of memory");
	return cmd;
}

/* The job's state into state; 0, or -1 with the error answered. */
static int job_state(struct api_req *req, struct api_resp *out, char *state, size_t len)
{
	int rc = jobs_state_of(req->db, req->id, state, len);

	if (rc == ERR_NOT_FOUND) {
		api_error(out, 404, "Job %lld does not exist", (long long)req->id);
		return -1;
	}
	if (rc || !req->developer) {
		api_error(out, 500, "cannot read job %lld", (long long)req->id);
		return -1;
	}
	return 0;
}

static void developer_post(struct api_req *req, struct api_resp *out)
{
	char state[32];
	json_t *cmd = NULL;
	int rc;

	if (job_state(req, out, state, sizeof(state)))
		return;
	/* A scheduled job's commands wait for it: pause at its first module. */
	if (!jobs_state_executing(state) && strcmp(state, "scheduled")) {
		api_error(out, 409, "job %lld is %s: developer mode needs a scheduled or running job", (long long)req->id,
			  state);
		return;
	}
	if (!(cmd = build(req, out)))
		return;
	rc = developer_queue(req->developer, req->id, cmd);
	if (rc == ERR_TOO_BIG)
		api_error(out, 429, "%d developer commands already wait for job %lld's worker: try again in a second",
			  DEVELOPER_QUEUE_MAX, (long long)req->id);
	else if (rc)
		api_error(out, 500, "out of memory");
	else
		api_json(out, json_pack("{s:I,s:O,s:I,s:o?}", "job_id", (json_int_t)req->id, "queued", cmd, "pending",
					(json_int_t)developer_pending(req->developer, req->id), "developer",
					developer_state(req->developer, req->id)));
	json_decref(cmd);
}

static void developer_get(struct api_req *req, struct api_resp *out)
{
	char state[32];
	json_t *st;

	if (job_state(req, out, state, sizeof(state)))
		return;
	st = jobs_state_executing(state) ? developer_state(req->developer, req->id) : NULL;
	api_json(out, json_pack("{s:I,s:s,s:o?,s:I}", "job_id", (json_int_t)req->id, "state", state, "developer",
				st ? st : json_null(), "pending",
				(json_int_t)developer_pending(req->developer, req->id)));
}

const struct api_route api_devmode_routes[] = {
	{ "POST", "/api/v1/jobs/#/developer", AUTH_OPERATOR, developer_post, NULL },
	{ "GET", "/api/v1/jobs/#/developer", AUTH_PUBLIC, developer_get, NULL },
	{ NULL, NULL, AUTH_PUBLIC, NULL, NULL },
};
