/* SPDX-License-Identifier: MIT */
/* needle.c - `vigil needle`: match screenshots against a needles directory
 * (one JSON line per screenshot) and cut new needles from a screenshot.
 * Option parsing and output only; the work is in image/needle and match. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cmd/cmd.h"
#include "image/image.h"
#include "image/match.h"
#include "image/needle.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/file.h"
#include "util/str.h"
#include "util/time.h"
#include "util/banned.h" /* last: after every system header */

static void usage_main(FILE *f)
{
	fprintf(f,
		"usage: vigil needle COMMAND [OPTIONS]\n\n"
		"Needles are openQA's NAME.json + NAME.png pairs anywhere below a needles\n"
		"directory; matching follows os-autoinst exactly.\n\n"
		"commands:\n"
		"  match   match screenshots against needles, one JSON line per screenshot\n"
		"  new     write a new needle (NAME.json + NAME.png) from a screenshot\n\n"
		"'vigil needle COMMAND --help' explains a command's options.\n");
}

static void usage_match(FILE *f)
{
	fprintf(f,
		"usage: vigil needle match [--full-screen | --ratio R] [--tag TAG]... [--time] NEEDLES_DIR\n"
		"                         SCREENSHOT.png...\n\n"
		"Matches every needle (or every needle carrying TAG) against each screenshot\n"
		"and prints one JSON object per screenshot, in order:\n"
		"  {\"screen\":\"shot.png\",\"results\":[{\"needle\":\"NAME\",\"ok\":true,\n"
		"    \"areas\":[{\"x\":10,\"y\":20,\"similarity\":0.9873}]}]}\n"
		"Results are sorted by needle name, one area entry per match area (best\n"
		"position and similarity 0..1). Screenshots are matched as given (not\n"
		"normalised to 1024x768).\n\n"
		"options:\n"
		"  --full-screen  search the whole screen (search ratio 1.0) instead of\n"
		"                 each area's margin + 2%% of (1024 - margin)\n"
		"  --ratio R      search each area's margin + R x (1024 - margin), R from\n"
		"                 0 (the margin alone) to 1 (the whole screen); default 0.02\n"
		"  --tag TAG      only needles carrying TAG; \"a b\" means both a and b;\n"
		"                 repeat for alternatives (OR)\n"
		"  --time         add \"search_ms\": time from the decoded screenshot to the\n"
		"                 last result, the screen's preparation included (needles\n"
		"                 are decoded and prepared before the first screenshot)\n"
		"  -h, --help     this text\n\n"
		"Broken needles are reported on stderr and skipped; an unreadable screenshot\n"
		"is reported and makes the exit status 1 after the others are processed.\n");
}

static void usage_new(FILE *f)
{
	fprintf(f,
		"usage: vigil needle new NAME --from SCREENSHOT.png --tag TAG [--tag TAG]...\n"
		"                        --area X,Y,W,H[,match|exclude|ocr]... [--dir NEEDLES_DIR]\n"
		"                        [--match PERCENT] [--margin PIXELS] [--property NAME]...\n\n"
		"Writes NEEDLES_DIR/NAME.json and NEEDLES_DIR/NAME.png; the PNG is the whole\n"
		"screenshot, as openQA stores needles.\n\n"
		"options:\n"
		"  --from FILE      the screenshot to cut the needle from (required)\n"
		"  --tag TAG        a tag of the needle (at least one)\n"
		"  --area SPEC      X,Y,W,H in screenshot pixels, optionally ,match (default),\n"
		"                   ,exclude or ,ocr; must lie inside the screenshot\n"
		"  --dir DIR        the needles directory (default .)\n"
		"  --match PERCENT  required similarity of match areas (default 96)\n"
		"  --margin PIXELS  how far match areas may move (default 50)\n"
		"  --property NAME  a property, e.g. workaround\n"
		"  -h, --help       this text\n");
}

static void warn_cb(void *ctx, const char *msg)
{
	(void)ctx;
	fprintf(stderr, "vigil needle: warning: %s\n", msg);
}

static int put_json_string(struct buf *b, const char *s)
{
	json_t *j = json_string(s);
	char *t = j ? json_dumps(j, JSON_ENCODE_ANY) : NULL;
	int rc = t ? buf_puts(b, t) : ERR_NOMEM;

	free(t);
	json_decref(j);
	return rc;
}

/* *msp: the match_screen of the previous screenshot, reset for this one
 * so that its buffers are reused (NULL at first; the caller frees it). */
static int match_one(const struct needle_set *set, struct needle **cand, size_t nc, char *skip,
		     const char *shot, double ratio, int timeit, struct buf *out, struct match_screen **msp)
{
	struct match_screen *ms = NULL;
	struct image *img = NULL;
	struct match_result r;
	char err[1024];
	double t0, t1;
	size_t i;
	int rc, first = 1;

	(void)set;
	rc = image_load_png(shot, &img, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "vigil needle: cannot read screenshot %s\n", err);
		return rc;
	}
	t0 = time_mono();
	if (*msp)
		match_screen_reset(*msp, img);
	else
		*msp = match_screen_new(img);
	ms = *msp;
	if (!ms) {
		rc = ERR_NOMEM;
		goto out;
	}
	buf_reset(out);
	buf_puts(out, "{\"screen\":");
	put_json_string(out, shot);
	buf_puts(out, ",\"results\":[");
	for (i = 0; i < nc; i++) {
		size_t k;
		if (skip[i])
			continue;
		rc = match_needle_err(ms, cand[i], ratio, 0.0, &r, err, sizeof(err));
		if (rc == ERR_NOMEM)
			goto out;
		if (rc) {
			fprintf(stderr, "vigil needle: warning: needle '%s': png: %s; skipped\n",
				cand[i]->file, err);
			skip[i] = 1;
			match_result_release(&r);
			rc = 0;
			continue;
		}
		buf_puts(out, first ? "{\"needle\":" : ",{\"needle\":");
		first = 0;
		put_json_string(out, cand[i]->name);
		buf_printf(out, ",\"ok\":%s,\"areas\":[", r.ok ? "true" : "false");
		for (k = 0; k < r.nareas; k++)
			buf_printf(out, "%s{\"x\":%d,\"y\":%d,\"similarity\":%.4f}", k ? "," : "",
				   r.areas[k].x, r.areas[k].y, r.areas[k].similarity);
		buf_puts(out, "]}");
		match_result_release(&r);
	}
	t1 = time_mono();
	buf_puts(out, "]");
	if (timeit)
		buf_printf(out, ",\"search_ms\":%.3f", (t1 - t0) * 1000.0);
	rc = buf_puts(out, "}\n");
	if (!rc)
		fputs(out->data, stdout);
	fflush(stdout);
out:
	image_free(img);
	return rc;
}

static int cmd_match(int argc, char **argv)
{
	struct needle_set set;
	struct needle **cand = NULL;
	const char **tags = NULL;
	size_t ntags = 0, nc = 0, i;
	struct match_screen *ms = NULL;
	char *skip = NULL;
	struct buf out;
	double ratio = MATCH_RATIO_MARGIN;
	int timeit = 0, a, rc, status = 0;
	const char *dir;

	tags = calloc((size_t)argc, sizeof(*tags));
	if (!tags)
		return 1;
	for (a = 1; a < argc; a++) {
		if (!strcmp(argv[a], "-h") || !strcmp(argv[a], "--help")) {
			usage_match(stdout);
			free(tags);
			return 0;
		} else if (!strcmp(argv[a], "--full-screen")) {
			ratio = MATCH_RATIO_FULL;
		} else if (!strcmp(argv[a], "--ratio")) {
			if (a + 1 >= argc || str_to_double(argv[a + 1], &ratio) || !(ratio >= 0 && ratio <= 1)) {
				fprintf(stderr, "vigil needle match: --ratio needs a number from 0 to 1\n");
				free(tags);
				return 2;
			}
			a++;
		} else if (!strcmp(argv[a], "--time")) {
			timeit = 1;
		} else if (!strcmp(argv[a], "--tag")) {
			if (a + 1 >= argc) {
				fprintf(stderr, "vigil needle match: --tag needs a value\n");
				free(tags);
				return 2;
			}
			tags[ntags++] = argv[++a];
		} else if (!strncmp(argv[a], "--tag=", 6)) {
			tags[ntags++] = argv[a] + 6;
		} else if (!strcmp(argv[a], "--")) {
			a++;
			break;
		} else if (argv[a][0] == '-' && argv[a][1]) {
			fprintf(stderr, "vigil needle match: unknown option '%s'; try --help\n", argv[a]);
			free(tags);
			return 2;
		} else {
			break;
		}
	}
	if (argc - a < 2) {
		usage_match(stderr);
		free(tags);
		return 2;
	}
	dir = argv[a++];
	rc = needle_set_load(&set, dir, warn_cb, NULL);
	if (rc) {
		fprintf(stderr, "vigil needle match: cannot read needles directory '%s': %s\n", dir, err_str(rc));
		needle_set_release(&set);
		free(tags);
		return 1;
	}
	if (ntags) {
		nc = needle_set_find(&set, tags, ntags, &cand);
	} else if (set.n) {
		cand = malloc(set.n * sizeof(*cand));
		if (cand) {
			memcpy(cand, set.needles, set.n * sizeof(*cand));
			nc = set.n;
		}
	}
	skip = calloc(nc + 1, 1);
	buf_init(&out, 64u << 20);
	/* Needles are decoded and prepared before the first screenshot, so
	 * --time measures the search alone (errors surface on first match). */
	for (i = 0; i < nc; i++)
		match_needle_prepare(cand[i], NULL, 0);
	for (; a < argc && skip; a++) {
		rc = match_one(&set, cand, nc, skip, argv[a], ratio, timeit, &out, &ms);
		if (rc)
			status = 1;
	}
	match_screen_free(ms);
	buf_release(&out);
	free(skip);
	free(cand);
	needle_set_release(&set);
	free(tags);
	return status;
}

static int parse_area(const char *spec, struct needle_area *a)
{
	char tmp[128], *p, *parts[6];
	size_t n = 0;
	long v[4];
	int i;

	if (strlen(spec) >= sizeof(tmp))
		return ERR_INVALID;
	memcpy(tmp, spec, strlen(spec) + 1);
	p = tmp;
	while (n < 6) {
		parts[n++] = p;
		p = strchr(p, ',');
		if (!p)
			break;
		*p++ = '\0';
	}
	if (p || n < 4 || n > 5)
		return ERR_INVALID;
	for (i = 0; i < 4; i++)
		if (str_to_long(parts[i], &v[i]) || v[i] < 0 || v[i] > 1000000)
			return ERR_INVALID;
	memset(a, 0, sizeof(*a));
	a->x = (int)v[0];
	a->y = (int)v[1];
	a->w = (int)v[2];
	a->h = (int)v[3];
	a->type = NEEDLE_AREA_MATCH;
	a->match = NEEDLE_DEFAULT_MATCH;
	a->margin = NEEDLE_DEFAULT_MARGIN;
	if (n == 5) {
		if (!strcmp(parts[4], "match"))
			a->type = NEEDLE_AREA_MATCH;
		else if (!strcmp(parts[4], "exclude"))
			a->type = NEEDLE_AREA_EXCLUDE;
		else if (!strcmp(parts[4], "ocr"))
			a->type = NEEDLE_AREA_OCR;
		else
			return ERR_INVALID;
	}
	if (a->w <= 0 || a->h <= 0)
		return ERR_INVALID;
	return 0;
}

static int cmd_new(int argc, char **argv)
{
	const char *name = NULL, *from = NULL, *dir = ".";
	const char **tags = NULL, **props = NULL;
	struct needle_area *areas = NULL;
	size_t ntags = 0, nareas = 0, nprops = 0, i;
	struct image *img = NULL;
	double match = NEEDLE_DEFAULT_MATCH, margin = NEEDLE_DEFAULT_MARGIN;
	char err[1024];
	int a, rc = 2;

	tags = calloc((size_t)argc, sizeof(*tags));
	props = calloc((size_t)argc, sizeof(*props));
	areas = calloc((size_t)argc, sizeof(*areas));
	if (!tags || !props || !areas)
		goto out;
	for (a = 1; a < argc; a++) {
		const char *o = argv[a];
		if (!strcmp(o, "-h") || !strcmp(o, "--help")) {
			usage_new(stdout);
			rc = 0;
			goto out;
		}
		if (o[0] == '-' && strcmp(o, "-")) {
			const char *val;
			if (a + 1 >= argc) {
				fprintf(stderr, "vigil needle new: %s needs a value\n", o);
				goto out;
			}
			val = argv[++a];
			if (!strcmp(o, "--from")) {
				from = val;
			} else if (!strcmp(o, "--tag")) {
				tags[ntags++] = val;
			} else if (!strcmp(o, "--property")) {
				props[nprops++] = val;
			} else if (!strcmp(o, "--dir")) {
				dir = val;
			} else if (!strcmp(o, "--area")) {
				if (parse_area(val, &areas[nareas])) {
					fprintf(stderr, "vigil needle new: bad --area '%s': want X,Y,W,H[,match|exclude|ocr] with W,H > 0\n", val);
					goto out;
				}
				nareas++;
			} else if (!strcmp(o, "--match") || !strcmp(o, "--margin")) {
				double d;
				if (str_to_double(val, &d) || d <= 0 || d > (!strcmp(o, "--match") ? 100 : 1024)) {
					fprintf(stderr, "vigil needle new: bad %s '%s'\n", o, val);
					goto out;
				}
				if (!strcmp(o, "--match"))
					match = d;
				else
					margin = d;
			} else {
				fprintf(stderr, "vigil needle new: unknown option '%s'; try --help\n", o);
				goto out;
			}
		} else if (!name) {
			name = o;
		} else {
			fprintf(stderr, "vigil needle new: unexpected argument '%s'\n", o);
			goto out;
		}
	}
	if (!name || !from || ntags == 0 || nareas == 0) {
		fprintf(stderr, "vigil needle new: NAME, --from, at least one --tag and one --area are required; try --help\n");
		goto out;
	}
	for (i = 0; i < nareas; i++) {
		areas[i].match = match;
		areas[i].margin = margin;
	}
	rc = image_load_png(from, &img, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "vigil needle new: cannot read screenshot %s\n", err);
		rc = 1;
		goto out;
	}
	if (!file_is_dir(dir) && file_mkdir_p(dir, 0755)) {
		fprintf(stderr, "vigil needle new: cannot create directory '%s'\n", dir);
		rc = 1;
		goto out;
	}
	rc = needle_write(dir, name, img, tags, ntags, areas, nareas, props, nprops, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "vigil needle new: %s\n", err);
		rc = 1;
		goto out;
	}
	printf("wrote %s/%s.json and %s/%s.png\n", dir, name, dir, name);
	rc = 0;
out:
	image_free(img);
	free(tags);
	free(props);
	free(areas);
	return rc;
}

int cmd_needle(int argc, char **argv)
{
	if (argc < 2) {
		usage_main(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
		usage_main(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "match"))
		return cmd_match(argc - 1, argv + 1);
	if (!strcmp(argv[1], "new"))
		return cmd_new(argc - 1, argv + 1);
	fprintf(stderr, "vigil needle: unknown command '%s'; try 'vigil needle --help'\n", argv[1]);
	return 2;
}
