# SPDX-License-Identifier: MIT
# breakit.pm - leaves GRUB on its command line, then waits for a tag
# that never shows: the module fails and Perl loads "lastgood".
use base 'basetest';
use strict;
use warnings;
use testapi;

sub run {
    send_key 'c';
    assert_screen 'grub-cmdline';
    assert_screen 'grub-menu-memtest', 2;
}

1;
