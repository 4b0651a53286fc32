# SPDX-License-Identifier: MIT
# Mojo/IOLoop/ReadWriteProcess.pm - fallback for the test process only:
# autotest.pm, commands.pm and osutils.pm `use` it, but under vigil only
# autotest::start_process (never called) would run it. Found after the real
# module (libmojo-ioloop-readwriteprocess-perl) because it is last in @INC.
package Mojo::IOLoop::ReadWriteProcess;
use strict;
use warnings;
use Exporter 'import';
our @EXPORT_OK = qw(process);
sub process { die "Mojo::IOLoop::ReadWriteProcess is not installed (vigil's stand-in cannot start processes)\n" }
1;
