# GRUB's menu, then its command line.
use base 'basetest';
use strict;
use warnings;
use testapi;

sub run {
    assert_screen 'grub-menu', 60;
    send_key 'c';
    assert_screen 'grub-cmdline';
}

sub test_flags { return {fatal => 1}; }

1;
