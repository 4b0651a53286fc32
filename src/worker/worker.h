/* SPDX-License-Identifier: MIT */
/* worker.h - `vigil worker`: registers with the server, long-polls for a
 * job, runs `vigil run` for it in a child process group (PDEATHSIG, so
 * the runner and its QEMU die with the worker), posts status, uploads
 * artefacts (screenshots as they appear, the rest at the end), set_done.
 * Assets the job names by bare file name (ISO, HDD_n, KERNEL, ...) come
 * from the server and are cached in POOL/cache/assets; disks named by
 * PUBLISH_HDD_n go back to the server after a passed run. Every job runs
 * with --snapshots; the disks of one that saved a milestone are kept
 * (snapkeep.c) for a re-run from it, which the server pins to this worker. */
#ifndef VIGIL_WORKER_H
#define VIGIL_WORKER_H

#define WORKER_STATUS_INTERVAL_S 5
#define WORKER_POLL_S 30
#define WORKER_CANCEL_GRACE_S 10
/* How long the end of a job (uploads, set_done) waits for a server that
 * went away (restarted, unreachable), unless --finish-deadline says. */
#define WORKER_FINISH_DEADLINE_S 600
/* The os-autoinst test API interface the runner offers, as openQA's worker
 * registers isotovideo's (Debian 12's os-autoinst: v34). */
#define WORKER_ISOTOVIDEO_INTERFACE "34"

struct worker_config {
	const char *host;      /* server URL */
	const char *key, *secret;
	const char *classes;   /* NULL: qemu_x86_64,qemu_i686,qemu_i586 */
	const char *pool;      /* pool directory (created) */
	const char *hostname;  /* NULL: gethostname() */
	long instance;
	const char *self;      /* the vigil binary to run ("/proc/self/exe") */
	long keep_snapshots_s; /* keep a job's milestone snapshots this long (0: none) */
	long snapshot_cap_mb;  /* ... while all kept ones take at most this much (0: none) */
	int server;            /* WORKER_SERVER_*: which protocol the server speaks */
	const char *share;     /* openQA's shared directory (NULL: /var/lib/openqa/share) */
	long asset_cache_mb;   /* the asset cache's size (0: ASSET_CACHE_DEFAULT_MB) */
	long retry_ms;         /* the first wait before an upload is tried again (0: 500 ms) */
	long finish_deadline_s; /* retries at a job's end (0: WORKER_FINISH_DEADLINE_S) */
	const char *relay_host; /* where other workers reach this one's relay hubs (NULL: hostname;
				 * as --relay-host takes it: nethub_parse_host) */
};

/* The server's kind: found out from its answers (auto), or given. */
enum { WORKER_SERVER_AUTO, WORKER_SERVER_VIGIL, WORKER_SERVER_OPENQA };

/* Run until *stop is set (SIGINT/SIGTERM). 0, or an error code when the
 * worker cannot start (bad pool directory). Never exits on bad input. */
int worker_main(const struct worker_config *cfg, volatile int *stop);

#endif
