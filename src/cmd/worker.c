/* SPDX-License-Identifier: MIT */
/* worker.c - `vigil worker --host URL --apikey K --apisecret S`: option
 * parsing and signals; the worker's life cycle is src/worker/worker.c. */
#define LOG_MODULE "worker"
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include "cmd/cmd.h"
#include "util/log.h"
#include "util/str.h"
#include "worker/snapkeep.h"
#include "worker/worker.h"
#include "util/banned.h" /* last: after every system header */

static const char worker_usage[] =
	"usage: vigil worker --host URL --apikey KEY --apisecret SECRET [--class C1,C2]\n"
	"                    [--pool DIR] [--instance N] [--keep-snapshots S]\n"
	"                    [--snapshot-cap MB] [--server auto|vigil|openqa]\n"
	"                    [--share DIR] [--finish-deadline S] [-v]\n"
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
	"  --keep-snapshots S  keep the disks of a job that saved a milestone\n"
	"                    snapshot S seconds in POOL/snapshots, for a re-run\n"
	"                    from it (default 3600; 0: keep none)\n"
	"  --snapshot-cap MB the kept disks take at most MB MiB, oldest evicted\n"
	"                    first (default 4096; 0: keep none)\n"
	"  --server KIND     the server's protocol: vigil, openqa, or auto (default:\n"
	"                    openQA when it has no vigil work route)\n"
	"  --share DIR       openQA's shared directory (tests/, factory/) as mounted\n"
	"                    here (default /var/lib/openqa/share); assets not there\n"
	"                    are downloaded\n"
	"  --finish-deadline S  how long the end of a job (uploads, set_done) retries\n"
	"                    a server that is away or answers 5xx (default 600)\n"
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

int cmd_worker(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "host", required_argument, NULL, 'H' },
		{ "apikey", required_argument, NULL, 'k' },
		{ "apisecret", required_argument, NULL, 's' },
		{ "class", required_argument, NULL, 'c' },
		{ "pool", required_argument, NULL, 'p' },
		{ "instance", required_argument, NULL, 'i' },
		{ "hostname", required_argument, NULL, 'n' },
		{ "keep-snapshots", required_argument, NULL, 'K' },
		{ "snapshot-cap", required_argument, NULL, 'C' },
		{ "server", required_argument, NULL, 'S' },
		{ "share", required_argument, NULL, 'D' },
		{ "finish-deadline", required_argument, NULL, 'F' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct worker_config cfg = { NULL, NULL, NULL, NULL, NULL, NULL, 1, "/proc/self/exe", SNAPKEEP_DEFAULT_S,
				     SNAPKEEP_DEFAULT_CAP_MB, WORKER_SERVER_AUTO, NULL,
				     WORKER_FINISH_DEADLINE_S };
	char pool[64];
	struct sigaction sa;
	int c;

	while ((c = getopt_long(argc, argv, "vh", opts, NULL)) != -1) {
		switch (c) {
		case 'H': cfg.host = optarg; break;
		case 'k': cfg.key = optarg; break;
		case 's': cfg.secret = optarg; break;
		case 'c': cfg.classes = optarg; break;
		case 'p': cfg.pool = optarg; break;
		case 'n': cfg.hostname = optarg; break;
		case 'D': cfg.share = optarg; break;
		case 'S':
			if (!strcmp(optarg, "auto"))
				cfg.server = WORKER_SERVER_AUTO;
			else if (!strcmp(optarg, "vigil"))
				cfg.server = WORKER_SERVER_VIGIL;
			else if (!strcmp(optarg, "openqa"))
				cfg.server = WORKER_SERVER_OPENQA;
			else {
				fprintf(stderr, "vigil worker: --server '%s': expected auto, vigil or openqa\n", optarg);
				return 2;
			}
			break;
		case 'i':
			if (str_to_long(optarg, &cfg.instance) || cfg.instance < 0 || cfg.instance > 100000) {
				fprintf(stderr, "vigil worker: --instance '%s': expected a number 0..100000\n", optarg);
				return 2;
			}
			break;
		case 'F':
			if (str_to_long(optarg, &cfg.finish_deadline_s) || cfg.finish_deadline_s < 1 ||
			    cfg.finish_deadline_s > 86400) {
				fprintf(stderr, "vigil worker: --finish-deadline '%s': expected seconds 1..86400\n", optarg);
				return 2;
			}
			break;
		case 'K':
		case 'C': {
			long *v = c == 'K' ? &cfg.keep_snapshots_s : &cfg.snapshot_cap_mb;
			if (str_to_long(optarg, v) || *v < 0 || *v > 10000000) {
				fprintf(stderr, "vigil worker: --%s '%s': expected a number 0..10000000\n",
					c == 'K' ? "keep-snapshots" : "snapshot-cap", optarg);
				return 2;
			}
			break;
		}
		case 'v': log_set_stderr_level(LOG_DEBUG); break;
		case 'h': fputs(worker_usage, stdout); return 0;
		default: fputs(worker_usage, stderr); return 2;
		}
	}
	if (optind < argc || !cfg.host || !cfg.key || !cfg.secret) {
		fprintf(stderr, "vigil worker: %s\n%s", optind < argc ? "unexpected argument" :
			"--host, --apikey and --apisecret are required", worker_usage);
		return 2;
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
	return worker_main(&cfg, &stop_flag) ? 1 : 0;
}
