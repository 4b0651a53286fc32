# SPDX-License-Identifier: MIT
# after.pm - only passes when the VM was rolled back to the menu.
use base 'basetest';
use strict;
use warnings;
use testapi;

sub run {
    assert_screen 'grub-menu', 20;
}

1;
