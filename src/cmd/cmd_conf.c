/* SPDX-License-Identifier: MIT */
/* cmd_conf.c - vigil.conf for the subcommands: which file, its sections,
 * a section applied as long options. The INI reading is util/conf.c. */
#include <stdio.h>
#include <string.h>
#include "cmd/cmd_conf.h"
#include "util/banned.h" /* last: after every system header */

const char *const cmd_conf_sections[] = { "server", "worker", "client", "events", "irc", "webhook", "amqp", NULL };

int cmd_conf_load(const char *cmd, int argc, char **argv, struct conf *conf, const char *section,
		  const struct option *opts, conf_opt_fn fn, void *ctx)
{
	static const char *const skip[] = { "config", "help", NULL };
	const char *cli, *path;
	char err[1024];
	bool missing;

	cli = conf_argv_value(argc, argv, "config", &missing);
	if (missing) {
		fprintf(stderr, "vigil %s: --config needs a FILE\n", cmd);
		return 2;
	}
	if (conf_pick(cli, &path, err, sizeof(err)) ||
	    (path && (conf_load(conf, path, err, sizeof(err)) ||
		      conf_check_sections(conf, cmd_conf_sections, err, sizeof(err)) ||
		      conf_apply_options(conf, section, opts, skip, fn, ctx, err, sizeof(err))))) {
		fprintf(stderr, "vigil %s: %s\n", cmd, err);
		return 2;
	}
	return 0;
}

void cmd_opt_error(const char *cmd, const struct option *opts, int val, const char *err)
{
	while (opts->name && opts->val != val)
		opts++;
	fprintf(stderr, "vigil %s: --%s %s\n", cmd, opts->name ? opts->name : "?", err);
}

bool cmd_wants_help(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
			return true;
	return false;
}
