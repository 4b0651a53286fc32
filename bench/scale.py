#!/usr/bin/python3
# SPDX-License-Identifier: MIT
# scale.py - vigil serve under a big deployment's load (issue 18), on
# localhost: WORKERS simulated workers (register, long-poll for work, a
# status post every STATUS_S seconds while "running" a job for JOB_S
# seconds, one artefact upload, set_done), VIEWERS people watching running
# jobs (the job's JSON and its page, once a second each), and SCRIPTS
# openqa-cli loops creating and reading jobs (the real openqa-cli), for DUR
# seconds. Every loop is bounded. Reports p50/p99 latency and errors per
# kind of request, the server's CPU and peak memory. The simulated workers
# send no frames, so the viewers read the job and its page rather than the
# live picture. The clients run in BENCH_SCALE_PROCS processes. python3
# stdlib only.
# usage: scale.py OUT.json VIGIL WORKDIR [DB]   (DB: a postgresql:// URL; default SQLite)
import asyncio, hashlib, hmac, json, os, random, resource, shutil, signal, statistics, subprocess, sys, time
import urllib.parse, urllib.request

DUR = float(os.environ.get('BENCH_SCALE_DUR', '600'))
WORKERS = int(os.environ.get('BENCH_SCALE_WORKERS', '1000'))
VIEWERS = int(os.environ.get('BENCH_SCALE_VIEWERS', '100'))
SCRIPTS = int(os.environ.get('BENCH_SCALE_SCRIPTS', '2'))
# client processes sharing the simulated workers and viewers: one Python
# process cannot keep 1,100 clients' pace, and its queueing would be
# measured as the server's latency
PROCS = int(os.environ.get('BENCH_SCALE_PROCS', '4'))
JOB_S = float(os.environ.get('BENCH_SCALE_JOB_S', '30'))
STATUS_S = float(os.environ.get('BENCH_SCALE_STATUS_S', '3'))
JOBS = int(os.environ.get('BENCH_SCALE_JOBS', str(WORKERS * 2)))
TIMEOUT_S = 60.0
ARTEFACT = bytes(random.Random(1).getrandbits(8) for _ in range(20000))


def free_port():
    import socket
    s = socket.socket()
    s.bind(('127.0.0.1', 0))
    p = s.getsockname()[1]
    s.close()
    return p


def sign(key, secret, target):
    mt = f'{time.time():.6f}'
    h = hmac.new(secret.encode(), (target + mt).encode(), hashlib.sha1).hexdigest()
    return {'X-API-Key': key, 'X-API-Microtime': mt, 'X-API-Hash': h, 'Accept': 'application/json'}


class Conn:
    """One keep-alive HTTP/1.1 connection (reopened when the server closes it)."""

    def __init__(self, port):
        self.port, self.r, self.w = port, None, None

    async def request(self, method, target, headers, body=b'', ctype=None):
        for attempt in (0, 1):
            if self.w is None:
                self.r, self.w = await asyncio.open_connection('127.0.0.1', self.port)
            head = f'{method} {target} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: {len(body)}\r\n'
            if ctype:
                head += f'Content-Type: {ctype}\r\n'
            head += ''.join(f'{k}: {v}\r\n' for k, v in headers.items()) + '\r\n'
            try:
                self.w.write(head.encode() + body)
                await self.w.drain()
                line = await self.r.readline()
                if not line:
                    raise ConnectionError('closed')
                status = int(line.split(b' ', 2)[1])
                length, chunked, close = 0, False, False
                while True:
                    h = await self.r.readline()
                    if h in (b'\r\n', b''):
                        break
                    k, _, v = h.decode('latin-1').partition(':')
                    k, v = k.strip().lower(), v.strip().lower()
                    if k == 'content-length':
                        length = int(v)
                    elif k == 'transfer-encoding' and 'chunked' in v:
                        chunked = True
                    elif k == 'connection' and v == 'close':
                        close = True
                if chunked:
                    data = b''
                    while True:
                        n = int((await self.r.readline()).split(b';')[0], 16)
                        if n == 0:
                            await self.r.readline()
                            break
                        data += await self.r.readexactly(n)
                        await self.r.readline()
                else:
                    data = await self.r.readexactly(length) if length else b''
                if close:
                    self.close()
                return status, data
            except (ConnectionError, asyncio.IncompleteReadError, OSError):
                self.close()
                if attempt:
                    raise
                if method != 'GET':
                    raise  # a write is not sent twice
        raise ConnectionError('unreachable')

    def close(self):
        if self.w:
            self.w.close()
        self.r = self.w = None


class Stats:
    def __init__(self):
        self.lat, self.err, self.errs = {}, {}, {}

    def add(self, kind, seconds, ok, why=''):
        self.lat.setdefault(kind, []).append(seconds * 1000)
        if not ok:
            self.err[kind] = self.err.get(kind, 0) + 1
            if why and len(self.errs.setdefault(kind, [])) < 5:
                self.errs[kind].append(why)

    def table(self):
        out = {}
        for kind, v in sorted(self.lat.items()):
            v = sorted(v)
            out[kind] = {'requests': len(v), 'errors': self.err.get(kind, 0),
                         'p50_ms': round(statistics.median(v), 1),
                         'p99_ms': round(v[min(len(v) - 1, int(len(v) * 0.99))], 1),
                         'max_ms': round(v[-1], 1), 'first_errors': self.errs.get(kind, [])}
        return out


async def timed(stats, kind, conn, method, target, headers, body=b'', ctype=None, ok=(200,)):
    t0 = time.monotonic()
    try:
        st, data = await asyncio.wait_for(conn.request(method, target, headers, body, ctype), TIMEOUT_S)
    except Exception as e:  # a timeout or a reset: an error of this kind
        conn.close()
        stats.add(kind, time.monotonic() - t0, False, repr(e))
        return None, None
    stats.add(kind, time.monotonic() - t0, st in ok, f'HTTP {st} {data[:120]!r}')
    return st, data


async def worker(i, port, key, secret, end, stats, running):
    conn = Conn(port)
    body = urllib.parse.urlencode({'host': f'bench-{i // 16}', 'instance': i % 16 + 1,
                                   'worker_class': 'qemu_x86_64'}).encode()
    st, data = await timed(stats, 'register', conn, 'POST', '/api/v1/workers', sign(key, secret, '/api/v1/workers'),
                           body, 'application/x-www-form-urlencoded')
    if st != 200:
        return
    wid = json.loads(data)['id']
    for _ in range(100000):
        if time.monotonic() >= end:
            break
        target = f'/api/v1/workers/{wid}/work?timeout=20'
        st, data = await timed(stats, 'work (long poll)', conn, 'GET', target, sign(key, secret, target))
        job = json.loads(data).get('job') if st == 200 else None
        if not job:
            if st != 200:
                await asyncio.sleep(1)
            continue
        jid = job['id']
        running.add(jid)
        t_end = time.monotonic() + JOB_S
        n = 0
        while time.monotonic() < min(t_end, end):
            target = f'/api/v1/jobs/{jid}/status'
            status = {'status': {'worker_id': wid, 'result': {}, 'test_order': [], 'uploading': 0}}
            await timed(stats, 'status', conn, 'POST', target, sign(key, secret, target),
                        json.dumps(status).encode(), 'application/json')
            if n == 1:
                target = f'/api/v1/jobs/{jid}/artefact?file=serial0.txt'
                await timed(stats, 'artefact upload (20 KB)', conn, 'POST', target, sign(key, secret, target),
                            ARTEFACT, 'application/octet-stream')
            n += 1
            await asyncio.sleep(STATUS_S * (0.8 + 0.4 * random.random()))
        running.discard(jid)
        target = f'/api/v1/jobs/{jid}/set_done?result=passed&worker_id={wid}'
        await timed(stats, 'set_done', conn, 'POST', target, sign(key, secret, target))
    conn.close()


async def viewer(i, port, end, stats, running):
    conn = Conn(port)
    rnd = random.Random(i)
    for _ in range(100000):
        if time.monotonic() >= end:
            break
        if running:
            jid = rnd.choice(sorted(running))
            await timed(stats, 'viewer: job JSON', conn, 'GET', f'/api/v1/jobs/{jid}', {})
            await timed(stats, 'viewer: job page', conn, 'GET', f'/tests/{jid}', {'Accept': 'text/html'})
        await asyncio.sleep(1.0)
    conn.close()


async def script(i, url, key, secret, end, stats):
    """openqa-cli creating and reading jobs, one command after another."""
    base = ['openqa-cli', 'api', '--host', url, '--apikey', key, '--apisecret', secret]
    n = 0
    while time.monotonic() < end and n < 100000:
        for kind, args in (('openqa-cli: POST jobs', ['-X', 'POST', 'jobs', f'TEST=cli{i}', 'DISTRI=bench',
                                                       'ARCH=x86_64', f'BUILD=s{i}-{n}', 'WORKER_CLASS=nobody']),
                           ('openqa-cli: GET jobs', ['jobs', 'limit=50']),
                           ('openqa-cli: GET job_groups', ['job_groups'])):
            t0 = time.monotonic()
            p = await asyncio.create_subprocess_exec(*base, *args, stdout=asyncio.subprocess.DEVNULL,
                                                     stderr=asyncio.subprocess.PIPE)
            _, err = await p.communicate()
            stats.add(kind, time.monotonic() - t0, p.returncode == 0, err.decode()[:120])
        n += 1


def proc_cpu_s(pid):
    with open(f'/proc/{pid}/stat') as f:
        v = f.read().rsplit(')', 1)[1].split()
    return (int(v[11]) + int(v[12])) / os.sysconf('SC_CLK_TCK')


def proc_hwm_mb(pid):
    with open(f'/proc/{pid}/status') as f:
        for line in f:
            if line.startswith('VmHWM:'):
                return int(line.split()[1]) / 1024
    return 0.0


async def load(port, url, key, secret, shard, shards, end_wall):
    stats, running = Stats(), set()
    end = time.monotonic() + (end_wall - time.time())
    tasks = [worker(i, port, key, secret, end, stats, running) for i in range(shard, WORKERS, shards)]
    tasks += [viewer(i, port, end, stats, running) for i in range(shard, VIEWERS, shards)]
    tasks += [script(i, url, key, secret, end, stats) for i in range(shard, SCRIPTS, shards)]
    await asyncio.gather(*tasks)
    return stats


def shard_main(argv):
    """scale.py --shard K N PORT KEY SECRET END OUT: this process's share of the load."""
    k, n, port, key, secret, end, out = argv
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    stats = asyncio.run(load(int(port), f'http://127.0.0.1:{port}', key, secret, int(k), int(n), float(end)))
    with open(out, 'w') as f:
        json.dump({'lat': stats.lat, 'err': stats.err, 'errs': stats.errs}, f)


def main():
    if len(sys.argv) < 4:
        raise SystemExit('usage: scale.py OUT.json VIGIL WORKDIR [postgresql://...]')
    out, vigil, work = sys.argv[1:4]
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)  # a socket per worker and viewer, here and in the server
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    db = sys.argv[4] if len(sys.argv) > 4 else None
    data = os.path.join(work, 'scale-load')
    shutil.rmtree(data, ignore_errors=True)
    os.makedirs(data)
    dbargs = ['--db', db] if db else []
    key, secret = subprocess.run([vigil, 'apikey', 'new', '--data', data, '--admin', *dbargs], check=True,
                                 capture_output=True, text=True).stdout.split()
    port = free_port()
    url = f'http://127.0.0.1:{port}'
    log = open(os.path.join(work, 'scale-serve.log'), 'w')
    proc = subprocess.Popen([vigil, 'serve', '--listen', f'127.0.0.1:{port}', '--data', data, *dbargs,
                             '--connections', str(WORKERS + VIEWERS + 200), '--per-ip', '0',
                             '--worker-timeout', '120'], stdout=log, stderr=subprocess.STDOUT)
    try:
        for _ in range(600):
            try:
                urllib.request.urlopen(url + '/api/v1/job_groups', timeout=5).read()
                break
            except OSError:
                time.sleep(0.1)
        # the jobs the workers take
        for i in range(JOBS):
            target = '/api/v1/jobs'
            body = urllib.parse.urlencode({'TEST': f't{i % 50}', 'DISTRI': 'bench', 'ARCH': 'x86_64',
                                           'BUILD': str(i // 100), 'MACHINE': '64bit'}).encode()
            req = urllib.request.Request(url + target, data=body, method='POST', headers=sign(key, secret, target))
            urllib.request.urlopen(req, timeout=30).read()
        cpu0, t0 = proc_cpu_s(proc.pid), time.monotonic()
        end = time.time() + DUR
        shards = [subprocess.Popen([sys.executable, os.path.abspath(__file__), '--shard', str(k), str(PROCS),
                                    str(port), key, secret, str(end), os.path.join(work, f'scale-shard{k}.json')])
                  for k in range(PROCS)]
        for p in shards:
            p.wait()
        wall = time.monotonic() - t0
        stats = Stats()
        for k in range(PROCS):
            with open(os.path.join(work, f'scale-shard{k}.json')) as f:
                part = json.load(f)
            for kind, v in part['lat'].items():
                stats.lat.setdefault(kind, []).extend(v)
            for kind, v in part['err'].items():
                stats.err[kind] = stats.err.get(kind, 0) + v
            for kind, v in part['errs'].items():
                stats.errs.setdefault(kind, []).extend(v[:5])
        cpu = proc_cpu_s(proc.pid) - cpu0
        res = {'database': 'postgresql' if db else 'sqlite', 'seconds': round(wall, 1), 'workers': WORKERS,
               'viewers': VIEWERS, 'scripts': SCRIPTS, 'client_processes': PROCS, 'job_s': JOB_S, 'status_every_s': STATUS_S,
               'server_cpu_percent': round(100 * cpu / wall, 1), 'server_peak_rss_mb': round(proc_hwm_mb(proc.pid), 1),
               'requests': stats.table()}
        res['errors'] = sum(v['errors'] for v in res['requests'].values())
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
    with open(out, 'w') as f:
        json.dump(res, f, indent=1)
    print(f"scale ({res['database']}, {res['seconds']} s, {WORKERS} workers, {VIEWERS} viewers, "
          f"{SCRIPTS} openqa-cli loops): server CPU {res['server_cpu_percent']}%, peak RSS "
          f"{res['server_peak_rss_mb']} MB, {res['errors']} errors")
    print(f"{'request':32} {'count':>8} {'errors':>7} {'p50 ms':>9} {'p99 ms':>9}")
    for kind, v in res['requests'].items():
        print(f"{kind:32} {v['requests']:8} {v['errors']:7} {v['p50_ms']:9} {v['p99_ms']:9}")
        for e in v['first_errors']:
            print(f"    {e}")


if __name__ == '__main__':
    if len(sys.argv) > 1 and sys.argv[1] == '--shard':
        shard_main(sys.argv[2:])
    else:
        main()
