# SPDX-License-Identifier: MIT
# test_review.py - the review queue, carry-over, RETRY and the investigation
# tab on the fixture's real jobs of scenario web-review (fixture.d/40-review.sh:
# a good run, a failing RETRY=1 run with a bug reference, its retry): the
# retry exists and carried the reference over ("Automatic takeover"); with
# that comment gone the job waits in /review, j/k and Enter open it, a bug
# reference takes it off again; the investigation tab shows the settings
# diff and the failing step beside the good run's; openQA's todo=1 overview
# and the group switch through the API.
from weblib import Server, Browser, check

OPTIONAL = ('favicon', '/static/session.js', '/static/live.js')


def errors(b):
    return [e for e in b.errors() if not any(o in e for o in OPTIONAL)]


def queue_ids(s):
    st, page = s.api('GET', '/api/v1/review', {'limit': 200})
    return [j['id'] for j in page['jobs']] if st == 200 else []


def run():
    s = Server('review')
    b = Browser(s)
    runs = sorted((j for j in s.fixture_jobs if j['test'] == 'web-review'), key=lambda j: j['id'])
    try:
        check('fixture: a good run, a RETRY=1 run and its retry', len(runs) == 3, [(j['id'], j['result']) for j in runs])
        good, first, retry = (j['id'] for j in runs)
        check('the good run passed, both others failed',
              [j['result'] for j in runs] == ['passed', 'failed', 'failed'], [j['result'] for j in runs])

        # --- RETRY=1: the failed run was cloned once, and said why ---
        st, j = s.api('GET', f'/api/v1/jobs/{first}')
        check('RETRY: the failed run has the retry as its clone', j['job'].get('clone_id') == retry, j['job'].get('clone_id'))
        st, cs = s.api('GET', f'/api/v1/jobs/{first}/comments')
        check('RETRY: a comment by the system says why',
              any(c['text'].startswith('Restarting because RETRY is set to 1') and c['userName'] == 'system' for c in cs),
              [(c['userName'], c['text']) for c in cs])
        st, rv = s.api('GET', f'/api/v1/jobs/{retry}/review')
        check('RETRY: the retry is the last run, "failed 2 of 2 runs"',
              st == 200 and rv['retry_verdict'] == 'failed 2 of 2 runs (RETRY=1)' and [r['id'] for r in rv['runs']] == [first, retry], rv)
        st, j = s.api('GET', f'/api/v1/jobs/{retry}')
        check('RETRY: the retry was not retried again', j['job'].get('clone_id') is None)

        # --- carry-over: the retry failed the same way and took the reference over ---
        st, cs = s.api('GET', f'/api/v1/jobs/{retry}/comments')
        carried = [c for c in cs if 'bsc#4242' in c['text']]
        check('carry-over: the bug reference with "(Automatic takeover from t#N)"',
              len(carried) == 1 and carried[0]['text'] == f'bsc#4242 the menu moved\n\n(Automatic takeover from t#{first})\n',
              [c['text'] for c in cs])
        check('carry-over: a job with a reference is not in the queue', retry not in queue_ids(s))
        check('a retried job is not in the queue', first not in queue_ids(s))

        # --- the queue: without the reference the retry waits for review ---
        st, _ = s.api('DELETE', f'/api/v1/jobs/{retry}/comments/{carried[0]["id"]}')
        check('the carried comment deleted', st == 200, st)
        check('the job is in the queue now', retry in queue_ids(s))
        b.get('/review')
        b.wait_for('.review-queue tr.review-row')
        ids = b.js('return [...document.querySelectorAll(".review-queue tr.review-row")].map(r => +r.dataset.id)')
        check('/review lists the failed job', retry in ids, ids)
        check('/review: newest first', ids == sorted(ids, reverse=True), ids)
        check('/review: the first row is selected', b.find('.review-queue tr.review-current')[0].get_attribute('data-id') == str(ids[0]))
        body = b.find('body')[0]
        for _ in range(ids.index(retry)):
            body.send_keys('j')
        body.send_keys('k')
        body.send_keys('j')
        if ids.index(retry) == 0:
            body.send_keys('k')
        check('j / k move the selection to the job', lambda: b.wait_until(
            lambda: b.find('.review-queue tr.review-current')[0].get_attribute('data-id') == str(retry)))
        row = b.find(f'.review-queue tr.review-row[data-id="{retry}"]')[0].text
        check('the row names the failed module and the build', 'nearmiss' in row and '2' in row, row)
        b.shot('review-queue')
        body.send_keys('\ue007')  # Enter
        check('Enter opens the job', lambda: b.wait_until(lambda: b.js('return location.pathname') == f'/tests/{retry}'))
        b.wait_for('.job-module')
        check('/review: no console error', lambda: not errors(b), b.errors())

        st, _ = s.api('POST', f'/api/v1/jobs/{retry}/comments', {'text': 'poo#77 reviewed'})
        check('a bug reference comment posted', st == 200, st)
        check('the bug reference takes the job off the queue', retry not in queue_ids(s))
        b.get('/review')
        b.wait_until(lambda: b.find('.review-queue tbody tr, .review-empty'))
        check('/review no longer lists it',
              not b.find(f'.review-queue tr.review-row[data-id="{retry}"]'))

        # --- openQA's overview with todo=1 ---
        st, over = s.api('GET', '/api/v1/jobs/overview', {'distri': 'web-review', 'todo': 1})
        check('overview todo=1: the reviewed job is not listed', st == 200 and retry not in [o['id'] for o in over], over)
        st, over = s.api('GET', '/api/v1/jobs/overview', {'distri': 'web-review'})
        check('overview without todo lists it', st == 200 and retry in [o['id'] for o in over], over)

        # --- the investigation tab: settings diff, first failing step beside the good one ---
        st, inv = s.api('GET', f'/tests/{retry}/investigation_ajax')
        check('investigation_ajax: last good is the good run, first bad the first failure',
              st == 200 and inv['last_good']['link'] == f'/tests/{good}' and inv['first_bad']['text'] == str(first), inv)
        keys = {r['key'] for r in inv.get('settings_diff', [])}
        check('investigation_ajax: NEARMISS_TAG and RETRY in the settings diff', {'NEARMISS_TAG', 'RETRY'} <= keys, keys)
        b.get(f'/tests/{retry}#investigation')
        b.wait_for('#job-panel-investigation .inv-side')
        text = b.find('#job-panel-investigation')[0].text
        check('tab: the settings diff', 'NEARMISS_TAG' in text and 'grub-menu' in text, text[:400])
        cards = b.find('#job-panel-investigation .inv-step')
        check('tab: this job\'s step and the good run\'s side by side',
              len(cards) == 2 and cards[0].get_attribute('data-job') == str(retry) and cards[1].get_attribute('data-job') == str(good))
        shots = b.wait_until(lambda: b.js(
            'const s = [...document.querySelectorAll("#job-panel-investigation .inv-shot")];'
            'return s.length === 2 && s.every(i => i.complete && i.naturalWidth > 0) ? s.map(i => i.getAttribute("src")) : null'))
        check('tab: both screenshots load', f'/tests/{retry}/images/' in shots[0] and f'/tests/{good}/images/' in shots[1], shots)
        check('tab: the RETRY verdict', 'failed 2 of 2 runs' in text, text[:300])
        b.shot('review-investigation')
        b.js('document.querySelector("#job-panel-investigation .inv-side").scrollIntoView()')
        b.shot('review-investigation-steps')
        check('investigation: no console error', lambda: not errors(b), b.errors())

        b.d.set_window_size(390, 844)
        for path, css, name in (('/review', '.review-queue tbody tr, .review-empty', 'review-390'),
                                (f'/tests/{retry}#investigation', '#job-panel-investigation .inv-side', 'review-390-investigation')):
            b.get(path)
            b.wait_for(css)
            check(f'{path} at 390 px: no sideways scroll', b.no_side_scroll)
            b.shot(name)

        # --- the group switch (openQA's carry_over_bugrefs) ---
        st, _ = s.api('PUT', '/api/v1/job_groups/1', {'carry_over_bugrefs': 0})
        st2, g = s.api('GET', '/api/v1/job_groups/1')
        check('PUT job_groups carry_over_bugrefs=0 is stored', st == 200 and g[0]['carry_over_bugrefs'] == 0, (st, g))
        st, _ = s.api('PUT', '/api/v1/job_groups/1', {'colour': 'x'})
        check('PUT job_groups: a field no group has refused (400)', st == 400, st)
    finally:
        b.quit()
        s.stop()
