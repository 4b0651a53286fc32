/* SPDX-License-Identifier: MIT */
/* snd2png.c - `vigil snd2png SOUND PNG`: a recorded sound as the
 * spectrogram image sound needles are matched against, as os-autoinst's
 * snd2png draws it (image/spectrogram.c). The Perl test process finds it
 * as `snd2png` on its PATH (runner/perl/perl.c). */
#include <stdio.h>
#include <string.h>
#include "cmd/cmd.h"
#include "image/spectrogram.h"
#include "util/err.h"
#include "util/banned.h" /* last: after every system header */

static void usage(FILE *f)
{
	fprintf(f, "usage: vigil snd2png SOUND.wav IMAGE.png\n\n"
		"Draws SOUND (a WAV file, or any format libsndfile reads) as the 1024x768\n"
		"spectrogram that sound needles match: os-autoinst's snd2png image, pixel\n"
		"for pixel (10 ms columns, 0-3200 Hz, black the loudest, silence cut).\n");
}

int cmd_snd2png(int argc, char **argv)
{
	struct image *img = NULL;
	char err[1024];
	int rc;

	if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		usage(stdout);
		return 0;
	}
	if (argc != 3) {
		usage(stderr);
		return 2;
	}
	rc = spectrogram_from_file(argv[1], &img, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "vigil snd2png: %s\n", rc == ERR_NOMEM ? "out of memory" : err);
		return 1;
	}
	rc = image_save_png(img, argv[2]);
	image_free(img);
	if (rc) {
		fprintf(stderr, "vigil snd2png: cannot write '%s': %s\n", argv[2], err_str(rc));
		return 1;
	}
	return 0;
}
