#!/bin/sh
# SPDX-License-Identifier: MIT
# test_web.sh - the web UI in a real browser: tests/web/run.py drives
# Debian's headless Chromium against `vigil serve` holding real example
# results (tests/web/fixture.sh). Screenshots of every page are left under
# $VIGIL_TEST_TMP/web-*/shots.
# run-all: long 150
cd "$(dirname "$0")/../.." || exit 1
if [ ! -x /usr/bin/chromedriver ]; then
	echo "no /usr/bin/chromedriver (apt-get install chromium chromium-driver python3-selenium)"
	echo "0 passed, 1 failed"
	exit 1
fi
exec /usr/bin/python3 tests/web/run.py "$@"
