#!/bin/sh
# SPDX-License-Identifier: MIT
# test_layers.sh - the include graph keeps its shape: two wings over a
# shared base. Each module of src/ may include only the modules listed for
# it below (docs/design.md draws the same picture); cmd/ sits on top and
# may use any. A new module needs a line here, so its place is decided.
. tests/integration/lib.sh

allowed() { # allowed MODULE: the modules its files may include
	case $1 in
	util) echo "util" ;;
	image) echo "util image" ;;
	net) echo "util net" ;;
	vm) echo "util image vm" ;;
	video) echo "util image video" ;;
	runner) echo "util image vm video runner net" ;; # net: the developer WebSocket frames with net/ws.c
	server) echo "util image net server" ;; # image: re-judging, heat-maps and the needle editor use the matcher
	worker) echo "util net worker" ;;
	cmd) echo "util image net vm video runner server worker cmd" ;;
	*) echo "" ;;
	esac
}

for dir in src/*/; do
	m=$(basename "$dir")
	ok_mods=$(allowed "$m")
	check "module '$m' has its place in the layers" [ -n "$ok_mods" ]
	bad=""
	for f in "$dir"*.c "$dir"*.h; do
		[ -e "$f" ] || continue
		for inc in $(sed -n 's/^#include "\([a-z_]*\)\/.*/\1/p' "$f" | sort -u); do
			case " $ok_mods " in
			*" $inc "*) ;;
			*) bad="$bad $f->$inc" ;;
			esac
		done
	done
	check "module '$m' includes only: $ok_mods${bad:+ (not:$bad)}" [ -z "$bad" ]
done
check "main.c includes only cmd/ and util/" sh -c "! sed -n 's/^#include \"\([a-z_]*\)\/.*/\1/p' src/main.c | grep -qv '^\(cmd\|util\)\$'"
missing=$(grep -L '^#include "util/banned.h"' src/*/*.c src/main.c | tr '\n' ' ')
check "every .c of src/ includes util/banned.h${missing:+ (not: $missing)}" [ -z "$missing" ]
finish
