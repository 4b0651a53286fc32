# SPDX-License-Identifier: MIT
# main.pm - test_perl.sh's Perl distribution on the installed Debian image
# (examples/debian's): consoles declared as real distributions declare
# them (lib/vigildistri.pm), a VT switch, the serial and virtio terminals,
# X11 with the mouse, an unsupported console class refused, power off.
use strict;
use warnings;
use testapi;
use autotest;
use vigildistri;

testapi::set_distribution(vigildistri->new);

autotest::loadtest('tests/boot.pm');
autotest::loadtest('tests/login_vga.pm');
autotest::loadtest('tests/root_console.pm');
autotest::loadtest('tests/serial_terminal.pm');
autotest::loadtest('tests/consoles.pm');
autotest::loadtest('tests/x11.pm');
autotest::loadtest('tests/shutdown.pm');
1;
