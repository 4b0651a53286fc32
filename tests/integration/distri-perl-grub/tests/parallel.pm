# SPDX-License-Identifier: MIT
# parallel.pm - two parallel jobs of `vigil serve` at once on two workers
# (test_parallel.sh): PARALLEL_ROLE=server, and PARALLEL_ROLE=client with
# the server as its parallel parent. They meet through os-autoinst's lockapi
# and mmapi: the client waits for the server's mutex par_ready (its barriers
# exist then), both wait at barrier par_start (so both run at once: each
# sees the other running), the client finds the server's mutex held, both
# meet at par_end, the server unlocks and waits for its child to end.
# PARALLEL_ROLE=client-fail dies once the server made par_ready (the server,
# running and waiting at par_start, is stopped: parallel_failed).
use Mojo::Base 'basetest';
use testapi;
use lockapi;
use mmapi;

sub server {
    my $children = get_children() // die "get_children failed\n";
    my @ids = keys %$children;
    die "get_children: expected one parallel child, got '@ids'\n" unless @ids == 1;
    my $client = $ids[0];
    barrier_create('par_start', 2) or die "barrier_create par_start refused\n";
    barrier_create('par_end', 2) or die "barrier_create par_end refused\n";
    mutex_create('par_m') or die "mutex_create par_m refused\n";
    mutex_lock('par_m');
    mutex_create('par_ready') or die "mutex_create par_ready refused\n";
    barrier_wait('par_start');
    # The client cannot end before it meets this job at par_end: it runs
    # (once its worker's first status said so, which may come after its
    # test process started: mmapi's wait, no timing).
    wait_for_children_to_start();
    my $state = get_children()->{$client} // 'none';
    die "the client is $state at the barrier, not running\n" unless $state eq 'running';
    my $running = get_children_by_state('running');
    die "get_children_by_state(running): '@$running', expected $client\n" unless "@$running" eq "$client";
    barrier_wait('par_end');
    mutex_unlock('par_m') or die "mutex_unlock par_m refused\n";
    wait_for_children();
    my $done = get_children_by_state('done');
    die "get_children_by_state(done): '@$done', expected $client\n" unless "@$done" eq "$client";
    record_info('parallel', "server: client $client was running at barrier par_start, then ended");
}

sub client {
    my $parents = get_parents() // die "get_parents failed\n";
    die "get_parents: expected one parallel parent, got '@$parents'\n" unless @$parents == 1;
    my $server = $parents->[0];
    die "the client has parallel children\n" if %{get_children()};
    mutex_wait('par_ready');
    barrier_wait({name => 'par_start', check_dead_job => 1});
    # The server cannot end before it meets this job at par_end; its state
    # says running once its worker's first status did.
    my $info;
    while (1) {
        $info = get_job_info($server) // die "get_job_info $server failed\n";
        last unless $info->{state} =~ /^(assigned|setup)$/;
        sleep 1;
    }
    die "the server is $info->{state} at the barrier, not running\n" unless $info->{state} eq 'running';
    die "mutex_try_lock took par_m, which the running server holds\n" if mutex_try_lock('par_m');
    barrier_wait({name => 'par_end', check_dead_job => 1});
    mutex_lock('par_m');
    mutex_unlock('par_m') or die "mutex_unlock par_m refused\n";
    record_info('parallel', "client: server $server was running at barrier par_start; par_m held by it, then ours");
}

sub run {
    my $role = get_var('PARALLEL_ROLE');
    return server() if $role eq 'server';
    return client() if $role eq 'client';
    if ($role eq 'client-fail') {
        # once the server runs (it made par_ready), so that it is stopped while running
        mutex_wait('par_ready');
        die "client-fail: this client fails while its server waits at barrier par_start\n";
    }
    die "PARALLEL_ROLE '$role': expected server, client or client-fail\n";
}

sub test_flags { return {fatal => 1} }

1;
