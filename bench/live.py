#!/usr/bin/python3
# SPDX-License-Identifier: MIT
# live.py - the live view's speed, end to end: a `vigil serve`, a `vigil
# worker` running tests/web/distri-live (the guest's screen changes every
# 200 ms for LIVE_SECONDS) and headless Chromium showing /tests/<id>/live.
# For every frame put on screen (the <img>'s load) the page's live.js
# records how old it is:
#   capture latency = load time - when the VNC update reached the runner
#   write latency   = load time - when the runner had written live.png
# (all wall clocks of this one machine). Frames a second are counted over
# the ticker module, while the screen is known to change; the server's and
# the worker's and the runner's CPU over that window are reported too. The first frame (the
# one stored before the page came) is left out.
# usage: live.py [OUT.json]   (LIVE_SECONDS=20 by default)
import hashlib
import hmac
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
VIGIL = os.environ.get('VIGIL', os.path.join(ROOT, 'build', 'vigil'))
SECONDS = int(os.environ.get('LIVE_SECONDS', '20'))
from selenium import webdriver  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

# Put on the page before the first frame: one record per frame on screen.
RECORDER = '''
const sec = document.querySelector('section.live-page');
window.benchFrames = [];
new MutationObserver(() => {
  const m = document.querySelector('section.live-page .live-module');
  window.benchFrames.push({frames: +sec.dataset.frames, age: +sec.dataset.age,
    written: +sec.dataset.ageWritten, module: m ? m.textContent : '', at: performance.now(),
    bytes: Math.round((sec.querySelector('img.live-frame').src.length - 22) * 3 / 4)});
}).observe(sec, {attributes: true, attributeFilter: ['data-frames']});
'''


def free_port():
    s = socket.socket()
    s.bind(('127.0.0.1', 0))
    port = s.getsockname()[1]
    s.close()
    return port


def cpu_s(pid):
    with open(f'/proc/{pid}/stat') as f:
        fields = f.read().rsplit(')', 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf('SC_CLK_TCK')


def child_of(pid):
    """The first process whose parent is pid (the worker's runner), or None."""
    for d in os.listdir('/proc'):
        if d.isdigit():
            try:
                with open(f'/proc/{d}/stat') as f:
                    if int(f.read().rsplit(')', 1)[1].split()[1]) == pid:
                        return int(d)
            except (OSError, ValueError, IndexError):
                continue
    return None


def pct(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(round(p / 100 * (len(v) - 1))))]


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else None
    tmp = tempfile.mkdtemp(prefix='vigil-bench-live-')
    data = os.path.join(tmp, 'data')
    os.makedirs(os.path.join(data, 'tests'))
    shutil.copytree(os.path.join(ROOT, 'tests', 'web', 'distri-live'), os.path.join(data, 'tests', 'live'))
    key, secret = subprocess.run([VIGIL, 'apikey', 'new', '--data', data, '--admin'], capture_output=True,
                                 text=True, check=True).stdout.split()
    port = free_port()
    url = f'http://127.0.0.1:{port}'
    procs = []
    log = open(os.path.join(tmp, 'log.txt'), 'w')
    server = subprocess.Popen([VIGIL, 'serve', '--listen', f'127.0.0.1:{port}', '--data', data], stdout=log,
                              stderr=subprocess.STDOUT)
    procs.append(server)
    driver = None
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(url + '/api/v1/jobs', timeout=5).read()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError('vigil serve did not start')
                time.sleep(0.1)
        body = urllib.parse.urlencode({'TEST': 'live', 'DISTRI': 'live', 'ARCH': 'x86_64', 'BUILD': 'bench',
                                       'LIVE_SECONDS': str(SECONDS)}).encode()
        t = str(time.time())
        sig = hmac.new(secret.encode(), ('/api/v1/jobs' + t).encode(), hashlib.sha1).hexdigest()
        req = urllib.request.Request(url + '/api/v1/jobs', data=body, method='POST', headers={
            'X-API-Key': key, 'X-API-Microtime': t, 'X-API-Hash': sig})
        job = json.load(urllib.request.urlopen(req, timeout=30))['id']
        worker = subprocess.Popen([VIGIL, 'worker', '--host', url, '--apikey', key, '--apisecret', secret,
                                   '--instance', '1', '--pool', os.path.join(tmp, 'pool')], stdout=log,
                                  stderr=subprocess.STDOUT)
        procs.append(worker)
        o = webdriver.ChromeOptions()
        for a in ('--headless=new', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage',
                  '--window-size=1280,900'):
            o.add_argument(a)
        o.binary_location = '/usr/bin/chromium'
        driver = webdriver.Chrome(service=Service('/usr/bin/chromedriver'), options=o)
        driver.get(f'{url}/tests/{job}/live')
        WebDriverWait(driver, 60).until(lambda d: d.execute_script(
            'return !!document.querySelector("section.live-page .live-head")'))
        driver.execute_script(RECORDER)
        WebDriverWait(driver, 600).until(lambda d: d.execute_script(
            'return (document.querySelector("section.live-page .live-module") || {}).textContent === "ticker"'))
        runner = child_of(worker.pid)
        cpu0 = (time.monotonic(), cpu_s(server.pid), cpu_s(worker.pid), cpu_s(runner) if runner else 0)
        # The ticker's end (the step count stops at LIVE_SECONDS), before the runner exits.
        WebDriverWait(driver, 600).until(lambda d: d.execute_script(
            'const s = document.querySelector("section.live-page .live-step"); '
            f'return !!s && s.textContent.startsWith("step {SECONDS} ") || '
            '!!document.querySelector("section.live-page").dataset.ended'))
        cpu1 = (time.monotonic(), cpu_s(server.pid), cpu_s(worker.pid), cpu_s(runner) if runner else 0)
        WebDriverWait(driver, 600).until(lambda d: d.execute_script(
            'return !!document.querySelector("section.live-page").dataset.ended'))
        frames = driver.execute_script('return window.benchFrames')[1:]
        result = driver.execute_script('return document.querySelector("section.live-page").dataset.ended')
    finally:
        if driver:
            driver.quit()
        for p in reversed(procs):
            p.terminate()
            try:
                p.wait(60)
            except subprocess.TimeoutExpired:
                p.kill()
        log.close()
    ticker = [f for f in frames if f['module'] == 'ticker']
    span = (ticker[-1]['at'] - ticker[0]['at']) / 1000 if len(ticker) > 1 else 0
    fps = (len(ticker) - 1) / span if span else 0
    ages = [f['age'] for f in frames if f['age'] > 0]
    written = [f['written'] for f in frames if f['written'] > 0]
    wall = cpu1[0] - cpu0[0]
    size = statistics.median(f['bytes'] for f in frames) if frames else 0
    res = {
        'job_result': result, 'live_seconds': SECONDS, 'frames_on_screen': len(frames),
        'median_png_bytes': size, 'ticker_frames': len(ticker), 'ticker_span_s': round(span, 2), 'fps': round(fps, 2),
        'capture_to_screen_ms': {'median': statistics.median(ages), 'p90': pct(ages, 90), 'max': max(ages)}
        if ages else None,
        'written_to_screen_ms': {'median': statistics.median(written), 'p90': pct(written, 90),
                                 'max': max(written)} if written else None,
        'server_cpu_pct': round(100 * (cpu1[1] - cpu0[1]) / wall, 1) if wall else None,
        'worker_cpu_pct': round(100 * (cpu1[2] - cpu0[2]) / wall, 1) if wall else None,
        'runner_cpu_pct': round(100 * (cpu1[3] - cpu0[3]) / wall, 1) if wall else None,
    }
    print(f'live view: job {result}; {len(frames)} frames on screen, {fps:.2f} frames/s over the ticker '
          f'({len(ticker)} frames in {span:.1f} s, screen changing every 200 ms; PNGs of {size / 1024:.0f} KiB)')
    if ages:
        print(f'  VNC capture -> on screen: median {res["capture_to_screen_ms"]["median"]:.0f} ms, '
              f'p90 {res["capture_to_screen_ms"]["p90"]:.0f} ms, max {res["capture_to_screen_ms"]["max"]:.0f} ms')
    if written:
        print(f'  live.png written -> on screen: median {res["written_to_screen_ms"]["median"]:.0f} ms, '
              f'p90 {res["written_to_screen_ms"]["p90"]:.0f} ms, max {res["written_to_screen_ms"]["max"]:.0f} ms')
    print(f'  CPU over the ticker: server {res["server_cpu_pct"]} %, worker {res["worker_cpu_pct"]} %, '
          f'runner (VNC, video, live.png) {res["runner_cpu_pct"]} % of a core')
    if out:
        with open(out, 'w') as f:
            json.dump(res, f, indent=1)
    shutil.rmtree(tmp, ignore_errors=True)
    return 0 if result == 'passed' and fps >= 2 and ages and pct(ages, 90) <= 1000 else 1


if __name__ == '__main__':
    sys.exit(main())
