# SPDX-License-Identifier: MIT
# main.pm - test_sound.sh's Perl distribution, the twin of distri-sound
# (whose needles it reads): GRUB's `play` on the PC speaker, recorded and
# matched with os-autoinst's own testapi, under vigil and under isotovideo.
use strict;
use warnings;
use testapi;
use autotest;

autotest::loadtest("tests/$_.pm") for qw(boot beep tone wrong);
1;
