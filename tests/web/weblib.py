# SPDX-License-Identifier: MIT
# weblib.py - what the browser suites share: a `vigil serve` started on a
# copy of the fixture (fixture.sh: real results of example jobs), Debian's
# headless Chromium driven by chromedriver through python3-selenium, the
# check counters, a screenshot of every page under the suite's output, and
# an openQA-signed API client (HMAC as openqa-cli signs).
import hashlib
import hmac
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request

from selenium import webdriver
from selenium.common.exceptions import TimeoutException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))
VIGIL = os.environ.get('VIGIL', os.path.join(ROOT, 'build', 'vigil'))
TEST_TMP = os.environ.get('VIGIL_TEST_TMP', '/tmp')
# Every wait is a bound on something that must happen, never a pause: a
# busy machine only makes a passing check slower. WAIT_SCALE stretches them.
WAIT_SCALE = float(os.environ.get('WAIT_SCALE', '4'))
WAIT = 15 * WAIT_SCALE

passed = 0
failed = 0


def check(desc, cond, detail=''):
    """Count one check; cond is a bool or a callable returning one (an
    exception counts as a failure, with its text)."""
    global passed, failed
    try:
        ok = cond() if callable(cond) else bool(cond)
    except Exception as e:  # a failed check, not a crashed suite
        ok, detail = False, f'{type(e).__name__}: {e}'
    if ok:
        passed += 1
        print(f'ok   {desc}', flush=True)
    else:
        failed += 1
        print(f'FAIL {desc}' + (f' ({detail})' if detail else ''), flush=True)
    return ok


def finish():
    print(f'{passed} passed, {failed} failed', flush=True)
    sys.exit(1 if failed else 0)


def free_port():
    s = socket.socket()
    s.bind(('127.0.0.1', 0))
    port = s.getsockname()[1]
    s.close()
    return port


def fixture():
    """The fixture's directory (made by fixture.sh on first use)."""
    out = subprocess.run(['sh', 'tests/web/fixture.sh'], cwd=ROOT, capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError('fixture.sh failed: ' + out.stdout + out.stderr)
    return out.stdout.strip().splitlines()[-1]


class Server:
    """`vigil serve` on a private copy of the fixture's data (so a suite's
    writes never reach another suite). prepare(data_dir), when given, runs
    on the copy before the server starts (e.g. `vigil user add`)."""

    def __init__(self, name, extra_args=(), prepare=None):
        fix = fixture()
        self.tmp = os.path.join(TEST_TMP, 'web-' + name)
        shutil.rmtree(self.tmp, ignore_errors=True)
        os.makedirs(self.tmp)
        self.data = os.path.join(self.tmp, 'data')
        shutil.copytree(os.path.join(fix, 'data'), self.data, symlinks=True)
        if prepare:
            prepare(self.data)
        with open(os.path.join(fix, 'key')) as f:
            self.key, self.secret = f.read().split()
        with open(os.path.join(fix, 'jobs.json')) as f:
            self.fixture_jobs = json.load(f)['jobs']
        self.shots = os.path.join(self.tmp, 'shots')
        os.makedirs(self.shots)
        self.port = free_port()
        self.url = f'http://127.0.0.1:{self.port}'
        self.log = open(os.path.join(self.tmp, 'serve.log'), 'w')
        self.proc = subprocess.Popen([VIGIL, 'serve', '--listen', f'127.0.0.1:{self.port}', '--data', self.data,
                                      *extra_args], stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 120
        while True:
            try:
                urllib.request.urlopen(self.url + '/api/v1/jobs?limit=1', timeout=5).read()
                break
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f'vigil serve did not start (see {self.log.name})')
                time.sleep(0.1)

    def job(self, test):
        """The first fixture job of that TEST."""
        return next(j for j in self.fixture_jobs if j['test'] == test)

    def api(self, method, path, params=None, key=None, secret=None):
        """A signed API call (openQA's X-API-Key/-Microtime/-Hash; the fixture's
        key unless key and secret are given) -> (status, parsed JSON or text)."""
        key, secret = key or self.key, secret or self.secret
        target = path
        body = None
        if params:
            q = urllib.parse.urlencode(params)
            if method == 'GET':
                target = f'{path}?{q}'
            else:
                body = q.encode()
        t = str(time.time())
        digest = hmac.new(secret.encode(), (target + t).encode(), hashlib.sha1).hexdigest()
        req = urllib.request.Request(self.url + target, data=body, method=method, headers={
            'X-API-Key': key, 'X-API-Microtime': t, 'X-API-Hash': digest, 'Accept': 'application/json'})
        try:
            with urllib.request.urlopen(req, timeout=60) as r:
                status, raw = r.status, r.read()
        except urllib.error.HTTPError as e:
            status, raw = e.code, e.read()
        try:
            return status, json.loads(raw)
        except ValueError:
            return status, raw.decode(errors='replace')

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()


class Browser:
    """Headless Chromium. get() loads a page of the server; shot() saves a
    screenshot under the server's output; wait_for() waits for a CSS
    selector (the page's main data in the DOM)."""

    def __init__(self, server, width=1280, height=900):
        self.server = server
        o = webdriver.ChromeOptions()
        for a in ('--headless=new', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage',
                  f'--window-size={width},{height}', '--autoplay-policy=no-user-gesture-required',
                  '--mute-audio'):
            o.add_argument(a)
        o.binary_location = '/usr/bin/chromium'
        o.set_capability('goog:loggingPrefs', {'browser': 'ALL'})
        self.d = webdriver.Chrome(service=Service('/usr/bin/chromedriver'), options=o)
        self.d.set_page_load_timeout(WAIT * 2)

    def get(self, path):
        self.d.get(self.server.url + path)

    def wait_for(self, css, timeout=None):
        """The first element matching css, once present and the page's
        script has rendered (web/app.js marks <html data-rendered>; before,
        the server's first view may show the same data without controls,
        and the script's render replaces those elements): TimeoutException
        after the bound."""
        def found(d):
            return self.rendered() and d.find_element(By.CSS_SELECTOR, css)
        return WebDriverWait(self.d, timeout or WAIT).until(found)

    def rendered(self):
        """Whether the page's script has rendered it (see wait_for); true
        when no page of vigil is loaded (no <main id="main">)."""
        return self.d.execute_script("return !document.getElementById('main') || "
                                     "document.documentElement.hasAttribute('data-rendered')")

    def wait_until(self, fn, timeout=None):
        """fn() once true, after the page's script has rendered (see wait_for)."""
        return WebDriverWait(self.d, timeout or WAIT).until(lambda d: self.rendered() and fn())

    def find(self, css):
        return self.d.find_elements(By.CSS_SELECTOR, css)

    def text(self, css):
        """The text of the first element matching css now ('' when none), read in
        one step (an element a page re-renders cannot go stale in between)."""
        return self.d.execute_script('const e = document.querySelector(arguments[0]); return e ? e.textContent : ""', css)

    def click(self, css):
        """Click the first element matching css now, in one step (see text); False when none."""
        return self.d.execute_script('const e = document.querySelector(arguments[0]); if (!e) return false; '
                                     'e.click(); return true', css)

    def js(self, script, *args):
        return self.d.execute_script(script, *args)

    def shot(self, name):
        path = os.path.join(self.server.shots, name + '.png')
        self.d.save_screenshot(path)
        return path

    def errors(self):
        """Console errors and CSP violations since the last call (favicon and expected 4xx excluded by the caller)."""
        return [e['message'] for e in self.d.get_log('browser') if e['level'] == 'SEVERE']

    def no_side_scroll(self):
        return self.js('return document.documentElement.scrollWidth <= window.innerWidth + 1')

    def quit(self):
        self.d.quit()


__all__ = ['check', 'finish', 'Server', 'Browser', 'By', 'TimeoutException', 'WAIT']
