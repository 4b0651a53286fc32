# SPDX-License-Identifier: MIT
# test_first_view.py - the server's first view of a page (src/server/pages/web_ssr.h):
# the page's main data is in the HTML the server sends, before any script
# runs; it holds no markup from the data (injected names show as text);
# the API answers it was made from travel along as data islands, and the
# page's script takes them instead of fetching the same URLs again. A page
# built once by the server has no islands and its script keeps its text.
import html.parser
import json
import os
import re
import subprocess
import urllib.parse
import urllib.request

from weblib import Server, Browser, check, VIGIL

XSS_SCRIPT = '<script>window.__pwned = 1</script>'
XSS_IMG = '"><img src=x onerror="window.__pwned=2">'

# (path, what the first view's <main> must hold: a regular expression over
# its HTML, the API URLs it is made from (the islands)). Each page's
# expectations sit with it; the injected rows come from prepare() below.
PAGES = [
    ('/admin/machines', r'<table class="adm-table adm-machines">.*<td>64bit</td>', []),
    ('/admin/products', r'<table class="adm-table adm-products">.*<td>grub</td>', []),
    ('/admin/test_suites', r'<table class="adm-table adm-test_suites">.*<td>grub</td>', []),
    ('/tests', r'<section class="tests-section" data-section="finished"><h2>Finished .*<table class="jobs">.*'
     r'<td class="t-test"><a href="/tests/\d+"', []),
    ('/tests?distri=xss&state=scheduled', r'<form class="filters" role="search" action="/tests">.*'
     r'<input name="distri" value="xss".*<h2>Scheduled <span class="muted">\(1\)</span></h2>.*'
     r'<td class="t-result st-scheduled">scheduled</td>', []),
    ('/tests/1', r'<h1><a href="/tests/1" class="job-id">#1</a> grub-.*<section class="job-module" data-module="boot">'
     r'.*<img src="/tests/1/images/thumb/boot-1.png".*<span class="job-sim" title="similarity">\d+%</span>',
     ['/api/v1/jobs/1/details', '/api/v1/jobs/1/comments', '/tests/1/file/result-boot.json']),
    ('/tests/3', r'<span class="job-badge r-failed">failed</span>.*<section class="job-module" data-module="\w+">'
     r'.*class="job-module-result r-failed"', ['/api/v1/jobs/3/details', '/api/v1/jobs/3/comments']),
    ('/tests/latest?distri=grub&test=grub', r'<a href="/tests/1" class="job-id">#1</a>.*class="job-module"',
     ['/api/v1/jobs?latest=1&limit=1000&distri=grub&test=grub', '/api/v1/jobs/1/details']),
    ('/admin/workers', r'<table class="adm-table adm-workers">.*<span class="adm-worker">vm:1</span>', []),
    ('/admin/job_templates/1', r'<table class="adm-table jt-matrix"><caption>grub-1-cd-x86_64</caption>.*'
     r'<th scope="row">grub</th>.*<span title="job template 1, priority 50">50</span>', []),
    ('/admin/auditlog', r'<table class="audit">.*<td class="audit-event">POST /api/v1/machines</td>', []),
    ('/admin/assets', r'<table class="adm-table adm-assets">.*<a href="/assets/iso/first-view.iso">first-view.iso</a>'
     r'</td><td class="num" data-sort="1280"><span title="1280 bytes">1.3 KiB</span>', []),
    ('/admin/needles', r'<table class="adm-table adm-needles">.*<span class="name">grub-.*class="adm-joblink">#1 ', []),
    ('/', r'<table class="builds"><tbody><tr data-build="1".*<span class="cbar-r-passed" data-share="[\d.]+">'
     r'.*<span class="count r-passed" data-count="passed"', []),
    ('/group_overview/1', r'<h1>examples</h1>.*<span class="limit-links">show <b>10</b><a href="/group_overview/1\?'
     r'limit_builds=20">20</a>.*<table class="builds"><tbody><tr data-build="1"', []),
    ('/group_overview/2', r'<h1>&lt;script&gt;.*<div class="comment-text">&quot;&gt;&lt;img', []),
    ('/tests/overview?distri=grub&version=1&build=1&groupid=1',
     r'<table class="matrix">.*<td class="m-cell"><a class="cell r-passed" href="/tests/1"', []),
    ('/tests/overview?groupid=2', r'<a class="head-link" href="/group_overview/2">&lt;script&gt;', []),
]

# Pages whose first view shows a value the injection below put in the data.
INJECTED = ['/admin/machines', '/admin/test_suites', '/tests', '/tests?distri=xss&state=scheduled',
            '/admin/workers', '/admin/job_templates/1', '/admin/auditlog', '/group_overview/2',
            '/tests/overview?groupid=2']

# Pages the server builds alone (docs/web.md, "Pages built once"): no data
# islands, and their scripts leave <main> as the server sent it.
ONCE = ['/', '/group_overview/1', '/group_overview/2', '/admin/auditlog',
        '/tests/overview?distri=grub&version=1&build=1&groupid=1', '/tests/overview?groupid=2', '/admin/machines',
        '/admin/products', '/admin/test_suites', '/admin/assets', '/admin/needles', '/admin/workers',
        '/admin/job_templates/1', '/tests', '/tests?distri=xss&state=scheduled']

# Pages read signed in as the administrator prepare() adds (the audit log is theirs).
SIGNED_IN = ['/admin/auditlog']
ADMIN, ADMIN_PASSWORD = 'first-view-admin', 'first-view-password'


class MainParser(html.parser.HTMLParser):
    """The elements inside <main>, and what an attacker would want there."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.depth = 0
        self.bad = []
        self.text = []
        self.hrefs = []   # every link's href in <main>
        self.rows = 0     # table body rows in <main>
        self.tbody = 0
        self.elements = 0  # elements inside <main>

    def handle_starttag(self, tag, attrs):
        if tag == 'main':
            self.depth += 1
            return
        if not self.depth:
            return
        self.elements += 1
        if tag in ('script', 'iframe', 'object', 'embed', 'style', 'base', 'link', 'meta'):
            self.bad.append(f'<{tag}>')
        self.tbody += tag == 'tbody'
        self.rows += tag == 'tr' and self.tbody > 0
        if tag == 'a' and dict(attrs).get('href'):
            self.hrefs.append(dict(attrs)['href'])
        for k, v in attrs:
            if k.startswith('on') or k == 'style':
                self.bad.append(f'{tag} {k}=')
            if k in ('href', 'src', 'action') and v is not None and not (
                    v.startswith('/') and not v.startswith('//') or v.startswith('#') or re.match(r'https?://', v)):
                self.bad.append(f'{tag} {k}={v}')

    def handle_endtag(self, tag):
        if tag == 'main' and self.depth:
            self.depth -= 1
        if tag == 'tbody' and self.depth and self.tbody:
            self.tbody -= 1

    def handle_data(self, data):
        if self.depth:
            self.text.append(data)


def first_view(s, path, cookie=None):
    """(HTML of <main>, its text, its bad markup, {island URL: parsed JSON}, the parser) of path as sent."""
    with urllib.request.urlopen(urllib.request.Request(s.url + path, headers={'Cookie': cookie} if cookie else {})) as r:
        page = r.read().decode()
    m = re.search(r'<main\b[^>]*>(.*)</main>', page, re.S)
    main = m.group(1) if m else ''
    p = MainParser()
    p.feed(page)
    islands = {}
    for url, body in re.findall(r'<script type="application/json" data-url="([^"]*)">(.*?)</script>', page, re.S):
        islands[url.replace('&amp;', '&')] = json.loads(body)
    return main, ''.join(p.text), p.bad, islands, p


def inject(s):
    check('a machine named with markup is added', s.api('POST', '/api/v1/machines', {
        'name': XSS_IMG, 'backend': 'qemu', 'settings[NOTE]': XSS_SCRIPT})[0] == 200)
    check('a test suite named with markup is added', s.api('POST', '/api/v1/test_suites', {
        'name': XSS_SCRIPT, 'description': XSS_IMG})[0] == 200)
    st, made = s.api('POST', '/api/v1/jobs', {'TEST': XSS_SCRIPT, 'DISTRI': 'xss', 'VERSION': '1', 'FLAVOR': 'cd',
                                              'ARCH': 'x86_64', 'MACHINE': XSS_IMG, 'BUILD': XSS_IMG})
    check('a job whose TEST, MACHINE and BUILD hold markup is scheduled', st == 200, made)
    job = made.get('id')
    PAGES.append((f'/tests/{job}', r'<dt>Machine</dt><dd>&quot;&gt;&lt;img', [f'/api/v1/jobs/{job}/details']))
    INJECTED.append(f'/tests/{job}')
    check('a worker named with markup registers', s.api('POST', '/api/v1/workers', {
        'host': XSS_IMG, 'instance': 1, 'worker_class': XSS_SCRIPT})[0] == 200)
    check('a job template of both is added', s.api('POST', '/api/v1/job_templates', {
        'group_id': 1, 'machine_name': XSS_IMG, 'test_suite_name': XSS_SCRIPT, 'distri': 'grub', 'version': '1',
        'flavor': 'cd', 'arch': 'x86_64'})[0] == 200)
    check('an asset is registered', s.api('POST', '/api/v1/assets', {'type': 'iso', 'name': 'first-view.iso'})[0] == 200)
    check('a job group (2) named with markup is added', s.api('POST', '/api/v1/job_groups', {
        'name': XSS_SCRIPT, 'description': XSS_IMG})[0] == 200)
    check('a comment with markup is made on it', s.api('POST', '/api/v1/groups/2/comments', {
        'text': XSS_IMG})[0] == 200)


def prepare(data):
    os.makedirs(os.path.join(data, 'factory', 'iso'), exist_ok=True)
    with open(os.path.join(data, 'factory', 'iso', 'first-view.iso'), 'wb') as f:
        f.write(bytes(1280))
    subprocess.run([VIGIL, 'user', 'add', ADMIN, '--admin', '--data', data], input=ADMIN_PASSWORD + '\n',
                   text=True, check=True, capture_output=True)


def sign_in(s):
    """The session cookie ("name=value") of the administrator prepare() added."""
    form = urllib.parse.urlencode({'user': ADMIN, 'password': ADMIN_PASSWORD}).encode()
    with urllib.request.urlopen(urllib.request.Request(s.url + '/login', data=form,
                                                       headers={'Accept': 'application/json'})) as r:
        return r.headers['Set-Cookie'].split(';')[0]


def run():
    s = Server('first-view', prepare=prepare)
    b = Browser(s)
    try:
        inject(s)
        cookie = sign_in(s)
        with urllib.request.urlopen(s.url + '/tests') as r:
            cc = r.headers.get_all('Cache-Control')
        check('a first view is kept by no shared cache (private, no-cache)', cc == ['private, no-cache'], cc)
        for path, want, urls in PAGES:
            main, text, bad, islands, parsed = first_view(s, path, cookie if path in SIGNED_IN else None)
            check(f'{path}: the first view holds the main data', re.search(want, main, re.S), main[:300])
            check(f'{path}: no markup or script from the data in the first view', not bad, bad)
            check(f'{path}: the first view carries its data', set(urls) <= set(islands),
                  f'islands {sorted(islands)}')
            if path in INJECTED:
                check(f'{path}: injected markup shows as text',
                      (XSS_SCRIPT in text or XSS_IMG in text) and '&lt;' in main, text[:300])
            if path in SIGNED_IN:
                b.get('/login')
                b.d.add_cookie({'name': cookie.split('=')[0], 'value': cookie.split('=', 1)[1], 'path': '/'})
            b.get(path)
            b.wait_until(lambda: True)
            fetched = b.js("return performance.getEntriesByType('resource').map(e => new URL(e.name).pathname"
                           " + new URL(e.name).search)")
            again = [u for u in urls if u in fetched]
            check(f'{path}: the script uses the data islands (no fetch of them)', not again, again)
            check(f'{path}: nothing injected ran', b.js('return window.__pwned === undefined'))
            left = b.js("return document.querySelectorAll('script[type=\"application/json\"]').length")
            check(f'{path}: the islands are taken out once read', left == 0, left)
            # The two renderings stay in step: the script's page links everywhere the
            # first view does, and shows as many table rows.
            links = set(b.js("return [...document.querySelectorAll('main a[href]')].map(a => a.href)"))
            missing = sorted({urllib.parse.urljoin(s.url + path, h) for h in parsed.hrefs} - links)
            check(f'{path}: every link of the first view is on the rendered page', not missing, missing[:5])
            rows = b.js("return document.querySelectorAll('main tbody tr').length")
            check(f'{path}: the rendered page has the first view\'s table rows', rows == parsed.rows, (parsed.rows, rows))
            if path in ONCE:
                check(f'{path}: built once: no data islands', not islands, sorted(islands))
                shown = b.js("return document.querySelectorAll('main *').length")
                check(f'{path}: built once: the script made no element of its own', shown == parsed.elements,
                      (parsed.elements, shown))
            if path in SIGNED_IN:
                b.d.delete_cookie(cookie.split('=')[0])
        main, _, _, islands, _ = first_view(s, SIGNED_IN[0])
        check(f'{SIGNED_IN[0]} signed out: asked to sign in, no data',
              'href="/login?return_to=%2Fadmin%2Fauditlog"' in main and 'audit-event' not in main and not islands,
              main[:300])
        # A write is seen by the next view (the page reads the domain on each view).
        check('a machine is added after the views', s.api('POST', '/api/v1/machines', {
            'name': 'after-the-views', 'backend': 'qemu'})[0] == 200)
        _, text, _, _, _ = first_view(s, '/admin/machines')
        check('/admin/machines after the write: the new machine in the first view', 'after-the-views' in text,
              text[:300])
    finally:
        b.quit()
        s.stop()
