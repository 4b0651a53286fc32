#!/bin/sh
# SPDX-License-Identifier: MIT
# test_layers.sh - the include graph keeps its shape: two wings over a
# shared base. Each module of src/ may include only the modules listed for
# it below (docs/design.md draws the same picture); cmd/ sits on top and
# may use any. A new module needs a line here, so its place is decided.
# Inside server/, rooms are layered the same way (server_room_allowed):
# handlers (api/) and pages over the domain (store/) over the database
# (db/); nothing in store/ or db/ includes http/, api/ or pages/. No folder
# of src/ holds more than 30 .c files directly.
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

# server_room_allowed ROOM: the rooms of server/ its files may include
# ("top" is server.c and server.h, the listener and router over them all).
server_room_allowed() {
	case $1 in
	db) echo "db" ;;
	store) echo "db store" ;; # the domain: the SQL, jobs' life, openQA's JSON
	sched) echo "db store sched" ;;
	events) echo "db events" ;;
	http) echo "store http" ;; # store: api.h's auth levels and jbuild's failures
	oqcompat) echo "store http oqcompat" ;;
	pages) echo "db store http pages" ;;
	api) echo "db store sched http oqcompat api" ;;
	top) echo "db store sched events http oqcompat pages api" ;;
	*) echo "" ;;
	esac
}

for dir in src/*/; do
	m=$(basename "$dir")
	ok_mods=$(allowed "$m")
	check "module '$m' has its place in the layers" [ -n "$ok_mods" ]
	bad=""
	for f in $(find "$dir" -name '*.[ch]'); do
		for inc in $(sed -n 's/^#include "\([a-z_]*\)\/.*/\1/p' "$f" | sort -u); do
			case " $ok_mods " in
			*" $inc "*) ;;
			*) bad="$bad $f->$inc" ;;
			esac
		done
	done
	check "module '$m' includes only: $ok_mods${bad:+ (not:$bad)}" [ -z "$bad" ]
done
for dir in src/server/*/ src/server/; do
	r=$(basename "$dir")
	[ "$r" = server ] && r=top
	ok_rooms=$(server_room_allowed "$r")
	check "server room '$r' has its place in the layers" [ -n "$ok_rooms" ]
	bad=""
	for f in "$dir"*.c "$dir"*.h; do
		[ -e "$f" ] || continue
		for inc in $(sed -n 's/^#include "server\/\([a-z_]*\)\/.*/\1/p' "$f" | sort -u); do
			case " $ok_rooms " in
			*" $inc "*) ;;
			*) bad="$bad $f->$inc" ;;
			esac
		done
		# a room's files are included by their room's path, never server/NAME.h
		if [ "$r" != top ] && grep -q '^#include "server/[a-z_]*\.h"' "$f"; then
			bad="$bad $f->top"
		fi
	done
	check "server room '$r' includes only: $ok_rooms${bad:+ (not:$bad)}" [ -z "$bad" ]
done
crowded=""
for dir in $(find src -type d); do
	n=$(find "$dir" -maxdepth 1 -name '*.c' | wc -l)
	[ "$n" -gt 30 ] && crowded="$crowded $dir($n)"
done
check "no folder of src/ holds more than 30 .c files${crowded:+ (not:$crowded)}" [ -z "$crowded" ]
check "main.c includes only cmd/ and util/" sh -c "! sed -n 's/^#include \"\([a-z_]*\)\/.*/\1/p' src/main.c | grep -qv '^\(cmd\|util\)\$'"
missing=$(find src -name '*.c' -exec grep -L '^#include "util/banned.h"' {} + | tr '\n' ' ')
check "every .c of src/ includes util/banned.h${missing:+ (not: $missing)}" [ -z "$missing" ]

# The runner's rooms (docs/design.md, "The runner's rooms"), lowest first:
# a file of a room may include its own room's headers and those of the
# rooms below it, never one above, nor runner.h/runner.c's room (the top,
# src/runner/ itself), nor another room's internal header (*_int.h). What
# a lower room must tell a higher one goes through core/job.h's hooks.
# The two front ends, lua/ and perl/, stand side by side on one level
# ("lua|perl"): neither includes the other; what both need is a primitive.
rooms="core prim lua|perl srv"
rank() { # rank ROOM: its level in $rooms (1 lowest), 0 for none
	i=0
	for x in $rooms; do
		i=$((i + 1))
		case "|$x|" in *"|$1|"*) echo $i; return ;; esac
	done
	echo 0
}
bad=""
for f in src/runner/*.[ch]; do
	case $(basename "$f") in runner.c | runner.h) ;; *) bad="$bad $f(not in a room)" ;; esac
done
for d in src/runner/*/; do
	room=$(basename "$d")
	me=$(rank "$room")
	[ "$me" -gt 0 ] || { bad="$bad $d(no place in the rooms)"; continue; }
	for f in $(find "$d" -name '*.[ch]' | sort); do
		for inc in $(sed -n 's/^#include "\(runner\/[a-z_/]*\.h\)".*/\1/p' "$f"); do
			to=$(echo "$inc" | cut -d/ -f2)
			case $inc in runner/*/*) ;; *) bad="$bad $f->$inc"; continue ;; esac
			[ "$(rank "$to")" -le "$me" ] && [ "$(rank "$to")" -gt 0 ] || { bad="$bad $f->$inc"; continue; }
			# a room beside this one (the same level) is as far as one above
			[ "$(rank "$to")" -lt "$me" ] || [ "$to" = "$room" ] || { bad="$bad $f->$inc"; continue; }
			case $inc in *_int.h) [ "$to" = "$room" ] || bad="$bad $f->$inc" ;; esac
		done
	done
done
check "the runner's rooms include only downwards, lua/ and perl/ not each other ($rooms)${bad:+ (not:$bad)}" [ -z "$bad" ]
# Nothing outside src/runner/ sees the core's internals but the tests.
out=$(grep -rl '^#include "runner/\(core/job\|perl/perl_int\)\.h"' src | grep -v '^src/runner/' | tr '\n' ' ')
check "only src/runner/ includes its internal headers${out:+ (not: $out)}" [ -z "$out" ]
finish
