#!/usr/bin/python3
# SPDX-License-Identifier: MIT
# rerun.py - what "re-run from here" saves against a full re-run, measured on
# a copy of a distribution (examples/debian by default) with one module made
# a milestone and a module that fails until RERUN_PASS=1 inserted before the
# last one. Runs `vigil run` as the worker does: a full run with --snapshots,
# then a copy of the kept disks (what the worker does for a pinned job) and
# `--resume-from` the module after the milestone with RERUN_PASS=1.
# usage: rerun.py [DISTRI [MILESTONE_MODULE]] (defaults: examples/debian packages)
# Writes bench/out/rerun.json and prints the figures.
import json, os, re, shutil, subprocess, sys, tempfile, time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
VIGIL = os.environ.get('VIGIL', os.path.join(ROOT, 'build', 'vigil'))

GATE = '''-- Added by bench/rerun.py: fails until RERUN_PASS=1.
return function()
   if get_var("RERUN_PASS") ~= "1" then error("deliberate failure: RERUN_PASS is not 1") end
end
'''


def prepare(src, milestone, work):
    d = os.path.join(work, 'distri')
    shutil.copytree(src, d, symlinks=True)
    # Paths in vars.json relative to the distribution stay valid.
    vars_path = os.path.join(d, 'vars.json')
    if os.path.exists(vars_path):
        v = json.load(open(vars_path))
        for k, val in v.items():
            if isinstance(val, str) and '${CASEDIR}/..' in val:
                v[k] = val.replace('${CASEDIR}', os.path.abspath(src))
        json.dump(v, open(vars_path, 'w'), indent=1)
    mod = os.path.join(d, 'tests', milestone + '.lua')
    text = open(mod).read()
    if 'return function()' in text:
        text = text.replace('return function()', 'return { flags = { milestone = true }, run = function()', 1)
        text = text.rstrip() + '\n}\n'
    else:
        text = text.replace('return {', 'return {\n   flags = { milestone = true },', 1)
    open(mod, 'w').write(text)
    open(os.path.join(d, 'tests', 'rerun_gate.lua'), 'w').write(GATE)
    main = os.path.join(d, 'main.lua')
    lines = open(main).read().rstrip('\n').split('\n')
    last = max(i for i, l in enumerate(lines) if l.startswith('loadtest'))
    lines.insert(last, 'loadtest "rerun_gate"')
    open(main, 'w').write('\n'.join(lines) + '\n')
    order = [re.search(r'"([^"]+)"', l).group(1) for l in lines if l.startswith('loadtest')]
    return d, order


def run(args, log):
    t0 = time.monotonic()
    with open(log, 'w') as f:
        rc = subprocess.call([VIGIL, 'run'] + args, stdout=f, stderr=subprocess.STDOUT)
    return rc, time.monotonic() - t0


def results(out):
    try:
        return [m['result'] for m in json.load(open(os.path.join(out, 'testresults', 'results.json')))['modules']]
    except (OSError, ValueError, KeyError):
        return None


def main():
    src = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, 'examples', 'debian')
    milestone = sys.argv[2] if len(sys.argv) > 2 else 'packages'
    work = tempfile.mkdtemp(prefix='vigil-rerun-bench-')
    distri, order = prepare(src, milestone, work)
    resume = order[order.index(milestone) + 1]
    snap = os.path.join(work, 'snap')
    rc1, full_s = run([distri, '--snapshots', snap, '--out', os.path.join(work, 'full'), '--var', 'NOVIDEO=1'],
                      os.path.join(work, 'full.log'))
    t0 = time.monotonic()
    copy = os.path.join(work, 'snap-copy')
    subprocess.check_call(['cp', '-a', '--reflink=auto', snap, copy])
    copy_s = time.monotonic() - t0
    rc2, rerun_s = run([distri, '--snapshots', copy, '--resume-from', resume, '--out', os.path.join(work, 'rerun'),
                        '--var', 'RERUN_PASS=1', '--var', 'NOVIDEO=1'], os.path.join(work, 'rerun.log'))
    size = sum(os.path.getsize(os.path.join(snap, f)) for f in os.listdir(snap))
    res = {
        'distri': os.path.relpath(src, ROOT), 'milestone': milestone, 'resume_from': resume, 'modules': order,
        'full': {'rc': rc1, 'wall_s': round(full_s, 2), 'results': results(os.path.join(work, 'full'))},
        'snapshot_copy_s': round(copy_s, 2), 'snapshot_bytes': size,
        'rerun': {'rc': rc2, 'wall_s': round(rerun_s, 2), 'results': results(os.path.join(work, 'rerun'))},
        'rerun_with_copy_s': round(rerun_s + copy_s, 2),
        'ratio': round((rerun_s + copy_s) / full_s, 3) if full_s else None,
        'qemu': 'TCG' if not os.access('/dev/kvm', os.R_OK | os.W_OK) else 'KVM',
    }
    os.makedirs(os.path.join(HERE, 'out'), exist_ok=True)
    json.dump(res, open(os.path.join(HERE, 'out', 'rerun.json'), 'w'), indent=1)
    print(json.dumps(res, indent=1))
    print(f"full run {full_s:.1f} s; re-run from {resume} {rerun_s + copy_s:.1f} s "
          f"(copy of the snapshot {copy_s:.1f} s): {100 * (rerun_s + copy_s) / full_s:.0f} % of a full re-run")
    if os.environ.get('KEEP') != '1':
        shutil.rmtree(work, ignore_errors=True)


if __name__ == '__main__':
    main()
