# SPDX-License-Identifier: MIT
# pg_lib.sh - a throwaway PostgreSQL cluster for a suite: initdb and pg_ctl
# as the postgres user (PostgreSQL refuses root), listening on a Unix
# socket only, in a directory of its own under /tmp (the suite's TMP may be
# 0700, out of postgres's reach), so it never meets the system's cluster or
# openqa_lib.sh's. Source after lib.sh; pg_start, then pg_newdb NAME prints a
# URL for `vigil serve --db`; pg_stop, or pg_stop_after $$ to have the
# cluster stopped once the suite's shell is gone, whatever its traps.
# PG_OPTS: more server options (-c name=value ...), e.g. to measure.
PG_BIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
PG_DIR=
pg_as() { # pg_as CMD...: CMD as postgres (as ourselves when we are not root)
	if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}
pg_start() { # pg_start: a new cluster; PG_SOCK, PG_PORT set
	[ -x "$PG_BIN/initdb" ] || { echo "pg_lib: no PostgreSQL server (scripts/install-deps)"; return 1; }
	PG_DIR=$(mktemp -d /tmp/vigil-pg.XXXXXX) || return 1
	chmod 755 "$PG_DIR"
	[ "$(id -u)" = 0 ] && chown postgres "$PG_DIR"
	PG_SOCK=$PG_DIR
	PG_PORT=${PG_PORT:-55432}
	pg_as "$PG_BIN/initdb" -D "$PG_DIR/data" -U postgres --auth=trust -E UTF8 --no-sync > "$PG_DIR/initdb.log" 2>&1 ||
		{ cat "$PG_DIR/initdb.log"; return 1; }
	pg_as "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/server.log" -w -t 120 \
		-o "-k $PG_SOCK -p $PG_PORT -c listen_addresses='' -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=300 ${PG_OPTS:-}" \
		start > /dev/null || { cat "$PG_DIR/server.log"; return 1; }
}
pg_newdb() { # pg_newdb NAME: a new empty database, its URL printed
	"$PG_BIN/psql" -q -h "$PG_SOCK" -p "$PG_PORT" -U postgres -d postgres -c "CREATE DATABASE $1" > /dev/null || return 1
	echo "postgresql:///$1?host=$PG_SOCK&port=$PG_PORT&user=postgres"
}
pg_sql() { # pg_sql DB SQL: psql's unaligned tuples
	"$PG_BIN/psql" -X -q -A -t -h "$PG_SOCK" -p "$PG_PORT" -U postgres -d "$1" -c "$2"
}
pg_stop_after() { # pg_stop_after PID: stop the cluster once process PID is gone (not our child: wait
	# skips it; a session of its own: a timeout that signals the suite's process group spares it)
	($(command -v setsid) sh -c 'while kill -0 "$1" 2>/dev/null; do sleep 1; done
		'"$(command -v runuser > /dev/null && [ "$(id -u)" = 0 ] && echo "runuser -u postgres --")"' "$2/pg_ctl" -D "$3/data" -m immediate -w stop > /dev/null 2>&1
		rm -rf "$3"' pg_stop_after "$1" "$PG_BIN" "$PG_DIR" > /dev/null 2>&1 &)
}
pg_stop() {
	[ -n "$PG_DIR" ] || return 0
	pg_as "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -m immediate -w stop > /dev/null 2>&1
	rm -rf "$PG_DIR"
	PG_DIR=
}
