#!/usr/bin/python3
# SPDX-License-Identifier: MIT
# perl_anchors.py - the anchors' Perl distributions (tests/integration/
# distri-anchor-grub and -di) run by isotovideo (os-autoinst 4.6, TCG) and by
# `vigil run` from one vars.json, RUNS times each, side by side: wall time,
# CPU of the tool's process tree and of QEMU apart, peak RSS/PSS of the tool's
# tree without QEMU, QEMU's peak RSS; each vigil run is also compared step by
# step with isotovideo's (tests/integration/compare_results.py).
# usage: RUNS=3 ANCHORS="grub di" NOVIDEO=0 bench/perl_anchors.py
# Writes bench/out/perl_anchors.json and prints a table (medians).
import json, os, shutil, statistics, subprocess, sys, time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
VIGIL = os.environ.get('VIGIL', os.path.join(ROOT, 'build', 'vigil'))
IMAGES = os.environ.get('VIGIL_IMAGES', os.path.expanduser('~/.cache/vigil/images'))
OUT = os.path.join(HERE, 'out')
WORK = os.path.join(OUT, 'perl_anchors')
COMPARE = os.path.join(ROOT, 'tests', 'integration', 'compare_results.py')
CPUACCT = '/sys/fs/cgroup/cpuacct'
TICK = os.sysconf('SC_CLK_TCK')
SAMPLE_S = float(os.environ.get('SAMPLE_S', '0.1'))
MEDIA = {
    'grub': {'ISO': os.path.join(IMAGES, 'grub-rescue-cdrom.iso')},
    'di': {'KERNEL': os.path.join(IMAGES, 'di-text', 'linux'),
           'INITRD': os.path.join(IMAGES, 'di-text', 'initrd.gz')},
}


def read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ''


def proc_table():
    """{pid: (ppid, comm, cpu seconds, (user, sys))} for every process now."""
    t = {}
    for d in os.listdir('/proc'):
        if not d.isdigit():
            continue
        s = read(f'/proc/{d}/stat')
        if not s:
            continue
        close = s.rfind(')')
        f = s[close + 2:].split()
        user, sys_ = int(f[11]) / TICK, int(f[12]) / TICK
        t[int(d)] = (int(f[1]), s[s.find('(') + 1:close], user + sys_, (user, sys_))
    return t


def status_kb(pid, name, key):
    for line in read(f'/proc/{pid}/{name}').splitlines():
        if line.startswith(key):
            return int(line.split()[1])
    return 0


def is_qemu(comm):
    return comm.startswith('qemu-system') or comm == 'kvm'


class Cgroups:
    """cgroup v1 cpuacct: the tool's tree in 'tool', QEMU moved to 'qemu'.
    Counts the CPU of children that already exited, which sampling misses."""

    def __init__(self):
        self.base = os.path.join(CPUACCT, f'vigil-bench.{os.getpid()}')
        os.makedirs(os.path.join(self.base, 'tool'))
        os.makedirs(os.path.join(self.base, 'qemu'))

    def enter(self):  # in the child, before exec
        with open(os.path.join(self.base, 'tool', 'cgroup.procs'), 'w') as f:
            f.write(str(os.getpid()))

    def move_qemu(self, pid):
        with open(os.path.join(self.base, 'qemu', 'cgroup.procs'), 'w') as f:
            f.write(str(pid))

    def usage(self, name):
        d = os.path.join(self.base, name)
        st = dict(line.split() for line in read(os.path.join(d, 'cpuacct.stat')).splitlines())
        return (int(read(os.path.join(d, 'cpuacct.usage'))) / 1e9,
                int(st.get('user', 0)) / TICK, int(st.get('system', 0)) / TICK)

    def remove(self):
        for d in ('tool', 'qemu', ''):
            try:
                os.rmdir(os.path.join(self.base, d))
            except OSError:
                pass


def measure(cmd, cwd, log):
    """Runs cmd; returns its exit status, wall time, CPU and memory."""
    try:
        cg = Cgroups()
    except OSError:
        cg = None
    t0 = time.monotonic()
    with open(log, 'w') as out:
        child = subprocess.Popen(cmd, cwd=cwd, stdout=out, stderr=subprocess.STDOUT,
                                 preexec_fn=cg.enter if cg else None)
    cpu = {}            # pid -> (is qemu, last cpu seconds seen)
    before_move = [0.0, 0.0]   # QEMU's user, sys CPU while still in the tool's cgroup
    moved = set()
    peak = {'tool_rss': 0, 'tool_pss': 0, 'qemu_rss': 0}
    while child.poll() is None:
        table = proc_table()
        tree, grew = {child.pid}, True
        while grew:
            grew = False
            for pid, (ppid, _, _, _) in table.items():
                if ppid in tree and pid not in tree:
                    tree.add(pid)
                    grew = True
        rss = pss = 0
        for pid in tree:
            if pid not in table:
                continue
            q = is_qemu(table[pid][1])
            if q and cg and pid not in moved:
                try:
                    cg.move_qemu(pid)
                    moved.add(pid)
                    ut = proc_table().get(pid, table[pid])[3]
                    before_move = [before_move[0] + ut[0], before_move[1] + ut[1]]
                except OSError:
                    pass
            cpu[pid] = (q, table[pid][2])
            if q:
                peak['qemu_rss'] = max(peak['qemu_rss'], status_kb(pid, 'status', 'VmHWM:'))
            else:
                rss += status_kb(pid, 'status', 'VmRSS:')
                pss += status_kb(pid, 'smaps_rollup', 'Pss:')
        peak['tool_rss'] = max(peak['tool_rss'], rss)
        peak['tool_pss'] = max(peak['tool_pss'], pss)
        time.sleep(SAMPLE_S)
    r = {'rc': child.returncode, 'wall_s': round(time.monotonic() - t0, 3),
         'tool_peak_rss_mb': round(peak['tool_rss'] / 1024, 1),
         'tool_peak_pss_mb': round(peak['tool_pss'] / 1024, 1),
         'qemu_peak_rss_mb': round(peak['qemu_rss'] / 1024, 1)}
    if cg:
        tool, tuser, tsys = cg.usage('tool')
        qemu, _, _ = cg.usage('qemu')
        cg.remove()
        moved_cpu = sum(before_move)
        r.update(method='cgroup-v1-cpuacct', tool_cpu_s=round(tool - moved_cpu, 2),
                 tool_user_s=round(tuser - before_move[0], 2), tool_sys_s=round(tsys - before_move[1], 2),
                 qemu_cpu_s=round(qemu + moved_cpu, 2), qemu_cpu_before_move_s=round(moved_cpu, 2))
    else:  # children that exit between two samples are lost
        r.update(method='proc-sampling',
                 tool_cpu_s=round(sum(c for q, c in cpu.values() if not q), 2),
                 qemu_cpu_s=round(sum(c for q, c in cpu.values() if q), 2))
    return r


def vars_json(anchor, novideo):
    casedir = os.path.join(ROOT, 'tests', 'integration', f'distri-anchor-{anchor}')
    v = {'BACKEND': 'qemu', 'QEMU_NO_KVM': '1', 'QEMU': 'x86_64', 'QEMU_APPEND': 'accel tcg',
         'QEMUCPUS': '1', 'QEMURAM': '512', 'CASEDIR': casedir,
         'NEEDLES_DIR': os.path.join(casedir, 'needles'), 'NOVIDEO': novideo,
         'DISTRI': anchor, 'VERSION': '1', 'ARCH': 'x86_64'}
    v.update(MEDIA[anchor])
    return v


def result_of(testresults):
    try:
        return json.load(open(os.path.join(testresults, 'result-boot.json')))['result']
    except (OSError, ValueError, KeyError):
        return None


def run_one(anchor, i, novideo):
    d = os.path.join(WORK, f'{anchor}-run{i}')
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(os.path.join(d, 'pool'))
    v = vars_json(anchor, novideo)
    with open(os.path.join(d, 'vars.json'), 'w') as f:
        json.dump(v, f, indent=1)
    shutil.copy(os.path.join(d, 'vars.json'), os.path.join(d, 'pool', 'vars.json'))
    iso = measure(['/usr/bin/isotovideo'], os.path.join(d, 'pool'), os.path.join(d, 'isotovideo.log'))
    iso['result'] = result_of(os.path.join(d, 'pool', 'testresults'))
    vig = measure([VIGIL, 'run', v['CASEDIR'], '--vars', os.path.join(d, 'vars.json'),
                   '--out', os.path.join(d, 'vigil')], d, os.path.join(d, 'vigil.log'))
    vig['result'] = result_of(os.path.join(d, 'vigil', 'testresults'))
    cmp = subprocess.run([sys.executable, COMPARE, os.path.join(d, 'pool', 'testresults'),
                          os.path.join(d, 'vigil', 'testresults')], capture_output=True, text=True)
    vig['same_steps'] = cmp.returncode == 0
    if cmp.returncode:
        vig['differences'] = cmp.stdout.splitlines()[:20]
    return {'isotovideo': iso, 'vigil': vig}


ROWS = [('wall s', 'wall_s'), ('tool CPU s', 'tool_cpu_s'), ('QEMU CPU s', 'qemu_cpu_s'),
        ('tool peak RSS MB', 'tool_peak_rss_mb'), ('tool peak PSS MB', 'tool_peak_pss_mb'),
        ('QEMU peak RSS MB', 'qemu_peak_rss_mb')]


def median(runs, key):
    v = [r[key] for r in runs if r.get(key) is not None]
    return round(statistics.median(v), 2) if v else None


def main():
    runs = int(os.environ.get('RUNS', '3'))
    anchors = os.environ.get('ANCHORS', 'grub di').split()
    novideo = os.environ.get('NOVIDEO', '0')
    if not os.access('/usr/bin/isotovideo', os.X_OK) or not os.access(VIGIL, os.X_OK):
        print(f'perl_anchors: needs /usr/bin/isotovideo and {VIGIL} (make)', file=sys.stderr)
        return 1
    os.makedirs(WORK, exist_ok=True)
    report = {'runs': runs, 'novideo': novideo, 'date': time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime()),
              'commit': subprocess.run(['git', '-C', ROOT, 'rev-parse', '--short', 'HEAD'],
                                       capture_output=True, text=True).stdout.strip(),
              'loadavg_before': read('/proc/loadavg').split()[:3], 'anchors': {}}
    for a in anchors:
        per = [run_one(a, i, novideo) for i in range(1, runs + 1)]
        side = {t: [p[t] for p in per] for t in ('isotovideo', 'vigil')}
        med = {t: {k: median(side[t], k) for _, k in ROWS} for t in side}
        report['anchors'][a] = {'runs': per, 'median': med,
                                'all_passed': all(r['result'] == 'ok' for t in side for r in side[t]),
                                'same_steps': all(r['same_steps'] for r in side['vigil'])}
    with open(os.path.join(OUT, 'perl_anchors.json'), 'w') as f:
        json.dump(report, f, indent=1)
    print(f'Perl anchors, isotovideo vs vigil run: median of {runs} run(s), NOVIDEO={novideo}, TCG, '
          f'load before {" ".join(report["loadavg_before"])}')
    print(f'{"anchor":6} {"measure":18} {"isotovideo":>11} {"vigil":>9} {"vigil/iso":>10}')
    for a, r in report['anchors'].items():
        for label, k in ROWS:
            iv, vv = r['median']['isotovideo'][k], r['median']['vigil'][k]
            ratio = f'{vv / iv:.2f}' if iv and vv is not None else '-'
            print(f'{a:6} {label:18} {iv if iv is not None else "-":>11} {vv if vv is not None else "-":>9} {ratio:>10}')
        print(f'{a:6} {"passed / same":18} {"yes" if r["all_passed"] else "NO":>11} '
              f'{"yes" if r["same_steps"] else "NO":>9}')
    print(f'written: {os.path.join(OUT, "perl_anchors.json")}')
    return 0 if all(r['all_passed'] and r['same_steps'] for r in report['anchors'].values()) else 1


if __name__ == '__main__':
    sys.exit(main())
