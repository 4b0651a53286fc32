# SPDX-License-Identifier: MIT
# x11.pm - X on tty7 (xinit with the image's twm and xterm), started from
# the serial terminal, then the "x11" console: the pointer into the
# xterm, a click, typing, iconify and restore with assert_and_click.
use base 'basetest';
use strict;
use warnings;
use testapi;

sub run {
    select_console 'root-sut-serial';
    assert_script_run 'setsid -f xinit -- :0 vt7 > /tmp/xinit.log 2>&1 < /dev/null';
    select_console 'x11';
    assert_screen 'xterm-ready', 120;
    mouse_set(200, 200);
    mouse_click;
    assert_screen 'xterm-focused', 30;
    type_string "echo vigil-xterm-\$((6*7))\n";
    assert_screen 'xterm-echo-42', 60;
    assert_and_click 'xterm-focused';
    assert_and_click 'xterm-icon', timeout => 30;
    assert_screen 'xterm-echo-42', 30;
    assert_screen 'xterm-focused', 30;
    mouse_hide;
}

sub post_fail_hook {
    select_console 'root-sut-serial';
    upload_logs('/tmp/xinit.log', failok => 1);
}

1;
