/* SPDX-License-Identifier: MIT */
/* run.c - `vigil run DISTRI_DIR`: option parsing, then the runner, which
 * owns the job (runner/runner.h). Exit 0 passed/softfailed, 1 failed,
 * 2 incomplete or timeout_exceeded, 3 bad usage. */
#define LOG_MODULE "run"
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cmd/cmd.h"
#include "runner/runner.h"
#include "util/log.h"
#include "util/banned.h" /* last: after every system header */

static const char run_usage[] =
	"usage: vigil run DISTRI_DIR [--var K=V]... [--vars FILE] [--out DIR]\n"
	"                 [--explore] [--interactive] [--pause-at MODULE]\n"
	"                 [--pause-on-mismatch] [-v]\n"
	"       vigil run --list-testapi\n"
	"\n"
	"Runs the test distribution in DISTRI_DIR (main.lua, tests/*.lua, needles/)\n"
	"against one QEMU virtual machine and writes a results directory. An openQA\n"
	"Perl distribution (main.pm, no main.lua) runs in os-autoinst's own test\n"
	"process (Debian's os-autoinst 4.6; docs/perl.md for what it supports).\n"
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
	"  --explore     save every distinct screen (by wait_still_screen's test) as\n"
	"                OUT/explore/NNNN-SECONDS.png, listed in OUT/explore/index.txt\n"
	"                with the module and step running then\n"
	"  --interactive when a check asks for a tag no needle carries, offer to make\n"
	"                the needle from the screen now (the VM waits) instead of\n"
	"                waiting out the time-out; needs a terminal on stdin\n"
	"  --pause-at MODULE  developer mode: pause before MODULE starts\n"
	"  --pause-on-mismatch  developer mode: a failed assert_screen pauses\n"
	"                instead of failing; Enter resumes (the check fails),\n"
	"                r Enter retries it with the needles reloaded, s Enter\n"
	"                skips it. OUT/.devmode.sock takes os-autoinst's\n"
	"                commands as JSON lines (docs/devmode.md)\n"
	"  --list-testapi  print the Lua test API's functions and variables\n"
	"                (docs/testapi.md's table is made from it) and exit\n"
	"  -v            also print debug messages on the terminal\n"
	"  -h, --help    this text\n"
	"\n"
	"DISTRI_DIR/vars.json, if present, gives defaults; ${NAME} in a value is\n"
	"replaced by the environment variable or job variable NAME. VIGIL_IMAGES is\n"
	"the image cache of scripts/fetch-images (default ~/.cache/vigil/images).\n"
	"\n"
	"Results: testresults/result-<module>.json, testresults/results.json,\n"
	"step screenshots, serial0.txt, vigil-log.txt, vars.json. A failed\n"
	"assert_screen prints its best candidate, each area's similarity against\n"
	"the level it needs, and writes <module>-<n>-diff.png beside the screenshot\n"
	"(see docs/cli-review.md).\n"
	"Exit status: 0 passed or softfailed, 1 failed, 2 incomplete or\n"
	"timeout_exceeded, 3 usage error.\n";

/* The job a signal interrupts: a handler has no other way to reach it. */
static struct runner *signal_runner;

static volatile sig_atomic_t signalled;

static void on_signal(int sig)
{
	signalled = 1;
	if (signal_runner)
		runner_interrupt(signal_runner, sig);
}

/* runner_ask_fn on the terminal: the prompt on stdout, a line from stdin,
 * looked at every 200 ms so that a signal ends the wait. */
static int ask_terminal(void *ctx, const char *prompt, char *answer, size_t len)
{
	struct pollfd p = { .fd = 0, .events = POLLIN };
	size_t n;

	(void)ctx;
	fputs(prompt, stdout);
	fflush(stdout);
	for (;;) {
		int rc;

		if (signalled)
			return -1;
		rc = poll(&p, 1, 200);
		if (rc > 0)
			break;
		if (rc < 0 && errno != EINTR)
			return -1;
	}
	if (!fgets(answer, (int)len, stdin))
		return -1;
	n = strlen(answer);
	while (n > 0 && (answer[n - 1] == '\n' || answer[n - 1] == '\r'))
		answer[--n] = '\0';
	return 0;
}

/* VIGIL_IMAGES, for ${VIGIL_IMAGES} in variables: the image cache of
 * scripts/fetch-images unless the environment says otherwise. */
static char *default_images_env(void)
{
	const char *home = getenv("HOME");
	const char *cache = getenv("XDG_CACHE_HOME");
	size_t len = (cache ? strlen(cache) : (home ? strlen(home) : 4)) + 32;
	char *images;

	if (getenv("VIGIL_IMAGES"))
		return NULL;
	images = malloc(len);
	if (images) {
		if (cache)
			snprintf(images, len, "%s/vigil/images", cache);
		else
			snprintf(images, len, "%s/.cache/vigil/images", home ? home : "/tmp");
		setenv("VIGIL_IMAGES", images, 0);
	}
	return images;
}

int cmd_run(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "var", required_argument, NULL, 'V' },
		{ "vars", required_argument, NULL, 'f' },
		{ "out", required_argument, NULL, 'o' },
		{ "snapshots", required_argument, NULL, 's' },
		{ "resume-from", required_argument, NULL, 'r' },
		{ "explore", no_argument, NULL, 'e' },
		{ "interactive", no_argument, NULL, 'i' },
		{ "pause-at", required_argument, NULL, 'P' },
		{ "pause-on-mismatch", no_argument, NULL, 'M' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "list-testapi", no_argument, NULL, 'L' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct runner_opts o = { 0 };
	struct runner *r = NULL;
	char err[1024], *images = NULL;
	const char **assigns = NULL;
	const char *reason;
	enum job_result res;
	int c, code = 3;

	assigns = calloc((size_t)argc, sizeof(*assigns));
	if (!assigns)
		return 3;
	optind = 1;
	while ((c = getopt_long(argc, argv, "vh", opts, NULL)) != -1) {
		switch (c) {
		case 'V': assigns[o.nassigns++] = optarg; break;
		case 'f': o.vars_file = optarg; break;
		case 'o': o.out_dir = optarg; break;
		case 's': o.snapshots = optarg; break;
		case 'r': o.resume_from = optarg; break;
		case 'e': o.explore = 1; break;
		case 'i': o.ask = ask_terminal; break;
		case 'P': o.pause_at = optarg; break;
		case 'M': o.pause_on_mismatch = "assert_screen"; break;
		case 'v': log_set_stderr_level(LOG_DEBUG); break;
		case 'h': fputs(run_usage, stdout); code = 0; goto out;
		case 'L': code = runner_list_testapi(stdout) ? 3 : 0; goto out;
		default: fputs(run_usage, stderr); goto out;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "vigil run: expected exactly one DISTRI_DIR\n%s", run_usage);
		goto out;
	}
	if (o.ask && !isatty(0)) {
		fprintf(stderr, "vigil run: --interactive asks on the terminal, but stdin is not one;\n"
			"run it from a terminal, or leave --interactive out\n");
		goto out;
	}
	o.distri_dir = argv[optind];
	o.assigns = assigns;
	images = default_images_env();
	if (runner_new(&o, &r, err, sizeof(err))) {
		fprintf(stderr, "vigil run: %s\n", err);
		goto out;
	}
	signal_runner = r;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGHUP, on_signal);
	signal(SIGPIPE, SIG_IGN);
	res = runner_run(r);
	reason = runner_reason(r);
	printf("result: %s\n", job_result_name(res));
	if (reason)
		printf("reason: %s\n", reason);
	printf("results: %s\n", runner_out_dir(r));
	switch (res) {
	case JOB_PASSED:
	case JOB_SOFTFAILED: code = 0; break;
	case JOB_FAILED: code = 1; break;
	default: code = 2; break;
	}
	signal_runner = NULL;
out:
	runner_free(r);
	free(images);
	free(assigns);
	return code;
}
