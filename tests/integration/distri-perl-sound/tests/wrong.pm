# The same note asserted as the two notes: the module fails, and goes on
# (assert_recorded_sound records the failure, it does not die).
use base 'basetest';
use strict;
use warnings;
use testapi;

sub run {
    start_audiocapture;
    type_string "clear; set v=wrong; play 60 660 1; echo vigil-\$v\n", max_interval => 100;    # slower: GRUB drops keys on a loaded host
    assert_screen 'grub-played-wrong', 60;
    set_var('WRONG_WENT_ON', 1) unless assert_recorded_sound 'grub-beeps';
}

1;
