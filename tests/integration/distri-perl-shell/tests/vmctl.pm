# SPDX-License-Identifier: MIT
# vmctl.pm - switch_network and save_storage_drives through os-autoinst's
# testapi (backend_switch_network, backend_save_storage_drives).
use base 'basetest';
use strict;
use warnings;
use testapi;

sub run {
    my ($self) = @_;
    switch_network(network_enabled => 0);
    switch_network(network_enabled => 1, network_link_name => 'qanet0');
    eval { switch_network(network_link_name => 'nonic') };
    die "switch_network of a missing NIC did not die\n" unless $@ =~ /nonic/;
    # testapi.pm allows save_storage_drives only in a post_fail_hook
    $self->post_fail_hook;
}

sub post_fail_hook {
    save_storage_drives;
}

1;
