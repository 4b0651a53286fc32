# SPDX-License-Identifier: MIT
# main.pm - test_perl.sh's openQA Perl distribution: the GRUB rescue ISO
# driven through os-autoinst's own testapi under `vigil run` (issue 15).
use strict;
use warnings;
use testapi;
use autotest;

if (get_var('PARALLEL_ROLE')) {
    # As two parallel jobs of vigil serve (test_parallel.sh): lockapi and
    # mmapi between jobs running at once, no screen needed.
    autotest::loadtest('tests/parallel.pm');
} else {
    autotest::loadtest('tests/boot.pm');
    # As a job of vigil serve (test_perl.sh): os-autoinst's lockapi.
    autotest::loadtest('tests/locks.pm') if get_var('LOCKS');
}
1;
