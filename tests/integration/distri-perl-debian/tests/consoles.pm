# SPDX-License-Identifier: MIT
# consoles.pm - console objects (console(...)->method through the
# backend's proxy), reset_consoles (a persistent console stays active),
# current_console, freeze_vm/resume_vm.
use base 'basetest';
use strict;
use warnings;
use testapi;

sub run {
    my $key = console('root-console')->console_key;
    die "console_key is '" . ($key // 'undef') . "'\n" unless ($key // '') eq 'ctrl-alt-f2';
    reset_consoles;
    select_console 'vga-console';
    select_console 'root-virtio-terminal';
    my $act = $testapi::distri->{activations};
    die "vga-console activated $act->{'vga-console'} times\n" unless $act->{'vga-console'} == 2;
    die "root-virtio-terminal activated again\n" unless $act->{'root-virtio-terminal'} == 1;
    die "current_console is " . current_console() . "\n" unless current_console() eq 'root-virtio-terminal';
    freeze_vm;
    resume_vm;
    assert_script_run 'true';
}

1;
