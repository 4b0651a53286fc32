/* SPDX-License-Identifier: MIT */
/* runner.c - one job from start to end: its variables and results
 * directory, load the schedule (main.lua) and the needles, start QEMU and
 * connect QMP, VNC and the serial port, run each test module in Lua, write
 * the results, and always take the VM down. Owns struct runner. */
#define LOG_MODULE "runner"
#include <ctype.h>
#include <lua.h>
#include <lauxlib.h>
#include <lualib.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <dirent.h>
#include <unistd.h>
#include "image/needle.h"
#include "runner/core/job.h"
#include "runner/core/shots.h"
#include "runner/lua/testapi.h"
#include "runner/perl/perl.h"
#include "runner/prim/explore.h"
#include "runner/prim/liveview.h"
#include "runner/prim/machine.h"
#include "runner/prim/screen.h"
#include "runner/runner.h"
#include "runner/srv/cmdsrv.h"
#include "runner/srv/devmode.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/file.h"
#include "util/limits.h"
#include "util/log.h"
#include "util/path.h"
#include "util/str.h"
#include "util/time.h"
#include "vm/qemu.h"
#include "vm/qmp.h"
#include "vm/serial.h"
#include "vm/vnc.h"
#include "video/video.h"
#include "util/banned.h" /* last: after every system header */

#define MAX_MODULES 1000
#define HOOK_INSTRUCTIONS 100000
#define RUN_HOOKS_KEY "vigil.run_hooks"

/* A module's run between its hooks; the module table is its argument. */
static const char run_hooks[] =
	"local m = ...\n"
	"if m.pre_run_hook then m.pre_run_hook(m) end\n"
	"m.run(m)\n"
	"if m.post_run_hook then m.post_run_hook(m) end\n";



/* Stops a module that makes no test API call for too long (a busy loop)
 * and any module once MAX_JOB_TIME has passed. */
static void busy_hook(lua_State *L, lua_Debug *ar)
{
	struct runner *r;
	double now = time_mono();
	(void)ar;
	lua_getfield(L, LUA_REGISTRYINDEX, "vigil.runner");
	r = lua_touserdata(L, -1);
	lua_pop(L, 1);
	if (runner__clock(r) >= r->deadline) {
		runner__abort(r, JOB_TIMEOUT_EXCEEDED, "MAX_JOB_TIME exceeded");
		luaL_error(L, "%s", r->reason);
	}
	if (now - r->last_api > r->stuck_limit)
		luaL_error(L, "module stopped: no test API call for %d s (a busy loop?)", (int)r->stuck_limit);
}

/* Whether list (os-autoinst's "a, b,c") names the module: by its name
 * ("boot") or its full name ("category-boot" for "category/boot"). */
static int module_listed(const char *list, const char *loadname)
{
	const char *base = strrchr(loadname, '/');
	char full[256];
	size_t i;

	snprintf(full, sizeof(full), "%s", loadname);
	for (i = 0; full[i]; i++)
		if (full[i] == '/')
			full[i] = '-';
	if (str_ends_with(full, ".lua"))
		full[strlen(full) - 4] = '\0';
	base = base ? base + 1 : loadname;
	while (list && *list) {
		size_t len;
		while (*list == ' ' || *list == '\t' || *list == ',')
			list++;
		len = strcspn(list, ",");
		while (len > 0 && (list[len - 1] == ' ' || list[len - 1] == '\t'))
			len--;
		if (len && ((strlen(full) == len && !strncmp(full, list, len)) ||
			    (!strncmp(base, list, len) && (base[len] == '\0' || !strcmp(base + len, ".lua")))))
			return 1;
		list += strcspn(list, ",");
	}
	return 0;
}

/* os-autoinst's is_applicable: EXCLUDE_MODULES wins over INCLUDE_MODULES. */
static int module_applicable(struct runner *r, const char *loadname)
{
	const char *ex = vars_get(&r->vars, "EXCLUDE_MODULES");
	const char *in = vars_get(&r->vars, "INCLUDE_MODULES");

	if (ex && *ex && module_listed(ex, loadname))
		return 0;
	if (in && *in && !module_listed(in, loadname))
		return 0;
	return 1;
}

/* loadtest "name" (or "category/name"): adds tests/<name>.lua to the schedule. */
static int l_loadtest(lua_State *L)
{
	struct runner *r;
	const char *name = luaL_checkstring(L, 1);
	struct module *m, *grown;
	char *script, *path, *base;
	struct buf b;
	int rc;

	lua_getfield(L, LUA_REGISTRYINDEX, "vigil.runner");
	r = lua_touserdata(L, -1);
	lua_pop(L, 1);
	if (strstr(name, "..") || name[0] == '/' || !*name)
		return luaL_error(L, "loadtest: invalid module name '%s'", name);
	if (!module_applicable(r, name)) {
		log_info("loadtest '%s': not scheduled (EXCLUDE_MODULES / INCLUDE_MODULES)", name);
		return 0;
	}
	if (r->nmodules >= MAX_MODULES)
		return luaL_error(L, "loadtest: more than %d modules", MAX_MODULES);
	script = malloc(strlen(name) + 16);
	if (!script)
		return luaL_error(L, "out of memory");
	snprintf(script, strlen(name) + 16, "tests/%s%s", name, str_ends_with(name, ".lua") ? "" : ".lua");
	path = path_join(r->distri_dir, script);
	buf_init(&b, LIMIT_LUA_FILE);
	rc = path ? file_read_all(path, &b) : ERR_NOMEM;
	free(path);
	if (rc) {
		buf_release(&b);
		lua_pushfstring(L, "loadtest '%s': cannot read %s: %s", name, script, err_str(rc));
		free(script);
		return lua_error(L);
	}
	buf_release(&b);
	grown = realloc(r->modules, (r->nmodules + 1) * sizeof(*r->modules));
	if (!grown) {
		free(script);
		return luaL_error(L, "out of memory");
	}
	r->modules = grown;
	m = &r->modules[r->nmodules++];
	memset(m, 0, sizeof(*m));
	base = path_stem(script, ".lua");
	m->name = base;
	m->script = script;
	return 0;
}

/* Loads tests/<module>.lua and leaves its table on the stack. A module may
 * return a table {run=, flags=, post_fail_hook=} or just a run function. */
static int load_module(struct runner *r, struct module *m, char *err, size_t errlen)
{
	lua_State *L = r->L;
	char *path = path_join(r->distri_dir, m->script), *chunk = NULL;
	struct buf b;
	int rc;

	buf_init(&b, LIMIT_LUA_FILE);
	rc = path ? file_read_all(path, &b) : ERR_NOMEM;
	free(path);
	if (rc) {
		snprintf(err, errlen, "%s: %s", m->script, err_str(rc));
		buf_release(&b);
		return rc;
	}
	chunk = malloc(strlen(m->script) + 2);
	if (!chunk) {
		buf_release(&b);
		return ERR_NOMEM;
	}
	snprintf(chunk, strlen(m->script) + 2, "@%s", m->script);
	testapi_module_before(L, r->distri_dir, m->script);
	rc = luaL_loadbuffer(L, b.data, b.len, chunk);
	free(chunk);
	buf_release(&b);
	if (rc != LUA_OK) {
		snprintf(err, errlen, "%s", lua_tostring(L, -1));
		lua_pop(L, 1);
		return ERR_PROTO;
	}
	if (lua_pcall(L, 0, 1, 0) != LUA_OK) {
		snprintf(err, errlen, "%s", lua_tostring(L, -1));
		lua_pop(L, 1);
		return ERR_PROTO;
	}
	if (testapi_module_after(L, err, errlen))
		return ERR_PROTO;
	if (lua_isfunction(L, -1)) {
		lua_createtable(L, 0, 1);
		lua_insert(L, -2);
		lua_setfield(L, -2, "run");
	}
	if (!lua_istable(L, -1)) {
		snprintf(err, errlen, "%s: a module must return a table with a run function (or define a global run)", m->script);
		lua_pop(L, 1);
		return ERR_PROTO;
	}
	lua_getfield(L, -1, "run");
	if (!lua_isfunction(L, -1)) {
		snprintf(err, errlen, "%s: the module table has no run function", m->script);
		lua_pop(L, 2);
		return ERR_PROTO;
	}
	lua_pop(L, 1);
	lua_getfield(L, -1, "flags");
	if (lua_istable(L, -1)) {
		static const struct { const char *name; unsigned bit; } flags[] = {
			{ "fatal", MODULE_FLAG_FATAL }, { "milestone", MODULE_FLAG_MILESTONE },
			{ "ignore_failure", MODULE_FLAG_IGNORE_FAILURE }, { "no_rollback", MODULE_FLAG_NO_ROLLBACK },
			{ "always_rollback", MODULE_FLAG_ALWAYS_ROLLBACK },
		};
		size_t i;
		for (i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
			lua_getfield(L, -1, flags[i].name);
			if (lua_isnumber(L, -1) ? lua_tonumber(L, -1) != 0 : lua_toboolean(L, -1))
				m->flags |= flags[i].bit;
			lua_pop(L, 1);
		}
	} else if (!lua_isnil(L, -1)) {
		snprintf(err, errlen, "%s: flags must be a table like { fatal = true }", m->script);
		lua_pop(L, 2);
		return ERR_PROTO;
	}
	lua_pop(L, 1);
	return 0;
}

/* The current line of the innermost call on L's stack that runs in the
 * module's own file (a helper library's frames are passed over); 0 when
 * none does. */
static int module_line(lua_State *L, const struct module *m)
{
	lua_Debug ar;
	int level;

	for (level = 0; lua_getstack(L, level, &ar); level++) {
		if (!lua_getinfo(L, "Sl", &ar) || ar.currentline <= 0 || ar.source[0] != '@')
			continue;
		if (!strcmp(ar.source + 1, m->script))
			return ar.currentline;
	}
	return 0;
}

/* steps.line: the module line of the test API call making a step; after
 * the module's run has failed (its "Failed" step), the failure's line. */
static int step_line(void *ctx)
{
	struct runner *r = ctx;
	struct module *m = r->steps.m;
	int line = 0;

	if (!m)
		return 0;
	if (r->api_L)
		line = module_line(r->api_L, m);
	/* A call inside a coroutine: its caller in the module is on L. */
	if (!line && r->api_L && r->api_L != r->L)
		line = module_line(r->L, m);
	return line ? line : m->fail_line;
}

/* r->hooks.progress: each progress line on the live view and, with
 * --explore, in its frames' notes. */
static void progress_note(struct runner *r, const char *line)
{
	struct module *m = runner__module(r);
	int ndetails = m && m->details ? (int)json_array_size(m->details) : 0;

	liveview_note(r->liveview, m ? m->name : "", ndetails, m && r->steps.m == m ? step_line(r) : 0, line);
	explore_note(r->explore, m ? m->name : "", ndetails, line);
}

/* The message handler of a module's run: keeps the message, and notes
 * where in the module's file the error came from while the stack is
 * still there. */
static int traceback(lua_State *L)
{
	const char *msg = lua_tostring(L, 1);
	struct runner *r;
	struct module *m;

	lua_getfield(L, LUA_REGISTRYINDEX, "vigil.runner");
	r = lua_touserdata(L, -1);
	lua_pop(L, 1);
	m = r ? r->steps.m : NULL;
	if (m && !m->fail_line)
		m->fail_line = module_line(L, m);
	/* Keep the plain message: the location is already in it. */
	lua_pushstring(L, msg ? msg : "(error object is not a string)");
	return 1;
}

/* Copy the module's file into testresults as source-<module>.lua (an
 * artefact name: other characters become '_'), for the job page's source
 * view; m->source_artefact names it. A failure costs only the view. */
static void copy_source(struct runner *r, struct module *m)
{
	char *path = path_join(r->distri_dir, m->script), *dst = NULL, *name;
	size_t n = strlen(m->name) + sizeof("source-.lua"), i;
	struct buf b;
	int rc;

	buf_init(&b, LIMIT_LUA_FILE);
	if (!path || !(name = malloc(n))) {
		free(path);
		return;
	}
	snprintf(name, n, "source-%s.lua", m->name);
	for (i = 0; name[i]; i++)
		if (!isalnum((unsigned char)name[i]) && !strchr("._+@-", name[i]))
			name[i] = '_';
	if ((rc = file_read_all(path, &b)) == 0) {
		dst = path_join(r->testresults, name);
		rc = dst ? file_write_all(dst, b.data ? b.data : "", b.len) : ERR_NOMEM;
	}
	if (rc) {
		log_warn("module '%s': its source is not kept for the job page: %s", m->name, err_str(rc));
		free(name);
	} else {
		free(m->source_artefact);
		m->source_artefact = name;
	}
	buf_release(&b);
	free(dst);
	free(path);
}

/* Runs one module; its table is at the top of the stack (popped). */
static void run_module(struct runner *r, struct module *m)
{
	lua_State *L = r->L;
	int rc;

	m->start = time_mono();
	m->result = MODULE_OK;
	copy_source(r, m);
	r->steps.m = m;
	r->serial_offset = serial_len(r->serial);
	r->last_api = time_mono();
	runner__progress(r, "starting module");
	lua_pushcfunction(L, traceback);
	/* pre_run_hook, run, post_run_hook as os-autoinst's runtest; each gets
	 * the module table (self). */
	lua_getfield(L, LUA_REGISTRYINDEX, RUN_HOOKS_KEY);
	lua_pushvalue(L, -3);
	lua_sethook(L, busy_hook, LUA_MASKCOUNT, HOOK_INSTRUCTIONS);
	rc = lua_pcall(L, 1, 0, -3);
	lua_sethook(L, NULL, 0, 0);
	r->api_L = NULL; /* its threads may be gone: the steps below take fail_line */
	/* Out of memory is no verdict on the test: the job ends incomplete. */
	if (rc == LUA_ERRMEM && !r->abort)
		runner__abort(r, JOB_INCOMPLETE, "out of memory while running a test module");
	if (rc != LUA_OK) {
		const char *msg = lua_tostring(L, -1);
		m->result = MODULE_FAIL;
		const char *said;
		m->fail_message = str_dup(msg ? msg : "unknown error");
		lua_pop(L, 1);
		/* Why the module failed is part of its result: without it the
		 * job ends incomplete (r->abort), the log still says "failed". */
		(void)runner__results_nomem(r, m->fail_message ? 0 : ERR_NOMEM, "a module's failure message was lost");
		said = m->fail_message ? m->fail_message : "out of memory";
		if (!m->needs_review)
			m->hard_fail = 1;
		/* An assert_screen near miss keeps needs_review; any other error is hard. */
		if (m->needs_review && !strstr(said, "no candidate needle"))
			m->hard_fail = 1;
		runner__progress(r, "failed: %s", said);
		{
			struct buf b;
			buf_init(&b, 1 << 20);
			/* too big: the step says no more than that it died */
			if (buf_printf(&b, "# Test died: %s\n", said) == ERR_NOMEM)
				r->steps.err = ERR_NOMEM; /* a step lost: runner__results_nomem ends the job */
			steps_text(&r->steps, "Failed", b.data ? b.data : "", "fail");
			buf_release(&b);
		}
		/* developer mode's pause on failure (os-autoinst's reason) */
		if (!r->abort) {
			char why[600];
			snprintf(why, sizeof(why), "test died: %s", said);
			(void)runner__pause_on_failure(r, why);
		}
		if (!r->abort) {
			lua_getfield(L, -2, "post_fail_hook");
			if (lua_isfunction(L, -1)) {
				runner__progress(r, "running post_fail_hook");
				lua_sethook(L, busy_hook, LUA_MASKCOUNT, HOOK_INSTRUCTIONS);
				r->last_api = time_mono();
				lua_pushvalue(L, -3);
				if (lua_pcall(L, 1, 0, -3) != LUA_OK) {
					runner__progress(r, "post_fail_hook failed: %s", lua_tostring(L, -1));
					lua_pop(L, 1);
				}
				lua_sethook(L, NULL, 0, 0);
				r->api_L = NULL;
			} else {
				lua_pop(L, 1);
			}
		}
	}
	lua_pop(L, 2); /* traceback, module table */
	if (m->force_softfail && m->result == MODULE_FAIL) {
		/* force_soft_failure (usually from post_fail_hook): a known issue. */
		m->result = MODULE_SOFTFAIL;
		m->hard_fail = m->needs_review = 0;
	}
	r->steps.m = NULL;
	m->end = time_mono();
	runner__progress(r, "module %s (%.2fs)", module_result_name(m->result), m->end - m->start);
	rc = results_write_module(r->testresults, m);
	if (runner__results_nomem(r, rc, "its result-<module>.json could not be written"))
		; /* the job ends incomplete: no verdict on a part */
	else if (rc)
		log_warn("could not write the result of module '%s'", m->name);
}

static int load_schedule(struct runner *r, char *err, size_t errlen)
{
	char *main_path = path_join(r->distri_dir, "main.lua");
	int rc;

	if (!main_path)
		return ERR_NOMEM;
	if (!file_exists(main_path)) {
		snprintf(err, errlen, "%s: no schedule (main.lua) in the distribution", main_path);
		free(main_path);
		return ERR_NOT_FOUND;
	}
	lua_register(r->L, "loadtest", l_loadtest);
	rc = luaL_loadfile(r->L, main_path);
	free(main_path);
	if (rc != LUA_OK || lua_pcall(r->L, 0, 0, 0) != LUA_OK) {
		snprintf(err, errlen, "schedule: %s", lua_tostring(r->L, -1));
		lua_pop(r->L, 1);
		return ERR_PROTO;
	}
	if (r->nmodules == 0) {
		snprintf(err, errlen, "schedule: main.lua scheduled no module (call loadtest \"name\")");
		return ERR_INVALID;
	}
	return 0;
}



static void milestone_name(const struct module *m, char *buf, size_t len)
{
	snprintf(buf, len, "milestone-%s", m->name);
}

/* Back to the last milestone's snapshot; why prefixes the time said. */
static void rollback(struct runner *r, const char *why)
{
	char name[300], err[512];
	double t0 = time_mono();

	milestone_name(&r->modules[r->last_milestone], name, sizeof(name));
	if (machine_snapshot(r, "loadvm", name, err, sizeof(err)) == 0)
		runner__progress(r, "rolled back to snapshot %s (%s%.2fs)", name, why, time_mono() - t0);
	else
		runner__progress(r, "could not roll back to snapshot %s: %s", name, err);
}

/* Removes the VM's disks and sockets after a run that keeps no snapshots. */
static void clean_workdir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d))) {
		char *p;
		if (e->d_name[0] == '.')
			continue;
		p = path_join(dir, e->d_name);
		if (p && unlink(p) != 0)
			log_debug("could not remove '%s'", p);
		free(p);
	}
	closedir(d);
	rmdir(dir);
}

/* PUBLISH_PFLASH_VARS=NAME: the run's UEFI variables as out_dir/NAME, a
 * qcow2 for a chained job's UEFI_PFLASH_VARS. */
static void publish_pflash_vars(struct runner *r)
{
	const char *name = vars_get(&r->vars, "PUBLISH_PFLASH_VARS");
	char err[512] = "", *dest;

	if (!name || !*name)
		return;
	if (strchr(name, '/') || name[0] == '.') {
		log_err("PUBLISH_PFLASH_VARS='%s': give a file name without '/' or a leading '.'", name);
		return;
	}
	dest = path_join(r->out_dir, name);
	if (!dest || qemu_publish_pflash_vars(r->workdir, dest, err, sizeof(err)))
		log_err("PUBLISH_PFLASH_VARS='%s' not written: %s", name, dest ? err : "out of memory");
	else
		log_info("UEFI variables published as '%s'", dest);
	free(dest);
}

/* out_dir/vars.json: the job's variables as they are now. */
static void save_vars(struct runner *r)
{
	char *vp = path_join(r->out_dir, "vars.json");

	if (vp)
		vars_save(&r->vars, vp);
	free(vp);
}

/* testresults/results.json (and, Lua, test_order.json). 0 or the error. */
static int write_results(struct runner *r, enum job_result res, int needs_review)
{
	/* Perl wrote test_order.json, result-*.json and vars.json itself. */
	if (r->perl)
		return results_write_summary(r->testresults, res, needs_review, r->abort ? r->reason : NULL,
					     r->modules, r->nmodules, runner__elapsed(r));
	return results_write_job(r->testresults, res, needs_review, r->abort ? r->reason : NULL, r->modules,
				 r->nmodules, runner__elapsed(r));
}

/* The job's settings from its variables, the consoles, the Lua state with
 * the test API, the screenshot writer and the command server. 0, or -1
 * with the job ended (runner__abort). */
static int job_setup(struct runner *r)
{
	r->start = time_mono();
	r->steps.t0 = r->start;
	r->steps.testresults = r->testresults;
	r->steps.line = step_line;
	r->hooks.progress = progress_note;
	r->steps.line_ctx = r;
	r->timeout_scale = vars_get_double(&r->vars, "TIMEOUT_SCALE", 1.0);
	if (r->timeout_scale <= 0)
		r->timeout_scale = 1.0;
	r->deadline = r->start + vars_get_double(&r->vars, "MAX_JOB_TIME", 7200);
	r->stuck_limit = vars_get_double(&r->vars, "LUA_STUCK_TIMEOUT", 60) * r->timeout_scale;
	r->typing_interval = 1.0 / vars_get_double(&r->vars, "TYPING_LIMIT", 30);
	r->review_level = vars_get_double(&r->vars, "NEEDS_REVIEW_LEVEL", 80) / 100.0;
	r->xres = (int)vars_get_long(&r->vars, "XRES", 1024);
	r->yres = (int)vars_get_long(&r->vars, "YRES", 768);
	r->mouse_x = r->mouse_y = -1;
	r->console = CONSOLE_VGA;
	if (console_set_init(&r->consoles)) {
		runner__abort(r, JOB_INCOMPLETE, "out of memory");
		return -1;
	}

	r->L = luaL_newstate();
	if (!r->L) {
		runner__abort(r, JOB_INCOMPLETE, "cannot create the Lua state");
		return -1;
	}
	luaL_openlibs(r->L);
	r->shots = shots_new(r->testresults);
	r->steps.shots = r->shots;
	testapi_register(r, r->L);
	if (luaL_loadbuffer(r->L, run_hooks, sizeof(run_hooks) - 1, "=module hooks") != LUA_OK) {
		runner__abort(r, JOB_INCOMPLETE, "internal: %s", lua_tostring(r->L, -1));
		return -1;
	}
	lua_setfield(r->L, LUA_REGISTRYINDEX, RUN_HOOKS_KEY);
	(void)cmdsrv_job_start(r); /* logged; the job runs without it */
	return 0;
}

/* Where the schedule starts (*first): --resume-from's module from its
 * milestone's snapshot, else SKIPTO's, else the first; then the VM. 0, or
 * -1 with the job ended (runner__abort). */
static int job_start_vm(struct runner *r, size_t *first)
{
	char err[1024] = "";
	size_t i;
	int rc;

	r->last_milestone = -1;
	r->sound_module = -1;
	*first = 0;
	if (r->resume_from) {
		char name[300];
		for (*first = 0; *first < r->nmodules; (*first)++)
			if (!strcmp(r->modules[*first].name, r->resume_from))
				break;
		if (*first == r->nmodules) {
			runner__abort(r, JOB_INCOMPLETE, "--resume-from: no module '%s' in the schedule", r->resume_from);
			return -1;
		}
		for (i = *first; i > 0; i--)
			if (r->modules[i - 1].flags & MODULE_FLAG_MILESTONE)
				break;
		if (i == 0) {
			runner__abort(r, JOB_INCOMPLETE, "--resume-from %s: no milestone module before it", r->resume_from);
			return -1;
		}
		r->last_milestone = (long)i - 1;
		for (i = 0; i < *first; i++)
			r->modules[i].result = MODULE_SKIP;
		milestone_name(&r->modules[r->last_milestone], name, sizeof(name));
		rc = machine_start(r, name, err, sizeof(err));
		if (!rc)
			printf("resumed from snapshot %s in %s\n", name, r->workdir);
	} else {
		/* SKIPTO: the modules before it are skipped (os-autoinst also loads
		 * that module's snapshot; vigil starts the VM afresh: see
		 * --resume-from for snapshots). */
		const char *skipto = vars_get(&r->vars, "SKIPTO");
		if (skipto && *skipto) {
			for (*first = 0; *first < r->nmodules; (*first)++)
				if (module_listed(skipto, r->modules[*first].script + strlen("tests/")))
					break;
			if (*first == r->nmodules) {
				runner__abort(r, JOB_INCOMPLETE, "SKIPTO: no module '%s' in the schedule", skipto);
				return -1;
			}
			for (i = 0; i < *first; i++)
				r->modules[i].result = MODULE_SKIP;
		}
		rc = machine_start(r, NULL, err, sizeof(err));
	}
	if (rc) {
		runner__vm_dead(r);
		runner__abort(r, JOB_INCOMPLETE, "cannot start the VM: %s", err);
		return -1;
	}
	return 0;
}

/* After module m ran (not fatally): back to the last milestone when it
 * failed or always rolls back, else a snapshot when it is a milestone (or
 * with TESTDEBUG), as os-autoinst. */
static void after_module(struct runner *r, struct module *m, int testdebug)
{
	char name[300], err[1024] = "";

	if ((m->result == MODULE_OK || m->result == MODULE_SOFTFAIL) && r->last_milestone >= 0 &&
	    (m->flags & MODULE_FLAG_ALWAYS_ROLLBACK) && !(m->flags & MODULE_FLAG_NO_ROLLBACK) &&
	    r->cur + 1 < r->nmodules) {
		rollback(r, "always_rollback, ");
	} else if ((m->result == MODULE_OK || m->result == MODULE_SOFTFAIL) &&
		   ((m->flags & MODULE_FLAG_MILESTONE) || (testdebug && r->cur + 1 < r->nmodules))) {
		double t0 = time_mono();
		milestone_name(m, name, sizeof(name));
		if (machine_snapshot(r, "savevm", name, err, sizeof(err)) == 0) {
			r->last_milestone = (long)r->cur;
			runner__progress(r, "saved snapshot %s (%.2fs)", name, time_mono() - t0);
		} else {
			runner__progress(r, "could not save snapshot %s: %s", name, err);
		}
	} else if (m->result == MODULE_FAIL && r->last_milestone >= 0 && r->cur + 1 < r->nmodules &&
		   !(m->flags & MODULE_FLAG_NO_ROLLBACK)) {
		/* The next module starts from the last good state, as os-autoinst does. */
		rollback(r, "");
	}
}

/* The job's end: the modules not run skipped, the machine taken down,
 * the result decided (out of memory makes it incomplete) and the results
 * files and vars.json written. Returns the job result. */
static enum job_result job_end(struct runner *r)
{
	enum job_result res = JOB_INCOMPLETE;
	int needs_review = 0, rc;
	size_t i;

	for (i = r->cur; i < r->nmodules; i++)
		if (r->modules[i].result == MODULE_NONE)
			r->modules[i].result = MODULE_SKIP;
	r->cur = r->nmodules;
	machine_stop(r);
	publish_pflash_vars(r);
	if (!r->keep_disks && !vars_get_bool(&r->vars, "KEEPHDDS", 0))
		clean_workdir(r->workdir);
	r->steps.shots = NULL;
	if (shots_free(r->shots))
		log_err("some screenshots could not be written");
	r->shots = NULL;
	if (r->signal && !r->reason[0])
		snprintf(r->reason, sizeof(r->reason), "vigil was interrupted by signal %d", (int)r->signal);
	if (r->abort)
		res = r->abort_result;
	else
		res = results_job_from_modules(r->modules, r->nmodules, &needs_review);
	if (r->abort && r->abort_result == JOB_TIMEOUT_EXCEEDED)
		needs_review = 0;
	if (!vars_get_bool(&r->vars, "NOVIDEO", 0) && results_write_video_index(r->testresults, r->modules, r->nmodules))
		log_warn("could not write video_index.json");
	/* A step lost (r->steps.err) or results.json that could not be
	 * built: the job ends incomplete and results.json says so (a second
	 * try, smaller; no memory again leaves none, which the worker takes
	 * as incomplete too). */
	if (runner__results_nomem(r, 0, "")) {
		res = r->abort_result;
		needs_review = 0;
	}
	rc = write_results(r, res, needs_review);
	if (rc == ERR_NOMEM) {
		runner__abort(r, JOB_INCOMPLETE, "out of memory: results.json could not be written whole");
		res = JOB_INCOMPLETE;
		rc = write_results(r, res, 0);
	}
	if (rc)
		log_err("could not write results.json");
	if (!r->perl)
		save_vars(r);
	return res;
}

enum job_result runner_run(struct runner *r)
{
	char err[1024] = "";
	int testdebug, rc;
	size_t i, first = 0;

	if (job_setup(r))
		goto out;
	if (perl_is_distri(r->distri_dir)) {
		/* os-autoinst's test process runs the schedule and the modules;
		 * vigil answers it (runner/perl/perl.c). */
		r->perl = 1;
		rc = runner__load_needles(r, r->distri_dir, err, sizeof(err));
		if (rc) {
			runner__abort(r, JOB_INCOMPLETE, "%s", err);
			goto out;
		}
		perl_run(r);
		goto out;
	}
	rc = load_schedule(r, err, sizeof(err));
	if (!rc)
		rc = runner__load_needles(r, r->distri_dir, err, sizeof(err));
	if (rc) {
		runner__abort(r, JOB_INCOMPLETE, "%s", err);
		goto out;
	}
	/* Load every module first: a syntax error is reported before the VM starts. */
	for (i = 0; i < r->nmodules; i++) {
		rc = load_module(r, &r->modules[i], err, sizeof(err));
		if (rc) {
			runner__abort(r, JOB_INCOMPLETE, "%s", err);
			goto out;
		}
		lua_pop(r->L, 1);
	}
	if (job_start_vm(r, &first))
		goto out;
	/* TESTDEBUG: every good module leaves a snapshot, the first failure ends the job. */
	testdebug = vars_get_bool(&r->vars, "TESTDEBUG", 0);
	for (r->cur = first; r->cur < r->nmodules && !r->abort; r->cur++) {
		struct module *m = &r->modules[r->cur];

		if (load_module(r, m, err, sizeof(err))) {
			runner__abort(r, JOB_INCOMPLETE, "%s", err);
			break;
		}
		runner__pause_at_module(r, m);
		run_module(r, m);
		if (r->abort)
			break;
		if (m->result == MODULE_FAIL && ((m->flags & MODULE_FLAG_FATAL) || testdebug)) {
			runner__progress(r, "%s: stopping", testdebug ? "module failed with TESTDEBUG set" : "fatal module failed");
			r->cur++;
			break;
		}
		after_module(r, m, testdebug);
	}
out:
	return job_end(r);
}

void runner_interrupt(struct runner *r, int sig)
{
	r->abort_result = JOB_INCOMPLETE;
	r->signal = sig;
	r->abort = 1;
	if (r->qemu && qemu_pid(r->qemu) > 0)
		kill(qemu_pid(r->qemu), SIGKILL);
}

const char *runner_reason(const struct runner *r)
{
	return r->abort ? r->reason : NULL;
}

const char *runner_out_dir(const struct runner *r)
{
	return r->out_dir;
}

static char *default_out_dir(const char *distri)
{
	char stamp[32], *base = path_stem(distri[strlen(distri) - 1] == '/' ? "distri" : distri, NULL);
	char *dir = NULL;
	time_t now = time(NULL);
	struct tm tm;
	int i;

	if (!base)
		return NULL; /* out of memory */
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
		if (!file_is_dir(dir))
			break;
	}
	free(base);
	return dir;
}

/* The job's variables: --var over --vars over the distribution's
 * vars.json, then CASEDIR and ${NAME} expansion. */
static int load_vars(struct runner *r, const struct runner_opts *o, char *err, size_t errlen)
{
	char *distri_vars = NULL;
	size_t i;
	int rc;

	for (i = 0; i < o->nassigns; i++) {
		rc = vars_set_assignment(&r->vars, o->assigns[i], err, errlen);
		if (rc)
			return rc;
	}
	if (o->vars_file) {
		rc = vars_load_file(&r->vars, o->vars_file, 1, err, errlen);
		if (rc)
			return rc;
	}
	distri_vars = path_join(r->distri_dir, "vars.json");
	rc = distri_vars && file_exists(distri_vars) ? vars_load_file(&r->vars, distri_vars, 1, err, errlen) : 0;
	free(distri_vars);
	if (rc)
		return rc;
	if (!vars_get(&r->vars, "CASEDIR"))
		vars_set(&r->vars, "CASEDIR", r->distri_dir);
	return vars_expand(&r->vars, err, errlen);
}

int runner_new(const struct runner_opts *o, struct runner **out, char *err, size_t errlen)
{
	struct runner *r = calloc(1, sizeof(*r));
	char *dir = NULL, *logp = NULL;
	int rc = ERR_NOMEM;

	*out = NULL;
	if (!r || vars_init(&r->vars)) {
		free(r);
		snprintf(err, errlen, "out of memory");
		return ERR_NOMEM;
	}
	r->distri_dir = path_abs(o->distri_dir);
	if (!r->distri_dir || !file_is_dir(r->distri_dir)) {
		snprintf(err, errlen, "'%s' is not a directory", o->distri_dir);
		rc = ERR_INVALID;
		goto out;
	}
	rc = load_vars(r, o, err, errlen);
	if (rc)
		goto out;
	dir = o->out_dir ? str_dup(o->out_dir) : default_out_dir(o->distri_dir);
	if (!dir) {
		snprintf(err, errlen, "out of memory");
		rc = ERR_NOMEM;
		goto out;
	}
	if (file_mkdir_p(dir, 0755)) {
		snprintf(err, errlen, "cannot create the results directory '%s'", dir ? dir : "?");
		rc = ERR_IO;
		goto out;
	}
	r->out_dir = path_abs(dir);
	r->testresults = path_join(r->out_dir, "testresults");
	if (o->resume_from && !o->snapshots) {
		snprintf(err, errlen, "--resume-from needs --snapshots DIR of an earlier run");
		rc = ERR_INVALID;
		goto out;
	}
	if (o->resume_from && !file_is_dir(o->snapshots)) {
		snprintf(err, errlen, "snapshots directory '%s' does not exist", o->snapshots);
		rc = ERR_INVALID;
		goto out;
	}
	r->workdir = o->snapshots ? path_abs(o->snapshots) : path_join(r->out_dir, ".vm");
	r->keep_disks = o->snapshots != NULL;
	r->resume_from = o->resume_from ? str_dup(o->resume_from) : NULL;
	if (o->resume_from && !r->resume_from) { /* not resuming would be a different run */
		snprintf(err, errlen, "out of memory");
		rc = ERR_NOMEM;
		goto out;
	}
	r->explore_on = o->explore;
	r->ask = o->ask;
	r->ask_ctx = o->ask_ctx;
	if (!r->testresults || !r->workdir || file_mkdir_p(r->testresults, 0755) || file_mkdir_p(r->workdir, 0700)) {
		snprintf(err, errlen, "cannot create '%s/testresults'", dir);
		rc = ERR_IO;
		goto out;
	}
	logp = path_join(r->out_dir, "vigil-log.txt");
	if (!logp || log_open_file(logp))
		fprintf(stderr, "vigil run: cannot open the log file in '%s'\n", dir);
	else
		r->log_opened = 1;
	save_vars(r);
	{
		/* os-autoinst's variables set what the options do not */
		const char *at = vars_get(&r->vars, "PAUSE_AT"), *on = vars_get(&r->vars, "PAUSE_ON_SCREEN_MISMATCH");
		if (on && strcmp(on, "assert_screen") && strcmp(on, "check_screen"))
			on = vars_get_bool(&r->vars, "PAUSE_ON_SCREEN_MISMATCH", 0) ? "assert_screen" : NULL;
		struct devmode_opts d = { o->pause_at ? o->pause_at : at && *at ? at : NULL,
					  o->pause_on_mismatch ? o->pause_on_mismatch : on && *on ? on : NULL,
					  vars_get_bool(&r->vars, "PAUSE_ON_NEXT_COMMAND", 0),
					  vars_get_bool(&r->vars, "PAUSE_ON_FAILURE", 0), o->pause_at || o->pause_on_mismatch };
		if ((rc = devmode_start(r->out_dir, &d, &r->devmode))) {
			snprintf(err, errlen, "developer mode: %s", err_str(rc));
			goto out;
		}
		r->hooks.pause = &devmode_pauses;
	}
	log_info("running %s, results in %s", r->distri_dir, r->out_dir);
	*out = r;
	r = NULL;
	rc = 0;
out:
	runner_free(r);
	free(logp);
	free(dir);
	return rc;
}

void runner_free(struct runner *r)
{
	size_t i;

	if (!r)
		return;
	cmdsrv_free(r->cmdsrv); /* first: its WebSocket clients use developer mode */
	devmode_stop(r->devmode);
	if (r->L)
		lua_close(r->L);
	for (i = 0; i < r->nmodules; i++)
		results_module_release(&r->modules[i]);
	free(r->modules);
	if (r->needles) {
		needle_set_release(r->needles);
		free(r->needles);
	}
	json_decref(r->last_match);
	json_decref(r->check_cands);
	if (r->check_frame)
		frame_unref(r->check_frame);
	screen_release(r);
	console_set_release(&r->consoles);
	vars_release(&r->vars);
	free(r->distri_dir);
	free(r->out_dir);
	free(r->testresults);
	free(r->workdir);
	free(r->resume_from);
	if (r->log_opened)
		log_close_file();
	free(r);
}

int runner_list_testapi(FILE *out)
{
	return testapi_list(out);
}
