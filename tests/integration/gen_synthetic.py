#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# gen_synthetic.py - writes synthetic screens and needles for the matcher
# comparison: random blocks and text-like noise, needles cut from screens,
# screens with the needle content moved, changed or partly excluded.
# usage: gen_synthetic.py OUTDIR [SEED]
import json, os, random, struct, sys, zlib

def png(path, w, h, px):
    raw = b''.join(b'\0' + bytes(px[y * w * 3:(y + 1) * w * 3]) for y in range(h))
    def chunk(t, d):
        return struct.pack('>I', len(d)) + t + d + struct.pack('>I', zlib.crc32(t + d) & 0xffffffff)
    with open(path, 'wb') as f:
        f.write(b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', w, h, 8, 2, 0, 0, 0))
                + chunk(b'IDAT', zlib.compress(raw, 1)) + chunk(b'IEND', b''))

def screen(rng, w, h):
    px = bytearray([rng.randrange(40, 60)] * (w * h * 3))
    for _ in range(60):
        x, y = rng.randrange(w - 20), rng.randrange(h - 10)
        bw, bh = rng.randrange(5, 200), rng.randrange(3, 60)
        c = (rng.randrange(256), rng.randrange(256), rng.randrange(256))
        for j in range(y, min(h, y + bh)):
            for i in range(x, min(w, x + bw)):
                px[(j * w + i) * 3:(j * w + i) * 3 + 3] = bytes(c)
    for _ in range(3000):  # "text"
        x, y = rng.randrange(w), rng.randrange(h)
        v = rng.randrange(256)
        px[(y * w + x) * 3:(y * w + x) * 3 + 3] = bytes((v, v, v))
    return px

def main():
    out = sys.argv[1]
    rng = random.Random(int(sys.argv[2]) if len(sys.argv) > 2 else 1)
    w, h = 320, 240
    os.makedirs(out + '/needles', exist_ok=True)
    os.makedirs(out + '/screens', exist_ok=True)
    base = screen(rng, w, h)
    png(out + '/screens/base.png', w, h, base)
    for k in range(8):
        aw, ah = rng.randrange(8, 80), rng.randrange(8, 50)
        ax, ay = rng.randrange(w - aw), rng.randrange(h - ah)
        areas = [{'xpos': ax, 'ypos': ay, 'width': aw, 'height': ah, 'type': 'match'}]
        if k % 3 == 1:
            areas.append({'xpos': ax + 2, 'ypos': ay + 2, 'width': aw // 2, 'height': ah // 2, 'type': 'exclude'})
        if k % 4 == 2:
            areas[0]['match'] = 90
            areas[0]['margin'] = 20
        with open('%s/needles/n%d.json' % (out, k), 'w') as f:
            json.dump({'tags': ['t%d' % k], 'properties': [], 'area': areas}, f)
        png('%s/needles/n%d.png' % (out, k), w, h, base)
    # moved content, noise, other screens
    for s in range(6):
        px = bytearray(base)
        dx, dy = rng.randrange(-30, 31), rng.randrange(-30, 31)
        moved = bytearray(px)
        for y in range(h):
            for x in range(w):
                sx, sy = x - dx, y - dy
                if 0 <= sx < w and 0 <= sy < h:
                    moved[(y * w + x) * 3:(y * w + x) * 3 + 3] = px[(sy * w + sx) * 3:(sy * w + sx) * 3 + 3]
        for _ in range(rng.randrange(0, 2000)):
            i = rng.randrange(w * h * 3)
            moved[i] = max(0, min(255, moved[i] + rng.randrange(-20, 21)))
        png('%s/screens/moved%d.png' % (out, s), w, h, moved)
    png(out + '/screens/other.png', w, h, screen(rng, w, h))
    png(out + '/screens/flat.png', w, h, bytearray([50] * (w * h * 3)))

main()
