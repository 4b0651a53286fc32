# One 660 Hz note: the two notes' needle does not match it.
use base 'basetest';
use strict;
use warnings;
use testapi;

sub run {
    start_audiocapture;
    type_string "clear; set v=tone; play 60 660 1; echo vigil-\$v\n", max_interval => 100;    # slower: GRUB drops keys on a loaded host
    assert_screen 'grub-played-tone', 60;
    die "the two notes' needle matched one note\n" if check_recorded_sound 'grub-beeps';
    set_var('TONE_CHECKED', 'undef');
}

1;
