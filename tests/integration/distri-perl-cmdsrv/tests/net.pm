# SPDX-License-Identifier: MIT
# net.pm - the command server through os-autoinst's own testapi: commands
# typed on the VGA console (net-init's shell there), their exit codes on
# the serial port; upload_logs and upload_asset type curl (net-init's
# stand-in). Few commands: typing on the VGA console is slow under TCG.
use base 'basetest';
use strict;
use warnings;
use testapi;

sub run {
    assert_screen 'shell-banner', 120;
    wait_serial(qr/VIGIL-SHELL-READY/, 60) // die "no ready line on the serial port\n";
    save_tmp_file('x/y.txt', 'tmp-content');
    assert_script_run('cd /tmp && wget -q ' . data_url('hello.txt') . ' && wget -q -O - ' . data_url('dir')
          . ' | cpio -id && wget -q -O - ' . autoinst_url('/vars') . ' | grep -q \'"DISTRI":"perl-cmdsrv"\''
          . ' && wget -q -O - ' . autoinst_url('/files/x/y.txt') . ' | grep -qx tmp-content');
    upload_logs('/tmp/data/sub/b.bin');
    upload_asset('/tmp/data/sub/b.bin');
    upload_asset('/tmp/hello.txt', 1);
}

1;
