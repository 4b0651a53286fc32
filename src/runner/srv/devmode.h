/* SPDX-License-Identifier: MIT */
/* devmode.h - developer mode of a running job: a command channel
 * (OUT/.devmode.sock, JSON lines with os-autoinst's command names, see
 * docs/devmode.md) read by a thread, and the pauses it asks for, taken by
 * the runner at safe points: before a module (set_pause_at_test), on a
 * failed screen check (set_pause_on_screen_mismatch: the check then waits
 * for resume, retry or skip), on the next test API call
 * (set_pause_on_next_command) and on a failed module
 * (set_pause_on_failure). While paused the VM and the live view run
 * on. The state is answered on the channel and kept in OUT/.devmode.json.
 * Owns its thread, socket and files; the runner thread alone pauses. */
#ifndef VIGIL_DEVMODE_H
#define VIGIL_DEVMODE_H


#include <jansson.h>
#include "util/out_files.h"

#define DEVMODE_RESULT_DIR ".devmode" /* the paused module's result so far */
#define DEVMODE_LINE_MAX 4096         /* one command line at most */
#define DEVMODE_NAME_MAX 128

struct devmode;
struct runner;
struct module;
struct lua_State;

/* What `vigil run` asks for from the start. terminal: also read commands
 * from stdin (Enter resumes, "retry", "skip"). Strings borrowed. */
struct devmode_opts {
	const char *pause_at;          /* a module's name, or NULL */
	const char *pause_on_mismatch; /* "assert_screen", "check_screen" or NULL */
	int pause_on_next_command;     /* PAUSE_ON_NEXT_COMMAND */
	int pause_on_failure;          /* PAUSE_ON_FAILURE */
	int terminal;
};

/* Open the channel in out_dir and start its thread. A socket path too long
 * for a unix socket leaves the channel closed (logged), not an error. 0,
 * ERR_INVALID (bad option), ERR_NOMEM or -errno. */
int devmode_start(const char *out_dir, const struct devmode_opts *o, struct devmode **out);
/* Stop the thread, remove the socket and the state file. NULL-safe. */
void devmode_stop(struct devmode *d);

/* Handle one command line (as the channel does): the reply, a new
 * reference: {"ret": 1, state...} or {"ret": 0, "error"}. */
json_t *devmode_command(struct devmode *d, const char *line);
/* Call fn(ud, state) on every change of the state (a new version), under
 * developer mode's lock: fn must not call back into it, and state is
 * borrowed for the call. fn NULL stops it. Any thread. */
typedef void (*devmode_watch_fn)(void *ud, const json_t *state);
void devmode_watch(struct devmode *d, devmode_watch_fn fn, void *ud);
/* The state: {"version", "current_test", "pause_test_name",
 * "pause_on_screen_mismatch", "pause_on_next_command", "schedule": the
 * modules' names (empty before the first module),
 * "test_execution_paused": 0 or the reason, "paused": null or {"kind",
 * "module", "step", "tags", "reason"}}. New reference. */
json_t *devmode_state(struct devmode *d);

/* The runner's safe points (runner thread; r->devmode NULL: nothing). */
/* Before module m runs: pauses when it is the module asked for. */
void devmode_at_module(struct runner *r, const struct module *m);
/* At the start of a test API call made from L: pauses when asked to. */
void devmode_at_command(struct runner *r, struct lua_State *L);
/* A screen check of tags (text) failed and recorded its step: pauses when
 * asked to for this kind of check. 1: retry it (the needles were
 * reloaded), 0: let it fail as it would have. */
int devmode_on_mismatch(struct runner *r, const char *tags, int is_assert);
/* The Perl test process's side of the same (it records its own steps):
 * whether a timed-out check of this kind pauses
 * (is_configured_to_pause_on_timeout), and the pause itself
 * (report_timeout): 1 retry (the needles were reloaded), 0 let it fail. */
int devmode_pauses_on_timeout(struct runner *r, int is_assert);
/* The Perl test process's next command (a backend_* command or a screen
 * check, cmd its name) while set_pause_on_next_command is on: pauses
 * before vigil answers it, as isotovideo holds backend commands. */
void devmode_at_perl_command(struct runner *r, const char *cmd);
/* A module failed (reason: os-autoinst's "test died: ..."): pauses when
 * set_pause_on_failure is on (PAUSE_ON_FAILURE); the failure stands after
 * the resume. 1 when it paused. */
int devmode_on_failure(struct runner *r, const char *reason);
int devmode_on_timeout(struct runner *r, const char *tags, int is_assert);

/* The functions above as the core's pause hooks: runner_new sets
 * r->hooks.pause to it when it starts developer mode (core/job.h). */
extern const struct runner_pause_ops devmode_pauses;

#endif
