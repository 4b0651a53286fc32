# SPDX-License-Identifier: MIT
# test_rerun.py - "re-run from here" on the job page in Chromium, on the
# fixture's failed GRUB job (web-fail): nobody signed in sees no button; an
# operator gets "Re-run from here" on the failed module, and clicking it
# makes the re-run (POST rerun_from) and opens the new job, the old job's
# clone. A module a re-run copied shows "copied from t#N" with its link
# (the copy marked here in the server's private copy of a passed job).
import json
import os
import subprocess

from weblib import Server, Browser, check, VIGIL
from test_auth import sign_in


def prepare(data):
    subprocess.run([VIGIL, 'user', 'add', 'reop', '--operator', '--data', data], input='reop-password\n', text=True,
                   check=True, capture_output=True)


def mark_copied(s, job, module, src):
    path = os.path.join(s.data, 'testresults', str(job), f'result-{module}.json')
    with open(path) as f:
        r = json.load(f)
    r['copied_from'] = src
    os.unlink(path)  # never write through a hard link into another job's file
    with open(path, 'w') as f:
        json.dump(r, f)


def run():
    s = Server('rerun', prepare=prepare)
    b = Browser(s)
    grub, fail = s.job('grub')['id'], s.job('web-fail')['id']
    try:
        mark_copied(s, grub, 'boot', fail)
        b.get(f'/tests/{grub}')
        tag = b.wait_for('.job-module[data-module="boot"] .job-copied')
        link = tag.find_element('css selector', 'a')
        check('a copied module says where it came from', tag.text == f'copied from t#{fail}', tag.text)
        check('... with a link to that job', link.get_attribute('href').endswith(f'/tests/{fail}'))
        b.shot('rerun-copied')

        b.get(f'/tests/{fail}')
        b.wait_for('.job-module')
        check('signed out: no re-run button', not b.find('button.job-rerun'))

        b.get('/login?return_to=' + f'/tests/{fail}')
        sign_in(b, 'reop', 'reop-password')
        b.wait_until(lambda: b.js('return location.pathname') == f'/tests/{fail}' and b.find('#user .user-name'))
        button = b.wait_for('button.job-rerun')
        section = b.js('return arguments[0].closest(".job-module").dataset.module', button)
        st, j = s.api('GET', f'/api/v1/jobs/{fail}')
        failed = [m['name'] for m in j['job']['modules'] if m['result'] == 'failed']
        check('an operator gets "Re-run from here" on the failed module', button.text == 'Re-run from here' and
              section in failed and len(b.find('button.job-rerun')) == len(failed), (section, failed))
        b.shot('rerun-button')
        button.click()
        new = b.wait_until(lambda: (lambda p: int(p.rsplit('/', 1)[1]) if p != f'/tests/{fail}' else None)(
            b.js('return location.pathname')))
        st, j = s.api('GET', f'/api/v1/jobs/{fail}')
        check(f'clicked: on the new job\'s page (#{new}), the old job\'s clone', st == 200 and j['job']['clone_id'] == new,
              j['job'].get('clone_id'))
        b.wait_for('.job-page .job-head')
        errs = [e for e in b.errors() if 'favicon' not in e]
        check('no console error', not errs, errs)
    finally:
        b.quit()
        s.stop()
