#!/usr/bin/python3
# SPDX-License-Identifier: MIT
# concurrency.py - vigil serve under concurrent load, measured from another
# client's side (a probe process of its own, one fresh connection per
# request, PROBE_TIMEOUT_S each): (a) while CONNS connections from
# 127.0.0.2..5 (other clients, as the per-address limit and turns see them) send
# cache-busting GET jobs?nocache=<random>, (b) while one client POSTs a
# DEPTH-level nested YAML template, (c) while HALF_OPEN connections from
# 127.0.0.2.. hold a partial request line. Loopback only; every loop is
# bounded in count and time. With OLD_VIGIL, the same for that binary (the
# server before the handler threads) and the ratios. python3 stdlib only.
# usage: concurrency.py OUT.json VIGIL WORKDIR [OLD_VIGIL]
#        concurrency.py --probe PORT TARGET SECONDS   (the probe process)
import asyncio, http.client, json, os, random, resource, shutil, socket, subprocess, sys, threading, time
import urllib.parse
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import api  # noqa: E402 (free_port, sign, Server.stop)

DUR = float(os.environ.get('BENCH_CONC_DUR', '10'))
CONNS = int(os.environ.get('BENCH_CONC_CONNS', '200'))
DEPTH = int(os.environ.get('BENCH_CONC_DEPTH', '100000'))
HALF_OPEN = int(os.environ.get('BENCH_CONC_HALF_OPEN', '600'))
HALF_OPEN_ADDRS = 6          # 127.0.0.2 .. 127.0.0.7
FLOOD_ADDRS = 4              # the GET flood from 127.0.0.2 .. 127.0.0.5: other clients than the probe's
JOBS = 100                   # rows behind every GET jobs
PROBE_TIMEOUT_S = 5.0
PROBE_GAP_S = 0.02


def probe(port, target, seconds):
    """Sequential GETs on fresh connections for seconds (at most 10,000)."""
    lat, timeouts, errors = [], 0, 0
    end = time.monotonic() + seconds
    for i in range(10000):
        if time.monotonic() >= end:
            break
        sep = '&' if '?' in target else '?'
        req = f'GET {target}{sep}probe={i} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n'.encode()
        t0 = time.monotonic()
        try:
            s = socket.create_connection(('127.0.0.1', port), timeout=PROBE_TIMEOUT_S)
            s.settimeout(max(0.01, PROBE_TIMEOUT_S - (time.monotonic() - t0)))
            s.sendall(req)
            data = b''
            while True:
                b = s.recv(65536)
                if not b:
                    break
                data += b
                s.settimeout(max(0.01, PROBE_TIMEOUT_S - (time.monotonic() - t0)))
            s.close()
            if data.startswith(b'HTTP/1.1 200'):
                lat.append((time.monotonic() - t0) * 1000)
            else:
                errors += 1
        except socket.timeout:
            timeouts += 1
        except OSError:
            errors += 1
        time.sleep(PROBE_GAP_S)
    print(json.dumps({'lat_ms': lat, 'timeouts': timeouts, 'errors': errors}))


def summary(p):
    lat = sorted(p['lat_ms'])
    q = lambda f: lat[min(len(lat) - 1, int(f * len(lat)))] if lat else None
    return {'n': len(lat), 'p50_ms': q(0.5), 'p99_ms': q(0.99), 'max_ms': lat[-1] if lat else None,
            'timeouts': p['timeouts'], 'errors': p['errors']}


def start_probe(port, target, seconds):
    return subprocess.Popen([sys.executable, os.path.abspath(__file__), '--probe', str(port), target, str(seconds)],
                            stdout=subprocess.PIPE, text=True)


def finish_probe(proc):
    out, _ = proc.communicate(timeout=DUR + 120)
    return summary(json.loads(out))


class Server(api.Server):
    """vigil serve with its defaults (api.Server's start sets limits for its own load)."""
    def __init__(self, vigil, work, name):
        data = os.path.join(work, name)
        shutil.rmtree(data, ignore_errors=True)
        os.makedirs(data)
        self.key, self.secret = subprocess.run([vigil, 'apikey', 'new', '--data', data, '--admin'], check=True,
                                               capture_output=True, text=True).stdout.split()
        super().__init__(vigil, data, os.path.join(work, name + '.log'))

    def start(self, args=()):
        self.proc = subprocess.Popen([self.vigil, 'serve', '--listen', f'127.0.0.1:{self.port}', '--data', self.data,
                                      *args], stdout=open(self.log, 'a'), stderr=subprocess.STDOUT)
        for _ in range(500):
            try:
                socket.create_connection(('127.0.0.1', self.port), timeout=1).close()
                return
            except OSError:
                if self.proc.poll() is not None:
                    break
                time.sleep(0.02)
        raise SystemExit(f'bench/concurrency: vigil serve did not start, see {self.log}')

    def post(self, target, form, timeout=60):
        c = http.client.HTTPConnection('127.0.0.1', self.port, timeout=timeout)
        c.request('POST', target, body=urllib.parse.urlencode(form),
                  headers=dict(api.sign(self.key, self.secret, target),
                               **{'Content-Type': 'application/x-www-form-urlencoded'}))
        r = c.getresponse()
        data = r.read()
        c.close()
        return r.status, data


async def load(port, conns, seconds):
    """conns keep-alive connections from FLOOD_ADDRS addresses sending
    cache-busting GET jobs for seconds."""
    done = errors = 0
    end = time.monotonic() + seconds

    async def one(i):
        nonlocal done, errors
        reader = writer = None
        src = (f'127.0.0.{2 + i % FLOOD_ADDRS}', 0)
        while time.monotonic() < end:
            try:
                if writer is None:
                    reader, writer = await asyncio.wait_for(
                        asyncio.open_connection('127.0.0.1', port, local_addr=src), 10)
                t = f'/api/v1/jobs?nocache={random.getrandbits(48)}'
                writer.write(f'GET {t} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'.encode())
                head = await asyncio.wait_for(reader.readuntil(b'\r\n\r\n'), 30)
                n = 0
                for line in head.split(b'\r\n'):
                    if line.lower().startswith(b'content-length:'):
                        n = int(line.split(b':')[1])
                await asyncio.wait_for(reader.readexactly(n), 30)
                done += 1
            except (OSError, asyncio.TimeoutError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
                errors += 1
                if writer:
                    writer.close()
                reader = writer = None
                await asyncio.sleep(0.05)
        if writer:
            writer.close()

    await asyncio.gather(*(one(i) for i in range(conns)))
    return {'requests': done, 'errors': errors, 'rps': done / seconds, 'addresses': FLOOD_ADDRS}


def populate(srv):
    for i in range(JOBS):
        st, data = srv.post('/api/v1/jobs', {'TEST': f't{i}', 'DISTRI': 'bench', 'VERSION': '1', 'FLAVOR': 'DVD',
                                             'ARCH': 'x86_64', 'MACHINE': '64bit', 'BUILD': '1'})
        if st != 200:
            raise SystemExit(f'bench/concurrency: POST jobs: {st} {data[:200]}')


def case_a(vigil, work, tag):
    srv = Server(vigil, work, f'{tag}-a')
    srv.start()
    try:
        populate(srv)
        pr = start_probe(srv.port, '/api/v1/job_groups', DUR)
        ld = asyncio.run(load(srv.port, CONNS, DUR))
        res = finish_probe(pr)
        res['load'] = ld
    finally:
        srv.stop()
    return res


def case_b(vigil, work, tag):
    srv = Server(vigil, work, f'{tag}-b')
    srv.start()
    try:
        srv.post('/api/v1/job_groups', {'name': 'deep'})
        body = 'products: {}\nscenarios: ' + '[' * DEPTH + ']' * DEPTH + '\n'
        res = {}

        def slow():
            t0 = time.monotonic()
            try:
                st, _ = srv.post('/api/v1/job_templates_scheduling/1', {'template': body}, timeout=600)
            except OSError:
                st = None
            res['post_status'], res['post_s'] = st, time.monotonic() - t0

        t = threading.Thread(target=slow, daemon=True)
        t.start()
        time.sleep(0.5)  # the body is in and its handler runs
        pr = start_probe(srv.port, '/api/v1/jobs', DUR)
        res.update(finish_probe(pr))
        t.join(600)
    finally:
        srv.stop()
    return res


def case_c(vigil, work, tag):
    srv = Server(vigil, work, f'{tag}-c')
    srv.start()
    held, refused = [], 0
    try:
        for i in range(HALF_OPEN):
            src = f'127.0.0.{2 + i % HALF_OPEN_ADDRS}'
            try:
                s = socket.create_connection(('127.0.0.1', srv.port), timeout=5, source_address=(src, 0))
                s.sendall(b'GET /api/v1/jo')
                held.append(s)
            except OSError:
                refused += 1
        pr = start_probe(srv.port, '/api/v1/jobs', DUR)
        res = finish_probe(pr)
        res['half_open'] = HALF_OPEN
        res['connect_failed'] = refused
    finally:
        for s in held:
            s.close()
        srv.stop()
    return res


def side(vigil, work, tag):
    return {'a_get_flood': case_a(vigil, work, tag), 'b_deep_yaml': case_b(vigil, work, tag),
            'c_half_open': case_c(vigil, work, tag)}


def rows(res):
    """(measure, value) lines, shared with report.py's table."""
    out = []
    n, o = res['vigil'], res.get('old')
    names = {'a_get_flood': f"{res['conns']} connections from {FLOOD_ADDRS} other addresses send cache-busting GET jobs",
             'b_deep_yaml': f"one client POSTs a {res['depth']}-level nested YAML template",
             'c_half_open': f"{res['half_open']} half-open connections come from {HALF_OPEN_ADDRS} other addresses"}
    for k, name in names.items():
        a = n[k]
        v = f"p50 {a['p50_ms']:.1f} ms, p99 {a['p99_ms']:.1f} ms, {a['timeouts']} time-outs, {a['errors']} errors" \
            if a['p99_ms'] is not None else f"no answer: {a['timeouts']} time-outs, {a['errors']} errors"
        if 'post_s' in a:  # the slow request itself: refused at once since the depth limit
            v += f"; the POST itself: {a['post_status']} in {a['post_s']:.2f} s"
        if o:
            b = o[k]
            v += f"; old server p99 {'%.1f ms' % b['p99_ms'] if b['p99_ms'] is not None else 'none'}, " \
                 f"{b['timeouts']} time-outs, {b['errors']} errors"
            if b['p99_ms'] and a['p99_ms']:
                v += f" ({b['p99_ms'] / a['p99_ms']:.0f}x)"
            if 'post_s' in b:
                v += f", its POST {b['post_status']} in {b['post_s']:.2f} s"
        out.append((f'API another client while {name}', v, a))
    return out


def main():
    if sys.argv[1] == '--probe':
        probe(int(sys.argv[2]), sys.argv[3], float(sys.argv[4]))
        return
    out, vigil, work = sys.argv[1:4]
    old = sys.argv[4] if len(sys.argv) > 4 and sys.argv[4] else None
    os.makedirs(work, exist_ok=True)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    res = {'duration_s': DUR, 'conns': CONNS, 'depth': DEPTH, 'half_open': HALF_OPEN,
           'probe_timeout_s': PROBE_TIMEOUT_S, 'vigil': side(vigil, work, 'new')}
    if old:
        res['old'] = side(old, work, 'old')
        res['old_binary'] = old
    json.dump(res, open(out, 'w'), indent=1)
    for m, v, _ in rows(res):
        print(f'{m}: {v}')


if __name__ == '__main__':
    main()
