#!/usr/bin/python3
# SPDX-License-Identifier: MIT
# web_tests_api.py - /tests's first view against the API's list of the same
# jobs, in one run: the server CPU of one GET /tests (its three lists of 50,
# built once by the server) and of the three GET /api/v1/jobs?state=…&limit=50
# &sort=id that read the same jobs, answered from the response cache (as a
# repeated poll is) and without it (VIGIL_NO_RESPONSE_CACHE=1); and /tests of
# other vigil binaries (--other, e.g. earlier commits' builds), each on a copy
# of the same data. The servers are measured in interleaved rounds, so a shared,
# loaded machine weighs on each alike: compare ratios within one run.
#
#   web_tests_api.py OUT.json [--vigil BIN] [--other NAME=BIN ...] [--work DIR] [--jobs 10000] [--rounds 10]
#       [--per 5]
#
# The data: bench/web.py's seeding (the anchor's data set grown to --jobs,
# without the grub results, which /tests does not show). Time to content of
# /tests in Chromium: `web.py measure --pages tests` on a server of this data.
import argparse, json, os, shutil, sqlite3, statistics, sys, time, urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import web  # noqa: E402

API = ['/api/v1/jobs?state=assigned,setup,running,uploading&limit=50&sort=id',
       '/api/v1/jobs?state=scheduled&limit=50&sort=id',
       '/api/v1/jobs?state=done,cancelled&limit=50&sort=id']


def get(url):
    t = time.perf_counter()
    with urllib.request.urlopen(url, timeout=60) as r:
        body = r.read()
        assert r.status == 200, url
    return time.perf_counter() - t, len(body)


def cost(srv, paths, per):
    """Server CPU ms and wall ms per view of paths (all of them: one view), per views."""
    for p in paths:  # warm: the cache filled, the statements prepared
        get(srv.url + p)
    a = web.tree_cpu_s(srv.proc.pid)
    wall = 0.0
    for _ in range(per):
        for p in paths:
            wall += get(srv.url + p)[0]
    b = web.tree_cpu_s(srv.proc.pid)
    return (b - a) / per * 1000, wall / per * 1000


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('out')
    ap.add_argument('--vigil', default=os.path.join(web.ROOT, 'build', 'vigil'))
    ap.add_argument('--other', action='append', default=[], help='NAME=BIN: /tests of another vigil binary too')
    ap.add_argument('--work', default=os.path.join(HERE, 'out', 'web-tests-api'))
    ap.add_argument('--jobs', type=int, default=10000)
    ap.add_argument('--rounds', type=int, default=10)
    ap.add_argument('--per', type=int, default=5, help='views per round and server')
    a = ap.parse_args()
    work = os.path.abspath(a.work)
    os.makedirs(work, exist_ok=True)
    others = dict(o.split('=', 1) for o in a.other)
    # Seeded by the first other binary when there is one (an older one: the
    # newer migrate its data).
    base, _ = web.seed_base(os.path.abspath(next(iter(others.values()), a.vigil)), work)
    data = os.path.join(work, f'data-{a.jobs}')
    shutil.rmtree(data, ignore_errors=True)
    shutil.copytree(base, data)
    db = sqlite3.connect(os.path.join(data, 'vigil.db'))
    web.grow_sqlite(db, db.execute('SELECT MAX(id) FROM jobs').fetchone()[0], a.jobs)
    n = db.execute('SELECT COUNT(*) FROM jobs').fetchone()[0]
    db.execute('ANALYZE')
    db.commit()
    db.close()
    copies = {}
    for name in ['nocache', *others]:
        copies[name] = os.path.join(work, f'data-{a.jobs}-{name}')
        shutil.rmtree(copies[name], ignore_errors=True)
        shutil.copytree(data, copies[name])
    logf = os.path.join(work, 'serve.log')
    servers = {'new': web.Serve(os.path.abspath(a.vigil), data, logf),
               'nocache': web.Serve(os.path.abspath(a.vigil), copies['nocache'], logf,
                                    env={'VIGIL_NO_RESPONSE_CACHE': '1'})}
    for name, b in others.items():
        servers[name] = web.Serve(os.path.abspath(b), copies[name], logf)
    views = [('tests', 'new', ['/tests']), ('api_cached', 'new', API), ('api_uncached', 'nocache', API),
             ('tests_uncached', 'nocache', ['/tests'])]
    views += [(f'tests_{name}', name, ['/tests']) for name in others]
    res = {k: {'cpu_ms': [], 'wall_ms': []} for k, _, _ in views}
    try:
        for s in servers.values():
            s.start()
        for r in range(a.rounds):
            for k, s, paths in views:
                c, w = cost(servers[s], paths, a.per)
                res[k]['cpu_ms'].append(c)
                res[k]['wall_ms'].append(w)
            web.log(f'round {r + 1}/{a.rounds}')
    finally:
        for s in servers.values():
            s.stop()
    out = {'jobs': n, 'rounds': a.rounds, 'per': a.per, 'load': os.getloadavg(),
           'views': {k: {m: round(statistics.median(v[m]), 2) for m in v} for k, v in res.items()}}
    t = out['views']
    for k in t:
        t[k]['cpu_vs_api_uncached'] = round(t[k]['cpu_ms'] / t['api_uncached']['cpu_ms'], 2)
    json.dump(out, open(a.out, 'w'), indent=1)
    print(json.dumps(out, indent=1))


if __name__ == '__main__':
    main()
