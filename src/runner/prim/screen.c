/* SPDX-License-Identifier: MIT */
/* screen.c - screen checks: every changed frame the capture thread hands
 * over while a check waits is matched (margin search), the whole screen is
 * searched at least every 5 s and at the deadline, and the step (needle
 * areas, candidates, OCR) is recorded through steps.c with its screenshot
 * and frame time. Keeps the prepared
 * screen of the last frame searched, as os-autoinst keeps last_image. */
#define LOG_MODULE "screen"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include "image/diff.h"
#include "image/match.h"
#include "image/needle.h"
#include "runner/prim/interactive.h"
#include "runner/prim/screen.h"
#include "runner/core/steps.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/log.h"
#include "util/path.h"
#include "util/proc.h"
#include "util/time.h"
#include "vm/vnc.h"
#include "util/banned.h" /* last: after every system header */

#define FULL_SEARCH_INTERVAL 5.0
#define MARGIN_RATIO 0.02
#define MAX_CANDIDATES 5

struct frame *screen_current(struct runner *r)
{
	return vnc_latest(r->vnc);
}

/* The JSON built here is the step (the verdict shown) and the match the
 * test gets: each builder returns NULL rather than a part (results_set). */
static json_t *whole(json_t *v, int rc)
{
	if (rc) {
		json_decref(v);
		return NULL;
	}
	return v;
}

/* openQA's serialisation of a needle's match: area list with integer
 * percent similarities. */
static json_t *areas_json(const struct match_result *res)
{
	json_t *list = json_array();
	size_t i, k = 0;
	const struct needle *n = res->needle;
	int rc = 0;

	for (i = 0; i < n->nareas; i++) {
		const struct needle_area *na = &n->areas[i];
		const struct match_area_result *a;
		json_t *o;
		if (na->type != NEEDLE_AREA_MATCH)
			continue;
		if (k >= res->nareas)
			break;
		a = &res->areas[k++];
		o = json_object();
		results_set(&rc, o, "x", json_integer(a->x));
		results_set(&rc, o, "y", json_integer(a->y));
		results_set(&rc, o, "w", json_integer(a->w));
		results_set(&rc, o, "h", json_integer(a->h));
		results_set(&rc, o, "similarity", json_integer((json_int_t)floor(a->similarity * 100 + 1e-9)));
		results_set(&rc, o, "result", json_string(a->ok ? "ok" : "fail"));
		if (na->has_click_point) {
			json_t *cp = json_object();
			if (na->click_center) {
				results_set(&rc, cp, "xpos", json_real(na->w / 2.0));
				results_set(&rc, cp, "ypos", json_real(na->h / 2.0));
			} else {
				results_set(&rc, cp, "xpos", json_integer(na->click_x));
				results_set(&rc, cp, "ypos", json_integer(na->click_y));
			}
			if (na->click_id)
				results_set(&rc, cp, "id", json_string(na->click_id));
			results_set(&rc, o, "click_point", cp);
		}
		results_append(&rc, list, o);
	}
	return whole(list, rc);
}

static json_t *tags_json(const struct needle *n)
{
	json_t *t = json_array();
	size_t i;
	int rc = 0;
	for (i = 0; i < n->ntags; i++)
		results_append(&rc, t, json_string(n->tags[i]));
	return whole(t, rc);
}

static json_t *candidate_json(const struct match_result *res)
{
	json_t *o = json_object();
	int rc = 0;
	results_set(&rc, o, "name", json_string(res->needle->name));
	results_set(&rc, o, "json", json_string(res->needle->file));
	results_set(&rc, o, "error", json_real(res->error));
	results_set(&rc, o, "area", areas_json(res));
	return whole(o, rc);
}

static json_t *asked_tags_json(const char *const *tags, size_t ntags)
{
	json_t *t = json_array();
	size_t i;
	int rc = 0;
	for (i = 0; i < ntags; i++)
		results_append(&rc, t, json_string(tags[i]));
	return whole(t, rc);
}

/* The best result of matching one frame against all candidate needles. */
struct frame_search {
	struct match_result *res; /* sorted, best first */
	size_t n;
	double ratio;
	uint64_t seq;
};

static void search_release(struct frame_search *s)
{
	size_t i;
	for (i = 0; i < s->n; i++)
		match_result_release(&s->res[i]);
	free(s->res);
	s->res = NULL;
	s->n = 0;
}

/* os-autoinst searches one tinycv Image, last_image, for as long as the
 * screen stays the same: margin and whole-screen searches, and later
 * checks too. The image's preparation cache carries over from search to
 * search and decides how the blur rounds (see image/match.h), so one
 * match_screen is kept per frame in the job's context (r->screen) and
 * reused while that frame is the one searched. It holds a reference to its
 * frame and is replaced when another frame comes. */
static struct match_screen *frame_screen(struct runner *r, struct frame *f)
{
	struct screen_cache *c = &r->screen;
	struct match_screen *ms;

	if (c->ms && c->f == f)
		return c->ms;
	/* a new frame: as a new match_screen, with the old one's buffers;
	 * after the frame before it, only its changed rows are searched again */
	if (c->ms) {
		struct frame *old = c->f;
		ms = c->ms;
		if (old && f->seq == old->seq + 1 && old->img->w == f->img->w &&
		    old->img->h == f->img->h && (f->same_top || f->same_bottom))
			match_screen_reset_rows(ms, f->img, f->same_top, f->img->h - f->same_bottom);
		else
			match_screen_reset(ms, f->img);
	} else {
		ms = match_screen_new(f->img);
		if (!ms)
			return NULL;
	}
	frame_unref(c->f);
	frame_ref(f);
	c->f = f;
	c->ms = ms;
	return ms;
}

void screen_release(struct runner *r)
{
	match_screen_free(r->screen.ms);
	frame_unref(r->screen.f);
	r->screen.ms = NULL;
	r->screen.f = NULL;
}

static int search_frame(struct runner *r, struct needle **needles, size_t nn, struct frame *f,
			double ratio, struct frame_search *out)
{
	struct match_screen *ms;
	size_t i;
	int rc = 0;

	search_release(out);
	out->ratio = ratio;
	out->seq = f->seq;
	if (nn == 0)
		return 0;
	out->res = calloc(nn, sizeof(*out->res));
	if (!out->res)
		return ERR_NOMEM;
	ms = frame_screen(r, f);
	if (!ms)
		return ERR_NOMEM;
	for (i = 0; i < nn; i++) {
		char err[512];
		rc = match_needle_err(ms, needles[i], ratio, 0.0, &out->res[out->n], err, sizeof(err));
		if (rc == ERR_NOMEM)
			return rc;
		if (rc) {
			if (needle_tell_failure(needles[i]))
				log_warn("needle '%s' (%s) could not be matched, left out of every search: %s",
					 needles[i]->name, needles[i]->file, err);
			rc = 0;
			continue;
		}
		out->n++;
	}
	match_results_sort(out->res, out->n);
	return rc;
}

static int is_near_miss(const struct runner *r, const struct match_result *best)
{
	size_t i;
	if (!best || best->nareas == 0)
		return 0;
	for (i = 0; i < best->nareas; i++)
		if (best->areas[i].similarity < r->review_level)
			return 0;
	return 1;
}

/* Text of the needle's ocr areas on the frame, read by tesseract as
 * os-autoinst does (area coordinates as in the needle). NULL when the
 * needle has no ocr area. OCR never fails a match. */
static json_t *read_ocr(struct runner *r, const struct needle *n, const struct frame *f)
{
	json_t *list = NULL;
	size_t i;

	for (i = 0; i < n->nareas; i++) {
		const struct needle_area *a = &n->areas[i];
		struct image *crop;
		char *png;
		struct buf out;
		int status, rc;

		if (a->type != NEEDLE_AREA_OCR)
			continue;
		if (!list)
			list = json_array();
		crop = image_crop(f->img, a->x, a->y, a->w, a->h);
		png = path_join(r->workdir, "ocr.png");
		buf_init(&out, 1 << 20);
		rc = crop && png ? image_save_png(crop, png) : ERR_NOMEM;
		if (!rc) {
			char *argv[] = { "tesseract", png, "stdout", "--psm", "6", NULL };
			rc = proc_run(argv, 30000, &status, &out);
			if (!rc && !(WIFEXITED(status) && WEXITSTATUS(status) == 0))
				rc = ERR_IO;
		}
		if (rc) {
			log_warn("ocr of needle '%s' area %zu failed: %s", n->name, i + 1, err_str(rc));
			json_array_append_new(list, json_string(""));
		} else {
			size_t len = out.len;
			while (len > 0 && (out.data[len - 1] == '\n' || out.data[len - 1] == ' ' ||
					   out.data[len - 1] == '\f'))
				len--;
			json_array_append_new(list, json_stringn(out.data ? out.data : "", len));
		}
		buf_release(&out);
		image_free(crop);
		free(png);
	}
	return list;
}

/* The needle a step was judged by, among the job's artefacts (its JSON;
 * its picture too for a failed assert, to be shown beside the screen). */
static void save_needle(struct runner *r, const struct needle *n, bool png)
{
	int rc = results_save_needle(r->testresults, n->name, n->json_path, png ? n->png_path : NULL);

	if (rc && rc != ERR_INVALID)
		log_warn("could not copy needle '%s' to the results: %s", n->name, err_str(rc));
}

/* The frame a check ended on, for runner/perl/perl.c's reply (it shows the
 * frame and names it; the Perl side records the step). */
static void keep_frame(struct runner *r, const struct frame *f)
{
	if (r->check_frame)
		frame_unref(r->check_frame);
	r->check_frame = (struct frame *)f;
	if (f)
		frame_ref(r->check_frame);
}

static json_t *record_match(struct runner *r, const struct frame *f, const struct frame_search *s,
			    const char *const *tags, size_t ntags)
{
	const struct match_result *best = &s->res[0];
	json_t *d = json_object(), *cands = json_array(), *match, *ocr;
	int64_t ms;
	size_t i;
	int rc = 0;

	steps_set(&r->steps, d, "needle", json_string(best->needle->name));
	steps_set(&r->steps, d, "json", json_string(best->needle->file));
	steps_set(&r->steps, d, "area", areas_json(best));
	steps_set(&r->steps, d, "error", json_real(best->error));
	steps_set(&r->steps, d, "tags", tags_json(best->needle));
	steps_set(&r->steps, d, "asked_tags", asked_tags_json(tags, ntags));
	keep_frame(r, f);
	ms = steps_frame(&r->steps, d, f);
	if (best->needle->workaround) {
		steps_set(&r->steps, d, "result", json_string("softfail"));
		steps_set(&r->steps, d, "dent", json_integer(1));
		steps_dent(&r->steps);
	} else {
		steps_set(&r->steps, d, "result", json_string("ok"));
	}
	for (i = 1; i < s->n && i <= MAX_CANDIDATES; i++)
		results_append(&r->steps.err, cands, candidate_json(&s->res[i]));
	/* as basetest's record_screenmatch: the other candidates, when any */
	if (json_array_size(cands))
		steps_set(&r->steps, d, "needles", cands);
	else
		json_decref(cands);
	save_needle(r, best->needle, false);
	ocr = read_ocr(r, best->needle, f);
	if (ocr)
		results_set_ref(&r->steps.err, d, "ocr", ocr);
	/* what the test is given: whole, or the check ends in ERR_NOMEM */
	match = json_object();
	if (ocr)
		results_set(&rc, match, "ocr", ocr);
	results_set(&rc, match, "needle", json_string(best->needle->name));
	results_set_ref(&rc, match, "tags", json_object_get(d, "tags"));
	results_set_ref(&rc, match, "area", json_object_get(d, "area"));
	results_set(&rc, match, "error", json_real(best->error));
	results_set(&rc, match, "ok", json_true());
	steps_add(&r->steps, d, ms);
	if (rc)
		r->steps.err = rc;
	return whole(match, rc);
}

/* A failed assert explained: r->check_why gets the best candidate's line
 * for the terminal, and the difference heat-map of its areas is written
 * beside the step's screenshot (shot, "<module>-<n>.png") as
 * "<module>-<n>-diff.png", named in the candidate's object as "diff". */
static void explain_failure(struct runner *r, const struct frame *f, const struct match_result *best,
			    const char *shot, json_t *cand)
{
	struct image *img = NULL;
	char name[300], err[512];
	size_t len = shot ? strlen(shot) : 0, off;
	int rc;

	diff_describe(best, r->check_why, sizeof(r->check_why));
	if (len < 5 || len + 6 > sizeof(name) || strcmp(shot + len - 4, ".png"))
		return;
	snprintf(name, sizeof(name), "%.*s-diff.png", (int)(len - 4), shot);
	rc = diff_image(f->img, best->needle, best, &img, err, sizeof(err));
	if (!rc)
		rc = steps_save_image(&r->steps, name, img);
	if (rc) {
		log_warn("no difference image for needle '%s': %s", best->needle->name, rc == ERR_NOMEM ? "out of memory" : err);
		return;
	}
	json_object_set_new(cand, "diff", json_string(name));
	off = strlen(r->check_why);
	if (off < sizeof(r->check_why))
		snprintf(r->check_why + off, sizeof(r->check_why) - off, " (difference: %s)", name);
}

static void record_failure(struct runner *r, const struct frame *f, const struct frame_search *s,
			   const char *const *tags, size_t ntags, int is_assert, int near)
{
	json_t *d = json_object(), *cands = json_array();
	int64_t ms;
	size_t i;

	steps_set(&r->steps, d, "result", json_string(is_assert ? "fail" : "unk"));
	steps_set(&r->steps, d, "tags", asked_tags_json(tags, ntags));
	ms = steps_frame(&r->steps, d, f);
	for (i = 0; i < s->n && i < MAX_CANDIDATES; i++) {
		results_append(&r->steps.err, cands, candidate_json(&s->res[i]));
		save_needle(r, s->res[i].needle, is_assert);
	}
	if (is_assert && s->n)
		explain_failure(r, f, &s->res[0], json_string_value(json_object_get(d, "screenshot")),
				json_array_get(cands, 0));
	json_decref(r->check_cands);
	r->check_cands = json_incref(cands);
	steps_set(&r->steps, d, "needles", cands);
	keep_frame(r, f);
	if (is_assert && near)
		steps_set(&r->steps, d, "needs_review", json_true());
	steps_add(&r->steps, d, ms);
}

void screen_fails_clear(struct runner *r)
{
	size_t i;

	for (i = 0; i < r->check_nfails; i++) {
		frame_unref(r->check_fails[i].f);
		json_decref(r->check_fails[i].cands);
	}
	free(r->check_fails);
	r->check_fails = NULL;
	r->check_nfails = 0;
}

int screen_fails_add(struct runner *r, struct frame *f, json_t *cands, double sim)
{
	struct screen_fail *a = realloc(r->check_fails, (r->check_nfails + 1) * sizeof(*a));

	if (!a)
		return ERR_NOMEM;
	r->check_fails = a;
	frame_ref(f);
	a[r->check_nfails++] = (struct screen_fail){ f, json_incref(cands), time_mono(), sim };
	/* os-autoinst cleans up at 61 to bound the images it holds */
	if (r->check_nfails > 3 * SCREEN_FAIL_MAX)
		screen_fails_reduce(r, SCREEN_FAIL_MAX);
	return 0;
}

static int by_sim_desc(const void *a, const void *b)
{
	double x = ((const struct screen_fail *)a)->sim, y = ((const struct screen_fail *)b)->sim;
	return x < y ? 1 : x > y ? -1 : 0;
}

static int by_time(const void *a, const void *b)
{
	double x = ((const struct screen_fail *)a)->t, y = ((const struct screen_fail *)b)->t;
	return x < y ? -1 : x > y ? 1 : 0;
}

void screen_fails_reduce(struct runner *r, size_t limit)
{
	struct screen_fail *a = r->check_fails;
	size_t i, n = r->check_nfails;

	if (n <= limit)
		return;
	qsort(a + 1, n - 1, sizeof(*a), by_sim_desc);
	for (i = limit + 1; i < n; i++) {
		frame_unref(a[i].f);
		json_decref(a[i].cands);
	}
	r->check_nfails = n = limit + 1;
	qsort(a, n, sizeof(*a), by_time);
	for (i = 1; i < n; i++)
		a[i].sim = image_psnr(a[i - 1].f->img, a[i].f->img);
}

/* A whole-screen search before the deadline found nothing: keep the frame
 * as os-autoinst does when it differs enough from the last one kept. */
static int keep_fail(struct runner *r, struct frame *f, const struct frame_search *s)
{
	double sim = SCREEN_FAIL_LEVEL - 1;
	json_t *cands;
	size_t i;
	int rc;

	if (r->check_nfails)
		sim = image_psnr(r->check_fails[r->check_nfails - 1].f->img, f->img);
	if (sim >= SCREEN_FAIL_LEVEL)
		return 0;
	cands = json_array();
	for (i = 0; i < s->n && i < MAX_CANDIDATES; i++)
		json_array_append_new(cands, candidate_json(&s->res[i]));
	rc = screen_fails_add(r, f, cands, sim);
	json_decref(cands);
	return rc;
}

int screen__first_window(double t0, double deadline)
{
	int win = (int)floor((deadline - t0) / FULL_SEARCH_INTERVAL);

	if (deadline - t0 - FULL_SEARCH_INTERVAL * win <= 0)
		win--; /* that window ended before the check began */
	return win;
}

double screen__window_start(double t0, double deadline, int win)
{
	double at = deadline - FULL_SEARCH_INTERVAL * win - 1.0;

	if (win < 0)
		return deadline;
	return at > t0 ? at : t0;
}

/* The first frame after seq, waiting until runner__clock(r) reaches until (the
 * queue is looked at once even when until has passed): 1 with *out
 * referenced, 0 when until came first, ERR_CLOSED once the VM is gone
 * (the runner then knows why). */
static int next_frame(struct runner *r, uint64_t seq, double until, struct frame **out)
{
	for (;;) {
		double now = runner__clock(r);
		int rc = vnc_next_frame(r->vnc, seq, now < until ? (int)((until - now) * 1000) + 1 : 0, out);

		if (rc == 0)
			return 1;
		if (rc != ERR_TIMEOUT) {
			runner__vm_dead(r);
			return ERR_CLOSED;
		}
		if (runner__clock(r) >= until)
			return 0;
	}
}

/* A check for tags no needle carries, said at once (once in a row for the
 * same tags: send_key_until_needlematch checks again and again), and with
 * --interactive the needle offered (once in a row too). 1 when a needle was made (look the
 * tags up again), 0, negative when the job was interrupted. */
static int no_needle(struct runner *r, const char *const *tags, size_t ntags, double timeout, int is_assert)
{
	const char *check = is_assert ? "assert_screen" : "check_screen";
	char text[sizeof(r->unknown_tags)], wait[64] = "";
	size_t i, off = 0;
	int rc = 0, said;

	for (i = 0; i < ntags && off < sizeof(text); i++) {
		int w = snprintf(text + off, sizeof(text) - off, "%s'%s'", i ? (i + 1 == ntags ? " or " : ", ") : "",
				 tags[i]);
		if (w < 0)
			break;
		off += (size_t)w;
	}
	said = !strcmp(text, r->unknown_tags);
	if (!said)
		r->unknown_offered = 0;
	snprintf(r->unknown_tags, sizeof(r->unknown_tags), "%s", text);
	if (timeout > 0)
		snprintf(wait, sizeof(wait), "waiting out the %g s anyway as os-autoinst does", timeout);
	if (!said)
		runner__progress(r, "%s: no needle has tag %s (%zu needles loaded from %s)%s%s", check, text,
				 needle_set_count(r->needles), r->needles->dir, wait[0] && !r->ask ? "; " : "",
				 r->ask ? "" : wait);
	/* Offered once in a row: a declined offer is not made again by each
	 * round of send_key_until_needlematch. */
	if (r->ask && !r->unknown_offered && (is_assert || timeout > 0)) {
		r->unknown_offered = 1;
		rc = interactive_make_needle(r, tags, ntags, check);
		if (rc == 0 && wait[0])
			runner__progress(r, "%s: %s", check, wait);
	}
	return rc;
}

int screen_check(struct runner *r, const char *const *tags, size_t ntags, double timeout,
		 int is_assert, json_t **match, int *near_miss)
{
	struct needle **needles = NULL;
	struct frame_search s = { 0 };
	struct frame *f = NULL, *next = NULL;
	double t0 = runner__clock(r), deadline, last_full, aligned;
	int win;
	uint64_t searched = UINT64_MAX, searched_full = UINT64_MAX;
	size_t nn;
	int rc = 0;

	*match = NULL;
	*near_miss = 0;
	r->check_why[0] = '\0';
	screen_fails_clear(r);
	nn = needle_set_find(r->needles, tags, ntags, &needles);
	if (nn == 0) {
		rc = no_needle(r, tags, ntags, timeout, is_assert);
		if (rc < 0)
			goto out;
		if (rc == 1)
			nn = needle_set_find(r->needles, tags, ntags, &needles);
		rc = 0;
		t0 = runner__clock(r);
	} else {
		r->unknown_tags[0] = '\0';
	}
	deadline = t0 + (timeout > 0 ? timeout : 0);
	if (deadline > r->deadline)
		deadline = r->deadline;
	last_full = t0;
	win = screen__first_window(t0, deadline);
	aligned = screen__window_start(t0, deadline, win);
	vnc_set_watch(r->vnc, 1);
	f = vnc_latest(r->vnc);
	for (;;) {
		double now = runner__clock(r), wake;
		int full = timeout <= 0 || now >= deadline ||
			   (r->check_keep_fails ? now >= aligned : now - last_full >= FULL_SEARCH_INTERVAL);

		if (f && (f->seq != searched || (full && f->seq != searched_full))) {
			rc = search_frame(r, needles, nn, f, full ? 1.0 : MARGIN_RATIO, &s);
			if (rc)
				goto out;
			searched = f->seq;
			if (full) {
				searched_full = f->seq;
				last_full = now;
			}
			if (s.n && s.res[0].ok) {
				*match = record_match(r, f, &s, tags, ntags);
				rc = *match ? 1 : ERR_NOMEM;
				goto out;
			}
			if (full && r->check_keep_fails && timeout > 0 && now < deadline &&
			    (rc = keep_fail(r, f, &s)) < 0)
				goto out;
		}
		/* A still screen already searched whole: the next full search is
		 * due 5 s from now, not in the past. */
		if (full && f && f->seq == searched_full)
			last_full = now;
		if (full && now >= aligned)
			aligned = screen__window_start(t0, deadline, --win);
		now = runner__clock(r);
		if (now >= deadline) {
			/* The deadline's whole-screen search of the last frame. */
			if (f && f->seq != searched_full)
				continue;
			break;
		}
		wake = last_full + FULL_SEARCH_INTERVAL < deadline ? last_full + FULL_SEARCH_INTERVAL : deadline;
		if (r->check_keep_fails)
			wake = aligned < deadline ? aligned : deadline;
		rc = next_frame(r, f ? f->seq : 0, wake, &next);
		if (rc < 0)
			goto out;
		if (rc == 1) {
			frame_unref(f);
			f = next;
			next = NULL;
		}
		rc = 0;
	}
	*near_miss = s.n ? is_near_miss(r, &s.res[0]) : 0;
	record_failure(r, f, &s, tags, ntags, is_assert, *near_miss);
	log_info("no match after %.1fs%s%s", runner__clock(r) - t0, r->check_why[0] ? ": " : "", r->check_why);
	/* Ran out because QEMU is stopped: no verdict on the test (incomplete). */
	if (timeout > 0) {
		char what[300];
		size_t i, o = 0;
		for (i = 0; i < ntags && o < sizeof(what) - 1; i++)
			o += (size_t)snprintf(what + o, sizeof(what) - o, "%s%s", i ? " " : "", tags[i]);
		(void)runner__vm_frozen(r, runner__clock(r) - t0, "%s '%s' ran out", is_assert ? "assert_screen" : "check_screen",
					what);
	}
	rc = 0;
out:
	vnc_set_watch(r->vnc, 0);
	search_release(&s);
	if (f)
		frame_unref(f);
	free(needles);
	return rc;
}

int screen_check_frame(struct runner *r, struct frame *f, const char *const *tags, size_t ntags, int is_assert,
		       json_t **match, int *near_miss)
{
	struct needle **needles = NULL;
	struct frame_search s = { 0 };
	size_t nn;
	int rc;

	*match = NULL;
	*near_miss = 0;
	r->check_why[0] = '\0';
	nn = needle_set_find(r->needles, tags, ntags, &needles);
	if (nn == 0)
		(void)no_needle(r, tags, ntags, 0, 0);
	rc = search_frame(r, needles, nn, f, 1.0, &s);
	/* the cached preparation belongs to this frame alone */
	screen_release(r);
	if (rc)
		goto out;
	if (s.n && s.res[0].ok) {
		*match = record_match(r, f, &s, tags, ntags);
		rc = *match ? 1 : ERR_NOMEM;
		goto out;
	}
	*near_miss = s.n ? is_near_miss(r, &s.res[0]) : 0;
	record_failure(r, f, &s, tags, ntags, is_assert, *near_miss);
out:
	search_release(&s);
	free(needles);
	return rc;
}

int screen_changed(const struct frame *ref, const struct frame *f, double level)
{
	return !ref || image_psnr(ref->img, f->img) < level;
}

int screen_wait_still(struct runner *r, const char *api, double stilltime, double timeout, double level)
{
	struct frame *ref, *next = NULL;
	double t0 = runner__clock(r), deadline = t0 + timeout, last_change = t0;
	uint64_t seq;
	int rc;

	if (deadline > r->deadline)
		deadline = r->deadline;
	vnc_set_watch(r->vnc, 1);
	ref = vnc_latest(r->vnc);
	seq = ref ? ref->seq : 0;
	for (;;) {
		double now = runner__clock(r);
		if (now - last_change >= stilltime) {
			rc = 1;
			break;
		}
		if (now >= deadline) {
			rc = 0;
			break;
		}
		rc = next_frame(r, seq, last_change + stilltime < deadline ? last_change + stilltime : deadline, &next);
		if (rc == 0)
			continue;
		if (rc < 0)
			break;
		seq = next->seq;
		if (screen_changed(ref, next, level)) {
			/* A real change: restart the still period from this frame. */
			last_change = runner__clock(r);
			if (ref)
				frame_unref(ref);
			ref = next;
		} else {
			frame_unref(next);
		}
		next = NULL;
	}
	vnc_set_watch(r->vnc, 0);
	if (ref)
		frame_unref(ref);
	/* A stopped QEMU sends no frame: its screen is "still" and proves
	 * nothing, as a time-out proves nothing. */
	if (rc >= 0 && runner__vm_frozen(r, runner__clock(r) - t0, "%s %gs %s", api, stilltime,
					 rc ? "saw a still screen" : "ran out"))
		rc = ERR_BADSTATE;
	return rc;
}

int screen_wait_change(struct runner *r, const char *api, struct frame *ref, double timeout, double level,
		       double *sim)
{
	double t0 = runner__clock(r), deadline = t0 + timeout;
	uint64_t seq = ref ? ref->seq : 0;
	struct frame *next = NULL;
	int rc;

	if (deadline > r->deadline)
		deadline = r->deadline;
	*sim = IMAGE_PSNR_IDENTICAL;
	vnc_set_watch(r->vnc, 1);
	for (;;) {
		double now = runner__clock(r);
		if (now >= deadline) {
			rc = 0;
			break;
		}
		rc = next_frame(r, seq, deadline, &next);
		if (rc == 0)
			continue;
		if (rc < 0)
			break;
		seq = next->seq;
		*sim = ref ? image_psnr(ref->img, next->img) : 0;
		frame_unref(next);
		if (*sim < level) {
			rc = 1;
			break;
		}
	}
	vnc_set_watch(r->vnc, 0);
	if (rc == 0 && runner__vm_frozen(r, runner__clock(r) - t0, "%s ran out", api))
		rc = ERR_BADSTATE;
	return rc;
}

int screen_save_step(struct runner *r, const char *result)
{
	struct frame *f = vnc_latest(r->vnc);

	if (!f)
		return ERR_NOT_FOUND;
	steps_screenshot(&r->steps, f, result);
	frame_unref(f);
	return 0;
}
