/* SPDX-License-Identifier: MIT */
/* relay_net.c - the worker's side of a parallel cluster's relay network
 * (NICTYPE=tap with NICNET=relay; worker/nethub.h has the hub): it starts
 * the job's hub before the runner, tells the server where the hub listens
 * (POST /api/v1/mm/relay, signed with the job's JOBTOKEN as the lock
 * calls are; its answer has the cluster's secret, which the hub gets) and
 * hands the hub the addresses of the other members' hubs as they appear
 * (GET /api/v1/mm/relay, each second until one peer is known, then every
 * 3 seconds: later members, and a member that came back elsewhere, are
 * found). */
#define LOG_MODULE "worker"
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "net/http.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/log.h"
#include "util/str.h"
#include "util/time.h"
#include "worker/nethub.h"
#include "worker/worker_int.h"
#include "util/banned.h" /* last: after every system header */

#define RELAY_POLL_S 1.0
#define RELAY_POLL_SETTLED_S 3.0

static bool wants_relay(const json_t *settings)
{
	const char *type = json_string_value(json_object_get(settings, "NICTYPE"));
	const char *net = json_string_value(json_object_get(settings, "NICNET"));

	return type && !strcmp(type, "tap") && net && !strcmp(net, "relay");
}

/* The cluster's secret of a relay answer j to the hub: 0, or -1
 * when the answer has none the hub takes. */
static int pass_secret(struct job_run *r, json_t *j)
{
	const char *s = json_string_value(json_object_get(j, "secret"));

	if (!s || nethub_secret(&r->hub, s)) {
		log_warn("job %lld: relay network: the server's answer has no cluster secret the hub takes", r->id);
		return -1;
	}
	return 0;
}

/* One call signed with the job's token: 0 and *status, or an error. */
static int token_call(struct worker *w, struct job_run *r, const char *method, const char *target, long *status)
{
	char err[256];
	int rc;

	w->http.job_token = json_string_value(json_object_get(r->settings, "JOBTOKEN"));
	rc = http_request(&w->http, method, target, NULL, NULL, 0, 10, status, &w->resp, err, sizeof(err));
	w->http.job_token = NULL;
	if (rc)
		log_warn("job %lld: relay network: %s %s: %s", r->id, method, target, err);
	return rc;
}

int worker__relay_start(struct worker *w, struct job_run *r, json_t *local, char *why, size_t whylen)
{
	const char *vlan = json_string_value(json_object_get(local, "NICVLAN"));
	char host[300], port[16], addr[320], err[400];
	unsigned fixed = 0;
	struct buf q;
	long v = 0, st = 0;
	json_t *ans;
	int rc;

	nethub_init(&r->hub);
	if (!wants_relay(local))
		return 0;
	if (!vlan || str_to_long(vlan, &v) || v < 0) {
		snprintf(why, whylen, "setup failure: NICNET=relay needs a NICVLAN number (got '%s')", vlan ? vlan : "");
		return -1;
	}
	if (!json_object_get(r->settings, "JOBTOKEN")) {
		snprintf(why, whylen, "setup failure: NICNET=relay needs the job's JOBTOKEN (vigil serve gives one)");
		return -1;
	}
	if (w->cfg->relay_host) {
		if (nethub_parse_host(w->cfg->relay_host, host, sizeof(host), &fixed, err, sizeof(err))) {
			snprintf(why, whylen, "setup failure: --relay-host %s", err);
			return -1;
		}
	} else {
		snprintf(host, sizeof(host), "%s", w->hostname);
	}
	if ((rc = nethub_start(&r->hub, r->id, v, fixed, err, sizeof(err)))) {
		snprintf(why, whylen, "setup failure: %s", err);
		return -1;
	}
	snprintf(port, sizeof(port), "%u", r->hub.vm_port);
	if (json_object_set_new(local, "NICRELAY_PORT", json_string(port))) {
		snprintf(why, whylen, "setup failure: out of memory");
		nethub_release(&r->hub);
		return -1;
	}
	snprintf(addr, sizeof(addr), "%s:%u", host, r->hub.peer_port);
	buf_init(&q, 1024);
	buf_puts(&q, "/api/v1/mm/relay");
	http_query_add(&q, "addr", addr);
	rc = q.data ? token_call(w, r, "POST", q.data, &st) : ERR_NOMEM;
	buf_release(&q);
	if (rc || st != 200) {
		snprintf(why, whylen, "setup failure: the server did not take the relay hub's address %s (HTTP %ld: %s)",
			 addr, st, w->resp.data ? w->resp.data : "");
		nethub_release(&r->hub);
		return -1;
	}
	ans = json_loads(w->resp.data ? w->resp.data : "", 0, NULL);
	rc = pass_secret(r, ans);
	json_decref(ans);
	if (rc) {
		snprintf(why, whylen, "setup failure: the server gave no relay secret for the cluster (POST "
			 "/api/v1/mm/relay answered without a valid \"secret\")");
		nethub_release(&r->hub);
		return -1;
	}
	log_info("job %lld: relay hub on 127.0.0.1:%u for the VM, %s for the other hubs of network %ld", r->id,
		 r->hub.vm_port, addr, v);
	r->hub_next = 0;
	r->hub_peers = 0;
	return 0;
}

void worker__relay_poll(struct worker *w, struct job_run *r)
{
	json_t *j, *peers, *a;
	const char *id;
	size_t n = 0;
	long st = 0;

	if (r->hub.pid <= 0 || time_mono() < r->hub_next)
		return;
	r->hub_next = time_mono() + RELAY_POLL_S;
	if (token_call(w, r, "GET", "/api/v1/mm/relay", &st) || st != 200)
		return;
	j = json_loads(w->resp.data ? w->resp.data : "", 0, NULL);
	if (pass_secret(r, j)) {
		json_decref(j);
		return;
	}
	peers = json_object_get(j, "peers");
	json_object_foreach(peers, id, a) {
		long long pid = strtoll(id, NULL, 10);
		if (json_is_string(a) && pid > 0 && nethub_peer(&r->hub, pid, json_string_value(a)) == 0)
			n++;
	}
	json_decref(j);
	if (n != r->hub_peers)
		log_debug("job %lld: relay network: %zu peer hubs known", r->id, n);
	r->hub_peers = n;
	if (n > 0)
		r->hub_next = time_mono() + RELAY_POLL_SETTLED_S;
}
