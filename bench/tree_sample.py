#!/usr/bin/python3
# SPDX-License-Identifier: MIT
# tree_sample.py - samples a process tree (a worker and everything it
# starts) every SAMPLE_S seconds until SIGTERM, then writes JSON: CPU
# seconds of the tree without QEMU and of QEMU apart (each process's
# last-seen utime+stime minus what it had at the start), the peak summed
# RSS and PSS of the tree without QEMU, QEMU's peak RSS.
# usage: tree_sample.py ROOT_PID OUT.json
import json, os, signal, sys, time

TICK = os.sysconf('SC_CLK_TCK')
SAMPLE_S = float(os.environ.get('SAMPLE_S', '0.2'))


def read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ''


def table():
    t = {}
    for d in os.listdir('/proc'):
        if not d.isdigit():
            continue
        s = read(f'/proc/{d}/stat')
        if not s:
            continue
        close = s.rfind(')')
        f = s[close + 2:].split()
        t[int(d)] = (int(f[1]), s[s.find('(') + 1:close], (int(f[11]) + int(f[12])) / TICK)
    return t


def tree(t, root):
    kids = {}
    for pid, (ppid, _, _) in t.items():
        kids.setdefault(ppid, []).append(pid)
    out, todo = [], [root]
    while todo:
        p = todo.pop()
        if p in t:
            out.append(p)
            todo.extend(kids.get(p, []))
    return out


def mem(pid):
    rss = pss = 0
    for line in read(f'/proc/{pid}/smaps_rollup').splitlines():
        if line.startswith('Rss:'):
            rss = int(line.split()[1])
        elif line.startswith('Pss:'):
            pss = int(line.split()[1])
    return rss, pss


def main():
    root, out = int(sys.argv[1]), sys.argv[2]
    stop = []
    signal.signal(signal.SIGTERM, lambda *a: stop.append(1))
    t0 = table()
    start = {p: t0[p][2] for p in tree(t0, root)}
    last, comm = {}, {}
    peak = {'tool_rss_kb': 0, 'tool_pss_kb': 0, 'qemu_rss_kb': 0}
    begin = time.time()
    while not stop:
        t = table()
        rss = pss = qrss = 0
        for p in tree(t, root):
            last[p] = t[p][2]
            comm[p] = t[p][1]
            r, s = mem(p)
            if t[p][1].startswith('qemu'):
                qrss += r
            else:
                rss += r
                pss += s
        peak['tool_rss_kb'] = max(peak['tool_rss_kb'], rss)
        peak['tool_pss_kb'] = max(peak['tool_pss_kb'], pss)
        peak['qemu_rss_kb'] = max(peak['qemu_rss_kb'], qrss)
        time.sleep(SAMPLE_S)
    tool = sum(v - start.get(p, 0) for p, v in last.items() if not comm[p].startswith('qemu'))
    qemu = sum(v - start.get(p, 0) for p, v in last.items() if comm[p].startswith('qemu'))
    res = dict(peak, tool_cpu_s=round(tool, 2), qemu_cpu_s=round(qemu, 2), sampled_s=round(time.time() - begin, 1),
               processes=sorted(set(comm.values())))
    with open(out, 'w') as f:
        json.dump(res, f, indent=1)


main()
