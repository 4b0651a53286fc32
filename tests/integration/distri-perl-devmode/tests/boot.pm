# GRUB's menu, a key, its command line: three commands to step through.
use base 'basetest';
use strict;
use warnings;
use testapi;

sub run {
    assert_screen 'grub-menu', 90;
    send_key 'c';
    assert_screen 'grub-cmdline';
}

1;
