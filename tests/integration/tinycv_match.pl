#!/usr/bin/perl
# SPDX-License-Identifier: MIT
# tinycv_match.pl - runs os-autoinst's real tinycv matcher the way needle.pm
# and tinycv.pm do, printing vigil's `needle match` JSON shape (similarity
# with 6 decimals) so the two can be compared.
# usage: tinycv_match.pl [--full-screen] NEEDLES_DIR SCREENSHOT.png...
#        tinycv_match.pl --ssd [--full-screen] NEEDLES_DIR SCREENSHOT.png... < QUERIES (see ssd_main)
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

my $ssd_mode = @ARGV && $ARGV[0] eq '--ssd' ? shift @ARGV : 0;
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

if ($ssd_mode) { ssd_main(@ARGV); exit 0; }

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

# --ssd [--full-screen] NEEDLES_DIR SHOTS... with queries on stdin, one a
# line: "NEEDLE K X1 Y1 X2 Y2 SHOT". For a position disagreement: the exact
# integer SSD of match area K of NEEDLE at (X1,Y1) and at (X2,Y2) on SHOT,
# with the pixels prepared the way tinycv prepared them in the run over
# SHOTS (its Image::prep cache: the blurred rectangle grows to the bounding
# box of the requested ones, the whole image from half of it; OpenCV blurs
# a sub-Mat in place, rounding halves to even in its first 4*floor(width/4)
# columns and up elsewhere, the whole image rounding up), and E, a bound on
# the error of one value of OpenCV's float matchTemplate there (DFT
# correlation in float: a relative error of 16 * log2(window pixels) *
# 2^-24 of the window's and template's energy, plus the final rounding to
# float). Prints "SSD1 SSD2 E" a query, in their order: one pass over
# SHOTS answers them all.
sub prep_roi {
	my ($st, $W, $H, $x, $y, $w, $h) = @_;
	if ($st->{valid}) {
		my ($x1, $y1) = ($st->{x} > $x ? $st->{x} : $x, $st->{y} > $y ? $st->{y} : $y);
		my $x2 = $st->{x} + $st->{w} < $x + $w ? $st->{x} + $st->{w} : $x + $w;
		my $y2 = $st->{y} + $st->{h} < $y + $h ? $st->{y} + $st->{h} : $y + $h;
		return if $x1 == $x && $y1 == $y && $x2 == $x + $w && $y2 == $y + $h;
	}
	if (!$st->{valid} || $st->{w} <= 0 || $st->{h} <= 0) {
		@{$st}{qw(x y w h)} = ($x, $y, $w, $h);
	} else {
		my $x1 = $st->{x} < $x ? $st->{x} : $x;
		my $y1 = $st->{y} < $y ? $st->{y} : $y;
		my $x2 = $st->{x} + $st->{w} > $x + $w ? $st->{x} + $st->{w} : $x + $w;
		my $y2 = $st->{y} + $st->{h} > $y + $h ? $st->{y} + $st->{h} : $y + $h;
		@{$st}{qw(x y w h)} = ($x1, $y1, $x2 - $x1, $y2 - $y1);
	}
	@{$st}{qw(x y w h)} = (0, 0, $W, $H) if $W * $H * 0.5 <= $st->{w} * $st->{h};
	$st->{valid} = 1;
}

sub even_end {
	my ($st, $W, $H) = @_;
	return 0 if $st->{x} == 0 && $st->{y} == 0 && $st->{w} == $W && $st->{h} == $H;
	return $st->{x} + ($st->{w} & ~3);
}

sub greyfn {
	my ($img, $paint) = @_;
	my %c;
	return sub {
		my ($x, $y) = @_;
		return $c{"$x,$y"} //= do {
			my $g;
			for my $r (@$paint) { $g = 150 if $x >= $r->[0] && $y >= $r->[1] && $x < $r->[0] + $r->[2] && $y < $r->[1] + $r->[3]; }
			unless (defined $g) { my ($b, $gg, $rr) = $img->get_pixel($x, $y); $g = ($rr * 4899 + $gg * 9617 + $b * 1868 + 8192) >> 14; }
			$g;
		};
	};
}

sub blurred {
	my ($grey, $W, $H, $x, $y, $ee) = @_;
	my $t = 0;
	for my $dy (-1 .. 1) {
		for my $dx (-1 .. 1) {
			my ($xx, $yy) = ($x + $dx, $y + $dy);
			$xx = -$xx if $xx < 0; $xx = 2 * $W - 2 - $xx if $xx >= $W;
			$yy = -$yy if $yy < 0; $yy = 2 * $H - 2 - $yy if $yy >= $H;
			$t += (2 - abs($dy)) * (2 - abs($dx)) * $grey->($xx, $yy);
		}
	}
	return $x < $ee ? ($t + 7 + (($t >> 4) & 1)) >> 4 : ($t + 8) >> 4;
}

sub ssd_main {
	my @shots = @_;
	my (@q, %want, %nst, %at);
	while (my $line = <STDIN>) {
		my @f = split ' ', $line;
		next unless @f == 7;
		push @q, [@f];
		$want{"$f[6]\0$f[0]\0$f[1]"} = 1;
	}
	my $left = keys %want;
	# The state tinycv had when it searched each wanted area.
	SHOT: for my $s (@shots) {
		last unless $left;
		my $img = tinycv::read($s) or die "cannot read $s";
		my ($sw, $sh) = ($img->xres, $img->yres);
		my $sst = {};
		for my $n (sort keys %needles) {
			my $nd = $needles{$n};
			my @ex = grep { $_->{type} eq 'exclude' } @{$nd->{area}};
			my $st = @ex ? {} : $sst;
			my $ns = $nst{$n} //= {};
			my ($nw, $nh) = ($nd->{img}->xres, $nd->{img}->yres);
			my $k = -1;
			for my $ar (grep { $_->{type} eq "match" } @{$nd->{area}}) {
				$k++;
				my $margin = int($ar->{margin} + $ratio * (1024 - $ar->{margin}));
				my ($x, $y, $w, $h) = @{$ar}{qw(xpos ypos width height)};
				next if $x < 0 || $y < 0 || $y + $h > $sh || $x + $w > $sw;
				my ($px, $py) = (int($x * $sw / $nw), int($y * $sh / $nh));
				my $wx0 = $px - $margin < 0 ? 0 : $px - $margin;
				my $wy0 = $py - $margin < 0 ? 0 : $py - $margin;
				my $wx1 = $px + $w + $margin > $sw ? $sw : $px + $w + $margin;
				my $wy1 = $py + $h + $margin > $sh ? $sh : $py + $h + $margin;
				prep_roi($st, $sw, $sh, $wx0, $wy0, $wx1 - $wx0, $wy1 - $wy0);
				prep_roi($ns, $nw, $nh, $x, $y, $w, $h);
				my $key = "$s\0$n\0$k";
				next unless $want{$key} && !$at{$key};
				$at{$key} = { sst => {%$st}, nst => {%$ns}, img => $img, W => $sw, H => $sh,
					ex => [map { [@{$_}{qw(xpos ypos width height)}] } @ex], area => $ar, nw => $nw, nh => $nh,
					window => ($wx1 - $wx0) * ($wy1 - $wy0) };
				$left--;
			}
		}
	}
	for my $q (@q) {
		my ($name, $K, $x1, $y1, $x2, $y2, $shot) = @$q;
		my $scene = $at{"$shot\0$name\0$K"} or die "area $K of $name not searched on $shot\n";
		print join(' ', ssd_pair($name, $scene, [$x1, $y1], [$x2, $y2])), "\n";
	}
}

# The exact SSDs of the area of scene at positions p1 and p2, and E.
sub ssd_pair {
	my ($name, $scene, @pos) = @_;
	my ($W, $H, $a) = @{$scene}{qw(W H area)};
	my @ex = grep { $_->[0] >= 0 && $_->[1] >= 0 && $_->[0] + $_->[2] <= $W && $_->[1] + $_->[3] <= $H } @{$scene->{ex}};
	my $sg = greyfn($scene->{img}, \@ex);
	my $ng = greyfn($needles{$name}{img}, []);
	my ($see, $nee) = (even_end($scene->{sst}, $W, $H), even_end($scene->{nst}, $scene->{nw}, $scene->{nh}));
	my (@tpl, $tsq);
	for my $j (0 .. $a->{height} - 1) {
		for my $i (0 .. $a->{width} - 1) {
			my $v = blurred($ng, $scene->{nw}, $scene->{nh}, $a->{xpos} + $i, $a->{ypos} + $j, $nee);
			push @tpl, $v;
			$tsq += $v * $v;
		}
	}
	my (@out, $wsq);
	for my $p (@pos) {
		my ($ssd, $sq, $k) = (0, 0, 0);
		for my $j (0 .. $a->{height} - 1) {
			for my $i (0 .. $a->{width} - 1) {
				my $v = blurred($sg, $W, $H, $p->[0] + $i, $p->[1] + $j, $see);
				$ssd += ($v - $tpl[$k++]) ** 2;
				$sq += $v * $v;
			}
		}
		push @out, $ssd;
		$wsq = $sq if !defined $wsq || $sq > $wsq;
	}
	my $E = 16 * (log($scene->{window}) / log(2) + 1) * 2**-24 * ($wsq + $tsq) + ($out[0] > $out[1] ? $out[0] : $out[1]) * 2**-23;
	return (sprintf('%d', $out[0]), sprintf('%d', $out[1]), sprintf('%.3f', $E));
}
