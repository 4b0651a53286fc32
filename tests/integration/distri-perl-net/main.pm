# SPDX-License-Identifier: MIT
# main.pm - two installed-Debian VMs of one parallel cluster on the network
# vigil sets up for it (NICTYPE=tap: QEMU socket multicast, docs/design.md
# "Parallel jobs"): test_parallel_net.sh copies distri-perl-debian's lib/
# (its distribution class: the virtio terminal and its root login) and
# needles/ beside this file. One module, net_pair.pm, in both jobs (PARALLEL_ROLE).
use strict;
use warnings;
use testapi;
use autotest;
use vigildistri;

testapi::set_distribution(vigildistri->new);
autotest::loadtest('tests/net_pair.pm');
1;
