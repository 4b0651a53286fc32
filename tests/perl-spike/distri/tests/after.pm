# SPDX-License-Identifier: MIT
# after.pm - spike module 3: runs after the rollback; a console proxy call,
# regexes on the wire, script_run, upload_logs (command server URL), set_var.
use base 'basetest';
use strict;
use warnings;
use testapi;

sub run {
    console('sut')->disable_vnc_stalls;
    assert_screen 'x';
    wait_serial(qr/h\w/);
    wait_serial([qr/a+/i, 'b'], 5);
    my $rc = script_run 'true';
    die "script_run gave " . ($rc // 'undef') unless defined $rc && $rc == 0;
    upload_logs('/var/log/x.log', failok => 1);
    set_var('SPIKE_SET', 'yes', reload_needles => 1);
    diag 'autoinst_url: ' . autoinst_url('/data');
}
1;
