#!/usr/bin/python3
# SPDX-License-Identifier: MIT
# db.py - the uncached job list on both databases: api.py's data set (500
# jobs from 10 POST isos, 400 set done) built on SQLite, moved with
# `vigil db copy` into a throwaway PostgreSQL cluster (initdb/pg_ctl as the
# postgres user, a Unix socket only), then GET /api/v1/jobs?limit=500 and
# /api/v1/jobs/200 one request at a time on a kept-alive connection for
# BENCH_DB_DUR seconds (default 10) against `vigil serve` with the response
# cache off (VIGIL_NO_RESPONSE_CACHE=1), on each database in turn. The
# issue's floor: 20 x openQA's 2.75 req/s for the list (bench/api.py's
# recorded anchor). With OLD_VIGIL (e.g. a build of the previous commit) the
# same measurements run against it too, each old/new pair back to back on
# the same data, so that a loaded machine moves both alike: the ratio is the
# figure to compare. Prints a table and writes OUT.json.
# usage: db.py OUT.json VIGIL WORKDIR [OLD_VIGIL]
import http.client, json, os, shutil, sqlite3, statistics, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import api  # noqa: E402  (the data set and the server wrapper)

DUR = float(os.environ.get('BENCH_DB_DUR', '10'))
OPENQA_JOBS500_RPS = 2.75


def as_postgres(cmd):
    return (['runuser', '-u', 'postgres', '--'] if os.geteuid() == 0 else []) + cmd


def pg_start(work):
    bindir = sorted(d for d in os.listdir('/usr/lib/postgresql'))[-1]
    bindir = f'/usr/lib/postgresql/{bindir}/bin'
    d = tempfile.mkdtemp(prefix='vigil-pg.', dir='/tmp')
    os.chmod(d, 0o755)
    if os.geteuid() == 0:
        shutil.chown(d, 'postgres')
    port = api.free_port()
    subprocess.run(as_postgres([f'{bindir}/initdb', '-D', f'{d}/data', '-U', 'postgres', '--auth=trust', '-E', 'UTF8',
                                '--no-sync']), check=True, stdout=subprocess.DEVNULL)
    # Durable settings as a real deployment keeps them (fsync on).
    subprocess.run(as_postgres([f'{bindir}/pg_ctl', '-D', f'{d}/data', '-l', f'{d}/server.log', '-w', '-t', '120', '-o',
                                f"-k {d} -p {port} -c listen_addresses='' -c max_connections=200", 'start']),
                   check=True, stdout=subprocess.DEVNULL)
    subprocess.run([f'{bindir}/psql', '-q', '-h', d, '-p', str(port), '-U', 'postgres', '-d', 'postgres', '-c',
                    'CREATE DATABASE bench'], check=True)
    return bindir, d, f'postgresql:///bench?host={d}&port={port}&user=postgres'


def pg_stop(bindir, d):
    subprocess.run(as_postgres([f'{bindir}/pg_ctl', '-D', f'{d}/data', '-m', 'fast', '-w', 'stop']),
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    shutil.rmtree(d, ignore_errors=True)


class DbServer(api.Server):
    def __init__(self, vigil, data, log, db=None):
        super().__init__(vigil, data, log)
        self.db = db

    def start(self, env=None):
        if self.db:
            # api.Server has no --db: put it in through the binary's arguments.
            real = self.vigil
            self.vigil = os.path.join(os.path.dirname(self.log), 'vigil-db.sh')
            with open(self.vigil, 'w') as f:
                f.write(f'#!/bin/sh\nexec "{real}" "$@" --db "{self.db}"\n')
            os.chmod(self.vigil, 0o755)
            try:
                return super().start(env)
            finally:
                self.vigil = real
        return super().start(env)


def cpu_s(pids):
    """CPU seconds (user + system) the processes pids have used so far."""
    t = 0
    for pid in pids:
        try:
            with open(f'/proc/{pid}/stat') as f:
                fields = f.read().rsplit(')', 1)[1].split()
            t += int(fields[11]) + int(fields[12])
        except (OSError, IndexError, ValueError):
            pass  # gone meanwhile
    return t / os.sysconf('SC_CLK_TCK')


def pg_backends(pgdir):
    """The pids of the cluster's postmaster and its children (the backends)."""
    try:
        with open(f'{pgdir}/data/postmaster.pid') as f:
            pm = int(f.readline())
    except (OSError, ValueError):
        return []
    kids = [pm]
    for d in os.listdir('/proc'):
        if d.isdigit():
            try:
                with open(f'/proc/{d}/stat') as f:
                    if int(f.read().rsplit(')', 1)[1].split()[1]) == pm:
                        kids.append(int(d))
            except (OSError, IndexError, ValueError):
                pass
    return kids


def measure(url, path, server_pid=None, pgdir=None):
    """Sequential GETs for DUR seconds on one connection: req/s, p50/p99 ms,
    bytes, and the CPU per request of the server (and of PostgreSQL): on a
    loaded machine the rates move with the load, the CPU much less."""
    host, port = url.split('//')[1].split(':')
    c = http.client.HTTPConnection(host, int(port), timeout=60)
    lat, size = [], 0
    for _ in range(3):  # warm-up: prepared statements, page cache
        c.request('GET', path)
        size = len(c.getresponse().read())
    pg = pg_backends(pgdir) if pgdir else []
    c0, p0 = cpu_s([server_pid] if server_pid else []), cpu_s(pg)
    t_end = time.monotonic() + DUR
    t0 = time.monotonic()
    while time.monotonic() < t_end:
        t = time.monotonic()
        c.request('GET', path)
        r = c.getresponse()
        body = r.read()
        if r.status != 200:
            raise SystemExit(f'bench/db: {path} answered {r.status}')
        lat.append((time.monotonic() - t) * 1000)
    wall = time.monotonic() - t0
    c1, p1 = cpu_s([server_pid] if server_pid else []), cpu_s(pg)
    c.close()
    lat.sort()
    return {'rps': round(len(lat) / wall, 1), 'p50_ms': round(statistics.median(lat), 2),
            'p99_ms': round(lat[int(len(lat) * 0.99) - 1], 2), 'requests': len(lat), 'bytes': size or len(body),
            'vigil_cpu_ms': round((c1 - c0) * 1000 / len(lat), 3),
            'postgresql_cpu_ms': round((p1 - p0) * 1000 / len(lat), 3) if pgdir else None}


def main():
    out, vigil, work = sys.argv[1], os.path.abspath(sys.argv[2]), os.path.abspath(sys.argv[3])
    old = os.path.abspath(sys.argv[4]) if len(sys.argv) > 4 else None
    os.makedirs(work, exist_ok=True)
    data, key, secret = api.fresh_data(vigil, work, 'db-data')
    srv = DbServer(vigil, data, os.path.join(work, 'db-serve.log'))
    srv.start()
    try:
        api.populate(srv, key, secret)
    finally:
        srv.stop()
    db = sqlite3.connect(os.path.join(data, 'vigil.db'))
    db.execute("UPDATE jobs SET state = 'done', result = CASE WHEN id % 5 = 0 THEN 'failed' ELSE 'passed' END,"
               " t_started = strftime('%Y-%m-%dT%H:%M:%S', 'now', '-20 minutes'),"
               " t_finished = strftime('%Y-%m-%dT%H:%M:%S', 'now', '-5 minutes') WHERE id <= 400")
    db.commit()
    db.close()
    bindir, pgdir, url = pg_start(work)
    res = {'duration_s': DUR, 'openqa_jobs500_rps': OPENQA_JOBS500_RPS, 'floor_rps': 20 * OPENQA_JOBS500_RPS}
    try:
        t0 = time.monotonic()
        subprocess.run([vigil, 'db', 'copy', os.path.join(data, 'vigil.db'), url], check=True,
                       stdout=subprocess.DEVNULL)
        res['db_copy_s'] = round(time.monotonic() - t0, 2)
        for name, dburl in (('sqlite', None), ('postgresql', url)):
            for label, binary in (('', vigil), ('_old', old)):
                if not binary:
                    continue
                s = DbServer(binary, data, os.path.join(work, f'db-serve-{name}{label}.log'), dburl)
                s.start({'VIGIL_NO_RESPONSE_CACHE': '1'})
                try:
                    pgd = pgdir if dburl else None
                    res[name + label] = {
                        'jobs500_uncached_c1': measure(s.url, '/api/v1/jobs?limit=500', s.proc.pid, pgd),
                        'job200_uncached_c1': measure(s.url, '/api/v1/jobs/200', s.proc.pid, pgd)}
                finally:
                    s.stop()
    finally:
        pg_stop(bindir, pgdir)
    print(f'{"uncached, one connection":28} {"SQLite":>18} {"PostgreSQL":>18}')
    for ep in ('jobs500_uncached_c1', 'job200_uncached_c1'):
        a, b = res['sqlite'][ep], res['postgresql'][ep]
        print(f'{ep:28} {a["rps"]:>8} req/s {a["p50_ms"]:>5} ms {b["rps"]:>8} req/s {b["p50_ms"]:>5} ms')
    for name in ('sqlite', 'postgresql'):
        r = res[name]['jobs500_uncached_c1']['rps']
        res[name]['jobs500_vs_openqa'] = round(r / OPENQA_JOBS500_RPS, 1)
        print(f'{name}: jobs?limit=500 uncached {r} req/s = {r / OPENQA_JOBS500_RPS:.1f} x openQA '
              f'({OPENQA_JOBS500_RPS} req/s; floor 20 x = {20 * OPENQA_JOBS500_RPS} req/s)')
    if old:
        for name in ('sqlite', 'postgresql'):
            for ep in ('jobs500_uncached_c1', 'job200_uncached_c1'):
                a, b = res[name][ep], res[name + '_old'][ep]
                n, o = a['rps'], b['rps']
                a['vs_old'] = round(n / o, 2) if o else None
                print(f'{name} {ep}: {n} req/s, old {o} req/s: {n / o if o else 0:.2f} x; CPU per request'
                      f' vigil {a["vigil_cpu_ms"]} ms (old {b["vigil_cpu_ms"]})'
                      + (f', PostgreSQL {a["postgresql_cpu_ms"]} ms (old {b["postgresql_cpu_ms"]})'
                         if a['postgresql_cpu_ms'] is not None else ''))
    print(f'db copy of the data set: {res["db_copy_s"]} s')
    json.dump(res, open(out, 'w'), indent=1)


if __name__ == '__main__':
    main()
