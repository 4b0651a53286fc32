# SPDX-License-Identifier: MIT
# test_pages.py - every page URL: served as the shell with the CSP, its
# main data rendered with no console error, nothing scrolling sideways at
# 390 px, a screenshot at both widths; and the static rules of web/ (no
# data parsed as markup, no inline script or style, CSS braces balanced).
import glob
import os
import re
import urllib.request

from weblib import Server, Browser, check

WEB = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'web')

# (screenshot name, path, CSS selector of the page's main data)
PAGES = [
    ('dashboard', '/', 'main tr[data-build]'),
    ('tests', '/tests', 'table.jobs tbody tr'),
    ('overview', '/tests/overview?distri=grub&version=1&build=1&groupid=1', 'main table td a'),
    ('job', '/tests/1', 'main .job-module'),
    ('latest', '/tests/latest?distri=grub&test=grub', 'main .job-module'),
    ('group', '/group_overview/1', 'main tr[data-build]'),
    ('workers', '/admin/workers', 'main table tbody tr'),
    ('machines', '/admin/machines', 'main table tbody tr'),
    ('products', '/admin/products', 'main table tbody tr'),
    ('test_suites', '/admin/test_suites', 'main table tbody tr'),
    ('assets', '/admin/assets', 'main table'),
    ('needles', '/admin/needles', 'main table tbody tr'),
    ('job_templates', '/admin/job_templates/1', 'main textarea'),
    ('login', '/login', 'form.login'),
]


def static_checks():
    banned = re.compile(r'\.innerHTML|\.outerHTML|insertAdjacentHTML|document\.write|DOMParser|'
                        r'setAttribute\(\s*[\'"](style|on\w+)[\'"]|\beval\(|new Function\(')
    hits = []
    for path in sorted(glob.glob(os.path.join(WEB, '*.js'))):
        with open(path) as f:
            for n, line in enumerate(f, 1):
                if banned.search(line):
                    hits.append(f'{os.path.basename(path)}:{n}: {line.strip()}')
    check('web/*.js: no innerHTML, outerHTML, insertAdjacentHTML, document.write, DOMParser, eval, '
          'inline style or handler', not hits, '; '.join(hits))
    with open(os.path.join(WEB, 'index.html')) as f:
        html = f.read()
    check('index.html: no inline script, style or handler',
          not re.search(r'<script(?![^>]*\bsrc=)[^>]*>|<style|\sstyle=|\son\w+=', html))
    # A lost brace silently nests every later rule in the block before it.
    with open(os.path.join(WEB, 'style.css')) as f:
        css = re.sub(r'/\*.*?\*/', '', f.read(), flags=re.S)
    depth, lowest = 0, 0
    for ch in css:
        depth += (ch == '{') - (ch == '}')
        lowest = min(lowest, depth)
    check('style.css: braces balanced', depth == 0 and lowest == 0, f'depth at the end {depth}')


def imports(name, seen=None):
    """The modules web/NAME imports statically, and theirs."""
    seen = set() if seen is None else seen
    with open(os.path.join(WEB, name)) as f:
        for dep in re.findall(r"^import .* from '\./([\w.-]+)';", f.read(), re.M):
            if dep not in seen:
                seen.add(dep)
                imports(dep, seen)
    return seen


def page_errors(b):
    # A 401/403 of the signed-out session probe is expected; nothing else is.
    return [e for e in b.errors() if 'favicon' not in e and '/api/v1/session' not in e]


def run():
    static_checks()
    s = Server('pages')
    b = Browser(s)
    try:
        with urllib.request.urlopen(s.url + '/tests/1') as r:
            csp = r.headers.get('Content-Security-Policy', '')
            shell = r.read().decode()
        check('pages carry a CSP without inline script', "script-src 'self'" in csp and 'unsafe-inline' not in csp)
        # A page with a first view: its data first, the script last, nothing
        # preloaded that the parser would turn to before the data.
        check("the job page's first view: no module preload, the script after <main> and the data",
              'rel="modulepreload"' not in shell and
              shell.index('</main>') < shell.index('data-url="/api/v1/jobs/1/details"') <
              shell.index('<script type="module"'))
        check("the job page carries its details and comments (the first view's data islands)",
              '<script type="application/json" data-url="/api/v1/jobs/1/details">' in shell
              and '<script type="application/json" data-url="/api/v1/jobs/1/comments">' in shell)
        with urllib.request.urlopen(s.url + '/group_overview/1?limit_builds=20') as r:
            check("a query string that changes the data: the page the server built is that query's",
                  '<span class="limit-links">show <a href="/group_overview/1">10</a><b>20</b>' in r.read().decode())
        with urllib.request.urlopen(s.url + '/admin/machines') as r:
            machines = r.read().decode()
        check('the machines page is built by the server (its rows, no data island)',
              '<table class="adm-table adm-machines">' in machines and 'data-url=' not in machines)
        # A page without one: its shell preloads its module graph.
        with urllib.request.urlopen(s.url + '/review') as r:
            review = r.read().decode()
        preloaded = set(re.findall(r'<link rel="modulepreload" href="/static/\d+/([\w.-]+)">', review))
        want = {'page-review.js'} | imports('page-review.js')
        check("the review page's shell preloads page-review.js and every module it imports, not the job page's",
              want <= preloaded and 'page-job.js' not in preloaded, f'missing {sorted(want - preloaded)}')
        for name, path, css in PAGES:
            b.d.set_window_size(1280, 900)
            b.get(path)
            check(f'{path}: main data shown', lambda: b.wait_for(css) is not None)
            b.shot(name)
            check(f'{path}: no console error', lambda: not page_errors(b), page_errors(b))
            # What the shell preloads is what the page asks for: each URL fetched once.
            twice = b.js("const seen = {}, out = [];"
                         "for (const e of performance.getEntriesByType('resource')) {"
                         "  if (!/\\/api\\/|dashboard_build_results/.test(e.name)) continue;"
                         "  if (seen[e.name]) out.push(e.name); seen[e.name] = 1; }"
                         "return out;")
            check(f'{path}: no data fetched twice (the preloads are used)', not twice, twice)
            b.d.set_window_size(390, 844)
            b.get(path)
            b.wait_for(css)
            check(f'{path} at 390 px: no sideways scroll', b.no_side_scroll)
            b.shot(name + '-390')
    finally:
        b.quit()
        s.stop()
