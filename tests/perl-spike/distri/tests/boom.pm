# SPDX-License-Identifier: MIT
# boom.pm - spike module 2: a failing assert_screen (time-out), then the
# post_fail_hook; shows the failure flow and the rollback that follows.
use base 'basetest';
use strict;
use warnings;
use testapi;

sub run {
    assert_screen 'never', 1;
}

sub post_fail_hook {
    upload_logs('/tmp/x', failok => 1) if 0;    # command server: not in the spike
    send_key 'esc';
}
1;
