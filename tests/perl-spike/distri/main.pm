# SPDX-License-Identifier: MIT
# main.pm - the spike's test distribution schedule, openQA's layout: a
# distribution with consoles, then three modules (ok, fail, ok).
use strict;
use warnings;
use testapi;
use autotest;
use spikedistri;

testapi::set_distribution(spikedistri->new);
autotest::loadtest('tests/hello.pm');
autotest::loadtest('tests/boom.pm');
autotest::loadtest('tests/after.pm');
1;
