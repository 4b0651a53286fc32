# SPDX-License-Identifier: MIT
# net.pm - the command server from the installed Debian over QEMU's user
# network (NICTYPE=user), on the virtio terminal: data_url of a file and of a
# directory (a cpio archive), autoinst_url('/vars') and a save_tmp_file file
# fetched with curl; upload_logs, upload_asset (private and public) and
# parse_junit_log of a JUnit file the guest writes (openQA's parser).
use base 'basetest';
use strict;
use warnings;
use testapi;

sub run {
    select_console 'root-virtio-terminal';
    save_tmp_file('x/y.txt', 'tmp-content');
    # in a subshell: the shell's directory stays (x11.pm starts X from it)
    assert_script_run('(cd /tmp && curl -sf -o hello.txt ' . data_url('hello.txt')
          . ' && curl -sf ' . data_url('dir') . ' | cpio -id --quiet'
          . ' && curl -sf ' . autoinst_url('/vars') . ' | grep -q \'"DISTRI":"perl-debian"\''
          . ' && curl -sf ' . autoinst_url('/files/x/y.txt') . ' | grep -qx tmp-content)');
    upload_logs('/tmp/data/sub/b.bin');
    upload_asset('/tmp/data/sub/b.bin');
    upload_asset('/tmp/hello.txt', 1);
    assert_script_run(q{echo '<testsuites><testsuite package="guest.junit" id="0" failures="0" errors="0" tests="2">}
          . q{<testcase name="first" status="success"><system-out>out one</system-out></testcase>}
          . q{<testcase name="second" status="success"/></testsuite></testsuites>' > /tmp/junit.xml});
    parse_junit_log('/tmp/junit.xml');
}

1;
