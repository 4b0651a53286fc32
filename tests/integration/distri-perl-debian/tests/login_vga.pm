# SPDX-License-Identifier: MIT
# login_vga.pm - root logs in on tty1, the console "sut" shows at start.
use base 'basetest';
use strict;
use warnings;
use testapi;

sub run {
    die "the current console is '" . (current_console() // 'none') . "', not undef before any selection\n"
      if defined current_console();
    select_console 'sut';
    type_string "root\n";
    assert_screen 'debian-password', 30;
    type_password;
    send_key 'ret';
    # tty1 keeps the MOTD: root_console tells it from tty2 by that
    assert_screen 'debian-vga-prompt', 60;
}

1;
