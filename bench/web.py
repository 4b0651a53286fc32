#!/usr/bin/python3
# SPDX-License-Identifier: MIT
# web.py - the web pages' speed (issue 13): for each page, its time to
# content in headless Chromium (from navigation start until the page's main
# data is in the DOM), the bytes it transferred and the server's CPU per
# view; the same script measures vigil and openQA 4.6 (the anchor's
# ../shared/anchors/openqa-web/pages.sh runs `web.py measure` on openQA).
#
#   web.py vigil OUT.json [--vigil BIN] [--work DIR] [--jobs 10000,100000] [--runs 10] [--cold 3]
#       [--js-only] [--pages a,b]
#       seeds vigil data directories itself (the anchor's data set grown to
#       10,000 / 100,000 jobs, real results of examples/grub on one build),
#       starts `vigil serve` on each and measures VIGIL_PAGES; the list pages
#       (list=True) also at the larger size. This is the one command to rerun.
#       At the first size, in the same run: the floor, each public page's
#       first view saved as a static HTML file without scripts (static_floor);
#       with --js-only, the pages again with no first view
#       (VIGIL_WEB_FIRST_VIEW=off: the shell, then the script renders; only
#       the job page has a first view to turn off now, the pages built once
#       by the server are the same both ways: docs/web.md).
#   web.py measure --site vigil|openqa --url URL --out OUT.json [--pid NAME=PID ...]
#       [--param KEY=VALUE ...] [--only list] [--runs 10] [--cold 3] [--shots DIR]
#       measures a server that is already running (ids in the paths come from --param).
#   web.py reference pages-10000.json pages-100000.json > bench/reference/openqa-pages.json
#       openQA's runs summarized for the comparison (bench/report.py, `web.py vigil`).
#
# How a view is timed: a script added with CDP Page.addScriptToEvaluateOnNewDocument
# runs before the page's own scripts and watches the DOM with a MutationObserver;
# when the page's selector first matches it records performance.now(), whose
# origin is the navigation start. Every view is a fresh navigation from
# about:blank, which the previous page opened itself (Browser.blank: no new
# renderer process per view; BENCH_WEB_BLANK=browser for the old way). "cold": the browser's HTTP cache is cleared before each view
# (Network.clearBrowserCache); "warm": it is kept, as a returning visitor has
# it (the first warm view follows the last cold one). Bytes: the sum of
# encodedDataLength of CDP Network.loadingFinished (bytes on the wire with
# headers; 0 for a cache hit) until the page is quiet (no request in flight for
# 300 ms, event streams excepted). Server CPU: on-CPU time of the named process
# trees (schedstat of every live thread, plus the cutime+cstime of children the
# root has reaped) before and after the views, divided by their number; the
# browser's tree likewise, as information. A page's selector must match only
# once its data is in the DOM (not a skeleton or "Loading..." placeholder).
import argparse, json, os, shutil, sqlite3, statistics, subprocess, sys, time, urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)  # bench/api.py: the anchor's data set through the API

# ---------------------------------------------------------------------------
# The pages and what marks their main data. Paths are str.format templates
# over the parameters the seeding step knows ({job}, {group}, {build}).
# list=True: a list whose cost grows with the number of jobs, measured also
# at the larger data set. The names pair vigil's pages with openQA's.
# Change a selector here when a page marks its main data differently.
OVERVIEW = '/tests/overview?distri=bench&version=12&build={build}&groupid={group}'
VIGIL_PAGES = [
    # name               path                                        selector of the main data     list   sign-in
    ('dashboard',        '/',                                         'main .build, main table',    True,  False),
    ('tests',            '/tests',                                    'table.jobs tbody tr',        True,  False),
    ('overview',         OVERVIEW,                                    'main table td a',            True,  False),
    ('job',              '/tests/{job}',                              'main .job-module',           False, False),
    ('group_overview',   '/group_overview/{group}',                   'main table',                 True,  False),
    ('admin_workers',    '/admin/workers',                            'main table tbody tr',        False, False),
    ('admin_machines',   '/admin/machines',                           'main table tbody tr',        False, False),
    ('admin_products',   '/admin/products',                           'main table tbody tr',        False, False),
    ('admin_test_suites', '/admin/test_suites',                       'main table tbody tr',        False, False),
    ('admin_job_templates', '/admin/job_templates/{group}',           'main table tbody tr',        False, False),
    ('admin_auditlog',   '/admin/auditlog',                           'main table tbody tr',        False, True),
]
# openQA 4.6 (Debian's package), each selector checked on the real page (the
# anchor's results/<run>/shots-*/). Most tables there are DataTables filled
# by ajax: "td + td" (a second cell) exists only in a rendered data row, not
# in the one-cell "Loading..." / "No data" row. The workers table is
# rendered by the server (then filtered to idle workers by DataTables, which
# hides these offline ones). The audit log needs a signed-in user
# ([auth] method = Fake: visiting /login signs in as Demo).
OPENQA_PAGES = [
    ('dashboard',        '/',                                         '#build-results .build-row',  True,  False),
    ('tests',            '/tests',                                    '#results tbody td.test',     True,  False),
    ('overview',         OVERVIEW,                                    'table.overview tbody td a',  True,  False),
    ('job',              '/tests/{job}',                              '#results tbody td.result',   False, False),
    ('group_overview',   '/group_overview/{group}',                   '#build-results .build-row',  True,  False),
    ('admin_workers',    '/admin/workers',                            '#workers tbody td.worker',   False, False),
    ('admin_machines',   '/admin/machines',                           '#machines tbody td + td',    False, False),
    ('admin_products',   '/admin/products',                           '#products tbody td + td',    False, False),
    ('admin_test_suites', '/admin/test_suites',                       '#test-suites tbody td + td', False, False),
    ('admin_job_templates', '/admin/job_templates/{group}',           'table.mediagroup tbody td.name', False, False),
    ('admin_auditlog',   '/admin/auditlog',                           '#audit_log_table tbody td + td', False, True),
]
SITES = {'vigil': VIGIL_PAGES, 'openqa': OPENQA_PAGES}
# How the browser signs in before the pages that need it: a URL to visit
# (openQA's Fake auth) or a function(browser, base). vigil: its sign-in form
# as the admin the seeding step adds (`vigil user add`); `measure` on another
# vigil server takes the name and password from BENCH_WEB_USER / _PASSWORD.
BENCH_USER = os.environ.get('BENCH_WEB_USER', 'bench')
BENCH_PASSWORD = os.environ.get('BENCH_WEB_PASSWORD', 'bench-password')


def vigil_sign_in(b, base):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait
    b.d.get(base + '/login')
    WebDriverWait(b.d, 60).until(lambda d: d.find_elements(By.ID, 'login-user'))
    b.d.find_element(By.ID, 'login-user').send_keys(BENCH_USER)
    b.d.find_element(By.ID, 'login-password').send_keys(BENCH_PASSWORD)
    b.d.find_element(By.CSS_SELECTOR, 'form.login').submit()
    WebDriverWait(b.d, 60).until(lambda d: d.find_elements(By.CSS_SELECTOR, '#user .user-name'))


SIGN_IN = {'vigil': vigil_sign_in, 'openqa': '/login'}
# How a view leaves the previous page (Browser.blank): 'page' or 'browser'.
BLANK = os.environ.get('BENCH_WEB_BLANK', 'page')
# What a page shows when it cannot show its data: stop waiting then.
FAILED = {'vigil': 'main .error', 'openqa': None}

WATCH = r'''
(() => {
  if (location.protocol === 'about:' || window.__ttcSel !== undefined) return;
  const sel = %s;
  window.__ttcSel = sel;
  window.__ttc = null;
  let obs = null;
  const check = () => {
    if (window.__ttc !== null) return;
    let hit;
    try { hit = document.querySelector(sel); } catch (e) { window.__ttcErr = String(e); if (obs) obs.disconnect(); return; }
    if (hit) { window.__ttc = performance.now(); if (obs) obs.disconnect(); }
  };
  obs = new MutationObserver(check);
  obs.observe(document, { childList: true, subtree: true, attributes: true, attributeFilter: ['class', 'id'] });
  document.addEventListener('DOMContentLoaded', check);
})();
'''


def log(*a):
    print('bench/web:', *a, file=sys.stderr, flush=True)


def median(v):
    v = [x for x in v if x is not None]
    return statistics.median(v) if v else None


# ---------------------------------------------------------------------------
# CPU of process trees
def _stat(pid):
    try:
        with open(f'/proc/{pid}/stat') as f:
            s = f.read()
    except OSError:
        return None
    f = s[s.rindex(')') + 2:].split()
    # fields from 3 (state): ppid=f[1], utime=f[11], stime=f[12], cutime=f[13], cstime=f[14]
    return int(f[1]), int(f[11]) + int(f[12]), int(f[13]) + int(f[14])


def _task_ns(pid):
    """On-CPU nanoseconds of pid's live threads (schedstat: finer than ticks)."""
    t = 0
    try:
        for tid in os.listdir(f'/proc/{pid}/task'):
            with open(f'/proc/{pid}/task/{tid}/schedstat') as f:
                t += int(f.read().split()[0])
    except OSError:
        pass
    return t


def tree_cpu_s(root):
    """CPU seconds of root's tree: every live thread's on-CPU time, plus the
    children root has reaped (its cutime+cstime holds those of its waited-for
    descendants, e.g. prefork workers that ended)."""
    tick = os.sysconf('SC_CLK_TCK')
    procs = {}
    for d in os.listdir('/proc'):
        if d.isdigit():
            s = _stat(d)
            if s:
                procs[int(d)] = s
    if root not in procs:
        return None
    kids = {}
    for p, (pp, _, _) in procs.items():
        kids.setdefault(pp, []).append(p)
    total, todo = procs[root][2] / tick, [root]
    while todo:
        p = todo.pop()
        total += _task_ns(p) / 1e9
        todo += kids.get(p, [])
    return total


def cpu_sample(pids):
    return {n: tree_cpu_s(p) for n, p in pids.items()}


def cpu_delta(a, b, n):
    return {k: (round((b[k] - a[k]) / n * 1000, 2) if a.get(k) is not None and b.get(k) is not None else None)
            for k in a}


# ---------------------------------------------------------------------------
# The browser
class Browser:
    def __init__(self, width=1280, height=900):
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
        o = webdriver.ChromeOptions()
        for a in ('--headless=new', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage',
                  f'--window-size={width},{height}', '--mute-audio', '--no-first-run',
                  '--disable-background-networking', '--disable-component-update', '--disable-sync',
                  '--disable-default-apps', '--disable-extensions'):
            o.add_argument(a)
        o.binary_location = '/usr/bin/chromium'
        o.set_capability('goog:loggingPrefs', {'performance': 'ALL'})
        o.add_experimental_option('perfLoggingPrefs', {'enableNetwork': True, 'enablePage': False})
        self.service = Service('/usr/bin/chromedriver')
        self.d = webdriver.Chrome(service=self.service, options=o)
        self.d.set_page_load_timeout(180)
        self.d.execute_cdp_cmd('Network.enable', {})
        self.script = None
        self.failed = None  # a selector that says the page failed

    def pid(self):
        return self.service.process.pid

    def watch(self, selector):
        if self.script:
            self.d.execute_cdp_cmd('Page.removeScriptToEvaluateOnNewDocument', {'identifier': self.script})
        r = self.d.execute_cdp_cmd('Page.addScriptToEvaluateOnNewDocument', {'source': WATCH % json.dumps(selector)})
        self.script = r['identifier']

    def events(self):
        out = []
        for e in self.d.get_log('performance'):
            m = json.loads(e['message'])['message']
            if m['method'].startswith('Network.'):
                out.append(m)
        return out

    def blank(self):
        """Leave the page for about:blank before the next view. BLANK 'page'
        (the default): the page itself goes there (location.replace), so the
        blank document, and the next view's page of the same site, stay in
        the page's renderer process, as when a user follows a link. BLANK
        'browser' (the measurements before 2026-12-05): WebDriver's get of
        about:blank, a navigation from the browser that starts a new
        renderer process for every view (and ends the old one meanwhile):
        Chromium's work, the same for every server, which measured 24-40 ms
        of the 42-44 ms that a static file took (docs/web.md, "Measuring")."""
        if BLANK == 'browser' or not self.d.current_url.startswith('http'):
            self.d.get('about:blank')
            return
        self.d.execute_script("location.replace('about:blank')")
        end = time.monotonic() + 60
        while time.monotonic() < end:
            try:
                if self.d.execute_script('return location.href') == 'about:blank':
                    return
            except Exception:  # the old document went away under the call
                pass
            time.sleep(0.005)
        raise SystemExit('bench/web: the page did not go to about:blank in 60 s')

    def view(self, url, timeout=float(os.environ.get('BENCH_WEB_TIMEOUT', '60'))):
        """One fresh navigation: (time to content ms or None, bytes, requests, cached, extra)."""
        self.blank()
        self.events()  # drop what came before
        t0 = time.monotonic()
        self.d.get(url)
        ttc = err = None
        while time.monotonic() - t0 < timeout:
            ttc, err = self.d.execute_script(
                'const f = arguments[0] && document.querySelector(arguments[0]);'
                'return [window.__ttc, window.__ttcErr || (f ? "page failed: " + f.textContent : null)]', self.failed)
            if ttc is not None or err:
                break
            time.sleep(0.02)
        # quiet: nothing in flight for 300 ms (at most 15 s more)
        inflight, done, cached, nbytes, nreq = {}, set(), 0, 0, 0
        quiet_since, end = time.monotonic(), time.monotonic() + 15
        while time.monotonic() < end:
            evs = self.events()
            if evs or inflight:
                quiet_since = time.monotonic()
            for m in evs:
                p, meth = m['params'], m['method']
                rid = p.get('requestId')
                if meth == 'Network.requestWillBeSent':
                    if p.get('type') not in ('EventSource', 'WebSocket') and rid not in done:
                        inflight[rid] = p['request']['url']
                        if not p.get('redirectResponse'):
                            nreq += 1
                elif meth == 'Network.requestServedFromCache':
                    cached += 1
                elif meth in ('Network.loadingFinished', 'Network.loadingFailed'):
                    nbytes += int(p.get('encodedDataLength') or 0)
                    inflight.pop(rid, None)
                    done.add(rid)
            ready = self.d.execute_script('return document.readyState') == 'complete'
            if not inflight and ready and time.monotonic() - quiet_since >= 0.3:
                break
            time.sleep(0.05)
        nav = self.d.execute_script(
            "const n = performance.getEntriesByType('navigation')[0];"
            "return n ? [n.responseStart, n.domContentLoadedEventEnd, n.loadEventEnd] : [null, null, null]")
        return ttc, nbytes, nreq, cached, {'ttfb_ms': nav[0], 'dcl_ms': nav[1], 'load_ms': nav[2], 'error': err,
                                           'unfinished': sorted(set(inflight.values()))[:5]}

    def count(self, selector):
        return self.d.execute_script('return document.querySelectorAll(arguments[0]).length', selector)

    def quit(self):
        self.d.quit()


def measure_page(b, base, name, path, selector, pids, runs, cold, shots=None):
    url = base + path
    b.watch(selector)
    res = {'path': path, 'selector': selector}
    for phase, n in (('cold', cold), ('warm', runs)):
        if n <= 0 or (phase == 'warm' and res.get('cold', {}).get('missing')):
            continue
        views = []
        c0, bc0 = cpu_sample(pids), tree_cpu_s(b.pid())
        for _ in range(n):
            if phase == 'cold':
                b.d.execute_cdp_cmd('Network.clearBrowserCache', {})
            ttc, nbytes, nreq, cached, extra = b.view(url)
            views.append(dict(ttc_ms=None if ttc is None else round(ttc, 1), bytes=nbytes, requests=nreq,
                              from_cache=cached, **extra))
            if ttc is None:
                break  # the page never showed its data: no point in waiting for it again
        c1, bc1 = cpu_sample(pids), tree_cpu_s(b.pid())
        ok = [v['ttc_ms'] for v in views if v['ttc_ms'] is not None]
        n = len(views)
        res[phase] = {'views': n, 'ttc_ms_median': median(ok), 'ttc_ms_min': min(ok) if ok else None,
                      'ttc_ms_max': max(ok) if ok else None, 'missing': n - len(ok),
                      'bytes_median': median([v['bytes'] for v in views]),
                      'requests_median': median([v['requests'] for v in views]),
                      'server_cpu_ms_per_view': cpu_delta(c0, c1, n),
                      'browser_cpu_ms_per_view': round((bc1 - bc0) / n * 1000, 1) if bc0 is not None and bc1 is not None else None,
                      'raw': views}
    res['matches'] = b.count(selector)
    if shots:
        os.makedirs(shots, exist_ok=True)
        b.d.save_screenshot(os.path.join(shots, name + '.png'))
    w = res.get('warm') or res.get('cold')
    log(f"{name:20} {path[:60]:60} warm {w['ttc_ms_median']} ms, cold {res.get('cold', {}).get('ttc_ms_median')} ms, "
        f"{w['bytes_median']} B, server CPU/view {w['server_cpu_ms_per_view']} ms, {res['matches']} match(es)")
    return res


def measure(site, base, pids, params, runs=10, cold=3, shots=None, only_lists=False, names=None):
    pages = {}
    b = Browser()
    b.failed = FAILED[site]
    try:
        signed_in = False
        # the pages that need a signed-in user last, after signing in once
        for name, path, selector, is_list, auth in sorted(SITES[site], key=lambda p: p[4]):
            if (only_lists and not is_list) or (names and name not in names):
                continue
            try:
                p = path.format(**params)
            except KeyError as e:
                log(f'{name}: no parameter {e} given, skipped')
                continue
            if auth and not signed_in and SIGN_IN[site]:
                if callable(SIGN_IN[site]):
                    SIGN_IN[site](b, base)
                else:
                    b.d.get(base + SIGN_IN[site])
                signed_in = True
            pages[name] = measure_page(b, base, name, p, selector, pids, runs, cold, shots)
            pages[name].update({'list': is_list, 'signed_in': signed_in})
    finally:
        b.quit()
    return {'site': site, 'url': base, 'params': params, 'runs': runs, 'cold_runs': cold, 'blank': BLANK,
            'chromium': subprocess.run(['/usr/bin/chromium', '--version'], capture_output=True, text=True).stdout.strip(),
            'loadavg_before': open('/proc/loadavg').read().split()[:3], 'pages': pages}


def table(res):
    lines = [f"| page | warm ttc ms (median of {res['runs']}) | cold ttc ms (median of {res['cold_runs']}) | "
             f"bytes warm / cold | server CPU ms/view warm |", '|---|---|---|---|---|']
    for name, p in res['pages'].items():
        w, c = p.get('warm', {}), p.get('cold', {})
        lines.append(f"| {name} | {w.get('ttc_ms_median')} | {c.get('ttc_ms_median')} | "
                     f"{w.get('bytes_median')} / {c.get('bytes_median')} | {w.get('server_cpu_ms_per_view')} |")
    return '\n'.join(lines)


# ---------------------------------------------------------------------------
# Summaries and the comparison with openQA
REFERENCE = os.path.join(HERE, 'reference', 'openqa-pages.json')
GOAL_MS, GOAL_RATIO = 200, 10


def summary(res):
    """The figures of one measure run, without the raw views."""
    out = {}
    for name, p in res['pages'].items():
        o = {'path': p['path'], 'selector': p['selector'], 'list': p.get('list'), 'matches': p.get('matches')}
        for ph in ('warm', 'cold'):
            if ph in p:
                q = p[ph]
                o[ph] = {k: q[k] for k in ('views', 'missing', 'ttc_ms_median', 'ttc_ms_min', 'ttc_ms_max', 'bytes_median',
                                           'requests_median', 'server_cpu_ms_per_view', 'browser_cpu_ms_per_view')}
                o[ph]['error'] = next((x.get('error') for x in q['raw'] if x['ttc_ms'] is None), None)
                o[ph]['server_cpu_ms_per_view_total'] = (
                    round(sum(v for v in q['server_cpu_ms_per_view'].values() if v is not None), 2)
                    if any(v is not None for v in q['server_cpu_ms_per_view'].values()) else None)
        out[name] = o
    return out


def _ms(v):
    return 'no content' if v is None else f'{v:.0f} ms'


def _kb(v):
    return '?' if v is None else f'{v / 1000:.1f} kB'


def _cpu(v):
    return '?' if v is None else f'{v:.1f} ms'


def rows(vig, ref):
    """(measure, value, goal, met) per page and data-set size that vigil measured."""
    out = []
    for size, r in sorted(vig['sizes'].items(), key=lambda x: int(x[0])):
        vs = summary(r)
        # openQA measured another way (Browser.blank) gives no ratio: the reference
        # from before 2026-12-05 records no way, which was 'browser'
        same = (ref or {}).get('blank', 'browser') == r.get('blank', 'browser')
        oq = (ref or {}).get('sizes', {}).get(size, {}) if same else {}
        for name, v in vs.items():
            w, c, o = v.get('warm', {}), v.get('cold', {}), oq.get(name, {})
            ow, oc = o.get('warm', {}), o.get('cold', {})
            a, b = w.get('ttc_ms_median'), ow.get('ttc_ms_median')
            ratio = b / a if a and b else None
            val = f'vigil {_ms(a)}'
            if a is not None:
                val += (f" (cold {_ms(c.get('ttc_ms_median'))}), {_kb(w.get('bytes_median'))} (cold "
                        f"{_kb(c.get('bytes_median'))}), server CPU {_cpu(w.get('server_cpu_ms_per_view_total'))}/view")
            else:
                val += f" ({(c.get('error') or '')[:80] or 'selector ' + repr(v['selector']) + ' never matched'})"
            if b is not None:
                val += (f"; openQA {_ms(b)} (cold {_ms(oc.get('ttc_ms_median'))}), {_kb(ow.get('bytes_median'))} (cold "
                        f"{_kb(oc.get('bytes_median'))}), server CPU {_cpu(ow.get('server_cpu_ms_per_view_total'))}/view"
                        + (f' ({ratio:.1f}x)' if ratio else ''))
            met = a is not None and a <= GOAL_MS and (ratio is None or ratio >= GOAL_RATIO)
            out.append((f"web {name} at {r.get('jobs', size)} jobs, time to content (warm, median of {r.get('runs')})",
                        val, f'<= {GOAL_MS} ms' + (f', >= {GOAL_RATIO}x openQA' if b is not None else ''), met))
    return out


def print_rows(rs):
    w = max(len(r[0]) for r in rs)
    print(f"| {'measure':{w}} | value | goal | met |\n|{'-' * (w + 2)}|---|---|---|")
    for m, v, g, ok in rs:
        print(f"| {m:{w}} | {v} | {g} | {'yes' if ok else 'NO'} |")


def reference_main(a):
    """openQA's measure runs -> the committed reference summary."""
    ref = {'source': 'shared/anchors/openqa-web/pages.sh', 'sizes': {}}
    for f in a.files:
        r = json.load(open(f))
        ref['blank'] = r.get('blank', 'browser')
        ref['sizes'][str(r['jobs'])] = summary(r)
        ref.setdefault('runs', []).append({'file': os.path.relpath(f, a.relative_to) if a.relative_to else f,
                                           'jobs': r['jobs'], 'loadavg_before': r.get('loadavg_before'),
                                           'chromium': r.get('chromium'), 'url': r.get('url')})
    env = os.path.join(os.path.dirname(os.path.abspath(a.files[0])), 'env.txt')
    if os.path.exists(env):
        ref['env'] = [l.rstrip() for l in open(env) if l.startswith(('date', 'host', 'pkg', 'mode', 'loadavg'))]
    json.dump(ref, sys.stdout, indent=1)
    print()


# ---------------------------------------------------------------------------
# vigil: seeding and serving
def run_grub(vigil, out):
    """Real results to show on the job page: `vigil run examples/grub`."""
    if os.path.isfile(os.path.join(out, 'testresults', 'results.json')):
        return out
    shutil.rmtree(out, ignore_errors=True)
    with open(out + '.log', 'w') as f:
        subprocess.run([vigil, 'run', os.path.join(ROOT, 'examples', 'grub'), '--out', out], check=True,
                       stdout=f, stderr=subprocess.STDOUT)
    return out


def grow_sqlite(db, base, total):
    """The anchor's 500 jobs (10 builds of 50) copied to `total` jobs: copy k
    gets ids + k*base and builds + 10*k; then states and results as a real
    instance has them: all done (every 5th failed, every 13th softfailed)
    but the last 100 scheduled and the 10 before running."""
    cols = [r[1] for r in db.execute('PRAGMA table_info(jobs)') if r[1] not in ('id', 'build')]
    scols = [r[1] for r in db.execute('PRAGMA table_info(job_settings)') if r[1] not in ('id', 'job_id', 'value')]
    nb = db.execute('SELECT COUNT(DISTINCT build) FROM jobs').fetchone()[0]
    db.execute('CREATE TEMP TABLE k (k INTEGER)')
    db.executemany('INSERT INTO k VALUES (?)', [(i,) for i in range(1, total // base)])
    db.execute(f'INSERT INTO jobs (id, build, {",".join(cols)}) SELECT id + k * {base}, '
               f'CAST(CAST(build AS INTEGER) + k * {nb} AS TEXT), {",".join(cols)} FROM jobs, k WHERE id <= {base}')
    db.execute(f'INSERT INTO job_settings (job_id, value, {",".join(scols)}) SELECT job_id + k * {base}, '
               f"CASE WHEN key = 'BUILD' THEN CAST(CAST(value AS INTEGER) + k * {nb} AS TEXT) ELSE value END, "
               f'{",".join(scols)} FROM job_settings, k WHERE job_id <= {base}')
    top = db.execute('SELECT MAX(id) FROM jobs').fetchone()[0]
    # created 10 s apart, the newest 30 min ago; started 5 min, finished 20 min after creation
    ts = "strftime('%Y-%m-%dT%H:%M:%S', 'now', ((id - " + str(top) + ") * 10 - 1800 + {off}) || ' seconds')"
    db.execute(f"UPDATE jobs SET t_created = {ts.format(off=0)}, t_updated = {ts.format(off=1200)}")
    db.execute(f"UPDATE jobs SET state = 'done', result = CASE WHEN id % 5 = 0 THEN 'failed' WHEN id % 13 = 0 "
               f"THEN 'softfailed' ELSE 'passed' END, t_started = {ts.format(off=300)}, "
               f"t_finished = {ts.format(off=1200)} WHERE id <= {top - 110}")
    db.execute(f"UPDATE jobs SET state = 'running', t_started = {ts.format(off=300)} "
               f"WHERE id > {top - 110} AND id <= {top - 100}")
    # the running jobs on the 10 workers
    for wid, jid in zip([r[0] for r in db.execute('SELECT id FROM workers ORDER BY id')],
                        [r[0] for r in db.execute("SELECT id FROM jobs WHERE state = 'running' ORDER BY id")]):
        db.execute('UPDATE jobs SET assigned_worker_id = ? WHERE id = ?', (wid, jid))
        db.execute('UPDATE workers SET job_id = ? WHERE id = ?', (jid, wid))
    db.commit()
    return top


def add_results(db, data, grub, job_ids):
    """The grub example's results as a worker would have uploaded them
    (every file of the output and of its testresults/), with its modules."""
    tr = os.path.join(grub, 'testresults')
    order = json.load(open(os.path.join(tr, 'test_order.json')))
    files = [os.path.join(tr, f) for f in os.listdir(tr) if not f.startswith('.')] + \
            [os.path.join(grub, f) for f in os.listdir(grub) if os.path.isfile(os.path.join(grub, f))]
    for jid in job_ids:
        d = os.path.join(data, 'testresults', str(jid))
        os.makedirs(d, exist_ok=True)
        for f in files:
            dst = os.path.join(d, os.path.basename(f))
            if not os.path.exists(dst):
                os.link(f, dst)
        for m in order:
            fl = m.get('flags') or {}
            r = json.load(open(os.path.join(tr, f"result-{m['name']}.json")))['result']
            db.execute('INSERT OR REPLACE INTO job_modules (job_id, name, category, script, result, milestone, '
                       'important, fatal) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
                       (jid, m['name'], m.get('category', ''), m.get('script', ''),
                        {'ok': 'passed', 'fail': 'failed', 'softfail': 'softfailed'}.get(r, r),
                        int(bool(fl.get('milestone'))), int(not fl.get('ignore_failure')), int(bool(fl.get('fatal')))))
        db.execute("UPDATE jobs SET state = 'done', result = 'passed' WHERE id = ?", (jid,))
    db.commit()


class Serve:
    """`vigil serve` on a free port with extra arguments."""

    def __init__(self, vigil, data, logf, args=(), env=None):
        import api as apib
        self.port = apib.free_port()
        self.url = f'http://127.0.0.1:{self.port}'
        self.cmd = [vigil, 'serve', '--listen', f'127.0.0.1:{self.port}', '--data', data, *args]
        self.logf, self.proc = logf, None
        self.env = dict(os.environ, **env) if env else None

    def start(self):
        self.proc = subprocess.Popen(self.cmd, stdout=open(self.logf, 'a'), stderr=subprocess.STDOUT, env=self.env)
        while True:
            try:
                with urllib.request.urlopen(self.url + '/api/v1/job_groups', timeout=5) as r:
                    if r.status == 200:
                        return
            except OSError:
                pass
            if self.proc.poll() is not None:
                raise SystemExit(f'bench/web: vigil serve exited, see {self.logf}')
            time.sleep(0.01)

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def seed_base(vigil, work):
    """An empty data directory filled through the API as the anchor fills
    openQA: 1 group, 1 product, 5 machines, 10 test suites, 50 templates,
    10 POST isos (500 jobs), 10 workers."""
    import api as apib
    data, key, secret = apib.fresh_data(vigil, work, 'base')
    srv = apib.Server(vigil, data, os.path.join(work, 'seed-serve.log'))
    srv.start()
    try:
        apib.populate(srv, key, secret)
        for i in range(10):
            apib.api(srv, key, secret, 'POST', 'workers', {'host': f'bench-worker{i // 4}', 'instance': i % 4 + 1,
                                                           'worker_class': 'qemu_x86_64'})
        gid = apib.api(srv, key, secret, 'GET', 'job_groups')[1][0]['id']
    finally:
        srv.stop()
    return data, gid


def seed(vigil, work, base_data, gid, total, grub):
    data = os.path.join(work, f'data-{total}')
    shutil.rmtree(data, ignore_errors=True)
    shutil.copytree(base_data, data)
    db = sqlite3.connect(os.path.join(data, 'vigil.db'))
    base = db.execute('SELECT MAX(id) FROM jobs').fetchone()[0]
    top = grow_sqlite(db, base, total)
    # The build shown by the overview: the newest whole build that is done;
    # its 50 jobs get the real results, the job page shows its first job.
    build = db.execute(f"SELECT build FROM jobs WHERE id <= {top - 110} GROUP BY build HAVING COUNT(*) = 50 "
                       "ORDER BY MAX(id) DESC LIMIT 1").fetchone()[0]
    ids = [r[0] for r in db.execute('SELECT id FROM jobs WHERE build = ? ORDER BY id', (build,))]
    add_results(db, data, grub, ids)
    n = db.execute('SELECT COUNT(*) FROM jobs').fetchone()[0]
    db.execute('ANALYZE')
    db.commit()
    db.close()
    # the admin the audit log page is read as
    subprocess.run([vigil, 'user', 'add', BENCH_USER, '--admin', '--data', data], input=BENCH_PASSWORD + '\n',
                   text=True, check=True, capture_output=True)
    return data, {'job': ids[0], 'group': gid, 'build': build, 'jobs': n}


def static_floor(base, pages, runs, cold):
    """The floor under each page: vigil's answer to the page's path (its
    first view, the same content) saved as a static file without its
    scripts, stylesheet and icon (only its HTML), served from memory by
    Python's HTTP server (HTTP/1.1, keep-alive) and measured as the pages
    are, with the page's selector. What is left is the browser's own time.
    pages: [(name, path, selector)] of public pages (no sign-in)."""
    import http.server, re, threading
    files = {}
    for name, path, _ in pages:
        with urllib.request.urlopen(base + path, timeout=60) as r:
            html = r.read().decode()
        html = re.sub(r'<script\b[^>]*>.*?</script>', '', html, flags=re.S)
        files['/' + name + '.html'] = re.sub(r'<link\b[^>]*>', '', html).encode()

    class H(http.server.BaseHTTPRequestHandler):
        protocol_version = 'HTTP/1.1'

        def do_GET(self):
            body = files.get(self.path.split('?')[0])
            self.send_response(200 if body else 404)
            body = body or b'none'
            self.send_header('Content-Type', 'text/html; charset=utf-8')
            self.send_header('Content-Length', str(len(body)))
            self.send_header('Cache-Control', 'no-cache')
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *a):
            pass
    srv = http.server.ThreadingHTTPServer(('127.0.0.1', 0), H)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    b = Browser()
    out = {}
    try:
        for name, path, selector in pages:
            r = measure_page(b, f'http://127.0.0.1:{srv.server_address[1]}', 'static ' + name, f'/{name}.html',
                             selector, {}, runs, cold)
            r['of'] = path
            r['bytes'] = len(files['/' + name + '.html'])
            out[name] = r
    finally:
        b.quit()
        srv.shutdown()
    return out


def ways_table(r):
    """The three ways side by side (warm medians): the first view (the
    server's HTML, then the script), the script alone, the static floor."""
    js, fl = r.get('js_only', {}).get('pages', {}), r.get('floors', {})
    lines = ['| page | first view warm / cold ms | script only warm / cold ms | static floor warm / cold ms |',
             '|---|---|---|---|']
    for name, p in r['pages'].items():
        def wc(q):
            if not q:
                return '-'
            w, c = q.get('warm', {}).get('ttc_ms_median'), q.get('cold', {}).get('ttc_ms_median')
            return f"{_ms(w)} / {_ms(c)}"
        lines.append(f'| {name} | {wc(p)} | {wc(js.get(name))} | {wc(fl.get(name))} |')
    return '\n'.join(lines)


def vigil_main(a):
    vigil = os.path.abspath(a.vigil)
    work = os.path.abspath(a.work)
    os.makedirs(work, exist_ok=True)
    sizes = [int(x) for x in a.jobs.split(',')]
    names = a.pages.split(',') if a.pages else None
    if a.grub and os.path.isfile(os.path.join(a.grub, 'testresults', 'results.json')):
        grub = os.path.abspath(a.grub)
    else:
        grub = run_grub(vigil, os.path.join(work, 'grub'))
    base_data, gid = seed_base(vigil, work)
    out = {'site': 'vigil', 'vigil': vigil, 'git_commit': subprocess.run(['git', 'rev-parse', 'HEAD'], cwd=ROOT,
                                                                          capture_output=True, text=True).stdout.strip(),
           'sizes': {}}
    for i, total in enumerate(sizes):
        t0 = time.monotonic()
        data, params = seed(vigil, work, base_data, gid, total, grub)
        log(f'seeded {params["jobs"]} jobs in {time.monotonic() - t0:.1f} s: {data} {params}')
        # the seeded running jobs' workers never call: keep them from being lost
        srv = Serve(vigil, data, os.path.join(work, f'serve-{total}.log'), ['--worker-timeout', '86400'])
        srv.start()
        try:
            r = measure('vigil', srv.url, {'vigil': srv.proc.pid}, params, a.runs, a.cold,
                        os.path.join(work, f'shots-{total}') if a.shots else None, only_lists=i > 0, names=names)
            if i == 0:
                pub = [(n, p.format(**params), sel) for n, p, sel, is_list, auth in VIGIL_PAGES
                       if not auth and (not names or n in names)]
                r['floors'] = static_floor(srv.url, pub, a.runs, a.cold)
                r['floor'] = r['floors'].get('overview')
        finally:
            srv.stop()
        if i == 0 and a.js_only:
            # the same pages with no first view: the shell, then the script renders from the API
            srv = Serve(vigil, data, os.path.join(work, f'serve-{total}-js.log'), ['--worker-timeout', '86400'],
                        env={'VIGIL_WEB_FIRST_VIEW': 'off'})
            srv.start()
            try:
                r['js_only'] = measure('vigil', srv.url, {'vigil': srv.proc.pid}, params, a.runs, a.cold, names=names)
            finally:
                srv.stop()
        r['jobs'] = params['jobs']
        out['sizes'][str(total)] = r
        print(f"\nvigil, {params['jobs']} jobs\n" + table(r), flush=True)
        if 'floors' in r:
            print(f"\nthe three ways, {params['jobs']} jobs (time to content)\n" + ways_table(r), flush=True)
    ref = json.load(open(a.reference)) if os.path.exists(a.reference) else None
    out['reference'] = a.reference if ref else None
    json.dump(out, open(a.out, 'w'), indent=1)
    if ref and ref.get('blank', 'browser') != BLANK:
        print(f"\nopenQA's reference was measured with BENCH_WEB_BLANK={ref.get('blank', 'browser')}, this run with "
              f"{BLANK}: no ratios (rerun with BENCH_WEB_BLANK={ref.get('blank', 'browser')}, or measure openQA again)")
    print(f"\nvigil against openQA 4.6 ({a.reference if ref else 'no reference'}):")
    print_rows(rows(out, ref))
    log(f'wrote {a.out}')


def measure_main(a):
    pids = dict(p.split('=', 1) for p in a.pid)
    pids = {k: int(v) for k, v in pids.items()}
    params = dict(p.split('=', 1) for p in a.param)
    r = measure(a.site, a.url.rstrip('/'), pids, params, a.runs, a.cold, a.shots, a.only == 'list',
                a.pages.split(',') if a.pages else None)
    if a.jobs:
        r['jobs'] = a.jobs
    json.dump(r, open(a.out, 'w'), indent=1)
    print(table(r), flush=True)


def main():
    ap = argparse.ArgumentParser(description='time to content, bytes and server CPU of the web pages (vigil, openQA)')
    sub = ap.add_subparsers(dest='cmd', required=True)
    v = sub.add_parser('vigil', help='seed vigil, serve and measure it')
    v.add_argument('out')
    v.add_argument('--vigil', default=os.environ.get('VIGIL', os.path.join(ROOT, 'build', 'vigil')))
    v.add_argument('--work', default=os.path.join(HERE, 'out', 'web'))
    v.add_argument('--jobs', default='10000,100000', help='data set sizes; the first gets every page, the rest the lists')
    v.add_argument('--grub', help='output of `vigil run examples/grub --out DIR` to reuse (else made under WORK)')
    v.add_argument('--js-only', action='store_true',
                   help='also measure the first size with no first view (VIGIL_WEB_FIRST_VIEW=off): the script alone')
    v.add_argument('--pages', help='comma-separated page names (default: all)')
    v.add_argument('--reference', default=REFERENCE, help="openQA's figures (web.py reference ...)")
    r = sub.add_parser('reference', help="openQA's measure outputs -> a summary on stdout (bench/reference/openqa-pages.json)")
    r.add_argument('files', nargs='+')
    r.add_argument('--relative-to')
    m = sub.add_parser('measure', help='measure a running server')
    m.add_argument('--site', choices=SITES, required=True)
    m.add_argument('--url', required=True)
    m.add_argument('--out', required=True)
    m.add_argument('--pid', action='append', default=[], help='NAME=PID: a process tree whose CPU is counted')
    m.add_argument('--param', action='append', default=[], help='KEY=VALUE for the page paths')
    m.add_argument('--only', choices=['list'], help='only the list pages')
    m.add_argument('--pages', help='comma-separated page names')
    m.add_argument('--jobs', type=int, help='number of jobs in the data set (recorded)')
    for p in (v, m):
        p.add_argument('--runs', type=int, default=int(os.environ.get('BENCH_WEB_RUNS', '10')))
        p.add_argument('--cold', type=int, default=int(os.environ.get('BENCH_WEB_COLD', '3')))
        p.add_argument('--shots', help='save a screenshot of each page after its last view here') if p is m else \
            p.add_argument('--shots', action='store_true', help='screenshots under WORK/shots-N')
    a = ap.parse_args()
    {'vigil': vigil_main, 'measure': measure_main, 'reference': reference_main}[a.cmd](a)


if __name__ == '__main__':
    main()
