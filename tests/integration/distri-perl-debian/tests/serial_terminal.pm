# SPDX-License-Identifier: MIT
# serial_terminal.pm - script_run, assert_script_run, script_output and
# validate_script_output on the virtio console (virtio-terminal,
# VIRTIO_CONSOLE=1: the guest's hvc0), logged in by the distribution on
# first use; the module's pre_run_hook and post_run_hook.
use base 'basetest';
use strict;
use warnings;
use testapi;

sub pre_run_hook {
    my ($self) = @_;
    $self->{hooked} = 'pre';
}

sub run {
    my ($self) = @_;
    die "pre_run_hook did not run\n" unless ($self->{hooked} // '') eq 'pre';
    my $console = 'root-virtio-terminal';
    select_console $console;
    die "$console is no serial terminal\n" unless testapi::is_serial_terminal();
    assert_script_run 'test $(tty) = /dev/hvc0';
    my $rc = script_run 'ls /nonexistent';
    die "ls of a missing file returned " . ($rc // 'undef') . "\n" unless $rc;
    my $out = script_output 'echo vigil-$((6*7))';
    die "script_output returned '$out'\n" unless $out eq 'vigil-42';
    validate_script_output 'uname -s', qr/^Linux$/;
    validate_script_output 'hostname', sub { m/^vigil-debian$/ };
    record_info($console, "tty /dev/hvc0, script_output '$out'");
    select_console 'root-console';
    die "root-console is a serial terminal\n" if testapi::is_serial_terminal();
}

sub post_run_hook {
    my ($self) = @_;
    record_info('post_run_hook', "after run, pre_run_hook said $self->{hooked}");
}

1;
