# SPDX-License-Identifier: MIT
# hello.pm - spike module 1: the common calls, one of each (milestone, so
# autotest takes the 'lastgood' snapshot after it).
use base 'basetest';
use strict;
use warnings;
use testapi;

sub run {
    select_console 'sut';
    send_key 'ret';
    type_string "echo hi\n";
    wait_serial 'hi';
    assert_screen 'x';
    check_screen 'missing', 0;
    mouse_set 10, 20;
    mouse_click;
    mouse_hide;
    wait_still_screen 1;
    send_key 'ret', wait_screen_change => 1;
    save_screenshot;
    record_info 'note', 'some text';
    select_console 'root-console';
    enter_cmd 'true';
    my $out = script_output 'echo out';
    die "script_output gave '$out'" unless $out eq 'out';
}

sub test_flags { return {milestone => 1} }
1;
