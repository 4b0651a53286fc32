# SPDX-License-Identifier: MIT
# boot.pm - GRUB's menu; a milestone: Perl asks for the "lastgood" snapshot.
use base 'basetest';
use strict;
use warnings;
use testapi;

sub run {
    assert_screen 'grub-menu', 90;
}

sub test_flags { return {milestone => 1} }

1;
