/* SPDX-License-Identifier: MIT */
/* job.h - the core of the runner: the context of one job (struct runner)
 * and the services every room of src/runner/ stands on (its end, clock,
 * progress, needles), with the hooks through which the rooms below reach
 * the ones above (docs/design.md, "The runner's rooms"). Internal to
 * src/runner: only runner.c creates and frees it (runner_new/runner_free
 * in runner.h); other modules see struct runner as opaque. */
#ifndef VIGIL_RUNNER_CORE_JOB_H
#define VIGIL_RUNNER_CORE_JOB_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>
#include "runner/core/console.h"
#include "runner/core/results.h"
#include "runner/core/steps.h"
#include "runner/core/vars.h"

struct lua_State;
struct needle;
struct needle_set;
struct qemu;
struct qmp;
struct vnc;
struct frame;
struct match_screen;
struct serial;
struct match_result;
struct shots;
struct video;
struct cmdsrv;

enum console_kind { CONSOLE_VGA, CONSOLE_SERIAL };

/* screen.c's: the prepared screen of the last frame searched, kept while
 * that frame is searched again (screen_release frees it). */
struct screen_cache {
	struct frame *f;
	struct match_screen *ms;
};

struct liveview;
struct explore;
struct devmode;
struct module;
struct runner;

/* Developer mode's pauses (srv/devmode.c registers them with
 * devmode_hooks): the front ends and the screen checks call the
 * runner__pause_* functions below, which do nothing while none is
 * registered. Each is as its devmode_* namesake (srv/devmode.h). */
struct runner_pause_ops {
	void (*at_module)(struct runner *r, const struct module *m);
	void (*at_command)(struct runner *r, struct lua_State *L);
	void (*at_perl_command)(struct runner *r, const char *cmd);
	int (*on_failure)(struct runner *r, const char *reason);
	int (*on_mismatch)(struct runner *r, const char *tags, int is_assert);
	int (*pauses_on_timeout)(struct runner *r, int is_assert);
	int (*on_timeout)(struct runner *r, const char *tags, int is_assert);
};

/* How the rooms below (core, primitives, front ends) report to the rooms
 * above them without calling up: each room above registers its hook when
 * it starts and clears it when it stops; NULL: nobody listens. */
struct runner_hooks {
	/* Each progress line (runner__progress), after it was printed and
	 * logged: runner.c shows it on the live view and --explore's frames. */
	void (*progress)(struct runner *r, const char *line);
	/* The test changed the variables (runner__vars_changed): the command
	 * server (srv/cmdsrv_job.c) copies them for its /vars. */
	void (*vars_changed)(struct runner *r);
	const struct runner_pause_ops *pause;
};

struct runner {
	struct vars vars;
	char *distri_dir;     /* absolute */
	char *out_dir;        /* absolute results directory */
	char *testresults;    /* out_dir/testresults */
	char *workdir;        /* out_dir/.vm (or --snapshots DIR): sockets, overlays */
	int keep_disks;       /* --snapshots: the overlays and their snapshots stay */
	int log_opened;       /* runner_new opened out_dir/vigil-log.txt */
	char *resume_from;    /* --resume-from MODULE, or NULL */
	long last_milestone;  /* index of the last module whose snapshot was saved, -1 none */
	struct needle_set *needles;
	struct shots *shots;  /* background screenshot writer */
	struct steps steps;   /* the running module's step recorder; steps.t0 is
	                       * QEMU's start, video time 0 and every frame time's */

	struct qemu *qemu;
	struct qmp *qmp;
	struct vnc *vnc;
	struct serial *serial;
	struct video *video;  /* video.webm encoder, NULL with NOVIDEO=1 */
	struct liveview *liveview; /* live view frames (live.on -> live.png) */
	struct devmode *devmode;   /* developer mode's channel and pauses */
	int xres, yres;

	struct lua_State *L;
	/* The thread of the test API call running now (a coroutine's or L),
	 * for the step lines; NULL outside a module's run. */
	struct lua_State *api_L;
	struct module *modules;
	size_t nmodules, cur;

	double start;         /* monotonic: when vigil started the job */
	double deadline;      /* runner__clock: MAX_JOB_TIME */
	double starved;       /* seconds QEMU waited for a CPU (runner__clock) */
	double timeout_scale;
	double last_api;      /* monotonic: last test API call (busy-loop guard) */
	double stuck_limit;   /* seconds without an API call before a module is stopped */
	double typing_interval; /* seconds per key */

	enum console_kind console;
	size_t serial_offset; /* wait_serial start for the current module */
	int mouse_x, mouse_y;
	double review_level;  /* near-miss similarity for needs_review */

	json_t *last_match;   /* the last matched needle's serialisation (tags) */
	struct screen_cache screen;

	int abort;            /* stop running modules */
	volatile int signal;  /* set by a signal handler: the job was interrupted */
	int expect_exit;      /* power off asked: QEMU going away is no fault */
	enum job_result abort_result;
	char reason[1024];    /* why the job ended early */
	unsigned step;        /* progress counter */

	/* Issue 14's command-line review (docs/cli-review.md). */
	int explore_on;           /* --explore asked */
	struct explore *explore;  /* --explore frame writer while the VM runs, or NULL */
	/* --interactive (runner_ask_fn of runner.h), or NULL (also after the input ended) */
	int (*ask)(void *ctx, const char *prompt, char *answer, size_t len);
	void *ask_ctx;
	char check_why[640];      /* screen.c: the last failed assert's best candidate, "" none */
	char unknown_tags[256];   /* screen.c: the unknown tags said last (said once in a row) */
	int unknown_offered;      /* screen.c: --interactive offered them a needle already */
	/* Issue 15: a Perl distribution (main.pm) run through os-autoinst's
	 * test process (runner/perl/perl.c). */
	int perl;                 /* the job runs Perl modules: Perl writes their results */
	struct frame *check_frame; /* screen.c: the frame the last check ended on (referenced), or NULL */
	json_t *check_cands;      /* screen.c: the last failed check's candidates (candidate objects), or NULL */
	int check_keep_fails;     /* perl.c: keep the failed screens os-autoinst keeps during a check */
	struct screen_fail *check_fails; /* screen.c: those screens, in time order (screen_fails_clear) */
	size_t check_nfails;
	struct cmdsrv *cmdsrv;    /* the command server (runner/srv/cmdsrv.c) with NICTYPE=user, or NULL */
	/* Issue 15's consoles (runner/core/console.c): the table both test APIs
	 * select from; r->console is the selected one's kind. */
	struct console_set consoles;
	struct serial *virtio;    /* VIRTIO_CONSOLE's virtconsole (virtio_console.log), or NULL */
	size_t virtio_offset;     /* wait_serial start on it */
	size_t term_offset;       /* Perl: a serial-terminal's own position in the serial
	                           * output (from its activation; not reset per module) */
	/* testapi_sound.c: a wavcapture runs; the module that started one
	 * (once per module, as os-autoinst), -1 none */
	int sound_running;
	long sound_module;
	struct runner_hooks hooks;
};

/* Mark the job as ended early (first reason wins). */
void runner__abort(struct runner *r, enum job_result res, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* The out-of-memory policy for what decides the result: when rc is
 * ERR_NOMEM (what says what could not be built or written) or a step was
 * lost (r->steps.err), the job ends incomplete, "out of memory: WHAT
 * (module 'M')" (runner__abort); 1 then, else 0. Called by
 * testapi_check_abort (so every test API call looks), after each module
 * and each Perl message, and at the job's end. */
int runner__results_nomem(struct runner *r, int rc, const char *what);
/* True when the job must end now: aborted (VM gone, out of memory, a
 * signal) or past MAX_JOB_TIME (then aborted here); r->reason says why.
 * The check every primitive makes before it acts and after it fails (the
 * Lua front end raises r->reason: testapi_check_abort). */
int runner__aborted(struct runner *r);
/* err gets r->reason when the job must end (runner__aborted), else
 * nothing changes; returns rc. For a primitive that failed. */
int runner__fail(struct runner *r, int rc, char *err, size_t errlen);
/* True once the VM is gone (QEMU exited or VNC lost); fills r->reason. */
int runner__vm_dead(struct runner *r);
/* The one check every wait of both test APIs makes when it ends without
 * what it waited for (a screen check, wait_serial, script_run, ... ran
 * out; wait_still_screen also when it saw a still screen): when QEMU's
 * process is stopped (it made no progress: no frames, no serial output,
 * no QMP), the job ends incomplete (runner__abort) with "QEMU made no
 * progress: ... so <what> after <waited> s", what from fmt naming the
 * wait (e.g. "assert_screen 'grub' ran out"); 1 then (also when the job
 * already ended incomplete), else 0. A frozen VM is no verdict on the
 * test. */
int runner__vm_frozen(struct runner *r, double waited, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Seconds since the job started, for progress lines. */
double runner__elapsed(const struct runner *r);
/* The clock every timeout of the test API runs on (seconds): monotonic
 * time less the time QEMU has waited for a CPU (qemu_starved), so that a
 * busy host makes waits longer in wall time instead of failing them; a
 * stopped QEMU does not wait for a CPU, so its waits still run out. */
double runner__clock(struct runner *r);
/* One progress line on stdout: "[  12.3s] module: what". */
void runner__progress(struct runner *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Load the needles from base's needles directory (NEEDLES_DIR relative
 * to it) into r->needles (which must be NULL). 0, or the error with err
 * filled (a missing directory is only a warning). */
int runner__load_needles(struct runner *r, const char *base, char *err, size_t errlen);
/* Load the needles again, from base's needles directory (NEEDLES_DIR
 * relative to it; NULL: the job's distribution). 0, or the error (the
 * old needles stay). */
int runner__reload_needles(struct runner *r, const char *base);
/* The module running now (or NULL). */
struct module *runner__module(struct runner *r);

/* Developer mode's pauses through r->hooks.pause (nothing, 0, without). */
void runner__pause_at_module(struct runner *r, const struct module *m);
void runner__pause_at_command(struct runner *r, struct lua_State *L);
void runner__pause_at_perl_command(struct runner *r, const char *cmd);
int runner__pause_on_failure(struct runner *r, const char *reason);
int runner__pause_on_mismatch(struct runner *r, const char *tags, int is_assert);
int runner__pauses_on_timeout(struct runner *r, int is_assert);
int runner__pause_on_timeout(struct runner *r, const char *tags, int is_assert);
/* The test changed r->vars: tell whoever keeps a copy (r->hooks.vars_changed). */
void runner__vars_changed(struct runner *r);

#endif
