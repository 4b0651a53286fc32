# SPDX-License-Identifier: MIT
# Mojo/IOLoop/ReadWriteProcess/Session.pm - fallback for the test process
# only (see ../ReadWriteProcess.pm): `session` exists so that `use` works.
package Mojo::IOLoop::ReadWriteProcess::Session;
use strict;
use warnings;
use Exporter 'import';
our @EXPORT_OK = qw(session);
sub session { die "Mojo::IOLoop::ReadWriteProcess::Session is not installed (vigil's stand-in)\n" }
1;
