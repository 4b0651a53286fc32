# SPDX-License-Identifier: MIT
# test_editor.py - the needle editor in Chromium on the fixture's failed
# web-fail job: opened from the near-miss step's "Edit needle" link, it
# starts from the candidate, shows the server's live similarity, which
# changes as an area is moved and resized with real mouse drags; an
# operator saves a new needle (files on disk in openQA's layout, a git
# commit authored by them, the distribution's hash changed), a second save
# asks before replacing it; hostile names show as text; a reader may match
# but not save.
import json
import os
import subprocess
import urllib.error
import urllib.request

from selenium.webdriver.common.action_chains import ActionChains

from weblib import Server, Browser, check, VIGIL
from test_auth import sign_in

OP = ('needleop', 'needleop-password')
HERE = os.path.dirname(os.path.abspath(__file__))


def prepare(data):
    subprocess.run([VIGIL, 'user', 'add', OP[0], '--operator', '--data', data],
                   input=OP[1] + '\n', text=True, check=True, capture_output=True)
    nd = os.path.join(data, 'tests', 'web-fail', 'needles')
    for args in (['init', '-q'], ['add', '-A'],
                 ['-c', 'user.name=fixture', '-c', 'user.email=f@x', 'commit', '-qm', 'fixture needles']):
        subprocess.run(['git', '-C', nd, *args], check=True, capture_output=True)


def post_json(s, path, body):
    req = urllib.request.Request(s.url + path, data=json.dumps(body).encode(), method='POST',
                                 headers={'Content-Type': 'application/json'})
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, json.load(r)
    except urllib.error.HTTPError as e:
        return e.code, json.load(e)


def sim(b):
    v = b.find('#ne-verdict')
    return v[0].get_attribute('data-similarity') if v else None


def seq(b):
    v = b.find('#ne-verdict')
    return int(v[0].get_attribute('data-seq') or 0) if v else 0


def drag(b, canvas, fx, fy, tx, ty):
    """A real mouse drag between two image pixels of the canvas."""
    w = canvas.size['width'] / int(canvas.get_attribute('width'))
    cx, cy = canvas.size['width'] / 2, canvas.size['height'] / 2
    ActionChains(b.d).move_to_element_with_offset(canvas, int(fx * w - cx), int(fy * w - cy)).click_and_hold() \
        .move_by_offset(int((tx - fx) * w / 2), int((ty - fy) * w / 2)) \
        .move_by_offset(int((tx - fx) * w / 2), int((ty - fy) * w / 2)).release().perform()


def check_needle_pm(s):
    """A needle saved by the server (an operator's API key) loads in
    os-autoinst's own needle.pm, and on the job's other screenshots its
    tinycv matcher says what vigil's live match says (ok, where, how well)."""
    grub = next(j['id'] for j in s.fixture_jobs if j['test'] == 'grub')
    nd = os.path.join(s.data, 'tests', 'grub', 'needles')
    needle = {'tags': ['menu-edited'], 'properties': [],
              'area': [{'xpos': 18, 'ypos': 62, 'width': 400, 'height': 145, 'type': 'match', 'match': 90, 'margin': 20},
                       {'xpos': 30, 'ypos': 88, 'width': 200, 'height': 16, 'type': 'exclude'}]}
    st, j = s.api('POST', f'/tests/{grub}/modules/menu/steps/1', {'json': json.dumps(needle), 'needlename': 'menu-edited'})
    check('saved through the API with a key', st == 200 and j['json'] == 'menu-edited.json', (st, j))
    sims, agree = [], True
    for step in (1, 5, 8):
        shot = os.path.join(s.data, 'testresults', str(grub), f'menu-{step}.png')
        out = subprocess.run(['perl', os.path.join(HERE, '..', 'integration', 'needle_pm_match.pl'), nd,
                              'menu-edited.json', shot], capture_output=True, text=True)
        pm = json.loads(out.stdout) if out.returncode == 0 else None
        if step == 1:
            check('os-autoinst\'s needle.pm loads it (name, tags)', pm and pm['name'] == 'menu-edited'
                  and pm['tags'] == ['menu-edited'], out.stderr[-400:])
        st, v = post_json(s, f'/api/v1/jobs/{grub}/needle_match',
                          {'module': 'menu', 'step': step, 'image': 'menu-edited.json', 'needle': needle})
        ok = pm and st == 200 and pm['ok'] == v['match'] and len(pm['areas']) == len(v['areas']) and all(
            a['x'] == b['x'] and a['y'] == b['y'] and abs(a['similarity'] * 100 - b['similarity']) < 0.01
            for a, b in zip(pm['areas'], v['areas']))
        agree = agree and ok
        sims.append((step, pm and pm['areas'][0]['similarity'], st == 200 and v['areas'][0]['similarity']))
    check('tinycv and vigil agree on three screenshots, not all alike', agree and len({x[1] for x in sims}) > 1, sims)


def run():
    s = Server('editor', prepare=prepare)
    b = Browser(s)
    try:
        job = next(j['id'] for j in s.fixture_jobs if j['test'] == 'web-fail' and j['result'] == 'failed')
        nd = os.path.join(s.data, 'tests', 'web-fail', 'needles')

        # From the job page's step to the editor.
        sign_in(b, *OP, path='/login?return_to=' + f'/tests/{job}%23step/nearmiss/1')
        link = b.wait_for('.job-stepview a.job-sv-edit')
        check('the step viewer links to the editor at openQA\'s URL',
              link.get_attribute('href').endswith(f'/tests/{job}/modules/nearmiss/steps/1/edit'), link.get_attribute('href'))
        link.click()
        b.wait_until(lambda: sim(b) is not None)
        canvas = b.wait_for('canvas.ne-canvas')
        check('the canvas holds the whole screenshot', canvas.get_attribute('width') == '1024', canvas.get_attribute('width'))
        check('it starts from the candidate web-nearmiss',
              b.find('#ne-start')[0].get_attribute('value') == '0' and len(b.find('.ne-area')) == 2)
        first = float(sim(b))
        check('live match with the screenshot as image: the fresh needle matches (100%)', first == 100.0, first)
        b.js("const s = document.getElementById('ne-image'); s.value = s.options[1].value; s.dispatchEvent(new Event('change'))")
        b.wait_until(lambda: sim(b) is not None and float(sim(b)) < 99)
        near = float(sim(b))
        check('with the candidate\'s own image: the near miss the runner saw (88%)', 87 <= near <= 89, near)
        b.shot('editor-candidate')

        # Move the match area with the mouse: the similarity changes.
        n0 = seq(b)
        drag(b, canvas, 100, 120, 140, 150)
        b.wait_until(lambda: seq(b) > n0 and float(sim(b)) != near)
        moved = float(sim(b))
        x = int(b.find('.ne-area[data-index="0"] .ne-xpos')[0].get_attribute('value'))
        y = int(b.find('.ne-area[data-index="0"] .ne-ypos')[0].get_attribute('value'))
        check('a drag moved area 1 (by 40, 30 give or take a screen pixel) and the live similarity changed',
              abs(x - 58) <= 3 and abs(y - 92) <= 3 and moved != near, (x, y, near, moved))
        b.shot('editor-moved')
        # Resize from the bottom-right corner.
        n0 = seq(b)
        drag(b, canvas, x + 400, y + 145, x + 300, y + 100)
        b.wait_until(lambda: seq(b) > n0)
        area = {k: int(b.find(f'.ne-area[data-index="0"] .ne-{k}')[0].get_attribute('value'))
                for k in ('xpos', 'ypos', 'width', 'height')}
        check('a corner drag resized it', abs(area['width'] - 300) <= 3 and abs(area['height'] - 100) <= 3
              and area['xpos'] == x, area)
        area['type'] = 'match'
        ms = b.find('#ne-timing')[0].text
        check('the server time is shown', 'server' in ms and 'round trip' in ms, ms)

        # Back to the screenshot as the image, save as a new needle.
        b.js("const s = document.getElementById('ne-image'); s.value = ''; s.dispatchEvent(new Event('change'))")
        b.wait_until(lambda: float(sim(b)) == 100.0)
        b.find('#ne-workaround')[0].click()
        b.find('#ne-bugref')[0].send_keys('bsc#4242: theme change')
        name = b.find('#ne-name')[0]
        name.clear()
        name.send_keys('web-nearmiss-new')
        b.find('#ne-save')[0].click()
        st = b.wait_until(lambda: b.find('#ne-status')[0].get_attribute('data-saved'))
        check('saved: the page says so', st == 'web-nearmiss-new.json' and 'Saved' in b.find('#ne-status')[0].text)
        # The save re-judges the job (and its build's other failures on the tag) at once.
        rj = b.wait_for(f'#ne-rejudge .rj-job[data-job="{job}"] .rj-step[data-module="nearmiss"]')
        check('after the save: the failed step is re-judged and would now pass (a workaround: soft-fail)',
              'rj-step-pass' in rj.get_attribute('class') and 'would' in rj.text, rj.text)
        check('the job is not called passed: it must run on from the step',
              'run on' in b.find(f'#ne-rejudge .rj-job[data-job="{job}"] .rj-note')[0].text)
        b.shot('editor-saved')
        with open(os.path.join(nd, 'web-nearmiss-new.json')) as f:
            saved = json.load(f)
        check('NAME.json in openQA\'s layout', list(saved) == ['area', 'tags', 'properties']
              and saved['tags'] == ['web-nearmiss'] and saved['area'][0] == area
              and saved['properties'] == [{'name': 'workaround', 'value': 'bsc#4242: theme change'}], saved)
        shot = os.path.join(s.data, 'testresults', str(job), 'nearmiss-1.png')
        with open(shot, 'rb') as f1, open(os.path.join(nd, 'web-nearmiss-new.png'), 'rb') as f2:
            check('NAME.png is the full screenshot', f1.read() == f2.read())
        log = subprocess.run(['git', '-C', nd, 'log', '-1', '--format=%an|%s', '--name-only'],
                             capture_output=True, text=True).stdout
        check('a git commit of both files by the signed-in user',
              log.startswith(f'{OP[0]}|web-nearmiss-new for ') and 'web-nearmiss-new.json' in log
              and 'web-nearmiss-new.png' in log, log)

        # A second save asks first.
        b.find('#ne-save')[0].click()
        q = b.wait_for('#ne-question:not([hidden]) #ne-overwrite')
        check('a second save asks before replacing', 'exists already' in b.find('#ne-question')[0].text)
        b.shot('editor-overwrite')
        q.click()
        b.wait_until(lambda: 'Saved' in b.find('#ne-status')[0].text)
        n = subprocess.run(['git', '-C', nd, 'rev-list', '--count', 'HEAD'], capture_output=True, text=True).stdout.strip()
        check('replacing it: saved after the answer', n in ('2', '3'), n)

        # The API: reads may match, not save; hostile names are refused.
        st, j = post_json(s, f'/api/v1/jobs/{job}/needle_match',
                          {'module': 'nearmiss', 'step': 1, 'needle': {'area': [{'xpos': 0, 'ypos': 0, 'width': 50,
                                                                                  'height': 50, 'type': 'match'}]}})
        check('needle_match: public, the answer has match, similarity, areas, ms',
              st == 200 and j['match'] is True and j['areas'][0]['similarity'] == 100 and 'ms' in j, (st, j))
        st, j = s.api('POST', f'/tests/{job}/modules/nearmiss/steps/1',
                      {'json': json.dumps(saved), 'needlename': '../evil'})
        check('a path in the needle name: 400', st == 400, (st, j))
        req = urllib.request.Request(s.url + f'/tests/{job}/modules/nearmiss/steps/1',
                                     data=b'json=%7B%7D&needlename=x', method='POST')
        try:
            urllib.request.urlopen(req, timeout=30)
            code = 200
        except urllib.error.HTTPError as e:
            code = e.code
        check('saving unsigned: 403', code == 403, code)

        check_needle_pm(s)

        bad = '%3Cimg%20src%3Dx%20onerror%3Dalert(1)%3E'
        b.get(f'/tests/{job}/modules/{bad}/steps/1/edit')
        b.wait_for('#main .error')
        check('a hostile module name: shown as text, nothing injected',
              not b.find('#main img') and not b.find('#main script'), b.find('#main')[0].text)
        b.shot('editor-hostile')
        errs = [e for e in b.errors() if 'favicon' not in e and '400' not in e and '404' not in e and '409' not in e
                and 'rejudge.js' not in e]
        check('no console errors', not errs, errs)
    finally:
        b.quit()
        s.stop()
