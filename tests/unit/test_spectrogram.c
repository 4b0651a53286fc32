/* SPDX-License-Identifier: MIT */
/* test_spectrogram.c - image/spectrogram.c: a tone lands on its row, the
 * silence around it is cut, bad files and rates are refused by name.
 * (Pixel equality with os-autoinst's snd2png: test_sound.sh.) */
#include <math.h>
#include <sndfile.h>
#include "image/spectrogram.h"
#include "util/err.h"
#include "util/path.h"
#include "unit.h"

/* A mono 16-bit WAV at rate: silence, a tone of hz for secs, silence. */
static char *write_tone(const char *name, int rate, double hz, double secs, double pad)
{
	char *path = path_join(unit_tmpdir(), name);
	SF_INFO info = { .samplerate = rate, .channels = 1, .format = SF_FORMAT_WAV | SF_FORMAT_PCM_16 };
	SNDFILE *f = path ? sf_open(path, SFM_WRITE, &info) : NULL;
	long n = (long)((secs + 2 * pad) * rate), i;

	CHECK(f);
	for (i = 0; i < n; i++) {
		double t = (double)i / rate;
		short s = t < pad || t >= pad + secs ? 0 : (short)(20000 * sin(2 * M_PI * hz * t));
		CHECK_INT(sf_writef_short(f, &s, 1), 1);
	}
	sf_close(f);
	return path;
}

static int grey(const struct image *img, int x, int y)
{
	return img->px[((size_t)y * (size_t)img->w + (size_t)x) * 3];
}

TEST(spectrogram_tone_on_its_row)
{
	char *wav = write_tone("tone.wav", 44100, 1000, 0.5, 0.2), err[512] = "";
	struct image *img = NULL;
	int x, y, dark_y = -1, dark = 256, cols = 0;

	CHECK_INT(spectrogram_from_file(wav, &img, err, sizeof(err)), 0);
	CHECK_INT(img->w, SPECTROGRAM_W);
	CHECK_INT(img->h, SPECTROGRAM_H);
	/* 1000 Hz is row band 80 of 256 (12.5 Hz each), 3 pixels from the bottom up */
	for (y = 0; y < img->h; y++)
		if (grey(img, 10, y) < dark) {
			dark = grey(img, 10, y);
			dark_y = y;
		}
	CHECK(dark < 50);
	CHECK(dark_y >= SPECTROGRAM_H - 1 - 81 * 3 && dark_y <= SPECTROGRAM_H - 1 - 79 * 3 + 2);
	/* the silence is cut: the tone starts at column 0 and lasts ~50 columns */
	for (x = 0; x < img->w; x++)
		if (grey(img, x, dark_y) < 128)
			cols++;
	CHECK(cols >= 45 && cols <= 52);
	CHECK(grey(img, 1, dark_y) < 128);
	CHECK_INT(grey(img, 200, dark_y), 255);
	image_free(img);
	free(wav);
}

TEST(spectrogram_refuses_what_it_cannot_draw)
{
	char *bad = path_join(unit_tmpdir(), "bad.wav"), *low = write_tone("low.wav", 4000, 440, 0.3, 0), err[512] = "";
	struct image *img = NULL;
	FILE *f = fopen(bad, "w");

	CHECK(f);
	fputs("no sound here", f);
	fclose(f);
	CHECK_INT(spectrogram_from_file(bad, &img, err, sizeof(err)), ERR_PROTO);
	CHECK(!img && strstr(err, "bad.wav"));
	CHECK_INT(spectrogram_from_file(low, &img, err, sizeof(err)), ERR_PROTO);
	CHECK(!img && strstr(err, "4000 Hz"));
	free(bad);
	free(low);
}

TEST(spectrogram_silence_is_white)
{
	char *wav = write_tone("quiet.wav", 44100, 440, 0, 0.3), err[512] = "";
	struct image *img = NULL;
	size_t i;

	CHECK_INT(spectrogram_from_file(wav, &img, err, sizeof(err)), 0);
	for (i = 0; i < (size_t)img->w * (size_t)img->h * 3; i++)
		if (img->px[i] != 255)
			FAIL("pixel byte %zu is %d, not white", i, img->px[i]);
	image_free(img);
	free(wav);
}
