# SPDX-License-Identifier: MIT
# test_job.py - the job page in Chromium on the fixture's real results: the
# module list with thumbnails and their areas, a step opened with the whole
# screenshot, the near-miss job's candidate needle beside its screen, the
# video playing and seeked by a step, the logs, markup in settings and
# comments shown as text, deep links, keys, tabs by hash, 390 px, the
# scenario's latest job, and the server's byte ranges (urllib); signed in
# (users made with `vigil user add`, the sign-in form): an operator
# restarts, clones and cancels from the header and writes and edits a comment
# carrying their name, a 'user' sees no buttons.
import json
import os
import subprocess
import urllib.error
import urllib.request

from selenium.webdriver.common.action_chains import ActionChains

from weblib import Server, Browser, check, VIGIL
from test_auth import sign_in

# name, role flag, password
USERS = [('jobop', '--operator', 'jobop-password'), ('viewer', None, 'viewer-password')]
MARKUP = '<b>bold</b> "><img src=x onerror=alert(3)> see poo#42'


def add_users(data):
    for name, flag, pw in USERS:
        subprocess.run([VIGIL, 'user', 'add', name, *([flag] if flag else []), '--data', data],
                       input=pw + '\n', text=True, check=True, capture_output=True)

# Console messages every page may log until the session and live view
# modules are built in (the page imports them on demand and copes).
OPTIONAL = ('favicon', '/static/session.js', '/static/live.js')


def errors(b):
    return [e for e in b.errors() if not any(o in e for o in OPTIONAL)]


def rng(s, path, header, more=None):
    """(status, headers, body) of a GET with a Range header (and more headers)."""
    req = urllib.request.Request(s.url + path, headers={**({'Range': header} if header else {}), **(more or {})})
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, r.headers, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers, e.read()


def check_ranges(s, job):
    path = f'/tests/{job}/file/video.webm'
    with open(os.path.join(s.data, 'testresults', str(job), 'video.webm'), 'rb') as f:
        whole = f.read()
    n = len(whole)
    st, hd, body = rng(s, path, None)
    check('file answer: 200 with Accept-Ranges: bytes', st == 200 and hd.get('Accept-Ranges') == 'bytes' and body == whole)
    st, hd, body = rng(s, path, 'bytes=0-99')
    check('Range bytes=0-99: 206, Content-Range, those bytes',
          st == 206 and hd.get('Content-Range') == f'bytes 0-99/{n}' and body == whole[:100], (st, dict(hd)))
    st, hd, body = rng(s, path, 'bytes=100-')
    check('Range bytes=100-: 206 to the end', st == 206 and hd.get('Content-Range') == f'bytes 100-{n - 1}/{n}'
          and body == whole[100:])
    st, hd, body = rng(s, path, 'bytes=-10')
    check('Range bytes=-10: the last 10 bytes', st == 206 and body == whole[-10:] and hd.get('Content-Range') == f'bytes {n - 10}-{n - 1}/{n}')
    st, hd, body = rng(s, path, f'bytes={n}-')
    check('Range past the end: 416 with Content-Range bytes */size', st == 416 and hd.get('Content-Range') == f'bytes */{n}', (st, dict(hd)))
    st, hd, body = rng(s, path, 'bytes=0-1,5-6')
    check('several ranges: the whole file, 200', st == 200 and body == whole)
    # A browser keeps what it has: the file's ETag answers 304 without the bytes.
    st, hd, body = rng(s, path, None)
    etag = hd.get('ETag')
    check('file answer: an ETag and Cache-Control: no-cache', etag and etag.startswith('"') and
          hd.get('Cache-Control') == 'no-cache', dict(hd))
    st, hd, body = rng(s, path, None, {'If-None-Match': etag})
    check('If-None-Match with its ETag: 304, no bytes, the same ETag', st == 304 and body == b'' and
          hd.get('ETag') == etag, (st, dict(hd)))
    st, hd, body = rng(s, path, None, {'If-None-Match': '"other"'})
    check('If-None-Match with another ETag: 200, the whole file', st == 200 and body == whole, st)


def check_files(s, grub, shell):
    """openQA's artefact URLs: screenshots and thumbnails under /images/,
    the logs a test uploaded under /file/ (from the job's ulogs/)."""
    d = os.path.join(s.data, 'testresults', str(grub))
    with open(os.path.join(d, 'boot-1.png'), 'rb') as f:
        shot = f.read()
    with open(os.path.join(d, '.thumbs', 'boot-1.png'), 'rb') as f:
        small = f.read()
    st, hd, body = rng(s, f'/tests/{grub}/images/boot-1.png', None)
    check('/tests/<id>/images/<name>.png: the screenshot', st == 200 and body == shot and hd.get('Content-Type') == 'image/png')
    st, hd, body = rng(s, f'/tests/{grub}/images/thumb/boot-1.png', None)
    check('/tests/<id>/images/thumb/<name>.png: its thumbnail', st == 200 and body == small and len(small) < len(shot))
    check('images/ serves pictures only', rng(s, f'/tests/{grub}/images/results.json', None)[0] == 400)
    os.unlink(os.path.join(d, '.thumbs', 'boot-1.png'))
    st, hd, body = rng(s, f'/tests/{grub}/images/thumb/boot-1.png', None)
    check('a screenshot without thumbnail: the thumbnail URL sends the screenshot', st == 200 and body == shot)
    st, j = s.api('GET', f'/api/v1/jobs/{shell}/details')
    check('details list the uploaded logs apart (ulogs)', st == 200 and j['job']['ulogs'] == ['commands-cmdline']
          and 'commands-cmdline' not in j['job']['logs'] and 'ulogs' not in j['job']['logs'], j['job'].get('ulogs'))
    st, hd, body = rng(s, f'/tests/{shell}/file/commands-cmdline', None)
    check('/tests/<id>/file/<name>: an uploaded log', st == 200 and b'console=' in body, (st, body[:80]))


def add_source(s, job):
    """Give the failing module a recorded source, as the runner records it
    (result-<module>.json "source" and each step's "line"), unless the
    fixture's run recorded one already. Returns the failing step's line."""
    d = os.path.join(s.data, 'testresults', str(job))
    p = os.path.join(d, 'result-nearmiss.json')
    with open(p) as f:
        r = json.load(f)
    if 'source' in r and r['details'][0].get('line'):
        return r['details'][0]['line']
    with open(os.path.join(s.data, 'tests', 'web-fail', 'tests', 'nearmiss.lua')) as f:
        src = f.read()
    line = next(i + 1 for i, l in enumerate(src.splitlines()) if 'assert_screen' in l)
    r['source'] = {'file': 'tests/nearmiss.lua', 'artefact': 'source-nearmiss.lua'}
    for step in r['details']:
        step['line'] = line
    with open(p, 'w') as f:
        json.dump(r, f)
    with open(os.path.join(d, 'source-nearmiss.lua'), 'w') as f:
        f.write(src)
    return line


def drop_source(s, job):
    """Make a job's results look as a runner that records no source left
    them (older vigil, or a Perl test module)."""
    d = os.path.join(s.data, 'testresults', str(job))
    for name in os.listdir(d):
        p = os.path.join(d, name)
        if name.startswith('source-'):
            os.unlink(p)
        elif name.startswith('result-') and name.endswith('.json'):
            with open(p) as f:
                r = json.load(f)
            r.pop('source', None)
            for step in r.get('details', []):
                step.pop('line', None)
            with open(p, 'w') as f:
                json.dump(r, f)


def key(b, k):
    ActionChains(b.d).send_keys(k).perform()


def open_step(b):
    return b.js('const v = document.querySelector(".job-stepview");'
                'return v ? v.dataset.module + "/" + v.dataset.step : null')


def signed_in(b, s, grub):
    """The header's buttons and the comment form as a 'user' and as an
    operator who restarts, cancels and comments."""
    b.get('/login?return_to=' + f'/tests/{grub}')
    sign_in(b, 'viewer', 'viewer-password')
    b.wait_until(lambda: b.js('return location.pathname') == f'/tests/{grub}' and b.find('#user .user-name'))
    b.wait_for('.job-page .job-head')
    check("a 'user' sees no restart or cancel button", not b.find('button.job-restart, button.job-cancel'))
    b.js('location.hash = "#comments"')
    b.wait_for('#job-panel-comments .job-comments')
    check("a 'user' gets no comment form", not b.find('.job-comment-form'))
    b.find('#user button.signout')[0].click()
    b.wait_for('#user a.signin')

    b.get('/login?return_to=' + f'/tests/{grub}')
    sign_in(b, 'jobop', 'jobop-password')
    restart = b.wait_for('button.job-restart')
    check('signed in as an operator: the header offers Restart', restart.text == 'Restart')
    b.shot('job-operator')
    before = max(j['id'] for j in s.api('GET', '/api/v1/jobs')[1]['jobs'])
    restart.click()
    clone = b.wait_until(lambda: (lambda p: int(p.rsplit('/', 1)[1]) if p != f'/tests/{grub}' else None)(
        b.js('return location.pathname')))
    check(f'Restart: on the clone\'s page (#{clone})', clone > before and b.wait_for('.job-title .job-id').text == f'#{clone}')
    st, j = s.api('GET', f'/api/v1/jobs/{grub}')
    check('Restart: the job names its clone', st == 200 and j['job']['clone_id'] == clone, j['job'].get('clone_id'))
    check('the clone is scheduled: the header offers Cancel', lambda: b.wait_for('button.job-cancel').text == 'Cancel')
    b.shot('job-clone')

    st, made = s.api('POST', '/api/v1/jobs', {'TEST': 'web-cancel', 'DISTRI': 'web-fail', 'VERSION': '1', 'FLAVOR': 'cd',
                                              'ARCH': 'x86_64', 'MACHINE': '64bit', 'BUILD': '3'})
    b.get(f'/tests/{made["id"]}')
    b.wait_for('button.job-cancel').click()
    # Read in one go: the page reloads under the test.
    check('Cancel: the page shows the job cancelled', lambda: b.wait_until(lambda: b.js(
        'const e = document.querySelector(".job-badge"); return !!e && e.textContent === "cancelled"')))
    check('Cancel: the server has it cancelled', s.api('GET', f'/api/v1/jobs/{made["id"]}')[1]['job']['state'] == 'cancelled')
    check('a cancelled job offers Restart again', lambda: b.wait_for('button.job-restart'))
    before = max(j['id'] for j in s.api('GET', '/api/v1/jobs')[1]['jobs'])
    b.wait_for('button.job-clone-new').click()
    made2 = b.wait_until(lambda: (lambda p: int(p.rsplit('/', 1)[1]) if p != f'/tests/{made["id"]}' else None)(
        b.js('return location.pathname')))
    st, c = s.api('GET', f'/api/v1/jobs/{made2}')
    check(f'Clone: a new job (#{made2}) with the settings, CLONED_FROM naming the original',
          made2 > before and c['job']['settings'].get('TEST') == 'web-cancel' and c['job']['settings'].get('BUILD') == '3'
          and c['job']['settings'].get('CLONED_FROM', '').endswith(f'/tests/{made["id"]}'), c['job'].get('settings'))
    check('Clone: the original stays as it was (no clone_id)',
          not s.api('GET', f'/api/v1/jobs/{made["id"]}')[1]['job'].get('clone_id'))

    b.get(f'/tests/{grub}#comments')
    text = b.wait_for('.job-comment-form textarea')
    text.send_keys(MARKUP)
    b.find('.job-comment-form button.job-comment-add')[0].click()
    mine = b.wait_until(lambda: [a for a in b.find('.job-comment') if a.find_elements('css selector', '.job-comment-edit')])
    check('a comment from the page carries the operator\'s name',
          mine[0].find_element('css selector', '.job-comment-author').text == 'jobop')
    check('its markup shows as text', mine[0].find_element('css selector', '.job-comment-text').text == MARKUP)
    check('no element from it, no alert', not b.find('.job-comment img, .job-comment b')
          and b.js('return window.__alerts.length') == 0)
    st, cs = s.api('GET', f'/api/v1/jobs/{grub}/comments')
    check('the API names the author too', st == 200 and cs[-1]['userName'] == 'jobop' and cs[-1]['text'] == MARKUP, cs[-1:])
    check('the fixture\'s comment (another author) offers no Edit', len(b.find('.job-comment-edit')) == 1)
    b.shot('job-comment-signed-in')
    mine[0].find_element('css selector', '.job-comment-edit').click()
    ed = b.wait_for('.job-comment-editor textarea')
    ed.clear()
    ed.send_keys('edited by its author')
    b.find('.job-comment-editor button.job-comment-save')[0].click()
    check('the author edits it from the page', lambda: b.wait_until(
        lambda: 'edited by its author' in [t.text for t in b.find('.job-comment-text')]))
    st, cs = s.api('GET', f'/api/v1/jobs/{grub}/comments')
    check('the edit is stored', cs[-1]['text'] == 'edited by its author' and cs[-1]['userName'] == 'jobop')
    st, _ = s.api('PUT', f'/api/v1/jobs/{grub}/comments/{cs[-1]["id"]}', {'text': 'not yours'})
    check('another key may not edit it (403)', st == 403, st)
    b.shot('job-comment-edited')
    check('signed in: no console error', lambda: not errors(b), b.errors())


def run():
    s = Server('job', prepare=add_users)
    b = Browser(s)
    grub, shell, fail = s.job('grub')['id'], s.job('shell')['id'], s.job('web-fail')['id']
    child = max(j['id'] for j in s.fixture_jobs if j['test'] == 'web-fail')
    try:
        # Record alerts instead of showing them, on every page this browser loads.
        b.d.execute_cdp_cmd('Page.addScriptToEvaluateOnNewDocument', {
            'source': 'window.__alerts = []; window.alert = m => window.__alerts.push(String(m));'})

        # --- details of a passed job: modules, thumbnails, areas ---
        b.get(f'/tests/{grub}')
        b.wait_for('.job-module .job-step')
        mods = b.js('return [...document.querySelectorAll(".job-module")].map(m => m.dataset.module + "=" +'
                    ' m.querySelector(".job-module-result").textContent)')
        check('job 1: module list with results', mods == ['boot=passed', 'menu=passed', 'cmdline=passed'], mods)
        check('job 1: header shows name and result', lambda: 'grub' in b.find('.job-title h1')[0].text
              and b.find('.job-badge')[0].text == 'passed')
        check('job 1: build link to the overview', lambda: 'build=1' in b.find('a.job-build')[0].get_attribute('href')
              and 'distri=grub' in b.find('a.job-build')[0].get_attribute('href'))
        check('job 1: a thumbnail per screenshot step', lambda: len(b.find('.job-step .job-thumb-shot img')) >= 10)
        check('job 1: matched areas drawn on the thumbnails', lambda: len(b.find('.job-thumb-shot .job-box-ok')) >= 4)
        thumb = b.wait_until(lambda: b.js(
            'const i = document.querySelector(".job-thumb-shot img");'
            'return i.complete && i.naturalWidth > 0 ? [i.naturalWidth, i.naturalHeight, i.src] : null'))
        check(f'job 1: tiles show the uploaded thumbnails ({thumb[0]}x{thumb[1]}, under the 1024 px screen)',
              thumb[0] < 1024 and thumb[2].endswith(f'/tests/{grub}/images/thumb/boot-1.png'), thumb)
        box = b.js('const i = document.querySelector(".job-module[data-module=boot] .job-thumb-shot img").getBoundingClientRect(),'
                   ' x = document.querySelector(".job-module[data-module=boot] .job-thumb-shot .job-box-ok").getBoundingClientRect();'
                   'return [(x.left - i.left) / i.width * 1024, (x.width / i.width) * 1024]')
        check('job 1: a thumbnail\'s area placed in screen coordinates (x 200, w 320)',
              abs(box[0] - 200) < 8 and abs(box[1] - 320) < 8, box)
        # The run's own figure (the lowest area's similarity; not always 100 %: the screen is live)
        with open(os.path.join(s.data, 'testresults', str(grub), 'result-boot.json')) as f:
            first = next(d for d in json.load(f)['details'] if d.get('area'))
        want = f"{min(int(a['similarity']) for a in first['area'])}%"
        check(f'job 1: similarity under a matched step ({want}, as in result-boot.json)',
              lambda: b.find('.job-module[data-module="boot"] .job-sim')[0].text == want)
        check('job 1: keys explained on the page', lambda: 'next failed step' in b.find('.job-keys')[0].text)
        check('job 1: worker named host:instance', lambda: b.wait_until(lambda: ':' in b.find('a.job-worker')[0].text))
        check('signed out: no restart or cancel button', lambda: not b.find('button.job-restart, button.job-cancel'))
        b.shot('job-details')

        # --- a step opened by a click: the whole screenshot with its areas ---
        b.find('.job-module[data-module="boot"] .job-step[data-step="1"] a.job-thumb')[0].click()
        b.wait_for('.job-stepview .job-full img')
        check('click on a step: hash #step/boot/1', lambda: b.js('return location.hash') == '#step/boot/1')
        check('step view: both matched areas of grub-menu', lambda: len(b.find('.job-stepview .job-box-ok')) == 2)
        geo = b.wait_until(lambda: b.js(
            'const i = document.querySelector(".job-stepview .job-full img"); if (!i.complete || !i.naturalWidth) return null;'
            'const r = i.getBoundingClientRect(), x = document.querySelector(".job-stepview .job-box-ok").getBoundingClientRect();'
            'return [(x.left - r.left) / r.width * 1024, (x.top - r.top) / r.height * 768, x.width / r.width * 1024]'))
        check('step view: area placed on the screenshot (x 200, y 10, w 320)',
              abs(geo[0] - 200) < 4 and abs(geo[1] - 10) < 4 and abs(geo[2] - 320) < 4, geo)
        full = b.js('const i = document.querySelector(".job-stepview .job-full img"); return [i.naturalWidth, i.src]')
        check('step view: the whole screenshot (1024 px) from /images/', full[0] == 1024
              and full[1].endswith(f'/tests/{grub}/images/boot-1.png'), full)
        check('step view: similarity label on the area', lambda: b.find('.job-stepview .job-box-label')[0].text == '100%')
        b.shot('job-step')

        # --- keys: next, previous, close ---
        key(b, 'j')
        check('key j: next step (menu 1)', lambda: b.wait_until(lambda: open_step(b) == 'menu/1'))
        check('key j: hash follows', lambda: b.js('return location.hash') == '#step/menu/1')
        key(b, 'j')
        check('key j again: menu 2', lambda: b.wait_until(lambda: open_step(b) == 'menu/2'))
        key(b, 'k')
        check('key k: back to menu 1', lambda: b.wait_until(lambda: open_step(b) == 'menu/1'))
        key(b, '\ue012')  # ArrowLeft
        check('arrow left: boot 1', lambda: b.wait_until(lambda: open_step(b) == 'boot/1'))
        key(b, '\ue00c')  # Escape
        check('Esc closes the step', lambda: b.wait_until(lambda: open_step(b) is None))

        # --- tabs follow the hash, the back button walks them ---
        b.js('location.hash = "#settings"')
        check('#settings: settings tab shown', lambda: b.wait_until(lambda: b.js(
            'return !document.getElementById("job-panel-settings").hidden && document.getElementById("job-panel-details").hidden')))
        check('#settings: a row per setting', lambda: b.wait_until(lambda: b.find('.job-settings tr[data-key="DISTRI"]')))
        b.js('location.hash = "#next_previous"')
        check('#next_previous shown', lambda: b.wait_until(lambda: b.js('return !document.getElementById("job-panel-next_previous").hidden')))
        b.d.back()
        check('back: settings again, no reload', lambda: b.wait_until(lambda: b.js(
            'return !document.getElementById("job-panel-settings").hidden && !!document.querySelector(".job-page")')))
        b.d.back()
        check('back: details again', lambda: b.wait_until(lambda: b.js('return !document.getElementById("job-panel-details").hidden')))

        # --- video: plays, a step's ▶ seeks it ---
        with open(os.path.join(s.data, 'testresults', str(grub), 'video_index.json')) as f:
            index = json.load(f)
        target = next(e for e in index if e['module'] == 'menu' and e['step'] == 8)
        b.find('.job-module[data-module="menu"] .job-step[data-step="8"] .job-seek')[0].click()
        check('▶ on a step: video tab', lambda: b.wait_until(lambda: b.js('return location.hash') == '#video'))
        b.wait_for('video.job-video')
        ready = b.wait_until(lambda: b.js('const v = document.querySelector("video.job-video");'
                                          'return v.readyState >= 2 && v.duration > 0 ? [v.readyState, v.duration] : null'))
        check(f'video loaded (readyState {ready[0]}, duration {ready[1]:.2f} s)', ready[1] > 0 and ready[1] != float('inf'))
        check(f'step click seeks the video to {target["time"]} s', lambda: b.wait_until(lambda: b.js(
            'const v = document.querySelector("video.job-video"); return !v.seeking && Math.abs(v.currentTime - arguments[0]) < 0.25',
            target['time'])), b.js('return document.querySelector("video.job-video").currentTime'))
        played = b.wait_until(lambda: b.js(
            'const v = document.querySelector("video.job-video"); if (v.paused) v.play().catch(() => {});'
            'return v.currentTime > arguments[0] + 0.2', target['time']))
        check('video plays on from there', played)
        b.js('document.querySelector("video.job-video").pause()')
        first = index[0]
        b.find(f'.job-vstep[data-module="{first["module"]}"][data-step="{first["step"]}"]')[0].click()
        check('video tab: a step button seeks too', lambda: b.wait_until(lambda: b.js(
            'const v = document.querySelector("video.job-video"); return !v.seeking && Math.abs(v.currentTime - arguments[0]) < 0.25',
            first['time'])))
        b.shot('job-video')
        check('job 1: no console error', lambda: not errors(b), b.errors())

        # --- the failing job: a deep link to the near miss, candidate beside the screen ---
        b.get(f'/tests/{fail}#step/nearmiss/1')
        b.wait_for('.job-stepview .job-compare')
        check('deep link #step/nearmiss/1 opens that step', lambda: open_step(b) == 'nearmiss/1')
        check('failed job: result failed, needs review', lambda: b.find('.job-badge')[0].text == 'failed'
              and b.find('.job-head .job-review'))
        check('near miss: candidate named', lambda: b.find('.job-cand-name')[0].text == 'web-nearmiss')
        cand = b.wait_until(lambda: b.js(
            'const i = document.querySelectorAll(".job-compare img")[1]; return i && i.complete && i.naturalWidth > 0 ? i.src : null'))
        check('near miss: candidate needle picture beside the screenshot', cand.endswith('/file/needle-web-nearmiss.png'), cand)
        sim = b.js('return document.querySelector(".job-stepview .job-box-fail .job-box-label").textContent')
        check(f'near miss: failed area with its similarity ({sim})', 80 <= int(sim.rstrip('%')) < 96)
        check('near miss: excluded area drawn grey', lambda: b.wait_until(lambda: b.find('.job-compare .job-box-exclude')))
        check('near miss: the step is marked for review', lambda: b.find('.job-stepview .job-review'))
        b.shot('job-nearmiss')
        key(b, '\ue00c')
        b.wait_until(lambda: open_step(b) is None)
        key(b, 'n')
        check('key n: next failed step', lambda: b.wait_until(lambda: open_step(b) == 'nearmiss/1'))

        # --- markup in settings and comments stays text ---
        b.js('location.hash = "#settings"')
        foo = b.wait_until(lambda: b.find('.job-settings tr[data-key="FOO"] .job-value'))[0]
        check('setting with <script> shown as text', foo.text == '<script>alert(1)</script>', foo.text)
        b.js('location.hash = "#comments"')
        c = b.wait_until(lambda: b.find('.job-comment-text'))[0]
        check('comment with markup shown as text', '"><img src=x onerror=alert(1)>' in c.text and '<script>alert(2)</script>' in c.text, c.text)
        check('comment: bug reference linked', lambda: b.find('.job-comment a.job-bugref')[0].get_attribute('href')
              == 'https://bugzilla.suse.com/show_bug.cgi?id=1234')
        check('comment: http(s) URL linked', lambda: any(a.get_attribute('href') == 'https://example.com/x' for a in b.find('.job-comment a')))
        check('comments tab counts them', lambda: b.find('#job-tab-comments')[0].text == 'Comments (1)')
        check('no injected element: no img[src=x], one script', lambda: not b.find('img[src="x"]')
              and len(b.find('script')) == 1)
        check('no alert ran', lambda: b.js('return window.__alerts.length') == 0)
        b.shot('job-comments')

        # --- dependencies, next & previous, investigation ---
        b.js('location.hash = "#dependencies"')
        check('dependencies: the chained child listed', lambda: b.wait_until(lambda: b.find(f'.job-dep[data-id="{child}"] a')))
        b.js('location.hash = "#next_previous"')
        rows = b.wait_until(lambda: b.find('.job-scenario tbody tr'))
        check('next & previous: both jobs of the scenario, this one marked',
              len(rows) == 2 and b.find(f'.job-scenario tr.job-current[data-id="{fail}"]'))
        b.js('location.hash = "#investigation"')
        check('investigation: says there is no good job to compare',
              lambda: 'No earlier job' in b.wait_until(lambda: b.find('#job-panel-investigation p.muted'))[0].text)
        check('failed job: no console error', lambda: not errors(b), b.errors())

        # --- source: the failing line marked, each step's line linked ---
        b.get(f'/tests/{grub}#source')
        check('source: the runner recorded the grub modules\' sources', lambda: b.wait_until(
            lambda: [e for e in b.find('.job-src-line') if 'assert_screen' in e.text]))
        drop_source(s, grub)
        b.d.refresh()  # the same URL again would only move to its anchor
        check('source not recorded: said so', lambda: 'Source not recorded' in b.wait_for('.job-nosource').text)
        line = add_source(s, fail)
        b.get(f'/tests/{fail}#source')
        mark = b.wait_for('.job-src-line.job-src-fail')
        check(f'source: failing line {line} marked', mark.get_attribute('data-line') == str(line))
        check('source: numbered lines, as text', lambda: len(b.find('.job-src-line')) >= line and 'assert_screen' in mark.text)
        b.find('.job-src-fail a.job-src-step')[0].click()
        check('source: the step link opens the step', lambda: b.wait_until(lambda: open_step(b) == 'nearmiss/1'))
        b.get(f'/tests/{fail}#source')
        b.wait_for('.job-src-line.job-src-fail')
        b.shot('job-source')

        # --- logs: serial text inline ---
        b.get(f'/tests/{shell}#logs')
        pre = b.wait_until(lambda: [p for p in b.find('details[data-file="serial0.txt"] pre') if 'VIGIL-SHELL-READY' in p.text])
        check('logs: serial output shown', bool(pre))
        check('logs: runner log listed with a download link', lambda: b.find('details[data-file="vigil-log.txt"] a.job-log-dl'))
        up = b.wait_for('.job-ulogs details[data-file="commands-cmdline"]')
        check('logs: the log the test uploaded (upload_logs) listed, closed', up.get_attribute('open') is None)
        up.find_element('css selector', 'summary').click()
        check('logs: the uploaded log opens as text', lambda: 'console=ttyS0' in b.wait_until(
            lambda: (lambda t: t if 'console=' in t else None)(up.find_element('css selector', 'pre').text)))
        b.shot('job-logs')
        b.get(f'/tests/{grub}#logs')
        check('logs: an empty serial log says so', lambda: b.wait_until(lambda: [
            p for p in b.find('details[data-file="serial0.txt"] pre') if p.text == '(empty)']))
        check('logs: no console error', lambda: not errors(b), b.errors())

        # --- /tests/latest resolves the newest job of the scenario, keeps the URL ---
        b.get('/tests/latest?distri=web-fail&version=1&flavor=cd&arch=x86_64&test=web-fail&machine=64bit')
        h1 = b.wait_for('.job-title .job-id')
        check(f'/tests/latest: renders the newest job (#{child})', h1.text == f'#{child}', h1.text)
        check('/tests/latest: the URL stays', lambda: b.js('return location.pathname') == '/tests/latest')
        b.js('location.hash = "#dependencies"')
        check('child job: its parent listed', lambda: b.wait_until(lambda: b.find(f'.job-dep[data-id="{fail}"]')))

        # --- a job not run yet opens on its live view ---
        st, made = s.api('POST', '/api/v1/jobs', {'TEST': 'web-wait', 'DISTRI': 'web-fail', 'VERSION': '1', 'FLAVOR': 'cd',
                                                  'ARCH': 'x86_64', 'MACHINE': '64bit', 'BUILD': '2'})
        check('a scheduled job made', st == 200 and made.get('id'), made)
        b.get(f'/tests/{made["id"]}')
        check('scheduled job: the live tab is shown first', lambda: b.wait_until(lambda: b.js(
            'const p = document.getElementById("job-panel-live"); return p && !p.hidden && !p.querySelector(".loading")')))
        b.js('location.hash = "#details"')
        check('scheduled job: details say there are no results yet', lambda: 'no results yet' in b.wait_until(
            lambda: b.find('#job-panel-details p.muted'))[0].text)
        check('scheduled job: no console error', lambda: not errors(b), b.errors())

        # --- dark theme, then 390 px ---
        b.d.execute_cdp_cmd('Emulation.setEmulatedMedia', {'features': [{'name': 'prefers-color-scheme', 'value': 'dark'}]})
        b.get(f'/tests/{fail}#step/nearmiss/1')
        b.wait_for('.job-compare img')
        check('dark theme follows the system', lambda: b.js(
            'return getComputedStyle(document.body).backgroundColor') != 'rgb(255, 255, 255)')
        b.shot('job-dark')
        b.d.execute_cdp_cmd('Emulation.setEmulatedMedia', {'features': []})
        b.d.set_window_size(390, 844)
        for path, css, name in ((f'/tests/{grub}', '.job-step', 'job-390'),
                                (f'/tests/{fail}#step/nearmiss/1', '.job-compare img', 'job-390-step'),
                                (f'/tests/{fail}#settings', '.job-settings', 'job-390-settings'),
                                (f'/tests/{fail}#source', '.job-src', 'job-390-source'),
                                (f'/tests/{shell}#logs', 'details[data-file="serial0.txt"] pre', 'job-390-logs')):
            b.get(path)
            b.wait_for(css)
            check(f'{path} at 390 px: no sideways scroll', b.no_side_scroll)
            b.shot(name)

        # --- the server: byte ranges of artefacts; module scripts stored as text ---
        check_ranges(s, grub)
        check_files(s, grub, shell)

        # --- signed in: restart, cancel, comments ---
        b.d.set_window_size(1280, 900)
        signed_in(b, s, grub)
        st, j = s.api('GET', f'/api/v1/jobs/{grub}')
        check('job modules carry their script path', st == 200 and j['job']['modules'][0]['script'] == 'tests/boot.lua',
              j['job']['modules'][0] if st == 200 else st)
    finally:
        b.quit()
        s.stop()
