# SPDX-License-Identifier: MIT
# test_lists.py - the list pages in Chromium against a real server on the
# fixture plus jobs added through the signed API: the dashboard's builds
# and counts, /tests's three sections, filters kept in the URL across a
# reload, keyset paging walked both ways with no duplicate and no gap, the
# overview matrix, the group page, injected markup shown as text, 390 px
# and the dark theme. A screenshot of every page state.
import hashlib
import hmac
import json
import time
import urllib.error
import urllib.parse
import urllib.request

from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import Select

from weblib import Server, Browser, check

SCRIPT = '<script>alert(1)</script>'
IMG = '"><img src=x onerror=alert(1)>'
N_PAGING = 30


def signed_raw(s, method, target, body):
    """A signed request with a raw body (an artefact upload) -> status."""
    t = str(time.time())
    digest = hmac.new(s.secret.encode(), (target + t).encode(), hashlib.sha1).hexdigest()
    req = urllib.request.Request(s.url + target, data=body, method=method, headers={
        'X-API-Key': s.key, 'X-API-Microtime': t, 'X-API-Hash': digest, 'Content-Type': 'application/octet-stream'})
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code


def run_review_job(s):
    """A job taken by a worker (this test, speaking the worker protocol)
    whose runner's results.json says every failure was a near miss, set
    done as failed: the server keeps it as needing review. Returns its id."""
    st, r = s.api('POST', '/api/v1/jobs', {'TEST': 'nearmiss', 'DISTRI': 'rv', 'VERSION': '1', 'FLAVOR': 'cd',
                                           'ARCH': 'x86_64', 'MACHINE': '64bit', 'BUILD': 'review',
                                           '_GROUP': 'examples'})
    check('POST the near-miss job', st == 200, r)
    job = r.get('id')
    st, w = s.api('POST', '/api/v1/workers', {'host': 'lists-test', 'instance': 1, 'worker_class': 'qemu_x86_64'})
    check('register a worker', st == 200, w)
    st, r = s.api('GET', f"/api/v1/workers/{w.get('id')}/work", {'timeout': 5})
    check('the worker gets the near-miss job', st == 200 and (r.get('job') or {}).get('id') == job, r)
    body = json.dumps({'result': 'failed', 'needs_review': True, 'modules': []}).encode()
    check('upload its results.json', signed_raw(s, 'POST', f'/api/v1/jobs/{job}/artefact?file=results.json', body) == 200)
    st, r = s.api('POST', f'/api/v1/jobs/{job}/set_done', {'result': 'failed', 'worker_id': w.get('id')})
    check('set it done as failed', st == 200, r)
    st, r = s.api('GET', f'/api/v1/jobs/{job}')
    check('the job needs review', st == 200 and r['job'].get('needs_review') is True, r)
    return job


def add_jobs(s):
    """30 scheduled jobs of one build (for paging) and one whose TEST, BUILD
    and MACHINE hold markup, all in group examples; a group comment with
    markup. Returns the ids of the 30."""
    ids = []
    for i in range(N_PAGING):
        st, r = s.api('POST', '/api/v1/jobs', {'TEST': f'page{i:02d}', 'DISTRI': 'pg', 'VERSION': '1',
                                               'FLAVOR': 'cd', 'ARCH': 'x86_64', 'MACHINE': '64bit',
                                               'BUILD': 'paging', '_GROUP': 'examples'})
        check(f'POST job page{i:02d}', st == 200, r)
        ids.append(r['id'] if st == 200 else None)
    st, r = s.api('POST', '/api/v1/jobs', {'TEST': SCRIPT, 'DISTRI': 'xss', 'VERSION': '1', 'FLAVOR': 'cd',
                                           'ARCH': 'x86_64', 'MACHINE': IMG, 'BUILD': IMG, '_GROUP': 'examples'})
    check('POST the job with markup in TEST, MACHINE and BUILD', st == 200, r)
    st, r = s.api('POST', '/api/v1/groups/1/comments', {'text': f'look {SCRIPT} and {IMG}'})
    check('POST a group comment with markup', st == 200, r)
    return ids


def css_str(v):
    """v as a quoted CSS string."""
    return '"' + v.replace('\\', '\\\\').replace('"', '\\"') + '"'


def no_markup_ran(b):
    """No element the injected markup would have made, no alert."""
    return b.js("return document.querySelectorAll('img[src=\"x\"], img[onerror], main script').length === 0 && "
                "![...document.scripts].some(s => s.textContent.includes('alert'))")


def follow(b, css):
    """Click the first link matching css and wait for the next page's content."""
    link = b.find(css)[0]
    root = b.find('.lp')[0]
    link.click()
    b.wait_until(lambda: EC.staleness_of(root)(b.d))
    return b.wait_for('.lp')


def rows(b, scope='table.jobs'):
    return [int(r.get_attribute('data-id')) for r in b.find(f'{scope} tbody tr')]


def query(b):
    return urllib.parse.parse_qs(urllib.parse.urlparse(b.d.current_url).query)


def page_errors(b):
    return [e for e in b.errors() if 'favicon' not in e]


def check_dashboard(s, b):
    b.get('/')
    b.wait_for('.lp-dashboard')
    check('dashboard: the newest 3 builds of examples by default',
          lambda: [r.get_attribute('data-build') for r in b.find('.dash-group[data-group="1"] tr')] ==
          [IMG, 'paging', 'review'])
    b.get('/?limit_builds=5')
    b.wait_for('.lp-dashboard')
    sec = '.dash-group[data-group="1"]'
    check('dashboard: group examples shown', lambda: b.find(f'{sec} h2')[0].text == 'examples')
    row = f'{sec} tr[data-build="1"][data-version="1"]'
    check('dashboard: build 1 of examples listed', lambda: len(b.find(row)) == 1)
    check('dashboard: build 1 counts 1 passed',
          lambda: b.find(f'{row} .count[data-count="passed"] b')[0].text == '1')
    check('dashboard: build 1 links to its overview', lambda: b.find(f'{row} .b-name a')[0].get_attribute('href')
          .endswith('/tests/overview?distri=grub&version=1&build=1&groupid=1'))
    check('dashboard: build paging counts 30 scheduled', lambda: b.find(
        f'{sec} tr[data-build="paging"] .count[data-count="scheduled"] b')[0].text == str(N_PAGING))
    check('dashboard: build review counts 1 needs review, no other failure', lambda: [
        (e.get_attribute('data-count'), e.text) for e in b.find(f'{sec} tr[data-build="review"] .count')] ==
        [('needs_review', '1 needs review')])
    check('dashboard: the bar has a passed segment', lambda: b.js(
        "return document.querySelector('tr[data-build=\"1\"] .cbar-r-passed').getBoundingClientRect().width > 10"))
    check('dashboard: a build named with markup shows as text',
          lambda: f'Build {IMG}' in b.find(f'{sec} tr[data-build={css_str(IMG)}] .b-name')[0].text.replace('\n', ''))
    check('dashboard: the markup did not run', lambda: no_markup_ran(b))
    b.shot('dashboard')
    check('dashboard: no console error', lambda: not page_errors(b), page_errors(b))


def check_tests_sections(s, b, paging_ids, review):
    b.get('/tests')
    b.wait_for('.lp-tests')
    fin = '[data-section="finished"]'
    check('/tests: three sections', lambda: [e.get_attribute('data-section') for e in b.find('.tests-section')] ==
          ['running', 'scheduled', 'finished'])
    done = sorted((j['id'] for j in s.fixture_jobs if j['state'] in ('done', 'cancelled')), reverse=True)
    check('/tests: finished lists the near-miss job, then the fixture\'s finished jobs, newest first',
          lambda: rows(b, f'{fin} table.jobs')[:1 + len(done)] == [review] + done)
    check('/tests: finished job 1 shows passed', lambda: b.find(f'{fin} tr[data-id="1"] .t-result')[0].text == 'passed')
    check('/tests: the near-miss job shows needs review', lambda: b.find(
        f'{fin} tr[data-id="{review}"] .t-result.r-needs_review')[0].text == 'needs review')
    check('/tests: the job links to its page', lambda: b.find(f'{fin} tr[data-id="1"] .t-test a')[0]
          .get_attribute('href').endswith('/tests/1'))
    sched = rows(b, '[data-section="scheduled"] table.jobs')
    check('/tests: scheduled lists the 31 new jobs, newest first',
          lambda: len(sched) == N_PAGING + 1 and sched == sorted(sched, reverse=True) and set(paging_ids) <= set(sched))
    check('/tests: no running job', lambda: b.find('[data-section="running"] .empty')[0].text == 'None.')
    xss = f'[data-section="scheduled"] tr[data-id="{max(sched)}"]'
    check('/tests: TEST with markup shown as text', lambda: b.find(f'{xss} .t-test')[0].text == f'{SCRIPT}@{IMG}')
    check('/tests: BUILD with markup shown as text', lambda: IMG in b.find(f'{xss} .t-build')[0].text)
    check('/tests: the markup did not run', lambda: no_markup_ran(b))
    b.shot('tests')
    check('/tests: no console error', lambda: not page_errors(b), page_errors(b))


def check_filters(s, b):
    b.get('/tests')
    b.wait_for('.lp-tests form.filters')
    b.find('input[name="distri"]')[0].send_keys('grub')
    Select(b.find('select[name="result"]')[0]).select_by_value('passed')
    follow(b, '.f-buttons button')
    q = query(b)
    check('filter: the URL holds distri and result', q.get('distri') == ['grub'] and q.get('result') == ['passed'], q)
    check('filter: the URL holds nothing empty', set(q) == {'distri', 'result'}, q)
    check('filter: finished narrowed to job 1', lambda: rows(b, '[data-section="finished"] table.jobs') == [1])
    check('filter: scheduled narrowed to none', lambda: not rows(b, '[data-section="scheduled"] table.jobs'))
    b.shot('tests-filtered')
    b.d.refresh()
    b.wait_for('.lp-tests')
    check('filter: after a reload the form keeps distri',
          lambda: b.find('input[name="distri"]')[0].get_attribute('value') == 'grub')
    check('filter: after a reload the form keeps result',
          lambda: Select(b.find('select[name="result"]')[0]).first_selected_option.get_attribute('value') == 'passed')
    check('filter: after a reload the table is still narrowed',
          lambda: rows(b, '[data-section="finished"] table.jobs') == [1])
    # Another filter: a distri that has no finished job, by group.
    b.get('/tests?distri=pg&groupid=1')
    b.wait_for('.lp-tests')
    check('filter: distri=pg lists the 30 scheduled ones only', lambda: len(
        rows(b, '[data-section="scheduled"] table.jobs')) == N_PAGING and
        not rows(b, '[data-section="finished"] table.jobs'))
    check('filter: the group select shows examples',
          lambda: Select(b.find('select[name="groupid"]')[0]).first_selected_option.text == 'examples')


def walk(b, start, want, label):
    """Follow "Older" from start to the end, then "Newer" back; every page's
    ids in order must be want, cut into pages, no duplicate, no gap."""
    b.get(start)
    b.wait_for('.lp-tests')
    pages = [rows(b)]
    while b.find('.pager .p-next'):
        follow(b, '.pager .p-next')
        pages.append(rows(b))
        if len(pages) > 20:
            break
    seen = [i for p in pages for i in p]
    limit = int(query(b).get('limit', ['50'])[0])
    check(f'{label}: {len(pages)} pages of at most {limit}', all(len(p) <= limit for p in pages) and len(pages) > 1,
          [len(p) for p in pages])
    check(f'{label}: the pages hold every job once, in order', seen == want, f'{seen} != {want}')
    check(f'{label}: the URL carries the cursor', 'next' in query(b))
    b.shot(label.replace(' ', '-').replace('=', '-'))
    back = [rows(b)]
    while b.find('.pager .p-prev'):
        follow(b, '.pager .p-prev')
        back.append(rows(b))
        if len(back) > 20:
            break
    check(f'{label}: walking back gives the same pages', back[::-1] == pages, f'{back[::-1]} != {pages}')
    check(f'{label}: back on the first page, no newer link', not b.find('.pager .p-prev'))


def check_api(s):
    """The list API's answers beside the pages: openQA's shape kept, bad keyset requests refused."""
    st, r = s.api('GET', '/api/v1/jobs', {'limit': 2})
    ids = [j['id'] for j in r['jobs']] if st == 200 else []
    check('API openQA list: the 2 newest, oldest first, no keyset fields',
          st == 200 and len(ids) == 2 and ids[0] < ids[1] and 'next' not in r, r if st != 200 else ids)
    for params, why in (({'sort': 'bogus'}, 'an unknown sort'), ({'next': 5, 'prev': 9}, 'next and prev'),
                        ({'sort': 'id', 'offset': 5}, 'offset with a keyset page'),
                        ({'sort': 'id', 'latest': 1}, 'latest with a keyset page'), ({'next': 'x'}, 'a bad cursor')):
        st, r = s.api('GET', '/api/v1/jobs', params)
        check(f'API keyset: {why} is a 400', st == 400, (st, r))
    st, r = s.api('GET', '/api/v1/jobs', {'group': 'examples', 'sort': 'id', 'limit': 3})
    check('API: group by name (openQA), 3 of them and a next cursor',
          st == 200 and len(r['jobs']) == 3 and r['next'] == r['jobs'][-1]['id'] and r['prev'] is None, r)
    st, r = s.api('GET', '/api/v1/jobs', {'group': 'no such group', 'sort': 'id'})
    check('API: an unknown group name lists nothing', st == 200 and r['jobs'] == [], r)
    st, r = s.api('GET', '/api/v1/job_groups/99/build_results')
    check('API: build results of an unknown group is a 404', st == 404, (st, r))
    st, r = s.api('GET', '/api/v1/job_groups/1/build_results', {'limit_builds': 1})
    check('API: build results (openQA shape) of the newest build',
          st == 200 and len(r['build_results']) == 1 and r['group']['name'] == 'examples' and
          {'passed', 'failed', 'softfailed', 'needs_review', 'running', 'scheduled', 'total'} <=
          set(r['build_results'][0]), r)
    st, r = s.api('GET', '/api/v1/jobs/overview', {'distri': 'grub', 'version': '1', 'build': '1', 'groupid': 1})
    check('API: jobs overview of build 1 is job 1', st == 200 and [(j['id'], j['name']) for j in r] ==
          [(1, 'grub-1-cd-x86_64-Build1-grub@64bit')], r)


def check_paging(s, b):
    st, r = s.api('GET', '/api/v1/jobs', {'state': 'scheduled', 'sort': 'id', 'limit': 1000})
    by_id = [j['id'] for j in r['jobs']]
    check('API keyset: scheduled jobs newest first', by_id == sorted(by_id, reverse=True) and len(by_id) == N_PAGING + 1)
    walk(b, '/tests?state=scheduled&limit=7', by_id, 'paging state=scheduled limit=7')
    st, r = s.api('GET', '/api/v1/jobs', {'state': 'scheduled', 'sort': 'test', 'limit': 1000})
    by_test = [j['id'] for j in r['jobs']]
    tests = [j['test'] for j in r['jobs']]
    check('API keyset: sort=test orders by test', tests == sorted(tests), tests)
    walk(b, '/tests?state=scheduled&sort=test&limit=8', by_test, 'paging sort=test limit=8')
    check('paging: the sorted column is marked', lambda: 'sorted' in b.find('th[aria-sort]')[0].get_attribute('class'))


def check_overview(s, b):
    b.get('/tests/overview?distri=grub&version=1&build=1&groupid=1')
    b.wait_for('.lp-overview')
    cell = b.find('table.matrix a.cell[data-id="1"]')
    check('overview: the grub job has a cell', len(cell) == 1)
    check('overview: the cell links to /tests/1', lambda: cell[0].get_attribute('href').endswith('/tests/1'))
    check('overview: the cell shows passed in its colour', lambda: cell[0].text == 'passed' and
          'r-passed' in cell[0].get_attribute('class'))
    check('overview: row grub, column 64bit', lambda: b.find('tr[data-test="grub"] th')[0].text == 'grub' and
          b.find('th.m-machine')[0].text.startswith('64bit'))
    check('overview: counts on top', lambda: b.find('.ov-counts .count[data-count="passed"] b')[0].text == '1')
    check('overview: links to its group', lambda: b.find('.page-head .head-link')[0].text == 'examples')
    b.shot('overview')
    b.get('/tests/overview?build=paging&groupid=1')
    b.wait_for('.lp-overview')
    check('overview: build paging shows its 30 scheduled jobs', lambda: len(b.find('a.cell.st-scheduled')) == N_PAGING)
    # The build named with markup, reached from the dashboard's link.
    b.get('/')
    b.wait_for('.lp-dashboard')
    follow(b, f'tr[data-build={css_str(IMG)}] .b-name a')
    b.wait_for('table.matrix')
    check('overview: a test named with markup shows as text', lambda: b.find('table.matrix tbody th')[0].text == SCRIPT)
    check('overview: a machine named with markup shows as text', lambda: b.find('th.m-machine')[0].text.startswith(IMG))
    check('overview: the markup did not run', lambda: no_markup_ran(b))
    b.shot('overview-markup')
    check('overview: no console error', lambda: not page_errors(b), page_errors(b))


def check_group(s, b):
    b.get('/group_overview/1')
    b.wait_for('.lp-group')
    check('group: its name', lambda: b.find('.lp-group h1')[0].text == 'examples')
    check('group: build 1 with 1 passed',
          lambda: b.find('tr[data-build="1"] .count[data-count="passed"] b')[0].text == '1')
    check('group: the comment with markup shows as text', lambda: b.find('.comment-text')[0].text ==
          f'look {SCRIPT} and {IMG}')
    check('group: the markup did not run', lambda: no_markup_ran(b))
    b.shot('group')
    check('group: no console error', lambda: not page_errors(b), page_errors(b))


def check_narrow_and_dark(s, b):
    b.d.set_window_size(390, 844)
    for path, name in (('/', 'dashboard'), ('/tests', 'tests'), ('/tests?state=scheduled&limit=5', 'tests-paged'),
                       ('/tests/overview?distri=grub&version=1&build=1&groupid=1', 'overview'),
                       ('/group_overview/1', 'group')):
        b.get(path)
        b.wait_for('.lp')
        check(f'{path} at 390 px: no sideways scroll', b.no_side_scroll)
        b.shot(f'{name}-390')
    b.d.set_window_size(1280, 900)
    b.d.execute_cdp_cmd('Emulation.setEmulatedMedia',
                        {'features': [{'name': 'prefers-color-scheme', 'value': 'dark'}]})
    for path, name in (('/', 'dashboard'), ('/tests', 'tests'),
                       ('/tests/overview?distri=grub&version=1&build=1&groupid=1', 'overview')):
        b.get(path)
        b.wait_for('.lp')
        check(f'{path} dark: a dark background', lambda: b.js(
            "const c = getComputedStyle(document.body).backgroundColor.match(/\\d+/g).map(Number);"
            "return c[0] + c[1] + c[2] < 150"))
        b.shot(f'{name}-dark')
    b.d.execute_cdp_cmd('Emulation.setEmulatedMedia', {'features': []})


def run():
    s = Server('lists')
    b = Browser(s)
    try:
        review = run_review_job(s)
        paging_ids = add_jobs(s)
        check_dashboard(s, b)
        check_tests_sections(s, b, paging_ids, review)
        check_filters(s, b)
        check_api(s)
        check_paging(s, b)
        check_overview(s, b)
        check_group(s, b)
        check_narrow_and_dark(s, b)
    finally:
        b.quit()
        s.stop()
