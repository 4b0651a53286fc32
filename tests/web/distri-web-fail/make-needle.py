#!/usr/bin/python3
# SPDX-License-Identifier: MIT
# make-needle.py - the near-miss needle of the web-fail distribution: GRUB's
# menu needle with every pixel of its match area shifted by 7 grey levels
# (os-autoinst's similarity 0.9 + (40 - 49) / 380, about 88 % once blurred) and an
# exclude area. Plain Python (zlib): reads and writes 8-bit RGB PNGs.
# usage: make-needle.py SRC.png DEST_DIR   (writes DEST_DIR/web-nearmiss.{png,json})
#        make-needle.py --fixed NEEDLES_DIR  (the fix a review saves: NEEDLES_DIR's
#        grub-menu needle under the near miss's tag, as web-nearmiss-fixed.{png,json})
import json
import os
import shutil
import struct
import sys
import zlib

AREA = (18, 62, 400, 145)      # x, y, w, h: GRUB's menu entries
EXCLUDE = (30, 88, 200, 16)    # a row of it left out of the comparison
SHIFT = 7


def read_png(path):
    data = open(path, 'rb').read()
    assert data[:8] == b'\x89PNG\r\n\x1a\n', 'not a PNG'
    pos, idat, w = 8, b'', 0
    while pos < len(data):
        n, kind = struct.unpack('>I4s', data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b'IHDR':
            w, h, depth, ctype, _, _, interlace = struct.unpack('>IIBBBBB', body)
            assert depth == 8 and ctype == 2 and interlace == 0, 'only 8-bit RGB, not interlaced'
        elif kind == b'IDAT':
            idat += body
        pos += 12 + n
    raw, stride = zlib.decompress(idat), w * 3
    rows, prev = [], bytearray(stride)
    for y in range(h):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - 3] if i >= 3 else 0
            b = prev[i]
            c = prev[i - 3] if i >= 3 else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(line)
        prev = line
    return w, h, rows


def write_png(path, w, h, rows):
    def chunk(kind, body):
        return struct.pack('>I', len(body)) + kind + body + struct.pack('>I', zlib.crc32(kind + body))
    raw = b''.join(b'\0' + bytes(r) for r in rows)
    with open(path, 'wb') as f:
        f.write(b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', w, h, 8, 2, 0, 0, 0))
                + chunk(b'IDAT', zlib.compress(raw, 9)) + chunk(b'IEND', b''))


def fixed(nd):
    nj = json.load(open(os.path.join(nd, 'grub-menu.json')))
    nj['tags'] = ['web-nearmiss']
    with open(os.path.join(nd, 'web-nearmiss-fixed.json'), 'w') as f:
        json.dump(nj, f)
    shutil.copy(os.path.join(nd, 'grub-menu.png'), os.path.join(nd, 'web-nearmiss-fixed.png'))


def main():
    if sys.argv[1] == '--fixed':
        fixed(sys.argv[2])
        return
    src, dest = sys.argv[1], sys.argv[2]
    w, h, rows = read_png(src)
    x0, y0, aw, ah = AREA
    for y in range(y0, y0 + ah):
        for i in range(x0 * 3, (x0 + aw) * 3):
            v = rows[y][i]
            rows[y][i] = v + SHIFT if v + SHIFT <= 255 else v - SHIFT
    write_png(os.path.join(dest, 'web-nearmiss.png'), w, h, rows)
    area = [{'xpos': x0, 'ypos': y0, 'width': aw, 'height': ah, 'type': 'match'},
            {'xpos': EXCLUDE[0], 'ypos': EXCLUDE[1], 'width': EXCLUDE[2], 'height': EXCLUDE[3], 'type': 'exclude'}]
    with open(os.path.join(dest, 'web-nearmiss.json'), 'w') as f:
        json.dump({'tags': ['web-nearmiss'], 'properties': [], 'area': area}, f, indent=3)


main()
