/* SPDX-License-Identifier: MIT */
/* sound.c - the VM's sound recorded and judged, as os-autoinst, for both
 * front ends: QEMU's wavcapture on the audiodev snd0 (vm/qemu_args.c)
 * started and stopped over the human monitor, a recording (or snd2png's
 * PNG of it) drawn as a spectrogram (image/spectrogram.c) and searched
 * for sound needles like a screen. Raises nothing. */
#define LOG_MODULE "sound"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "image/frame.h"
#include "image/spectrogram.h"
#include "runner/prim/screen.h"
#include "runner/prim/sound.h"
#include "util/err.h"
#include "util/path.h"
#include "util/time.h"
#include "vm/qmp.h"
#include "util/banned.h" /* last: after every system header */

/* One human monitor command (qmp_hmp), once the VM runs. */
static int hmp(struct runner *r, const char *line, char *err, size_t errlen)
{
	if (!r->qmp) {
		snprintf(err, errlen, "the VM does not run");
		return ERR_BADSTATE;
	}
	return qmp_hmp(r->qmp, line, err, errlen);
}

int sound_start(struct runner *r, const char *path, char *err, size_t errlen)
{
	char *abs = path[0] == '/' ? strdup(path) : path_join(r->out_dir, path), line[4200];
	int rc;

	if (!abs)
		return ERR_NOMEM;
	/* HMP's quoted string: the path may hold spaces, never a quote */
	if (strpbrk(abs, "\"\\\n") || strlen(abs) > 4000) {
		snprintf(err, errlen, "start_audiocapture: '%s' is not a path QEMU's monitor takes", abs);
		free(abs);
		return ERR_INVALID;
	}
	/* os-autoinst's format: 44.1 kHz, 16 bit, mono, from the audiodev snd0 */
	snprintf(line, sizeof(line), "wavcapture \"%s\" snd0 44100 16 1", abs);
	rc = hmp(r, line, err, errlen);
	if (!rc) {
		r->sound_running = 1;
		runner__progress(r, "start_audiocapture: recording %s", abs);
	}
	free(abs);
	return rc;
}

int sound_stop(struct runner *r, char *err, size_t errlen)
{
	int rc = hmp(r, "stopcapture 0", err, errlen);

	r->sound_running = 0;
	return rc;
}

int sound_check(struct runner *r, const char *path, int is_png, const char *const *tags, size_t ntags, int is_assert,
		 json_t **match, int *near, char *err, size_t errlen)
{
	struct image *img = NULL;
	struct frame *f;
	int rc;

	*match = NULL;
	*near = 0;
	if (is_png)
		rc = image_load_png(path, &img, err, errlen);
	else
		rc = spectrogram_from_file(path, &img, err, errlen);
	if (rc)
		return rc;
	f = frame_from_image(img);
	if (!f)
		return ERR_NOMEM;
	f->t = time_mono();
	f->fb_w = img->w;
	f->fb_h = img->h;
	rc = screen_check_frame(r, f, tags, ntags, is_assert, match, near);
	frame_unref(f);
	if (rc < 0)
		snprintf(err, errlen, "%s", err_str(rc));
	return rc;
}
