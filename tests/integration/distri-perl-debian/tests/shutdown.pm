# SPDX-License-Identifier: MIT
# shutdown.pm - power off through systemd from the virtio terminal;
# assert_shutdown asks the backend until QEMU says so.
use base 'basetest';
use strict;
use warnings;
use testapi;

sub run {
    select_console 'root-virtio-terminal';
    type_string "poweroff\n";
    assert_shutdown 120;
}

1;
