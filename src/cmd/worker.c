/* SPDX-License-Identifier: MIT */
/* worker.c - `vigil worker --host URL --apikey K --apisecret S`: option
 * parsing and signals; the worker's life cycle is src/worker/worker.c. */
#define LOG_MODULE "worker"
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include "cmd/cmd.h"
#include "cmd/cmd_conf.h"
#include "util/err.h"
#include "util/log.h"
#include "util/str.h"
#include "worker/nethub.h"
#include "worker/snapkeep.h"
#include "worker/worker.h"
#include "util/banned.h" /* last: after every system header */

static const char worker_usage[] =
	"usage: vigil worker --host URL --apikey KEY --apisecret SECRET [--class C1,C2]\n"
	"                    [--pool DIR] [--instance N] [--keep-snapshots S]\n"
	"                    [--snapshot-cap MB] [--asset-cache MB] [--server auto|vigil|openqa]\n"
	"                    [--share DIR] [--finish-deadline S] [--config FILE] [-v]\n"
	"\n"
	"Registers with a 'vigil serve' or an openQA server, waits for jobs whose WORKER_CLASS it\n"
	"offers, runs each with 'vigil run', posts status, uploads the results\n"
	"and marks the job done. Run any number of instances on one machine, each\n"
	"with its own --instance and --pool.\n"
	"\n"
	"  --host URL        the server (http://HOST:PORT)\n"
	"  --apikey KEY      an API key from 'vigil apikey new'\n"
	"  --apisecret S     its secret\n"
	"  --class C         worker classes offered (default qemu_x86_64,qemu_i686,qemu_i586)\n"
	"  --pool DIR        working directory for jobs, cached test distributions\n"
	"                    and assets (default ./pool/<instance>)\n"
	"  --instance N      instance number on this host (default 1)\n"
	"  --hostname NAME   the host name to register as (default: this machine's)\n"
	"  --relay-host ADDR where the other workers reach this one's relay hubs\n"
	"                    (NICNET=relay; default: the host name): HOST, IPv4,\n"
	"                    IPv6 or [IPv6], each with :PORT to fix the hubs' port\n"
	"  --keep-snapshots S  keep the disks of a job that saved a milestone\n"
	"                    snapshot S seconds in POOL/snapshots, for a re-run\n"
	"                    from it (default 3600; 0: keep none)\n"
	"  --snapshot-cap MB the kept disks take at most MB MiB, oldest evicted\n"
	"                    first (default 4096; 0: keep none)\n"
	"  --asset-cache MB  the cached assets (POOL/cache/assets) take at most MB\n"
	"                    MiB, least recently used removed first, never the\n"
	"                    current job's (default 51200)\n"
	"  --server KIND     the server's protocol: vigil, openqa, or auto (default:\n"
	"                    openQA when it has no vigil work route)\n"
	"  --share DIR       openQA's shared directory (tests/, factory/) as mounted\n"
	"                    here (default /var/lib/openqa/share); assets not there\n"
	"                    are downloaded\n"
	"  --finish-deadline S  how long the end of a job (uploads, set_done) retries\n"
	"                    a server that is away or answers 5xx (default 600)\n"
	"  --config FILE     read options from the [worker] section of FILE (default\n"
	"                    $VIGIL_CONFIG, else /etc/vigil/vigil.conf when it\n"
	"                    exists); options given here override it\n"
	"  -v, --verbose     debug messages\n"
	"  -h, --help        this text\n"
	"\n"
	"SIGINT/SIGTERM stop the current job (ended incomplete) and the worker.\n";

static volatile int stop_flag;

static void on_stop(int sig)
{
	(void)sig;
	stop_flag = 1;
}

static const struct option worker_opts[] = {
	{ "host", required_argument, NULL, 'H' },
	{ "apikey", required_argument, NULL, 'k' },
	{ "apisecret", required_argument, NULL, 's' },
	{ "class", required_argument, NULL, 'c' },
	{ "pool", required_argument, NULL, 'p' },
	{ "instance", required_argument, NULL, 'i' },
	{ "hostname", required_argument, NULL, 'n' },
	{ "relay-host", required_argument, NULL, 'R' },
	{ "keep-snapshots", required_argument, NULL, 'K' },
	{ "snapshot-cap", required_argument, NULL, 'C' },
	{ "asset-cache", required_argument, NULL, 'A' },
	{ "server", required_argument, NULL, 'S' },
	{ "share", required_argument, NULL, 'D' },
	{ "finish-deadline", required_argument, NULL, 'L' },
	{ "config", required_argument, NULL, 'F' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* One option, from the command line or the [worker] section of the
 * configuration file, into the worker_config ctx. */
static int worker_opt(void *ctx, int c, const char *arg, char *err, size_t errlen)
{
	struct worker_config *cfg = ctx;

	switch (c) {
	case 'H': cfg->host = arg; break;
	case 'k': cfg->key = arg; break;
	case 's': cfg->secret = arg; break;
	case 'c': cfg->classes = arg; break;
	case 'p': cfg->pool = arg; break;
	case 'n': cfg->hostname = arg; break;
	case 'R': {
		char host[300];
		unsigned port;
		if (nethub_parse_host(arg, host, sizeof(host), &port, err, errlen))
			return ERR_INVALID;
		cfg->relay_host = arg;
		break;
	}
	case 'D': cfg->share = arg; break;
	case 'F': break; /* read before any other option */
	case 'v': log_set_stderr_level(LOG_DEBUG); break;
	case 'S':
		if (!strcmp(arg, "auto"))
			cfg->server = WORKER_SERVER_AUTO;
		else if (!strcmp(arg, "vigil"))
			cfg->server = WORKER_SERVER_VIGIL;
		else if (!strcmp(arg, "openqa"))
			cfg->server = WORKER_SERVER_OPENQA;
		else {
			err_set(err, errlen, "'%s': expected auto, vigil or openqa", arg);
			return ERR_INVALID;
		}
		break;
	case 'i':
		if (str_to_long(arg, &cfg->instance) || cfg->instance < 0 || cfg->instance > 100000) {
			err_set(err, errlen, "'%s': expected a number 0..100000", arg);
			return ERR_INVALID;
		}
		break;
	case 'K':
	case 'C': {
		long *v = c == 'K' ? &cfg->keep_snapshots_s : &cfg->snapshot_cap_mb;
		if (str_to_long(arg, v) || *v < 0 || *v > 10000000) {
			err_set(err, errlen, "'%s': expected a number 0..10000000", arg);
			return ERR_INVALID;
		}
		break;
	}
	case 'L':
		if (str_to_long(arg, &cfg->finish_deadline_s) || cfg->finish_deadline_s < 1 || cfg->finish_deadline_s > 86400) {
			err_set(err, errlen, "'%s': expected seconds 1..86400", arg);
			return ERR_INVALID;
		}
		break;
	case 'A':
		if (str_to_long(arg, &cfg->asset_cache_mb) || cfg->asset_cache_mb < 1 || cfg->asset_cache_mb > 100000000) {
			err_set(err, errlen, "'%s': expected MiB, 1..100000000", arg);
			return ERR_INVALID;
		}
		break;
	default:
		err_set(err, errlen, "not an option of vigil worker");
		return ERR_INVALID;
	}
	return 0;
}

int cmd_worker(int argc, char **argv)
{
	struct worker_config cfg = { NULL, NULL, NULL, NULL, NULL, NULL, 1, "/proc/self/exe", SNAPKEEP_DEFAULT_S,
				     SNAPKEEP_DEFAULT_CAP_MB, WORKER_SERVER_AUTO, NULL, 0, 0,
				     WORKER_FINISH_DEADLINE_S, NULL };
	struct conf conf;
	char pool[64], err[512];
	struct sigaction sa;
	int c, rc = 2;

	conf_init(&conf);
	if (cmd_wants_help(argc, argv)) {
		fputs(worker_usage, stdout);
		return 0;
	}
	if (cmd_conf_load("worker", argc, argv, &conf, "worker", worker_opts, worker_opt, &cfg))
		goto out;
	while ((c = getopt_long(argc, argv, "vh", worker_opts, NULL)) != -1) {
		if (c == '?' || c == 'h') {
			fputs(worker_usage, stderr);
			goto out;
		}
		if (worker_opt(&cfg, c, optarg, err, sizeof(err))) {
			cmd_opt_error("worker", worker_opts, c, err);
			goto out;
		}
	}
	if (optind < argc || !cfg.host || !cfg.key || !cfg.secret) {
		fprintf(stderr, "vigil worker: %s\n%s", optind < argc ? "unexpected argument" :
			"--host, --apikey and --apisecret are required (on the command line or in the [worker] "
			"section of the configuration file)", worker_usage);
		goto out;
	}
	if (!cfg.pool) {
		snprintf(pool, sizeof(pool), "pool/%ld", cfg.instance);
		cfg.pool = pool;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	rc = worker_main(&cfg, &stop_flag) ? 1 : 0;
out:
	conf_release(&conf);
	return rc;
}
