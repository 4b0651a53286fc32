/* SPDX-License-Identifier: MIT */
/* run.c - `vigil run DISTRI_DIR`: option parsing, the job's variables and
 * results directory, then the runner. Exit 0 passed/softfailed, 1 failed,
 * 2 incomplete or timeout_exceeded, 3 bad usage. */
#define LOG_MODULE "run"
#include <getopt.h>
#include <lua.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "cmd/cmd.h"
#include "image/needle.h"
#include "runner/runner.h"
#include "util/err.h"
#include "util/log.h"
#include "util/util.h"
#include "vm/qemu.h"

static const char run_usage[] =
	"usage: vigil run DISTRI_DIR [--var K=V]... [--vars FILE] [--out DIR] [-v]\n"
	"\n"
	"Runs the test distribution in DISTRI_DIR (main.lua, tests/*.lua, needles/)\n"
	"against one QEMU virtual machine and writes a results directory.\n"
	"\n"
	"  --var K=V     set the job variable K (ISO, HDD_1, KERNEL, INITRD, APPEND,\n"
	"                QEMUCPUS, QEMURAM, XRES, YRES, QEMU_APPEND, TIMEOUT_SCALE,\n"
	"                MAX_JOB_TIME, NEEDLES_DIR, ...); repeatable, wins over files\n"
	"  --vars FILE   read variables from a JSON object (openQA's vars.json)\n"
	"  --out DIR     write results to DIR (default: a new directory under ./results/)\n"
	"  --snapshots DIR  keep the VM's disks (qcow2 overlays holding the milestone\n"
	"                snapshots) in DIR after the run, until you delete DIR\n"
	"  --resume-from MODULE  start at MODULE from the snapshot of the last\n"
	"                milestone module before it, kept in --snapshots DIR\n"
	"  -v            also print debug messages on the terminal\n"
	"  -h, --help    this text\n"
	"\n"
	"DISTRI_DIR/vars.json, if present, gives defaults; ${NAME} in a value is\n"
	"replaced by the environment variable or job variable NAME. VIGIL_IMAGES is\n"
	"the image cache of scripts/fetch-images (default ~/.cache/vigil/images).\n"
	"\n"
	"Results: testresults/result-<module>.json, testresults/results.json,\n"
	"step screenshots, serial0.txt, vigil-log.txt, vars.json.\n"
	"Exit status: 0 passed or softfailed, 1 failed, 2 incomplete or\n"
	"timeout_exceeded, 3 usage error.\n";

static struct runner *signal_runner;

static void on_signal(int sig)
{
	/* Take the VM down; every wait then sees it gone and the job ends
	 * incomplete with everything captured so far written. */
	if (!signal_runner)
		return;
	signal_runner->abort_result = JOB_INCOMPLETE;
	signal_runner->signal = sig;
	signal_runner->abort = 1;
	if (signal_runner->qemu && qemu_pid(signal_runner->qemu) > 0)
		kill(qemu_pid(signal_runner->qemu), SIGKILL);
}

static char *default_out_dir(const char *distri)
{
	char stamp[32], *base = path_stem(distri[strlen(distri) - 1] == '/' ? "distri" : distri, NULL);
	char *dir = NULL;
	time_t now = time(NULL);
	struct tm tm;
	int i;

	localtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
	for (i = 0; i < 1000; i++) {
		size_t len = strlen(base) + 64;
		free(dir);
		dir = malloc(len);
		if (!dir)
			break;
		if (i == 0)
			snprintf(dir, len, "results/%s-%s", base, stamp);
		else
			snprintf(dir, len, "results/%s-%s-%d", base, stamp, i);
		if (!dir_exists(dir))
			break;
	}
	free(base);
	return dir;
}

static void release_runner(struct runner *r)
{
	size_t i;
	if (r->L)
		lua_close(r->L);
	for (i = 0; i < r->nmodules; i++) {
		free(r->modules[i].name);
		free(r->modules[i].script);
		free(r->modules[i].fail_message);
		json_decref(r->modules[i].details);
	}
	free(r->modules);
	if (r->needles) {
		needle_set_release(r->needles);
		free(r->needles);
	}
	json_decref(r->last_match);
	vars_release(&r->vars);
	free(r->distri_dir);
	free(r->out_dir);
	free(r->testresults);
	free(r->workdir);
	free(r->resume_from);
}

int cmd_run(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "var", required_argument, NULL, 'V' },
		{ "vars", required_argument, NULL, 'f' },
		{ "out", required_argument, NULL, 'o' },
		{ "snapshots", required_argument, NULL, 's' },
		{ "resume-from", required_argument, NULL, 'r' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct runner r;
	char err[1024], *vars_file = NULL, *out = NULL, *distri_vars = NULL, *images = NULL;
	const char *snapshots = NULL, *resume = NULL;
	const char **assigns = NULL;
	size_t nassigns = 0;
	enum job_result res;
	int c, rc, code = 3;

	memset(&r, 0, sizeof(r));
	if (vars_init(&r.vars))
		return 3;
	assigns = calloc((size_t)argc, sizeof(*assigns));
	if (!assigns)
		return 3;
	optind = 1;
	while ((c = getopt_long(argc, argv, "vh", opts, NULL)) != -1) {
		switch (c) {
		case 'V': assigns[nassigns++] = optarg; break;
		case 'f': vars_file = optarg; break;
		case 'o': out = optarg; break;
		case 's': snapshots = optarg; break;
		case 'r': resume = optarg; break;
		case 'v': log_set_stderr_level(LOG_DEBUG); break;
		case 'h': fputs(run_usage, stdout); code = 0; goto out;
		default: fputs(run_usage, stderr); goto out;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "vigil run: expected exactly one DISTRI_DIR\n%s", run_usage);
		goto out;
	}
	r.distri_dir = path_abs(argv[optind]);
	if (!r.distri_dir || !dir_exists(r.distri_dir)) {
		fprintf(stderr, "vigil run: '%s' is not a directory\n", argv[optind]);
		goto out;
	}
	if (!getenv("VIGIL_IMAGES")) {
		const char *home = getenv("HOME");
		const char *cache = getenv("XDG_CACHE_HOME");
		size_t len = (cache ? strlen(cache) : (home ? strlen(home) : 4)) + 32;
		images = malloc(len);
		if (images) {
			if (cache)
				snprintf(images, len, "%s/vigil/images", cache);
			else
				snprintf(images, len, "%s/.cache/vigil/images", home ? home : "/tmp");
			setenv("VIGIL_IMAGES", images, 0);
		}
	}
	/* Precedence: --var over --vars over the distribution's vars.json. */
	for (size_t i = 0; i < nassigns; i++) {
		if (vars_set_assignment(&r.vars, assigns[i], err, sizeof(err))) {
			fprintf(stderr, "vigil run: %s\n", err);
			goto out;
		}
	}
	if (vars_file && vars_load_file(&r.vars, vars_file, 1, err, sizeof(err))) {
		fprintf(stderr, "vigil run: %s\n", err);
		goto out;
	}
	distri_vars = path_join(r.distri_dir, "vars.json");
	if (distri_vars && file_exists(distri_vars) &&
	    vars_load_file(&r.vars, distri_vars, 1, err, sizeof(err))) {
		fprintf(stderr, "vigil run: %s\n", err);
		goto out;
	}
	if (!vars_get(&r.vars, "CASEDIR"))
		vars_set(&r.vars, "CASEDIR", r.distri_dir);
	if (vars_expand(&r.vars, err, sizeof(err))) {
		fprintf(stderr, "vigil run: %s\n", err);
		goto out;
	}
	if (!out)
		out = default_out_dir(argv[optind]);
	else
		out = xstrdup(out);
	if (!out || mkdir_p(out, 0755)) {
		fprintf(stderr, "vigil run: cannot create the results directory '%s'\n", out ? out : "?");
		goto out;
	}
	r.out_dir = path_abs(out);
	r.testresults = path_join(r.out_dir, "testresults");
	if (resume && !snapshots) {
		fprintf(stderr, "vigil run: --resume-from needs --snapshots DIR of an earlier run\n");
		goto out;
	}
	if (resume && !dir_exists(snapshots)) {
		fprintf(stderr, "vigil run: snapshots directory '%s' does not exist\n", snapshots);
		goto out;
	}
	r.workdir = snapshots ? path_abs(snapshots) : path_join(r.out_dir, ".vm");
	r.keep_disks = snapshots != NULL;
	r.resume_from = resume ? xstrdup(resume) : NULL;
	if (!r.testresults || !r.workdir || mkdir_p(r.testresults, 0755) || mkdir_p(r.workdir, 0700)) {
		fprintf(stderr, "vigil run: cannot create '%s/testresults'\n", out);
		goto out;
	}
	{
		char *logp = path_join(r.out_dir, "vigil-log.txt");
		if (!logp || log_open_file(logp))
			fprintf(stderr, "vigil run: cannot open the log file in '%s'\n", out);
		free(logp);
	}
	{
		char *vp = path_join(r.out_dir, "vars.json");
		if (vp)
			vars_save(&r.vars, vp);
		free(vp);
	}
	signal_runner = &r;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGHUP, on_signal);
	signal(SIGPIPE, SIG_IGN);
	log_info("running %s, results in %s", r.distri_dir, r.out_dir);
	res = runner_run(&r);
	{
		char *vp = path_join(r.out_dir, "vars.json");
		if (vp)
			vars_save(&r.vars, vp);
		free(vp);
	}
	printf("result: %s%s\n", job_result_name(res), r.abort ? "" : "");
	if (r.abort)
		printf("reason: %s\n", r.reason);
	printf("results: %s\n", r.out_dir);
	switch (res) {
	case JOB_PASSED:
	case JOB_SOFTFAILED: code = 0; break;
	case JOB_FAILED: code = 1; break;
	default: code = 2; break;
	}
	signal_runner = NULL;
	log_close_file();
	rc = 0;
	(void)rc;
out:
	release_runner(&r);
	free(distri_vars);
	free(images);
	free(out);
	free(assigns);
	return code;
}
