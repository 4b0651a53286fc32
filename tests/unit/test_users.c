/* SPDX-License-Identifier: MIT */
/* test_users.c - signing in: password hashes, users, sessions and their
 * expiry, CSRF tokens, the failed sign-in limit (time given, never
 * waited for), the same-site and return_to checks, the cookie text, the
 * keys users own, and the audit log's pages. */
#include <stdlib.h>
#include "unit.h"
#include "net/hmac.h"
#include "server/store/audit.h"
#include "server/store/auth.h"
#include "server/db/db.h"
#include "server/http/login.h"
#include "server/store/users.h"
#include "util/err.h"
#include "util/str.h"
#include "util/time.h"

TEST(users_password_hash_verify)
{
	char h[USERS_HASH_MAX], h2[USERS_HASH_MAX], bad[USERS_HASH_MAX];

	CHECK_INT(users_password_hash("correct horse", h, sizeof(h)), 0);
	CHECK(str_starts_with(h, "pbkdf2-sha256$310000$"));
	CHECK(users_password_verify("correct horse", h));
	CHECK(!users_password_verify("correct hors", h));
	CHECK(!users_password_verify("correct horse ", h));
	CHECK(!users_password_verify("", h));
	/* A fresh salt each time. */
	CHECK_INT(users_password_hash("correct horse", h2, sizeof(h2)), 0);
	CHECK(strcmp(h, h2) != 0);
	CHECK(users_password_verify("correct horse", h2));
	/* Tampered or malformed texts never match. */
	snprintf(bad, sizeof(bad), "%s", h);
	bad[strlen(bad) - 3] = bad[strlen(bad) - 3] == 'A' ? 'B' : 'A';
	CHECK(!users_password_verify("correct horse", bad));
	CHECK(!users_password_verify("x", "pbkdf2-sha256$10$c2FsdA==$AAAAAAAAAAAAAAAAAAAAAA=="));    /* too few rounds */
	CHECK(!users_password_verify("x", "pbkdf2-sha256$99999999999$c2FsdA==$AAAAAAAAAAAAAAAAAAAAAA=="));
	CHECK(!users_password_verify("x", "pbkdf2-sha256$310000$$"));
	CHECK(!users_password_verify("x", "pbkdf2-sha256$310000$!!!$AAAA"));
	CHECK(!users_password_verify("x", "plain"));
	CHECK(!users_password_verify("x", ""));
	CHECK(!users_password_verify(NULL, h));
	/* Known answer: PBKDF2-HMAC-SHA256("password", "salt", 1000 rounds, 32
	 * bytes) as python's hashlib.pbkdf2_hmac computes it. */
	CHECK(users_password_verify("password", "pbkdf2-sha256$1000$c2FsdA==$YywoEuRtRgQQK6dhjp1tfS+BKPYma0oDJk0qBGC33LM="));
	CHECK(users_password_hash("x", h, 40) == ERR_TOO_BIG);
}

TEST(users_names)
{
	char msg[256];

	CHECK_INT(users_name_check("alice", msg, sizeof(msg)), 0);
	CHECK_INT(users_name_check("<img src=x onerror=alert(1)>", msg, sizeof(msg)), 0);
	CHECK_INT(users_name_check("Jürgen Müller", msg, sizeof(msg)), 0);
	CHECK(users_name_check("", msg, sizeof(msg)) == ERR_INVALID);
	CHECK(users_name_check(NULL, msg, sizeof(msg)) == ERR_INVALID);
	CHECK(users_name_check("a\nb", msg, sizeof(msg)) == ERR_INVALID);
	CHECK(users_name_check(" alice", msg, sizeof(msg)) == ERR_INVALID);
	CHECK(users_name_check("key:0123", msg, sizeof(msg)) == ERR_INVALID);
	CHECK(users_name_check("\xff\xfe", msg, sizeof(msg)) == ERR_INVALID);
	CHECK(users_name_check("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", msg, sizeof(msg)) ==
	      ERR_INVALID); /* 65 bytes */
}

TEST(users_add_login)
{
	struct db *db = unit_db();
	struct users_user u;
	char msg[256];
	json_t *a;

	CHECK_INT(users_add(db, "alice", AUTH_OPERATOR, "alice-password", msg, sizeof(msg)), 0);
	CHECK_INT(users_add(db, "root", AUTH_ADMIN, "root-password", msg, sizeof(msg)), 0);
	CHECK(users_add(db, "alice", AUTH_ADMIN, "another-password", msg, sizeof(msg)) == ERR_INVALID);
	CHECK(strstr(msg, "exists") != NULL);
	CHECK(users_add(db, "bob", AUTH_PUBLIC, "short", msg, sizeof(msg)) == ERR_INVALID);
	CHECK_INT(users_login(db, "alice", "alice-password", &u), 0);
	CHECK_STR(u.name, "alice");
	CHECK_INT(u.role, AUTH_OPERATOR);
	CHECK(users_login(db, "alice", "root-password", &u) == ERR_INVALID);
	CHECK_STR(u.name, "");
	CHECK(users_login(db, "nobody", "alice-password", &u) == ERR_INVALID);
	CHECK(users_login(db, "alice", NULL, &u) == ERR_INVALID);
	CHECK_INT(users_set_role(db, "alice", AUTH_ADMIN), 0);
	CHECK_INT(users_login(db, "alice", "alice-password", &u), 0);
	CHECK_INT(u.role, AUTH_ADMIN);
	CHECK_INT(users_set_password(db, "alice", "new-alice-password", msg, sizeof(msg)), 0);
	CHECK(users_login(db, "alice", "alice-password", &u) == ERR_INVALID);
	CHECK_INT(users_login(db, "alice", "new-alice-password", &u), 0);
	CHECK_INT(users_list(db, &a), 0);
	CHECK_INT(json_array_size(a), 2);
	CHECK_STR(json_string_value(json_object_get(json_array_get(a, 0), "name")), "alice");
	CHECK_STR(json_string_value(json_object_get(json_array_get(a, 1), "role")), "admin");
	json_decref(a);
	CHECK_INT(users_delete(db, "root"), 0);
	CHECK(users_delete(db, "root") == ERR_NOT_FOUND);
	CHECK(users_set_role(db, "root", AUTH_ADMIN) == ERR_NOT_FOUND);
	db_free(db);
}

TEST(users_sessions)
{
	struct db *db = unit_db();
	struct users_session s, got;
	struct users_user u;
	char token[USERS_TOKEN_HEX + 1], token2[USERS_TOKEN_HEX + 1], msg[256], other[USERS_TOKEN_HEX + 1];
	int64_t now = 1700000000, n = -1;

	CHECK_INT(users_add(db, "alice", AUTH_OPERATOR, "alice-password", msg, sizeof(msg)), 0);
	CHECK_INT(users_login(db, "alice", "alice-password", &u), 0);
	CHECK_INT(users_session_new(db, &u, now, token, &s), 0);
	CHECK_INT((int)strlen(token), USERS_TOKEN_HEX);
	CHECK_INT((int)strlen(s.csrf), USERS_TOKEN_HEX);
	CHECK(strcmp(token, s.csrf) != 0);
	/* Only the token's hash is stored. */
	CHECK(db_query_int(db, &n, "SELECT COUNT(*) FROM sessions WHERE token_hash = ? OR csrf = ?", "tt", token, token) ==
	      0 && n == 0);
	CHECK_INT(users_session_check(db, token, now + 10, false, &got), 0);
	CHECK_STR(got.user.name, "alice");
	CHECK_INT(got.user.role, AUTH_OPERATOR);
	CHECK_STR(got.csrf, s.csrf);
	CHECK_INT(got.expires_s, now + USERS_SESSION_TTL_S);
	/* Malformed and unknown tokens. */
	snprintf(other, sizeof(other), "%s", token);
	other[0] = other[0] == 'a' ? 'b' : 'a';
	CHECK(users_session_check(db, other, now, false, &got) == ERR_NOT_FOUND);
	CHECK(users_session_check(db, "abc", now, false, &got) == ERR_NOT_FOUND);
	CHECK(users_session_check(db, NULL, now, false, &got) == ERR_NOT_FOUND);
	/* Expiry, and sliding it forward (only once the slide step passed). */
	CHECK(users_session_check(db, token, now + USERS_SESSION_TTL_S, false, &got) == ERR_NOT_FOUND);
	CHECK_INT(users_session_check(db, token, now + 60, true, &got), 0);
	CHECK_INT(got.expires_s, now + USERS_SESSION_TTL_S);
	CHECK_INT(users_session_check(db, token, now + USERS_SESSION_SLIDE_S + 1, true, &got), 0);
	CHECK_INT(got.expires_s, now + USERS_SESSION_SLIDE_S + 1 + USERS_SESSION_TTL_S);
	CHECK_INT(users_session_check(db, token, now + USERS_SESSION_TTL_S, false, &got), 0);
	/* The role is read at each check. */
	CHECK_INT(users_set_role(db, "alice", AUTH_ADMIN), 0);
	CHECK_INT(users_session_check(db, token, now, false, &got), 0);
	CHECK_INT(got.user.role, AUTH_ADMIN);
	/* Sign-out, expiry sweep, a new password ends every session. */
	CHECK_INT(users_session_new(db, &u, now, token2, &s), 0);
	CHECK_INT(users_session_end(db, s.id), 0);
	CHECK(users_session_check(db, token2, now, false, &got) == ERR_NOT_FOUND);
	CHECK_INT(users_session_new(db, &u, now - USERS_SESSION_TTL_S, token2, &s), 0);
	CHECK_INT(users_sessions_expire(db, now), 0);
	CHECK_INT(db_query_int(db, &n, "SELECT COUNT(*) FROM sessions", NULL), 0);
	CHECK_INT(n, 1);
	CHECK_INT(users_set_password(db, "alice", "new-alice-password", msg, sizeof(msg)), 0);
	CHECK(users_session_check(db, token, now, false, &got) == ERR_NOT_FOUND);
	CHECK_INT(users_session_new(db, &u, now, token2, &s), 0);
	CHECK_INT(users_session_end_token(db, token2), 0);
	CHECK(users_session_check(db, token2, now, false, &got) == ERR_NOT_FOUND);
	/* Deleting the user ends their sessions. */
	CHECK_INT(users_session_new(db, &u, now, token2, &s), 0);
	CHECK_INT(users_delete(db, "alice"), 0);
	CHECK(users_session_check(db, token2, now, false, &got) == ERR_NOT_FOUND);
	db_free(db);
}

TEST(users_csrf_compare)
{
	struct users_session s;
	char t[USERS_TOKEN_HEX + 1];

	memset(&s, 0, sizeof(s));
	memset(s.csrf, 'a', USERS_TOKEN_HEX);
	memcpy(t, s.csrf, sizeof(t));
	CHECK(users_csrf_ok(&s, t));
	t[USERS_TOKEN_HEX - 1] = 'b';
	CHECK(!users_csrf_ok(&s, t));
	t[USERS_TOKEN_HEX - 1] = '\0';
	CHECK(!users_csrf_ok(&s, t));
	CHECK(!users_csrf_ok(&s, NULL));
	CHECK(!users_csrf_ok(&s, ""));
	CHECK(!users_csrf_ok(NULL, s.csrf));
	s.csrf[0] = '\0'; /* a session without a token matches nothing, not even "" */
	CHECK(!users_csrf_ok(&s, ""));
}

TEST(login_rate_limit)
{
	struct login_limit l;
	int64_t t = 1000;
	int i;
	char key[32];

	login_limit_init(&l);
	CHECK_INT(login_limit_wait(&l, "user:alice", 5, t), 0);
	for (i = 0; i < 5; i++) {
		CHECK_INT(login_limit_wait(&l, "user:alice", 5, t + i), 0); /* tries 1..5 may go ahead */
		login_limit_fail(&l, "user:alice", t + i);
	}
	/* The 6th within the window waits for the window's end. */
	CHECK_INT(login_limit_wait(&l, "user:alice", 5, t + 5), LOGIN_WINDOW_S - 5);
	CHECK_INT(login_limit_wait(&l, "user:alice", 5, t + LOGIN_WINDOW_S - 1), 1);
	CHECK_INT(login_limit_wait(&l, "user:alice", 5, t + LOGIN_WINDOW_S), 0);
	/* Others are not affected; a higher bound is not reached yet. */
	CHECK_INT(login_limit_wait(&l, "user:bob", 5, t + 5), 0);
	CHECK_INT(login_limit_wait(&l, "user:alice", 20, t + 5), 0);
	/* A new window starts after the old one. */
	login_limit_fail(&l, "user:alice", t + LOGIN_WINDOW_S);
	CHECK_INT(login_limit_wait(&l, "user:alice", 1, t + LOGIN_WINDOW_S), LOGIN_WINDOW_S);
	CHECK_INT(login_limit_wait(&l, "user:alice", 2, t + LOGIN_WINDOW_S), 0);
	login_limit_clear(&l, "user:alice");
	CHECK_INT(login_limit_wait(&l, "user:alice", 1, t + LOGIN_WINDOW_S), 0);
	/* A full table forgets the oldest window first. */
	for (i = 0; i < LOGIN_LIMIT_ENTRIES; i++) {
		snprintf(key, sizeof(key), "addr:%d", i);
		login_limit_fail(&l, key, t + 100 + (i == 0 ? 0 : 1));
	}
	login_limit_fail(&l, "addr:new", t + 102);
	CHECK_INT(login_limit_wait(&l, "addr:new", 1, t + 102), LOGIN_WINDOW_S);
	CHECK_INT(login_limit_wait(&l, "addr:0", 1, t + 102), 0);
	CHECK(login_limit_wait(&l, "addr:1", 1, t + 102) > 0);
	login_limit_release(&l);
}

TEST(login_same_site_and_return_to)
{
	char *c;

	CHECK(login_same_site("http://127.0.0.1:9526", NULL, "127.0.0.1:9526"));
	CHECK(login_same_site("https://QA.example.org", NULL, "qa.example.org"));
	CHECK(!login_same_site("http://evil.example", NULL, "qa.example.org"));
	CHECK(!login_same_site("http://qa.example.org.evil.example", NULL, "qa.example.org"));
	CHECK(!login_same_site("http://127.0.0.1:9527", NULL, "127.0.0.1:9526"));
	CHECK(!login_same_site("null", NULL, "127.0.0.1:9526"));
	CHECK(!login_same_site("http://127.0.0.1:9526", NULL, NULL));
	CHECK(login_same_site(NULL, "http://127.0.0.1:9526/login?return_to=/tests", "127.0.0.1:9526"));
	CHECK(!login_same_site(NULL, "http://evil.example/127.0.0.1:9526", "127.0.0.1:9526"));
	CHECK(!login_same_site(NULL, "http://127.0.0.1:9526@evil.example/", "127.0.0.1:9526@evil.example"));
	CHECK(login_same_site(NULL, NULL, "127.0.0.1:9526")); /* a program, not a browser */
	CHECK(login_return_to_ok("/tests/1#step/boot/1"));
	CHECK(login_return_to_ok("/"));
	CHECK(!login_return_to_ok("//evil.example/"));
	CHECK(!login_return_to_ok("/\\evil.example"));
	CHECK(!login_return_to_ok("https://evil.example/"));
	CHECK(!login_return_to_ok("javascript:alert(1)"));
	CHECK(!login_return_to_ok("/a\r\nSet-Cookie: x=1"));
	CHECK(!login_return_to_ok(""));
	CHECK(!login_return_to_ok(NULL));
	c = login_cookie("abc", 60, false);
	CHECK_STR(c, "vigil_session=abc; Path=/; Max-Age=60; HttpOnly; SameSite=Lax");
	free(c);
	c = login_cookie("", 0, true);
	CHECK_STR(c, "vigil_session=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax; Secure");
	free(c);
}

TEST(users_api_keys)
{
	struct db *db = unit_db();
	struct users_user alice, bob;
	char key[AUTH_KEY_LEN + 1], secret[AUTH_KEY_LEN + 1], k2[AUTH_KEY_LEN + 1], s2[AUTH_KEY_LEN + 1];
	char msg[512], now[32], h[HMAC_HEX_LEN + 1], name[80], gone[AUTH_KEY_LEN + 1];
	enum auth_level level;
	int64_t id = 0, id2 = 0;
	json_t *a;

	CHECK_INT(users_add(db, "alice", AUTH_OPERATOR, "alice-password", msg, sizeof(msg)), 0);
	CHECK_INT(users_add(db, "bob", AUTH_PUBLIC, "bob-password", msg, sizeof(msg)), 0);
	CHECK_INT(users_login(db, "alice", "alice-password", &alice), 0);
	CHECK_INT(users_login(db, "bob", "bob-password", &bob), 0);
	CHECK_INT(auth_key_create(db, alice.role, alice.id, key, secret, &id), 0);
	CHECK_INT(auth_key_create(db, bob.role, bob.id, k2, s2, &id2), 0);
	snprintf(now, sizeof(now), "%.0f", time_wall());
	CHECK_INT(hmac_sign(secret, "/api/v1/jobs", now, h), 0);
	CHECK_INT(auth_check(db, key, now, h, "/api/v1/jobs", time_wall(), &level, msg, sizeof(msg)), 0);
	CHECK_INT(level, AUTH_OPERATOR);
	/* The key follows its owner's role. */
	CHECK_INT(users_set_role(db, "alice", AUTH_ADMIN), 0);
	CHECK_INT(auth_check(db, key, now, h, "/api/v1/jobs", time_wall(), &level, msg, sizeof(msg)), 0);
	CHECK_INT(level, AUTH_ADMIN);
	CHECK_INT(hmac_sign(s2, "/api/v1/jobs", now, h), 0);
	CHECK_INT(auth_check(db, k2, now, h, "/api/v1/jobs", time_wall(), &level, msg, sizeof(msg)), 0);
	CHECK_INT(level, AUTH_PUBLIC);
	CHECK_INT(auth_key_owner(db, key, name, sizeof(name)), 0);
	CHECK_STR(name, "alice");
	/* A key of no user has no owner. */
	CHECK_INT(auth_key_new(db, false, k2, s2), 0);
	CHECK(auth_key_owner(db, k2, name, sizeof(name)) == ERR_NOT_FOUND);
	CHECK_INT(auth_keys_list(db, alice.id, &a), 0);
	CHECK_INT(json_array_size(a), 1);
	CHECK_STR(json_string_value(json_object_get(json_array_get(a, 0), "key")), key);
	CHECK(json_object_get(json_array_get(a, 0), "secret") == NULL);
	json_decref(a);
	/* Only the owner revokes. */
	CHECK(auth_key_revoke(db, bob.id, id, gone) == ERR_NOT_FOUND);
	CHECK_INT(auth_key_revoke(db, alice.id, id, gone), 0);
	CHECK_STR(gone, key);
	CHECK(auth_check(db, key, now, h, "/api/v1/jobs", time_wall(), &level, msg, sizeof(msg)) != 0);
	/* Deleting a user revokes their keys. */
	CHECK_INT(auth_keys_list(db, bob.id, &a), 0);
	CHECK_INT(json_array_size(a), 1);
	json_decref(a);
	CHECK_INT(users_delete(db, "bob"), 0);
	CHECK(auth_key_owner(db, k2, name, sizeof(name)) == ERR_NOT_FOUND);
	CHECK_INT(db_query_int(db, &id, "SELECT COUNT(*) FROM api_keys", NULL), 0);
	CHECK_INT(id, 1);
	db_free(db);
}

TEST(audit_log_pages)
{
	struct db *db = unit_db();
	json_t *page, *d = json_pack("{s:i}", "id", 7), *ev;
	int i;
	char name[16];

	for (i = 1; i <= 7; i++) {
		snprintf(name, sizeof(name), "event%d", i);
		CHECK_INT(audit_record(db, i == 7 ? NULL : "alice", name, i == 1 ? d : NULL), 0);
	}
	json_decref(d);
	CHECK_INT(audit_list(db, 0, 0, 3, &page), 0);
	ev = json_object_get(page, "events");
	CHECK_INT(json_array_size(ev), 3);
	CHECK_INT(json_integer_value(json_object_get(json_array_get(ev, 0), "id")), 7);
	CHECK_STR(json_string_value(json_object_get(json_array_get(ev, 0), "user")), "anonymous");
	CHECK_INT(json_integer_value(json_object_get(json_array_get(ev, 2), "id")), 5);
	CHECK(json_is_true(json_object_get(page, "older")));
	CHECK(json_is_false(json_object_get(page, "newer")));
	json_decref(page);
	CHECK_INT(audit_list(db, 3, 0, 3, &page), 0);
	ev = json_object_get(page, "events");
	CHECK_INT(json_array_size(ev), 2);
	CHECK_INT(json_integer_value(json_object_get(json_array_get(ev, 1), "id")), 1);
	CHECK_INT(json_integer_value(json_object_get(json_object_get(json_array_get(ev, 1), "details"), "id")), 7);
	CHECK(json_is_false(json_object_get(page, "older")));
	CHECK(json_is_true(json_object_get(page, "newer")));
	json_decref(page);
	/* Newer than 2: 3, 4, 5, shown newest first. */
	CHECK_INT(audit_list(db, 0, 2, 3, &page), 0);
	ev = json_object_get(page, "events");
	CHECK_INT(json_array_size(ev), 3);
	CHECK_INT(json_integer_value(json_object_get(json_array_get(ev, 0), "id")), 5);
	CHECK_INT(json_integer_value(json_object_get(json_array_get(ev, 2), "id")), 3);
	CHECK(json_is_true(json_object_get(page, "older")));
	CHECK(json_is_true(json_object_get(page, "newer")));
	json_decref(page);
	db_free(db);
}
