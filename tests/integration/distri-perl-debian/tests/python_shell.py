# SPDX-License-Identifier: MIT
# python_shell.py - a Python module (Inline::Python, os-autoinst's
# testapi.py): the virtio terminal again (no second login: persistent),
# script_output, assert_script_run, record_info.
from testapi import *


def run(self):
    select_console('root-virtio-terminal')
    out = script_output('echo python-$((6*7))')
    if out != 'python-42':
        raise Exception("script_output returned '%s'" % out)
    # (4.6's validate_script_output wants a Perl coderef or regexp, which
    # Python cannot hand it: the check is done here)
    host = script_output('cat /etc/hostname')
    if host != 'vigil-debian':
        raise Exception("hostname '%s'" % host)
    assert_script_run('test -d /root')
    record_info('python', 'script_output ' + out)


def test_flags(self):
    return {'fatal': 1}
