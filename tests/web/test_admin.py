# SPDX-License-Identifier: MIT
# test_admin.py - the admin pages on the fixture: machines, products, test
# suites, job groups, workers, assets, needles (grub's needles last matched
# by job 1) and a group's job templates with the YAML editor (errors marked
# at their line, nothing changed by a refused post, a valid edit saved);
# markup in a setting shows as text; 390 px wide without sideways scroll;
# light and dark. Writes from the pages run first with the fixture's API
# key (the page's own code, buttons and api.js send, with the requests
# signed by a wrapper around fetch), then end to end as an administrator
# signed in through /login: the session cookie and api.js's X-CSRF-Token,
# the audit log naming them.
import os
import re
import subprocess
import urllib.request

from weblib import Server, Browser, By, check, VIGIL
from test_auth import sign_in

ADMIN, ADMIN_PW = 'root-admin', 'root-admin-password'

XSS_SCRIPT = '<script>window.__pwned = 1</script>'
XSS_IMG = '"><img src=x onerror="window.__pwned=2">'

# Signs every write the page sends as openqa-cli does (HMAC-SHA1 of the
# request target and the time, with the fixture's key), then renders the
# page again as a signed-in administrator.
SIGN_AND_ADMIN = '''
const [key, secret, done] = arguments;
const enc = new TextEncoder();
if (!window.__signing) {
	window.__signing = true;
	const orig = window.fetch.bind(window);
	window.fetch = async (url, opts = {}) => {
		if (opts.method && opts.method !== 'GET') {
			const u = new URL(url, location.href);
			const t = String(Date.now() / 1000);
			const k = await crypto.subtle.importKey('raw', enc.encode(secret), { name: 'HMAC', hash: 'SHA-1' }, false, ['sign']);
			const sig = new Uint8Array(await crypto.subtle.sign('HMAC', k, enc.encode(u.pathname + u.search + t)));
			const hex = [...sig].map(b => b.toString(16).padStart(2, '0')).join('');
			opts = { ...opts, headers: { ...opts.headers, 'X-API-Key': key, 'X-API-Microtime': t, 'X-API-Hash': hex } };
		}
		return orig(url, opts);
	};
}
import(document.querySelector("script[type=module]").src.replace(/app\\.js$/, "admin-common.js"))
	.then(m => { m.useSession({ user: { name: 'test-admin', role: 'admin' } }); return import(document.querySelector("script[type=module]").src.replace(/app\\.js$/, "app.js")); })
	.then(app => app.route()).then(() => done('ok'), e => done(String(e)));
'''


def real_errors(b, also=()):
    """Console errors, less the favicon, the absent session.js (sign-in is
    another page's) and the 4xx answers a step expects."""
    skip = ('favicon', 'session.js') + tuple(also)
    return [e for e in b.errors() if not any(s in e for s in skip)]


def text_of(b, css):
    """The shown text of every element matching css, read in one go (no
    stale elements while the page renders again)."""
    return b.js('return [...document.querySelectorAll(arguments[0])].map(e => e.innerText.trim())', css)


def page(b, path, css, name, expect_rows=1):
    b.get(path)
    rows = b.wait_until(lambda: len(b.find(css)) >= expect_rows and b.find(css))
    b.shot(name)
    return rows


def as_admin(b, s):
    return b.d.execute_async_script(SIGN_AND_ADMIN, s.key, s.secret)


def yaml_of(s, group=1):
    with urllib.request.urlopen(f'{s.url}/api/v1/job_templates_scheduling/{group}', timeout=30) as r:
        return r.read().decode()


def add_admin(data):
    subprocess.run([VIGIL, 'user', 'add', ADMIN, '--admin', '--data', data], input=ADMIN_PW + '\n', text=True,
                   check=True, capture_output=True)


def set_yaml(b, text):
    b.js('document.querySelector(".jt-text").value = arguments[0];'
         'document.querySelector(".jt-text").dispatchEvent(new Event("input"));', text)


def signed_in_writes(b, s):
    """A machine added, edited and deleted and a YAML saved by the pages'
    buttons as a signed-in administrator: no API key anywhere."""
    b.get('/login?return_to=/admin/machines')
    sign_in(b, ADMIN, ADMIN_PW)
    b.wait_until(lambda: b.js('return location.pathname') == '/admin/machines' and b.find('.adm-new'))
    check('signed in as an administrator: /admin/machines offers New', lambda: b.wait_until(lambda: b.js(
        'const e = document.querySelector("#user .user-name"); return !!e && e.textContent === arguments[0]', ADMIN)))
    check('no request signing in this page', b.js('return window.__signing === undefined'))
    b.find('.adm-new')[0].click()
    form = b.wait_for('tr[data-id="new"] form')
    form.find_element(By.NAME, 'name').send_keys('by-session')
    form.find_element(By.NAME, 'backend').send_keys('qemu')
    form.find_element(By.CSS_SELECTOR, 'textarea').send_keys('QEMURAM=2048')
    form.find_element(By.CSS_SELECTOR, '.adm-save').click()
    b.wait_until(lambda: 'Added' in ''.join(text_of(b, '.adm-message')))
    st, ans = s.api('GET', '/api/v1/machines', {'name': 'by-session'})
    added = ans['Machines'][0] if st == 200 and ans['Machines'] else None
    check('session: New machine added with its setting', added and
          [(x['key'], x['value']) for x in added['settings']] == [('QEMURAM', '2048')], ans)
    mid = added['id'] if added else 0
    b.find(f'tr[data-id="{mid}"] .adm-edit-btn')[0].click()
    form = b.wait_for(f'tr.adm-editing[data-id="{mid}"] form')
    form.find_element(By.NAME, 'description').send_keys('from a session')
    form.find_element(By.CSS_SELECTOR, '.adm-save').click()
    b.wait_until(lambda: 'Saved' in ''.join(text_of(b, '.adm-message')))
    st, ans = s.api('GET', f'/api/v1/machines/{mid}')
    check('session: Edit saved the description', st == 200 and ans['Machines'][0].get('description') == 'from a session', ans)
    b.shot('machines-session')
    b.find(f'tr[data-id="{mid}"] .adm-del-btn')[0].click()
    b.wait_for(f'tr[data-id="{mid}"] .adm-confirm').click()
    b.wait_until(lambda: 'Deleted' in ''.join(text_of(b, '.adm-message')))
    check('session: Delete removed it', s.api('GET', f'/api/v1/machines/{mid}')[0] == 404)

    before = yaml_of(s)
    b.get('/admin/job_templates/1')
    b.wait_for('.jt-save')
    b.wait_until(lambda: b.js('return document.querySelector(".jt-text").value') == before)
    set_yaml(b, re.sub(r'priority: \d+', 'priority: 30', before))
    b.find('.jt-save')[0].click()
    b.wait_until(lambda: 'Saved' in ''.join(text_of(b, '.jt-result.ok p')))
    check('session: Save stored the YAML', 'priority: 30' in yaml_of(s))
    check('session: the matrix shows it', lambda: b.wait_until(lambda: text_of(b, '.jt-matrix tbody td') == ['30']))
    b.shot('job_templates-session')
    st, log = s.api('GET', '/api/v1/audit_log', {'limit': 20})
    mine = {e['event'] for e in log['events'] if e['user'] == ADMIN} if st == 200 else set()
    check('the audit log names the signed-in administrator for each write',
          {'POST /api/v1/machines', 'PUT /api/v1/machines/#', 'DELETE /api/v1/machines/#',
           'POST /api/v1/job_templates_scheduling/#'} <= mine, (st, mine))
    check('session writes: no console error', lambda: not real_errors(b), b.errors())


def run():
    s = Server('admin', prepare=add_admin)
    # A machine whose name and settings hold markup, an asset used by a job.
    st, ans = s.api('POST', '/api/v1/machines', {'name': 'evil' + XSS_IMG, 'backend': 'qemu',
                                                  'settings[EVIL]': XSS_SCRIPT, 'settings[IMG]': XSS_IMG})
    check('a machine with markup in its settings is added', st == 200, ans)
    os.makedirs(os.path.join(s.data, 'factory', 'iso'), exist_ok=True)
    with open(os.path.join(s.data, 'factory', 'iso', 'admin-test.iso'), 'wb') as f:
        f.write(b'\0' * 7000)
    st, ans = s.api('POST', '/api/v1/assets', {'type': 'iso', 'name': 'admin-test.iso'})
    check('an asset is registered', st == 200, ans)
    st, posted = s.api('POST', '/api/v1/jobs', {'TEST': 'uses_iso', 'DISTRI': 'grub', 'VERSION': '1', 'FLAVOR': 'cd',
                                                'ARCH': 'x86_64', 'MACHINE': '64bit', 'ISO': 'admin-test.iso'})
    iso_job = posted.get('id') if isinstance(posted, dict) else None
    check('a job naming the asset is scheduled', st == 200 and iso_job, posted)
    b = Browser(s)
    try:
        # Machines: the rows, the markup as text.
        page(b, '/admin/machines', 'table.adm-machines tbody tr[data-id]', 'machines', 2)
        check('/admin/machines lists 64bit', '64bit' in text_of(b, 'table.adm-machines td'))
        check('a setting holding <script> shows as text',
              any(XSS_SCRIPT in t for t in text_of(b, 'table.adm-machines .adm-settings li')))
        check('a name holding "><img onerror> shows as text',
              ('evil' + XSS_IMG) in text_of(b, 'table.adm-machines td'))
        check('no markup from data became elements', lambda: not b.find('main img') and not b.find('main script'))
        check('nothing injected ran', b.js('return window.__pwned === undefined'))
        check('signed out: no write buttons', not b.find('.adm-new, .adm-edit-btn, .adm-del-btn'))
        check('/admin/machines: no console error', lambda: not real_errors(b), b.errors())

        page(b, '/admin/products', 'table.adm-products tbody tr[data-id]', 'products')
        check('/admin/products lists grub 1 cd x86_64',
              text_of(b, 'table.adm-products tbody tr[data-id="1"] td')[1:5] == ['grub', '1', 'cd', 'x86_64'])
        page(b, '/admin/test_suites', 'table.adm-test_suites tbody tr[data-id]', 'test_suites')
        check('/admin/test_suites lists grub', 'grub' in text_of(b, 'table.adm-test_suites td'))
        # The filter keeps matching rows only.
        b.get('/admin/machines')
        b.wait_for('table.adm-machines tbody tr[data-id]')
        b.find('.adm-filter')[0].send_keys('64b')
        check('the filter keeps the matching machine',
              lambda: b.wait_until(lambda: len(b.find('table.adm-machines tbody tr[data-id]')) == 1))

        page(b, '/admin/groups', 'table.adm-groups tbody tr[data-id]', 'groups')
        check('/admin/groups links examples to its templates',
              b.find('table.adm-groups a.adm-templates-link')[0].get_attribute('href').endswith('/admin/job_templates/1'))

        # Workers: the fixture's worker, stopped since.
        page(b, '/admin/workers', 'table.adm-workers tbody tr[data-id]', 'workers')
        cells = text_of(b, 'table.adm-workers tbody tr[data-id="1"] td')
        check('/admin/workers shows host:instance, a state and classes',
              cells[0] == 'vm:1' and cells[1] in ('offline', 'idle') and 'qemu_x86_64' in cells[3], cells)
        check('/admin/workers: last seen is a time', b.find('table.adm-workers tbody time[datetime]'))

        # Assets: size readable, the job using it linked.
        page(b, '/admin/assets', 'table.adm-assets tbody tr[data-id]', 'assets')
        row = text_of(b, 'table.adm-assets tbody tr[data-id] td')
        check('/admin/assets: type, name, human size', row[:3] == ['iso', 'admin-test.iso', '6.8 KiB'], row)
        check('/admin/assets: the job naming it is linked',
              any(a.get_attribute('href').endswith(f'/tests/{iso_job}') for a in b.find('table.adm-assets .adm-jobs a')))

        # Needles: grub's needles, last matched by job 1 at a time.
        page(b, '/admin/needles', 'table.adm-needles tbody tr', 'needles', 4)
        grub = {}
        for tr in b.find('table.adm-needles tbody tr'):
            tds = tr.find_elements(By.CSS_SELECTOR, 'td')
            if tds[1].text == 'grub':
                grub[tr.get_attribute('data-name')] = tr
        check('/admin/needles lists the grub needles', {'grub-menu', 'grub-cmdline', 'grub-echo'} <= set(grub), list(grub))
        m = grub.get('grub-menu')
        link = m.find_elements(By.CSS_SELECTOR, '.adm-match a')[0] if m else None
        check('grub-menu: last match is job 1, linked to its step',
              link is not None and re.search(r'/tests/1#step/menu/\d+$', link.get_attribute('href')),
              link.get_attribute('href') if link else '')
        check('grub-menu: last match has a time',
              m is not None and m.find_elements(By.CSS_SELECTOR, '.adm-match time[datetime]'))
        b.find('table.adm-needles thead button')[0].click()  # sort by name
        check('sorting by name reaches the URL and the rows',
              lambda: b.wait_until(lambda: 'sort=name' in b.d.current_url and
                                   [t.get_attribute('data-name') for t in b.find('table.adm-needles tbody tr')] ==
                                   sorted(t.get_attribute('data-name') for t in b.find('table.adm-needles tbody tr'))))
        check('/admin/needles: no console error', lambda: not real_errors(b), b.errors())

        # Job templates of group 1: matrix and the YAML.
        original = yaml_of(s)
        b.get('/admin/job_templates/1')
        b.wait_until(lambda: b.js('return document.querySelector(".jt-text") && document.querySelector(".jt-text").value'))
        b.shot('job_templates')
        check('the matrix shows grub on 64bit with priority 50',
              text_of(b, '.jt-matrix tbody th') == ['grub'] and text_of(b, '.jt-matrix tbody td') == ['50'])
        check('the editor holds the group\'s YAML', b.js('return document.querySelector(".jt-text").value') == original)
        check('the gutter numbers every line', len(b.find('.jt-gutter .jt-ln')) == len(original.split('\n')))
        check('signed out: the YAML is read-only, no Save', b.js('return document.querySelector(".jt-text").readOnly')
              and not b.find('.jt-save'))

        # A broken YAML (a tab indents line 3): the server's answer, fetched
        # with the key, rendered by the page: line 3 marked.
        lines = original.split('\n')
        lines[2] = '\t' + lines[2].lstrip()
        broken = '\n'.join(lines)
        st, ans = s.api('POST', '/api/v1/job_templates_scheduling/1',
                        {'template': broken, 'schema': 'JobTemplates-01.yaml', 'preview': '1'})
        check('the server refuses it naming line 3', st == 400 and ans['error'][0].startswith('line 3,'), ans)
        b.js('document.querySelector(".jt-text").value = arguments[0];'
             'document.querySelector(".jt-text").dispatchEvent(new Event("input"));', broken)
        b.d.execute_async_script('const [st, body, done] = arguments;'
                                 'import(document.querySelector("script[type=module]").src.replace(/app\\.js$/, "page-templates.js")).then(m => { m.showAnswer(st, body, true); done(); });', st, ans)
        check('line 3 is marked in the gutter', text_of(b, '.jt-gutter .jt-ln.bad') == ['3'])
        check('a band marks line 3 behind the text', b.find('.jt-marks .jt-band.bad[data-line="3"]'))
        check('the error is listed with its line', text_of(b, '.jt-errors .jt-goto') == ['line 3'])
        b.shot('job_templates-error')
        check('the refused post changed nothing', yaml_of(s) == original)

        # The page's own Preview and Save, as an admin.
        check('the page renders again as an admin', as_admin(b, s) == 'ok')
        b.wait_for('.jt-save')
        check('as admin: editable, with Preview and Save',
              not b.js('return document.querySelector(".jt-text").readOnly') and b.find('.jt-preview'))
        b.shot('job_templates-admin')
        # Indentation slip on line 3: found on line 4, the mapping of line 2 marked as context.
        lines = original.split('\n')
        lines[2] = '  ' + lines[2]
        b.js('document.querySelector(".jt-text").value = arguments[0];'
             'document.querySelector(".jt-text").dispatchEvent(new Event("input"));', '\n'.join(lines))
        b.find('.jt-preview')[0].click()
        b.wait_for('.jt-result.error')
        check('Preview of a slip on line 3: the error line marked', text_of(b, '.jt-gutter .jt-ln.bad') == ['4'],
              text_of(b, '.jt-errors li'))
        check('and the mapping it broke marked as context', text_of(b, '.jt-gutter .jt-ln.ctx') == ['2'])
        b.shot('job_templates-preview-error')
        # A schema error (an unknown machine) on Save: its line, nothing changed.
        bad = original.replace('machine: 64bit', 'machine: nosuch')
        # The server names the scenario that uses the machine.
        bad_line = bad.split('\n').index('    - grub') + 1
        b.js('document.querySelector(".jt-text").value = arguments[0];'
             'document.querySelector(".jt-text").dispatchEvent(new Event("input"));', bad)
        b.find('.jt-save')[0].click()
        b.wait_for('.jt-result.error')
        check('Save of an unknown machine: its line marked', text_of(b, '.jt-gutter .jt-ln.bad') == [str(bad_line)],
              text_of(b, '.jt-errors li'))
        check('the refused save changed nothing', yaml_of(s) == original)
        # A valid edit saved: priority 50 → 40.
        good = original.replace('priority: 50', 'priority: 40')
        b.js('document.querySelector(".jt-text").value = arguments[0];'
             'document.querySelector(".jt-text").dispatchEvent(new Event("input"));', good)
        b.find('.jt-preview')[0].click()
        b.wait_for('.jt-result.ok')
        check('Preview of a valid edit: valid, nothing saved', yaml_of(s) == original)
        b.find('.jt-save')[0].click()
        b.wait_until(lambda: 'Saved' in ''.join(text_of(b, '.jt-result.ok p')))
        check('Save stored the edit', 'priority: 40' in yaml_of(s))
        check('the matrix shows the new priority', lambda: b.wait_until(lambda: text_of(b, '.jt-matrix tbody td') == ['40']))
        b.shot('job_templates-saved')
        check('templates: no unexpected console error', lambda: not real_errors(b, ('status of 400',)), b.errors())

        # Machines written through the page.
        b.get('/admin/machines')
        b.wait_for('table.adm-machines tbody tr[data-id]')
        as_admin(b, s)
        b.wait_for('.adm-new').click()
        form = b.wait_for('tr[data-id="new"] form')
        form.find_element(By.NAME, 'name').send_keys('uefi')
        form.find_element(By.NAME, 'backend').send_keys('qemu')
        form.find_element(By.CSS_SELECTOR, 'textarea').send_keys('UEFI=1\nQEMUCPU=host')
        b.shot('machines-new')
        form.find_element(By.CSS_SELECTOR, '.adm-save').click()
        b.wait_until(lambda: 'Added' in ''.join(text_of(b, '.adm-message')))
        st, ans = s.api('GET', '/api/v1/machines', {'name': 'uefi'})
        added = ans['Machines'][0] if st == 200 and ans['Machines'] else None
        check('New machine: added with its settings', added and
              sorted((x['key'], x['value']) for x in added['settings']) == [('QEMUCPU', 'host'), ('UEFI', '1')], ans)
        mid = added['id'] if added else 0
        b.find(f'tr[data-id="{mid}"] .adm-edit-btn')[0].click()
        form = b.wait_for(f'tr.adm-editing[data-id="{mid}"] form')
        desc = form.find_element(By.NAME, 'description')
        desc.send_keys('firmware')
        form.find_element(By.CSS_SELECTOR, '.adm-save').click()
        b.wait_until(lambda: 'Saved' in ''.join(text_of(b, '.adm-message')))
        st, ans = s.api('GET', f'/api/v1/machines/{mid}')
        check('Edit: the description saved, settings kept', st == 200 and ans['Machines'][0].get('description') == 'firmware'
              and len(ans['Machines'][0]['settings']) == 2, ans)
        b.find(f'tr[data-id="{mid}"] .adm-del-btn')[0].click()
        b.wait_for(f'tr[data-id="{mid}"] .adm-confirm').click()
        b.wait_until(lambda: 'Deleted' in ''.join(text_of(b, '.adm-message')))
        st, ans = s.api('GET', f'/api/v1/machines/{mid}')
        check('Delete: the machine is gone', st == 404, (st, ans))
        b.shot('machines-admin')
        check('machine writes: no console error', lambda: not real_errors(b), b.errors())

        # The same writes signed in for real.
        signed_in_writes(b, s)

        # 390 px and the dark theme.
        b.d.set_window_size(390, 844)
        for path, css, name in (('/admin/machines', 'table.adm-machines tbody tr[data-id]', 'machines'),
                                ('/admin/products', 'table.adm-products tbody tr[data-id]', 'products'),
                                ('/admin/test_suites', 'table.adm-test_suites tbody tr[data-id]', 'test_suites'),
                                ('/admin/groups', 'table.adm-groups tbody tr[data-id]', 'groups'),
                                ('/admin/workers', 'table.adm-workers tbody tr[data-id]', 'workers'),
                                ('/admin/assets', 'table.adm-assets tbody tr[data-id]', 'assets'),
                                ('/admin/needles', 'table.adm-needles tbody tr', 'needles'),
                                ('/admin/job_templates/1', '.jt-gutter .jt-ln', 'job_templates')):
            page(b, path, css, name + '-390')
            check(f'{path} at 390 px: no sideways scroll', b.no_side_scroll)
        b.d.set_window_size(1280, 900)
        b.d.execute_cdp_cmd('Emulation.setEmulatedMedia', {'features': [{'name': 'prefers-color-scheme', 'value': 'dark'}]})
        page(b, '/admin/machines', 'table.adm-machines tbody tr[data-id]', 'machines-dark')
        check('dark theme follows the system setting',
              b.js('return getComputedStyle(document.body).backgroundColor') != 'rgb(255, 255, 255)')
        b.get('/admin/job_templates/1')
        b.wait_for('.jt-gutter .jt-ln')
        b.d.execute_async_script('const done = arguments[0]; import(document.querySelector("script[type=module]").src.replace(/app\\.js$/, "page-templates.js")).then(m => {'
                                 'm.showAnswer(400, {error: ["line 5, column 3: example error at line 2, column 1"]}, true);'
                                 'done(); });')
        b.shot('job_templates-dark')
    finally:
        b.quit()
        s.stop()
