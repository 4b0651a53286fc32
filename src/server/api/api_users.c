/* SPDX-License-Identifier: MIT */
/* api_users.c - signing in and out of the web UI, the session as the
 * pages see it, and a signed-in user's own API keys. Parses and answers;
 * users and sessions are users.c, keys auth.c, the failure limit and
 * cookie text login.c. server.c has already matched the request's cookie
 * to req->session (writes only with the right X-CSRF-Token).
 *
 *   method path                           who          what
 *   POST   /login                         anyone       user, password [, return_to]: a session cookie
 *   POST   /logout                        session      end the session
 *   GET    /api/v1/session                anyone       {"user": null} or {"user": {...}, "csrf": token}
 *   GET    /api/v1/user/api_keys          session      the user's keys (no secrets)
 *   POST   /api/v1/user/api_keys          session      a new key; its secret is shown this once
 *   DELETE /api/v1/user/api_keys/<id>     session      revoke one of the user's keys
 *   GET    /api/v1/api_keys               admin        every key (no secrets), with refuse_legacy
 *   PUT    /api/v1/api_keys/<KEY>         admin        refuse_legacy=1|0: refuse openQA's legacy
 *                                                      signatures for KEY (scheme 2 only), or take them
 */
#define LOG_MODULE "api"
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "server/http/api.h"
#include "server/store/audit.h"
#include "server/store/auth.h"
#include "server/http/login.h"
#include "server/store/users.h"
#include "util/err.h"
#include "util/log.h"
#include "util/banned.h" /* last: after every system header */

static bool wants_json(const struct api_req *req)
{
	return req->accept && strstr(req->accept, "application/json");
}

static void record(struct api_req *req, struct api_resp *out, const char *actor, const char *event, json_t *detail)
{
	if (audit_record(req->db, actor, event, detail))
		log_err("cannot record '%s' of '%s' in the audit log", event, actor);
	json_decref(detail);
	out->audited = true;
}

/* A route for signed-in pages only: false after answering 403. */
static bool need_session(const struct api_req *req, struct api_resp *out)
{
	if (req->session)
		return true;
	if (req->csrf_failed)
		api_error(out, 403, "missing or wrong X-CSRF-Token (a page sends its session's token, "
			  "from GET /api/v1/session, with every write)");
	else
		api_error(out, 403, "not signed in (or the session expired): sign in at /login");
	return false;
}

static json_t *user_json(const struct users_user *u)
{
	return json_pack("{s:s,s:s}", "name", u->name, "role", auth_level_name(u->role));
}

static void login_post(struct api_req *req, struct api_resp *out)
{
	const char *name = params_get(&req->params, "user"), *pw = params_get(&req->params, "password");
	const char *ret = params_get(&req->params, "return_to");
	char by_user[LOGIN_LIMIT_KEY], by_addr[LOGIN_LIMIT_KEY], token[USERS_TOKEN_HEX + 1];
	int64_t now = (int64_t)time(NULL), wait, w;
	struct users_session s;
	struct users_user u;
	int rc;

	if (!login_same_site(api_header(req, "Origin"), api_header(req, "Referer"), api_header(req, "Host"))) {
		log_warn("sign-in from %s refused: sent from another site (Origin '%s')", req->client_addr,
			 api_header(req, "Origin") ? api_header(req, "Origin") : "");
		api_error(out, 403, "sign-in refused: the form was sent from another site");
		return;
	}
	if (!name || !*name || !pw) {
		api_error(out, 400, "send the form fields user and password");
		return;
	}
	if (!login_return_to_ok(ret))
		ret = "/";
	snprintf(by_user, sizeof(by_user), "user:%s", name);
	snprintf(by_addr, sizeof(by_addr), "addr:%s", req->client_addr ? req->client_addr : "");
	wait = login_limit_wait(req->login_limit, by_addr, LOGIN_MAX_FAILS_ADDR, now);
	w = login_limit_wait(req->login_limit, by_user, LOGIN_MAX_FAILS_USER, now);
	if (w > wait)
		wait = w;
	if (wait > 0) {
		out->hdr_name = "Retry-After";
		snprintf(out->hdr_value, sizeof(out->hdr_value), "%lld", (long long)wait);
		api_error(out, 429, "too many failed sign-ins: try again in %lld s", (long long)wait);
		return;
	}
	rc = users_login(req->db, name, pw, &u);
	if (rc == ERR_INVALID) {
		login_limit_fail(req->login_limit, by_user, now);
		login_limit_fail(req->login_limit, by_addr, now);
		/* The name is the client's: logged only when it could name a user. */
		log_warn("sign-in as '%s' from %s failed", users_name_check(name, NULL, 0) ? "(not a user name)" : name,
			 req->client_addr);
		api_error(out, 403, "wrong user name or password");
		return;
	}
	if (rc) {
		api_error(out, 500, "cannot read the users");
		return;
	}
	login_limit_clear(req->login_limit, by_user);
	/* A new token each time: a cookie planted before the sign-in is worth nothing after it. */
	(void)users_session_end_token(req->db, api_cookie(req, LOGIN_COOKIE));
	(void)users_sessions_expire(req->db, now);
	if (users_session_new(req->db, &u, now, token, &s)) {
		api_error(out, 500, "cannot open a session");
		return;
	}
	out->set_cookie = login_cookie(token, USERS_SESSION_TTL_S, req->secure_cookies);
	if (!out->set_cookie) {
		api_error(out, 500, "out of memory");
		return;
	}
	record(req, out, u.name, "user_login", json_pack("{s:s}", "address", req->client_addr ? req->client_addr : ""));
	if (wants_json(req)) {
		api_json(out, json_pack("{s:o,s:s,s:s}", "user", user_json(&u), "csrf", s.csrf, "return_to", ret));
		return;
	}
	out->status = 303;
	out->location = strdup(ret);
	out->text = strdup("signed in\n");
}

static void logout_post(struct api_req *req, struct api_resp *out)
{
	const struct users_session *s = req->session;

	if (!need_session(req, out))
		return;
	if (users_session_end(req->db, s->id)) {
		api_error(out, 500, "cannot end the session");
		return;
	}
	out->set_cookie = login_cookie("", 0, req->secure_cookies);
	record(req, out, s->user.name, "user_logout", NULL);
	if (wants_json(req)) {
		api_json(out, json_pack("{s:n}", "user"));
		return;
	}
	out->status = 303;
	out->location = strdup("/");
	out->text = strdup("signed out\n");
}

static void session_get(struct api_req *req, struct api_resp *out)
{
	const struct users_session *s = req->session;

	out->hdr_name = "Cache-Control";
	snprintf(out->hdr_value, sizeof(out->hdr_value), "no-store");
	if (!s) {
		/* A cookie that names no live session is dropped. */
		if (api_cookie(req, LOGIN_COOKIE))
			out->set_cookie = login_cookie("", 0, req->secure_cookies);
		api_json(out, json_pack("{s:n}", "user"));
		return;
	}
	api_json(out, json_pack("{s:o,s:s}", "user", user_json(&s->user), "csrf", s->csrf));
}

static void keys_get(struct api_req *req, struct api_resp *out)
{
	json_t *a;

	if (!need_session(req, out))
		return;
	if (auth_keys_list(req->db, req->session->user.id, &a)) {
		api_error(out, 500, "cannot read the API keys");
		return;
	}
	api_json(out, json_pack("{s:o}", "api_keys", a));
}

static void keys_post(struct api_req *req, struct api_resp *out)
{
	const struct users_session *s = req->session;
	char key[AUTH_KEY_LEN + 1], secret[AUTH_KEY_LEN + 1];
	int64_t id = 0;
	int rc;

	if (!need_session(req, out))
		return;
	rc = auth_key_create(req->db, s->user.role, s->user.id, key, secret, &id);
	if (rc == ERR_TOO_BIG) {
		api_error(out, 400, "you hold %d API keys already: revoke one first", AUTH_USER_KEYS_MAX);
		return;
	}
	if (rc) {
		api_error(out, 500, "cannot create an API key");
		return;
	}
	record(req, out, s->user.name, "api_key_create", json_pack("{s:I,s:s}", "id", (json_int_t)id, "key", key));
	api_json(out, json_pack("{s:I,s:s,s:s,s:s}", "id", (json_int_t)id, "key", key, "secret", secret, "role",
				auth_level_name(s->user.role)));
}

static void keys_delete(struct api_req *req, struct api_resp *out)
{
	const struct users_session *s = req->session;
	char key[AUTH_KEY_LEN + 1];
	int rc;

	if (!need_session(req, out))
		return;
	rc = auth_key_revoke(req->db, s->user.id, req->id, key);
	if (rc == ERR_NOT_FOUND) {
		api_error(out, 404, "you hold no API key %lld", (long long)req->id);
		return;
	}
	if (rc) {
		api_error(out, 500, "cannot revoke the API key");
		return;
	}
	record(req, out, s->user.name, "api_key_delete", json_pack("{s:I,s:s}", "id", (json_int_t)req->id, "key", key));
	api_json(out, json_pack("{s:I,s:b}", "id", (json_int_t)req->id, "deleted", 1));
}

static void all_keys_get(struct api_req *req, struct api_resp *out)
{
	json_t *a;

	if (auth_keys_all(req->db, &a)) {
		api_error(out, 500, "cannot read the API keys");
		return;
	}
	api_json(out, json_pack("{s:o}", "api_keys", a));
}

static void key_put(struct api_req *req, struct api_resp *out)
{
	const char *v = params_get(&req->params, "refuse_legacy");
	int rc;

	if (!v && req->json && json_is_boolean(json_object_get(req->json, "refuse_legacy")))
		v = json_is_true(json_object_get(req->json, "refuse_legacy")) ? "1" : "0";
	if (!v || (strcmp(v, "0") && strcmp(v, "1"))) {
		api_error(out, 400, "Erroneous parameters (refuse_legacy: expected 1 or 0)");
		return;
	}
	rc = auth_key_set_refuse_legacy(req->db, req->name, !strcmp(v, "1"));
	if (rc == ERR_NOT_FOUND) {
		api_error(out, 404, "no API key '%s'", req->name);
		return;
	}
	if (rc) {
		api_error(out, 500, "cannot change the API key");
		return;
	}
	api_json(out, json_pack("{s:s,s:b}", "key", req->name, "refuse_legacy", !strcmp(v, "1")));
}

/* Public routes: each handler checks the session itself, so a key-signed
 * request (no session) never manages keys. */
const struct api_route api_users_routes[] = {
	{ "POST", "/login", AUTH_PUBLIC, login_post, NULL },
	{ "POST", "/logout", AUTH_PUBLIC, logout_post, NULL },
	{ "GET", "/api/v1/session", AUTH_PUBLIC, session_get, NULL },
	{ "GET", "/api/v1/user/api_keys", AUTH_PUBLIC, keys_get, NULL },
	{ "POST", "/api/v1/user/api_keys", AUTH_PUBLIC, keys_post, NULL },
	{ "DELETE", "/api/v1/user/api_keys/#", AUTH_PUBLIC, keys_delete, NULL },
	{ "GET", "/api/v1/api_keys", AUTH_ADMIN, all_keys_get, NULL },
	{ "PUT", "/api/v1/api_keys/*", AUTH_ADMIN, key_put, NULL },
	{ NULL, NULL, 0, NULL, NULL },
};
