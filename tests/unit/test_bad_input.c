/* SPDX-License-Identifier: MIT */
/* test_bad_input.c - every route of the server (walked with api_route_at,
 * so a new route is covered without an edit here) answers malformed input
 * with a 4xx JSON error that says what was wrong, and changes nothing in
 * the database (its rows compared before and after each request). The real
 * server runs on a loopback port over a fresh database holding a machine,
 * a product, a test suite, a job group, a job and a comment; requests are
 * signed with an admin key, so every handler is reached. The inputs: a
 * query parameter that is not UTF-8, a bad escape, a JSON body that does
 * not parse, a body of an unsupported type, a body over the limit (write
 * routes), and an id that names nothing (a page of the web UI answers
 * that with its shell, whose script shows what the API says); then fields
 * over their bounds and of the wrong type on the routes that store them. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sqlite3.h>
#include <sys/socket.h>
#include <limits.h>
#include <time.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "unit.h"
#include "net/hmac.h"
#include "net/http.h"
#include "server/http/api.h"
#include "server/api/api_fields.h"
#include "server/store/auth.h"
#include "server/db/db.h"
#include "server/server.h"
#include "util/buf.h"
#include "util/log.h"
#include "util/path.h"

/* Every row of every table, as text (the database's state). */
static char *dump(const char *path)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *tables = NULL;
	struct buf b;

	buf_init(&b, 64u << 20);
	CHECK(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK);
	sqlite3_busy_timeout(db, 60000);
	/* api_nonces is the signatures' memory: a refused request spends its
	 * nonce too (a replay of it stays refused), so it is not "the data". */
	CHECK(sqlite3_prepare_v2(db, "SELECT name FROM sqlite_master WHERE type = 'table' AND name <> 'api_nonces'"
				 " ORDER BY name", -1, &tables, NULL) == SQLITE_OK);
	while (sqlite3_step(tables) == SQLITE_ROW) {
		char sql[256];
		sqlite3_stmt *rows = NULL;
		snprintf(sql, sizeof(sql), "SELECT * FROM \"%s\"", (const char *)sqlite3_column_text(tables, 0));
		CHECK(sqlite3_prepare_v2(db, sql, -1, &rows, NULL) == SQLITE_OK);
		buf_printf(&b, "[%s]\n", (const char *)sqlite3_column_text(tables, 0));
		while (sqlite3_step(rows) == SQLITE_ROW) {
			int i;
			for (i = 0; i < sqlite3_column_count(rows); i++) {
				const unsigned char *t = sqlite3_column_text(rows, i);
				buf_printf(&b, "%s|", t ? (const char *)t : "NULL");
			}
			buf_puts(&b, "\n");
		}
		sqlite3_finalize(rows);
	}
	sqlite3_finalize(tables);
	sqlite3_close(db);
	buf_append(&b, "", 1);
	return buf_steal(&b);
}

/* The target of route r with each '#' replaced by id and each '*' by
 * name, then query (may be ""). */
static void target_of(const struct api_route *r, const char *id, const char *name, const char *query, char *out,
		      size_t len)
{
	const char *p;
	size_t o = 0;

	for (p = r->pattern; *p && o + 32 < len; p++) {
		if (*p == '#')
			o += (size_t)snprintf(out + o, len - o, "%s", id);
		else if (*p == '*')
			o += (size_t)snprintf(out + o, len - o, "%s", name);
		else
			out[o++] = *p;
	}
	snprintf(out + o, len - o, "%s", query);
}

struct probe {
	struct http_client *c;
	const char *db_path;
	int failures;
};

/* One request that must be refused: status 4xx, a JSON {"error"} that
 * contains want (NULL: any text), and the database as it was. */
static void refused(struct probe *pr, const struct api_route *r, const char *what, const char *target,
		    const char *ctype, const char *body, size_t len, const char *want)
{
	char *before = dump(pr->db_path), *after, err[256];
	struct buf resp;
	long status = 0;
	json_t *j = NULL;
	const char *e = NULL;

	buf_init(&resp, LIMIT_HTTP_RESPONSE);
	if (http_request(pr->c, r->method, target, ctype, body, len, 120, &status, &resp, err, sizeof(err))) {
		fprintf(stderr, "%s %s (%s): no answer: %s\n", r->method, target, what, err);
		pr->failures++;
		goto out;
	}
	/* A page of the web UI is its shell, whose script asks the API (and
	 * shows that answer): not a JSON error, and nothing changed. */
	if (!strcmp(r->method, "GET") && status == 200 && resp.len > 15 &&
	    !strncasecmp(resp.data, "<!doctype html>", 15))
		goto same;
	j = json_loadb(resp.data ? resp.data : "", resp.len, 0, NULL);
	e = json_string_value(json_object_get(j, "error"));
	/* job_templates_scheduling answers a list of errors, as openQA does. */
	if (!e && json_is_array(json_object_get(j, "error")))
		e = json_string_value(json_array_get(json_object_get(j, "error"), 0));
	if (status < 400 || status > 499 || !e || (want && !strstr(e, want))) {
		fprintf(stderr, "%s %s (%s): answered %ld %.*s (want a 4xx JSON error%s%s)\n", r->method, target, what,
			status, (int)(resp.len < 300 ? resp.len : 300), resp.data ? resp.data : "",
			want ? " naming " : "", want ? want : "");
		pr->failures++;
	}
same:
	after = dump(pr->db_path);
	if (strcmp(before, after)) {
		fprintf(stderr, "%s %s (%s): answered %ld but changed the database\n", r->method, target, what, status);
		pr->failures++;
	}
	free(after);
out:
	json_decref(j);
	buf_release(&resp);
	free(before);
}

/* A body over LIMIT_API_BODY, announced by Content-Length: the server
 * answers from the headers alone and closes, so the request goes over a
 * socket of our own (curl could still be sending when the answer comes).
 * The answer must be a 413 naming the limit, the database unchanged. */
static void too_big(struct probe *pr, const struct api_route *r, const char *target, unsigned port, const char *key,
		    const char *secret)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	char *before = dump(pr->db_path), *after, head[1024], mt[32], hash[HMAC_HEX_LEN + 1], *sep;
	struct buf resp;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int n, status = 0;
	ssize_t got;

	CHECK(fd >= 0);
	CHECK(connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0);
	snprintf(mt, sizeof(mt), "%lld", (long long)time(NULL));
	CHECK_INT(hmac_sign(secret, target, mt, hash), 0);
	n = snprintf(head, sizeof(head),
		     "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\nX-API-Key: %s\r\nX-API-Microtime: %s\r\n"
		     "X-API-Hash: %s\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: %u\r\n"
		     "Connection: close\r\n\r\n",
		     r->method, target, key, mt, hash, LIMIT_API_BODY + 1);
	CHECK(write(fd, head, (size_t)n) == n);
	buf_init(&resp, 1u << 20);
	while ((got = read(fd, head, sizeof(head))) > 0)
		buf_append(&resp, head, (size_t)got);
	close(fd);
	buf_append(&resp, "", 1);
	sscanf(resp.data, "HTTP/1.%*c %d", &status);
	sep = strstr(resp.data, "\r\n\r\n");
	if (status != 413 || !sep || !strstr(sep, "\"error\"") || !strstr(sep, "limit")) {
		fprintf(stderr, "%s %s (over the limit): answered %.300s (want a 413 JSON error naming the limit)\n",
			r->method, target, resp.data);
		pr->failures++;
	}
	after = dump(pr->db_path);
	if (strcmp(before, after)) {
		fprintf(stderr, "%s %s (over the limit): changed the database\n", r->method, target);
		pr->failures++;
	}
	free(after);
	free(before);
	buf_release(&resp);
}

/* POST/PUT form to target; the answer must be 2xx (the fixture). */
static void make(struct http_client *c, const char *method, const char *target, const char *ctype, const char *body)
{
	struct buf resp;
	long status = 0;
	char err[256];

	buf_init(&resp, LIMIT_HTTP_RESPONSE);
	CHECK_INT(http_request(c, method, target, ctype, body, strlen(body), 60, &status, &resp, err, sizeof(err)), 0);
	if (status < 200 || status > 299)
		FAIL("%s %s: %ld %.*s", method, target, status, (int)resp.len, resp.data ? resp.data : "");
	buf_release(&resp);
}

/* "~N" in text becomes N 'A's. A new string. */
static char *expand(const char *text)
{
	struct buf b;
	const char *p;

	buf_init(&b, 4u << 20);
	for (p = text; *p; p++) {
		if (p[0] == '~' && p[1] >= '0' && p[1] <= '9') {
			long n = strtol(p + 1, (char **)&p, 10);
			while (n-- > 0)
				buf_append(&b, "A", 1);
			p--;
		} else {
			buf_append(&b, p, 1);
		}
	}
	buf_append(&b, "", 1);
	return buf_steal(&b);
}

/* Fields over their bounds (docs/hardening.md's table), and fields of the
 * wrong type: each refused naming the field, nothing stored. */
static void over_bounds(struct probe *pr)
{
	static const struct {
		const char *method, *target, *ctype, *body, *want;
	} cases[] = {
		{ "POST", "/api/v1/machines", NULL, "name=~1025&backend=qemu", "name:" },
		{ "POST", "/api/v1/machines", NULL, "name=m2&backend=~1025", "backend:" },
		{ "POST", "/api/v1/machines", NULL, "name=m2&backend=qemu&description=~65537", "description:" },
		{ "POST", "/api/v1/machines", NULL, "name=m2&backend=qemu&settings%5B~1025%5D=1", "setting's name" },
		{ "PUT", "/api/v1/products/1", NULL, "distri=~1025&version=1&flavor=f&arch=x86_64", "distri:" },
		{ "POST", "/api/v1/test_suites", NULL, "name=~1025", "name:" },
		{ "POST", "/api/v1/job_groups", NULL, "name=~1025", "name" },
		{ "POST", "/api/v1/job_groups", NULL, "name=g2&description=~65537", "description" },
		{ "POST", "/api/v1/workers", NULL, "host=~256&instance=1", "host" },
		{ "POST", "/api/v1/workers", NULL, "host=h&instance=1&worker_class=~4097", "worker_class" },
		{ "POST", "/api/v1/workers", "application/json", "{\"host\": 5, \"instance\": 1}", "host" },
		{ "POST", "/api/v1/workers", NULL, "host=h&instance=x", "instance" },
		{ "POST", "/api/v1/jobs/1/comments", NULL, "text=~65537", "text" },
		{ "POST", "/api/v1/jobs", NULL, "DISTRI=vigil&VERSION=1&FLAVOR=f&ARCH=x86_64&TEST=t2&A=~600000&B=%25A%25%25A%25",
		  "'B'" },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct api_route r = { cases[i].method, cases[i].target, AUTH_PUBLIC, NULL, NULL };
		char *body = expand(cases[i].body);
		refused(pr, &r, "over a bound or of the wrong type", cases[i].target, cases[i].ctype, body, strlen(body),
			cases[i].want);
		free(body);
	}
}

/* A valid value of f as JSON text (for the fields around the one probed). */
static const char *valid_json(const struct api_field *f, char *tmp, size_t len)
{
	switch (f->type) {
	case API_F_STR: return "\"x\"";
	case API_F_BOOL: return "1";
	case API_F_OBJECT: return "{}";
	case API_F_INT: break;
	}
	snprintf(tmp, len, "%lld", f->min > 0 ? f->min : f->max < 0 ? f->max : 0);
	return tmp;
}

/* The same as a form value (URL-encoded), NULL for an object. */
static const char *valid_form(const struct api_field *f, char *tmp, size_t len)
{
	if (f->type == API_F_OBJECT)
		return NULL;
	if (f->type == API_F_STR)
		return "x";
	return valid_json(f, tmp, len);
}

/* A body (JSON when json, else a form; query: a query string starting with '?')
 * holding every required field of list but skip, valid, then the probed
 * field bad (its value as JSON or form text, NULL: left out). */
static char *body_with(const struct api_field *list, const struct api_field *skip, const char *bad, bool json,
		       bool query)
{
	const struct api_field *f;
	struct buf b;
	char tmp[32];
	bool first = true;

	buf_init(&b, 4u << 20);
	buf_puts(&b, json ? "{" : query ? "?" : "");
	for (f = list; f->name; f++) {
		const char *v;
		if (f == skip)
			v = bad;
		else if (!(f->flags & API_F_REQUIRED))
			v = NULL;
		else
			v = json ? valid_json(f, tmp, sizeof(tmp)) : valid_form(f, tmp, sizeof(tmp));
		if (!v)
			continue;
		if (json)
			buf_printf(&b, "%s\"%s\": %s", first ? "" : ", ", f->name, v);
		else
			buf_printf(&b, "%s%s=%s", first ? "" : "&", f->name, v);
		first = false;
	}
	buf_puts(&b, json ? "}" : "");
	buf_append(&b, "", 1);
	return buf_steal(&b);
}

struct walk_count {
	size_t routes, fields, requests;
};

/* One probe of field f of route r: the body (or query) as body_with makes it. */
static void field_case(struct probe *pr, struct walk_count *n, const struct api_route *r, const struct api_field *list,
		       const struct api_field *f, const char *what, const char *bad, bool json)
{
	bool stream = strstr(r->pattern, "/artefact") != NULL;
	char *text = body_with(list, f, bad, json, stream), *target, want[80], label[160];
	size_t tlen = strlen(text) + 1024;

	if (stream && json) {
		free(text);
		return;
	}
	target = malloc(tlen);
	CHECK(target != NULL);
	target_of(r, "1", "x", stream ? text : "", target, tlen);
	snprintf(want, sizeof(want), "%s:", f->name);
	snprintf(label, sizeof(label), "%s %s", f->name, what);
	refused(pr, r, label, target, stream ? NULL : json ? "application/json" : "application/x-www-form-urlencoded",
		stream ? NULL : text, stream ? 0 : strlen(text), want);
	n->requests++;
	free(target);
	free(text);
}

/* Every field of every writing route (api_fields.c's lists, found for each
 * route of the table): missing when required, of each wrong type, out of
 * its bounds; each refused naming the field, nothing changed. A writing
 * route without a list fails, so a new route cannot go unchecked. */
static void field_walk(struct probe *pr, struct walk_count *n)
{
	const struct api_route *r;
	size_t i;

	for (i = 0; (r = api_route_at(i)); i++) {
		const struct api_field *list, *f;
		if (!strcmp(r->method, "GET"))
			continue;
		if (!(list = api_fields_of(r))) {
			fprintf(stderr, "%s %s: no field list in api_fields.c\n", r->method, r->pattern);
			pr->failures++;
			continue;
		}
		n->routes++;
		for (f = list; f->name; f++) {
			char big[64];
			size_t before = n->requests;
			n->fields++;
			if (f->flags & API_F_REQUIRED) {
				field_case(pr, n, r, list, f, "missing", NULL, true);
				field_case(pr, n, r, list, f, "missing", NULL, false);
				field_case(pr, n, r, list, f, "empty", "\"\"", true);
			}
			if (f->type != API_F_STR) {
				field_case(pr, n, r, list, f, "a string", "\"x\"", true);
				field_case(pr, n, r, list, f, "not a number", "x", false);
			}
			if (f->type != API_F_INT && f->type != API_F_BOOL)
				field_case(pr, n, r, list, f, "a number", "5", true);
			if (f->type == API_F_INT)
				field_case(pr, n, r, list, f, "a fraction", "1.5", true);
			if (f->type != API_F_OBJECT)
				field_case(pr, n, r, list, f, "an object", "{\"a\": 1}", true);
			field_case(pr, n, r, list, f, "an array", "[1]", true);
			if (f->type == API_F_BOOL)
				field_case(pr, n, r, list, f, "not 0 or 1", "2", false);
			if (f->type == API_F_INT) {
				if (f->max < LLONG_MAX) {
					snprintf(big, sizeof(big), "%lld", f->max + 1);
					field_case(pr, n, r, list, f, "over its bound", big, false);
				} else {
					field_case(pr, n, r, list, f, "over its bound", "99999999999999999999", false);
				}
				if (f->min > LLONG_MIN) {
					snprintf(big, sizeof(big), "%lld", f->min - 1);
					field_case(pr, n, r, list, f, "under its bound", big, true);
				}
			}
			/* A string over its bound; those bounded by the body's
			 * limit alone are refused as a body over it (above). */
			if (f->type == API_F_STR && f->max > 0 && f->max < (long long)LIMIT_API_BODY - 4096) {
				struct buf v;
				buf_init(&v, LIMIT_API_BODY);
				buf_puts(&v, "\"");
				for (long long k = 0; k <= f->max; k++)
					buf_append(&v, "A", 1);
				buf_puts(&v, "\"");
				buf_append(&v, "", 1);
				field_case(pr, n, r, list, f, "over its length", v.data, true);
				v.data[v.len - 2] = '\0'; /* the form's value: no quotes */
				field_case(pr, n, r, list, f, "over its length", v.data + 1, false);
				buf_release(&v);
			}
			if (n->requests == before) {
				fprintf(stderr, "%s %s: field %s was not probed\n", r->method, r->pattern, f->name);
				pr->failures++;
			}
		}
	}
}

TEST(bad_input_every_route_refuses_and_changes_nothing)
{
	struct server_config cfg = { .listen = "127.0.0.1:0", .threads = 2, .per_ip_limit = -1 };
	char err[256] = "", key[AUTH_KEY_LEN + 1], secret[AUTH_KEY_LEN + 1], base[64], target[1024], *path;
	struct server *srv = NULL;
	struct http_client c;
	struct probe pr = { &c, NULL, 0 };
	struct walk_count walked = { 0, 0, 0 };
	struct db *db = NULL;
	const struct api_route *r;
	int64_t kid;
	size_t i;

	log_set_stderr_level(LOG_ERR);
	cfg.data_dir = unit_tmpdir();
	CHECK((path = server_db_path(cfg.data_dir, NULL, err, sizeof(err))) != NULL);
	CHECK_INT(db_open(&db, path, err, sizeof(err)), 0);
	CHECK_INT(auth_key_create(db, AUTH_ADMIN, 0, key, secret, &kid), 0);
	db_free(db);
	if (server_start(&srv, &cfg, err, sizeof(err)))
		FAIL("server: %s", err);
	snprintf(base, sizeof(base), "http://127.0.0.1:%u", server_port(srv));
	CHECK_INT(http_client_init(&c, base, key, secret), 0);
	pr.db_path = path;
	/* Something for the ids to name. */
	make(&c, "POST", "/api/v1/machines", NULL, "name=64bit&backend=qemu&settings%5BQEMURAM%5D=1024");
	make(&c, "POST", "/api/v1/products", NULL, "distri=vigil&version=1&flavor=f&arch=x86_64");
	make(&c, "POST", "/api/v1/test_suites", NULL, "name=boot");
	make(&c, "POST", "/api/v1/job_groups", NULL, "name=g");
	make(&c, "POST", "/api/v1/jobs", NULL, "DISTRI=vigil&VERSION=1&FLAVOR=f&ARCH=x86_64&TEST=boot&BUILD=1");
	make(&c, "POST", "/api/v1/jobs/1/comments", NULL, "text=hello");
	for (i = 0; (r = api_route_at(i)); i++) {
		bool writes = strcmp(r->method, "GET") != 0;
		/* The worker's long poll and the live stream wait on purpose: a
		 * bad id is still refused at once. */
		target_of(r, "1", "x", "?badparam=%FF", target, sizeof(target));
		refused(&pr, r, "not UTF-8", target, NULL, NULL, 0, "badparam");
		target_of(r, "1", "x", "?badparam=%zz", target, sizeof(target));
		refused(&pr, r, "bad escape", target, NULL, NULL, 0, "query string");
		if (writes && !strstr(r->pattern, "/artefact")) {
			target_of(r, "1", "x", "", target, sizeof(target));
			refused(&pr, r, "bad JSON", target, "application/json", "{\"name\": ", 9, "JSON");
			refused(&pr, r, "unsupported type", target, "text/plain", "x", 1, "Content-Type");
			too_big(&pr, r, target, server_port(srv), key, secret);
		}
		if (strchr(r->pattern, '#')) {
			target_of(r, "999999", "x", "", target, sizeof(target));
			refused(&pr, r, "an id that names nothing", target, writes ? "application/x-www-form-urlencoded" : NULL,
				writes ? "" : NULL, 0, NULL);
		}
	}
	over_bounds(&pr);
	field_walk(&pr, &walked);
	fprintf(stderr, "fields: %zu writing routes, %zu fields, %zu requests refused as they should be or not\n",
		walked.routes, walked.fields, walked.requests);
	CHECK(walked.routes >= 60);
	http_client_release(&c);
	server_free(srv);
	free(path);
	CHECK_INT(pr.failures, 0);
}

/* Two route tables that claim the same method and path: the first wins
 * and the other's handler is never reached (a retention PUT once shadowed
 * the review's). Every method and pattern is served by one route. */
TEST(routes_each_method_and_pattern_once)
{
	const struct api_route *a, *b;
	size_t i, j;

	for (i = 0; (a = api_route_at(i)); i++)
		for (j = i + 1; (b = api_route_at(j)); j++)
			if (!strcmp(a->method, b->method) && !strcmp(a->pattern, b->pattern))
				FAIL("%s %s is routed twice (routes %zu and %zu)", a->method, a->pattern, i, j);
}
