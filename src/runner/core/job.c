/* SPDX-License-Identifier: MIT */
/* job.c - the core of a job that every room of the runner stands on: how
 * it ends early (runner__abort and the checks that call it), its clock,
 * its progress lines, the module running now and the needles it judges
 * with. Calls no room above it: what they must hear (progress lines,
 * developer mode's pauses, the command server's variables) goes through
 * the hooks they register in r->hooks (core/job.h). */
#define LOG_MODULE "runner"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include "image/needle.h"
#include "runner/core/job.h"
#include "util/err.h"
#include "util/file.h"
#include "util/log.h"
#include "util/path.h"
#include "util/str.h"
#include "util/time.h"
#include "vm/qemu.h"
#include "vm/vnc.h"
#include "util/banned.h" /* last: after every system header */

void runner__abort(struct runner *r, enum job_result res, const char *fmt, ...)
{
	va_list ap;
	if (r->abort)
		return;
	r->abort = 1;
	r->abort_result = res;
	va_start(ap, fmt);
	vsnprintf(r->reason, sizeof(r->reason), fmt, ap);
	va_end(ap);
	log_err("%s", r->reason);
}

int runner__vm_frozen(struct runner *r, double waited, const char *fmt, ...)
{
	char what[400];
	va_list ap;

	if (r->abort || !r->qemu || !qemu_stopped(r->qemu))
		return r->abort && r->abort_result == JOB_INCOMPLETE;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	runner__abort(r, JOB_INCOMPLETE,
		      "QEMU made no progress: its process (pid %lld) is stopped (state T, e.g. SIGSTOP), so %s "
		      "after %.0f s",
		      (long long)qemu_pid(r->qemu), what, waited);
	return 1;
}

int runner__results_nomem(struct runner *r, int rc, const char *what)
{
	struct module *m = runner__module(r);

	if (rc != ERR_NOMEM && r->steps.err != ERR_NOMEM)
		return 0;
	runner__abort(r, JOB_INCOMPLETE, "out of memory: %s%s%s%s", rc == ERR_NOMEM ? what : "a step was lost",
		      m ? " (module '" : "", m ? m->name : "", m ? "')" : "");
	return 1;
}

int runner__aborted(struct runner *r)
{
	(void)runner__results_nomem(r, 0, "");
	if (r->abort) {
		if (r->signal && !r->reason[0])
			snprintf(r->reason, sizeof(r->reason), "vigil was interrupted by signal %d", (int)r->signal);
		if (!r->reason[0])
			snprintf(r->reason, sizeof(r->reason), "job aborted");
		return 1;
	}
	if (runner__clock(r) >= r->deadline) {
		runner__abort(r, JOB_TIMEOUT_EXCEEDED, "MAX_JOB_TIME exceeded");
		return 1;
	}
	return 0;
}

int runner__fail(struct runner *r, int rc, char *err, size_t errlen)
{
	if (runner__aborted(r) && errlen)
		snprintf(err, errlen, "%s", r->reason);
	return rc;
}

int runner__vm_dead(struct runner *r)
{
	char why[512];

	if (r->abort && r->abort_result == JOB_INCOMPLETE)
		return 1;
	if (r->qemu && !qemu_running(r->qemu)) {
		if (r->expect_exit)
			return 1;
		qemu_exit_reason(r->qemu, why, sizeof(why));
		runner__abort(r, JOB_INCOMPLETE, "QEMU exited unexpectedly: %s", why);
		return 1;
	}
	if (r->vnc && !vnc_alive(r->vnc)) {
		vnc_error(r->vnc, why, sizeof(why));
		/* QEMU may be exiting right now (its sockets close before it is
		 * reaped): prefer its reason. A busy machine may take a while
		 * between the two, so give it up to 2 s, not one short nap. */
		for (int i = 0; i < 100 && r->qemu && qemu_running(r->qemu); i++)
			time_sleep_ms(20);
		if (r->qemu && !qemu_running(r->qemu))
			return runner__vm_dead(r);
		runner__abort(r, JOB_INCOMPLETE, "VNC connection lost: %s", why);
		return 1;
	}
	return 0;
}

double runner__elapsed(const struct runner *r)
{
	return time_mono() - r->start;
}

double runner__clock(struct runner *r)
{
	if (r->qemu)
		r->starved = qemu_starved(r->qemu);
	return time_mono() - r->starved;
}

struct module *runner__module(struct runner *r)
{
	return r->cur < r->nmodules ? &r->modules[r->cur] : NULL;
}

void runner__progress(struct runner *r, const char *fmt, ...)
{
	struct module *m = runner__module(r);
	char line[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	printf("[%7.2fs] %s: %s\n", runner__elapsed(r), m ? m->name : "-", line);
	fflush(stdout);
	log_info("%s: %s", m ? m->name : "-", line);
	if (r->hooks.progress)
		r->hooks.progress(r, line);
}

static void needle_warning(void *ctx, const char *msg)
{
	(void)ctx;
	log_warn("%s", msg);
	fprintf(stderr, "warning: %s\n", msg);
}

int runner__load_needles(struct runner *r, const char *base, char *err, size_t errlen)
{
	const char *nd = vars_get(&r->vars, "NEEDLES_DIR");
	char *dir;
	int rc;

	dir = nd ? (nd[0] == '/' ? str_dup(nd) : path_join(base, nd)) : path_join(base, "needles");
	r->needles = calloc(1, sizeof(*r->needles));
	if (!dir || !r->needles) {
		free(dir);
		return ERR_NOMEM;
	}
	if (!file_is_dir(dir)) {
		log_warn("needles directory '%s' does not exist: screen checks can only fail", dir);
		rc = needle_set_load(r->needles, dir, needle_warning, r);
		free(dir);
		return 0;
	}
	rc = needle_set_load(r->needles, dir, needle_warning, r);
	if (rc)
		snprintf(err, errlen, "needles '%s': %s", dir, err_str(rc));
	else
		log_info("loaded %zu needles from %s", needle_set_count(r->needles), dir);
	free(dir);
	return rc;
}

int runner__reload_needles(struct runner *r, const char *base)
{
	struct needle_set *old = r->needles;
	char err[1024] = "";
	int rc;

	r->needles = NULL;
	rc = runner__load_needles(r, base ? base : r->distri_dir, err, sizeof(err));
	if (rc) {
		log_err("reloading the needles: %s", err);
		if (r->needles) {
			needle_set_release(r->needles);
			free(r->needles);
		}
		r->needles = old;
		return rc;
	}
	if (old) {
		needle_set_release(old);
		free(old);
	}
	return 0;
}

void runner__pause_at_module(struct runner *r, const struct module *m)
{
	if (r->hooks.pause)
		r->hooks.pause->at_module(r, m);
}

void runner__pause_at_command(struct runner *r, struct lua_State *L)
{
	if (r->hooks.pause)
		r->hooks.pause->at_command(r, L);
}

void runner__pause_at_perl_command(struct runner *r, const char *cmd)
{
	if (r->hooks.pause)
		r->hooks.pause->at_perl_command(r, cmd);
}

int runner__pause_on_failure(struct runner *r, const char *reason)
{
	return r->hooks.pause ? r->hooks.pause->on_failure(r, reason) : 0;
}

int runner__pause_on_mismatch(struct runner *r, const char *tags, int is_assert)
{
	return r->hooks.pause ? r->hooks.pause->on_mismatch(r, tags, is_assert) : 0;
}

int runner__pauses_on_timeout(struct runner *r, int is_assert)
{
	return r->hooks.pause ? r->hooks.pause->pauses_on_timeout(r, is_assert) : 0;
}

int runner__pause_on_timeout(struct runner *r, const char *tags, int is_assert)
{
	return r->hooks.pause ? r->hooks.pause->on_timeout(r, tags, is_assert) : 0;
}

void runner__vars_changed(struct runner *r)
{
	if (r->hooks.vars_changed)
		r->hooks.vars_changed(r);
}
