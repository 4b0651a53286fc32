#!/usr/bin/perl
# SPDX-License-Identifier: MIT
# tinycv_match.pl - runs os-autoinst's real tinycv matcher the way needle.pm
# and tinycv.pm do, printing vigil's `needle match` JSON shape (similarity
# with 6 decimals) so the two can be compared.
# usage: tinycv_match.pl [--full-screen] NEEDLES_DIR SCREENSHOT.png...
use strict;
use warnings;

BEGIN {
	# tinycv.pm only needs bmwqemu::fctwarn; the real bmwqemu pulls in
	# modules Debian does not ship with os-autoinst.
	package bmwqemu;
	sub fctwarn { print STDERR "tinycv: @_\n" }
	sub import { no strict 'refs'; *{caller() . '::fctwarn'} = \&fctwarn; }
	$INC{'bmwqemu.pm'} = __FILE__;
}
use lib '/usr/lib/os-autoinst';
use tinycv;
use JSON::PP;
use File::Find;
use File::Basename;

package FakeNeedle;
sub get_image { $_[0]->{img} }
sub has_property {
	my ($self, $p) = @_;
	return grep { ref $_ eq 'HASH' ? $_->{name} eq $p : $_ eq $p } @{$self->{properties}};
}

package main;

my $ratio = 0.02;
if (@ARGV && $ARGV[0] eq '--full-screen') { $ratio = 1; shift @ARGV; }
my $dir = shift @ARGV;
my %needles;
find({ follow => 1, no_chdir => 1, wanted => sub {
	return unless /\.json$/;
	my $file = $File::Find::name;
	my $json = eval { open(my $fh, '<', $file) or die; local $/; decode_json(<$fh>) } or return;
	my $self = { tags => $json->{tags} || [], properties => $json->{properties} || [], area => [] };
	my $gotmatch;
	for my $a (@{$json->{area} || []}) {
		my $area = {};
		$area->{$_} = $a->{$_} || 0 for qw(xpos ypos width height);
		$area->{match} = $a->{match} if $a->{match};
		$area->{type} = $a->{type} || 'match';
		$area->{margin} = $a->{margin} || 50;
		$gotmatch = 1 if $area->{type} =~ /match|ocr/;
		push @{$self->{area}}, $area;
	}
	return unless $gotmatch;
	$self->{name} = basename($file, '.json');
	my $png = $file =~ s/\.json$/.png/r;
	return unless -s $png;
	my $img = tinycv::read($png) or return;
	for my $area (@{$self->{area}}) {
		next unless $area->{type} eq 'exclude';
		$img->replacerect(@{$area}{qw(xpos ypos width height)});
	}
	$self->{img} = $img;
	$needles{$self->{name}} = bless $self, 'FakeNeedle';
}}, $dir);

my $json = JSON::PP->new->canonical;
for my $shot (@ARGV) {
	my $img = tinycv::read($shot);
	unless ($img) { print STDERR "cannot read $shot\n"; next; }
	my @res;
	for my $name (sort keys %needles) {
		my $r = $img->search_($needles{$name}, 0, $ratio);
		next unless $r;
		push @res, { needle => $name, ok => $r->{ok} ? JSON::PP::true : JSON::PP::false,
			areas => [map { { x => $_->{x}, y => $_->{y}, similarity => sprintf('%.6f', $_->{similarity}) + 0 } } @{$r->{area}}] };
	}
	print $json->encode({ screen => $shot, results => \@res }), "\n";
}
