/* SPDX-License-Identifier: MIT */
/* devmode.c - developer mode (see devmode.h): the channel's thread, which
 * takes commands from OUT/.devmode.sock (and stdin for a local run) and
 * answers with the state, and the pauses the runner thread takes at its
 * safe points. The settings and the pause live under one lock; the
 * runner thread waits on its condition variable while paused. */
#define LOG_MODULE "devmode"
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include <lua.h>
#include "runner/srv/devmode.h"
#include "runner/prim/liveview.h"
#include "runner/core/job.h"
#include "runner/core/shots.h"
#include "util/err.h"
#include "util/file.h"
#include "util/log.h"
#include "util/path.h"
#include "util/time.h"
#include "util/banned.h" /* last: after every system header */

#define DEVMODE_POLL_MS 200 /* the thread and a paused runner look at stop this often */

enum devmode_action { ACT_NONE, ACT_CONTINUE, ACT_RETRY, ACT_SKIP };

struct devmode {
	char *sock_path, *state_path;
	int lfd;          /* listening socket, -1 none */
	int term;         /* read stdin too */
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool stop;
	/* Settings, under lock. */
	char pause_at[DEVMODE_NAME_MAX];
	char pause_on[16];   /* "", "assert_screen" or "check_screen" */
	bool next_command;
	bool on_failure;     /* pause when a module fails (set_pause_on_failure) */
	/* The pause, under lock; kind[0] == 0: running. */
	char kind[16], module[DEVMODE_NAME_MAX], tags[256], reason[512];
	char current[DEVMODE_NAME_MAX];
	json_t *schedule;      /* the modules' names, once known */
	int step;
	enum devmode_action action;
	char distri_dir[1024]; /* retry: the refreshed distribution, "" the job's own */
	unsigned version;
	devmode_watch_fn watch; /* under lock */
	void *watch_ud;
};

static json_t *state_locked(struct devmode *d)
{
	json_t *j = json_pack("{s:I,s:s,s:s?,s:b}", "version", (json_int_t)d->version, "current_test", d->current,
			      "pause_test_name", d->pause_at[0] ? d->pause_at : NULL, "pause_on_next_command",
			      d->next_command);

	if (!j)
		return NULL;
	json_object_set_new(j, "pause_on_screen_mismatch", d->pause_on[0] ? json_string(d->pause_on) : json_false());
	json_object_set_new(j, "pause_on_failure", json_boolean(d->on_failure));
	json_object_set_new(j, "schedule", d->schedule ? json_incref(d->schedule) : json_array());
	if (d->kind[0]) {
		json_object_set_new(j, "test_execution_paused", json_string(d->reason));
		json_object_set_new(j, "paused", json_pack("{s:s,s:s,s:i,s:s,s:s}", "kind", d->kind, "module", d->module,
							   "step", d->step, "tags", d->tags, "reason", d->reason));
	} else {
		json_object_set_new(j, "test_execution_paused", json_integer(0));
		json_object_set_new(j, "paused", json_null());
	}
	return j;
}

json_t *devmode_state(struct devmode *d)
{
	json_t *j;

	pthread_mutex_lock(&d->lock);
	j = state_locked(d);
	pthread_mutex_unlock(&d->lock);
	return j;
}

/* A change: a new version, written to the state file (atomically), and
 * the paused runner woken. Under lock. */
static void changed_locked(struct devmode *d)
{
	json_t *j;
	char *text;

	d->version++;
	j = state_locked(d);
	text = j ? json_dumps(j, JSON_COMPACT) : NULL;
	if (!text || file_write_all(d->state_path, text, strlen(text)))
		log_warn("cannot write '%s'", d->state_path);
	if (j && d->watch)
		d->watch(d->watch_ud, j);
	free(text);
	json_decref(j);
	pthread_cond_broadcast(&d->cond);
}

void devmode_watch(struct devmode *d, devmode_watch_fn fn, void *ud)
{
	pthread_mutex_lock(&d->lock);
	d->watch = fn;
	d->watch_ud = ud;
	pthread_mutex_unlock(&d->lock);
}

static json_t *fail(const char *cmd, const char *what)
{
	char msg[400];

	snprintf(msg, sizeof(msg), "%s%s%s", cmd, *cmd ? ": " : "", what);
	return json_pack("{s:i,s:s}", "ret", 0, "error", msg);
}

/* A resume command's action: "retry", "skip", "continue" or absent. */
static int parse_action(const char *a, enum devmode_action *out)
{
	if (!a || !strcmp(a, "continue"))
		*out = ACT_CONTINUE;
	else if (!strcmp(a, "retry"))
		*out = ACT_RETRY;
	else if (!strcmp(a, "skip"))
		*out = ACT_SKIP;
	else
		return ERR_INVALID;
	return 0;
}

json_t *devmode_command(struct devmode *d, const char *line)
{
	json_t *cmd = json_loads(line, 0, NULL), *reply = NULL, *v;
	const char *name = json_string_value(json_object_get(cmd, "cmd"));
	enum devmode_action act;

	if (!json_is_object(cmd) || !name) {
		reply = fail("", "expected a JSON object with \"cmd\"");
		goto out;
	}
	pthread_mutex_lock(&d->lock);
	if (!strcmp(name, "set_pause_at_test")) {
		v = json_object_get(cmd, "name");
		if (v && !json_is_null(v) && (!json_is_string(v) || json_string_length(v) >= DEVMODE_NAME_MAX)) {
			reply = fail(name, "\"name\" must be a module's name or null");
		} else {
			const char *at = json_string_value(v);
			snprintf(d->pause_at, sizeof(d->pause_at), "%s", at ? at : "");
			changed_locked(d);
		}
	} else if (!strcmp(name, "set_pause_on_screen_mismatch")) {
		const char *on = json_string_value(json_object_get(cmd, "pause_on"));
		if (on && strcmp(on, "assert_screen") && strcmp(on, "check_screen")) {
			reply = fail(name, "\"pause_on\" must be \"assert_screen\", \"check_screen\" or false");
		} else {
			snprintf(d->pause_on, sizeof(d->pause_on), "%s", on ? on : "");
			changed_locked(d);
		}
	} else if (!strcmp(name, "set_pause_on_next_command")) {
		v = json_object_get(cmd, "flag");
		d->next_command = json_is_true(v) || (json_is_integer(v) && json_integer_value(v) != 0);
		changed_locked(d);
	} else if (!strcmp(name, "set_pause_on_failure")) {
		v = json_object_get(cmd, "flag");
		d->on_failure = json_is_true(v) || (json_is_integer(v) && json_integer_value(v) != 0);
		changed_locked(d);
	} else if (!strcmp(name, "resume_test_execution")) {
		const char *dir = json_string_value(json_object_get(cmd, "distri_dir"));
		if (parse_action(json_string_value(json_object_get(cmd, "action")), &act)) {
			reply = fail(name, "\"action\" must be \"continue\", \"retry\" or \"skip\"");
		} else if (dir && (dir[0] != '/' || strlen(dir) >= sizeof(d->distri_dir))) {
			reply = fail(name, "\"distri_dir\" must be an absolute path");
		} else if (d->kind[0]) {
			d->action = act;
			snprintf(d->distri_dir, sizeof(d->distri_dir), "%s", dir ? dir : "");
			pthread_cond_broadcast(&d->cond);
		}
	} else if (strcmp(name, "status")) {
		reply = fail(name, "unknown command");
	}
	if (!reply && (reply = state_locked(d)))
		json_object_set_new(reply, "ret", json_integer(1));
	pthread_mutex_unlock(&d->lock);
out:
	json_decref(cmd);
	return reply ? reply : json_pack("{s:i,s:s}", "ret", 0, "error", "out of memory");
}

/* A line typed on the terminal while paused: Enter, "c" or "continue"
 * resumes, "r"/"retry" retries the check, "s"/"skip" skips it. */
static void terminal_line(struct devmode *d, const char *line)
{
	const char *a = line[0] == 'r' ? "retry" : line[0] == 's' ? "skip" : "continue";
	char cmd[96];
	json_t *reply;

	snprintf(cmd, sizeof(cmd), "{\"cmd\":\"resume_test_execution\",\"action\":\"%s\"}", a);
	reply = devmode_command(d, cmd);
	json_decref(reply);
}

/* Reads the lines of fd into buf (len bytes kept); calls back for each
 * whole line. false at EOF or an error, or a line over the limit. */
static bool read_lines(struct devmode *d, int fd, char *buf, size_t *len, bool terminal)
{
	ssize_t got = read(fd, buf + *len, DEVMODE_LINE_MAX - *len);
	char *nl;

	if (got <= 0)
		return false;
	*len += (size_t)got;
	while ((nl = memchr(buf, '\n', *len))) {
		size_t n = (size_t)(nl - buf);
		*nl = '\0';
		if (n && buf[n - 1] == '\r')
			buf[n - 1] = '\0';
		if (terminal) {
			terminal_line(d, buf);
		} else {
			json_t *reply = devmode_command(d, buf);
			char *text = json_dumps(reply, JSON_COMPACT);
			json_decref(reply);
			if (text) {
				size_t tl = strlen(text), off = 0;
				while (off < tl) {
					ssize_t w = send(fd, text + off, tl - off, MSG_NOSIGNAL);
					if (w <= 0)
						break;
					off += (size_t)w;
				}
				(void)send(fd, "\n", 1, MSG_NOSIGNAL);
				free(text);
			}
		}
		*len -= n + 1;
		memmove(buf, nl + 1, *len);
	}
	return *len < DEVMODE_LINE_MAX;
}

/* The thread: one client at a time on the socket, and stdin. */
static void *channel_main(void *arg)
{
	struct devmode *d = arg;
	char cbuf[DEVMODE_LINE_MAX], tbuf[DEVMODE_LINE_MAX];
	size_t clen = 0, tlen = 0;
	int cfd = -1;
	bool term = d->term;

	for (;;) {
		struct pollfd p[2];
		nfds_t n = 0;
		int ci = -1, ti = -1;
		bool stop;
		pthread_mutex_lock(&d->lock);
		stop = d->stop;
		pthread_mutex_unlock(&d->lock);
		if (stop)
			break;
		if (cfd >= 0 || d->lfd >= 0) {
			p[n] = (struct pollfd){ .fd = cfd >= 0 ? cfd : d->lfd, .events = POLLIN };
			ci = (int)n++;
		}
		if (term) {
			p[n] = (struct pollfd){ .fd = STDIN_FILENO, .events = POLLIN };
			ti = (int)n++;
		}
		if (poll(p, n, DEVMODE_POLL_MS) <= 0)
			continue;
		if (ci >= 0 && p[ci].revents) {
			if (cfd < 0) {
				cfd = accept4(d->lfd, NULL, NULL, SOCK_CLOEXEC);
				clen = 0;
			} else if (!read_lines(d, cfd, cbuf, &clen, false)) {
				close(cfd);
				cfd = -1;
			}
		}
		if (ti >= 0 && p[ti].revents && !read_lines(d, STDIN_FILENO, tbuf, &tlen, true))
			term = false; /* stdin closed: the socket only */
	}
	if (cfd >= 0)
		close(cfd);
	return NULL;
}

static int listen_on(struct devmode *d)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fd;

	if (strlen(d->sock_path) >= sizeof(a.sun_path)) {
		log_warn("developer mode: socket path '%s' too long for a unix socket: no command channel",
			 d->sock_path);
		return 0;
	}
	memcpy(a.sun_path, d->sock_path, strlen(d->sock_path) + 1);
	(void)unlink(d->sock_path);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
		return -errno;
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) || listen(fd, 4)) {
		int rc = -errno;
		close(fd);
		return rc;
	}
	d->lfd = fd;
	return 0;
}

static void devmode_free(struct devmode *d)
{
	if (d->lfd >= 0) {
		close(d->lfd);
		(void)unlink(d->sock_path);
	}
	if (d->state_path)
		(void)unlink(d->state_path);
	free(d->sock_path);
	free(d->state_path);
	json_decref(d->schedule);
	pthread_mutex_destroy(&d->lock);
	pthread_cond_destroy(&d->cond);
	free(d);
}

int devmode_start(const char *out_dir, const struct devmode_opts *o, struct devmode **out)
{
	struct devmode *d;
	int rc;

	*out = NULL;
	if (o->pause_on_mismatch && strcmp(o->pause_on_mismatch, "assert_screen") &&
	    strcmp(o->pause_on_mismatch, "check_screen"))
		return ERR_INVALID;
	if (o->pause_at && strlen(o->pause_at) >= DEVMODE_NAME_MAX)
		return ERR_INVALID;
	if (!(d = calloc(1, sizeof(*d))))
		return ERR_NOMEM;
	d->lfd = -1;
	d->term = o->terminal && isatty(STDIN_FILENO);
	pthread_mutex_init(&d->lock, NULL);
	pthread_cond_init(&d->cond, NULL);
	snprintf(d->pause_at, sizeof(d->pause_at), "%s", o->pause_at ? o->pause_at : "");
	snprintf(d->pause_on, sizeof(d->pause_on), "%s", o->pause_on_mismatch ? o->pause_on_mismatch : "");
	d->next_command = o->pause_on_next_command != 0;
	d->on_failure = o->pause_on_failure != 0;
	d->sock_path = path_join(out_dir, DEVMODE_SOCK_FILE);
	d->state_path = path_join(out_dir, DEVMODE_STATE_FILE);
	if (!d->sock_path || !d->state_path) {
		devmode_free(d);
		return ERR_NOMEM;
	}
	if ((rc = listen_on(d))) {
		devmode_free(d);
		return rc;
	}
	pthread_mutex_lock(&d->lock);
	changed_locked(d);
	pthread_mutex_unlock(&d->lock);
	if ((rc = pthread_create(&d->thread, NULL, channel_main, d)) != 0) {
		devmode_free(d);
		return -rc;
	}
	*out = d;
	return 0;
}

void devmode_stop(struct devmode *d)
{
	if (!d)
		return;
	pthread_mutex_lock(&d->lock);
	d->stop = true;
	pthread_cond_broadcast(&d->cond);
	pthread_mutex_unlock(&d->lock);
	pthread_join(d->thread, NULL);
	devmode_free(d);
}

/* Pause the runner thread until a resume (or the VM, the job or vigil
 * ends). The time paused does not count against MAX_JOB_TIME. The action. */
static enum devmode_action pause_here(struct runner *r, const char *kind, const char *reason, int step,
				      const char *tags)
{
	struct devmode *d = r->devmode;
	const struct module *m = runner__module(r);
	enum devmode_action act;
	double t0 = time_mono();
	bool gone = false;

	pthread_mutex_lock(&d->lock);
	snprintf(d->kind, sizeof(d->kind), "%s", kind);
	snprintf(d->module, sizeof(d->module), "%s", m ? m->name : "");
	snprintf(d->tags, sizeof(d->tags), "%s", tags ? tags : "");
	snprintf(d->reason, sizeof(d->reason), "%s", reason);
	d->step = step;
	d->action = ACT_NONE;
	changed_locked(d);
	pthread_mutex_unlock(&d->lock);
	runner__progress(r, "paused: %s%s", reason,
			 d->term ? " (Enter resumes, r Enter retries the check, s Enter skips it)" : "");
	pthread_mutex_lock(&d->lock);
	while (d->action == ACT_NONE && !d->stop && !gone) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += DEVMODE_POLL_MS * 1000000L;
		ts.tv_sec += ts.tv_nsec / 1000000000L;
		ts.tv_nsec %= 1000000000L;
		pthread_cond_timedwait(&d->cond, &d->lock, &ts);
		if (d->action == ACT_NONE) {
			pthread_mutex_unlock(&d->lock);
			gone = r->signal || r->abort || runner__vm_dead(r);
			pthread_mutex_lock(&d->lock);
		}
	}
	act = d->action == ACT_NONE ? ACT_CONTINUE : d->action;
	d->kind[0] = '\0';
	d->action = ACT_NONE;
	changed_locked(d);
	pthread_mutex_unlock(&d->lock);
	r->deadline += time_mono() - t0;
	r->last_api = time_mono();
	runner__progress(r, "%s after %.1fs paused",
			 gone		      ? "stopped"
			 : act == ACT_RETRY ? "retrying the check"
			 : act == ACT_SKIP  ? "skipping the check"
					      : "resumed",
			 time_mono() - t0);
	return act;
}

/* A Perl run's modules come as they start: its schedule is the
 * test_order.json the test process wrote first. The names, or NULL. */
static json_t *perl_schedule(struct runner *r)
{
	char *path = path_join(r->testresults, "test_order.json");
	json_t *order = path ? json_load_file(path, 0, NULL) : NULL, *names = NULL, *e;
	size_t i;

	free(path);
	if (json_array_size(order) && (names = json_array()))
		json_array_foreach(order, i, e)
			if (json_is_string(json_object_get(e, "name")))
				json_array_append(names, json_object_get(e, "name"));
	json_decref(order);
	return names;
}

void devmode_at_module(struct runner *r, const struct module *m)
{
	struct devmode *d = r->devmode;
	char reason[300];
	bool hit;

	if (!d)
		return;
	pthread_mutex_lock(&d->lock);
	if (!d->schedule && r->perl)
		d->schedule = perl_schedule(r);
	if (!d->schedule && (d->schedule = json_array()))
		for (size_t i = 0; i < r->nmodules; i++)
			json_array_append_new(d->schedule, json_string(r->modules[i].name));
	snprintf(d->current, sizeof(d->current), "%s", m->name);
	hit = d->pause_at[0] && !strcmp(d->pause_at, m->name);
	changed_locked(d);
	pthread_mutex_unlock(&d->lock);
	if (!hit)
		return;
	snprintf(reason, sizeof(reason), "reached module %s", m->name);
	(void)pause_here(r, "module", reason, 0, NULL);
}

void devmode_at_command(struct runner *r, struct lua_State *L)
{
	struct devmode *d = r->devmode;
	const struct module *m = runner__module(r);
	lua_Debug ar;
	char reason[300];
	bool hit;

	if (!d)
		return;
	pthread_mutex_lock(&d->lock);
	hit = d->next_command && !d->kind[0];
	pthread_mutex_unlock(&d->lock);
	if (!hit || !m || r->steps.m != m)
		return;
	if (lua_getstack(L, 0, &ar) && lua_getinfo(L, "n", &ar) && ar.name)
		snprintf(reason, sizeof(reason), "next command: %s", ar.name);
	else
		snprintf(reason, sizeof(reason), "next command");
	(void)pause_here(r, "next_command", reason, m->details ? (int)json_array_size(m->details) : 0, NULL);
}

static void save_partial(struct runner *r, const struct module *m);

void devmode_at_perl_command(struct runner *r, const char *cmd)
{
	struct devmode *d = r->devmode;
	const struct module *m = runner__module(r);
	char reason[300];
	bool hit;

	if (!d || !m)
		return;
	pthread_mutex_lock(&d->lock);
	hit = d->next_command && !d->kind[0];
	pthread_mutex_unlock(&d->lock);
	if (!hit)
		return;
	snprintf(reason, sizeof(reason), "next command: %s", cmd);
	(void)pause_here(r, "next_command", reason, 0, NULL);
}

int devmode_on_failure(struct runner *r, const char *reason)
{
	struct devmode *d = r->devmode;
	const struct module *m = runner__module(r);
	bool hit;

	char why[512];
	size_t n;

	if (!d || !m)
		return 0;
	pthread_mutex_lock(&d->lock);
	hit = d->on_failure && !d->kind[0];
	pthread_mutex_unlock(&d->lock);
	if (!hit)
		return 0;
	snprintf(why, sizeof(why), "%s", reason);
	for (n = strlen(why); n && (why[n - 1] == '\n' || why[n - 1] == ' '); n--)
		why[n - 1] = '\0'; /* Perl's die message ends in a newline */
	if (!r->perl)
		save_partial(r, m);
	(void)pause_here(r, "failure", why, m->details ? (int)json_array_size(m->details) : 0, NULL);
	return 1;
}

/* The paused module's result so far, as OUT/.devmode/result-<module>.json,
 * with its screenshots written: what the needle editor opens. */
static void save_partial(struct runner *r, const struct module *m)
{
	char *dir = path_join(r->out_dir, DEVMODE_RESULT_DIR);

	shots_flush(r->shots);
	if (!dir || file_mkdir_p(dir, 0755) || results_write_module(dir, m))
		log_warn("developer mode: cannot write the partial result of module '%s'", m->name);
	free(dir);
}

/* Whether a failed check of this kind pauses (PAUSE_ON_SCREEN_MISMATCH). */
static bool pauses_on(struct devmode *d, int is_assert)
{
	bool hit;

	pthread_mutex_lock(&d->lock);
	hit = !strcmp(d->pause_on, "check_screen") || (is_assert && !strcmp(d->pause_on, "assert_screen"));
	pthread_mutex_unlock(&d->lock);
	return hit;
}

/* Pauses on a failed check; 1 when the developer asked for a retry and the
 * needles were reloaded. */
static int pause_on_mismatch(struct runner *r, const char *tags, int is_assert, int step)
{
	struct devmode *d = r->devmode;
	char reason[512], dir[1024];

	snprintf(reason, sizeof(reason), "%s '%s' did not match (step %d)", is_assert ? "assert_screen" : "check_screen",
		 tags, step);
	if (pause_here(r, "screen_mismatch", reason, step, tags) != ACT_RETRY)
		return 0;
	pthread_mutex_lock(&d->lock);
	snprintf(dir, sizeof(dir), "%s", d->distri_dir);
	pthread_mutex_unlock(&d->lock);
	if (runner__reload_needles(r, dir[0] ? dir : NULL)) {
		runner__progress(r, "retry: the needles could not be reloaded; the check fails");
		return 0;
	}
	return 1;
}

int devmode_pauses_on_timeout(struct runner *r, int is_assert)
{
	return r->devmode && pauses_on(r->devmode, is_assert);
}

int devmode_on_timeout(struct runner *r, const char *tags, int is_assert)
{
	if (!devmode_pauses_on_timeout(r, is_assert))
		return 0;
	return pause_on_mismatch(r, tags, is_assert, 0);
}

int devmode_on_mismatch(struct runner *r, const char *tags, int is_assert)
{
	struct devmode *d = r->devmode;
	struct module *m = runner__module(r);
	int step;

	if (!d || !m || r->steps.m != m || !pauses_on(d, is_assert))
		return 0;
	step = m->details ? (int)json_array_size(m->details) : 0;
	save_partial(r, m);
	if (!pause_on_mismatch(r, tags, is_assert, step))
		return 0;
	/* The failed step stays in the details as a record of what was seen,
	 * no longer a failure of its own. */
	if (m->details && step > 0) {
		json_t *s = json_array_get(m->details, (size_t)step - 1);
		/* a step left "fail" would show a failure the retry undid */
		steps_set(&r->steps, s, "result", json_string("unk"));
		steps_set(&r->steps, s, "devmode", json_string("retried"));
	}
	return 1;
}

const struct runner_pause_ops devmode_pauses = {
	.at_module = devmode_at_module,
	.at_command = devmode_at_command,
	.at_perl_command = devmode_at_perl_command,
	.on_failure = devmode_on_failure,
	.on_mismatch = devmode_on_mismatch,
	.pauses_on_timeout = devmode_pauses_on_timeout,
	.on_timeout = devmode_on_timeout,
};
