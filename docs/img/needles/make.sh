#!/bin/sh
# SPDX-License-Identifier: MIT
# make.sh - remakes the pictures of docs/needles.md from the example needles
# (each needle's PNG is the whole screenshot of a real run): `vigil needle
# show` draws the areas and cuts the crops; ffmpeg labels the canvas picture.
# Run from the repository root after `make`: sh docs/img/needles/make.sh
set -eu
VIGIL=${VIGIL:-build/vigil}
OUT=docs/img/needles
FONT=/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The canvas: GRUB's 720x400 text screen on the 1024x768 grey canvas.
# label X Y TEXT: one drawtext filter.
label() { printf "drawtext=fontfile=%s:fontsize=18:fontcolor=%s:x=%s:y=%s:text='%s'," "$FONT" "${4:-white}" "$1" "$2" "$3"; }
f="drawbox=x=0:y=0:w=720:h=400:color=yellow:t=2,"
f=$f$(label 736 150 "guest screen 720x400")
f=$f$(label 736 176 "(VGA text mode, 80x25")
f=$f$(label 736 202 "cells of 9x16 pixels)")
f=$f$(label 736 228 "copied as is to 0,0")
f=$f$(label 728 404 "720,400" yellow)
f=$f$(label 40 520 "grey (120,120,120) fills the rest of the canvas")
f=$f$(label 40 546 "XRES x YRES, 1024x768 here, is the space")
f=$f$(label 40 572 "of needle coordinates; x right, y down")
f=$f$(label 936 740 "1024,768" yellow)
ffmpeg -v error -y -i examples/grub/needles/grub-menu.png -vf "${f%,}" "$OUT/canvas-grub.png"

# grub-menu: two match areas, and their crops.
"$VIGIL" needle show grub-menu --needles examples/grub/needles --out "$tmp" > /dev/null
cp "$tmp/grub-menu-areas.png" "$tmp/grub-menu-area0-match.png" "$tmp/grub-menu-area1-match.png" "$OUT/"
# grub-echo: a match and an ocr area; the text screen's part is enough.
"$VIGIL" needle show grub-echo --needles examples/grub/needles --out "$tmp" > /dev/null
ffmpeg -v error -y -i "$tmp/grub-echo-areas.png" -vf crop=720:200:0:0 "$OUT/grub-echo-areas.png"
# A graphical mode fills the canvas; a click point (magenta cross).
"$VIGIL" needle show di-gtk-language --needles examples/debian-installer/needles --out "$tmp" > /dev/null
ffmpeg -v error -y -i "$tmp/di-gtk-language-areas.png" -vf crop=512:480:0:0 "$OUT/di-gtk-language-areas.png"
optipng -quiet -o2 "$OUT"/*.png
du -ch "$OUT"/*.png | tail -n 1
