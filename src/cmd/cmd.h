/* SPDX-License-Identifier: MIT */
/* cmd.h - entry points of the subcommands, each in src/cmd/<name>.c.
 * Each takes argv starting at the subcommand's name and returns the exit code. */
#ifndef VIGIL_CMD_H
#define VIGIL_CMD_H

int cmd_run(int argc, char **argv);
int cmd_needle(int argc, char **argv);
int cmd_serve(int argc, char **argv);
int cmd_apikey(int argc, char **argv);
int cmd_db(int argc, char **argv);
int cmd_user(int argc, char **argv);
int cmd_worker(int argc, char **argv);
int cmd_client(int argc, char **argv);
int cmd_new(int argc, char **argv);
int cmd_snd2png(int argc, char **argv);
/* Internal: QEMU runs it for each guest connection to the command server. */
int cmd_cmdsrv_connect(int argc, char **argv);

#endif
