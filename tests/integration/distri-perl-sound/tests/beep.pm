# Two notes recorded and found: 440 Hz, then 880 Hz. GRUB clears the
# screen, plays, then prints vigil-beep (the screen needle waits for it).
use base 'basetest';
use strict;
use warnings;
use testapi;

sub run {
    start_audiocapture;
    type_string "clear; set v=beep; play 120 440 1 880 1; echo vigil-\$v\n", max_interval => 100;    # slower: GRUB drops keys on a loaded host
    assert_screen 'grub-played-beep', 60;
    assert_recorded_sound 'grub-beeps';
}

1;
