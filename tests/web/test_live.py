# SPDX-License-Identifier: MIT
# test_live.py - the live view: event streams hold no handler thread (20
# open on a server with 4 threads, the API still answers; the per-client
# limit answers 429), then a real job (tests/web/distri-live: the guest's
# screen changes every 200 ms) run by a real worker while Chromium watches
# /tests/<id>/live: frames keep arriving, the module and step update, the
# runner's output shows as text, the end shows. Speed is measured by
# bench/live.py, not here.
import http.client
import os
import shutil
import subprocess

from weblib import Server, Browser, check, ROOT, VIGIL, WAIT

LIVESTREAM_PER_CLIENT = 32


def open_stream(s, job):
    """An open event stream of job: (connection, response) once its headers are in."""
    c = http.client.HTTPConnection('127.0.0.1', s.port, timeout=WAIT)
    c.request('GET', f'/tests/{job}/streaming', headers={'Accept': 'text/event-stream'})
    return c, c.getresponse()


def next_event(resp):
    """The name and data of a stream's next event (comments and the retry hint passed over)."""
    name = data = None
    while True:
        line = resp.fp.readline().decode().rstrip('\n')
        if line.startswith('event: '):
            name = line[7:]
        elif line.startswith('data: '):
            data = line[6:]
        elif line == '' and name:
            return name, data


def events_until_end(resp):
    names = []
    while not names or names[-1] != 'end':
        names.append(next_event(resp)[0])
    return names


def streams_hold_no_thread(s, b):
    # A job no worker takes: its streams stay open, waiting.
    st, j = s.api('POST', '/api/v1/jobs', {'TEST': 'waiting', 'DISTRI': 'live', 'ARCH': 'x86_64',
                                           'WORKER_CLASS': 'nobody'})
    check('a job no worker takes is scheduled', st == 200, j)
    job = j['id']
    conns = []
    try:
        for _ in range(20):
            conns.append(open_stream(s, job))
        check('20 streams open: 200 text/event-stream',
              all(r.status == 200 and r.getheader('Content-Type').startswith('text/event-stream') for _, r in conns))
        check('a stream starts with the job\'s status', next_event(conns[0][1])[0] == 'status')
        check('a stream is not cached', conns[0][1].getheader('Cache-Control') == 'no-store')
        # With 4 handler threads, 20 streams that held one each would leave none.
        for path in ('/api/v1/jobs?limit=5', f'/api/v1/jobs/{job}', '/tests'):
            c = http.client.HTTPConnection('127.0.0.1', s.port, timeout=WAIT)
            c.request('GET', path)
            check(f'with 20 streams open, GET {path} answers', c.getresponse().status == 200)
            c.close()
        st, live = s.api('GET', f'/api/v1/jobs/{job}/live')
        check('the job counts 20 viewers', live.get('viewers') == 20, live)
        for _ in range(LIVESTREAM_PER_CLIENT - 20):
            conns.append(open_stream(s, job))
        c, r = open_stream(s, job)
        check(f'stream {LIVESTREAM_PER_CLIENT + 1} from one address: 429', r.status == 429, r.status)
        c.close()
        # Clients that leave are noticed while their streams wait.
        for c, _ in conns[20:]:
            c.close()
        del conns[20:]
        check('streams whose clients left are closed: 20 viewers again',
              lambda: b.wait_until(lambda: s.api('GET', f'/api/v1/jobs/{job}/live')[1]['viewers'] == 20))
    finally:
        # Cancelled, the job ends its streams (event "end"), which frees them.
        s.api('POST', f'/api/v1/jobs/{job}/cancel')
        check('a cancelled job ends its streams: status, then end',
              lambda: events_until_end(conns[1][1])[-2:] == ['status', 'end'])
        for c, _ in conns:
            c.close()
    check('the ended streams are gone',
          lambda: b.wait_until(lambda: s.api('GET', f'/api/v1/jobs/{job}/live')[1]['viewers'] == 0))


def a_finished_job(s, b):
    job = s.job('grub')['id']
    b.get(f'/tests/{job}/live')
    check('a finished job\'s live view says it is over: passed', lambda: b.wait_until(
        lambda: b.js('return (document.querySelector("section.live-page") || {dataset: {}}).dataset.ended')
        == 'passed'))
    check('... and shows no screen', b.js('return document.querySelector("section.live-page .live-screen").hidden'))
    b.shot('live-finished')


def watch_a_job(s, b):
    shutil.copytree(os.path.join(ROOT, 'tests', 'web', 'distri-live'), os.path.join(s.data, 'tests', 'live'))
    st, j = s.api('POST', '/api/v1/jobs', {'TEST': 'live', 'DISTRI': 'live', 'ARCH': 'x86_64', 'MACHINE': '64bit',
                                           'BUILD': 'live', 'LIVE_SECONDS': '15'})
    check('the live job is scheduled', st == 200, j)
    job = j['id']
    log = open(os.path.join(s.tmp, 'worker.log'), 'w')
    worker = subprocess.Popen([VIGIL, 'worker', '--host', s.url, '--apikey', s.key, '--apisecret', s.secret,
                               '--instance', '1', '--pool', os.path.join(s.tmp, 'pool')],
                              stdout=log, stderr=subprocess.STDOUT)
    try:
        b.get(f'/tests/{job}/live')
        b.wait_for('section.live-page .live-head')
        b.shot('live-start')
        # Booting takes a while under TCG on a busy machine: bounds, no pauses.
        slow = WAIT * 8
        live = 'section.live-page'

        def data(name):
            return b.js(f'return (document.querySelector("{live}") || {{dataset: {{}}}}).dataset.{name} || ""')

        check('the first frame is on screen', lambda: b.wait_until(lambda: int(data('frames') or 0) >= 1, slow))
        check('the module being run shows: ticker',
              lambda: b.wait_until(lambda: b.find(f'{live} .live-module')[0].text == 'ticker', slow))
        b.shot('live-ticker')
        step0 = b.find(f'{live} .live-step')[0].text
        at = int(data('frames'))
        check('frames keep coming while the screen changes (10 more)',
              lambda: b.wait_until(lambda: int(data('frames')) >= at + 10, slow))
        check(f'the step moves on from "{step0}"',
              lambda: b.wait_until(lambda: b.find(f'{live} .live-step')[0].text not in ('', step0), slow))
        check('the frame is a PNG of the VM\'s screen',
              b.js(f'const i = document.querySelector("{live} img.live-frame"); '
                   'return i.src.startsWith("data:image/png;base64,") && i.naturalWidth === 1024'))
        check('the indicator shows fps and age', lambda: 'fps' in b.find(f'{live} .live-rate')[0].text)
        check('the runner\'s output shows, as text',
              lambda: b.wait_until(lambda: 'ticker: record_info' in b.find(f'{live} pre.live-log')[0].text, slow))
        check('the modules list shows boot done',
              lambda: b.wait_until(lambda: 'boot ok' in b.find(f'{live} .live-modules')[0].text, slow))
        b.shot('live-running')
        check('the end shows: passed',
              lambda: b.wait_until(lambda: data('ended') == 'passed', slow))
        check('the end links to the job', b.find(f'{live} .live-end a')[0].get_attribute('href').endswith(f'/tests/{job}'))
        b.shot('live-end')
        print(f'     ({data("frames")} frames on screen, last {data("fps")} fps, age {data("age")} ms)')
        check('live view: no console error', not [e for e in b.errors() if 'favicon' not in e], b.errors())
        b.d.set_window_size(390, 844)
        check('live view at 390 px: no sideways scroll', b.no_side_scroll)
        b.shot('live-end-390')
        st, res = s.api('GET', f'/api/v1/jobs/{job}')
        check('the job passed', res['job']['result'] == 'passed', res)
        c = http.client.HTTPConnection('127.0.0.1', s.port, timeout=WAIT)
        c.request('GET', f'/tests/{job}/file/source-ticker.lua')
        r = c.getresponse()
        check('the module source is served', r.status == 200 and b'TICK' in r.read())
        c.close()
    finally:
        worker.terminate()
        try:
            worker.wait(60)
        except subprocess.TimeoutExpired:
            worker.kill()
            worker.wait()
        log.close()


def run():
    s = Server('live', ['--threads', '4'])
    b = None
    try:
        b = Browser(s)
        streams_hold_no_thread(s, b)
        a_finished_job(s, b)
        watch_a_job(s, b)
    finally:
        if b:
            b.quit()
        s.stop()
