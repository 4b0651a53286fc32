#!/usr/bin/python3
# SPDX-License-Identifier: MIT
# sched_grab.py URL KEY SECRET NWORKERS NCLASSES JOBS OUT - test_sched_many's
# client: posts JOBS jobs to each class c0..c(NCLASSES-2) (the last class
# has none) at priorities mixed across the jobs, registers NWORKERS workers
# (worker i offers class c(i % NCLASSES)), then lets every worker long-poll
# GET /api/v1/workers/ID/work at once (threads released by one barrier).
# Writes to OUT, one "name value" a line: workers, can (the workers whose
# class has jobs), got (workers handed a job), distinct (distinct jobs
# handed), wrong_class (jobs handed to a worker lacking their class),
# best (classes whose handed jobs are exactly their best, by priority then
# id, as many as the class has workers), classes (classes with jobs),
# errors (requests that failed). Legacy signatures, as bench/api.py.
import hashlib, hmac, json, sys, threading, time, urllib.parse, urllib.request

url, key, secret = sys.argv[1:4]
nworkers, nclasses, njobs = int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
out = sys.argv[7]


def call(method, path, params=None):
    target = '/api/v1/' + path
    mt = '%.6f' % time.time()
    h = hmac.new(secret.encode(), (target + mt).encode(), hashlib.sha1).hexdigest()
    body = urllib.parse.urlencode(params or {}).encode() if method != 'GET' else None
    req = urllib.request.Request(url + target, data=body, method=method,
                                 headers={'X-API-Key': key, 'X-API-Microtime': mt, 'X-API-Hash': h,
                                          'Accept': 'application/json'})
    if body is not None:
        req.add_header('Content-Type', 'application/x-www-form-urlencoded')
    with urllib.request.urlopen(req, timeout=600) as r:
        return json.loads(r.read())


jobs = {}  # id -> (class, priority)
for c in range(nclasses - 1):
    for i in range(njobs):
        prio = 10 + (c * njobs + i) * 37 % 80
        j = call('POST', 'jobs', {'TEST': 't%d_%d' % (c, i), 'DISTRI': 'd', 'VERSION': '1', 'FLAVOR': 'f',
                                  'ARCH': 'x86_64', 'BUILD': '1', 'WORKER_CLASS': 'c%d' % c, '_PRIORITY': prio})
        jobs[j['id']] = ('c%d' % c, prio)
workers = []
for i in range(nworkers):
    cls = 'c%d' % (i % nclasses)
    workers.append((call('POST', 'workers', {'host': 'sched%d' % (i // 8), 'instance': i % 8 + 1,
                                             'worker_class': cls})['id'], cls))
barrier = threading.Barrier(nworkers)
got, errors = {}, []
lock = threading.Lock()


def poll(wid, cls):
    barrier.wait()
    try:
        # The class without jobs waits 1 s for none; the others as long as the server allows.
        job = call('GET', 'workers/%d/work?timeout=%d' % (wid, 1 if cls == 'c%d' % (nclasses - 1) else 60)).get('job')
    except Exception as e:  # counted, and the suite fails on it
        with lock:
            errors.append('worker %d: %s' % (wid, e))
        return
    if job:
        with lock:
            got[wid] = (job['id'], job.get('settings', {}).get('WORKER_CLASS'))


threads = [threading.Thread(target=poll, args=w) for w in workers]
for t in threads:
    t.start()
for t in threads:
    t.join()
cls_of = dict(workers)
can = sum(1 for _, c in workers if any(jc == c for jc, _ in jobs.values()))
best = 0
for c in {jc for jc, _ in jobs.values()}:
    n = sum(1 for _, wc in workers if wc == c)
    top = sorted((p, i) for i, (jc, p) in jobs.items() if jc == c)[:n]
    best += {i for _, i in top} == {j for w, (j, _) in got.items() if cls_of[w] == c}
with open(out, 'w') as f:
    f.write('workers %d\ncan %d\ngot %d\ndistinct %d\nwrong_class %d\nbest %d\nclasses %d\nerrors %d\n' % (
        len(workers), can, len(got), len({j for j, _ in got.values()}),
        sum(1 for w, (j, jc) in got.items() if jc != cls_of[w] or jobs[j][0] != cls_of[w]), best,
        nclasses - 1, len(errors)))
for e in errors[:10]:
    print(e)
