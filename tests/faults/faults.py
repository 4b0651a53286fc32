#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""faults.py - issue 17's fault suite: a real `vigil serve`, a real `vigil
worker` (through a TCP proxy the suite can cut) and real QEMU jobs (the GRUB
rescue ISO), with one fault injected per run at a point drawn from the run's
seed. After each run: the job ended in a defined state with a reason (or was
retried and passed), nothing the server acknowledged is lost or corrupted
(SQLite's integrity check, every stored screenshot's bytes against its
content hash and against the worker's copy, every acknowledged job and
product post present and whole), and the system carried on by itself: the
next job runs to the end.

Kinds (--kinds, default all): qemu, runner, worker, server, isos, enospc,
net, vnc, qmp, each on its own server and worker; --jobs N runs N kinds
side by side. A failing run prints its kind and seed and the command that
repeats it. --laps shows where each run's time went.
Docs: docs/hardening.md, "Faults".

    tests/faults/faults.py --seeds 1,2,3 --jobs 4 --laps   # what CI runs
    tests/faults/faults.py --runs 50 --laps         # what `make faults` runs
    tests/faults/faults.py --kinds net --seeds 17   # one run again
"""
import argparse
import ctypes
import hashlib
import json
import os
import queue
import random
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time

import requests
from openqa_client.client import OpenQA_Client

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
KINDS = ["qemu", "runner", "worker", "server", "isos", "enospc", "net", "vnc", "qmp"]
# How long a job may take to end on a loaded 2-core machine (TCG): only a
# run that never gets there waits this long.
WAIT = 300
# The server's --worker-timeout and the worker's --finish-deadline, scaled
# down from 600 s so that a fault that outlasts them is seen in seconds.
WORKER_TIMEOUT = 10
FINISH_DEADLINE = 8
SYS_PIDFD_GETFD = 438  # x86_64 and the other architectures of the unified table
SINK = "fault-sink"  # a worker class no worker offers: jobs posted only to be kept
NEXT_DISTRI = "grub-next"  # examples/grub's boot module alone: the job after the faults


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def procs():
    """(pid, ppid, argv) of every process."""
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
            with open(f"/proc/{d}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        out.append((int(d), ppid, [a.decode(errors="replace") for a in argv if a]))
    return out


def qemu_pids(pool):
    return [p for p, _, a in procs() if a and "qemu-system" in a[0] and any(pool in x for x in a)]


class Proxy:
    """A TCP proxy from a local port to the server; cut() drops every
    connection and refuses new ones until heal()."""

    def __init__(self, target_port):
        self.target = target_port
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.sock.listen(64)
        self.lock = threading.Lock()
        self.conns = []
        self.is_cut = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            with self.lock:
                if self.is_cut:
                    c.close()
                    continue
            try:
                s = socket.create_connection(("127.0.0.1", self.target), timeout=5)
                s.settimeout(None)
            except OSError:
                c.close()
                continue
            with self.lock:
                self.conns += [c, s]
            threading.Thread(target=self._pipe, args=(c, s), daemon=True).start()
            threading.Thread(target=self._pipe, args=(s, c), daemon=True).start()

    @staticmethod
    def _pipe(a, b):
        try:
            while True:
                d = a.recv(65536)
                if not d:
                    break
                b.sendall(d)
        except OSError:
            pass
        for x in (a, b):
            try:
                x.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def cut(self):
        with self.lock:
            self.is_cut = True
            for c in self.conns:
                try:
                    c.shutdown(socket.SHUT_RDWR)
                    c.close()
                except OSError:
                    pass
            self.conns = []

    def heal(self):
        with self.lock:
            self.is_cut = False


class Cluster:
    """One server (data directory, port), one worker behind a proxy."""

    def __init__(self, vigil, tmp):
        self.vigil, self.tmp = vigil, tmp
        self.data = os.path.join(tmp, "data")
        self.pool = os.path.join(tmp, "pool")
        os.makedirs(os.path.join(self.data, "tests"))
        shutil.copytree(os.path.join(ROOT, "examples", "grub"), os.path.join(self.data, "tests", "grub"))
        # The next job after a kind's faults: the same distribution, its
        # boot module alone (QEMU, the runner, a needle match, uploads and
        # set_done, in a third of the full job's time).
        nxt = os.path.join(self.data, "tests", NEXT_DISTRI)
        shutil.copytree(os.path.join(ROOT, "examples", "grub"), nxt)
        with open(os.path.join(nxt, "main.lua"), "w") as f:
            f.write("-- tests/faults/faults.py's next job: GRUB's menu, nothing more.\nloadtest \"boot\"\n")
        out = subprocess.run([vigil, "apikey", "new", "--data", self.data, "--admin"], check=True,
                             capture_output=True, text=True).stdout.split()
        self.key, self.secret = out[0], out[1]
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.server = self.worker = None
        self.server_env = {}
        self.start_server()
        self.proxy = Proxy(self.port)
        self.client = OpenQA_Client(server=f"127.0.0.1:{self.port}", scheme="http", retries=0, wait=0)
        self.client.session.headers["X-API-Key"] = self.key
        self.client.apisecret = self.secret
        self.start_worker()

    def log(self, name):
        return open(os.path.join(self.tmp, name), "ab")

    def start_server(self, env=None):
        self.server_env = env or {}
        e = dict(os.environ, **self.server_env)
        self.server = subprocess.Popen([self.vigil, "serve", "--listen", f"127.0.0.1:{self.port}", "--data",
                                        self.data, "--worker-timeout", str(WORKER_TIMEOUT)],
                                       stdout=self.log("serve.log"), stderr=subprocess.STDOUT, env=e)
        end = time.monotonic() + 120
        while time.monotonic() < end:
            if self.server.poll() is not None:
                raise RuntimeError(f"vigil serve exited ({self.server.returncode}), see serve.log")
            try:
                requests.get(self.url + "/api/v1/jobs", timeout=5)
                return
            except requests.RequestException:
                time.sleep(0.1)
        raise RuntimeError("vigil serve does not answer")

    def kill_server(self):
        self.server.send_signal(signal.SIGKILL)
        self.server.wait()

    def restart_server(self, env=None):
        self.server.terminate()
        try:
            self.server.wait(60)
        except subprocess.TimeoutExpired:
            self.kill_server()
        self.start_server(env)

    def start_worker(self):
        e = dict(os.environ, VIGIL_WORKER_KEEP="1")
        self.worker = subprocess.Popen([self.vigil, "worker", "--host", f"http://127.0.0.1:{self.proxy.port}",
                                        "--apikey", self.key, "--apisecret", self.secret, "--instance", "1",
                                        "--pool", self.pool, "--finish-deadline", str(FINISH_DEADLINE)],
                                       stdout=self.log("worker.log"), stderr=subprocess.STDOUT, env=e)

    def stop(self):
        for p in (self.worker, self.server):
            if p and p.poll() is None:
                p.terminate()
                try:
                    p.wait(30)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        self.proxy.sock.close()

    def api(self, method, path, params=None, retries=0):
        return self.client.openqa_request(method, path, params=params or {}, retries=retries, wait=1)

    def post_job(self, build, test="grub", extra=None):
        p = {"TEST": test, "DISTRI": "grub", "ARCH": "x86_64", "BUILD": build}
        p.update(extra or {})
        return self.api("POST", "jobs", p, retries=5)["id"]

    def job(self, jid):
        r = requests.get(f"{self.url}/api/v1/jobs/{jid}", timeout=30)
        r.raise_for_status()
        return r.json()["job"]

    def wait_job(self, jid, states=("done", "cancelled"), secs=WAIT):
        end = time.monotonic() + secs
        while time.monotonic() < end:
            try:
                j = self.job(jid)
                if j["state"] in states:
                    return j
            except (requests.RequestException, ValueError, KeyError):
                pass
            time.sleep(0.5)
        return self.job(jid)

    def runner_pids(self):
        return [p for p, pp, a in procs() if self.worker and pp == self.worker.pid and "run" in a]

    def idle(self, secs=WAIT):
        """Until no job is scheduled, assigned or running (clones included)."""
        end = time.monotonic() + secs
        while time.monotonic() < end:
            try:
                js = requests.get(f"{self.url}/api/v1/jobs?state=scheduled,assigned,setup,running,uploading"
                                  "&limit=500", timeout=30).json()["jobs"]
                if not [j for j in js if j["state"] in ("scheduled", "assigned", "running", "uploading", "setup")
                        and SINK not in str(j.get("settings", {}).get("WORKER_CLASS", ""))]:
                    return True
            except (requests.RequestException, ValueError, KeyError):
                pass
            time.sleep(0.5)
        return False


class Run:
    def __init__(self, kind, seed):
        self.kind, self.seed = kind, seed
        self.rng = random.Random(f"{kind}:{seed}")
        self.problems = []
        self.notes = []
        self.injected = False
        self.laps, self.t_lap = [], time.monotonic()

    def lap(self, what):
        """Where the run's time went: seconds since the previous lap."""
        now = time.monotonic()
        self.laps.append(f"{what} {now - self.t_lap:.1f}")
        self.t_lap = now

    def check(self, cond, what):
        if not cond:
            self.problems.append(what)
        return cond


def wait_running(c, jid, secs=WAIT):
    end = time.monotonic() + secs
    while time.monotonic() < end:
        try:
            if c.job(jid)["state"] in ("running", "done"):
                return True
        except (requests.RequestException, ValueError, KeyError):
            pass
        time.sleep(0.2)
    return False


def wait_for(pred, secs=WAIT, step=0.1):
    end = time.monotonic() + secs
    while time.monotonic() < end:
        v = pred()
        if v:
            return v
        time.sleep(step)
    return None


def defined_end(r, c, jid, allow_pass=True):
    """The job ended (done) with a result; a pass, a failure that names its
    failed module (a frozen screen fails the check that waited on it), or
    anything else with a reason."""
    j = c.wait_job(jid)
    r.lap("end")
    r.notes.append(f"job {jid}: {j['state']} {j['result']}" + (f" ({j.get('reason')})" if j.get("reason") else ""))
    if not r.check(j["state"] == "done", f"job {jid} did not end: state {j['state']}"):
        return j
    if j["result"] == "passed":
        r.check(allow_pass, f"job {jid} passed although the fault hit it")
    elif j["result"] == "failed" and not j.get("reason"):
        failed = [m["name"] for m in j.get("modules", []) if m.get("result") == "failed"]
        r.check(bool(failed), f"job {jid} failed without a reason or a failed module")
        r.notes[-1] += f" (failed module {', '.join(failed)})"
    else:
        r.check(bool(j.get("reason")), f"job {jid} ended {j['result']} without a reason")
    return j


def check_store(r, c):
    """Nothing acknowledged corrupted: SQLite's integrity check, every
    stored screenshot's bytes against its name (its SHA-256), each job's
    screenshot against the worker's kept copy."""
    db = sqlite3.connect(f"file:{c.data}/vigil.db?mode=ro", uri=True, timeout=60)
    try:
        res = db.execute("PRAGMA integrity_check").fetchall()
    finally:
        db.close()
    r.check(res == [("ok",)], f"integrity_check: {res[:3]}")
    r.lap("store")
    images = os.path.join(c.data, "images")
    for n in os.listdir(images) if os.path.isdir(images) else []:
        with open(os.path.join(images, n), "rb") as f:
            h = hashlib.sha256(f.read()).hexdigest()
        r.check(n == h + ".png", f"images/{n}: content hash {h}")
    tr = os.path.join(c.data, "testresults")
    jobdirs = os.path.join(c.pool, "jobs") if os.path.isdir(os.path.join(c.pool, "jobs")) else c.pool
    for jd in os.listdir(tr) if os.path.isdir(tr) else []:
        if not jd.isdigit():
            continue
        kept = None
        for cand in (os.path.join(jobdirs, jd), os.path.join(jobdirs, f"job-{jd}")):
            if os.path.isdir(cand):
                kept = cand
        for n in os.listdir(os.path.join(tr, jd)):
            if not n.endswith(".png"):
                continue
            p = os.path.join(tr, jd, n)
            with open(p, "rb") as f:
                d = f.read()
            r.check(d[:8] == b"\x89PNG\r\n\x1a\n", f"testresults/{jd}/{n}: not a PNG")
            if kept:
                for root, _, files in os.walk(kept):
                    if n in files and os.path.basename(root) == "testresults":
                        with open(os.path.join(root, n), "rb") as f:
                            r.check(f.read() == d, f"testresults/{jd}/{n} differs from the worker's copy")
    r.lap("hashes")


def carry_on(r, c, build):
    """The next job runs to the end."""
    r.check(c.idle(), "jobs still queued or running after the fault")
    r.lap("idle")
    jid = c.post_job(build, extra={"DISTRI": NEXT_DISTRI})
    j = c.wait_job(jid)
    r.lap("next job")
    r.check((j["state"], j["result"]) == ("done", "passed"),
            f"the next job {jid} ended {j['state']} {j['result']} ({j.get('reason')})")
    r.check(not qemu_pids(c.pool), "a QEMU is left")


# ---- the kinds: each injects one fault into a job and checks its end ----

def kill_in_job(r, c, find, what):
    """Start a job; at a seeded point of its run kill -9 what find() names."""
    jid = c.post_job(f"{r.kind}-{r.seed}")
    delay = r.rng.uniform(0, 8)
    r.check(wait_running(c, jid), f"job {jid} never ran")
    r.lap("running")
    pids = wait_for(find, secs=60)
    r.lap("found")
    time.sleep(delay)
    pids = find()
    if pids:
        for p in pids:
            try:
                os.kill(p, signal.SIGKILL)
                r.injected = True
            except ProcessLookupError:
                pass
    r.lap("fault")
    r.notes.append(f"kill -9 {what} {pids} after {delay:.2f} s")
    return jid


def kind_qemu(r, c):
    jid = kill_in_job(r, c, lambda: qemu_pids(c.pool), "QEMU")
    defined_end(r, c, jid, allow_pass=not r.injected)


def kind_runner(r, c):
    jid = kill_in_job(r, c, c.runner_pids, "the runner")
    defined_end(r, c, jid, allow_pass=not r.injected)
    r.check(wait_for(lambda: not qemu_pids(c.pool), secs=120) is not None, "the killed runner's QEMU is left")


def kind_worker(r, c):
    # mid-upload: screenshots go up while the job runs, the rest at its end
    jid = kill_in_job(r, c, lambda: [c.worker.pid] if c.worker.poll() is None else [], "the worker")
    c.worker.wait()
    r.check(wait_for(lambda: not qemu_pids(c.pool), secs=120) is not None, "the killed worker's QEMU is left")
    r.lap("qemu gone")
    j = defined_end(r, c, jid, allow_pass=True)
    if j["result"] != "passed":
        r.check(j.get("clone_id") is not None, f"job {jid} (lost worker) was not cloned")
    c.start_worker()  # as its service manager would


def kind_server(r, c):
    """kill -9 the server mid-write: while a job runs and uploads and a
    client posts jobs; every job whose creation was answered must be there."""
    jid = c.post_job(f"server-{r.seed}")
    acked, stop = [], threading.Event()

    def writer():
        n = 0
        while not stop.is_set():
            n += 1
            name = f"w{r.seed}-{n}"
            try:
                res = c.api("POST", "jobs", {"TEST": name, "DISTRI": "grub", "ARCH": "x86_64",
                                             "BUILD": f"sink-{r.seed}", "WORKER_CLASS": SINK})
                acked.append((res["id"], name))
            except Exception:  # refused or cut: not acknowledged
                pass
            time.sleep(0.05)
    t = threading.Thread(target=writer, daemon=True)
    t.start()
    r.check(wait_running(c, jid), f"job {jid} never ran")
    r.lap("running")
    delay = r.rng.uniform(0, 8)
    time.sleep(delay)
    c.kill_server()
    r.injected = True
    r.lap("fault")
    r.notes.append(f"kill -9 the server after {delay:.2f} s, {len(acked)} jobs acknowledged")
    time.sleep(r.rng.uniform(0, 2))
    c.start_server()
    r.lap("restart")
    time.sleep(0.5)
    stop.set()
    t.join()
    for i, name in acked:
        try:
            got = c.job(i)
            r.check(got["settings"].get("TEST") == name, f"acknowledged job {i} is {got['settings'].get('TEST')}")
        except requests.RequestException as e:
            r.check(False, f"acknowledged job {i} ({name}) lost: {e}")
    defined_end(r, c, jid, allow_pass=True)
    cancel_sink(c)


ISO_SUITES = 4


def cancel_sink(c):
    """The jobs posted only to be kept, cancelled: the queue stays short."""
    db = sqlite3.connect(f"file:{c.data}/vigil.db?mode=ro", uri=True, timeout=60)
    try:
        ids = [i for (i,) in db.execute("SELECT j.id FROM jobs j JOIN job_settings s ON s.job_id = j.id"
                                         " WHERE s.key = 'WORKER_CLASS' AND s.value = ? AND j.state = 'scheduled'",
                                         (SINK,))]
    finally:
        db.close()
    for i in ids:
        c.api("POST", f"jobs/{i}/cancel", retries=3)


def isos_setup(c):
    if c.__dict__.get("isos_ready"):
        return
    c.api("POST", "machines", {"name": "sink", "backend": "qemu", "settings[WORKER_CLASS]": SINK}, retries=3)
    c.api("POST", "products", {"distri": "sink", "version": "1", "flavor": "f", "arch": "x86_64"}, retries=3)
    g = c.api("POST", "job_groups", {"name": "sink"}, retries=3)["id"]
    for i in range(ISO_SUITES):
        c.api("POST", "test_suites", {"name": f"s{i}"}, retries=3)
        c.api("POST", "job_templates", {"group_id": g, "machine_name": "sink", "test_suite_name": f"s{i}",
                                        "distri": "sink", "version": "1", "flavor": "f", "arch": "x86_64"}, retries=3)
    c.isos_ready = True


def kind_isos(r, c):
    """kill -9 the server mid-`POST isos`: a product post either made all
    its jobs or none, and every answered one made them all."""
    isos_setup(c)
    acked, tried, stop = [], [], threading.Event()

    def poster():
        n = 0
        while not stop.is_set():
            n += 1
            b = f"i{r.seed}-{n}"
            tried.append(b)
            try:
                res = c.api("POST", "isos", {"DISTRI": "sink", "VERSION": "1", "FLAVOR": "f", "ARCH": "x86_64",
                                             "BUILD": b, "_OBSOLETE": "0"})
                acked.append((b, len(res.get("ids", []))))
            except Exception:
                pass
            time.sleep(0.005)
    t = threading.Thread(target=poster, daemon=True)
    t.start()
    delay = r.rng.uniform(0.2, 3)
    time.sleep(delay)
    c.kill_server()
    r.injected = True
    r.lap("fault")
    stop.set()
    t.join()
    r.notes.append(f"kill -9 the server after {delay:.2f} s, {len(acked)} of {len(tried)} posts answered")
    c.start_server()
    r.lap("restart")
    counts = {}
    db = sqlite3.connect(f"file:{c.data}/vigil.db?mode=ro", uri=True, timeout=60)
    try:
        for (b,) in db.execute("SELECT value FROM job_settings WHERE key = 'BUILD'"):
            counts[b] = counts.get(b, 0) + 1
    finally:
        db.close()
    for b, n in acked:
        r.check(n == ISO_SUITES and counts.get(b) == ISO_SUITES, f"answered post {b}: {n} ids, {counts.get(b)} stored")
    for b in tried:
        r.check(counts.get(b, 0) in (0, ISO_SUITES), f"post {b}: {counts.get(b)} of {ISO_SUITES} jobs stored")
    cancel_sink(c)


def kind_enospc(r, c):
    """The disk fills while a job runs: uploads (testresults/.incoming) or
    the database, after a seeded number of bytes. The upload answers 507 and
    the worker retries until its deadline; then the disk is "freed" (the
    server restarted without the fault) and the job must end with a reason."""
    target = r.rng.choice(["upload", "db"])
    if target == "upload":
        spec = f"*/testresults/*:{r.rng.randint(0, 2_000_000)}"
    else:
        spec = f"*/vigil.db*:{r.rng.randint(0, 300_000)}"
    log_path = os.path.join(c.tmp, "serve.log")
    c.restart_server({"VIGIL_FAULT_ENOSPC": spec})
    r.lap("restart")
    log_from = os.path.getsize(log_path)
    r.notes.append(f"VIGIL_FAULT_ENOSPC={spec}")

    def struck():
        """Writes the full disk refused (the server logs each), counted as
        injected only when there was one."""
        with open(log_path, errors="replace") as f:
            f.seek(log_from)
            t = f.read()
        n = t.count("No space left on device") + t.count("database or disk is full")
        r.injected = n > 0
        r.notes.append(f"{n} writes refused")
    try:
        jid = c.post_job(f"enospc-{r.seed}")
    except Exception as e:  # the disk was full before the job could be stored
        msg = str(e)
        r.check("507" in msg, f"job creation on a full disk: {msg}")
        struck()
        c.restart_server()
        return
    # The worker's end of the job: uploads and set_done, each retried for
    # FINISH_DEADLINE s; until the job is done, or the worker logs that
    # set_done failed (the job stays running; the worker is through with it).
    wlog = os.path.join(c.tmp, "worker.log")
    wfrom = os.path.getsize(wlog)

    def worker_through():
        with open(wlog, errors="replace") as f:
            f.seek(wfrom)
            t = f.read()
        return f"job {jid}: set_done failed" in t
    end = time.monotonic() + WAIT
    while time.monotonic() < end and not worker_through():
        try:
            if c.job(jid)["state"] == "done":
                break
        except (requests.RequestException, ValueError, KeyError):
            pass
        time.sleep(0.2)
    r.lap("worker through")
    struck()
    c.restart_server()
    r.lap("restart")
    j = defined_end(r, c, jid, allow_pass=True)
    # The worker kept the server informed while it retried (it used to be
    # abandoned as silent, and the reason blamed a lost worker).
    r.check(target != "upload" or "lost" not in (j.get("reason") or ""),
            f"job {jid}: the worker retrying uploads was taken for lost")
    log = open(os.path.join(c.tmp, "serve.log"), errors="replace").read()
    r.check("no file in the request body" not in log, "an upload on a full disk was answered as the client's fault")
    r.check("cannot rollback" not in log, "a full disk was reported as 'cannot rollback'")


def kind_net(r, c):
    """Cut the network between worker and server for a seeded while."""
    jid = c.post_job(f"net-{r.seed}")
    r.check(wait_running(c, jid), f"job {jid} never ran")
    r.lap("running")
    delay, length = r.rng.uniform(0, 8), r.rng.choice([r.rng.uniform(0.5, 4), r.rng.uniform(4, 25)])
    time.sleep(delay)
    c.proxy.cut()
    r.injected = True
    time.sleep(length)
    c.proxy.heal()
    r.lap("fault")
    r.notes.append(f"network cut after {delay:.2f} s for {length:.2f} s")
    defined_end(r, c, jid, allow_pass=True)


def on_term(sig, frame):
    raise SystemExit(f"stopped by signal {sig}")


def unix_server_fds(sock_name, pool):
    """(pid, fd) of the accepted ends of the connections to the unix socket
    named sock_name under pool (QEMU's side): /proc/net/unix lists them
    with the listening socket's path, connected (state 03)."""
    inodes = set()
    with open("/proc/net/unix") as f:
        next(f)
        for line in f:
            x = line.split()
            if len(x) >= 8 and x[5] == "03" and x[7].startswith(pool) and x[7].endswith("/" + sock_name):
                inodes.add(x[6])
    found = []
    for pid in qemu_pids(pool):
        try:
            for fd in os.listdir(f"/proc/{pid}/fd"):
                try:
                    link = os.readlink(f"/proc/{pid}/fd/{fd}")
                except OSError:
                    continue
                if link.startswith("socket:[") and link[8:-1] in inodes:
                    found.append((pid, int(fd)))
        except OSError:
            pass
    return found


def shutdown_in(pid, fd):
    """shutdown() the socket that is fd in process pid, from here: a copy
    of it taken with pidfd_getfd(2) (Linux 5.6; root or ptrace rights).
    True when done."""
    libc = ctypes.CDLL(None, use_errno=True)
    try:
        pidfd = os.pidfd_open(pid)
    except OSError:
        return False
    try:
        mine = libc.syscall(SYS_PIDFD_GETFD, pidfd, fd, 0)
        if mine < 0:
            return False
        s = socket.socket(fileno=mine)
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            return False
        finally:
            s.close()
        return True
    finally:
        os.close(pidfd)


def runner_log(c, jid):
    """The job's vigil-log.txt as the runner has written it so far."""
    for d in (os.path.join(c.pool, f"job-{jid}"), os.path.join(c.pool, "jobs", str(jid))):
        try:
            with open(os.path.join(d, "out", "vigil-log.txt"), errors="replace") as f:
                return f.read()
        except OSError:
            pass
    return ""


def kind_vnc(r, c):
    """QEMU drops the runner's VNC connection at a seeded point: QEMU's end
    of it is shut down from outside (pidfd_getfd); nothing in vigil helps."""
    jid = c.post_job(f"vnc-{r.seed}")
    r.check(wait_running(c, jid), f"job {jid} never ran")
    r.lap("running")
    wait_for(lambda: unix_server_fds("vnc.sock", c.pool), secs=60)
    # From the session up (the runner logs the framebuffer's size): a drop
    # in the handshake is retried as a first connection is, and the job
    # may pass; that is not this fault.
    wait_for(lambda: "vnc: framebuffer is" in runner_log(c, jid), secs=60)
    r.lap("found")
    delay = r.rng.uniform(0, 8)
    time.sleep(delay)
    fds = unix_server_fds("vnc.sock", c.pool)
    for pid, fd in fds or []:
        r.injected = shutdown_in(pid, fd) or r.injected
    r.lap("fault")
    r.notes.append(f"QEMU drops the VNC connection {fds} after {delay:.2f} s" + ("" if r.injected else " (missed)"))
    defined_end(r, c, jid, allow_pass=not r.injected)


def kind_qmp(r, c):
    """QEMU stops answering (QMP, and with it everything: SIGSTOP) for a
    seeded while, at a seeded point, then goes on (SIGCONT)."""
    jid = c.post_job(f"qmp-{r.seed}")
    r.check(wait_running(c, jid), f"job {jid} never ran")
    r.lap("running")
    wait_for(lambda: qemu_pids(c.pool), secs=60)
    r.lap("found")
    delay, length = r.rng.uniform(0, 10), r.rng.choice([r.rng.uniform(0.5, 5), r.rng.uniform(5, 25)])
    time.sleep(delay)
    pids = qemu_pids(c.pool)
    for p in pids:
        os.kill(p, signal.SIGSTOP)
        r.injected = True
    time.sleep(length)
    for p in pids:
        try:
            os.kill(p, signal.SIGCONT)
        except ProcessLookupError:
            pass
    r.lap("fault")
    r.notes.append(f"QEMU {pids} stopped after {delay:.2f} s for {length:.2f} s")
    defined_end(r, c, jid, allow_pass=True)


# Longest first when kinds run side by side (--jobs), as measured with
# --laps: qmp waits out its stops and the checks they made late, worker
# the --worker-timeout and the clone, net its cuts.
LONGEST_FIRST = ["qmp", "worker", "net", "server", "enospc", "vnc", "isos", "qemu", "runner"]
CLUSTERS = []  # every cluster started, stopped on the way out


def run_kind(kind, seeds, a, say):
    """One kind: its own cluster, its seeds one after the other, then the
    next job. say(line) prints (or keeps the lines for later, --jobs).
    Returns (runs, injected, survived, failed)."""
    runs = injected = survived = 0
    failed = []
    tk = time.monotonic()
    c = Cluster(a.vigil, os.path.join(a.tmp, kind))
    CLUSTERS.append(c)
    t_cluster = time.monotonic() - tk
    try:
        for seed in seeds:
            r = Run(kind, seed)
            ts = time.monotonic()
            try:
                globals()["kind_" + kind](r, c)
                check_store(r, c)
                if kind != "isos" and not c.idle():
                    r.check(False, "jobs still queued or running after the run")
                r.lap("idle")
            except Exception as e:  # the suite's own trouble counts as a failure too
                r.check(False, f"{type(e).__name__}: {e}")
            runs += 1
            injected += r.injected
            ok = not r.problems
            if ok and r.injected:
                survived += 1
            if not ok:
                failed.append((kind, seed))
            say(f"{'ok  ' if ok else 'FAIL'} {kind} seed {seed} ({time.monotonic() - ts:.1f} s): "
                f"{'; '.join(r.notes)}" + (f" [{', '.join(r.laps)}]" if a.laps else ""))
            for p in r.problems:
                say(f"     {p}")
            if not ok:
                say(f"     again: tests/faults/faults.py --kinds {kind} --seeds {seed}")
        r = Run(kind, 0)
        try:
            carry_on(r, c, f"{kind}-next")
            check_store(r, c)
        except Exception as e:
            r.check(False, f"{type(e).__name__}: {e}")
        say(f"{'ok  ' if not r.problems else 'FAIL'} {kind}: the next job runs to the end "
            f"({time.monotonic() - tk:.1f} s for the kind"
            + (f"; cluster start {t_cluster:.1f}, {', '.join(r.laps)}" if a.laps else "") + ")")
        for p in r.problems:
            say(f"     {p}")
        if r.problems:
            failed.append((kind, "next"))
    finally:
        c.stop()
    return runs, injected, survived, failed


def main():
    signal.signal(signal.SIGTERM, on_term)
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kinds", default=",".join(KINDS))
    ap.add_argument("--seeds", help="comma-separated seeds")
    ap.add_argument("--runs", type=int, default=3, help="seeds FIRST..FIRST+RUNS-1 (without --seeds)")
    ap.add_argument("--first", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=1,
                    help="kinds run side by side, each on its own cluster (default 1); a kind's lines come together")
    ap.add_argument("--laps", action="store_true", help="print where each run's time went")
    ap.add_argument("--tmp", default=os.path.join(os.environ.get("VIGIL_TEST_TMP", "/tmp"), "faults"))
    ap.add_argument("--vigil", default=os.path.join(ROOT, "build", "vigil"))
    a = ap.parse_args()
    kinds = [k for k in a.kinds.split(",") if k]
    for k in kinds:
        if k not in KINDS:
            ap.error(f"--kinds: unknown kind '{k}' (known: {', '.join(KINDS)})")
    if a.jobs < 1:
        ap.error(f"--jobs: {a.jobs} is not a number of lanes (1 or more)")
    seeds = [int(s) for s in a.seeds.split(",")] if a.seeds else list(range(a.first, a.first + a.runs))
    shutil.rmtree(a.tmp, ignore_errors=True)
    total = {"runs": 0, "injected": 0, "survived": 0, "failed": []}
    t0 = time.monotonic()
    lines = {k: [] for k in kinds}
    results, finished = {}, queue.Queue()
    todo = sorted(kinds, key=LONGEST_FIRST.index) if a.jobs > 1 else list(kinds)
    lock = threading.Lock()

    def lane():
        while True:
            with lock:
                if not todo:
                    return
                kind = todo.pop(0)
            say = (lambda line: print(line, flush=True)) if a.jobs == 1 else lines[kind].append
            try:
                results[kind] = run_kind(kind, seeds, a, say)
            except BaseException as e:  # the cluster did not start
                say(f"FAIL {kind}: {type(e).__name__}: {e}")
                results[kind] = (0, 0, 0, [(kind, "cluster")])
            finished.put(kind)
    try:
        for _ in range(min(a.jobs, len(kinds))):
            threading.Thread(target=lane, daemon=True).start()
        for _ in kinds:  # each kind's lines together, as it ends
            while True:
                try:
                    kind = finished.get(timeout=1)
                    break
                except queue.Empty:
                    pass
            for line in lines[kind]:
                print(line, flush=True)
            runs, injected, survived, failed = results[kind]
            total["runs"] += runs
            total["injected"] += injected
            total["survived"] += survived
            total["failed"] += failed
    finally:
        for c in CLUSTERS:  # a signal: no server, worker or QEMU left behind
            try:
                c.stop()
            except Exception:
                pass
    print(f"faults: {total['runs']} runs, {total['injected']} faults injected, {total['survived']} survived, "
          f"{len(total['failed'])} failed, {time.monotonic() - t0:.0f} s", flush=True)
    return 1 if total["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
