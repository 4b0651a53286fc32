# SPDX-License-Identifier: MIT
# root_console.pm - the tty-console "root-console": ctrl-alt-f2 and a login
# on tty2 the first time (the distribution's activate_console, which ends
# on a cleared screen), tty1 again through "vga-console" (its MOTD), and
# tty2 again without a second login.
use base 'basetest';
use strict;
use warnings;
use testapi;

sub run {
    select_console 'root-console';
    select_console 'vga-console';
    assert_screen 'debian-vga-prompt', 30;
    select_console 'root-console';
    assert_screen 'debian-vga-42', 30;
    my $logins = $testapi::distri->{activations}->{'root-console'};
    die "root-console was activated $logins times\n" unless $logins == 1;
    hold_key 'shift';
    release_key 'shift';
}

1;
