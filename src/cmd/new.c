/* SPDX-License-Identifier: MIT */
/* new.c - `vigil new DISTRI_DIR`: scaffolds a test distribution (main.lua,
 * a boot module with one assert_screen, vars.json for one of the example
 * images of scripts/fetch-images, an empty needles/) and prints the next
 * commands. Never overwrites: a directory with anything in it is refused. */
#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cmd/cmd.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/file.h"
#include "util/path.h"
#include "util/banned.h" /* last: after every system header */

/* One example image: its variables, the first screen it shows and a
 * needle area on that screen (from the examples' own needles). */
struct new_image {
	const char *name;
	const char *summary;
	const char *vars[4][2];   /* up to 4 variables besides DISTRI */
	const char *tag;          /* the boot module's assert_screen tag */
	const char *screen;       /* what the tag stands for, for comments */
	const char *area;         /* X,Y,W,H of a good match area */
	const char *area_what;    /* what lies there */
	int timeout;              /* seconds (times TIMEOUT_SCALE) */
	const char *needs;        /* how the image gets into the cache */
};

/* GRUB's menu boots its first entry after 30 s: the time-out is shorter,
 * so that the screenshot of the first run's failed check shows the menu. */
static const struct new_image images[] = {
	{ "grub", "the GRUB rescue ISO (a few seconds to its menu; the fastest)",
	  { { "ISO", "${VIGIL_IMAGES}/grub-rescue-cdrom.iso" }, { "QEMURAM", "512" } },
	  "grub-menu", "GRUB's boot menu", "200,10,320,25", "GRUB's title line", 20, "scripts/fetch-images" },
	{ "shell", "the Debian installer's kernel with vigil's busybox initramfs: a root shell",
	  { { "KERNEL", "${VIGIL_IMAGES}/di-text/linux" }, { "INITRD", "${VIGIL_IMAGES}/shell-initrd.gz" },
	    { "APPEND", "console=tty0 console=ttyS0 quiet" }, { "QEMURAM", "512" } },
	  "shell-banner", "the shell's banner on the console", "0,0,230,16", "the banner line", 120, "scripts/fetch-images" },
	{ "installer", "the Debian 12 netboot installer, text flavor",
	  { { "KERNEL", "${VIGIL_IMAGES}/di-text/linux" }, { "INITRD", "${VIGIL_IMAGES}/di-text/initrd.gz" },
	    { "APPEND", "quiet" }, { "QEMURAM", "1024" } },
	  "installer-language", "the installer's language question", "400,16,210,18", "the question's title", 400, "scripts/fetch-images" },
	{ "debian", "a Debian 12 root file system with its kernel (console login)",
	  { { "KERNEL", "${VIGIL_IMAGES}/debian/vmlinuz" }, { "INITRD", "${VIGIL_IMAGES}/debian/initrd.img" },
	    { "HDD_1", "${VIGIL_IMAGES}/debian/rootfs.ext4" },
	    { "APPEND", "root=/dev/vda rw quiet console=tty0 console=ttyS0" } },
	  "debian-login", "getty's login prompt on the console", "0,14,300,50", "the login prompt", 180, "scripts/build-debian-image" },
};

#define NIMAGES (sizeof(images) / sizeof(images[0]))

static void usage(FILE *f)
{
	size_t i;

	fprintf(f,
		"usage: vigil new DISTRI_DIR [--image NAME]\n\n"
		"Creates a test distribution in DISTRI_DIR (new, or empty):\n"
		"  main.lua        loadtest \"boot\"\n"
		"  tests/boot.lua  a boot module: one assert_screen on a tag, and how to\n"
		"                  make its needle\n"
		"  vars.json       DISTRI and the image's variables (${VIGIL_IMAGES}: the\n"
		"                  image cache, ~/.cache/vigil/images by default)\n"
		"  needles/        empty: the first run fails for want of a needle, and\n"
		"                  its screenshot is where the needle comes from\n"
		"then prints the commands that lead to a first passing run.\n\n"
		"options:\n"
		"  --image NAME  the image to boot (default grub):\n");
	for (i = 0; i < NIMAGES; i++)
		fprintf(f, "                  %-9s %s\n", images[i].name, images[i].summary);
	fprintf(f, "  -h, --help    this text\n\n"
		"See docs/needles.md for how screens map to needle coordinates.\n");
}

/* 1 when dir holds no entry but . and .., 0 when it holds one, -errno when
 * it cannot be read. */
static int dir_empty(const char *dir)
{
	struct dirent *e;
	DIR *d = opendir(dir);
	int empty = 1;

	if (!d)
		return -errno;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
			empty = 0;
			break;
		}
	closedir(d);
	return empty;
}

/* dir without trailing slashes ("/" stays), as a new string: it is
 * printed in commands such as `vigil run DIR --out DIR-results`. */
static char *trim_dir(const char *dir)
{
	size_t end = strlen(dir);

	while (end > 1 && dir[end - 1] == '/')
		end--;
	return strndup(dir, end);
}

/* The last component of dir (trimmed), as a new string. */
static char *distri_name(const char *dir)
{
	size_t end = strlen(dir), start;
	char *s;

	start = end;
	while (start > 0 && dir[start - 1] != '/')
		start--;
	s = malloc(end - start + 1);
	if (s) {
		memcpy(s, dir + start, end - start);
		s[end - start] = '\0';
	}
	return s;
}

static int put_file(const char *dir, const char *rel, const struct buf *b, char *err, size_t errlen)
{
	char *p = path_join(dir, rel);
	int rc = p ? file_write_all(p, b->data ? b->data : "", b->len) : ERR_NOMEM;

	if (rc)
		err_set(err, errlen, "cannot write '%s': %s", p ? p : rel, err_str(rc));
	free(p);
	return rc;
}

static int write_vars(const char *dir, const char *distri, const struct new_image *im,
		      char *err, size_t errlen)
{
	json_t *o = json_object();
	char *text = NULL;
	struct buf b;
	size_t i;
	int rc = ERR_NOMEM;

	buf_init(&b, 1 << 16);
	if (!o || json_object_set_new(o, "DISTRI", json_string(distri)))
		goto out;
	for (i = 0; i < 4 && im->vars[i][0]; i++)
		if (json_object_set_new(o, im->vars[i][0], json_string(im->vars[i][1])))
			goto out;
	text = json_dumps(o, JSON_INDENT(3) | JSON_PRESERVE_ORDER);
	if (!text || buf_puts(&b, text) || buf_puts(&b, "\n"))
		goto out;
	rc = put_file(dir, "vars.json", &b, err, errlen);
out:
	if (rc == ERR_NOMEM)
		err_set(err, errlen, "out of memory");
	free(text);
	json_decref(o);
	buf_release(&b);
	return rc;
}

static int write_lua(const char *dir, const char *distri, const struct new_image *im,
		     char *err, size_t errlen)
{
	struct buf b;
	int rc;

	buf_init(&b, 1 << 16);
	buf_printf(&b,
		   "-- %s: a test distribution made by `vigil new` (image: %s).\n"
		   "-- Each loadtest runs one module of tests/, in this order.\n"
		   "loadtest \"boot\"\n", distri, im->name);
	rc = put_file(dir, "main.lua", &b, err, errlen);
	if (rc)
		goto out;
	buf_reset(&b);
	buf_printf(&b,
		   "-- Boot the image until %s shows.\n"
		   "--\n"
		   "-- The first run fails here: no needle carries the tag '%s' yet. Make\n"
		   "-- one from that run's screenshot of the failed check; the area is in\n"
		   "-- needle coordinates (the normalised 1024x768 screen, see\n"
		   "-- docs/needles.md); %s, at %s, is a good one:\n"
		   "--   vigil needle new %s --from RESULTS/testresults/boot-1.png \\\n"
		   "--     --tag %s --area %s --dir %s/needles\n"
		   "-- `vigil needle show %s --needles %s/needles` writes the area's crop\n"
		   "-- and the screenshot with the area outlined, to check it.\n"
		   "-- The time-out is in seconds, times the job variable TIMEOUT_SCALE.\n"
		   "return {\n"
		   "   flags = { fatal = true },\n"
		   "   run = function()\n"
		   "      assert_screen(\"%s\", %d)\n"
		   "   end,\n"
		   "}\n",
		   im->screen, im->tag, im->area_what, im->area, im->tag, im->tag, im->area, dir, im->tag, dir,
		   im->tag, im->timeout);
	rc = put_file(dir, "tests/boot.lua", &b, err, errlen);
	if (rc)
		goto out;
	buf_reset(&b);
	buf_puts(&b, "Needles: NAME.json + NAME.png pairs, made with `vigil needle new` (see docs/needles.md).\n");
	rc = put_file(dir, "needles/README", &b, err, errlen);
out:
	buf_release(&b);
	return rc;
}

static void print_next(const char *dir, const struct new_image *im)
{
	printf("created %s: main.lua, tests/boot.lua, vars.json, needles/ (image %s)\n\n"
	       "next:\n"
	       "  1. run it; it fails at assert_screen '%s', as no needle carries the tag yet:\n"
	       "       vigil run %s --out %s-results\n"
	       "     (--explore also saves every distinct screen as a numbered PNG;\n"
	       "      --interactive offers to make the needle from the current screen)\n"
	       "  2. make the needle from the failed check's screenshot:\n"
	       "       vigil needle new %s --from %s-results/testresults/boot-1.png \\\n"
	       "         --tag %s --area %s --dir %s/needles\n"
	       "  3. check what it matches (crops and outlines as PNGs):\n"
	       "       vigil needle show %s --needles %s/needles --out %s-show\n"
	       "  4. run again: it passes\n"
	       "       vigil run %s --out %s-results2\n"
	       "The image comes from %s (into ~/.cache/vigil/images).\n",
	       dir, im->name, im->tag, dir, dir, im->tag, dir, im->tag, im->area, dir,
	       im->tag, dir, dir, dir, dir, im->needs);
}

int cmd_new(int argc, char **argv)
{
	const struct new_image *im = &images[0];
	const char *arg = NULL;
	char err[1024], *dir = NULL, *distri = NULL, *sub = NULL;
	size_t i;
	int a, rc = 2;

	for (a = 1; a < argc; a++) {
		const char *o = argv[a];
		if (!strcmp(o, "-h") || !strcmp(o, "--help")) {
			usage(stdout);
			return 0;
		}
		if (!strcmp(o, "--image")) {
			if (a + 1 >= argc) {
				fprintf(stderr, "vigil new: --image needs a value\n");
				return 2;
			}
			o = argv[++a];
			for (i = 0; i < NIMAGES && strcmp(images[i].name, o); i++)
				;
			if (i == NIMAGES) {
				fprintf(stderr, "vigil new: unknown image '%s'; try --help for the list\n", o);
				return 2;
			}
			im = &images[i];
		} else if (o[0] == '-') {
			fprintf(stderr, "vigil new: unknown option '%s'; try --help\n", o);
			return 2;
		} else if (!arg) {
			arg = o;
		} else {
			fprintf(stderr, "vigil new: unexpected argument '%s'\n", o);
			return 2;
		}
	}
	if (!arg || !*arg) {
		usage(stderr);
		return 2;
	}
	if (file_exists(arg) || (file_is_dir(arg) && dir_empty(arg) != 1)) {
		fprintf(stderr, "vigil new: '%s' exists and is not an empty directory; "
			"name a new one, nothing was written\n", arg);
		return 1;
	}
	rc = 1;
	dir = trim_dir(arg);
	distri = dir ? distri_name(dir) : NULL;
	if (!distri)
		goto out;
	for (i = 0; i < 2; i++) {
		free(sub);
		sub = path_join(dir, i ? "needles" : "tests");
		if (!sub || (rc = file_mkdir_p(sub, 0755))) {
			fprintf(stderr, "vigil new: cannot create '%s': %s\n", sub ? sub : dir,
				err_str(sub ? rc : ERR_NOMEM));
			rc = 1;
			goto out;
		}
	}
	if (write_vars(dir, distri, im, err, sizeof(err)) || write_lua(dir, distri, im, err, sizeof(err))) {
		fprintf(stderr, "vigil new: %s\n", err);
		rc = 1;
		goto out;
	}
	print_next(dir, im);
	rc = 0;
out:
	free(sub);
	free(distri);
	free(dir);
	return rc;
}
