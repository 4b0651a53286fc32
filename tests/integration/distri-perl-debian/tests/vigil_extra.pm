# SPDX-License-Identifier: MIT
# vigil_extra.pm - what only vigil has, scheduled with VIGIL_EXTRA=1 (the
# comparison with isotovideo names this module as vigil's own): a proxied
# method vigil lacks refused by name, vigil's serial-terminal class (the
# serial port) with script_run and script_output, and a console class vigil
# does not implement refused when selected.
use base 'basetest';
use strict;
use warnings;
use testapi;

sub run {
    eval { console('root-console')->kill_ssh };
    die "kill_ssh did not die\n" unless $@;
    record_info('proxy refused', $@);
    select_console 'root-sut-serial';
    die "root-sut-serial is no serial terminal\n" unless testapi::is_serial_terminal();
    assert_script_run 'test $(tty) = /dev/ttyS0';
    my $rc = script_run 'ls /nonexistent';
    die "ls of a missing file returned " . ($rc // 'undef') . "\n" unless $rc;
    my $out = script_output 'echo vigil-$((6*7))';
    die "script_output returned '$out'\n" unless $out eq 'vigil-42';
    record_info('root-sut-serial', "tty /dev/ttyS0, script_output '$out'");
    eval { select_console 'x3270' };
    die "selecting x3270 did not die\n" unless $@;
    record_info('refused', $@);
    die "the refused console is selected\n" unless current_console() eq 'root-sut-serial';
}

1;
