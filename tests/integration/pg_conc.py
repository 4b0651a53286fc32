#!/usr/bin/python3
# SPDX-License-Identifier: MIT
# pg_conc.py PORTS KEY SECRET NCLUSTERS NWORKERS OUT - concurrent writers on
# several `vigil serve` processes sharing one database (test_pg.sh): while
# NWORKERS workers (one thread each, servers round robin) long-poll, run
# each job they get (two status posts, then set_done passed), one thread per
# server posts NCLUSTERS/len(PORTS) parallel clusters of three jobs
# (openqa-cli's suffixes: a server and two clients _PARALLEL to it), and one
# thread per server posts comments to the first jobs while they run. Writes
# "grab PORT WORKER JOB", "cluster ID ID ID" and "comment JOB TEXT" lines to
# OUT for the suite to check against the database; nothing here asserts
# speed, every wait is bounded by a limit only a hung server reaches.
import hashlib
import hmac
import http.client
import json
import sys
import threading
import time
import urllib.parse

ports = sys.argv[1].split(",")
key, secret = sys.argv[2], sys.argv[3]
nclusters, nworkers = int(sys.argv[4]), int(sys.argv[5])
out = sys.argv[6]
njobs = nclusters * 3
COMMENTS = 4     # per server and commented job
COMMENTED = 3    # the first clusters' server jobs get comments
LIMIT_S = 300
lock = threading.Lock()
lines, errors = [], []
grabbed = set()
clusters = []
created = threading.Event()  # every cluster posted


def req(port, method, target, form=None, body=None):
    mt = "%.6f" % time.time()
    h = hmac.new(secret.encode(), (target + mt).encode(), hashlib.sha1).hexdigest()
    headers = {"X-API-Key": key, "X-API-Microtime": mt, "X-API-Hash": h, "Accept": "application/json"}
    if form is not None:
        body = urllib.parse.urlencode(form).encode()
        headers["Content-Type"] = "application/x-www-form-urlencoded"
    elif body is not None:
        headers["Content-Type"] = "application/json"
    c = http.client.HTTPConnection("127.0.0.1", int(port), timeout=120)
    try:
        c.request(method, target, body=body, headers=headers)
        r = c.getresponse()
        data = r.read()
    finally:
        c.close()
    if r.status != 200:
        raise RuntimeError("%s %s on %s: %d %s" % (method, target, port, r.status, data[:200]))
    return json.loads(data) if data else {}


def fail(what):
    with lock:
        errors.append(what)


def poster(k):
    port = ports[k % len(ports)]
    try:
        for n in range(k, nclusters, len(ports)):
            form = {"DISTRI": "pgconc", "WORKER_CLASS": "pgconc", "TEST:server": "srv%d" % n,
                    "PARALLEL_ROLE:server": "server", "TEST:c1": "c1-%d" % n, "_PARALLEL:c1": "server",
                    "TEST:c2": "c2-%d" % n, "_PARALLEL:c2": "server"}
            ids = req(port, "POST", "/api/v1/jobs", form=form)["ids"]
            with lock:
                clusters.append((n, ids["server"], ids["c1"], ids["c2"]))
                lines.append("cluster %d %d %d" % (ids["server"], ids["c1"], ids["c2"]))
    except Exception as e:
        fail("poster %d on %s: %s" % (k, port, e))


def commenter(k):
    port = ports[k % len(ports)]
    try:
        if not created.wait(LIMIT_S):
            raise RuntimeError("clusters not posted")
        with lock:
            jobs = [c[1] for c in sorted(clusters)[:COMMENTED]]
        for i in range(COMMENTS):
            for j in jobs:
                text = "conc %s %d %d" % (port, j, i)
                req(port, "POST", "/api/v1/jobs/%d/comments" % j, form={"text": text})
                with lock:
                    lines.append("comment %d %s" % (j, text))
    except Exception as e:
        fail("commenter %d on %s: %s" % (k, port, e))


def worker(i):
    port = ports[i % len(ports)]
    t_end = time.monotonic() + LIMIT_S
    try:
        wid = req(port, "POST", "/api/v1/workers",
                  form={"host": "pgconc%d" % i, "instance": 1, "worker_class": "pgconc"})["id"]
        empty = 0
        while empty < 3 and time.monotonic() < t_end:
            job = req(port, "GET", "/api/v1/workers/%d/work?timeout=2" % wid).get("job")
            if not job:
                with lock:
                    if created.is_set() and len(grabbed) >= njobs:
                        empty += 1
                continue
            jid = job["id"]
            with lock:
                lines.append("grab %s %d %d" % (port, wid, jid))
                grabbed.add(jid)
            for _ in range(2):
                st = {"status": {"worker_id": wid, "result": {}, "test_order": [], "uploading": 0}}
                req(port, "POST", "/api/v1/jobs/%d/status" % jid, body=json.dumps(st).encode())
            req(port, "POST", "/api/v1/jobs/%d/set_done?result=passed&worker_id=%d" % (jid, wid))
    except Exception as e:
        fail("worker %d on %s: %s" % (i, port, e))


workers = [threading.Thread(target=worker, args=(i,)) for i in range(nworkers)]
posters = [threading.Thread(target=poster, args=(k,)) for k in range(len(ports))]
commenters = [threading.Thread(target=commenter, args=(k,)) for k in range(len(ports))]
for t in workers + posters + commenters:
    t.start()
for t in posters:
    t.join()
created.set()
for t in workers + commenters:
    t.join()
with open(out, "w") as f:
    for line in lines:
        f.write(line + "\n")
for e in errors:
    print(e)
sys.exit(1 if errors else 0)
