# SPDX-License-Identifier: MIT
# net_pair.pm - one VM serves, the other fetches, over the cluster's own
# network. PARALLEL_ROLE=server: creates the barriers net_up and net_done
# and the mutex net_ready, gives its NIC 10.0.3.1/24 (a systemd-networkd
# file in /run ahead of the image's user-network one: the image has no
# `ip`), serves a page naming its job over HTTP on port 8080
# (systemd-socket-activate, one sh per connection), then meets the client
# at net_up and net_done. PARALLEL_ROLE=client: waits for net_ready, takes
# 10.0.3.2/24, meets the server at net_up, fetches the page with curl and
# checks it names the server's job. No sleeps: each wait is a barrier or a
# bounded poll of a state.
use Mojo::Base 'basetest';
use testapi;
use lockapi;
use mmapi;

# The guest up, a root shell on the virtio terminal, its NIC at 10.0.3.N.
sub network_up {
    my ($n) = @_;
    # the serial getty's prompt on ttyS0: the guest has booted
    wait_serial('login:', 600) || die "the guest did not boot to a login prompt\n";
    select_console 'root-virtio-terminal';
    assert_script_run "mkdir -p /run/systemd/network && printf '%s\\n' '[Match]' 'Name=en* eth*' '[Network]'"
      . " 'Address=10.0.3.$n/24' > /run/systemd/network/10-vigil-pair.network && systemctl restart systemd-networkd";
    # the address is on the link once networkd applied the file (bounded poll)
    assert_script_run "for i in \$(seq 300); do grep -q '10.0.3.$n\$' /proc/net/fib_trie && break; sleep 1; done;"
      . " grep -q '10.0.3.$n\$' /proc/net/fib_trie", 330;
}

sub server {
    barrier_create('net_up', 2) or die "barrier_create net_up refused\n";
    barrier_create('net_done', 2) or die "barrier_create net_done refused\n";
    mutex_create('net_ready') or die "mutex_create net_ready refused\n";
    network_up(1);
    my $id = get_current_job_id();
    assert_script_run "echo 'served by job $id' > /root/page && printf '%s\\n' '#!/bin/sh'"
      . q{ 'sed -u "/^\r\?$/q" > /dev/null' 'printf "HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\n"'}
      . " 'cat /root/page' > /root/serve.sh && chmod +x /root/serve.sh";
    background_script_run 'systemd-socket-activate -l 8080 -a --inetd /root/serve.sh > /dev/null 2>&1';
    # listening (0x1F90 = 8080, state 0A; on IPv6's any address, which takes
    # IPv4 too) before the client is told
    assert_script_run "for i in \$(seq 300); do grep -q ':1F90 0*:0000 0A' /proc/net/tcp /proc/net/tcp6 && break; sleep 1;"
      . " done; grep -q ':1F90 0*:0000 0A' /proc/net/tcp /proc/net/tcp6", 330;
    barrier_wait('net_up');
    barrier_wait('net_done');
    wait_for_children();
    record_info('net', "server: 10.0.3.1 served /root/page ('served by job $id')");
}

sub client {
    my $parents = get_parents() // die "get_parents failed\n";
    die "expected one parallel parent, got '@$parents'\n" unless @$parents == 1;
    my $server = $parents->[0];
    mutex_wait('net_ready');
    network_up(2);
    barrier_wait({name => 'net_up', check_dead_job => 1});
    my $page = script_output('curl -sS --retry 30 --retry-connrefused --retry-delay 1 --max-time 600 http://10.0.3.1:8080/',
        timeout => 660);
    die "fetched '$page', expected 'served by job $server'\n" unless $page eq "served by job $server";
    barrier_wait({name => 'net_done', check_dead_job => 1});
    record_info('net', "client: 10.0.3.2 fetched http://10.0.3.1:8080/: '$page'");
}

sub run {
    my $role = get_var('PARALLEL_ROLE') // die "PARALLEL_ROLE unset\n";
    return server() if $role eq 'server';
    return client() if $role eq 'client';
    die "PARALLEL_ROLE='$role' is not server or client\n";
}

sub test_flags { {fatal => 1} }

1;
