#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# gen_wavs.py DIR - writes the WAV files test_sound.sh draws with vigil's
# snd2png and os-autoinst's: tones, chords, noise, silences, several rates,
# widths and channel counts, a recording longer than the image is wide.
import math, os, random, struct, sys, wave

def write(path, rate, width, channels, frames):
    """frames: a list of tuples of floats in -1..1, one per channel."""
    w = wave.open(path, 'wb')
    w.setnchannels(channels)
    w.setsampwidth(width)
    w.setframerate(rate)
    out = bytearray()
    for fr in frames:
        for v in fr:
            v = max(-1.0, min(1.0, v))
            if width == 1:
                out += struct.pack('<B', int(round(v * 127)) + 128)
            elif width == 2:
                out += struct.pack('<h', int(round(v * 32767)))
            elif width == 3:
                out += struct.pack('<i', int(round(v * 8388607)))[:3]
            else:
                out += struct.pack('<i', int(round(v * 2147483647)))
    w.writeframes(bytes(out))
    w.close()

def tones(rate, parts, amp=0.6):
    """parts: (seconds, [freqs]) each; no freqs is silence."""
    out, t = [], 0
    for secs, freqs in parts:
        for _ in range(int(secs * rate)):
            x = sum(math.sin(2 * math.pi * f * t / rate) for f in freqs) / max(1, len(freqs))
            out.append(amp * x)
            t += 1
    return out

d = sys.argv[1]
os.makedirs(d, exist_ok=True)
random.seed(15)
# QEMU's wavcapture format: 44.1 kHz, 16 bit, mono
write(f'{d}/beeps.wav', 44100, 2, 1, [(v,) for v in tones(44100, [(0.3, [440]), (0.3, [880]), (0.2, [1320])])])
# leading and trailing silence, a chord
write(f'{d}/chord.wav', 44100, 2, 1, [(v,) for v in tones(44100, [(0.25, []), (0.5, [523, 659, 784]), (0.3, [])])])
# stereo at 48 kHz, each channel its own tone
l = tones(48000, [(0.6, [300])])
r = tones(48000, [(0.6, [2500])], 0.3)
write(f'{d}/stereo48k.wav', 48000, 2, 2, list(zip(l, r)))
# 8 bit at 22.05 kHz, a rising sweep
sweep = [0.7 * math.sin(2 * math.pi * (200 + 1400 * i / 22050) * i / 22050) for i in range(int(0.9 * 22050))]
write(f'{d}/sweep8bit.wav', 22050, 1, 1, [(v,) for v in sweep])
# 24 bit noise over a tone at 16 kHz
noise = [0.3 * random.uniform(-1, 1) + 0.4 * math.sin(2 * math.pi * 1000 * i / 16000) for i in range(16000)]
write(f'{d}/noise24.wav', 16000, 3, 1, [(v,) for v in noise])
# longer than 1024 columns (10.24 s), silence first: os-autoinst 4.6's cut
write(f'{d}/long.wav', 8000, 2, 1, [(v,) for v in tones(8000, [(0.5, []), (6, [600]), (6, [1800])])])
# nothing but silence, and a recording too short for one column
write(f'{d}/silence.wav', 44100, 2, 1, [(0.0,)] * 22050)
write(f'{d}/short.wav', 44100, 2, 1, [(v,) for v in tones(44100, [(0.012, [440])])])
