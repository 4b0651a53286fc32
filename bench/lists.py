#!/usr/bin/python3
# SPDX-License-Identifier: MIT
# lists.py - the lists' answers at 100 and at 100,000 jobs: the /tests
# page's GET /api/v1/jobs per filter and order (vigil's keyset pages), the
# dashboard's and a group's build results, a build's overview. Each data
# set has the same shape, only its history is longer: 2 job groups, builds
# of 10 jobs (5 tests x 2 machines), 2 distris, versions, flavors and
# arches spread over the jobs, results in fixed proportions; the newest
# build of each group still running or scheduled (pending jobs do not pile
# up with history). Seeded by SQL into a fresh data directory (the schema
# made by vigil itself), served by `vigil serve` with the response cache
# off; the median of RUNS requests per route after WARM ones, the two
# servers asked in turns so the machine's other work weighs on both. A route's
# page size is what the 100-job set can fill, so both answers carry the
# same jobs and only the data behind them differs. Goal: 100k median
# <= 1.5x the 100 median for every route.
# usage: lists.py OUT.json VIGIL WORKDIR   (BENCH_LISTS_RUNS=50, BENCH_LISTS_BIG=100000)
import http.client, json, os, shutil, signal, socket, sqlite3, statistics, subprocess, sys, time
import urllib.parse

RUNS = int(os.environ.get('BENCH_LISTS_RUNS', '50'))
WARM = 5
BIG = int(os.environ.get('BENCH_LISTS_BIG', '100000'))
SMALL = 100
PAGE = 50           # the /tests page's default
GOAL = 1.5
TESTS = ['boot', 'zypper', 'gnome', 'kde', 'textmode']
MACHINES = ['64bit', 'uefi']
# Results of finished jobs, in proportion (of 20): state, result, needs_review.
FINISHED = ([('done', 'passed', 0)] * 14 + [('done', 'failed', 0)] * 2 + [('done', 'failed', 1)] +
            [('done', 'softfailed', 0)] * 2 + [('cancelled', 'user_cancelled', 0)])
PENDING = [('running', 'none', 0)] * 3 + [('scheduled', 'none', 0)] * 7


def free_port():
    s = socket.socket()
    s.bind(('127.0.0.1', 0))
    p = s.getsockname()[1]
    s.close()
    return p


def seed(vigil, data, njobs):
    """A data directory with njobs jobs (2 groups x njobs/20 builds x 10 jobs)."""
    shutil.rmtree(data, ignore_errors=True)
    os.makedirs(data)
    subprocess.run([vigil, 'apikey', 'new', '--data', data, '--admin'], check=True, capture_output=True)
    db = sqlite3.connect(os.path.join(data, 'vigil.db'))
    db.execute("INSERT INTO job_groups (id, name, t_created) VALUES (1, 'opensuse', '2024-01-01T00:00:00'),"
               " (2, 'sle', '2024-01-01T00:00:00')")
    per_group = njobs // 20           # builds of each group
    t0 = time.time() - njobs          # one job a second, the newest now
    jobs, settings = [], []
    jid = 0
    for b in range(1, per_group + 1):
        for g in (1, 2):
            newest = b == per_group
            for k in range(10):
                jid += 1
                test, machine = TESTS[k % 5], MACHINES[k // 5]
                state, result, review = (PENDING[k] if newest else FINISHED[(jid * 7 + b) % len(FINISHED)])
                distri = ('opensuse', 'sle')[(jid // 3) % 2]
                version = ('15.5', 'Tumbleweed')[(jid // 5) % 2]
                flavor = ('DVD', 'NET')[(jid // 7) % 2]
                arch = ('x86_64', 'aarch64')[(jid // 11) % 2]
                created = time.strftime('%Y-%m-%dT%H:%M:%S', time.gmtime(t0 + jid))
                done = state == 'done' or state == 'cancelled'
                jobs.append((jid, 50, state, result, g, test, distri, version, flavor, arch, f'{b:05d}', machine,
                             review, created if state != 'scheduled' else None, created if done else None,
                             created, created))
                for key, val in (('BACKEND', 'qemu'), ('WORKER_CLASS', 'qemu_x86_64'), ('QEMUCPU', 'host'),
                                 ('HDDSIZEGB', '20'), ('ISO', f'{distri}-{version}-{flavor}-{arch}-{b:05d}.iso')):
                    settings.append((jid, key, val))
    db.executemany('INSERT INTO jobs (id, priority, state, result, group_id, test, distri, version, flavor, arch,'
                   ' build, machine, needs_review, t_started, t_finished, t_created, t_updated)'
                   ' VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)', jobs)
    db.executemany('INSERT INTO job_settings (job_id, key, value) VALUES (?, ?, ?)', settings)
    db.commit()
    db.close()
    return per_group


class Server:
    def __init__(self, vigil, data, log):
        self.port = free_port()
        env = dict(os.environ, VIGIL_NO_RESPONSE_CACHE='1')
        self.proc = subprocess.Popen([vigil, 'serve', '--listen', f'127.0.0.1:{self.port}', '--data', data],
                                     stdout=open(log, 'w'), stderr=subprocess.STDOUT, env=env)
        deadline = time.monotonic() + 60
        while True:
            try:
                c = http.client.HTTPConnection('127.0.0.1', self.port, timeout=5)
                c.request('GET', '/api/v1/job_groups')
                if c.getresponse().status == 200:
                    c.close()
                    break
            except OSError:
                pass
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f'bench/lists: vigil serve did not start, see {log}')
            time.sleep(0.05)
        self.conn = http.client.HTTPConnection('127.0.0.1', self.port, timeout=60)

    def get(self, target):
        self.conn.request('GET', target, headers={'Accept': 'application/json'})
        r = self.conn.getresponse()
        body = r.read()
        if r.status != 200:
            raise SystemExit(f'bench/lists: {target}: HTTP {r.status}: {body[:200]!r}')
        return json.loads(body)

    def time_ms(self, target):
        t0 = time.perf_counter()
        self.get(target)
        return (time.perf_counter() - t0) * 1000

    def stop(self):
        self.conn.close()
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def medians_ms(a, ta, b, tb):
    """Medians of RUNS requests to a and to b, taken in turns so that
    whatever else the machine does weighs on both alike."""
    for _ in range(WARM):
        a.get(ta)
        b.get(tb)
    x, y = [], []
    for _ in range(RUNS):
        x.append(a.time_ms(ta))
        y.append(b.time_ms(tb))
    return statistics.median(x), statistics.median(y)


def routes(newest_build):
    """(name, path, params, kind): kind 'jobs' pages (limit filled per set), others fixed."""
    b = newest_build
    r = [('tests: finished', {'state': 'done,cancelled', 'sort': 'id'}),
         ('tests: running', {'state': 'assigned,setup,running,uploading', 'sort': 'id'}),
         ('tests: scheduled', {'state': 'scheduled', 'sort': 'id'})]
    for k, v in (('distri', 'sle'), ('version', 'Tumbleweed'), ('flavor', 'NET'), ('arch', 'aarch64'),
                 ('build', b), ('groupid', '2'), ('result', 'failed'), ('test', 'kde'), ('machine', 'uefi')):
        r.append((f"tests: {k}={'<newest>' if k == 'build' else v}", {k: v, 'sort': 'id'}))
    r += [('tests: finished + result=failed', {'state': 'done,cancelled', 'result': 'failed', 'sort': 'id'}),
          ('tests: finished + distri=sle + arch=x86_64', {'state': 'done,cancelled', 'distri': 'sle',
                                                           'arch': 'x86_64', 'sort': 'id'}),
          ('tests: sort=result', {'sort': 'result'}),
          ('tests: sort=test, state=done', {'sort': 'test', 'state': 'done'}),
          ('jobs (openQA): limit, newest first', {})]
    return [(n, '/api/v1/jobs', p, 'jobs') for n, p in r] + [
        ('dashboard: build results', '/dashboard_build_results', {'limit_builds': 3}, 'fixed'),
        ('group page: build results', '/api/v1/job_groups/1/build_results', {'limit_builds': 5}, 'fixed'),
        ('overview: newest build', '/api/v1/jobs/overview', {'groupid': 1}, 'fixed')]


def target(path, params):
    return path + ('?' + urllib.parse.urlencode(params) if params else '')


def answer_size(j):
    if isinstance(j, list):
        return len(j)
    if 'jobs' in j:
        return len(j['jobs'])
    return sum(len(g.get('build_results', [])) for g in j.get('results', [j]))


def main():
    out, vigil, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    sets = {}
    for n in (SMALL, BIG):
        data = os.path.join(work, f'data-{n}')
        t0 = time.monotonic()
        builds = seed(vigil, data, n)
        print(f'bench/lists: {n} jobs seeded in {time.monotonic() - t0:.1f} s', flush=True)
        sets[n] = (data, f'{builds:05d}')
    res = {'runs': RUNS, 'jobs': [SMALL, BIG], 'routes': []}
    # Page sizes: what the small set fills (at most the page's default).
    srv = Server(vigil, sets[SMALL][0], os.path.join(work, 'serve-small.log'))
    limits = {}
    try:
        for name, path, params, kind in routes(sets[SMALL][1]):
            if kind == 'jobs':
                limits[name] = max(1, min(PAGE, answer_size(srv.get(target(path, {**params, 'limit': 1000})))))
    finally:
        srv.stop()
    small = Server(vigil, sets[SMALL][0], os.path.join(work, 'serve-small.log'))
    big = Server(vigil, sets[BIG][0], os.path.join(work, 'serve-big.log'))
    med = {}
    try:
        for (name, path, params, kind), (_, _, params_big, _) in zip(routes(sets[SMALL][1]), routes(sets[BIG][1])):
            pa = {**params, 'limit': limits[name]} if kind == 'jobs' else params
            pb = {**params_big, 'limit': limits[name]} if kind == 'jobs' else params_big
            ta, tb = target(path, pa), target(path, pb)
            ma, mb = medians_ms(small, ta, big, tb)
            med[name] = (ma, answer_size(small.get(ta)), ta, mb, answer_size(big.get(tb)), tb)
        # A deep keyset page: the same cost as the first.
        mid = big.get(target('/api/v1/jobs', {'state': 'done,cancelled', 'sort': 'id', 'limit': 1,
                                               'before': BIG // 2}))['jobs'][0]['id']
        first = target('/api/v1/jobs', {'state': 'done,cancelled', 'sort': 'id', 'limit': PAGE})
        deep = target('/api/v1/jobs', {'state': 'done,cancelled', 'sort': 'id', 'limit': PAGE, 'next': mid})
        m1, m2 = medians_ms(big, first, big, deep)
        res['deep_page_100k'] = {'target': deep, 'median_ms': round(m2, 3), 'first_page_median_ms': round(m1, 3)}
    finally:
        small.stop()
        big.stop()
    for name, path, params, kind in routes('-'):
        a, sa, ta, b, sb, tb = med[name]
        res['routes'].append({'route': name, 'limit': limits.get(name), 'target_100': ta, 'target_100k': tb,
                              'answer_100': sa, 'answer_100k': sb, 'median_ms_100': round(a, 3),
                              'median_ms_100k': round(b, 3), 'ratio': round(b / a, 2)})
    json.dump(res, open(out, 'w'), indent=1)
    w = max(len(r['route']) for r in res['routes'])
    print(f"\n{'route':{w}}  limit  jobs/builds   median 100  median {BIG // 1000}k  ratio")
    for r in res['routes']:
        ok = 'ok' if r['ratio'] <= GOAL else 'OVER'
        print(f"{r['route']:{w}}  {str(r['limit'] or '-'):>5}  {r['answer_100']:>4}/{r['answer_100k']:<6}  "
              f"{r['median_ms_100']:8.2f} ms  {r['median_ms_100k']:8.2f} ms  {r['ratio']:5.2f} {ok}")
    d = res.get('deep_page_100k')
    if d:
        print(f"deep keyset page at 100k (finished, {PAGE} jobs, from the middle): {d['median_ms']:.2f} ms, "
              f"first page {d['first_page_median_ms']:.2f} ms")


def rows(lists):
    """bench/report.py's rows: (measure, value, goal, met)."""
    for r in lists['routes']:
        yield (f"list {r['route']} ({r['limit'] or 'fixed'}), median ms at 100 / 100k jobs",
               f"{r['median_ms_100']:.2f} / {r['median_ms_100k']:.2f} ({r['ratio']:.2f}x)", f'<= {GOAL}x',
               r['ratio'] <= GOAL)


if __name__ == '__main__':
    main()
