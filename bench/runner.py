#!/usr/bin/python3
# SPDX-License-Identifier: MIT
# runner.py - whole-runner benchmark on the anchors' GRUB scenario: isotovideo
# (anchors' run-isotovideo.sh, NOVIDEO=0) and `vigil run bench/distri-grub`
# (same steps and needles, --var NOVIDEO=0), both measured by the anchors'
# procmon.py (QEMU in its own cgroup), plus the bare-QEMU floor
# (run-bare-qemu.sh, MODES=full). The anchors are run from a writable copy.
# usage: runner.py OUT.json RUNS VIGIL ANCHORS_COPY WORKDIR
import glob, json, os, re, statistics, subprocess, sys

HERE = os.path.dirname(os.path.abspath(__file__))
PY = '/usr/bin/python3'
IMAGES = os.environ.get('VIGIL_IMAGES', os.path.expanduser('~/.cache/vigil/images'))

def med(v):
    v = [x for x in v if x is not None]
    return round(statistics.median(v), 3) if v else None

def summary(runs, keys):
    return {k: med([r.get(k) for r in runs]) for k in keys}

KEYS = ['wall_s', 'tool_cpu_s', 'tool_user_s', 'tool_sys_s', 'qemu_cpu_s', 'tool_peak_pss_sum_mb',
        'tool_peak_rss_sum_mb', 'qemu_peak_rss_mb']

def video_of(d):
    for pat in ('video.*', 'testresults/video.*', '**/video.*'):
        for f in glob.glob(os.path.join(d, pat), recursive=True):
            if os.path.isfile(f):
                return {'file': f, 'bytes': os.path.getsize(f)}
    return None

def isotovideo(runs, anchors, work):
    iso = os.path.join(IMAGES, 'pkgs/grub-rescue-pc')
    env = dict(os.environ, IMAGES=iso, POOLBASE=os.path.join(work, 'pool'))
    res = os.path.join(anchors, 'results/grub')
    for f in glob.glob(os.path.join(res, 'novideo0-run*.json')):
        os.unlink(f)
    subprocess.run([os.path.join(anchors, 'run-isotovideo.sh'), 'grub', str(runs), '0'], env=env,
                   stdout=open(os.path.join(work, 'isotovideo.log'), 'w'), stderr=subprocess.STDOUT)
    out = []
    for f in sorted(glob.glob(os.path.join(res, 'novideo0-run*.json'))):
        d = json.load(open(f))
        r = {k: d.get(k) for k in KEYS}
        r.update(passed=d.get('passed'), video=video_of(d.get('pool', '')), events=d.get('events'))
        out.append(r)
    return out

def vigil(runs, vig, work):
    out = []
    for i in range(1, runs + 1):
        d = os.path.join(work, f'vigil-run{i}')
        subprocess.run(['rm', '-rf', d])
        pm = os.path.join(work, f'vigil-run{i}.procmon.json')
        subprocess.run([PY, os.path.join(ANCHORS, 'procmon.py'), pm, '--', vig, 'run',
                        os.path.join(HERE, 'distri-grub'), '--out', d, '--var', 'NOVIDEO=0'],
                       stdout=open(d + '.log', 'w'), stderr=subprocess.STDOUT)
        p = json.load(open(pm))
        r = {k: p.get(k) for k in KEYS}
        try:
            r['result'] = json.load(open(os.path.join(d, 'testresults/results.json')))['result']
        except (OSError, ValueError, KeyError):
            r['result'] = None
        r['passed'] = r['result'] == 'passed'
        r['video'] = video_of(d)
        # Seconds vigil spent typing at its pace (TYPING_LIMIT): the anchor's
        # floor sends keys back to back, the floor types at this pace.
        r['typing_s'] = round(sum(float(m) for m in re.findall(r"type_string '.*' \(([0-9.]+)s\)",
                                                                   open(d + '.log').read())), 3)
        out.append(r)
    return out

def floor(runs, anchors):
    env = dict(os.environ, IMAGES=os.path.join(IMAGES, 'pkgs/grub-rescue-pc'), MODES='full', TEST='grub')
    r = os.path.join(anchors, 'results/bare')
    for f in glob.glob(os.path.join(r, '*.json')):
        os.unlink(f)
    subprocess.run([os.path.join(anchors, 'run-bare-qemu.sh'), str(runs)], env=env,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    out = {}
    for v in ('minimal', 'isoto'):
        ds = [json.load(open(f)) for f in sorted(glob.glob(os.path.join(r, f'{v}-full-run*.json')))]
        out[v] = {'runs': [{'total_s': d.get('total_s'), 'passed': d.get('passed'), 'qemu_cpu_s': d.get('qemu_cpu_s')}
                           for d in ds],
                  'total_s': med([d.get('total_s') for d in ds]), 'qemu_cpu_s': med([d.get('qemu_cpu_s') for d in ds])}
    return out

def main():
    global ANCHORS
    out, runs = sys.argv[1], int(sys.argv[2])
    vig, ANCHORS, work = (os.path.abspath(a) for a in sys.argv[3:6])
    os.makedirs(work, exist_ok=True)
    iso = isotovideo(runs, ANCHORS, work)
    print(f"runner: isotovideo {len(iso)} runs, {sum(bool(r['passed']) for r in iso)} passed", file=sys.stderr)
    vg = vigil(runs, vig, work)
    print(f"runner: vigil {len(vg)} runs, {sum(r['passed'] for r in vg)} passed", file=sys.stderr)
    fl = floor(runs, ANCHORS)
    print(f"runner: bare QEMU floor minimal {fl['minimal']['total_s']} s, isoto {fl['isoto']['total_s']} s", file=sys.stderr)
    res = {'scenario': 'GRUB rescue ISO: menu, c, cmdline, echo (anchors distri-grub)', 'runs': runs,
           'isotovideo': {'runs': iso, 'median': summary(iso, KEYS)},
           'vigil': {'runs': vg, 'median': summary(vg, KEYS + ['typing_s'])}, 'floor': fl}
    json.dump(res, open(out, 'w'), indent=1)

main()
