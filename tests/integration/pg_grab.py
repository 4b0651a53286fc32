#!/usr/bin/python3
# SPDX-License-Identifier: MIT
# pg_grab.py PORTS KEY SECRET NWORKERS NJOBS OUT - many workers long-poll
# several `vigil serve` processes sharing one database, as vigil's worker
# does (register, GET /workers/ID/work?timeout=, set_done), each thread one
# worker on one server (round robin), until NJOBS jobs were handed out or
# a bounded number of empty polls passed. Writes "server worker job" per
# grab to OUT; the suite checks that no job came twice.
import sys
import threading
from openqa_client.client import OpenQA_Client

ports = sys.argv[1].split(",")
key, secret = sys.argv[2], sys.argv[3]
nworkers, njobs = int(sys.argv[4]), int(sys.argv[5])
out = sys.argv[6]
grabs, errors = [], []
lock = threading.Lock()
done = threading.Event()


def worker(i):
    port = ports[i % len(ports)]
    c = OpenQA_Client(server="127.0.0.1:%s" % port, scheme="http", retries=0)
    c.apisecret = secret  # the client takes keys from client.conf only
    c.session.headers["X-API-Key"] = key
    try:
        wid = c.openqa_request("POST", "workers", {"host": "pgw", "instance": i, "worker_class": "pgtest"})["id"]
        empty = 0
        # Bounded: every job is out once 3 polls in a row find nothing after all were grabbed.
        polls = 0
        while empty < 3 and not done.is_set() and polls < 300:
            polls += 1
            r = c.openqa_request("GET", "workers/%d/work" % wid, {"timeout": 2})
            job = r.get("job")
            if not job:
                with lock:
                    if len(grabs) >= njobs:
                        empty += 1
                continue
            with lock:
                grabs.append((port, wid, job["id"]))
                if len(grabs) >= njobs * 2:
                    done.set()
            c.openqa_request("POST", "jobs/%d/set_done" % job["id"], {"result": "passed", "worker_id": wid})
    except Exception as e:  # reported, and the suite fails on it
        with lock:
            errors.append("worker %d on %s: %s" % (i, port, e))


threads = [threading.Thread(target=worker, args=(i,)) for i in range(nworkers)]
for t in threads:
    t.start()
for t in threads:
    t.join()
with open(out, "w") as f:
    for g in grabs:
        f.write("%s %s %s\n" % g)
for e in errors:
    print(e)
sys.exit(1 if errors else 0)
