# SPDX-License-Identifier: MIT
# serial.pm - wait_serial with a /u regex (Perl sends "(?^u:...)", which
# PCRE2 rejects as it is), and a list of literal strings that never come.
use base 'basetest';
use strict;
use warnings;
use testapi;

sub run {
    assert_screen 'shell-banner', 120;
    my $out = wait_serial(qr/VIGIL-SHELL-READY/u, 60) // die "no ready line on the serial port\n";
    record_info('ready', $out);
    die "wait_serial found a string that never came\n" if defined wait_serial(['never-1', 'never-2'], 2, 0, no_regex => 1);
}

1;
