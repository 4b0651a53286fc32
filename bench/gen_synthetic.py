#!/usr/bin/python3
# SPDX-License-Identifier: MIT
# gen_synthetic.py - writes synthetic 1024x768 needle sets for the needle search
# benchmark, laid out as opencv_match.py wants them: a needles dir whose PNGs
# are also the screens. Each screen is a shared textured desktop plus its own
# windows, shifted by a few pixels; each needle has 1-4 match areas (some on
# shared content, some on its own windows) and some have exclude areas.
# usage: gen_synthetic.py OUTDIR N [SEED]
import json, os, sys
import numpy as np
import cv2

W, H = 1024, 768

def textured(rng, h, w, base):
    img = np.empty((h, w, 3), np.uint8)
    img[:] = base
    noise = rng.integers(-12, 13, (h, w, 1), dtype=np.int16)
    img = np.clip(img.astype(np.int16) + noise, 0, 255).astype(np.uint8)
    # "text": short dark/light strokes
    for _ in range(h * w // 400):
        y, x = int(rng.integers(0, h - 2)), int(rng.integers(0, w - 8))
        img[y:y + 2, x:x + int(rng.integers(2, 8))] = int(rng.integers(0, 256))
    return img

def main():
    out, n = sys.argv[1], int(sys.argv[2])
    rng = np.random.default_rng(int(sys.argv[3]) if len(sys.argv) > 3 else n)
    os.makedirs(out, exist_ok=True)
    desk = textured(rng, H + 40, W + 40, (60, 90, 120))
    for _ in range(40):  # shared widgets
        x, y = int(rng.integers(0, W - 100)), int(rng.integers(0, H - 60))
        w, h = int(rng.integers(30, 200)), int(rng.integers(15, 80))
        desk[y:y + h, x:x + w] = textured(rng, h, w, tuple(int(c) for c in rng.integers(0, 256, 3)))
    for i in range(n):
        dx, dy = int(rng.integers(0, 12)), int(rng.integers(0, 12))
        scr = desk[dy:dy + H, dx:dx + W].copy()
        own = []
        for _ in range(3):  # this screen's windows
            w, h = int(rng.integers(80, 300)), int(rng.integers(40, 160))
            x, y = int(rng.integers(0, W - w)), int(rng.integers(0, H - h))
            scr[y:y + h, x:x + w] = textured(rng, h, w, tuple(int(c) for c in rng.integers(0, 256, 3)))
            own.append((x, y, w, h))
        areas = []
        for k in range(int(rng.integers(1, 5))):
            if k % 2 == 0 and i % 4 != 3:  # inside one of its own windows (every 4th needle: shared only)
                x, y, ww, hh = own[k // 2 % len(own)]
                w, h = min(ww, int(rng.integers(20, 120))), min(hh, int(rng.integers(10, 50)))
                ax, ay = x + int(rng.integers(0, ww - w + 1)), y + int(rng.integers(0, hh - h + 1))
            else:  # shared desktop content
                w, h = int(rng.integers(20, 150)), int(rng.integers(10, 60))
                ax, ay = int(rng.integers(0, W - w)), int(rng.integers(0, H - h))
            a = {'xpos': ax, 'ypos': ay, 'width': w, 'height': h, 'type': 'match'}
            if rng.random() < 0.2:
                a['margin'] = int(rng.integers(10, 40))
            if rng.random() < 0.2:
                a['match'] = 90
            areas.append(a)
        if i % 3 == 1:  # exclude part of the first area
            a = areas[0]
            areas.append({'xpos': a['xpos'] + 2, 'ypos': a['ypos'] + 2, 'width': max(2, a['width'] // 3),
                          'height': max(2, a['height'] // 3), 'type': 'exclude'})
        name = f'syn{n:02d}-{i:02d}'
        cv2.imwrite(f'{out}/{name}.png', scr)
        with open(f'{out}/{name}.json', 'w') as f:
            json.dump({'tags': [name, 'syn'], 'properties': [], 'area': areas}, f)

main()
