# SPDX-License-Identifier: MIT
# consoles.pm - console objects (console(...)->method through the
# backend's proxy), reset_consoles (a persistent console stays active), and
# a console class vigil does not implement, refused with a message.
use base 'basetest';
use strict;
use warnings;
use testapi;

sub run {
    my $key = console('root-console')->console_key;
    die "console_key is '" . ($key // 'undef') . "'\n" unless ($key // '') eq 'ctrl-alt-f2';
    eval { console('root-console')->kill_ssh };
    die "kill_ssh did not die\n" unless $@;
    record_info('proxy refused', $@);
    reset_consoles;
    select_console 'vga-console';
    select_console 'root-sut-serial';
    my $act = $testapi::distri->{activations};
    die "vga-console activated $act->{'vga-console'} times\n" unless $act->{'vga-console'} == 2;
    die "root-sut-serial activated again\n" unless $act->{'root-sut-serial'} == 1;
    die "current_console is " . current_console() . "\n" unless current_console() eq 'root-sut-serial';
    freeze_vm;
    resume_vm;
    eval { select_console 'x3270' };
    die "selecting x3270 did not die\n" unless $@;
    record_info('refused', $@);
    die "the refused console is selected\n" unless current_console() eq 'root-sut-serial';
}

1;
