#!/usr/bin/python3
# SPDX-License-Identifier: MIT
# rejudge.py - re-judging a build of 50 failed jobs after one needle save:
# one real failed result (`vigil run` of tests/web/distri-web-fail: GRUB's
# menu against a needle made to miss, a near miss) is copied to 50 failed
# jobs of one build, as bench/web.py seeds data; then GRUB's real menu needle
# is saved under the asked tag and one POST /api/v1/jobs/<id>/rejudge is
# timed (client's wall time, median of 3, and the server's own "ms"), in
# three cases: the jobs' screenshots as the server stores them (identical
# ones hard-linked to one file, so decoded once), 50 separate files (each
# decoded and searched), and 50 separate files without the fix (every step
# still fails: the margin search and then the whole screen, each time).
# Prints a table and writes bench/out/rejudge.json.
# usage: bench/rejudge.py [VIGIL]
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import api as apib  # noqa: E402

JOBS = int(os.environ.get('BENCH_REJUDGE_JOBS', '50'))
RUNS = 3
OUT = os.path.join(HERE, 'out')
WORK = os.path.join(OUT, 'rejudge')


def log(*a):
    print('bench/rejudge:', *a, file=sys.stderr, flush=True)


def distri(dest):
    """tests/web's failing distribution with its needles (as fixture.d/10-job.sh makes them)."""
    src = os.path.join(ROOT, 'tests', 'web', 'distri-web-fail')
    shutil.rmtree(dest, ignore_errors=True)
    shutil.copytree(src, dest)
    nd = os.path.join(dest, 'needles')
    os.makedirs(nd)
    for ext in ('json', 'png'):
        shutil.copy(os.path.join(ROOT, 'examples', 'grub', 'needles', f'grub-menu.{ext}'), nd)
    subprocess.run([sys.executable, os.path.join(src, 'make-needle.py'),
                    os.path.join(ROOT, 'examples', 'grub', 'needles', 'grub-menu.png'), nd], check=True)
    return dest


def failed_run(vigil):
    """A real failed result (made once; a GRUB boot under QEMU)."""
    out = os.path.join(WORK, 'run')
    done = os.path.join(out, 'testresults', 'results.json')
    if os.path.isfile(done) and json.load(open(done)).get('result') == 'failed':
        return out
    shutil.rmtree(out, ignore_errors=True)
    d = distri(os.path.join(WORK, 'distri'))
    with open(out + '.log', 'w') as f:
        subprocess.run([vigil, 'run', d, '--out', out, '--var', 'NOVIDEO=1'], stdout=f, stderr=subprocess.STDOUT)
    if json.load(open(done)).get('result') != 'failed':
        raise SystemExit(f'bench/rejudge: the web-fail run did not fail (see {out}.log)')
    return out


def fix_needle(data):
    """The save: GRUB's real menu needle under the tag the failed step asked for."""
    subprocess.run([sys.executable, os.path.join(ROOT, 'tests', 'web', 'distri-web-fail', 'make-needle.py'),
                    '--fixed', os.path.join(data, 'tests', 'web-fail', 'needles')], check=True)


def seed(vigil, run, linked):
    """A data directory with JOBS failed jobs of build 'bench' holding the run's results."""
    data, key, secret = apib.fresh_data(vigil, WORK, 'data')
    shutil.copytree(distri(os.path.join(WORK, 'distri-srv')), os.path.join(data, 'tests', 'web-fail'))
    srv = apib.Server(vigil, data, os.path.join(WORK, 'serve.log'))
    srv.start()
    try:
        ids = [apib.api(srv, key, secret, 'POST', 'jobs', {
            'TEST': f'web-fail-{i}', 'DISTRI': 'web-fail', 'VERSION': '1', 'FLAVOR': 'cd', 'ARCH': 'x86_64',
            'MACHINE': '64bit', 'BUILD': 'bench'})[1]['id'] for i in range(JOBS)]
    finally:
        srv.stop()
    tr = os.path.join(run, 'testresults')
    order = json.load(open(os.path.join(tr, 'test_order.json')))
    db = sqlite3.connect(os.path.join(data, 'vigil.db'))
    for jid in ids:
        d = os.path.join(data, 'testresults', str(jid))
        os.makedirs(d)
        for f in os.listdir(tr):
            p = os.path.join(tr, f)
            if os.path.isfile(p):
                (os.link if linked else shutil.copyfile)(p, os.path.join(d, f))
        for m in order:
            r = json.load(open(os.path.join(tr, f"result-{m['name']}.json")))['result']
            db.execute('INSERT INTO job_modules (job_id, name, category, script, result) VALUES (?, ?, ?, ?, ?)',
                       (jid, m['name'], m.get('category', ''), m.get('script', ''),
                        {'ok': 'passed', 'fail': 'failed', 'softfail': 'softfailed'}.get(r, r)))
        # started after its distribution's needles were written (they are the ones it ran with)
        db.execute("UPDATE jobs SET state = 'done', result = 'failed', needs_review = 1, t_started = "
                   "strftime('%Y-%m-%dT%H:%M:%S', 'now', '+1 second'), t_finished = t_created WHERE id = ?", (jid,))
    db.commit()
    db.close()
    return data, key, secret, ids


def measure(vigil, run, name, linked, fixed):
    data, key, secret, ids = seed(vigil, run, linked)
    if fixed:
        time.sleep(2)  # the save comes after the runs (needle times against t_started, 1 s steps)
        fix_needle(data)
    srv = apib.Server(vigil, data, os.path.join(WORK, 'serve.log'))
    srv.start()
    walls, answers = [], []
    try:
        for _ in range(RUNS):
            t, r = apib.api(srv, key, secret, 'POST', f'jobs/{ids[0]}/rejudge')
            walls.append(t * 1000)
            answers.append(r)
    finally:
        srv.stop()
    r = answers[-1]
    res = {
        'case': name, 'jobs': len(r['jobs']), 'steps': r['stats']['steps'],
        'would_pass': sum(j['would_pass'] for j in r['jobs']),
        'screenshots_decoded': r['stats']['screenshots_decoded'], 'searches': r['stats']['searches'],
        'wall_ms_median': round(statistics.median(walls), 1), 'wall_ms': [round(w, 1) for w in walls],
        'server_ms': [a['ms'] for a in answers],
        'verdicts': sorted({j['verdict'] for j in r['jobs']}),
    }
    log(name, json.dumps(res))
    return res


def main():
    vigil = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, 'build', 'vigil'))
    os.makedirs(WORK, exist_ok=True)
    run = failed_run(vigil)
    cases = [measure(vigil, run, 'stored (hard-linked screenshots), after the fix', True, True),
             measure(vigil, run, f'{JOBS} separate screenshot files, after the fix', False, True),
             measure(vigil, run, f'{JOBS} separate screenshot files, still failing', False, False)]
    env = {'cpus': os.cpu_count(), 'loadavg': os.getloadavg(), 'date': time.strftime('%Y-%m-%d %H:%M:%S')}
    out = {'what': f'POST /api/v1/jobs/<id>/rejudge over a build of {JOBS} failed jobs', 'env': env, 'cases': cases}
    with open(os.path.join(OUT, 'rejudge.json'), 'w') as f:
        json.dump(out, f, indent=1)
    print(f"{'case':58} {'jobs':>5} {'steps':>5} {'pass':>5} {'decoded':>7} {'searches':>8} {'wall ms':>8}")
    for c in cases:
        print(f"{c['case']:58} {c['jobs']:5} {c['steps']:5} {c['would_pass']:5} {c['screenshots_decoded']:7} "
              f"{c['searches']:8} {c['wall_ms_median']:8}")
    print(f"({env['cpus']} CPUs, load {env['loadavg'][0]:.2f}; bench/out/rejudge.json)")


if __name__ == '__main__':
    main()
