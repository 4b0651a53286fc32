/* SPDX-License-Identifier: MIT */
/* test_client_conf.c - client.conf: section names for a URL, the INI
 * reader (comments, spacing, last line wins, errors with line numbers)
 * and the search through $OPENQA_CONFIG and ~/.config/openqa. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "unit.h"
#include "cmd/client_conf.h"
#include "util/err.h"

TEST(client_conf_sections)
{
	char n[3][CLIENT_CONF_VALUE];

	CHECK_INT(client_conf_sections("http://127.0.0.1:9526/", n, 3), 3);
	CHECK_STR(n[0], "127.0.0.1:9526");
	CHECK_STR(n[1], "127.0.0.1");
	CHECK_STR(n[2], "http://127.0.0.1:9526");
	CHECK_INT(client_conf_sections("openqa.example.com", n, 3), 1);
	CHECK_STR(n[0], "openqa.example.com");
	CHECK_INT(client_conf_sections("https://[::1]:9526", n, 3), 3);
	CHECK_STR(n[1], "::1");
}

TEST(client_conf_parse)
{
	char n[3][CLIENT_CONF_VALUE], err[256];
	struct client_cred c;
	const char *text = "# comment\n[other]\nkey = X\nsecret = Y\n\n[127.0.0.1]\n  key=AAAA \n; c\nsecret = BBBB\n"
			   "key = CCCC\t\n";

	client_conf_sections("http://127.0.0.1:9526", n, 3);
	CHECK_INT(client_conf_parse(text, strlen(text), n, 3, &c, err, sizeof(err)), 0);
	CHECK_STR(c.key, "CCCC");
	CHECK_STR(c.secret, "BBBB");
	/* host:port is more specific than host. */
	text = "[127.0.0.1]\nkey=A\nsecret=B\n[127.0.0.1:9526]\nkey=C\nsecret=D\n";
	CHECK_INT(client_conf_parse(text, strlen(text), n, 3, &c, err, sizeof(err)), 0);
	CHECK_STR(c.key, "C");
	text = "[127.0.0.1]\nkey=A\n";
	CHECK_INT(client_conf_parse(text, strlen(text), n, 3, &c, err, sizeof(err)), ERR_NOT_FOUND);
	CHECK(strstr(err, "secret"));
	text = "[127.0.0.1]\nkey A\n";
	CHECK_INT(client_conf_parse(text, strlen(text), n, 3, &c, err, sizeof(err)), ERR_PROTO);
	CHECK(strstr(err, "line 2"));
	text = "[x]\nkey=A\nsecret=B\n";
	CHECK_INT(client_conf_parse(text, strlen(text), n, 3, &c, err, sizeof(err)), ERR_NOT_FOUND);
}

TEST(client_conf_lookup)
{
	char dir[512], file[600], used[600], err[1024];
	struct client_cred c;
	FILE *f;

	snprintf(dir, sizeof(dir), "%s", unit_tmpdir());
	snprintf(file, sizeof(file), "%s/client.conf", dir);
	f = fopen(file, "w");
	CHECK(f);
	fputs("[localhost]\nkey = K1\nsecret = S1\n", f);
	fclose(f);
	setenv("OPENQA_CONFIG", dir, 1);
	setenv("HOME", dir, 1);
	CHECK_INT(client_conf_lookup(NULL, "http://localhost:9526", &c, used, sizeof(used), err, sizeof(err)), 0);
	CHECK_STR(c.key, "K1");
	CHECK_STR(used, file);
	CHECK_INT(client_conf_lookup(file, "localhost", &c, NULL, 0, err, sizeof(err)), 0);
	CHECK(client_conf_lookup(NULL, "http://elsewhere:1", &c, NULL, 0, err, sizeof(err)) != 0);
	CHECK(strstr(err, "elsewhere"));
	CHECK(client_conf_lookup("/nonexistent/client.conf", "localhost", &c, NULL, 0, err, sizeof(err)) != 0);
	CHECK(strstr(err, "/nonexistent/client.conf"));
}
