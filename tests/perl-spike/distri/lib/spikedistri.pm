# SPDX-License-Identifier: MIT
# spikedistri.pm - the spike distribution: declares the consoles a typical
# openQA distribution declares in init (as os-autoinst-distri-example).
package spikedistri;
use base 'distribution';
use strict;
use warnings;
# No 'use testapi' here: its exports (script_output...) would shadow the
# distribution methods of the same name that testapi calls.

sub init {
    my ($self) = @_;
    $self->SUPER::init();
    $self->add_console('sut', 'vnc-base', {hostname => 'localhost', port => 5990});
    $self->add_console('root-console', 'tty-console', {tty => 2});
    $self->add_console('root-virtio-terminal', 'virtio-terminal', {});
    return;
}
1;
