# SPDX-License-Identifier: MIT
# main.pm - test_cmdsrv.sh's Perl distribution: os-autoinst's testapi
# (data_url, autoinst_url, upload_logs, upload_asset, save_tmp_file)
# reaching vigil's command server from examples/shell's busybox guest.
use strict;
use warnings;
use testapi;
use autotest;

autotest::loadtest('tests/net.pm');
1;
