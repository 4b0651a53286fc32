/* SPDX-License-Identifier: MIT */
/* serve.c - `vigil serve --listen ADDR:PORT --data DIR`: option parsing,
 * then the server runs on its own thread until SIGINT/SIGTERM. */
#define LOG_MODULE "serve"
#include <getopt.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cmd/cmd.h"
#include "cmd/cmd_conf.h"
#include "server/events/events.h"
#include "server/server.h"
#include "util/err.h"
#include "util/log.h"
#include "util/str.h"
#include "util/banned.h" /* last: after every system header */

static const char serve_usage[] =
	"usage: vigil serve [--listen ADDR:PORT] [--data DIR] [--db URL] [--connections N]\n"
	"                   [--per-ip N] [--threads N] [--header-timeout S]\n"
	"                   [--secure-cookies] [--rerun-wait S] [--cleanup-interval S]\n"
	"                   [--user NAME] [--config FILE] [-v]\n"
	"\n"
	"Serves openQA's REST API (/api/v1: jobs, isos, machines, products,\n"
	"test_suites, job_groups, job_templates, workers, assets) from the SQLite\n"
	"database DIR/vigil.db (or PostgreSQL: --db), so openqa-cli, openqa-clone-job and the python\n"
	"openqa_client work against it. Reads are public; writes need an API key\n"
	"from 'vigil apikey new --data DIR', or, from the web UI, a user signed in\n"
	"(users: 'vigil user add'). Test distributions live in\n"
	"DIR/tests/<DISTRI>, assets (ISO, HDD_n, KERNEL... given as bare file\n"
	"names, disks published with PUBLISH_HDD_n) in DIR/factory/{iso,hdd,other}.\n"
	"\n"
	"  --listen ADDR:PORT  address to listen on (default 127.0.0.1:9526;\n"
	"                      [::1]:9526 for IPv6, port 0 picks a free port)\n"
	"  --data DIR          data directory, created 0700 (default ./vigil-data)\n"
	"  --db URL            the database: a PostgreSQL URL, postgresql://USER@HOST\n"
	"                      /NAME or postgresql:///NAME?host=/SOCKET/DIR (default:\n"
	"                      SQLite in DIR/vigil.db); several servers may share\n"
	"                      one PostgreSQL database (and one data directory)\n"
	"  --connections N     simultaneous connections (default 512)\n"
	"  --per-ip N          simultaneous connections from one client address\n"
	"                      (default 64; 0: no limit, e.g. behind a proxy)\n"
	"  --threads N         request handler threads, each with its own\n"
	"                      database connection (default twice the CPUs, at\n"
	"                      least 4); long polls wait without holding one\n"
	"  --header-timeout S  close a connection that has not sent complete\n"
	"                      request headers within S seconds of silence, and\n"
	"                      idle kept-alive ones (default 10); a body that\n"
	"                      keeps coming may pause up to 120 s\n"
	"  --worker-timeout S  a worker silent for S seconds is lost: its job ends\n"
	"                      incomplete and is cloned (default 60)\n"
	"  --secure-cookies    send the sign-in cookie with Secure, so browsers\n"
	"                      return it over HTTPS only: set it when a TLS proxy\n"
	"                      serves vigil (vigil itself speaks plain HTTP)\n"
	"  --rerun-wait S      a job re-run from a milestone waits S seconds for\n"
	"                      the worker keeping the snapshot, then any worker\n"
	"                      runs it in full (default 600)\n"
	"  --cleanup-interval S  remove expired results, logs and assets (the job\n"
	"                      groups' keep_*_in_days and size_limit_gb; GET\n"
	"                      /api/v1/cleanup shows what would go) every S\n"
	"                      seconds (default 3600; 0: only when asked)\n"
	"  --user NAME         started as root: bind the address (a port below\n"
	"                      1024 too), then run as NAME; the data directory\n"
	"                      must be NAME's to write\n"
	"  --config FILE       read options from the [server] section of FILE\n"
	"                      (default $VIGIL_CONFIG, else /etc/vigil/vigil.conf\n"
	"                      when it exists); options given here override it;\n"
	"                      the [events], [irc], [webhook] and [amqp] sections\n"
	"                      configure event notifications (docs/events.md)\n"
	"  -v, --verbose       log every request at debug level\n"
	"  -h, --help          this text\n"
	"\n"
	"Stops cleanly on SIGINT or SIGTERM.\n";

/* The number arg into *n when it lies in lo..hi; ERR_INVALID with the
 * accepted range in err otherwise. */
static int opt_number(const char *arg, long lo, long hi, const char *unit, long *n, char *err, size_t errlen)
{
	if (str_to_long(arg, n) || *n < lo || *n > hi) {
		err_set(err, errlen, "'%s': expected %ld..%ld%s", arg, lo, hi, unit);
		return ERR_INVALID;
	}
	return 0;
}

static const struct option serve_opts[] = {
	{ "listen", required_argument, NULL, 'l' },
	{ "data", required_argument, NULL, 'd' },
	{ "db", required_argument, NULL, 'B' },
	{ "connections", required_argument, NULL, 'c' },
	{ "worker-timeout", required_argument, NULL, 't' },
	{ "per-ip", required_argument, NULL, 'p' },
	{ "threads", required_argument, NULL, 'j' },
	{ "header-timeout", required_argument, NULL, 'H' },
	{ "secure-cookies", no_argument, NULL, 'S' },
	{ "rerun-wait", required_argument, NULL, 'R' },
	{ "cleanup-interval", required_argument, NULL, 'C' },
	{ "user", required_argument, NULL, 'u' },
	{ "config", required_argument, NULL, 'F' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* One option, from the command line or the [server] section of the
 * configuration file, into the server_config ctx. */
static int serve_opt(void *ctx, int c, const char *arg, char *err, size_t errlen)
{
	struct server_config *cfg = ctx;
	long n;

	switch (c) {
	case 'l': cfg->listen = arg; break;
	case 'd': cfg->data_dir = arg; break;
	case 'B': cfg->db = arg; break;
	case 'u': cfg->user = arg; break;
	case 'S': cfg->secure_cookies = true; break;
	case 'v': log_set_stderr_level(LOG_DEBUG); break;
	case 'F': break; /* read before any other option */
	case 'c':
		if (opt_number(arg, 1, 65536, "", &n, err, errlen))
			return ERR_INVALID;
		cfg->connection_limit = (unsigned)n;
		break;
	case 't':
		if (opt_number(arg, 1, 86400, " seconds", &n, err, errlen))
			return ERR_INVALID;
		cfg->worker_timeout_s = (int)n;
		break;
	case 'p':
		if (opt_number(arg, 0, 65536, " (0: no limit)", &n, err, errlen))
			return ERR_INVALID;
		cfg->per_ip_limit = n ? (int)n : -1;
		break;
	case 'j':
		if (opt_number(arg, 1, SERVER_MAX_THREADS, "", &n, err, errlen))
			return ERR_INVALID;
		cfg->threads = (unsigned)n;
		break;
	case 'H':
		if (opt_number(arg, 1, 3600, " seconds", &n, err, errlen))
			return ERR_INVALID;
		cfg->header_timeout_s = (unsigned)n;
		break;
	case 'R':
		if (opt_number(arg, 1, 86400, " seconds", &n, err, errlen))
			return ERR_INVALID;
		cfg->rerun_wait_s = n;
		break;
	case 'C':
		if (opt_number(arg, 0, 30 * 86400, " seconds (0: never)", &n, err, errlen))
			return ERR_INVALID;
		cfg->cleanup_interval_s = n ? n : -1;
		break;
	default:
		err_set(err, errlen, "not an option of vigil serve");
		return ERR_INVALID;
	}
	return 0;
}

int cmd_serve(int argc, char **argv)
{
	struct server_config cfg = { .listen = "127.0.0.1:9526", .data_dir = "vigil-data" };
	struct server *s = NULL;
	struct conf conf;
	struct events_config events;
	char err[1024];
	sigset_t set;
	int c, sig = 0, rc = 2;

	conf_init(&conf);
	memset(&events, 0, sizeof(events));
	if (cmd_wants_help(argc, argv)) {
		fputs(serve_usage, stdout);
		return 0;
	}
	if (cmd_conf_load("serve", argc, argv, &conf, "server", serve_opts, serve_opt, &cfg))
		goto out;
	if (events_config_parse(&events, &conf, err, sizeof(err))) {
		fprintf(stderr, "vigil serve: %s\n", err);
		goto out;
	}
	cfg.events = &events;
	while ((c = getopt_long(argc, argv, "vh", serve_opts, NULL)) != -1) {
		if (c == '?' || c == 'h') {
			fputs(serve_usage, stderr);
			goto out;
		}
		if (serve_opt(&cfg, c, optarg, err, sizeof(err))) {
			cmd_opt_error("serve", serve_opts, c, err);
			goto out;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "vigil serve: unexpected argument '%s'\n%s", argv[optind], serve_usage);
		goto out;
	}
	/* Block the stop signals before the daemon's thread starts so only sigwait sees them. */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	umask(077);
	if (geteuid() == 0 && !cfg.user)
		log_warn("running as root: a flaw in the server would be root's; start it with --user NAME "
			 "to run as NAME once the address is bound");
	if (cfg.user && geteuid() != 0) {
		fprintf(stderr, "vigil serve: --user needs root (it drops root after binding); "
			"start without it to run as yourself\n");
		goto out;
	}
	if (server_start(&s, &cfg, err, sizeof(err))) {
		fprintf(stderr, "vigil serve: %s\n", err);
		rc = 1;
		goto out;
	}
	log_info("listening on %s (port %u), data in %s%s%s", cfg.listen, server_port(s), cfg.data_dir,
		 cfg.user ? ", as user " : "", cfg.user ? cfg.user : "");
	(void)sigwait(&set, &sig);
	log_info("signal %d: stopping", sig);
	server_free(s);
	rc = 0;
out:
	events_config_release(&events);
	conf_release(&conf);
	return rc;
}
