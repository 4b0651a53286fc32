#!/usr/bin/perl
# SPDX-License-Identifier: MIT
# needle_pm_match.pl - loads one needle with os-autoinst's own needle.pm (as
# isotovideo does) and matches it on a screenshot with tinycv's search
# (margin search, as assert_screen's first try), printing {"ok", "areas":
# [{x, y, similarity}]}; test_editor.py holds vigil's live match to it.
# usage: needle_pm_match.pl NEEDLES_DIR NAME.json SCREENSHOT.png
use strict;
use warnings;

BEGIN {
	# needle.pm needs bmwqemu's warnings and checkout_git_refspec from
	# modules Debian's os-autoinst pulls in with more than it ships.
	package bmwqemu;
	our %vars;
	sub fctwarn { print STDERR "needle.pm: @_\n" }
	sub diag { print STDERR "needle.pm: @_\n" }
	sub import { no strict 'refs'; *{caller() . '::fctwarn'} = \&fctwarn; *{caller() . '::diag'} = \&diag; }
	$INC{'bmwqemu.pm'} = __FILE__;
	package OpenQA::Isotovideo::Utils;
	sub checkout_git_refspec { }
	sub import { no strict 'refs'; *{caller() . '::checkout_git_refspec'} = \&checkout_git_refspec; }
	$INC{'OpenQA/Isotovideo/Utils.pm'} = __FILE__;
}
use lib '/usr/lib/os-autoinst';
use needle;
use tinycv;
use JSON::PP;

my ($dir, $json, $shot) = @ARGV;
needle::set_needles_dir($dir);
my $n = needle->new($json) or die "needle.pm did not load $json\n";
my $img = tinycv::read($shot) or die "cannot read $shot\n";
my ($r) = $img->search([$n], 0, 0.02);
# search answers undef when nothing matched: ask search_ for the areas then.
$r //= $img->search_($n, 0, 0.02);
print JSON::PP->new->canonical->encode({
	name => $n->{name}, tags => $n->{tags}, ok => $r->{ok} ? JSON::PP::true : JSON::PP::false,
	areas => [map { { x => $_->{x}, y => $_->{y}, similarity => $_->{similarity} } } @{$r->{area}}] }), "\n";
