/* SPDX-License-Identifier: MIT */
/* main.c - maps argv[1] to a subcommand and nothing else. */
#include <stdio.h>
#include <string.h>
#include "cmd/cmd.h"
#include "util/banned.h" /* last: after every system header */

#ifndef VIGIL_VERSION
#define VIGIL_VERSION "unknown"
#endif

struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
};

static const struct command commands[] = {
	{ "run", cmd_run, "run a test distribution against one VM, write a results directory" },
	{ "needle", cmd_needle, "needle tools: match screenshots against needles, cut and show needles" },
	{ "serve", cmd_serve, "serve openQA's REST API (jobs, isos, tables) from SQLite or PostgreSQL" },
	{ "db", cmd_db, "copy a server's SQLite database to PostgreSQL, print a schema" },
	{ "apikey", cmd_apikey, "create API keys for 'vigil serve'" },
	{ "user", cmd_user, "add, list and remove the users who sign in to the web UI" },
	{ "worker", cmd_worker, "take jobs from a 'vigil serve' server, run them, upload the results" },
	{ "new", cmd_new, "scaffold a test distribution: main.lua, a boot module, vars.json, needles/" },
	{ "client", cmd_client, "schedule, list, show, clone, cancel, restart and comment on server jobs" },
	{ "snd2png", cmd_snd2png, "draw a recorded sound as the spectrogram image sound needles match" },
	{ "cmdsrv-connect", cmd_cmdsrv_connect, NULL }, /* internal: not listed */
};

static void usage(FILE *f)
{
	size_t i;
	fprintf(f, "usage: vigil [--help | --version] COMMAND [ARGS]\n\n"
		"vigil tests whole operating systems: it boots an image in QEMU, drives it\n"
		"with keys, mouse and consoles, and judges each step against needles.\n\n"
		"commands:\n");
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (commands[i].summary)
			fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].summary);
	fprintf(f, "\n'vigil COMMAND --help' explains a command's options; see also man vigil.\n");
}

int main(int argc, char **argv)
{
	size_t i;

	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("vigil %s\n", VIGIL_VERSION);
		return 0;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "vigil: unknown command '%s'; try 'vigil --help'\n", argv[1]);
	return 2;
}
