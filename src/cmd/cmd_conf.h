/* SPDX-License-Identifier: MIT */
/* cmd_conf.h - vigil.conf for the subcommands: find the file (--config,
 * $VIGIL_CONFIG, /etc/vigil/vigil.conf), check its sections, apply the
 * command's section as long options before the command line's. */
#ifndef VIGIL_CMD_CONF_H
#define VIGIL_CMD_CONF_H

#include "util/conf.h"

/* Every section vigil.conf may have, NULL-terminated. */
extern const char *const cmd_conf_sections[];

/* Load the configuration file for `vigil CMD` into conf (left empty when
 * there is none) and apply its [section] through fn (keys "config" and
 * "help" refused). 0, or 2 after printing "vigil CMD: FILE:LINE: ..." to
 * stderr. conf must have been conf_init'ed; the caller releases it (the
 * values fn keeps are borrowed from it). */
int cmd_conf_load(const char *cmd, int argc, char **argv, struct conf *conf, const char *section,
		  const struct option *opts, conf_opt_fn fn, void *ctx);

/* Print "vigil CMD: --NAME ERR" for the option whose getopt value is val. */
void cmd_opt_error(const char *cmd, const struct option *opts, int val, const char *err);

/* Whether argv has -h or --help before any "--". */
bool cmd_wants_help(int argc, char **argv);

#endif
