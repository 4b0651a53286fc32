# SPDX-License-Identifier: MIT
# test_rejudge.py - re-judging without re-running, on the fixture's failed
# web-fail job (its near-miss step failed on a needle made to miss): through
# the API with an HMAC key (still failing first, with its figures; refused
# unsigned), then with GRUB's real menu needle put under the asked tag in
# the server's DIR/tests/web-fail/needles: an operator presses Re-judge on
# the job page and sees the step "would pass" and the honest note; the
# stored result stays failed; the step's failure explanation shows its
# figures ("88 % < 96 %") and a heat-map that loads.
import json
import os
import subprocess
import sys
import urllib.error
import urllib.request

from weblib import Server, Browser, check, VIGIL, ROOT
from test_auth import sign_in

OP = ('rjop', 'rjop-password')


def add_operator(data):
    subprocess.run([VIGIL, 'user', 'add', OP[0], '--operator', '--data', data],
                   input=OP[1] + '\n', text=True, check=True, capture_output=True)


def fix_needle(data):
    """GRUB's real menu needle, carrying the tag the near-miss step asked for."""
    subprocess.run([sys.executable, os.path.join(ROOT, 'tests', 'web', 'distri-web-fail', 'make-needle.py'),
                    '--fixed', os.path.join(data, 'tests', 'web-fail', 'needles')], check=True)


def post_unsigned(s, path):
    req = urllib.request.Request(s.url + path, data=b'', method='POST')
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code


def api_checks(s, job):
    st, r = s.api('POST', f'/api/v1/jobs/{job}/rejudge')
    j = r['jobs'][0] if st == 200 else {}
    step = (j.get('steps') or [{}])[0]
    check('API (HMAC key): the near-miss step is re-judged and still fails', st == 200 and j.get('id') == job and
          step.get('module') == 'nearmiss' and step.get('would_pass') is False, (st, r))
    check('API: its best candidate with area figures against the required level',
          step.get('new', {}).get('needle') == 'web-nearmiss' and
          step['new']['areas'][0]['similarity'] == 88 and step['new']['areas'][0]['required'] == 96, step)
    check('API: the summary names it ("88 % < 96 %")', '88 % < 96 %' in j.get('summary', ''), j.get('summary'))
    check('API: refused without a key or a session', post_unsigned(s, f'/api/v1/jobs/{job}/rejudge') == 403)


def run():
    s = Server('rejudge', prepare=add_operator)
    b = Browser(s)
    try:
        job = next(j['id'] for j in s.fixture_jobs if j['test'] == 'web-fail' and j['result'] == 'failed')
        api_checks(s, job)
        fix_needle(s.data)

        b.get('/login?return_to=' + f'/tests/{job}')
        sign_in(b, *OP)
        btn = b.wait_for('button.job-rejudge-btn')
        check('an operator sees Re-judge on the job page', btn.text == 'Re-judge')
        btn.click()
        note = b.wait_for(f'.rj-job[data-job="{job}"] .rj-note')
        step = b.wait_for(f'.rj-job[data-job="{job}"] .rj-step[data-module="nearmiss"]')
        check('the near-miss step would pass now, with the new needle and its similarity',
              'rj-step-pass' in step.get_attribute('class') and 'would pass with web-nearmiss-fixed' in step.text
              and '100 %' in step.text, step.text)
        check('the honest note: the job must run on from the failed step',
              note.text.startswith('step would pass; the job must run on from here'), note.text)
        check('the failing module is named for a re-run from it',
              b.find(f'.rj-job[data-job="{job}"] .rj-runon[data-module="nearmiss"]'))
        check("the step's thumbnail links to the step", b.js(
            'const a = document.querySelector(".rj-step .rj-thumb"), i = a.querySelector("img");'
            'return a.getAttribute("href").endsWith("#step/nearmiss/1") && i.complete && i.naturalWidth > 0'))
        b.shot('rejudge-panel')
        st, last = s.api('GET', f'/api/v1/jobs/{job}/rejudge')
        check('the last re-judge is kept for the job', st == 200 and last.get('verdict') == 'would_run_on'
              and last.get('time'), (st, last))
        st, got = s.api('GET', f'/api/v1/jobs/{job}')
        check('the stored result is unchanged', got['job']['result'] == 'failed', got['job'].get('result'))

        b.get(f'/tests/{job}#step/nearmiss/1')
        ex = b.wait_for('.job-stepview .jx')
        check('the explanation names the best candidate and its figures',
              'web-nearmiss' in ex.text and '88 % < 96 %' in ex.text, ex.text)
        check('the heat-map of the area loads', lambda: b.wait_until(lambda: b.js(
            'const i = document.querySelector(".jx-heat"); return !!i && i.complete && i.naturalWidth > 0')))
        # The run wrote its own difference PNG ("diff" on the candidate): the
        # page shows that one; the server's heat-map (for results without
        # one) is asked for directly.
        with open(os.path.join(s.data, 'testresults', str(job), 'result-nearmiss.json')) as f:
            cand = json.load(f)['details'][0]['needles'][0]
        if cand.get('diff'):
            check("the run's own difference PNG is shown, said so", 'written by the run' in ex.text, ex.text)
        else:
            check('it says it is against the needle as it is now', 'as it is now' in ex.text, ex.text)
        shot = json.load(open(os.path.join(s.data, 'testresults', str(job), 'result-nearmiss.json')))['details'][0]['screenshot']
        with urllib.request.urlopen(f'{s.url}/tests/{job}/images/diff/{shot}?needle={cand["name"]}&area=0', timeout=60) as r:
            body = r.read()
            check("the server's heat-map of the area is a PNG", r.status == 200 and body[:8] == b'\x89PNG\r\n\x1a\n',
                  (r.status, body[:16]))
        b.js('document.querySelector(".jx").scrollIntoView()')
        b.shot('rejudge-explain')
        errs = [e for e in b.errors() if 'favicon' not in e and '403' not in e]
        check('no console error', not errs, errs)
    finally:
        b.quit()
        s.stop()
