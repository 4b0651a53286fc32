# SPDX-License-Identifier: MIT
# x11.pm - X on tty7 (xinit with the image's twm and xterm), started from
# the virtio terminal, then the "x11" console: the pointer into the
# xterm, a click, typing, iconify and restore with assert_and_click, a
# second xterm through x11_start_program; post_fail_hook uploads nothing
# (no network on this image) but shows the X log.
use base 'basetest';
use strict;
use warnings;
use testapi;

sub run {
    select_console 'root-virtio-terminal';
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
    # the distribution's x11_start_program: a second xterm, its needle tagged
    # 'xterm' (target_match defaults to the program's name)
    x11_start_program('xterm');
    mouse_hide;
}

sub post_fail_hook {
    select_console 'root-virtio-terminal';
    script_run 'cat /tmp/xinit.log';
}

1;
