# A module that fails: developer mode pauses on the failure.
use base 'basetest';
use strict;
use warnings;
use testapi;

sub run {
    die "deliberate failure\n";
}

1;
