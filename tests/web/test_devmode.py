# SPDX-License-Identifier: MIT
# test_devmode.py - developer mode from the live view: an operator signed
# in on /tests/<id>/live asks for a pause on the next failed check before
# the job starts; a real worker runs tests/integration/distri-devmode (GRUB
# rescue ISO); the failed check pauses, the page shows why, the paused
# step's screenshot and the link to the needle editor; a needle put into
# the server's distribution (as the editor saves it) makes "Retry check"
# pass; the next failed check is skipped from the page and the job ends
# failed. A visitor who is not signed in sees no controls.
import os
import shutil
import subprocess

from weblib import Server, Browser, check, ROOT, VIGIL, WAIT
from test_auth import sign_in
from test_job import add_users


def distribution(s):
    d = os.path.join(s.data, 'tests', 'devmode')
    shutil.copytree(os.path.join(ROOT, 'tests', 'integration', 'distri-devmode'), d)
    os.makedirs(os.path.join(d, 'needles'), exist_ok=True)
    for n in ('grub-menu', 'grub-cmdline'):
        for ext in ('json', 'png'):
            shutil.copy(os.path.join(ROOT, 'examples', 'grub', 'needles', f'{n}.{ext}'), os.path.join(d, 'needles'))
    return d


def run():
    s = Server('devmode', prepare=add_users)
    b = None
    worker = None
    log = None
    try:
        b = Browser(s)
        d = distribution(s)
        st, j = s.api('POST', '/api/v1/jobs', {'TEST': 'devmode', 'DISTRI': 'devmode', 'ARCH': 'x86_64',
                                               'MACHINE': '64bit', 'BUILD': 'devmode', 'NOVIDEO': '1'})
        check('the job is scheduled', st == 200, j)
        job = j['id']
        live = 'section.live-page'
        b.get(f'/tests/{job}/live')
        b.wait_for(f'{live} .devmode')
        check('not signed in: a sign-in link instead of controls',
              lambda: b.wait_until(lambda: b.js('return !document.querySelector(".devmode-signin").hidden')))
        b.get('/login?return_to=' + f'/tests/{job}/live')
        sign_in(b, 'jobop', 'jobop-password')
        b.wait_for(f'{live} .devmode-controls')
        check('signed in as an operator: the controls show',
              lambda: b.wait_until(lambda: b.js('return !document.querySelector(".devmode-controls").hidden')))
        b.click('.devmode-on-fail')
        check('"pause on the next failed check" is sent',
              lambda: b.wait_until(lambda: 'sent' in b.text('.devmode-msg')))
        log = open(os.path.join(s.tmp, 'worker.log'), 'w')
        worker = subprocess.Popen([VIGIL, 'worker', '--host', s.url, '--apikey', s.key, '--apisecret', s.secret,
                                   '--instance', '1', '--pool', os.path.join(s.tmp, 'pool')],
                                  stdout=log, stderr=subprocess.STDOUT)
        slow = WAIT * 8

        def paused():
            return b.js(f'return (document.querySelector("{live} .devmode") || {{dataset: {{}}}}).dataset.paused || ""')

        check('the failed check of module fix pauses the job',
              lambda: b.wait_until(lambda: paused() == 'screen_mismatch fix 1', slow), paused())
        check('the reason shows', 'devmode-fixed' in b.text('.devmode-reason'))
        check('the paused step\'s screenshot shows', lambda: b.wait_until(lambda: b.js(
            'const i = document.querySelector(".devmode-shot img"); return !!i && i.complete && i.naturalWidth > 0'),
            slow))
        href = b.js('const a = document.querySelector("a.devmode-edit"); return a ? a.href : ""')
        check('"Create/fix needle" opens the editor on that step',
              href.endswith(f'/tests/{job}/modules/fix/steps/1/edit'), href)
        check('the checkbox shows the runner\'s setting', b.js('return document.querySelector(".devmode-on-fail").checked'))
        b.js('document.querySelector(".devmode").scrollIntoView()')
        b.shot('devmode-paused')
        # The needle the editor saves, in the server's distribution.
        with open(os.path.join(d, 'needles', 'grub-cmdline.json')) as f:
            text = f.read().replace('"grub-cmdline"', '"devmode-fixed"')
        with open(os.path.join(d, 'needles', 'devmode-fixed.json'), 'w') as f:
            f.write(text)
        shutil.copy(os.path.join(d, 'needles', 'grub-cmdline.png'), os.path.join(d, 'needles', 'devmode-fixed.png'))
        b.click('button.devmode-retry')
        check('after "Retry check" the next module\'s failed check pauses: fix passed',
              lambda: b.wait_until(lambda: paused() == 'screen_mismatch give_up 1', slow), paused())
        check('"Pause at module" offers the job\'s modules',
              b.js('return [...document.querySelectorAll(".devmode-at option")].map(o => o.value).join(" ")')
              == ' boot fix give_up')
        b.click('button.devmode-skip')
        check('after "Skip check" the job ends failed', lambda: b.wait_until(
            lambda: b.js(f'return document.querySelector("{live}").dataset.ended || ""') == 'failed', slow))
        check('the panel goes with the end', b.js('return document.querySelector(".devmode").hidden'))
        b.shot('devmode-end')
        check('no console error', not [e for e in b.errors() if 'favicon' not in e], b.errors())
    finally:
        if worker:
            worker.terminate()
            try:
                worker.wait(60)
            except subprocess.TimeoutExpired:
                worker.kill()
                worker.wait()
        if log:
            log.close()
        if b:
            b.quit()
        s.stop()
