# SPDX-License-Identifier: MIT
# junit.pm - parse_junit_log on a JUnit file the guest writes: uploaded
# through the command server, parsed by openQA's parser (OpenQA::Parser),
# registered as the module's extra test results. Scheduled with JUNIT=1
# (test_perl_debian.sh compares it with isotovideo).
use base 'basetest';
use strict;
use warnings;
use testapi;

sub run {
    assert_script_run(q{echo '<testsuites><testsuite package="guest.junit" id="0" failures="0" errors="0" tests="2">}
          . q{<testcase name="first" status="success"><system-out>out one</system-out></testcase>}
          . q{<testcase name="second" status="success"/></testsuite></testsuites>' > /tmp/junit.xml});
    parse_junit_log('/tmp/junit.xml');
}

1;
