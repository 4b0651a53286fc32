/* SPDX-License-Identifier: MIT */
/* serve.c - `vigil serve --listen ADDR:PORT --data DIR`: option parsing,
 * then the server runs on its own thread until SIGINT/SIGTERM. */
#define LOG_MODULE "serve"
#include <getopt.h>
#include <pthread.h>
#include <stdlib.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include "cmd/cmd.h"
#include "server/server.h"
#include "util/log.h"
#include "util/str.h"

static const char serve_usage[] =
	"usage: vigil serve [--listen ADDR:PORT] [--data DIR] [--connections N] [-v]\n"
	"\n"
	"Serves openQA's REST API (/api/v1: jobs, isos, machines, products,\n"
	"test_suites, job_groups, job_templates, workers, assets) from the SQLite\n"
	"database DIR/vigil.db, so openqa-cli, openqa-clone-job and the python\n"
	"openqa_client work against it. Reads are public; writes need an API key\n"
	"from 'vigil apikey new --data DIR'. Test distributions live in\n"
	"DIR/tests/<DISTRI>, assets (ISO, HDD_n, KERNEL... given as bare file\n"
	"names, disks published with PUBLISH_HDD_n) in DIR/factory/{iso,hdd,other}.\n"
	"\n"
	"  --listen ADDR:PORT  address to listen on (default 127.0.0.1:9526;\n"
	"                      [::1]:9526 for IPv6, port 0 picks a free port)\n"
	"  --data DIR          data directory, created 0700 (default ./vigil-data)\n"
	"  --connections N     simultaneous connections (default 512)\n"
	"  --worker-timeout S  a worker silent for S seconds is lost: its job ends\n"
	"                      incomplete and is cloned (default 60)\n"
	"  -v, --verbose       log every request at debug level\n"
	"  -h, --help          this text\n"
	"\n"
	"Stops cleanly on SIGINT or SIGTERM.\n";

int cmd_serve(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "listen", required_argument, NULL, 'l' },
		{ "data", required_argument, NULL, 'd' },
		{ "connections", required_argument, NULL, 'c' },
		{ "worker-timeout", required_argument, NULL, 't' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct server_config cfg = { "127.0.0.1:9526", "vigil-data", 0, 0 };
	struct server *s = NULL;
	char err[512];
	sigset_t set;
	int c, sig = 0;
	long n;

	while ((c = getopt_long(argc, argv, "vh", opts, NULL)) != -1) {
		switch (c) {
		case 'l':
			cfg.listen = optarg;
			break;
		case 'd':
			cfg.data_dir = optarg;
			break;
		case 'c': {
			char *end;
			n = strtol(optarg, &end, 10);
			if (*end || n <= 0 || n > 65536) {
				fprintf(stderr, "vigil serve: --connections '%s': expected 1..65536\n", optarg);
				return 2;
			}
			cfg.connection_limit = (unsigned)n;
			break;
		}
		case 't':
			if (str_to_long(optarg, &n) || n < 1 || n > 86400) {
				fprintf(stderr, "vigil serve: --worker-timeout '%s': expected 1..86400 seconds\n", optarg);
				return 2;
			}
			cfg.worker_timeout_s = (int)n;
			break;
		case 'v':
			log_set_stderr_level(LOG_DEBUG);
			break;
		case 'h':
			fputs(serve_usage, stdout);
			return 0;
		default:
			fputs(serve_usage, stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "vigil serve: unexpected argument '%s'\n%s", argv[optind], serve_usage);
		return 2;
	}
	/* Block the stop signals before the daemon's thread starts so only sigwait sees them. */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	umask(077);
	if (server_start(&s, &cfg, err, sizeof(err))) {
		fprintf(stderr, "vigil serve: %s\n", err);
		return 1;
	}
	log_info("listening on %s (port %u), data in %s", cfg.listen, server_port(s), cfg.data_dir);
	(void)sigwait(&set, &sig);
	log_info("signal %d: stopping", sig);
	server_free(s);
	return 0;
}
