# SPDX-License-Identifier: MIT
# events_lib.sh - the real sinks of test_events.sh and bench/events.sh, each
# on its own free port with its files under TMP: rabbitmq-server (own node
# name, epmd, directories), ngircd (penalties off, an optional server
# password), the python3 webhook receiver and IRC observer (events_sinks.py).
# Source after lib.sh and server_lib.sh (TMP, PY, VIGIL); stop_all stops
# what it started and the server_lib.sh processes.
EVENTS_DIR=${EVENTS_DIR:-$(dirname "$0")}
SINKS="$PY $EVENTS_DIR/events_sinks.py"
AMQPSINK=$(dirname "$VIGIL")/fixtures/amqpsink
[ -x "$AMQPSINK" ] || AMQPSINK=$(pwd)/build/fixtures/amqpsink
freeport() { $PY -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
IRCPORT=$(freeport) HOOKPORT=$(freeport) AMQPPORT=$(freeport) DISTPORT=$(freeport) EPMDPORT=$(freeport)
for t in ngircd epmd; do command -v $t > /dev/null || PATH=$PATH:/usr/sbin:/usr/lib/erlang/bin; done
RMQ=$TMP/rabbitmq
mkdir -p "$RMQ/log"
# ngircd started as root runs as nobody (it refuses uid 0), and re-reads its
# configuration as nobody on SIGHUP: its files live where nobody reaches
# them (the suites' tmp dir may be 0700, as mktemp makes it under make check).
IRCDIR=$(mktemp -d /tmp/vigil-ngircd.XXXXXX)
chmod 755 "$IRCDIR"
EPMD_PID= RMQ_PID= IRC_PID= HOOK_PID= OBS_PID=
stop_all() {
	[ -n "$RMQ_PID" ] && kill "$RMQ_PID" 2>/dev/null
	[ -f "$RMQ/pid" ] && kill "$(cat "$RMQ/pid" 2>/dev/null)" 2>/dev/null
	for p in $EPMD_PID $IRC_PID $HOOK_PID $OBS_PID; do kill "$p" 2>/dev/null; done
	stop_pids
	rm -rf "$IRCDIR"
}
trap stop_all EXIT INT TERM

rabbit_init() { # the broker's files and its own epmd (start it first: it takes the longest)
	printf '[].\n' > "$RMQ/enabled_plugins"
	printf 'loopback_users = none\nlisteners.tcp.default = %s\n' "$AMQPPORT" > "$RMQ/rabbitmq.conf"
	: > "$RMQ/env.conf"
	epmd -port "$EPMDPORT" > "$RMQ/epmd.log" 2>&1 &
	EPMD_PID=$!
}
start_rabbit() {
	env HOME="$RMQ" RABBITMQ_NODENAME="vigiltest$AMQPPORT@localhost" RABBITMQ_NODE_IP_ADDRESS=127.0.0.1 \
		RABBITMQ_NODE_PORT="$AMQPPORT" RABBITMQ_DIST_PORT="$DISTPORT" ERL_EPMD_PORT="$EPMDPORT" \
		RABBITMQ_MNESIA_BASE="$RMQ/mnesia" RABBITMQ_LOG_BASE="$RMQ/log" RABBITMQ_LOGS="$RMQ/log/rabbit.log" \
		RABBITMQ_CONFIG_FILE="$RMQ/rabbitmq" RABBITMQ_ENABLED_PLUGINS_FILE="$RMQ/enabled_plugins" \
		RABBITMQ_PID_FILE="$RMQ/pid" RABBITMQ_CONF_ENV_FILE="$RMQ/env.conf" \
		RABBITMQ_ADVANCED_CONFIG_FILE="$RMQ/advanced.config" \
		/usr/lib/rabbitmq/bin/rabbitmq-server >> "$RMQ/out.log" 2>&1 &
	RMQ_PID=$!
}
stop_rabbit() { # the Erlang VM of the broker, then wait for it to be gone
	p=$(cat "$RMQ/pid" 2>/dev/null)
	[ -n "$p" ] && kill "$p" 2>/dev/null
	kill "$RMQ_PID" 2>/dev/null
	wait "$RMQ_PID" 2>/dev/null
	i=0
	while [ -n "$p" ] && kill -0 "$p" 2>/dev/null && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
	rm -f "$RMQ/pid"
	RMQ_PID=
}
wait_rabbit() { # until the exchange and queue are declared: 3 minutes at most
	i=0
	until "$AMQPSINK" setup "$AMQPPORT" pubsub vigil-test 2> /dev/null || [ $i -ge 900 ]; do sleep 0.2; i=$((i + 1)); done
	[ $i -lt 900 ]
}
# ngircd with penalties off (the notifier may send many lines at once).
ircconf() { # ircconf [PASSWORD]
	{
		printf '[Global]\nName = irc.vigil.test\nInfo = vigil test\nListen = 127.0.0.1\nPorts = %s\n' "$IRCPORT"
		printf 'PidFile = %s/ngircd.pid\nMotdPhrase = test\n' "$IRCDIR"
		[ "$(id -u)" = 0 ] && printf 'ServerUID = 0\nServerGID = 0\n'
		[ -n "${1:-}" ] && printf 'Password = %s\n' "$1"
		printf '[Limits]\nMaxPenaltyTime = 0\nPingTimeout = 300\n[Options]\nPAM = no\nDNS = no\nIdent = no\n'
	} > "$IRCDIR/ngircd.conf"
	chmod 644 "$IRCDIR/ngircd.conf"
}
start_irc() { ngircd -n -f "$IRCDIR/ngircd.conf" >> "$TMP/ngircd.log" 2>&1 & IRC_PID=$!; }
wait_port() { # wait_port PORT: until something listens there (2 minutes at most)
	i=0
	until $PY -c "import socket,sys; socket.create_connection(('127.0.0.1', $1), 1)" 2> /dev/null || [ $i -ge 600 ]; do
		sleep 0.2; i=$((i + 1)); done
	[ $i -lt 600 ]
}
