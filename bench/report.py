#!/usr/bin/python3
# SPDX-License-Identifier: MIT
# report.py - merges the parts' JSON into bench/results.json (machine, date,
# git commit, raw figures, goals) and prints the table.
# usage: report.py RESULTS.json NEEDLES.json RUNNER.json LATENCY.json GRUB_EXAMPLE_DIR [API.json [CONC.json [LISTS.json [WEB.json]]]]
import datetime, json, os, platform, subprocess, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

def load(p):
    try:
        return json.load(open(p))
    except (OSError, ValueError):
        return None

def sh(cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, shell=True).stdout.strip()
    except OSError:
        return None

def ms(v):
    return '?' if v is None else f'{v:.3g} ms'


def api_rows(api, row):
    if 'openqa' not in api:
        return scale_rows(api, row)  # BENCH_API_SCALE_ONLY=1
    v, o = api['vigil'], api['openqa']
    src = 'openQA ' + ('recorded' if o['source'].startswith('recorded') else 'measured')
    goals = {'jobs500': 50, 'job': 20, 'job_groups': None}
    for ep, name in (('jobs500', 'GET jobs?limit=500'), ('job', 'GET jobs/200'), ('job_groups', 'GET job_groups')):
        for c in ('c1', 'c16'):
            a, b = v['endpoints'][ep][c], o['endpoints'].get(ep, {}).get(c)
            ratio = a['rps'] / b['rps'] if b and b.get('rps') else None
            want = goals[ep] if c == 'c1' else None
            met = None
            goal = 'info'
            if want:
                goal = f'>= {want}x openQA' + (', p99 <= 50 ms' if ep == 'jobs500' else '')
                met = ratio is not None and ratio >= want and (ep != 'jobs500' or (a['p99'] or 1e9) <= 50)
            row(f'API {name} {c[1:]} connection(s), req/s', f"vigil {a['rps']:.1f} (p50 {ms(a['p50'])}, p99 {ms(a['p99'])}), "
                f"{src} {b['rps'] if b else '?'} (p99 {b.get('p99') if b else '?'} ms)"
                + (f' ({ratio:.0f}x)' if ratio else ''), goal, met)
    u = v.get('jobs500_uncached_c1')
    if u:
        b = o['endpoints'].get('jobs500', {}).get('c1')
        row('API GET jobs?limit=500 1 connection, response cache off', f"vigil {u['rps']:.1f} (p50 {ms(u['p50'])}, "
            f"p99 {ms(u['p99'])}), {src} {b['rps'] if b else '?'}" + (f" ({u['rps'] / b['rps']:.0f}x)" if b else ''),
            'info', None)
    posts = sorted(v['post_isos_timed_s'])
    med = posts[len(posts) // 2] * 1000
    oq = (o.get('post_isos_openqa_cli_median_s') or 0) - (o.get('openqa_cli_floor_s') or 0)
    row('API POST isos (50 jobs), server-side ms (median of 5)',
        f"vigil {med:.1f}; through openqa-cli vigil {v['post_isos_openqa_cli_wall_s']:.2f} s (cli floor "
        f"{v['openqa_cli_floor_s']:.2f} s), {src} {o.get('post_isos_openqa_cli_median_s')} s (~{oq:.2f} s server-side)",
        '<= 50 ms', med <= 50)
    peak = max(v['endpoints'][ep][c]['pss_mb_peak'] or 0 for ep in v['endpoints'] for c in ('c1', 'c16'))
    row('API server memory PSS MB (at rest / peak under load)',
        f"vigil {v['rest']['pss_mb_start']} / {peak}, {src} {o.get('rest_pss_mb')} / {o.get('load_pss_mb')}",
        '<= 50 MB', peak <= 50)
    warm = sorted(v['startup_warm_s'])[len(v['startup_warm_s']) // 2] * 1000
    row('API start-up to first 200, ms (cold / warm median)',
        f"vigil {v['startup_cold_s'] * 1000:.0f} / {warm:.0f}, {src} {o.get('startup_cold_s')} s / "
        f"{sorted(o.get('startup_warm_s') or [0])[len(o.get('startup_warm_s') or [0]) // 2]} s", '<= 50 ms',
        max(v['startup_cold_s'] * 1000, warm) <= 50)
    scale_rows(api, row)


def scale_rows(api, row):
    """The scheduler at scale, one row per database and number of classes
    (bench/api.py's scale_all; 'scale' in results before it had both)."""
    v = api['vigil']
    for key in sorted(k for k in v if k == 'scale' or k.startswith('scale_')):
        s = v[key]
        db = {'sqlite': 'SQLite', 'postgresql': 'PostgreSQL'}.get(s.get('db', 'sqlite'))
        cls = f", {s['classes']} classes, mixed priorities" if s.get('classes', 1) > 1 else ''
        t = s['assign_all_s']
        row(f"scheduler ({db}): {s['jobs_scheduled']} scheduled jobs, {s['workers']} workers polling at once{cls}",
            f"every worker got a distinct job in {'?' if t is None else f'{t:.2f}'} s "
            f"({s['distinct_jobs']}/{s['workers']}; {s['jobs_assigned_in_db']} assigned in the database, "
            f"{s.get('workers_abandoned', '?')} workers abandoned; server CPU {s.get('server_cpu_s', '?')} s)",
            '<= 1 s, all assigned',
            t is not None and t <= 1 and s['distinct_jobs'] == s['workers'] == s['jobs_assigned_in_db']
            and not s.get('workers_abandoned'))


def main():
    out, nf, rf, lf, gdir = sys.argv[1:6]
    needles, runner, lat = load(nf), load(rf), load(lf)
    api = load(sys.argv[6]) if len(sys.argv) > 6 else None
    conc = load(sys.argv[7]) if len(sys.argv) > 7 else None
    lists = load(sys.argv[8]) if len(sys.argv) > 8 else None
    web = load(sys.argv[9]) if len(sys.argv) > 9 else None
    rows = []

    def row(name, value, goal, met):
        rows.append({'measure': name, 'value': value, 'goal': goal,
                     'met': None if met is None else bool(met)})

    if needles:
        for s in needles['sets']:
            for mode, r in s['modes'].items():
                want = 5 if mode == 'margin' else 10
                sp = r['speedup_vs_opencv']
                row(f"needle search {s['set']} ({s['needles']} needles) {mode}, ms/screen",
                    f"vigil {r['vigil_median_ms']:.1f}, OpenCV {r['opencv_median_ms']:.1f}, tinycv {r['tinycv_median_ms']:.1f} "
                    f"({sp}x vs OpenCV)", f">= {want}x faster than OpenCV", sp is not None and sp >= want)
                if 'speedup_vs_opencv_same_window' in r:
                    sp0 = r['speedup_vs_opencv_same_window']
                    row(f"needle search {s['set']} ({s['needles']} needles) margin, OpenCV's windows "
                        f"(margin alone, vigil --ratio 0), ms/screen",
                        f"vigil {r['vigil_opencv_window_median_ms']:.1f}, OpenCV {r['opencv_median_ms']:.1f} "
                        f"({sp0}x)", f">= {want}x faster than OpenCV", sp0 is not None and sp0 >= want)
        pairs = same = pos = posn = 0
        for s in needles['sets']:
            for r in s['modes'].values():
                for k in ('vigil_vs_tinycv', 'vigil_vs_opencv', 'vigil_opencv_window_vs_opencv'):
                    if k not in r:
                        continue
                    pairs += r[k]['pairs']; same += r[k]['same_ok']
                    pos += r[k]['same_pos']; posn += r[k]['pos_pairs']
        row('needle decisions: same ok (vigil=tinycv, vigil=OpenCV), all sets', f'{same}/{pairs}', 'all equal', same == pairs)
        row('needle positions: same x,y (vigil=tinycv all areas, vigil=OpenCV matched)', f'{pos}/{posn}', 'all equal', pos == posn)
    if runner:
        iso, vg = runner['isotovideo']['median'], runner['vigil']['median']
        fl = runner['floor']['minimal']['total_s']
        n = runner['runs']
        ip = sum(bool(r['passed']) for r in runner['isotovideo']['runs'])
        vp = sum(bool(r['passed']) for r in runner['vigil']['runs'])
        row(f'runner passed (isotovideo / vigil, {n} runs)', f'{ip}/{n} / {vp}/{n}', 'all', ip == n and vp == n)
        if iso['tool_cpu_s'] and vg['tool_cpu_s'] is not None:
            row('runner CPU s outside QEMU (median)', f"vigil {vg['tool_cpu_s']:.2f}, isotovideo {iso['tool_cpu_s']:.2f} "
                f"({vg['tool_cpu_s'] / iso['tool_cpu_s']:.2f}x)", '<= 0.1x isotovideo', vg['tool_cpu_s'] <= iso['tool_cpu_s'] / 10)
        if iso['tool_peak_pss_sum_mb'] and vg['tool_peak_pss_sum_mb'] is not None:
            a, b = vg['tool_peak_pss_sum_mb'], iso['tool_peak_pss_sum_mb']
            row('runner PSS MB outside QEMU (peak, median)', f'vigil {a:.1f}, isotovideo {b:.1f} ({a / b:.2f}x)',
                '<= 0.1x and <= 25 MB', a <= b / 10 and a <= 25)
        if vg['wall_s'] and fl:
            paced = fl + (vg.get('typing_s') or 0)
            row('wall s (median)', f"vigil {vg['wall_s']:.2f}, isotovideo {iso['wall_s']:.2f}, bare QEMU floor {fl:.2f} "
                f"+ typing at vigil's pace {vg.get('typing_s') or 0:.2f} = {paced:.2f} ({vg['wall_s'] / paced:.2f}x floor)",
                '<= 1.05x floor', vg['wall_s'] <= 1.05 * paced)
        row('QEMU CPU s (median)', f"vigil {vg['qemu_cpu_s']}, isotovideo {iso['qemu_cpu_s']}, "
            f"floor {runner['floor']['minimal']['qemu_cpu_s']}", 'info', None)
        vv = [r['video'] for r in runner['vigil']['runs']]
        iv = [r['video'] for r in runner['isotovideo']['runs']]
        row('video with NOVIDEO=0 (runs with a video file)',
            f"vigil {sum(bool(v) for v in vv)}/{n} ({', '.join(sorted({os.path.basename(v['file']) for v in vv if v}))}), "
            f"isotovideo {sum(bool(v) for v in iv)}/{n}", 'every run', all(vv))
    if lat:
        m = lat.get('median_latency_ms')
        row(f"detection latency ms (median of {len(lat.get('latency', []))})",
            f"{m} (draw-before {lat.get('median_latency_before_ms')}, draw-after {lat.get('median_latency_after_ms')}, "
            f"max {lat.get('max_latency_ms')})", '<= 50 ms', m is not None and m <= 50)
        row('vanishing 300 ms message caught', f"{lat['flash_caught']}/{len(lat['flash'])} (isotovideo: 1/5)",
            f"{lat['flash_iters']}/{lat['flash_iters']}", lat['flash_caught'] == lat['flash_iters'] == len(lat['flash']))
    if api:
        api_rows(api, row)
    if conc:
        import concurrency
        for name, value, a in concurrency.rows(conc):
            row(name + ', p99', value, 'p99 < 200 ms, 0 time-outs',
                a['p99_ms'] is not None and a['p99_ms'] < 200 and a['timeouts'] == 0)
    if lists:
        import lists as lists_bench
        for name, value, goal, met in lists_bench.rows(lists):
            row(name, value, goal, met)
    if web:
        import web as webb
        for name, value, goal, met in webb.rows(web, load(web.get('reference') or '') or load(webb.REFERENCE)):
            row(name, value, goal, met)
    gex = load(os.path.join(gdir, 'testresults/results.json'))
    gvid = [f for f in os.listdir(gdir) if f.startswith('video.')] if os.path.isdir(gdir) else []
    row('vigil run examples/grub --var NOVIDEO=0', f"{gex and gex.get('result')}, video: {', '.join(gvid) or 'none'}",
        'passed + video', bool(gex and gex.get('result') == 'passed' and gvid))

    res = {'date': datetime.datetime.now(datetime.timezone.utc).isoformat(timespec='seconds'),
           'git_commit': sh('git rev-parse HEAD'), 'git_dirty': bool(sh('git status --porcelain')),
           'machine': {'host': platform.node(), 'kernel': platform.release(), 'cpus': os.cpu_count(),
                       'cpu': sh("sed -n 's/^model name\\s*: //p' /proc/cpuinfo | head -1"),
                       'os': sh('. /etc/os-release && echo "$PRETTY_NAME"'),
                       'qemu': sh('qemu-system-x86_64 --version | head -1'),
                       'os_autoinst': sh("dpkg-query -W -f='${Version}' os-autoinst"),
                       'opencv': sh("/usr/bin/python3 -c 'import cv2; print(cv2.__version__)'"),
                       'accel': 'tcg'},
           'quick': os.environ.get('BENCH_QUICK') == '1',
           'table': rows, 'needles': needles, 'runner': runner, 'latency': lat, 'api': api, 'concurrency': conc,
           'lists': lists, 'web': web}
    json.dump(res, open(out, 'w'), indent=1)
    w = max(len(r['measure']) for r in rows)
    print(f"\nvigil bench {res['date']} commit {res['git_commit'][:12] if res['git_commit'] else '?'}"
          f"{' (dirty)' if res['git_dirty'] else ''}, {res['machine']['cpus']} CPUs, TCG\n")
    print(f"| {'measure':{w}} | value | goal | met |")
    print(f"|{'-' * (w + 2)}|---|---|---|")
    for r in rows:
        met = '-' if r['met'] is None else ('yes' if r['met'] else 'NO')
        print(f"| {r['measure']:{w}} | {r['value']} | {r['goal']} | {met} |")
    print(f'\nraw figures: {out}')

main()
