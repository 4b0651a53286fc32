#!/usr/bin/python3
# SPDX-License-Identifier: MIT
# editor.py - the needle editor's live match time (issue 14): a drag
# simulated as N needle_match requests on one kept-alive HTTP connection,
# the area moving one pixel per request, on the web fixture's near-miss step
# (1024x768, the runner's matcher): the server's own time per answer ("ms"
# in the answer) and the round trip seen by the client, median and p90,
# with the screenshot as the needle's image and with the candidate's image;
# plus the first (uncached: PNG decoded) answer. Prints and writes
# bench/out/editor.json.
# usage: VIGIL_TEST_TMP=/tmp/x bench/editor.py [--drags 200]
import argparse
import http.client
import json
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, 'tests', 'web'))
os.chdir(ROOT)
from weblib import Server  # noqa: E402


def q(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(round(p * (len(v) - 1))))]


def drag(conn, job, n, image, x0=18, y0=62):
    server, rtt = [], []
    for i in range(n):
        body = {'module': 'nearmiss', 'step': 1,
                'needle': {'tags': ['x'], 'area': [
                    {'xpos': x0 + i % 40, 'ypos': y0 + (i // 40) % 20, 'width': 400, 'height': 145, 'type': 'match'},
                    {'xpos': 30, 'ypos': 88, 'width': 200, 'height': 16, 'type': 'exclude'}]}}
        if image:
            body['image'] = image
        data = json.dumps(body)
        t0 = time.perf_counter()
        conn.request('POST', f'/api/v1/jobs/{job}/needle_match', data, {'Content-Type': 'application/json'})
        r = conn.getresponse()
        j = json.loads(r.read())
        rtt.append((time.perf_counter() - t0) * 1000)
        if r.status != 200:
            raise RuntimeError(j)
        server.append(j['ms'])
    return {'n': n, 'server_ms_median': round(statistics.median(server), 2), 'server_ms_p90': round(q(server, .9), 2),
            'round_trip_ms_median': round(statistics.median(rtt), 2), 'round_trip_ms_p90': round(q(rtt, .9), 2)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--drags', type=int, default=200)
    a = ap.parse_args()
    s = Server('bench-editor')
    try:
        job = next(j['id'] for j in s.fixture_jobs if j['test'] == 'web-fail' and j['result'] == 'failed')
        conn = http.client.HTTPConnection('127.0.0.1', s.port, timeout=60)
        first = drag(conn, job, 1, None)
        out = {
            'what': 'POST /api/v1/jobs/<id>/needle_match during a simulated drag (1024x768 screenshot, '
                    'one 400x145 match area + one exclude area, margin search)',
            'cpus': os.cpu_count(),
            'loadavg_at_start': [round(x, 1) for x in os.getloadavg()],
            'first_uncached': first,
            'screenshot_image': drag(conn, job, a.drags, None),
            'candidate_image': drag(conn, job, a.drags, 'web-nearmiss.json'),
        }
        conn.close()
    finally:
        s.stop()
    os.makedirs(os.path.join(HERE, 'out'), exist_ok=True)
    with open(os.path.join(HERE, 'out', 'editor.json'), 'w') as f:
        json.dump(out, f, indent=1)
    print(json.dumps(out, indent=1))


if __name__ == '__main__':
    main()
