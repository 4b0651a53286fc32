# SPDX-License-Identifier: MIT
# main.pm - test_perl.sh's milestone distribution: os-autoinst's own
# snapshot logic (lastgood after a milestone, loaded after a failure)
# driving vigil's savevm/loadvm, as distri-milestone does for Lua; the
# last module is Python.
use strict;
use warnings;
use testapi;
use autotest;

autotest::loadtest('tests/boot.pm');
autotest::loadtest('tests/breakit.pm');
autotest::loadtest('tests/after.py');
1;
