# SPDX-License-Identifier: MIT
# main.pm - test_devmode.sh's Perl distribution: developer mode's step by
# command and pause on failure for os-autoinst's test process.
use strict;
use warnings;
use testapi;
use autotest;

autotest::loadtest("tests/$_.pm") for qw(boot dies);
1;
