/* SPDX-License-Identifier: MIT */
/* test_conf.c - the INI reader (sections, comments, last value wins,
 * errors with line numbers), choosing the file (--config, $VIGIL_CONFIG)
 * and a section applied as a command's long options. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "unit.h"
#include "util/conf.h"
#include "util/err.h"

TEST(conf_parse)
{
	const char *t = "# c\n[server]\n listen = 127.0.0.1:1 \n;x\n[worker]\nclass=a,b\n[server]\nlisten=:2\nempty =\n";
	const struct conf_entry *e;
	struct conf c;
	char err[256];

	conf_init(&c);
	CHECK_INT(conf_parse(&c, t, strlen(t), err, sizeof(err)), 0);
	e = conf_get(&c, "server", "listen");
	CHECK(e);
	CHECK_STR(e->value, ":2");
	CHECK_INT(e->line, 8);
	CHECK_STR(conf_get(&c, "worker", "class")->value, "a,b");
	CHECK_STR(conf_get(&c, "server", "empty")->value, "");
	CHECK(!conf_get(&c, "worker", "listen"));
	CHECK(conf_has_section(&c, "worker"));
	CHECK_INT(c.nsections, 2);
	conf_release(&c);

	conf_init(&c);
	t = "[a]\nk v\n";
	CHECK_INT(conf_parse(&c, t, strlen(t), err, sizeof(err)), ERR_PROTO);
	CHECK(strstr(err, "line 2"));
	conf_release(&c);
	conf_init(&c);
	t = "[a\n";
	CHECK_INT(conf_parse(&c, t, strlen(t), err, sizeof(err)), ERR_PROTO);
	CHECK(strstr(err, "line 1") && strstr(err, "]"));
	conf_release(&c);
	conf_init(&c);
	CHECK_INT(conf_parse(&c, "[a]\nk=\0v\n", 8, err, sizeof(err)), ERR_PROTO);
	CHECK(strstr(err, "NUL"));
	conf_release(&c);
	conf_init(&c);
	t = "[a]\n = v\n";
	CHECK_INT(conf_parse(&c, t, strlen(t), err, sizeof(err)), ERR_PROTO);
	conf_release(&c);
	/* No final newline, CRLF line ends. */
	conf_init(&c);
	t = "[a]\r\nk = v\r\nlast=1";
	CHECK_INT(conf_parse(&c, t, strlen(t), err, sizeof(err)), 0);
	CHECK_STR(conf_get(&c, "a", "k")->value, "v");
	CHECK_STR(conf_get(&c, "a", "last")->value, "1");
	conf_release(&c);
}

TEST(conf_sections_and_bool)
{
	static const char *const known[] = { "server", "worker", NULL };
	const char *t = "[server]\nx=1\n\n[serer]\ny=2\n";
	struct conf c;
	char err[512];
	bool b;

	conf_init(&c);
	CHECK_INT(conf_parse(&c, t, strlen(t), err, sizeof(err)), 0);
	CHECK_INT(conf_check_sections(&c, known, err, sizeof(err)), ERR_INVALID);
	CHECK(strstr(err, "-:4") && strstr(err, "[serer]") && strstr(err, "[worker]"));
	conf_release(&c);
	conf_init(&c);
	t = "top = 1\n[server]\n";
	CHECK_INT(conf_parse(&c, t, strlen(t), err, sizeof(err)), 0);
	CHECK_INT(conf_check_sections(&c, known, err, sizeof(err)), ERR_INVALID);
	CHECK(strstr(err, "-:1") && strstr(err, "top"));
	conf_release(&c);
	CHECK_INT(conf_bool("Yes", &b), 0);
	CHECK(b);
	CHECK_INT(conf_bool("off", &b), 0);
	CHECK(!b);
	CHECK_INT(conf_bool("maybe", &b), ERR_INVALID);
}

struct opts_seen {
	const char *listen;
	long threads;
	int flag;
};

static int apply(void *ctx, int val, const char *arg, char *err, size_t errlen)
{
	struct opts_seen *s = ctx;

	switch (val) {
	case 'l': s->listen = arg; return 0;
	case 'f': s->flag++; return arg == NULL ? 0 : ERR_INVALID;
	case 't':
		s->threads = strtol(arg, NULL, 10);
		if (s->threads <= 0) {
			err_set(err, errlen, "'%s': expected a positive number", arg);
			return ERR_INVALID;
		}
		return 0;
	}
	return ERR_INVALID;
}

TEST(conf_apply_options)
{
	static const struct option opts[] = {
		{ "listen", required_argument, NULL, 'l' }, { "threads", required_argument, NULL, 't' },
		{ "flag", no_argument, NULL, 'f' }, { "config", required_argument, NULL, 'c' }, { NULL, 0, NULL, 0 },
	};
	static const char *const skip[] = { "config", NULL };
	struct opts_seen s = { NULL, 0, 0 };
	const char *t = "[worker]\nbogus=1\n[server]\nlisten = :1\nthreads = 4\nflag = true\n";
	struct conf c;
	char err[512];

	conf_init(&c);
	CHECK_INT(conf_parse(&c, t, strlen(t), err, sizeof(err)), 0);
	CHECK_INT(conf_apply_options(&c, "server", opts, skip, apply, &s, err, sizeof(err)), 0);
	CHECK_STR(s.listen, ":1");
	CHECK_INT(s.threads, 4);
	CHECK_INT(s.flag, 1);
	conf_release(&c);

	conf_init(&c);
	t = "[server]\nflag = false\nthreads = -2\n";
	CHECK_INT(conf_parse(&c, t, strlen(t), err, sizeof(err)), 0);
	CHECK_INT(conf_apply_options(&c, "server", opts, skip, apply, &s, err, sizeof(err)), ERR_INVALID);
	CHECK_INT(s.flag, 1); /* false: not applied */
	CHECK(strstr(err, "-:3: [server] threads: '-2': expected a positive number"));
	conf_release(&c);

	const char *bad[] = { "[server]\nthred = 1\n", "[server]\nconfig = /x\n", "[server]\nflag = 2\n",
			      "[server]\nlisten =\n" };
	const char *want[] = { "-:2: [server] thred: unknown key", "-:2: [server] config: unknown key",
			       "-:2: [server] flag: '2' is not a boolean", "-:2: [server] listen: no value" };
	for (size_t i = 0; i < 4; i++) {
		conf_init(&c);
		CHECK_INT(conf_parse(&c, bad[i], strlen(bad[i]), err, sizeof(err)), 0);
		CHECK_INT(conf_apply_options(&c, "server", opts, skip, apply, &s, err, sizeof(err)), ERR_INVALID);
		if (!strstr(err, want[i]))
			FAIL("'%s' lacks '%s'", err, want[i]);
		conf_release(&c);
	}
}

TEST(conf_pick_and_load)
{
	char file[600], err[1024];
	const char *path, *v;
	char *argv[] = { "serve", "--listen", "x", "--config", "a.conf", "--config=b.conf", "--", "--config", "c" };
	struct conf c;
	bool missing;
	FILE *f;

	v = conf_argv_value(9, argv, "config", &missing);
	CHECK_STR(v, "b.conf");
	CHECK(!missing);
	v = conf_argv_value(4, argv, "config", &missing);
	CHECK(!v && missing);
	CHECK(!conf_argv_value(3, argv, "config", &missing));

	snprintf(file, sizeof(file), "%s/vigil.conf", unit_tmpdir());
	f = fopen(file, "w");
	CHECK(f);
	fputs("[server]\ndata = /var/lib/vigil\n[server\n", f);
	fclose(f);
	unsetenv("VIGIL_CONFIG");
	CHECK_INT(conf_pick(file, &path, err, sizeof(err)), 0);
	CHECK_STR(path, file);
	CHECK_INT(conf_pick("/nonexistent/v.conf", &path, err, sizeof(err)), ERR_NOT_FOUND);
	CHECK(strstr(err, "/nonexistent/v.conf"));
	setenv("VIGIL_CONFIG", file, 1);
	CHECK_INT(conf_pick(NULL, &path, err, sizeof(err)), 0);
	CHECK_STR(path, file);
	setenv("VIGIL_CONFIG", "/nonexistent/env.conf", 1);
	CHECK_INT(conf_pick(NULL, &path, err, sizeof(err)), ERR_NOT_FOUND);
	CHECK(strstr(err, "VIGIL_CONFIG") && strstr(err, "/nonexistent/env.conf"));
	unsetenv("VIGIL_CONFIG");

	conf_init(&c);
	CHECK_INT(conf_load(&c, file, err, sizeof(err)), ERR_PROTO);
	CHECK(strstr(err, file) && strstr(err, "line 3"));
	conf_release(&c);
	conf_init(&c);
	CHECK(conf_load(&c, "/nonexistent/v.conf", err, sizeof(err)) != 0);
	CHECK(strstr(err, "/nonexistent/v.conf"));
	conf_release(&c);
}
