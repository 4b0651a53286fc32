#!/usr/bin/perl
# SPDX-License-Identifier: MIT
# tinycv_time.pl - runs tests/integration/tinycv_match.pl (os-autoinst's real
# tinycv search; same arguments, same JSON Lines on stdout) and adds the time
# of the search alone: the tinycv::Image::search_ calls of each screenshot are
# timed and summed, and the driver's line for it gets "search_ms".
# usage: tinycv_time.pl [--full-screen] NEEDLES_DIR SCREENSHOT.png...
use strict;
use warnings;
use Time::HiRes qw(clock_gettime CLOCK_MONOTONIC);
use File::Basename qw(dirname);

BEGIN {
	# The same bmwqemu stub as the driver: tinycv.pm needs only fctwarn.
	package bmwqemu;
	sub fctwarn { print STDERR "tinycv: @_\n" }
	sub import { no strict 'refs'; *{caller() . '::fctwarn'} = \&fctwarn; }
	$INC{'bmwqemu.pm'} = __FILE__;
	# An ocr area makes search_ call ocr::tesseract; OCR is not timed here.
	package ocr;
	sub tesseract { return '' }
	$INC{'ocr.pm'} = __FILE__;
}
use lib '/usr/lib/os-autoinst';
use tinycv;
use JSON::PP;

my $driver = $ENV{TINYCV_DRIVER} || dirname(__FILE__) . '/../tests/integration/tinycv_match.pl';
my $ms = 0;
{
	no warnings 'redefine';
	my $search = \&tinycv::Image::search_;
	*tinycv::Image::search_ = sub {
		my $t = clock_gettime(CLOCK_MONOTONIC);
		my @r = $search->(@_);
		$ms += (clock_gettime(CLOCK_MONOTONIC) - $t) * 1000;
		return wantarray ? @r : $r[0];
	};
	# The driver encodes one line per screenshot right after searching it.
	my $encode = \&JSON::PP::encode;
	*JSON::PP::encode = sub {
		my ($self, $v) = @_;
		if (ref $v eq 'HASH' && exists $v->{screen}) {
			$v->{search_ms} = sprintf('%.3f', $ms) + 0;
			$ms = 0;
		}
		return $encode->($self, $v);
	};
}
local $SIG{__WARN__} = sub { print STDERR @_ unless $_[0] =~ /redefined/ };
do $driver;
die "$driver: $@" if $@;
