/* SPDX-License-Identifier: MIT */
/* spectrogram.c - a sound file as os-autoinst's snd2png spectrogram image
 * (libsndfile reads, FFTW transforms). The arithmetic follows snd2png's
 * own order of operations in double precision, so that each pixel's
 * truncation to 0..255 falls the same way and the images are identical
 * (tests/integration/test_sound.sh compares them with /usr/bin/snd2png). */
#include <fftw3.h>
#include <math.h>
#include <sndfile.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "image/spectrogram.h"
#include "util/err.h"
#include "util/banned.h" /* last: after every system header */

/* The voice band snd2png draws, and its rows. */
#define MAX_FREQ 3200.0
#define SCALE 3
#define FREQS (SPECTROGRAM_H / SCALE)

/* snd2png's linear interpolation between bins bin - 1 and bin. */
static double at_freq(const double *points, int bin, double ratio)
{
	if (bin == 0)
		return points[0];
	return ratio * points[bin - 1] + (1.0 - ratio) * points[bin];
}

static double row_max(const double *points, int n)
{
	double m = 0;
	int i;

	for (i = 0; i < n; i++)
		if (points[i] > m)
			m = points[i];
	return m;
}

int spectrogram_from_file(const char *path, struct image **out, char *err, size_t errlen)
{
	SF_INFO info;
	SNDFILE *sf = NULL;
	float *data = NULL;
	double *in = NULL, *points = NULL, max_value = 0, fft_max_freq, fft_bw;
	fftw_complex *spec = NULL;
	fftw_plan plan = NULL;
	struct image *img = NULL;
	sf_count_t frames, i;
	int window, overlap, n, times, last_bin, first, last, t, rc = ERR_NOMEM;
	size_t samples;

	*out = NULL;
	memset(&info, 0, sizeof(info));
	sf = sf_open(path, SFM_READ, &info);
	if (!sf) {
		snprintf(err, errlen, "%s: not a sound file libsndfile reads: %s", path, sf_strerror(NULL));
		return ERR_PROTO;
	}
	frames = info.frames;
	if (info.channels < 1 || info.samplerate < 100 || frames < 0) {
		snprintf(err, errlen, "%s: %d channels at %d Hz: no sound to draw", path, info.channels, info.samplerate);
		rc = ERR_PROTO;
		goto out;
	}
	if ((uint64_t)frames > LIMIT_SOUND_SAMPLES / (unsigned)info.channels) {
		snprintf(err, errlen, "%s: %lld frames of %d channels, over the limit of %u samples", path,
			 (long long)frames, info.channels, LIMIT_SOUND_SAMPLES);
		rc = ERR_TOO_BIG;
		goto out;
	}
	samples = (size_t)frames * (size_t)info.channels;
	data = fftw_malloc(sizeof(float) * (samples ? samples : 1));
	if (!data)
		goto out;
	memset(data, 0, sizeof(float) * (samples ? samples : 1));
	/* libsndfile scales integer samples to -1..1, as snd2png reads them */
	sf_readf_float(sf, data, frames);
	/* several channels: their mean, in float as snd2png sums them */
	if (info.channels != 1) {
		for (i = 0; i < frames; i++) {
			int ch;
			data[i] = data[i * info.channels];
			for (ch = 1; ch < info.channels; ch++)
				data[i] += data[i * info.channels + ch];
			data[i] /= info.channels;
		}
	}

	window = info.samplerate / (1000 / 10); /* 10 ms */
	overlap = window / 2;
	n = window + overlap * 2;
	times = (int)(frames / window - 1);
	if ((sf_count_t)times * window + overlap > frames)
		times--;
	fft_max_freq = info.samplerate / 2.0;
	last_bin = (int)(1 + ceil(MAX_FREQ / fft_max_freq * (n / 2.0)));
	if (last_bin > (int)(1 + n / 2.0))
		last_bin = (int)(1 + n / 2.0);
	fft_bw = fft_max_freq / (n / 2.0);
	/* the highest row's bin must lie in the spectrum (snd2png reads past
	 * it otherwise) */
	if ((int)ceil((FREQS - 1) * MAX_FREQ / FREQS / fft_bw) >= last_bin) {
		snprintf(err, errlen, "%s: a sample rate of %d Hz is too low for a spectrogram of 0-%.0f Hz", path,
			 info.samplerate, MAX_FREQ);
		rc = ERR_PROTO;
		goto out;
	}

	img = image_new(SPECTROGRAM_W, SPECTROGRAM_H);
	if (!img)
		goto out;
	memset(img->px, 255, (size_t)SPECTROGRAM_W * SPECTROGRAM_H * 3);
	if (times > 0) {
		in = fftw_malloc(sizeof(double) * (size_t)n);
		spec = fftw_malloc(sizeof(fftw_complex) * (size_t)n);
		points = calloc((size_t)times * (size_t)last_bin, sizeof(double));
		if (!in || !spec || !points)
			goto out;
		plan = fftw_plan_dft_r2c_1d(n, in, spec, FFTW_ESTIMATE);
		if (!plan) {
			snprintf(err, errlen, "%s: FFTW made no plan for %d samples", path, n);
			rc = ERR_NOMEM;
			goto out;
		}
	}
	for (t = 0; t < times; t++) {
		double *row = points + (size_t)t * (size_t)last_bin;
		int k;

		for (k = 0; k < n; k++)
			in[k] = data[(size_t)t * (size_t)window + (size_t)k];
		fftw_execute(plan);
		for (k = 0; k < last_bin; k++) {
			double v = sqrt((spec[k][0] * spec[k][0]) + (spec[k][1] * spec[k][1]));
			row[k] = v;
			if (max_value < v)
				max_value = v;
		}
	}

	/* silence (under a tenth of the loudest) cut at both ends */
	for (first = 0; first < times; first++)
		if (row_max(points + (size_t)first * (size_t)last_bin, last_bin) > max_value * .1)
			break;
	for (last = times - 1; last > 0; last--)
		if (row_max(points + (size_t)last * (size_t)last_bin, last_bin) > max_value * .1)
			break;
	/* os-autoinst 4.6's cut to the image's width; later versions keep
	 * 1024 columns after a leading silence (their "clamping fix") */
	if (last - first >= SPECTROGRAM_W)
		last = SPECTROGRAM_W - first - 1;

	for (int f = 1; f < FREQS; ++f) {
		double freq = f * MAX_FREQ / FREQS;
		int bin = (int)ceil(freq / fft_bw);
		double ratio = bin - (freq / fft_bw);

		for (t = first; t < last; t++) {
			double v = at_freq(points + (size_t)t * (size_t)last_bin, bin, ratio);
			uint8_t grey = (uint8_t)(255 - (unsigned char)(255 * v / max_value));
			int j;

			for (j = 0; j < SCALE; j++) {
				uint8_t *px = img->px + ((size_t)(SPECTROGRAM_H - 1 - f * SCALE + j) * SPECTROGRAM_W +
							 (size_t)(t - first)) * 3;
				px[0] = px[1] = px[2] = grey;
			}
		}
	}
	*out = img;
	img = NULL;
	rc = 0;
out:
	if (plan)
		fftw_destroy_plan(plan);
	fftw_free(in);
	fftw_free(spec);
	fftw_free(data);
	free(points);
	image_free(img);
	sf_close(sf);
	return rc;
}
