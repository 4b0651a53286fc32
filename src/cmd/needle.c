/* SPDX-License-Identifier: MIT */
/* needle.c - `vigil needle`: match screenshots against a needles directory
 * (one JSON line per screenshot), cut new needles from a screenshot and
 * show a needle's areas. Option parsing and output only; the work is in
 * image/needle, match and draw. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cmd/cmd.h"
#include "image/draw.h"
#include "image/image.h"
#include "image/match.h"
#include "image/needle.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/file.h"
#include "util/path.h"
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
		"  new     write a new needle (NAME.json + NAME.png) from a screenshot\n"
		"  show    write the crops of a needle's areas and its PNG with the areas drawn\n\n"
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

static void usage_show(FILE *f)
{
	fprintf(f,
		"usage: vigil needle show NAME [--needles DIR] [--out DIR]\n\n"
		"Finds needle NAME (NAME.json + NAME.png anywhere below the needles\n"
		"directory) and writes into the output directory:\n"
		"  NAME-areaI-TYPE.png  the pixels of area I (from 0, in the JSON's order),\n"
		"                       exactly the area's width x height\n"
		"  NAME-areas.png       the needle's PNG with its areas outlined: match\n"
		"                       green, exclude red, ocr blue; the click point as a\n"
		"                       magenta cross\n"
		"It prints one line per area: type, x,y,w,h in needle coordinates (the\n"
		"normalised screen, 1024x768 by default), match level and margin.\n\n"
		"options:\n"
		"  --needles DIR  the needles directory (default: ./needles if it exists,\n"
		"                 else .)\n"
		"  --out DIR      where the PNGs go (default .; created if missing)\n"
		"  -h, --help     this text\n\n"
		"A needle that does not load is an error naming its file and field.\n");
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

static int cmd_needle_new(int argc, char **argv)
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
				if (needle_area_parse(val, &areas[nareas])) {
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

/* What `needle show` heard from the loader about the needle it looks for:
 * the first message about a file NAME.json (why it did not load). */
struct show_warn {
	const char *name;
	char msg[1024];
};

static void show_warn_cb(void *ctx, const char *msg)
{
	struct show_warn *sw = ctx;
	const char *rel, *end, *base;
	size_t nl = strlen(sw->name);

	if (sw->msg[0] || strncmp(msg, "needle '", 8))
		return;
	rel = msg + 8;
	end = strstr(rel, "': ");
	if (!end)
		return;
	for (base = end; base > rel && base[-1] != '/'; base--)
		;
	if ((size_t)(end - base) == nl + 5 && !strncmp(base, sw->name, nl) && !strncmp(base + nl, ".json", 5))
		snprintf(sw->msg, sizeof(sw->msg), "%s", msg);
}

static const char *area_type_name(enum needle_area_type t)
{
	return t == NEEDLE_AREA_EXCLUDE ? "exclude" : t == NEEDLE_AREA_OCR ? "ocr" : "match";
}

/* Write img as OUT/NAME-SUFFIX.png; the path goes to *path (caller frees). */
static int show_save(const struct image *img, const char *out, const char *name, const char *suffix,
		     char **path)
{
	char file[1024];

	snprintf(file, sizeof(file), "%s-%s.png", name, suffix);
	*path = path_join(out, file);
	if (!*path)
		return ERR_NOMEM;
	return image_save_png(img, *path);
}

static int cmd_needle_show(int argc, char **argv)
{
	const char *name = NULL, *dir = NULL, *out = ".";
	struct needle_set set = { 0 };
	struct show_warn sw = { 0 };
	struct needle *n;
	struct image *png = NULL, *img = NULL;
	char err[1024], suffix[64], *path = NULL;
	size_t i;
	int a, rc = 2, cx, cy;

	for (a = 1; a < argc; a++) {
		const char *o = argv[a];
		if (!strcmp(o, "-h") || !strcmp(o, "--help")) {
			usage_show(stdout);
			return 0;
		}
		if (!strcmp(o, "--needles") || !strcmp(o, "--out")) {
			if (a + 1 >= argc) {
				fprintf(stderr, "vigil needle show: %s needs a value\n", o);
				return 2;
			}
			*(!strcmp(o, "--out") ? &out : &dir) = argv[++a];
		} else if (o[0] == '-') {
			fprintf(stderr, "vigil needle show: unknown option '%s'; try --help\n", o);
			return 2;
		} else if (!name) {
			name = o;
		} else {
			fprintf(stderr, "vigil needle show: unexpected argument '%s'\n", o);
			return 2;
		}
	}
	if (!name) {
		usage_show(stderr);
		return 2;
	}
	if (!dir)
		dir = file_is_dir("needles") ? "needles" : ".";
	sw.name = name;
	rc = needle_set_load(&set, dir, show_warn_cb, &sw);
	if (rc) {
		fprintf(stderr, "vigil needle show: cannot read needles directory '%s': %s\n", dir, err_str(rc));
		goto fail;
	}
	n = needle_set_get(&set, name);
	if (!n) {
		if (sw.msg[0])
			fprintf(stderr, "vigil needle show: %s (needles directory '%s')\n", sw.msg, dir);
		else
			fprintf(stderr, "vigil needle show: no needle '%s' (%s.json + %s.png) below '%s'; "
				"--needles DIR names another directory\n", name, name, name, dir);
		goto fail;
	}
	rc = image_load_png(n->png_path, &png, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "vigil needle show: needle '%s': png: %s\n", n->file, err);
		goto fail;
	}
	if (!file_is_dir(out) && file_mkdir_p(out, 0755)) {
		fprintf(stderr, "vigil needle show: cannot create directory '%s'\n", out);
		goto fail;
	}
	printf("needle %s: %s, image %dx%d, tags", n->name, n->json_path, png->w, png->h);
	for (i = 0; i < n->ntags; i++)
		printf(" %s", n->tags[i]);
	printf("%s\n", n->ntags ? "" : " (none)");
	for (i = 0; i < n->nareas; i++) {
		const struct needle_area *ar = &n->areas[i];

		image_free(img);
		rc = draw_area_crop(png, ar, i, &img, err, sizeof(err));
		if (rc) {
			fprintf(stderr, "vigil needle show: needle '%s': %s %s\n", n->file, err, n->png_path);
			goto fail;
		}
		snprintf(suffix, sizeof(suffix), "area%zu-%s", i, area_type_name(ar->type));
		free(path);
		rc = show_save(img, out, n->name, suffix, &path);
		if (rc)
			goto write_fail;
		printf("area %zu: %-7s %d,%d,%d,%d  match %g%%  margin %g", i, area_type_name(ar->type),
		       ar->x, ar->y, ar->w, ar->h, ar->match, ar->margin);
		if (!draw_click_point(ar, &cx, &cy))
			printf("  click %d,%d", cx, cy);
		printf("  -> %s\n", path);
	}
	image_free(img);
	img = draw_needle_areas(png, n);
	free(path);
	path = NULL;
	rc = img ? show_save(img, out, n->name, "areas", &path) : ERR_NOMEM;
	if (rc)
		goto write_fail;
	printf("areas drawn: %s\n", path);
	rc = 0;
	goto out;
write_fail:
	fprintf(stderr, "vigil needle show: cannot write %s: %s\n", path ? path : out, err_str(rc));
fail:
	rc = 1;
out:
	free(path);
	image_free(img);
	image_free(png);
	needle_set_release(&set);
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
		return cmd_needle_new(argc - 1, argv + 1);
	if (!strcmp(argv[1], "show"))
		return cmd_needle_show(argc - 1, argv + 1);
	fprintf(stderr, "vigil needle: unknown command '%s'; try 'vigil needle --help'\n", argv[1]);
	return 2;
}
