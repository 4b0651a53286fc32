# SPDX-License-Identifier: MIT
# main.pm - a Perl distribution on the installed Debian image (examples/debian's)
# that isotovideo (os-autoinst 4.6) and `vigil run` both run from one vars.json
# (test_perl_debian.sh compares them): consoles declared as real distributions
# declare them (lib/vigildistri.pm), a VT switch, the virtio terminal,
# script_output and validate_script_output in Perl and in Python, module hooks,
# the command server over QEMU's user network (data_url, upload_asset,
# parse_junit_log), X11 with the mouse and x11_start_program, power off. With VIGIL_EXTRA=1 (vigil
# only) vigil_extra.pm checks what only vigil has.
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
autotest::loadtest('tests/python_shell.py');
autotest::loadtest('tests/consoles.pm');
autotest::loadtest('tests/net.pm');
autotest::loadtest('tests/vigil_extra.pm') if get_var('VIGIL_EXTRA');
autotest::loadtest('tests/x11.pm');
autotest::loadtest('tests/shutdown.pm');
1;
