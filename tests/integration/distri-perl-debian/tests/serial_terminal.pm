# SPDX-License-Identifier: MIT
# serial_terminal.pm - script_run, assert_script_run and script_output on
# the serial port's terminal (class serial-terminal) and the virtio console
# (virtio-terminal, VIRTIO_CONSOLE=1: the guest's hvc0), each logged in by the
# distribution on first use.
use base 'basetest';
use strict;
use warnings;
use testapi;

sub run {
    for my $console ('root-sut-serial', 'root-virtio-terminal') {
        select_console $console;
        die "$console is no serial terminal\n" unless testapi::is_serial_terminal();
        my $dev = $console eq 'root-virtio-terminal' ? '/dev/hvc0' : '/dev/ttyS0';
        assert_script_run "test \$(tty) = $dev";
        my $rc = script_run 'ls /nonexistent';
        die "ls of a missing file returned " . ($rc // 'undef') . "\n" unless $rc;
        my $out = script_output 'echo vigil-$((6*7))';
        die "script_output returned '$out'\n" unless $out eq 'vigil-42';
        record_info($console, "tty $dev, script_output '$out'");
    }
    select_console 'root-console';
    die "root-console is a serial terminal\n" if testapi::is_serial_terminal();
}

1;
