#!/usr/bin/python3
# SPDX-License-Identifier: MIT
# api.py - vigil serve's side of the API benchmark, on the same data and the
# same load as ../shared/anchors/openqa-web/bench.sh measures a real openQA
# with: 1 job group, 1 product, 5 machines, 10 test suites, 50 job templates,
# 10 POST isos (500 jobs), 400 of them set done by SQL; wrk -c1 / -c16 on
# jobs?limit=500, jobs/200 and job_groups; memory at rest and under load
# (the anchor's procsample.py); start-up to the first 200; timed POST isos.
# Then the scheduler at scale: 100,000 scheduled jobs and 1,000 registered
# workers polling at once, timed until every worker holds a job, on SQLite
# and on PostgreSQL (bench/db.py's throwaway cluster, the data moved by
# `vigil db copy`); then the same with 10 worker classes (worker i offers
# class i % 10; job i needs class i % 10, each ten jobs in a row one
# priority from 10 to 89, mixed across ids, so every priority has every
# class: with a class per priority, workers starve behind SCHED_SCAN_LIMIT,
# see docs/database.md). BENCH_API_SCALE_ONLY=1 runs the scheduler rows alone.
# The reference side: the anchor's bench.sh when OPENQA=1 (it installs
# openQA and PostgreSQL, ~10 min), else the figures it recorded in its
# RESULTS.md on this kind of machine (said so in the output).
# usage: api.py OUT.json VIGIL ANCHOR_DIR WORKDIR
import asyncio, hashlib, hmac, json, os, re, resource, shutil, signal, sqlite3
import statistics, subprocess, sys, time, urllib.parse, urllib.request

DUR = int(os.environ.get('BENCH_API_DUR', '10'))
SCALE_JOBS = int(os.environ.get('BENCH_API_JOBS', '100000'))
SCALE_WORKERS = int(os.environ.get('BENCH_API_WORKERS', '1000'))
SCALE_CLASSES = 10


def free_port():
    import socket
    s = socket.socket()
    s.bind(('127.0.0.1', 0))
    p = s.getsockname()[1]
    s.close()
    return p


class Server:
    def __init__(self, vigil, data, log):
        self.vigil, self.data, self.log = vigil, data, log
        self.port = free_port()
        self.url = f'http://127.0.0.1:{self.port}'
        self.proc = None

    def start(self, env=None):
        """Starts vigil serve; returns seconds from fork to the first 200."""
        t0 = time.monotonic()
        self.proc = subprocess.Popen([self.vigil, 'serve', '--listen', f'127.0.0.1:{self.port}', '--data', self.data,
                                      '--connections', str(SCALE_WORKERS + 200), '--per-ip', '0'],
                                     stdout=open(self.log, 'a'), stderr=subprocess.STDOUT,
                                     env=dict(os.environ, **(env or {})))
        while True:
            try:
                with urllib.request.urlopen(self.url + '/api/v1/job_groups', timeout=5) as r:
                    if r.status == 200:
                        return time.monotonic() - t0
            except OSError:
                pass
            if self.proc.poll() is not None:
                raise SystemExit(f'bench/api: vigil serve exited, see {self.log}')
            time.sleep(0.002)

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None


def sign(key, secret, target):
    mt = f'{time.time():.6f}'
    h = hmac.new(secret.encode(), (target + mt).encode(), hashlib.sha1).hexdigest()
    return {'X-API-Key': key, 'X-API-Microtime': mt, 'X-API-Hash': h, 'Accept': 'application/json'}


def api(srv, key, secret, method, path, params=None):
    """One request the way openqa-cli sends it (form body); returns (seconds, JSON)."""
    target = '/api/v1/' + path
    body = urllib.parse.urlencode(params or {}).encode() if method != 'GET' else None
    req = urllib.request.Request(srv.url + target, data=body, method=method, headers=sign(key, secret, target))
    if body is not None:
        req.add_header('Content-Type', 'application/x-www-form-urlencoded')
    t0 = time.monotonic()
    with urllib.request.urlopen(req, timeout=60) as r:
        data = r.read()
    return time.monotonic() - t0, json.loads(data)


def populate(srv, key, secret):
    """The anchor's data set; returns the POST isos timings."""
    gid = api(srv, key, secret, 'POST', 'job_groups', {'name': 'bench-group'})[1]['id']
    pid = api(srv, key, secret, 'POST', 'products', {'arch': 'x86_64', 'distri': 'bench', 'flavor': 'DVD',
                                                     'version': '12', 'settings[ISO_MAXSIZE]': '4700372992'})[1]['id']
    mids = [api(srv, key, secret, 'POST', 'machines', {'name': f'64bit-{m}', 'backend': 'qemu',
                                                       'settings[QEMUCPU]': 'qemu64',
                                                       'settings[QEMURAM]': str(1024 * m),
                                                       'settings[HDDSIZEGB]': '20'})[1]['id'] for m in range(1, 6)]
    tids = [api(srv, key, secret, 'POST', 'test_suites', {'name': f'suite{t}', 'description': f'bench suite {t}',
                                                          'settings[DESKTOP]': 'textmode',
                                                          'settings[INSTALLONLY]': str(t % 2),
                                                          'settings[YAML_SCHEDULE]': 'schedule/x.yaml'})[1]['id']
            for t in range(1, 11)]
    for m in mids:
        for t in tids:
            api(srv, key, secret, 'POST', 'job_templates', {'group_id': gid, 'product_id': pid, 'machine_id': m,
                                                            'test_suite_id': t, 'prio': 50})
    return [post_iso(srv, key, secret, b) for b in range(1, 11)]


def post_iso(srv, key, secret, build):
    t, j = api(srv, key, secret, 'POST', 'isos', {'ISO': f'bench-{build}.iso', 'DISTRI': 'bench', 'VERSION': '12',
                                                  'FLAVOR': 'DVD', 'ARCH': 'x86_64', 'BUILD': str(build),
                                                  '_NO_OBSOLETE': '1'})
    if j.get('count') != 50:
        raise SystemExit(f'bench/api: POST isos created {j.get("count")} jobs, expected 50: {j}')
    return t


def procsample(anchor, out, pid, cmd=None):
    args = [sys.executable, os.path.join(anchor, 'procsample.py'), out, f'vigil={pid}']
    if cmd:
        args += ['--'] + cmd
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL)
    return json.load(open(out))['groups']['vigil']


UNIT = {'us': 1e-3, 'ms': 1.0, 's': 1e3, 'm': 60e3}


def wrk_parse(path):
    t = open(path).read()
    r = {'rps': float(re.search(r'Requests/sec:\s+([\d.]+)', t).group(1)),
         'n': int(re.search(r'(\d+) requests in', t).group(1))}
    for p in ('50', '99'):
        m = re.search(r'^\s+%s%%\s+([\d.]+)(us|ms|s|m)$' % p, t, re.M)
        r['p' + p] = float(m.group(1)) * UNIT[m.group(2)] if m else None
    m = re.search(r'Non-2xx or 3xx responses: (\d+)', t)
    r['non2xx'] = int(m.group(1)) if m else 0
    m = re.search(r'Socket errors: (.*)', t)
    r['socket_errors'] = m.group(1).strip() if m else ''
    return r


async def http(port, method, target, headers, body=b''):
    reader, writer = await asyncio.open_connection('127.0.0.1', port)
    head = f'{method} {target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Length: {len(body)}\r\n'
    if body:
        head += 'Content-Type: application/x-www-form-urlencoded\r\n'
    head += ''.join(f'{k}: {v}\r\n' for k, v in headers.items()) + '\r\n'
    writer.write(head.encode() + body)
    await writer.drain()
    data = await reader.read()
    writer.close()
    status = int(data.split(b' ', 2)[1])
    return status, json.loads(data.split(b'\r\n\r\n', 1)[1] or b'null')


async def workers_grab(srv, key, secret, n, classes=1):
    """Registers n workers (worker i offers class i % classes when there
    are several), then all long-poll for work at once: seconds until every
    one holds a job, how many got one, how many distinct jobs."""
    sem = asyncio.Semaphore(100)

    async def register(i):
        async with sem:
            cls = f'qemu_x86_64_c{i % classes}' if classes > 1 else 'qemu_x86_64'
            body = urllib.parse.urlencode({'host': f'bench-{i // 8}', 'instance': i % 8 + 1,
                                           'worker_class': cls}).encode()
            st, j = await http(srv.port, 'POST', '/api/v1/workers', sign(key, secret, '/api/v1/workers'), body)
            if st != 200:
                raise SystemExit(f'bench/api: worker registration: HTTP {st} {j}')
            return j['id']

    ids = await asyncio.gather(*(register(i) for i in range(n)))

    async def poll(wid):
        target = f'/api/v1/workers/{wid}/work?timeout=10'
        st, j = await http(srv.port, 'GET', target, sign(key, secret, target))
        return time.monotonic(), (j or {}).get('job') if st == 200 else None

    t0 = time.monotonic()
    res = await asyncio.gather(*(poll(w) for w in ids))
    got = [t for t, job in res if job]
    return (max(got) - t0 if got else None), len(got), len({job['id'] for _, job in res if job})


def fresh_data(vigil, work, name):
    """An empty data directory with an admin key: (path, key, secret)."""
    data = os.path.join(work, name)
    shutil.rmtree(data, ignore_errors=True)
    os.makedirs(data)
    key, secret = subprocess.run([vigil, 'apikey', 'new', '--data', data, '--admin'], check=True,
                                 capture_output=True, text=True).stdout.split()
    return data, key, secret


def scale(vigil, anchor, work, dbkind='sqlite', classes=1):
    """100,000 scheduled jobs (the 500 of the data set copied by SQL), 1,000
    workers, on dbkind ('sqlite' or 'postgresql'); with classes > 1 the jobs
    and workers spread over that many classes, the jobs' priorities mixed."""
    import db as dbbench  # bench/db.py: the throwaway PostgreSQL cluster (it imports this module)
    name = f'scale-{dbkind}-{classes}'
    data, k, s = fresh_data(vigil, work, name)
    srv = Server(vigil, data, os.path.join(work, f'{name}-serve.log'))
    srv.start()
    populate(srv, k, s)
    srv.stop()
    db = sqlite3.connect(os.path.join(data, 'vigil.db'))
    base = db.execute('SELECT COUNT(*) FROM jobs').fetchone()[0]
    cols = ','.join(r[1] for r in db.execute('PRAGMA table_info(jobs)') if r[1] != 'id')
    scols = ','.join(r[1] for r in db.execute('PRAGMA table_info(job_settings)') if r[1] not in ('id', 'job_id'))
    copies = SCALE_JOBS // base
    # The data set copied by SQL in the database served: on PostgreSQL after
    # `vigil db copy` of the 500 jobs (copying 100,000 takes minutes).
    ks = 'k' if dbkind == 'sqlite' else f'generate_series(1, {copies - 1}) AS g(k)'
    sql = [f'INSERT INTO jobs (id, {cols}) SELECT id + k * {base}, {cols} FROM jobs, {ks} WHERE id <= {base}',
           f'INSERT INTO job_settings (job_id, {scols}) SELECT job_id + k * {base}, {scols} '
           f'FROM job_settings, {ks} WHERE job_id <= {base}']
    if classes > 1:
        sql += [f"UPDATE job_settings SET value = 'qemu_x86_64_c' || (job_id % {classes}) WHERE key = 'WORKER_CLASS'",
                f'UPDATE jobs SET priority = 10 + ((id / {classes}) * 37) % 80']
    njobs_sql = "SELECT COUNT(*) FROM jobs WHERE state = 'scheduled'"
    res = {'db': dbkind, 'classes': classes, 'workers': SCALE_WORKERS}
    pg = None
    if dbkind == 'postgresql':
        db.close()
        pg = dbbench.pg_start(work)
        host, port = re.search(r'host=([^&]+)&port=(\d+)', pg[2]).groups()

        def psql(q):
            return subprocess.run([f'{pg[0]}/psql', '-h', host, '-p', port, '-U', 'postgres', '-d', 'bench', '-v',
                                   'ON_ERROR_STOP=1', '-tAc', q], check=True, capture_output=True, text=True).stdout
        try:
            subprocess.run([vigil, 'db', 'copy', os.path.join(data, 'vigil.db'), pg[2]], check=True,
                           stdout=subprocess.DEVNULL)
            for q in sql:
                psql(q)
            # A deployment's autovacuum would have analysed the tables by now.
            psql("SELECT setval(pg_get_serial_sequence('jobs', 'id'), (SELECT MAX(id) FROM jobs)); ANALYZE")
            res['jobs_scheduled'] = int(psql(njobs_sql))
        except BaseException:
            dbbench.pg_stop(pg[0], pg[1])
            raise
        srv = dbbench.DbServer(vigil, data, srv.log, pg[2])
    else:
        db.execute('CREATE TEMP TABLE k (k INTEGER)')
        db.executemany('INSERT INTO k VALUES (?)', [(i,) for i in range(1, copies)])
        for q in sql:
            db.execute(q)
        db.commit()
        res['jobs_scheduled'] = db.execute(njobs_sql).fetchone()[0]
        db.close()
    try:
        res['startup_s'] = srv.start()
        try:
            res['rest'] = procsample(anchor, os.path.join(work, f'{name}-rest.json'), srv.proc.pid)
            t, j = api(srv, k, s, 'GET', 'jobs?limit=500')
            res['jobs500_one_request_s'] = t
            # CPU seconds of the server (and of PostgreSQL) over the hand-out: on a
            # loaded machine the wall time follows the load, the CPU much less.
            pids = [srv.proc.pid] + (dbbench.pg_backends(pg[1]) if pg else [])
            cpu0 = dbbench.cpu_s(pids)
            res['assign_all_s'], res['workers_with_job'], res['distinct_jobs'] = \
                asyncio.run(workers_grab(srv, k, s, SCALE_WORKERS, classes))
            res['server_cpu_s'] = round(dbbench.cpu_s(pids) - cpu0, 2)
            q = "SELECT COUNT(*) FROM jobs WHERE state = 'assigned'"
            if pg:
                res['jobs_assigned_in_db'] = int(psql(q))
            else:
                db = sqlite3.connect(os.path.join(data, 'vigil.db'))
                res['jobs_assigned_in_db'] = db.execute(q).fetchone()[0]
                db.close()
        finally:
            srv.stop()
    finally:
        if pg:
            dbbench.pg_stop(pg[0], pg[1])
    res['workers_abandoned'] = sum('abandoning its jobs' in line for line in open(srv.log, errors='replace'))
    return res


def scale_all(vigil, anchor, work):
    """The scheduler rows: one class on both databases, then 10 classes on both."""
    return {f'scale_{kind}' + (f'_{c}classes' if c > 1 else ''): scale(vigil, anchor, work, kind, c)
            for c in (1, SCALE_CLASSES) for kind in ('sqlite', 'postgresql')}


def vigil_side(vigil, anchor, work):
    data, key, secret = fresh_data(vigil, work, 'data')
    srv = Server(vigil, data, os.path.join(work, 'serve.log'))
    res = {'startup_cold_s': srv.start()}
    srv.stop()
    res['startup_warm_s'] = []
    for _ in range(3):
        res['startup_warm_s'].append(srv.start())
        srv.stop()
    srv.start()
    try:
        res['post_isos_populate_s'] = populate(srv, key, secret)
        db = sqlite3.connect(os.path.join(data, 'vigil.db'))
        db.execute("UPDATE jobs SET state = 'done', result = CASE WHEN id % 5 = 0 THEN 'failed' ELSE 'passed' END,"
                   " t_started = datetime('now', '-20 minutes'), t_finished = datetime('now', '-5 minutes')"
                   " WHERE id <= 400")
        db.commit()
        db.close()
        res['rest'] = procsample(anchor, os.path.join(work, 'rest.json'), srv.proc.pid)
        urls = {'jobs500': '/api/v1/jobs?limit=500', 'job': '/api/v1/jobs/200', 'job_groups': '/api/v1/job_groups'}
        res['endpoints'] = {}
        for ep, path in urls.items():
            with urllib.request.urlopen(srv.url + path) as r:
                size = len(r.read())
            res['endpoints'][ep] = {'url': path, 'bytes': size}
            for c in (1, 16):
                wout = os.path.join(work, f'wrk-{ep}-c{c}.txt')
                p = procsample(anchor, os.path.join(work, f'load-{ep}-c{c}.json'), srv.proc.pid,
                               ['sh', '-c', f"wrk -t{2 if c > 1 else 1} -c{c} -d{DUR}s --timeout 60s --latency "
                                            f"'{srv.url}{path}' > '{wout}' 2>&1"])
                r = wrk_parse(wout)
                r.update({'cpu_s': p.get('cpu_s'), 'pss_mb_peak': p.get('pss_mb_peak')})
                res['endpoints'][ep][f'c{c}'] = r
        res['post_isos_timed_s'] = [post_iso(srv, key, secret, b) for b in range(11, 16)]
        t0 = time.monotonic()
        subprocess.run(['openqa-cli', 'api', '--host', srv.url, '--apikey', key, '--apisecret', secret, '-X', 'POST',
                        'isos', 'ISO=bench-99.iso', 'DISTRI=bench', 'VERSION=12', 'FLAVOR=DVD', 'ARCH=x86_64',
                        'BUILD=99', '_NO_OBSOLETE=1'], check=True, stdout=subprocess.DEVNULL)
        res['post_isos_openqa_cli_wall_s'] = time.monotonic() - t0
        t0 = time.monotonic()
        subprocess.run(['openqa-cli', 'api', '--host', srv.url, 'job_groups'], check=True, stdout=subprocess.DEVNULL)
        res['openqa_cli_floor_s'] = time.monotonic() - t0
        res['rest_after'] = procsample(anchor, os.path.join(work, 'rest-after.json'), srv.proc.pid)
        # The same list without the response cache: every request built anew.
        srv.stop()
        srv.start({'VIGIL_NO_RESPONSE_CACHE': '1'})
        wout = os.path.join(work, 'wrk-jobs500-uncached-c1.txt')
        subprocess.run(['sh', '-c', f"wrk -t1 -c1 -d{DUR}s --timeout 60s --latency '{srv.url}{urls['jobs500']}' "
                                    f"> '{wout}' 2>&1"], check=True)
        res['jobs500_uncached_c1'] = wrk_parse(wout)
    finally:
        srv.stop()
    res.update(scale_all(vigil, anchor, work))
    return res


def openqa_recorded(anchor):
    """The figures the anchor recorded (prefork mode, the packaged setup)."""
    t = open(os.path.join(anchor, 'RESULTS.md')).read()
    eps = {'jobs?limit=500': 'jobs500', 'jobs/200': 'job', 'job_groups': 'job_groups'}
    res = {'source': 'recorded: ' + os.path.join(anchor, 'RESULTS.md'), 'endpoints': {}}
    for m in re.finditer(r'^\| prefork -w30 \| (\S+) \| (\d+) \| ([\d.]+) \| ([\d.]+) \| ([\d.]+) \|', t, re.M):
        res['endpoints'].setdefault(eps[m.group(1)], {})[f'c{m.group(2)}'] = {
            'rps': float(m.group(3)), 'p50': float(m.group(4)), 'p99': float(m.group(5))}
    m = re.search(r'^\| prefork \| at rest after populate \| [\d]+ / (\d+) \(\d+\) \| [\d]+ / (\d+)', t, re.M)
    res['rest_pss_mb'] = float(m.group(2)) if m else None
    m = re.search(r'^\| prefork \| peak under load \| [^|]* \| [\d]+ / (\d+)', t, re.M)
    res['load_pss_mb'] = float(m.group(1)) if m else None
    m = re.search(r'^\| prefork \| ([\d.]+) s \| ([\d.]+) / ([\d.]+) / ([\d.]+) s \| min ([\d.]+), median ([\d.]+)', t, re.M)
    if m:
        res['startup_cold_s'] = float(m.group(1))
        res['startup_warm_s'] = [float(m.group(i)) for i in (2, 3, 4)]
        res['post_isos_openqa_cli_median_s'] = float(m.group(6))
    m = re.search(r'floor \(`openqa-cli api job_groups`\) is [\d.–]+ s, median ~([\d.]+) s', t)
    res['openqa_cli_floor_s'] = float(m.group(1)) if m else None
    return res


def openqa_measured(anchor, work):
    """Runs the anchor's bench.sh on a copy and reads its raw output."""
    cp = os.path.join(work, 'openqa-web')
    shutil.rmtree(cp, ignore_errors=True)
    shutil.copytree(anchor, cp)
    out = os.path.join(work, 'openqa-results')
    shutil.rmtree(out, ignore_errors=True)
    env = dict(os.environ, OUT=out, DUR=str(DUR))
    subprocess.run(['bash', os.path.join(cp, 'bench.sh')], check=True, env=env)
    res = {'source': 'measured now: ' + out, 'endpoints': {}}
    for ep in ('jobs500', 'job', 'job_groups'):
        for c in (1, 16):
            res['endpoints'].setdefault(ep, {})[f'c{c}'] = wrk_parse(os.path.join(out, f'wrk-{ep}-c{c}.txt'))
    rest = json.load(open(os.path.join(out, 'rest.json')))['groups']['openqa']
    res['rest_pss_mb'] = rest.get('pss_mb_start')
    res['load_pss_mb'] = max(json.load(open(os.path.join(out, f)))['groups']['openqa'].get('pss_mb_peak') or 0
                             for f in os.listdir(out) if f.startswith('load-'))
    st = dict(line.split()[1:3] for line in open(os.path.join(out, 'startup.txt')) if line.startswith('startup'))
    res['startup_cold_s'] = float(st.pop('cold_schema_deploy'))
    res['startup_warm_s'] = [float(v) for v in st.values()]
    posts = [float(line.split()[-2]) for line in open(os.path.join(out, 'post_isos.txt')) if line.strip()]
    res['post_isos_openqa_cli_median_s'] = statistics.median(posts)
    res['openqa_cli_floor_s'] = None
    return res


def main():
    out, vigil, anchor, work = sys.argv[1:5]
    os.makedirs(work, exist_ok=True)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    if os.environ.get('BENCH_API_SCALE_ONLY') == '1':
        json.dump({'duration_s': DUR, 'vigil': scale_all(vigil, anchor, work)}, open(out, 'w'), indent=1)
        return
    res = {'duration_s': DUR, 'vigil': vigil_side(vigil, anchor, work)}
    res['openqa'] = openqa_measured(anchor, work) if os.environ.get('OPENQA') == '1' else openqa_recorded(anchor)
    json.dump(res, open(out, 'w'), indent=1)


if __name__ == '__main__':
    main()
