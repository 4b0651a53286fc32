# SPDX-License-Identifier: MIT
# main.pm - test_perl.sh's second Perl distribution: examples/shell's
# kernel and busybox initramfs, for the serial commands and VM control
# (issue 15).
use strict;
use warnings;
use testapi;
use autotest;

autotest::loadtest('tests/serial.pm');
autotest::loadtest('tests/vmctl.pm');
1;
