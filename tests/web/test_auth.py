# SPDX-License-Identifier: MIT
# test_auth.py - signing in: users made with `vigil user add` before the
# server starts; the cookie's flags; a signed-in operator restarts a job
# (with the CSRF token; refused without it or without a session); wrong
# passwords and the failure limit shown as text; API keys made, used with
# the HMAC client and revoked on /user/api_keys; the audit log as an admin;
# a user named like markup shown as text.
import json
import re
import subprocess
import urllib.error
import urllib.parse
import urllib.request

from weblib import Server, Browser, check, VIGIL

XSS = '<img src=x onerror=alert(1)>'
USERS = [('op1', '--operator', 'op1-password'), ('boss', '--admin', 'boss-password'),
         ('victim', '--operator', 'victim-password'), (XSS, None, 'xss-password')]


def add_users(data):
    for name, flag, pw in USERS:
        subprocess.run([VIGIL, 'user', 'add', name, *([flag] if flag else []), '--data', data],
                       input=pw + '\n', text=True, check=True, capture_output=True)


def http(s, method, path, form=None, headers=None):
    """A plain request (no redirects followed) -> (status, headers, parsed JSON or text)."""
    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *a, **k):
            return None
    body = urllib.parse.urlencode(form).encode() if form is not None else None
    req = urllib.request.Request(s.url + path, data=body, method=method,
                                 headers={'Accept': 'application/json', **(headers or {})})
    try:
        with urllib.request.build_opener(NoRedirect).open(req, timeout=60) as r:
            status, hdrs, raw = r.status, r.headers, r.read()
    except urllib.error.HTTPError as e:
        status, hdrs, raw = e.code, e.headers, e.read()
    try:
        return status, hdrs, json.loads(raw)
    except ValueError:
        return status, hdrs, raw.decode(errors='replace')


def sign_in(b, name, password, path=None):
    """Fill the sign-in form (on path, or the current page's) and send it."""
    if path:
        b.get(path)
    b.wait_for('form.login')
    user, pw = b.find('#login-user')[0], b.find('#login-password')[0]
    user.clear()
    user.send_keys(name)
    pw.clear()
    pw.send_keys(password)
    b.find('form.login button[type=submit]')[0].click()


def no_errors(b, page):
    errs = [e for e in b.errors() if 'favicon' not in e]
    check(f'{page}: no console error', not errs, errs)


def header_name(b):
    el = b.find('#user .user-name')
    return el[0].text if el else None


def session_js(b):
    """The page's session through the exact contract other pages use."""
    return b.js("return import(document.querySelector('script[type=module]').src.replace(/app\\.js$/, 'session.js')).then(m => m.currentSession())")


def fetch_status(b, path, method='POST', csrf=None, credentials='same-origin'):
    headers = {'Accept': 'application/json'}
    if csrf:
        headers['X-CSRF-Token'] = csrf
    return b.js('return fetch(arguments[0], {method: arguments[1], headers: arguments[2], credentials: arguments[3]})'
                '.then(r => r.status)', path, method, headers, credentials)


def run_http_checks(s):
    st, h, j = http(s, 'POST', '/login', {'user': 'op1', 'password': 'op1-password', 'return_to': '/tests'})
    cookie = h.get('Set-Cookie', '')
    check('POST /login (JSON) signs in', st == 200 and j['user'] == {'name': 'op1', 'role': 'operator'}, (st, j))
    check('session cookie: HttpOnly, SameSite=Lax, Path=/, no Secure on plain HTTP',
          re.match(r'vigil_session=[0-9a-f]{64};', cookie) and '; HttpOnly' in cookie and '; SameSite=Lax' in cookie
          and '; Path=/' in cookie and 'Secure' not in cookie, cookie)
    token = cookie.split(';')[0]
    st, _, sess = http(s, 'GET', '/api/v1/session', headers={'Cookie': token})
    check('GET /api/v1/session names the user and its CSRF token',
          st == 200 and sess['user']['name'] == 'op1' and re.fullmatch('[0-9a-f]{64}', sess.get('csrf', '')), sess)
    check('GET /api/v1/session without a cookie: {"user": null}',
          http(s, 'GET', '/api/v1/session')[2] == {'user': None})
    st, _, _ = http(s, 'POST', '/api/v1/jobs/2/restart', headers={'Cookie': token})
    check('cookie write without X-CSRF-Token: 403', st == 403, st)
    st, _, _ = http(s, 'POST', '/logout', headers={'Cookie': token})
    check('POST /logout without X-CSRF-Token: 403', st == 403, st)
    st, _, _ = http(s, 'POST', '/logout', headers={'Cookie': token, 'X-CSRF-Token': sess['csrf']})
    check('POST /logout with the token ends the session',
          st == 200 and http(s, 'GET', '/api/v1/session', headers={'Cookie': token})[2]['user'] is None, st)
    st, h, _ = http(s, 'POST', '/login', {'user': 'op1', 'password': 'op1-password'},
                    headers={'Origin': 'http://evil.example', 'Accept': 'text/html'})
    check('sign-in form sent from another site: 403', st == 403 and not h.get('Set-Cookie'), st)
    st, h, _ = http(s, 'POST', '/login', {'user': 'op1', 'password': 'op1-password', 'return_to': '//evil.example/'},
                    headers={'Origin': s.url, 'Accept': 'text/html'})
    check('form sign-in answers 303 to a same-site path only', st == 303 and h.get('Location') == '/', (st, h.get('Location')))
    codes = [http(s, 'POST', '/login', {'user': 'victim', 'password': f'wrong-{i}'})[0] for i in range(5)]
    st, h, j = http(s, 'POST', '/login', {'user': 'victim', 'password': 'victim-password'})
    check('5 failed sign-ins answer 403, the 6th try 429 with Retry-After',
          codes == [403] * 5 and st == 429 and 0 < int(h.get('Retry-After', '0')) <= 60, (codes, st, j))
    st, j = s.api('POST', '/api/v1/jobs/2/comments', {'text': 'by the fixture key'})
    check('API keys without owner work as before (signed comment)', st == 200, (st, j))


def run():
    s = Server('auth', prepare=add_users)
    b = Browser(s)
    try:
        run_http_checks(s)

        b.get('/tests')
        b.wait_for('#user a.signin')
        link = b.find('#user a.signin')[0]
        check('signed out: the header offers "Sign in" coming back here',
              link.text == 'Sign in' and link.get_attribute('href').endswith('/login?return_to=%2Ftests'),
              link.get_attribute('href'))
        b.shot('signed-out')
        link.click()
        b.wait_for('form.login')
        b.shot('login')
        no_errors(b, '/login')

        sign_in(b, 'op1', 'not-the-password')
        err = b.wait_until(lambda: b.find('.login-error')[0].text or None)
        check('wrong password: the error is shown as text', err == 'wrong user name or password', err)
        b.shot('login-wrong')
        sign_in(b, 'victim', 'victim-password')
        err = b.wait_until(lambda: (lambda t: t if 'too many' in t else None)(b.find('.login-error')[0].text))
        check('rate-limited sign-in: shown as text', 'too many failed sign-ins' in err, err)
        b.shot('login-limited')

        sign_in(b, 'op1', 'op1-password')
        b.wait_until(lambda: b.d.current_url.endswith('/tests') and header_name(b) == 'op1')
        check('signed in: back on return_to, the header names the user', header_name(b) == 'op1')
        b.shot('signed-in')
        sess = session_js(b)
        check('currentSession() gives the user and the CSRF token',
              sess['user'] == {'name': 'op1', 'role': 'operator'} and len(sess['csrf']) == 64, sess)
        before = len(s.api('GET', '/api/v1/jobs')[1]['jobs'])
        check('restart job 1 from the signed-in page (fetch with X-CSRF-Token): 200',
              fetch_status(b, '/api/v1/jobs/1/restart', csrf=sess['csrf']) == 200)
        check('the restart made a new job', len(s.api('GET', '/api/v1/jobs')[1]['jobs']) == before + 1)
        check('the same fetch without the token: 403', fetch_status(b, '/api/v1/jobs/1/restart') == 403)
        check('the same fetch without the session: 403',
              fetch_status(b, '/api/v1/jobs/1/restart', csrf=sess['csrf'], credentials='omit') == 403)
        check('the session cookie is HttpOnly (not in document.cookie)',
              'vigil_session' not in b.js('return document.cookie'))

        b.errors()  # the refused fetches above logged their 403s
        b.get('/user/api_keys')
        b.wait_for('table.apikeys tbody tr.apikeys-none')
        no_errors(b, '/user/api_keys')
        b.shot('apikeys-empty')
        b.find('button.apikey-create')[0].click()
        b.wait_for('.apikey-new-secret')
        key, secret = b.find('.apikey-new-key')[0].text, b.find('.apikey-new-secret')[0].text
        b.wait_until(lambda: b.find(f'table.apikeys tr td code.apikey-key'))
        check('a new key is listed, its secret shown once',
              re.fullmatch('[0-9A-F]{16}', key) and re.fullmatch('[0-9A-F]{16}', secret)
              and b.find('table.apikeys code.apikey-key')[0].text == key and secret not in b.find('table.apikeys')[0].text,
              (key, secret))
        b.shot('apikeys-created')
        st, j = s.api('POST', '/api/v1/jobs/2/comments', {'text': 'signed with my own key'}, key=key, secret=secret)
        check("the user's key signs a write (HMAC client)", st == 200, (st, j))
        b.find('button.apikey-revoke')[0].click()
        b.wait_for('table.apikeys tbody tr.apikeys-none')
        st, j = s.api('POST', '/api/v1/jobs/2/comments', {'text': 'after revoking'}, key=key, secret=secret)
        check('a revoked key is refused', st == 403, (st, j))
        check('revoking the new key takes its secret off the page', not b.find('.apikey-new-secret'))
        b.shot('apikeys-revoked')

        b.get('/admin/auditlog')
        b.wait_for('p.audit-denied')
        check('audit log: an operator is told it is for administrators',
              'for administrators' in b.find('p.audit-denied')[0].text)
        b.find('#user button.signout')[0].click()
        b.wait_for('#user a.signin')
        check('signed out: the header offers "Sign in" again', header_name(b) is None)
        check('signed out: the session answers {"user": null}', session_js(b)['user'] is None)
        b.shot('after-signout')

        b.find('#user a.signin')[0].click()
        sign_in(b, 'boss', 'boss-password')
        b.wait_for('table.audit tbody tr')
        check('signing in from the audit log comes back to it', b.d.current_url.endswith('/admin/auditlog'))
        rows = [[td.text for td in tr.find_elements('css selector', 'td')] for tr in b.find('table.audit tbody tr')]
        check('audit log lists the restart by op1',
              any(r[1] == 'op1' and r[2] == 'POST /api/v1/jobs/#/restart' and '/api/v1/jobs/1/restart' in r[3]
                  for r in rows), rows[:8])
        check('audit log lists the key creation by op1',
              any(r[1] == 'op1' and r[2] == 'api_key_create' and key in r[3] for r in rows))
        check("audit log names the owner of a user's key and key:KEY for a key of no user",
              any(r[1] == 'op1' and r[2] == 'POST /api/v1/jobs/#/comments' for r in rows)
              and any(r[1] == f'key:{s.key}' and r[2] == 'POST /api/v1/jobs/#/comments' for r in rows))
        check('audit log lists sign-ins and users added on the command line',
              any(r[1] == 'boss' and r[2] == 'user_login' for r in rows)
              and any(r[1] == 'cli' and r[2] == 'user_add' for r in rows))
        check('audit log: newest first', rows[0][1] == 'boss' and rows[0][2] == 'user_login', rows[0])
        no_errors(b, '/admin/auditlog')
        b.shot('auditlog')
        b.get('/admin/auditlog?limit=3')
        b.wait_for('a.audit-older')
        first = [tr.get_attribute('data-id') for tr in b.find('table.audit tbody tr')]
        b.find('a.audit-older')[0].click()
        b.wait_until(lambda: b.find('a.audit-newer'))
        second = [tr.get_attribute('data-id') for tr in b.find('table.audit tbody tr')]
        check('audit log pages: "Older" shows the next 3',
              len(first) == 3 and len(second) == 3 and int(second[0]) < int(first[-1]), (first, second))
        b.shot('auditlog-older')
        b.find('a.audit-newer')[0].click()
        b.wait_until(lambda: b.find('table.audit tbody tr') and
                     [tr.get_attribute('data-id') for tr in b.find('table.audit tbody tr')] == first)
        check('audit log pages: "Newer" comes back', True)

        b.find('#user button.signout')[0].click()
        b.wait_for('#user a.signin')
        sign_in(b, XSS, 'xss-password', '/login?return_to=/admin/auditlog')
        b.wait_until(lambda: header_name(b) == XSS)
        check('a user named like markup is shown as text',
              header_name(b) == XSS and not b.find('#user img') and not b.find('main img'))
        b.wait_for('p.audit-denied')
        check('... also in the text of the audit page', XSS in b.find('p.audit-denied')[0].text)
        b.shot('markup-user')

        b.d.set_window_size(390, 844)
        b.get('/login')
        b.wait_for('form.login')
        check('/login at 390 px: no sideways scroll', b.no_side_scroll)
        b.shot('login-390')
        b.get('/user/api_keys')
        b.wait_for('table.apikeys')
        check('/user/api_keys at 390 px: no sideways scroll', b.no_side_scroll)
        b.shot('apikeys-390')
    finally:
        b.quit()
        s.stop()
