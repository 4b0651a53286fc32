# SPDX-License-Identifier: MIT
# tinycv.pm - vigil's stand-in for os-autoinst's tinycv in the Perl test
# process: an image is a reference to a PNG vigil already wrote (and its
# thumbnail in .thumbs/ beside it), so no PPM crosses the socket and no
# OpenCV is loaded. It must come first in @INC; it matches nothing itself.
package tinycv;

use strict;
use warnings;
use File::Basename qw(basename dirname);
use File::Copy qw(copy);

our $VERSION = 'vigil';
my $PREFIX = 'vigil-png:';

# vigil sends {"image": base64("vigil-png:/abs/path.png")} or
# base64("vigil-frame:ID"); testapi.pm and basetest.pm pass decode_base64()
# of it here, as they would a PPM. A frame is written by vigil when Perl
# writes it (vigil_write_image), a PNG path is placed here.
sub from_ppm {
    my ($data) = @_;
    return undef unless defined $data && length $data;
    return tinycv::Image->_new_frame($1) if $data =~ /\Avigil-frame:([0-9]+)\z/;
    if (substr($data, 0, length $PREFIX) eq $PREFIX) {
        my $png = substr($data, length $PREFIX);
        die "tinycv (vigil): image '$png' is missing\n" unless -f $png;
        return tinycv::Image->_new($png);
    }
    die "tinycv (vigil): raw image data is not accepted, only references to PNGs that vigil wrote\n";
}

sub read {
    my ($path) = @_;
    return undef unless defined $path && -f $path;
    return tinycv::Image->_new($path);
}

sub create_threads { return }

package tinycv::Image;

use strict;
use warnings;
use File::Basename qw(basename dirname);
use File::Copy qw(copy);

sub _new {
    my ($class, $png) = @_;
    return bless {png => $png}, $class;
}

sub _new_frame {
    my ($class, $id) = @_;
    return bless {frame => 0 + $id}, $class;
}

# Asked while the test process waits for nothing else: the socket is idle
# whenever testapi/basetest write an image.
sub _write_frame {
    my ($self, $fn, $thumbnail) = @_;
    autotest::query_isotovideo('vigil_write_image', {frame => $self->{frame}, file => $fn, thumbnail => $thumbnail});
    return 1;
}

# A hard link when the results lie on the same file system, a copy else.
sub _place {
    my ($src, $dst) = @_;
    unlink $dst;
    return 1 if link($src, $dst);
    copy($src, $dst) or die "tinycv (vigil): cannot write '$dst': $!\n";
    return 1;
}

sub write {
    my ($self, $fn) = @_;
    return $self->_write_frame($fn, 0) if defined $self->{frame};
    return _place($self->{png}, $fn);
}

sub write_with_thumbnail {
    my ($self, $fn) = @_;
    return $self->_write_frame($fn, 1) if defined $self->{frame};
    _place($self->{png}, $fn);
    my $thumb = dirname($self->{png}) . '/.thumbs/' . basename($self->{png});
    return 1 unless -f $thumb;
    my $dir = dirname($fn) . '/.thumbs';
    mkdir $dir;
    return _place($thumb, "$dir/" . basename($fn));
}

# The PNG header's IHDR: width and height, for xres/yres.
sub _size {
    my ($self) = @_;
    return @{$self->{size}} if $self->{size};
    die "tinycv (vigil): the size of frame $self->{frame} is vigil's\n" if defined $self->{frame};
    open(my $fh, '<:raw', $self->{png}) or die "tinycv (vigil): $self->{png}: $!\n";
    my $n = CORE::read($fh, my $hdr, 24);
    close $fh;
    die "tinycv (vigil): $self->{png} is not a PNG\n" unless $n == 24 && substr($hdr, 1, 3) eq 'PNG';
    $self->{size} = [unpack('NN', substr($hdr, 16, 8))];
    return @{$self->{size}};
}

sub xres { (shift->_size)[0] }
sub yres { (shift->_size)[1] }

# Matching, scaling and comparing are vigil's; reaching them here is a bug
# in the bridge, not a test failure to hide.
our $AUTOLOAD;
sub AUTOLOAD {
    my $name = $AUTOLOAD =~ s/.*:://r;
    die "tinycv (vigil): '$name' runs in vigil, not in the test process\n";
}
sub DESTROY { }

1;
