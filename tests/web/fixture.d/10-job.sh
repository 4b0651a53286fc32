# SPDX-License-Identifier: MIT
# 10-job.sh - the job page suite's jobs (sourced by fixture.sh before the
# worker starts): web-fail, GRUB with a near-miss check that fails and
# needs review, holding markup in a setting and in a comment; and a child
# chained to it in the same scenario (skipped when its parent fails: a
# dependency and a "next" result without another VM run).
mkdir -p "$DATA/tests/web-fail/needles"
cp -r "$ROOT/tests/web/distri-web-fail/main.lua" "$ROOT/tests/web/distri-web-fail/vars.json" \
	"$ROOT/tests/web/distri-web-fail/tests" "$DATA/tests/web-fail/"
cp "$ROOT/examples/grub/needles/grub-menu.json" "$ROOT/examples/grub/needles/grub-menu.png" "$DATA/tests/web-fail/needles/"
$PY "$ROOT/tests/web/distri-web-fail/make-needle.py" "$ROOT/examples/grub/needles/grub-menu.png" \
	"$DATA/tests/web-fail/needles"
WEBFAIL=$(cli -X POST jobs TEST=web-fail DISTRI=web-fail VERSION=1 FLAVOR=cd ARCH=x86_64 MACHINE=64bit BUILD=1 \
	'FOO=<script>alert(1)</script>' | $PY -c 'import json,sys; print(json.load(sys.stdin)["id"])')
cli -X POST "jobs/$WEBFAIL/comments" \
	'text="><img src=x onerror=alert(1)> <script>alert(2)</script> see bsc#1234 and https://example.com/x' > /dev/null
cli -X POST jobs TEST=web-fail DISTRI=web-fail VERSION=1 FLAVOR=cd ARCH=x86_64 MACHINE=64bit BUILD=1 \
	"_START_AFTER_JOBS=$WEBFAIL" > /dev/null
