# SPDX-License-Identifier: MIT
# locks.pm - os-autoinst's lockapi and mmapi against `vigil serve` (LOCKS=1,
# as a job of test_perl.sh): mmapi signs each call with the job's JOBTOKEN and sends
# it to OPENQA_URL, both set by the server and the worker.
use Mojo::Base 'basetest';
use testapi;
use lockapi;
use mmapi;

sub run {
    die 'JOBTOKEN or OPENQA_URL missing' unless get_var('JOBTOKEN') && get_var('OPENQA_URL');
    if (get_var('LOCKS') eq 'child') {
        # chained after the job that created them: its parent's mutex and
        # barrier are found by name, and this job is the barrier's second
        mutex_lock('vigil_m');
        mutex_unlock('vigil_m') or die 'mutex_unlock of the parent\'s mutex refused';
        die 'the parent\'s barrier of two did not release with this job' unless barrier_try_wait('vigil_b2');
        my $parents = get_parents();
        die 'get_parents: a chained parent is no parallel one' if @$parents;
        record_info('locks', 'the parent\'s mutex and barrier, found and released');
        return;
    }
    # the worker publishes what the run's variables say at its end, as
    # isotovideo does: a disk named by the test itself
    set_var('PUBLISH_HDD_1', 'perl-set-var.qcow2');
    mutex_create('vigil_m') or die 'mutex_create refused';
    die 'a second mutex_create of the same name was accepted' if mutex_create('vigil_m');
    mutex_lock('vigil_m');
    die 'mutex_try_lock of the lock this job holds failed' unless mutex_try_lock('vigil_m');
    mutex_unlock('vigil_m') or die 'mutex_unlock refused';
    barrier_create('vigil_b', 1) or die 'barrier_create refused';
    barrier_wait('vigil_b');
    barrier_destroy('vigil_b');
    barrier_create('vigil_b2', 2) or die 'barrier_create of two refused';
    die 'a barrier of two released by one job' if barrier_try_wait('vigil_b2');
    my $children = get_children();
    die 'get_children: expected an empty hash' unless ref $children eq 'HASH' && !%$children;
    my $parents = get_parents();
    die 'get_parents: expected an empty list' unless ref $parents eq 'ARRAY' && !@$parents;
    my $done = get_children_by_state('done');
    die 'get_children_by_state: expected an empty list' unless ref $done eq 'ARRAY' && !@$done;
    record_info('locks', 'mutex, barriers and mm answered as openQA');
}

1;
