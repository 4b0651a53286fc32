/* SPDX-License-Identifier: MIT */
/* interactive.c - the --interactive needle offer (see interactive.h):
 * stop the VM, save the screen where the person can look at it, ask for a
 * name and areas, write the needle, load the needles again, start the VM.
 * The terminal is the caller's (r->ask); this file only asks questions. */
#define LOG_MODULE "interactive"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "image/needle.h"
#include "runner/prim/interactive.h"
#include "util/err.h"
#include "util/file.h"
#include "util/log.h"
#include "util/path.h"
#include "util/time.h"
#include "vm/qmp.h"
#include "vm/vnc.h"
#include "util/banned.h" /* last: after every system header */

#define MAX_NEEDLE_TAGS 16
#define MAX_TRIES 5

int interactive_parse_areas(const char *s, int w, int h, struct needle_area *areas, size_t max, size_t *n)
{
	*n = 0;
	while (*s == ' ')
		s++;
	if (!*s || !strcmp(s, "full")) {
		if (max == 0)
			return ERR_INVALID;
		s = "";
		memset(&areas[0], 0, sizeof(areas[0]));
		areas[0].w = w;
		areas[0].h = h;
		*n = 1;
	}
	while (*s) {
		char tok[128];
		size_t len = strcspn(s, " ;");

		if (!len) {
			s++;
			continue;
		}
		if (*n == max || len >= sizeof(tok))
			return ERR_INVALID;
		memcpy(tok, s, len);
		tok[len] = '\0';
		if (needle_area_parse(tok, &areas[*n]) || areas[*n].type != NEEDLE_AREA_MATCH)
			return ERR_INVALID;
		(*n)++;
		s += len;
	}
	for (size_t i = 0; i < *n; i++) {
		areas[i].type = NEEDLE_AREA_MATCH;
		areas[i].match = NEEDLE_DEFAULT_MATCH;
		areas[i].margin = NEEDLE_DEFAULT_MARGIN;
	}
	return *n ? 0 : ERR_INVALID;
}

/* A needle name that is also an artefact name (the server's rule). */
static int name_ok(const char *name)
{
	const char *p;

	if (!*name || name[0] == '.' || strlen(name) > 200)
		return 0;
	for (p = name; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
		      strchr("._+@-", *p)))
			return 0;
	return 1;
}

static int needle_exists(const char *dir, const char *name)
{
	char file[256], *p;
	int there;

	snprintf(file, sizeof(file), "%s.json", name);
	p = path_join(dir, file);
	there = !p || file_exists(p);
	free(p);
	return there;
}

/* The tag expression made a name: spaces and other characters become '-',
 * then "-2", "-3"... while a needle of that name exists. */
static void default_name(const char *dir, const char *expr, char *out, size_t len)
{
	char base[180];
	size_t i;
	int k;

	snprintf(base, sizeof(base), "%s", expr);
	for (i = 0; base[i]; i++)
		if (!((base[i] >= 'a' && base[i] <= 'z') || (base[i] >= 'A' && base[i] <= 'Z') ||
		      (base[i] >= '0' && base[i] <= '9') || strchr("._+@-", base[i])))
			base[i] = '-';
	if (base[0] == '.' || !base[0])
		base[0] = 'n';
	snprintf(out, len, "%s", base);
	for (k = 2; needle_exists(dir, out) && k < 1000; k++)
		snprintf(out, len, "%s-%d", base, k);
}

/* The tags of expression expr (space-separated, AND) into buf/tags. */
static size_t split_tags(const char *expr, char *buf, size_t len, const char **tags)
{
	size_t n = 0;
	char *p;

	snprintf(buf, len, "%s", expr);
	for (p = buf; *p && n < MAX_NEEDLE_TAGS;) {
		while (*p == ' ')
			*p++ = '\0';
		if (!*p)
			break;
		tags[n++] = p;
		while (*p && *p != ' ')
			p++;
	}
	return n;
}

/* Ask until a valid answer; 0, 1 gave up (MAX_TRIES), negative: input ended. */
static int ask(struct runner *r, const char *prompt, char *answer, size_t len)
{
	if (!r->ask || r->ask(r->ask_ctx, prompt, answer, len) < 0) {
		r->ask = NULL;
		return -1;
	}
	return 0;
}

static int vm_pause(struct runner *r, const char *cmd)
{
	char err[256];
	int rc = qmp_command(r->qmp, cmd, NULL, NULL, err, sizeof(err));

	if (rc)
		log_warn("--interactive: QMP %s failed: %s", cmd, err);
	return rc;
}

/* The questions and the needle; 1 written, 0 declined, -1 input ended. */
static int offer(struct runner *r, const struct frame *f, const char *const *tags, const char *dir,
		 char *name, size_t namelen)
{
	struct needle_area areas[INTERACTIVE_MAX_AREAS];
	const char *ntags[MAX_NEEDLE_TAGS];
	char answer[512], prompt[512], dflt[220], tagbuf[256], err[512];
	size_t nt, na;
	int tries;

	if (ask(r, "  make it from the screen now? [Y/n] ", answer, sizeof(answer)))
		return -1;
	if (answer[0] == 'n' || answer[0] == 'N')
		return 0;
	nt = split_tags(tags[0], tagbuf, sizeof(tagbuf), ntags);
	default_name(dir, tags[0], dflt, sizeof(dflt));
	for (tries = 0;; tries++) {
		const char *pick = answer[0] ? answer : dflt;
		size_t plen;

		if (tries == MAX_TRIES)
			return 0;
		snprintf(prompt, sizeof(prompt), "  needle name [%s]: ", dflt);
		if (ask(r, prompt, answer, sizeof(answer)))
			return -1;
		pick = answer[0] ? answer : dflt;
		plen = strlen(pick);
		if (plen >= namelen)
			plen = namelen - 1;
		memcpy(name, pick, plen);
		name[plen] = '\0';
		if (!name_ok(pick))
			printf("  '%s' is no needle name: up to 200 letters, digits and ._+@-\n", pick);
		else if (needle_exists(dir, name))
			printf("  %s/%s.json exists already: choose another name\n", dir, name);
		else
			break;
	}
	for (tries = 0;; tries++) {
		if (tries == MAX_TRIES)
			return 0;
		snprintf(prompt, sizeof(prompt), "  match areas X,Y,W,H (several separated by spaces), or 'full' for the whole %dx%d screen [full]: ",
			 f->img->w, f->img->h);
		if (ask(r, prompt, answer, sizeof(answer)))
			return -1;
		if (interactive_parse_areas(answer, f->img->w, f->img->h, areas, INTERACTIVE_MAX_AREAS, &na)) {
			printf("  '%s': want X,Y,W,H with W and H above 0, or 'full'\n", answer);
			continue;
		}
		if (needle_write(dir, name, f->img, ntags, nt, areas, na, NULL, 0, err, sizeof(err)) == 0)
			return 1;
		printf("  %s\n", err);
	}
}

int interactive_make_needle(struct runner *r, const char *const *tags, size_t ntags, const char *check)
{
	struct frame *f = NULL;
	struct needle_set fresh;
	double t0 = time_mono();
	char name[256], *shot = NULL;
	const char *dir = r->needles->dir;
	int rc = 0, paused;

	if (ntags == 0 || !r->ask)
		return 0;
	paused = vm_pause(r, "stop") == 0;
	f = vnc_latest(r->vnc);
	if (!f)
		goto out;
	shot = path_join(r->out_dir, "interactive-screen.png");
	if (!shot || image_save_png(f->img, shot)) {
		log_warn("--interactive: cannot save the screen as '%s'", shot ? shot : "interactive-screen.png");
		goto out;
	}
	printf("  %s: the screen now (%dx%d, the VM waits): %s\n", check, f->img->w, f->img->h, shot);
	if (!file_is_dir(dir) && file_mkdir_p(dir, 0755)) {
		printf("  cannot create the needles directory '%s'\n", dir);
		goto out;
	}
	rc = offer(r, f, tags, dir, name, sizeof(name));
	if (rc < 0) {
		rc = r->abort ? ERR_CLOSED : 0;
		goto out;
	}
	if (rc == 0)
		goto out;
	rc = needle_set_load(&fresh, dir, NULL, NULL);
	if (rc) {
		needle_set_release(&fresh);
		runner__progress(r, "%s: wrote %s/%s.json but cannot load '%s' again: %s", check, dir, name, dir,
				 err_str(rc));
		rc = 0;
		goto out;
	}
	needle_set_release(r->needles);
	*r->needles = fresh;
	dir = r->needles->dir; /* the old set's copy went with it */
	runner__progress(r, "%s: made needle '%s' from the screen (%s/%s.json, %zu needles now); checking again",
			 check, name, dir, name, needle_set_count(r->needles));
	rc = 1;
out:
	if (paused)
		vm_pause(r, "cont");
	frame_unref(f);
	free(shot);
	/* The person's time is no job time, nor a module stuck in a loop. */
	r->deadline += time_mono() - t0;
	r->last_api = time_mono();
	return rc;
}
