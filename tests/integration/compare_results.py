#!/usr/bin/python3
# SPDX-License-Identifier: MIT
# compare_results.py - compares two openQA results directories (isotovideo's
# pool testresults/ and vigil's OUT/testresults/) the way issue 15 checks
# them: the modules (test_order.json: name, script, flags) and their results,
# and per step of result-<module>.json the result, needle, tags, match areas
# text steps and recordings (audio). Timings, frame times and file names are not
# compared.
# --only-in-b NAME: module NAME is B's own (vigil_extra of test_perl_debian.sh,
# scheduled for vigil only): left out of B, and a difference if A has it.
# --across-languages: A and B run the same steps written in two languages
# (isotovideo's Perl run and vigil's Lua twin): scripts are compared without
# their extension, and of the steps only needle matches and titled text steps
# (by title, not text); wait_serial steps and bare screenshots are left out,
# as each language's testapi records those its own way.
# --markers: script_run's marker, a hash of the command, is compared as
# MARKER in the text steps, and the command server's URL (each tool's host
# address, port and job token) as AUTOINST_URL: commands that name it get
# other markers (test_perl_debian.sh's net module).
# usage: compare_results.py [--similarity] [--no-text] [--markers]
#        [--only-in-b NAME]... [--across-languages] DIR_A DIR_B
# Prints one line per difference; exit 0 same, 1 different, 2 unreadable.
import json, os, re, sys


def load(path):
    with open(path, encoding='utf-8') as f:
        return json.load(f)


def modules(d, skip=()):
    """[(name, {script, flags, category})] in test_order.json's order, without skip."""
    return [(m.get('name'), {'script': m.get('script'), 'category': m.get('category'),
                             'flags': m.get('flags') or {}}) for m in load(os.path.join(d, 'test_order.json'))
            if m.get('name') not in skip]


MARKER = re.compile(r'expected: qr/(.{5})-\\d\+-/')
# a serial terminal's script_run: "...; echo MARKER-$?-"
SERIAL_MARKER = re.compile(r'echo (.{5})-\\?\$\?-')
# the command server as each tool's guest reaches it: host, port, job token
CMDSRV_URL = re.compile(r'http://[0-9.]+:[0-9]+/[A-Za-z0-9_~-]+/')


def text_of(d, step, opts):
    try:
        with open(os.path.join(d, step['text']), encoding='utf-8', errors='replace') as f:
            text = f.read()
    except (OSError, KeyError, TypeError):
        return None
    if not opts['markers']:
        return text
    text = CMDSRV_URL.sub('AUTOINST_URL/', text)
    m = MARKER.search(text) or SERIAL_MARKER.search(text)
    return text.replace(m.group(1) + '-', 'MARKER-') if m else text


def kept(step, opts):
    """Whether a step is compared (--across-languages keeps needle matches and titled text)."""
    if not opts['across']:
        return True
    if 'needle' in step or 'tags' in step:
        return True
    return bool(step.get('title')) and step.get('title') != 'wait_serial'


def step_view(d, step, opts):
    """What is compared of one detail entry: a dict, equal when the steps agree."""
    v = {'result': step.get('result')}
    if 'needle' in step or 'tags' in step:
        v['needle'] = step.get('needle')
        v['tags'] = sorted(step.get('tags') or [])
    if 'area' in step:
        keys = ('x', 'y', 'w', 'h', 'result') + (('similarity',) if opts['similarity'] else ())
        v['area'] = [{k: a.get(k) for k in keys} for a in step['area']]
    if 'audio' in step:  # a recording (start_audiocapture)
        v['audio'] = step['audio']
    if 'needles' in step:  # a failed screen's candidates
        v['candidates'] = sorted(n.get('name') or '' for n in step['needles'])
    if 'text' in step or 'title' in step:
        v['title'] = step.get('title')
        if opts['text'] and not opts['across'] and 'text' in step:
            v['text'] = text_of(d, step, opts)
    v['screenshot'] = bool(step.get('screenshot'))
    return v


def short(v):
    return json.dumps(v, sort_keys=True)[:300]


def compare(a, b, opts, out):
    """Appends one line per difference to out."""
    ma, mb = modules(a), modules(b, opts['only_in_b'])
    for name in opts['only_in_b']:
        if name in [m[0] for m in ma]:
            out.append(f'modules: {name} is B\'s own (--only-in-b) but A has it too')
        elif name not in [m[0] for m in modules(b)]:
            out.append(f'modules: {name} (--only-in-b) is not in B')
    na, nb = [m[0] for m in ma], [m[0] for m in mb]
    if na != nb:
        out.append(f'modules: {na} != {nb}')
    infob = dict(mb)
    for name, info in ma:
        if name not in infob:
            continue
        if opts['across']:
            info, infob[name] = ({**i, 'script': os.path.splitext(i['script'] or '')[0]} for i in (info, infob[name]))
        if info != infob[name]:
            out.append(f'{name}: module {short(info)} != {short(infob[name])}')
        ra = rb = None
        fa, fb = (os.path.join(x, f'result-{name}.json') for x in (a, b))
        ra = load(fa) if os.path.exists(fa) else {}
        rb = load(fb) if os.path.exists(fb) else {}
        if ra.get('result') != rb.get('result'):
            out.append(f'{name}: result {ra.get("result")} != {rb.get("result")}')
        if ra.get('dents', 0) != rb.get('dents', 0):
            out.append(f'{name}: dents {ra.get("dents", 0)} != {rb.get("dents", 0)}')
        sa = [step_view(a, s, opts) for s in ra.get('details') or [] if kept(s, opts)]
        sb = [step_view(b, s, opts) for s in rb.get('details') or [] if kept(s, opts)]
        if len(sa) != len(sb):
            out.append(f'{name}: {len(sa)} steps != {len(sb)} steps')
        for i, (x, y) in enumerate(zip(sa, sb), 1):
            for k in sorted(set(x) | set(y)):
                if x.get(k) != y.get(k):
                    out.append(f'{name} step {i}: {k} {short(x.get(k))} != {short(y.get(k))}')
        for i in range(min(len(sa), len(sb)), max(len(sa), len(sb))):
            side, s = ('only in A', sa[i]) if len(sa) > len(sb) else ('only in B', sb[i])
            out.append(f'{name} step {i + 1}: {side}: {short(s)}')


def main(argv):
    opts = {'similarity': False, 'text': True, 'only_in_b': [], 'across': False, 'markers': False}
    args = []
    it = iter(argv[1:])
    for x in it:
        if x == '--only-in-b':
            name = next(it, None)
            if not name:
                args = []
                break
            opts['only_in_b'].append(name)
        elif x == '--markers':
            opts['markers'] = True
        elif x == '--across-languages':
            opts['across'] = True
        elif x == '--similarity':
            opts['similarity'] = True
        elif x == '--no-text':
            opts['text'] = False
        elif x.startswith('-'):
            args = []
            break
        else:
            args.append(x)
    if len(args) != 2:
        print('usage: compare_results.py [--similarity] [--no-text] [--markers] [--only-in-b NAME]... '
              '[--across-languages] DIR_A DIR_B',
              file=sys.stderr)
        return 2
    out = []
    try:
        compare(args[0], args[1], opts, out)
    except (OSError, ValueError) as e:
        print(f'compare_results: cannot read the results: {e}', file=sys.stderr)
        return 2
    for line in out:
        print(line)
    n = len([m for m in modules(args[0])])
    print(f'{"same" if not out else "different"}: {n} module(s), {len(out)} difference(s)')
    return 1 if out else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
