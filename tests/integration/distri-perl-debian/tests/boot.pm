# SPDX-License-Identifier: MIT
# boot.pm - the kernel boots until getty asks for a login on tty1.
use base 'basetest';
use strict;
use warnings;
use testapi;

sub run {
    assert_screen 'debian-login', 180;
}

sub test_flags { {fatal => 1} }

1;
