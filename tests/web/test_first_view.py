# SPDX-License-Identifier: MIT
# test_first_view.py - the server's first view of a page (src/server/web_ssr.h):
# the page's main data is in the HTML the server sends, before any script
# runs; it holds no markup from the data (injected names show as text);
# the API answers it was made from travel along as data islands, and the
# page's script takes them instead of fetching the same URLs again.
import html.parser
import json
import re
import urllib.request

from weblib import Server, Browser, check

XSS_SCRIPT = '<script>window.__pwned = 1</script>'
XSS_IMG = '"><img src=x onerror="window.__pwned=2">'

# (path, what the first view's <main> must hold: a regular expression over
# its HTML, the API URLs it is made from (the islands)). Each page's
# expectations sit with it; the injected rows come from prepare() below.
PAGES = [
    ('/admin/machines', r'<table class="adm-table adm-machines">.*<td>64bit</td>', ['/api/v1/machines']),
    ('/admin/products', r'<table class="adm-table adm-products">.*<td>grub</td>', ['/api/v1/products']),
    ('/admin/test_suites', r'<table class="adm-table adm-test_suites">.*<td>grub</td>', ['/api/v1/test_suites']),
    ('/', r'<table class="builds"><tbody><tr data-build="1".*<span class="count r-passed" data-count="passed"',
     ['/dashboard_build_results?limit_builds=3&time_limit_days=14']),
    ('/group_overview/1', r'<h1>examples</h1>.*<table class="builds"><tbody><tr data-build="1"',
     ['/api/v1/job_groups/1', '/api/v1/job_groups/1/build_results?limit_builds=10', '/api/v1/groups/1/comments']),
    ('/group_overview/2', r'<h1>&lt;script&gt;.*<div class="comment-text">&quot;&gt;&lt;img',
     ['/api/v1/job_groups/2', '/api/v1/job_groups/2/build_results?limit_builds=10', '/api/v1/groups/2/comments']),
    ('/tests/overview?distri=grub&version=1&build=1&groupid=1',
     r'<table class="matrix">.*<td class="m-cell"><a class="cell r-passed" href="/tests/1"',
     ['/api/v1/jobs/overview?distri=grub&version=1&build=1&groupid=1', '/api/v1/job_groups/1']),
    ('/tests/overview?groupid=2', r'<a class="head-link" href="/group_overview/2">&lt;script&gt;',
     ['/api/v1/jobs/overview?groupid=2', '/api/v1/job_groups/2']),
]

# Pages whose first view shows a value the injection below put in the data.
INJECTED = ['/admin/machines', '/admin/test_suites', '/group_overview/2', '/tests/overview?groupid=2']


class MainParser(html.parser.HTMLParser):
    """The elements inside <main>, and what an attacker would want there."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.depth = 0
        self.bad = []
        self.text = []

    def handle_starttag(self, tag, attrs):
        if tag == 'main':
            self.depth += 1
            return
        if not self.depth:
            return
        if tag in ('script', 'iframe', 'object', 'embed', 'style', 'base', 'link', 'meta'):
            self.bad.append(f'<{tag}>')
        for k, v in attrs:
            if k.startswith('on') or k == 'style':
                self.bad.append(f'{tag} {k}=')
            if k in ('href', 'src', 'action') and v is not None and not (
                    v.startswith('/') and not v.startswith('//') or re.match(r'https?://', v)):
                self.bad.append(f'{tag} {k}={v}')

    def handle_endtag(self, tag):
        if tag == 'main' and self.depth:
            self.depth -= 1

    def handle_data(self, data):
        if self.depth:
            self.text.append(data)


def first_view(s, path):
    """(HTML of <main>, its text, its bad markup, {island URL: parsed JSON}) of path as sent."""
    with urllib.request.urlopen(s.url + path) as r:
        page = r.read().decode()
    m = re.search(r'<main\b[^>]*>(.*)</main>', page, re.S)
    main = m.group(1) if m else ''
    p = MainParser()
    p.feed(page)
    islands = {}
    for url, body in re.findall(r'<script type="application/json" data-url="([^"]*)">(.*?)</script>', page, re.S):
        islands[url.replace('&amp;', '&')] = json.loads(body)
    return main, ''.join(p.text), p.bad, islands


def inject(s):
    check('a machine named with markup is added', s.api('POST', '/api/v1/machines', {
        'name': XSS_IMG, 'backend': 'qemu', 'settings[NOTE]': XSS_SCRIPT})[0] == 200)
    check('a test suite named with markup is added', s.api('POST', '/api/v1/test_suites', {
        'name': XSS_SCRIPT, 'description': XSS_IMG})[0] == 200)
    check('a job group (2) named with markup is added', s.api('POST', '/api/v1/job_groups', {
        'name': XSS_SCRIPT, 'description': XSS_IMG})[0] == 200)
    check('a comment with markup is made on it', s.api('POST', '/api/v1/groups/2/comments', {
        'text': XSS_IMG})[0] == 200)


def run():
    s = Server('first-view')
    b = Browser(s)
    try:
        inject(s)
        for path, want, urls in PAGES:
            main, text, bad, islands = first_view(s, path)
            check(f'{path}: the first view holds the main data', re.search(want, main, re.S), main[:300])
            check(f'{path}: no markup or script from the data in the first view', not bad, bad)
            check(f'{path}: the first view carries its data', set(urls) <= set(islands),
                  f'islands {sorted(islands)}')
            if path in INJECTED:
                check(f'{path}: injected markup shows as text',
                      (XSS_SCRIPT in text or XSS_IMG in text) and '&lt;' in main, text[:300])
            b.get(path)
            b.wait_until(lambda: True)
            fetched = b.js("return performance.getEntriesByType('resource').map(e => new URL(e.name).pathname"
                           " + new URL(e.name).search)")
            again = [u for u in urls if u in fetched]
            check(f'{path}: the script uses the data islands (no fetch of them)', not again, again)
            check(f'{path}: nothing injected ran', b.js('return window.__pwned === undefined'))
            left = b.js("return document.querySelectorAll('script[type=\"application/json\"]').length")
            check(f'{path}: the islands are taken out once read', left == 0, left)
    finally:
        b.quit()
        s.stop()
