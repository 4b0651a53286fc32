/* SPDX-License-Identifier: MIT */
/* client.c - `vigil client`: schedule, list, show, clone, cancel, restart
 * and comment on jobs of a vigil or openQA server through /api/v1, signed
 * with a key from the options, $OPENQA_API_KEY/$OPENQA_API_SECRET or
 * client.conf. Option parsing, one function per subcommand, readable
 * output (or --json); HTTP and signing are net/http.c, the config file
 * cmd/client_conf.c. Exit status: 0 done, 1 the server said no or could not
 * be reached, 2 bad usage. */
#include <getopt.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "cmd/client_conf.h"
#include "cmd/cmd_conf.h"
#include "cmd/cmd.h"
#include "net/http.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/str.h"
#include "util/banned.h" /* last: after every system header */

#define CLIENT_TIMEOUT_S 120
#define CLIENT_DEFAULT_HOST "http://localhost:9526"

static const char client_usage[] =
	"usage: vigil client [--host URL] [--apikey KEY --apisecret SECRET]\n"
	"                    [--client-conf FILE] [--config FILE] [--json] COMMAND [ARGS]\n"
	"\n"
	"Talks to a 'vigil serve' (or openQA) server through its /api/v1 routes.\n"
	"\n"
	"commands:\n"
	"  schedule KEY=VALUE...     schedule a product (DISTRI VERSION FLAVOR ARCH and\n"
	"                            more settings) like 'openqa-cli schedule'; prints\n"
	"                            the ids of the jobs created, one per line\n"
	"  list [FILTERS] [KEY=VALUE...]\n"
	"                            list jobs (oldest first); KEY=VALUE adds any other\n"
	"                            filter of GET /api/v1/jobs\n"
	"  show JOB                  a job's state, settings, modules and comments\n"
	"  clone JOB [KEY=VALUE...]  a new job with JOB's settings, KEY=VALUE replacing\n"
	"                            or adding settings; prints the new job's id\n"
	"  cancel JOB                cancel a scheduled or running job\n"
	"  restart JOB               restart JOB as a new job; prints its id\n"
	"  comment JOB TEXT          add a comment (bug references like bsc#123, poo#45,\n"
	"                            gh#owner/repo#6 are recognised); prints its id\n"
	"\n"
	"JOB is a job id or a job's URL (.../tests/N).\n"
	"\n"
	"filters of list:\n"
	"  --state S[,S]  --result R[,R]  --distri D  --version V  --flavor F  --arch A\n"
	"  --build B  --test T  --machine M  --group ID  --limit N (default 50)\n"
	"\n"
	"options:\n"
	"  --host URL        the server (default " CLIENT_DEFAULT_HOST "; a bare host:port\n"
	"                    means http://)\n"
	"  --apikey KEY      API key (else $OPENQA_API_KEY, else client.conf)\n"
	"  --apisecret S     its secret (else $OPENQA_API_SECRET, else client.conf)\n"
	"  --client-conf FILE  read key and secret from FILE instead of searching\n"
	"                    $OPENQA_CONFIG/client.conf, ~/.config/openqa/client.conf and\n"
	"                    /etc/openqa/client.conf for a section [HOST:PORT], [HOST] or\n"
	"                    [URL] with 'key =' and 'secret =' lines\n"
	"  --config FILE     read options (host, apikey, apisecret, client-conf, json)\n"
	"                    from the [client] section of FILE (default $VIGIL_CONFIG,\n"
	"                    else /etc/vigil/vigil.conf when it exists); options given\n"
	"                    here override it\n"
	"  --json            print the server's JSON instead of text\n"
	"  -h, --help        this text\n";

struct filters {
	const char *v[11];
	bool any;
};

static const char *const filter_names[11] = { "state", "result", "distri", "version", "flavor", "arch",
					      "build", "test", "machine", "groupid", "limit" };

struct cli {
	struct http_client http;
	const char *host;
	const char *cred_err;   /* why no key was found, NULL when signed */
	bool signed_;
	bool json;
	struct filters f;
	struct buf resp;
	json_t *j;              /* the last response's JSON, NULL when it was not JSON */
	long status;
};

/* --- requests */

/* Send one request; 0 when any answer came (status in c->status, JSON
 * in c->j), 1 after printing why the server could not be reached. */
static int request(struct cli *c, const char *method, const char *target, const struct buf *form)
{
	char err[512];
	int rc;

	json_decref(c->j);
	c->j = NULL;
	rc = http_request(&c->http, method, target, form ? "application/x-www-form-urlencoded" : NULL,
			  form ? (form->data ? form->data : "") : NULL, form ? form->len : 0, CLIENT_TIMEOUT_S,
			  &c->status, &c->resp, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "vigil client: cannot reach %s: %s\n  (is the server running there? check --host)\n",
			c->host, rc == ERR_TOO_BIG ? "the answer is over the size limit" : err);
		return 1;
	}
	if (c->resp.len)
		c->j = json_loadb(c->resp.data, c->resp.len, JSON_DECODE_ANY, NULL);
	return 0;
}

/* The server's reason: its "error" (a string or a list), else the body. */
static void reason(const struct cli *c, char *out, size_t len)
{
	json_t *e = json_is_object(c->j) ? json_object_get(c->j, "error") : NULL;

	if (json_is_string(e)) {
		snprintf(out, len, "%s", json_string_value(e));
	} else if (json_is_array(e)) {
		size_t i, o = 0;
		json_t *v;
		out[0] = '\0';
		json_array_foreach(e, i, v)
			if (json_is_string(v) && o < len)
				o += (size_t)snprintf(out + o, len - o, "%s%s", i ? "; " : "", json_string_value(v));
	} else if (c->resp.len) {
		snprintf(out, len, "%.*s", (int)strcspn(c->resp.data, "\n"), c->resp.data);
	} else {
		snprintf(out, len, "no details");
	}
}

/* Print what went wrong with a non-2xx answer; returns 1. job > 0 turns a 404 into "job N not found". */
static int failed(const struct cli *c, const char *what, long job)
{
	char why[1024];

	reason(c, why, sizeof(why));
	if (c->status == 404 && job > 0 && strncmp(why, "no route", 8)) /* vigil's answer for an unknown path */
		fprintf(stderr, "vigil client: job %ld not found\n", job);
	else if (c->status == 403)
		fprintf(stderr, "vigil client: %s: the server refused: %s\n  (%s)\n", what, why,
			c->signed_ ? "check the key and secret; writes need an operator key, tables an admin key"
				   : c->cred_err ? c->cred_err : "no API key given");
	else
		fprintf(stderr, "vigil client: %s: HTTP %ld: %s\n", what, c->status, why);
	return 1;
}

static bool ok_status(const struct cli *c)
{
	return c->status >= 200 && c->status < 300;
}

/* A write needs a key: say so before sending when there is none. */
static int need_key(const struct cli *c, const char *cmd)
{
	if (c->signed_)
		return 0;
	fprintf(stderr, "vigil client %s: no API key for %s: %s\n  (give --apikey and --apisecret, or add a"
		" section to ~/.config/openqa/client.conf)\n", cmd, c->host, c->cred_err ? c->cred_err : "none given");
	return 1;
}

static void print_json(json_t *j)
{
	char *s = j ? json_dumps(j, JSON_INDENT(2) | JSON_SORT_KEYS | JSON_ENCODE_ANY) : NULL;

	if (s)
		puts(s);
	free(s);
}

/* --- arguments */

static int job_arg(const char *cmd, const char *s, long *id)
{
	if (!s) {
		fprintf(stderr, "vigil client %s: missing JOB (a job id)\n", cmd);
		return 2;
	}
	if (strstr(s, "/tests/") && !str_to_long(strstr(s, "/tests/") + 7, id) && *id > 0)
		return 0; /* a job's URL, as openQA shows it: .../tests/123 */
	if (str_to_long(s, id) || *id <= 0) {
		fprintf(stderr, "vigil client %s: '%s' is not a job id (expected a number or a .../tests/N URL)\n", cmd, s);
		return 2;
	}
	return 0;
}

/* KEY=VALUE with a key of letters, digits and _ + - . : [ ]; else usage error. */
static int setting_arg(const char *cmd, const char *s, char *key, size_t keylen, const char **value)
{
	const char *eq = strchr(s, '=');
	size_t i, n = eq ? (size_t)(eq - s) : 0;

	if (!eq || n == 0) {
		fprintf(stderr, "vigil client %s: '%s' is not a setting: expected KEY=VALUE\n", cmd, s);
		return 2;
	}
	if (n >= keylen) {
		fprintf(stderr, "vigil client %s: setting name '%.40s...' is too long\n", cmd, s);
		return 2;
	}
	for (i = 0; i < n; i++)
		if (!(s[i] >= 'A' && s[i] <= 'Z') && !(s[i] >= 'a' && s[i] <= 'z') && !(s[i] >= '0' && s[i] <= '9') &&
		    !strchr("_+-.:[]", s[i])) {
			fprintf(stderr, "vigil client %s: setting name '%.*s' has the character '%c' (use A-Z, 0-9, _ + - . : [ ])\n",
				cmd, (int)n, s, s[i]);
			return 2;
		}
	memcpy(key, s, n);
	key[n] = '\0';
	*value = eq + 1;
	return 0;
}

static const char *jstr(const json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));
	return s ? s : "";
}

/* --- subcommands */

static int sub_schedule(struct cli *c, int argc, char **argv)
{
	static const char *const need[] = { "DISTRI", "VERSION", "FLAVOR", "ARCH" };
	struct buf form, missing;
	size_t i;
	int k, rc = 0;
	json_t *ids, *v;

	if (argc == 0) {
		fprintf(stderr, "vigil client schedule: give the product as KEY=VALUE settings, e.g.\n"
			"  vigil client schedule DISTRI=debian VERSION=12 FLAVOR=netinst ARCH=x86_64 BUILD=1\n");
		return 2;
	}
	buf_init(&form, 1u << 20);
	buf_init(&missing, 256);
	for (k = 0; k < argc && !rc; k++) {
		char key[128];
		const char *val;
		if ((rc = setting_arg("schedule", argv[k], key, sizeof(key), &val)))
			break;
		if (http_form_add(&form, key, val)) {
			fprintf(stderr, "vigil client schedule: the settings are over 1 MiB\n");
			rc = 2;
		}
	}
	for (i = 0; !rc && i < 4; i++) {
		bool found = false;
		for (k = 0; k < argc; k++)
			if (!strncasecmp(argv[k], need[i], strlen(need[i])) && argv[k][strlen(need[i])] == '=' &&
			    argv[k][strlen(need[i]) + 1])
				found = true;
		if (!found)
			(void)buf_printf(&missing, "%s%s", missing.len ? ", " : "", need[i]);
	}
	if (!rc && missing.len) {
		fprintf(stderr, "vigil client schedule: missing %s (the product to schedule)\n", missing.data);
		rc = 2;
	}
	if (!rc && !(rc = need_key(c, "schedule")) && !(rc = request(c, "POST", "/api/v1/isos", &form))) {
		if (c->json && c->j)
			print_json(c->j);
		if (!ok_status(c) || !json_is_object(c->j)) {
			rc = failed(c, "schedule", 0);
		} else {
			ids = json_object_get(c->j, "ids");
			if (!c->json)
				json_array_foreach(ids, i, v)
					printf("%lld\n", (long long)json_integer_value(v));
			json_array_foreach(json_object_get(c->j, "failed"), i, v)
				fprintf(stderr, "vigil client schedule: %s: %s\n", json_string_value(json_object_get(v, "job_name"))
					? jstr(v, "job_name") : "a job", jstr(v, "error_message"));
			if (json_object_get(c->j, "error")) {
				char why[512];
				reason(c, why, sizeof(why));
				fprintf(stderr, "vigil client schedule: no jobs scheduled: %s\n", why);
				rc = 1;
			} else if (json_array_size(ids) == 0) {
				fprintf(stderr, "vigil client schedule: no job templates matched: 0 jobs scheduled\n");
			}
		}
	}
	buf_release(&form);
	buf_release(&missing);
	return rc;
}

static int sub_list(struct cli *c, int argc, char **argv)
{
	struct buf q;
	size_t i, w_name = 4, w_state = 5, w_result = 6;
	json_t *jobs, *v;
	int k, rc = 0;

	buf_init(&q, 64u << 10);
	(void)buf_puts(&q, "/api/v1/jobs");
	for (i = 0; i < 11 && !rc; i++)
		if (c->f.v[i] && http_query_add(&q, filter_names[i], c->f.v[i]))
			rc = 2;
	if (!c->f.v[10])
		(void)http_query_add(&q, "limit", "50");
	for (k = 0; k < argc && !rc; k++) {
		char key[128];
		const char *val;
		if ((rc = setting_arg("list", argv[k], key, sizeof(key), &val)))
			break;
		if (http_query_add(&q, key, val))
			rc = 2;
	}
	if (rc || (rc = request(c, "GET", q.data, NULL)))
		goto out;
	if (!ok_status(c) || !json_is_object(c->j)) {
		rc = failed(c, "list", 0);
		goto out;
	}
	if (c->json) {
		print_json(c->j);
		goto out;
	}
	jobs = json_object_get(c->j, "jobs");
	json_array_foreach(jobs, i, v) {
		size_t n;
		if ((n = strlen(jstr(v, "name"))) > w_name)
			w_name = n;
		if ((n = strlen(jstr(v, "state"))) > w_state)
			w_state = n;
		if ((n = strlen(jstr(v, "result"))) > w_result)
			w_result = n;
	}
	if (json_array_size(jobs) == 0) {
		fprintf(stderr, "no jobs\n");
		goto out;
	}
	printf("%-7s %-*s %-*s %-4s %s\n", "ID", (int)w_state, "STATE", (int)w_result, "RESULT", "PRIO", "NAME");
	json_array_foreach(jobs, i, v) {
		json_t *clone = json_object_get(v, "clone_id");
		printf("%-7lld %-*s %-*s %-4lld %s", (long long)json_integer_value(json_object_get(v, "id")), (int)w_state,
		       jstr(v, "state"), (int)w_result, jstr(v, "result"),
		       (long long)json_integer_value(json_object_get(v, "priority")), jstr(v, "name"));
		if (json_is_integer(clone))
			printf("  (cloned as %lld)", (long long)json_integer_value(clone));
		putchar('\n');
	}
out:
	buf_release(&q);
	return rc;
}

static void show_line(const char *label, const json_t *v)
{
	if (json_is_string(v) && *json_string_value(v))
		printf("  %-10s %s\n", label, json_string_value(v));
	else if (json_is_integer(v))
		printf("  %-10s %lld\n", label, (long long)json_integer_value(v));
}

static int sub_show(struct cli *c, int argc, char **argv)
{
	char target[96];
	json_t *job, *settings, *mods, *comments = NULL, *v;
	const char *key;
	long id;
	size_t i;
	int rc;

	if ((rc = job_arg("show", argc ? argv[0] : NULL, &id)))
		return rc;
	if (argc > 1) {
		fprintf(stderr, "vigil client show: one JOB only ('%s' is extra)\n", argv[1]);
		return 2;
	}
	snprintf(target, sizeof(target), "/api/v1/jobs/%ld/details", id);
	if ((rc = request(c, "GET", target, NULL)))
		return rc;
	if (!ok_status(c) || !json_is_object(json_object_get(c->j, "job")))
		return failed(c, "show", id);
	job = json_incref(json_object_get(c->j, "job"));
	snprintf(target, sizeof(target), "/api/v1/jobs/%ld/comments", id);
	if (request(c, "GET", target, NULL) == 0 && ok_status(c) && json_is_array(c->j))
		comments = json_incref(c->j);
	if (c->json) {
		if (comments)
			json_object_set(job, "comments", comments);
		print_json(job);
		goto out;
	}
	printf("job %ld: %s\n", id, jstr(job, "name"));
	show_line("state", json_object_get(job, "state"));
	show_line("result", json_object_get(job, "result"));
	show_line("reason", json_object_get(job, "reason"));
	show_line("priority", json_object_get(job, "priority"));
	show_line("group", json_object_get(job, "group"));
	show_line("group id", json_object_get(job, "group_id"));
	show_line("worker", json_object_get(job, "assigned_worker_id"));
	show_line("started", json_object_get(job, "t_started"));
	show_line("finished", json_object_get(job, "t_finished"));
	show_line("cloned as", json_object_get(job, "clone_id"));
	show_line("origin", json_object_get(job, "origin_id"));
	settings = json_object_get(job, "settings");
	printf("settings:\n");
	{
		/* Sorted, so two jobs compare line by line. */
		const char **keys = calloc(json_object_size(settings) + 1, sizeof(*keys));
		size_t n = 0, a, b;
		json_object_foreach(settings, key, v)
			if (keys)
				keys[n++] = key;
		for (a = 1; a < n; a++)
			for (b = a; b > 0 && strcmp(keys[b - 1], keys[b]) > 0; b--) {
				const char *t = keys[b];
				keys[b] = keys[b - 1];
				keys[b - 1] = t;
			}
		for (a = 0; a < n; a++)
			printf("  %s=%s\n", keys[a], jstr(settings, keys[a]));
		free(keys);
	}
	mods = json_object_get(job, "testresults");
	if (!json_array_size(mods))
		mods = json_object_get(job, "modules");
	if (json_array_size(mods)) {
		printf("modules:\n");
		json_array_foreach(mods, i, v)
			printf("  %-24s %-16s %s\n", jstr(v, "name"), jstr(v, "category"), jstr(v, "result"));
	}
	if (json_array_size(comments)) {
		printf("comments:\n");
		json_array_foreach(comments, i, v) {
			printf("  #%lld %s %s: %s\n", (long long)json_integer_value(json_object_get(v, "id")),
			       jstr(v, "userName"), jstr(v, "created"), jstr(v, "text"));
		}
	}
out:
	json_decref(job);
	json_decref(comments);
	return 0;
}

static int sub_clone(struct cli *c, int argc, char **argv)
{
	char target[64], num[32];
	struct buf form;
	json_t *job, *settings, *over = json_object(), *v;
	const char *key;
	long id;
	int k, rc;
	bool redacted = false;

	if ((rc = job_arg("clone", argc ? argv[0] : NULL, &id)))
		goto out_early;
	for (k = 1; k < argc; k++) {
		char sk[128];
		const char *val;
		if ((rc = setting_arg("clone", argv[k], sk, sizeof(sk), &val)))
			goto out_early;
		json_object_set_new(over, sk, json_string(val));
	}
	if ((rc = need_key(c, "clone")))
		goto out_early;
	snprintf(target, sizeof(target), "/api/v1/jobs/%ld", id);
	if ((rc = request(c, "GET", target, NULL)))
		goto out_early;
	if (!ok_status(c) || !json_is_object(json_object_get(c->j, "job"))) {
		rc = failed(c, "clone", id);
		goto out_early;
	}
	job = json_object_get(c->j, "job");
	settings = json_object_get(job, "settings");
	buf_init(&form, 1u << 20);
	rc = 0;
	/* The settings verbatim (is_clone_job: no table defaults merged again), NAME recomputed by the server. */
	json_object_foreach(settings, key, v) {
		if (!strcmp(key, "NAME") || !json_is_string(v) || json_object_get(over, key))
			continue;
		if (!strcmp(json_string_value(v), "[redacted]"))
			redacted = true;
		rc = rc || http_form_add(&form, key, json_string_value(v));
	}
	json_object_foreach(over, key, v)
		rc = rc || http_form_add(&form, key, json_string_value(v));
	snprintf(num, sizeof(num), "%lld", (long long)json_integer_value(json_object_get(job, "priority")));
	rc = rc || http_form_add(&form, "_PRIORITY", num);
	if (json_is_integer(json_object_get(job, "group_id"))) {
		snprintf(num, sizeof(num), "%lld", (long long)json_integer_value(json_object_get(job, "group_id")));
		rc = rc || http_form_add(&form, "_GROUP_ID", num);
	}
	{
		/* CLONED_FROM is the original's URL, as openqa-clone-job sets it. */
		size_t ul = strlen(c->http.base) + 48;
		char *url = malloc(ul);
		if (url)
			snprintf(url, ul, "%s/tests/%ld", c->http.base, id);
		rc = rc || !url || http_form_add(&form, "CLONED_FROM", url) || http_form_add(&form, "is_clone_job", "1");
		free(url);
	}
	if (rc) {
		fprintf(stderr, "vigil client clone: job %ld's settings are over 1 MiB\n", id);
		rc = 1;
		goto out;
	}
	if (redacted)
		fprintf(stderr, "vigil client clone: warning: job %ld has settings shown as [redacted]; the clone gets"
			" that text, give the real values as KEY=VALUE\n", id);
	if ((rc = request(c, "POST", "/api/v1/jobs", &form)))
		goto out;
	if (!ok_status(c) || !json_is_integer(json_object_get(c->j, "id"))) {
		rc = failed(c, "clone", 0);
		goto out;
	}
	if (c->json)
		print_json(c->j);
	else
		printf("%lld\n", (long long)json_integer_value(json_object_get(c->j, "id")));
out:
	buf_release(&form);
out_early:
	json_decref(over);
	return rc;
}

static int sub_cancel(struct cli *c, int argc, char **argv)
{
	char target[64];
	long id;
	int rc;

	if ((rc = job_arg("cancel", argc ? argv[0] : NULL, &id)) || (rc = need_key(c, "cancel")))
		return rc;
	snprintf(target, sizeof(target), "/api/v1/jobs/%ld/cancel", id);
	if ((rc = request(c, "POST", target, NULL)))
		return rc;
	if (!ok_status(c))
		return failed(c, "cancel", id);
	if (c->json)
		print_json(c->j);
	else if (json_integer_value(json_object_get(c->j, "result")) > 0 || !json_is_integer(json_object_get(c->j, "result")))
		printf("job %ld cancelled\n", id);
	else
		printf("job %ld not cancelled: it has finished already\n", id);
	return 0;
}

static int sub_restart(struct cli *c, int argc, char **argv)
{
	char target[64], key[32];
	json_t *res, *v;
	long id;
	size_t i;
	int rc;

	if ((rc = job_arg("restart", argc ? argv[0] : NULL, &id)) || (rc = need_key(c, "restart")))
		return rc;
	snprintf(target, sizeof(target), "/api/v1/jobs/%ld/restart", id);
	if ((rc = request(c, "POST", target, NULL)))
		return rc;
	if (!ok_status(c))
		return failed(c, "restart", id);
	if (c->json)
		print_json(c->j);
	json_array_foreach(json_object_get(c->j, "errors"), i, v)
		fprintf(stderr, "vigil client restart: job %ld: %s\n", id, json_string_value(v) ? json_string_value(v) : "?");
	snprintf(key, sizeof(key), "%ld", id);
	res = json_array_get(json_object_get(c->j, "result"), 0);
	v = json_object_get(res, key);
	if (!json_is_integer(v)) {
		if (!json_array_size(json_object_get(c->j, "errors")))
			fprintf(stderr, "vigil client restart: job %ld was not restarted\n", id);
		return 1;
	}
	if (!c->json)
		printf("%lld\n", (long long)json_integer_value(v));
	return 0;
}

static int sub_comment(struct cli *c, int argc, char **argv)
{
	char target[64];
	struct buf form;
	long id;
	int rc;

	if ((rc = job_arg("comment", argc ? argv[0] : NULL, &id)))
		return rc;
	if (argc != 2 || !*argv[1]) {
		fprintf(stderr, "vigil client comment: give JOB and one TEXT (quote it)\n");
		return 2;
	}
	if ((rc = need_key(c, "comment")))
		return rc;
	buf_init(&form, 1u << 20);
	if (http_form_add(&form, "text", argv[1])) {
		buf_release(&form);
		fprintf(stderr, "vigil client comment: the text is too long\n");
		return 2;
	}
	snprintf(target, sizeof(target), "/api/v1/jobs/%ld/comments", id);
	rc = request(c, "POST", target, &form);
	buf_release(&form);
	if (rc)
		return rc;
	if (!ok_status(c))
		return failed(c, "comment", id);
	if (c->json)
		print_json(c->j);
	else
		printf("%lld\n", (long long)json_integer_value(json_object_get(c->j, "id")));
	return 0;
}

struct subcommand {
	const char *name;
	int (*fn)(struct cli *c, int argc, char **argv);
};

static const struct subcommand subcommands[] = {
	{ "schedule", sub_schedule }, { "list", sub_list }, { "show", sub_show }, { "clone", sub_clone },
	{ "cancel", sub_cancel }, { "restart", sub_restart }, { "comment", sub_comment },
};

/* Key and secret: options, then the environment, then client.conf. */
static int credentials(struct cli *c, const char *key, const char *secret, const char *config, struct client_cred *cred,
		       char *err, size_t errlen)
{
	int rc;

	if (!key && !secret) {
		key = getenv("OPENQA_API_KEY");
		secret = getenv("OPENQA_API_SECRET");
		if (!key || !*key || !secret || !*secret)
			key = secret = NULL;
	}
	if (key || secret) {
		if (!key || !secret) {
			fprintf(stderr, "vigil client: --apikey and --apisecret go together\n");
			return 2;
		}
		snprintf(cred->key, sizeof(cred->key), "%s", key);
		snprintf(cred->secret, sizeof(cred->secret), "%s", secret);
		c->signed_ = true;
		return 0;
	}
	rc = client_conf_lookup(config, c->host, cred, NULL, 0, err, errlen);
	if (rc == 0) {
		c->signed_ = true;
		return 0;
	}
	if (config) {
		fprintf(stderr, "vigil client: --client-conf %s\n", err);
		return 2;
	}
	c->cred_err = err; /* reads still work unsigned */
	return 0;
}

static const struct option client_opts[] = {
	{ "host", required_argument, NULL, 'H' },
	{ "apikey", required_argument, NULL, 'k' },
	{ "apisecret", required_argument, NULL, 's' },
	{ "client-conf", required_argument, NULL, 'C' },
	{ "config", required_argument, NULL, 'F' },
	{ "json", no_argument, NULL, 'j' },
	{ "help", no_argument, NULL, 'h' },
	{ "state", required_argument, NULL, 1000 },
	{ "result", required_argument, NULL, 1001 },
	{ "distri", required_argument, NULL, 1002 },
	{ "version", required_argument, NULL, 1003 },
	{ "flavor", required_argument, NULL, 1004 },
	{ "arch", required_argument, NULL, 1005 },
	{ "build", required_argument, NULL, 1006 },
	{ "test", required_argument, NULL, 1007 },
	{ "machine", required_argument, NULL, 1008 },
	{ "group", required_argument, NULL, 1009 },
	{ "limit", required_argument, NULL, 1010 },
	{ NULL, 0, NULL, 0 },
};

/* What the options set before the command runs. */
struct client_opts {
	struct cli *c;
	const char *key, *secret, *client_conf;
};

/* One option, from the command line or the [client] section of the
 * configuration file (which takes no list filters). */
static int client_opt(void *ctx, int opt, const char *arg, char *err, size_t errlen)
{
	struct client_opts *o = ctx;
	long n;

	switch (opt) {
	case 'H': o->c->host = arg; break;
	case 'k': o->key = arg; break;
	case 's': o->secret = arg; break;
	case 'C': o->client_conf = arg; break;
	case 'F': break; /* read before any other option */
	case 'j': o->c->json = true; break;
	default:
		if (opt < 1000 || opt > 1010) {
			err_set(err, errlen, "not an option of vigil client");
			return ERR_INVALID;
		}
		if (opt == 1010 && (str_to_long(arg, &n) || n <= 0)) {
			err_set(err, errlen, "'%s': expected a positive number", arg);
			return ERR_INVALID;
		}
		o->c->f.v[opt - 1000] = arg;
		o->c->f.any = true;
	}
	return 0;
}

int cmd_client(int argc, char **argv)
{
	static const char *const no_file[] = { "state", "result", "distri", "version", "flavor", "arch", "build",
						"test", "machine", "group", "limit", NULL };
	struct cli c;
	struct client_cred cred;
	struct client_opts o = { &c, NULL, NULL, NULL };
	struct conf conf;
	char err[1024];
	size_t i;
	int opt, rc = 2;

	memset(&c, 0, sizeof(c));
	memset(&cred, 0, sizeof(cred));
	conf_init(&conf);
	c.host = CLIENT_DEFAULT_HOST;
	if (cmd_wants_help(argc, argv)) {
		fputs(client_usage, stdout);
		return 0;
	}
	if (cmd_conf_load("client", argc, argv, &conf, "client", client_opts, client_opt, &o))
		goto out;
	for (i = 0; no_file[i]; i++)
		if (conf_get(&conf, "client", no_file[i])) {
			char where[600];
			conf_where(&conf, conf_get(&conf, "client", no_file[i]), where, sizeof(where));
			fprintf(stderr, "vigil client: %s: [client] %s: a filter of 'list' belongs on its command "
				"line, not in the configuration file\n", where, no_file[i]);
			goto out;
		}
	while ((opt = getopt_long(argc, argv, "hj", client_opts, NULL)) != -1) {
		if (opt == '?' || opt == 'h') {
			fputs(client_usage, stderr);
			goto out;
		}
		if (client_opt(&o, opt, optarg, err, sizeof(err))) {
			cmd_opt_error("client", client_opts, opt, err);
			goto out;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "vigil client: missing COMMAND\n%s", client_usage);
		goto out;
	}
	for (i = 0; i < sizeof(subcommands) / sizeof(subcommands[0]); i++)
		if (!strcmp(argv[optind], subcommands[i].name))
			break;
	if (i == sizeof(subcommands) / sizeof(subcommands[0])) {
		fprintf(stderr, "vigil client: unknown command '%s'; try 'vigil client --help'\n", argv[optind]);
		goto out;
	}
	if (c.f.any && strcmp(subcommands[i].name, "list")) {
		fprintf(stderr, "vigil client: --state, --result, --build ... filter 'list' only\n");
		goto out;
	}
	if ((rc = credentials(&c, o.key, o.secret, o.client_conf, &cred, err, sizeof(err))))
		goto out;
	if (http_client_init(&c.http, c.host, c.signed_ ? cred.key : NULL, c.signed_ ? cred.secret : NULL)) {
		fprintf(stderr, "vigil client: out of memory\n");
		http_client_release(&c.http);
		rc = 1;
		goto out;
	}
	buf_init(&c.resp, LIMIT_HTTP_RESPONSE);
	rc = subcommands[i].fn(&c, argc - optind - 1, argv + optind + 1);
	json_decref(c.j);
	buf_release(&c.resp);
	http_client_release(&c.http);
out:
	conf_release(&conf);
	return rc;
}
