# SPDX-License-Identifier: MIT
# boot.pm - GRUB's menu, its command line (a key that changes the
# screen), an echo seen on the screen, a still screen;
# the test process's own memory map (no OpenCV: vigil's tinycv is loaded);
# with FAIL_TAG set, a last assert_screen for a tag that never shows.
use base 'basetest';
use strict;
use warnings;
use testapi;

sub run {
    assert_screen 'grub-menu', 90;
    wait_screen_change { send_key 'c' } 10 or die "pressing c did not change the screen\n";
    assert_screen 'grub-cmdline';
    type_string "echo hello vigil\n";
    assert_screen 'grub-echo';
    wait_still_screen(1, 15) or die "the command line did not settle\n";
    open(my $maps, '<', '/proc/self/maps') or die "maps: $!\n";
    my %cv = map { (split ' ')[-1] => 1 } grep { /opencv/ } <$maps>;
    record_info('maps', %cv ? 'OpenCV mapped: ' . join(' ', sort keys %cv) : 'no OpenCV mapped', result => %cv ? 'fail' : 'ok');
    assert_screen get_var('FAIL_TAG'), 3 if get_var('FAIL_TAG');
}

sub test_flags { return {fatal => 1} }

1;
