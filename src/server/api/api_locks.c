/* SPDX-License-Identifier: MIT */
/* api_locks.c - openQA's lock and multi-machine routes for a running
 * job's test process (os-autoinst's lockapi and mmapi): signed with
 * X-API-JobToken, the
 * token the job got with its work. POST /api/v1/mutex {name},
 * POST /api/v1/mutex/NAME {action=lock|unlock, where}, POST
 * /api/v1/barrier {name, tasks}, POST /api/v1/barrier/NAME {where,
 * check_dead_job}, DELETE /api/v1/barrier/NAME {where}, answered as
 * openQA: "ack" 200, "nack" 409 (not now), "nack" 410 (never); GET
 * /api/v1/mm/children/STATE, /api/v1/mm/children, /api/v1/mm/parents,
 * GET /api/v1/whoami; vigil's relay network (NICNET=relay): POST
 * /api/v1/mm/relay {addr=HOST:PORT}, where the job's relay hub listens,
 * and GET /api/v1/mm/relay, {"peers": {"id": "HOST:PORT"}} for the other
 * jobs of its cluster; both answers carry "secret", the cluster's, that
 * its hubs prove to each other (given to the cluster's jobs only). */
#define LOG_MODULE "api"
#include <stdlib.h>
#include <string.h>
#include "server/http/api.h"
#include "server/db/db.h"
#include "server/store/locks.h"
#include "util/err.h"
#include "util/log.h"
#include "util/banned.h" /* last: after every system header */

/* The running job whose token signed req: 0 and *job_id, else answered. */
static int job_of(struct api_req *req, struct api_resp *out, int64_t *job_id)
{
	const char *token = api_header(req, "X-API-JobToken");
	int rc;

	if (!token) {
		api_error(out, 403, "no X-API-JobToken: lock calls come from a running job's test process");
		return -1;
	}
	rc = locks_token_job(req->db, token, job_id);
	if (rc == ERR_NOT_FOUND) {
		api_error(out, 403, "invalid job token (unknown, or its job has ended)");
		return -1;
	}
	if (rc) {
		api_error(out, 500, "job token: %s", db_errmsg(req->db));
		return -1;
	}
	return 0;
}

/* A whole decimal number or absent (openQA's ^[0-9]+$). */
static bool digits_or_absent(const char *s)
{
	if (!s)
		return true;
	if (!*s)
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

static void answer(struct api_req *req, struct api_resp *out, int res, const char *what)
{
	if (res < -1) {
		api_error(out, 500, "%s: %s", what, db_errmsg(req->db));
		return;
	}
	out->status = res > 0 ? 200 : res < 0 ? 410 : 409;
	out->text = strdup(res > 0 ? "ack" : "nack");
	if (!out->text)
		api_error(out, 500, "out of memory");
}

/* The creating routes' job and their "name" parameter: the name, else NULL
 * with the answer given. */
static const char *create_args(struct api_req *req, struct api_resp *out, int64_t *job)
{
	const char *name = params_get(&req->params, "name");

	if (job_of(req, out, job))
		return NULL;
	if (!locks_name_valid(name)) {
		api_error(out, 400, "name '%s': expected letters, digits and '_'", name ? name : "");
		return NULL;
	}
	return name;
}

static void mutex_create(struct api_req *req, struct api_resp *out)
{
	int64_t job;
	const char *name = create_args(req, out, &job);

	if (name)
		answer(req, out, locks_mutex_create(req->db, name, job), "mutex create");
}

static void mutex_action(struct api_req *req, struct api_resp *out)
{
	const char *action = params_get(&req->params, "action"), *where = params_get(&req->params, "where");
	int64_t job;

	if (job_of(req, out, &job))
		return;
	if (!locks_name_valid(req->name)) {
		api_error(out, 400, "mutex name '%s': expected letters, digits and '_'", req->name ? req->name : "");
		return;
	}
	if (!action || (strcmp(action, "lock") && strcmp(action, "unlock"))) {
		api_error(out, 400, "action '%s': expected lock or unlock", action ? action : "");
		return;
	}
	if (!digits_or_absent(where)) {
		api_error(out, 400, "where '%s': expected a job id", where);
		return;
	}
	if (!strcmp(action, "lock"))
		answer(req, out, locks_mutex_lock(req->db, req->name, job, where ? where : ""), "mutex lock");
	else
		answer(req, out, locks_mutex_unlock(req->db, req->name, job, where ? where : ""), "mutex unlock");
}

static void barrier_create(struct api_req *req, struct api_resp *out)
{
	const char *tasks = params_get(&req->params, "tasks"), *name;
	int64_t job;

	if (!(name = create_args(req, out, &job)))
		return;
	if (!tasks || !digits_or_absent(tasks) || strlen(tasks) > 9) {
		api_error(out, 400, "tasks '%s': expected the number of jobs that wait", tasks ? tasks : "");
		return;
	}
	answer(req, out, locks_barrier_create(req->db, name, job, strtoll(tasks, NULL, 10)), "barrier create");
}

static void barrier_wait(struct api_req *req, struct api_resp *out)
{
	const char *where = params_get(&req->params, "where"), *dead = params_get(&req->params, "check_dead_job");
	int64_t job;

	if (job_of(req, out, &job))
		return;
	if (!digits_or_absent(where) || !digits_or_absent(dead)) {
		api_error(out, 400, "where '%s', check_dead_job '%s': expected numbers", where ? where : "",
			  dead ? dead : "");
		return;
	}
	answer(req, out,
	       locks_barrier_wait(req->db, req->name, job, where ? where : "", dead && strtoll(dead, NULL, 10) != 0),
	       "barrier wait");
}

static void barrier_destroy(struct api_req *req, struct api_resp *out)
{
	const char *where = params_get(&req->params, "where");
	int64_t job;
	int rc;

	if (job_of(req, out, &job))
		return;
	if (!digits_or_absent(where)) {
		api_error(out, 400, "where '%s': expected a job id", where);
		return;
	}
	/* openQA answers 200 whether or not there was one to remove. */
	rc = locks_barrier_destroy(req->db, req->name, job, where ? where : "");
	answer(req, out, rc < -1 ? rc : 1, "barrier destroy");
}

static void mm_answer(struct api_req *req, struct api_resp *out, int rc, json_t *jobs)
{
	if (rc)
		api_error(out, 500, "multi-machine query: %s", db_errmsg(req->db));
	else
		api_json(out, json_pack("{s:o}", "jobs", jobs));
}

enum mm_query { MM_CHILDREN_IN, MM_CHILDREN, MM_PARENTS };
static const enum mm_query mm_children_in = MM_CHILDREN_IN, mm_children = MM_CHILDREN, mm_parents = MM_PARENTS;

/* GET /api/v1/mm/...: the route's argument says which relatives. */
static void mm_jobs(struct api_req *req, struct api_resp *out)
{
	enum mm_query q = *(const enum mm_query *)req->arg;
	json_t *jobs = NULL;
	int64_t job;
	int rc;

	if (job_of(req, out, &job))
		return;
	if (q == MM_CHILDREN_IN)
		rc = locks_mm_children_in(req->db, job, req->name, &jobs);
	else if (q == MM_CHILDREN)
		rc = locks_mm_children(req->db, job, &jobs);
	else
		rc = locks_mm_parents(req->db, job, &jobs);
	mm_answer(req, out, rc, jobs);
}

/* GET /api/v1/whoami: the job whose token signed the request, {"id": N}
 * (openQA's apiv1_jobauth_whoami; mmapi's get_current_job_id). */
static void whoami(struct api_req *req, struct api_resp *out)
{
	int64_t job;

	if (job_of(req, out, &job))
		return;
	api_json(out, json_pack("{s:I}", "id", (json_int_t)job));
}

/* A relay hub's address: HOST:PORT with a host name, IPv4 or [IPv6]. */
static bool relay_addr_ok(const char *a)
{
	const char *colon = a ? strrchr(a, ':') : NULL;
	long port = 0;

	if (!colon || colon == a || strlen(a) > 255 || !colon[1] || strlen(colon + 1) > 5)
		return false;
	for (const char *p = a; p < colon; p++)
		if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      strchr(".-_:[]", *p)))
			return false;
	for (const char *p = colon + 1; *p; p++) {
		if (*p < '0' || *p > '9')
			return false;
		port = port * 10 + (*p - '0');
	}
	return port >= 1 && port <= 65535;
}

/* The secret of job's cluster: 0, or answered 500. */
static int relay_secret(struct api_req *req, struct api_resp *out, int64_t job,
			char secret[LOCKS_RELAY_SECRET_LEN + 1])
{
	int rc = locks_relay_secret(req->db, job, secret);

	if (rc)
		api_error(out, 500, "relay secret: %s", rc == ERR_IO ? "no random bytes" : db_errmsg(req->db));
	return rc;
}

static void relay_set(struct api_req *req, struct api_resp *out)
{
	const char *addr = params_get(&req->params, "addr");
	char secret[LOCKS_RELAY_SECRET_LEN + 1];
	int64_t job;

	if (job_of(req, out, &job))
		return;
	if (!relay_addr_ok(addr)) {
		api_error(out, 400, "addr '%s': expected HOST:PORT (the job's relay hub)", addr ? addr : "");
		return;
	}
	if (locks_relay_set(req->db, job, addr)) {
		api_error(out, 500, "relay address: %s", db_errmsg(req->db));
		return;
	}
	if (relay_secret(req, out, job, secret))
		return;
	api_json(out, json_pack("{s:s,s:s}", "addr", addr, "secret", secret));
}

static void relay_peers(struct api_req *req, struct api_resp *out)
{
	char secret[LOCKS_RELAY_SECRET_LEN + 1];
	json_t *peers = NULL;
	int64_t job;

	if (job_of(req, out, &job) || relay_secret(req, out, job, secret))
		return;
	if (locks_relay_peers(req->db, job, &peers)) {
		api_error(out, 500, "relay peers: %s", db_errmsg(req->db));
		return;
	}
	api_json(out, json_pack("{s:o,s:s}", "peers", peers, "secret", secret));
}

const struct api_route api_locks_routes[] = {
	{ "POST", "/api/v1/mm/relay", AUTH_PUBLIC, relay_set, NULL },
	{ "GET", "/api/v1/mm/relay", AUTH_PUBLIC, relay_peers, NULL },
	{ "GET", "/api/v1/whoami", AUTH_PUBLIC, whoami, NULL },
	{ "POST", "/api/v1/mutex", AUTH_PUBLIC, mutex_create, NULL },
	{ "POST", "/api/v1/mutex/*", AUTH_PUBLIC, mutex_action, NULL },
	{ "POST", "/api/v1/barrier", AUTH_PUBLIC, barrier_create, NULL },
	{ "POST", "/api/v1/barrier/*", AUTH_PUBLIC, barrier_wait, NULL },
	{ "DELETE", "/api/v1/barrier/*", AUTH_PUBLIC, barrier_destroy, NULL },
	{ "GET", "/api/v1/mm/children/*", AUTH_PUBLIC, mm_jobs, &mm_children_in },
	{ "GET", "/api/v1/mm/children", AUTH_PUBLIC, mm_jobs, &mm_children },
	{ "GET", "/api/v1/mm/parents", AUTH_PUBLIC, mm_jobs, &mm_parents },
	{ NULL, NULL, AUTH_PUBLIC, NULL, NULL },
};
