#!/usr/bin/python3
# SPDX-License-Identifier: MIT
# latency.py - detection latency and the vanishing message, from one
# `vigil run bench/distri-latency`: host times are vigil-log.txt's (UTC,
# ms), guest times are adjtimex readings printed on the serial port.
#   offset  = min over samples (host time diag() logged - guest clock)
#   latency = host time of the "matched latency-mark" line - (guest draw + offset)
# The draw lies between the guest clock read just before and just after it;
# both are reported, the midpoint is judged.
# usage: latency.py OUT.json VIGIL RESULTS_DIR [ITERS FLASH_ITERS]
import datetime, json, os, re, statistics, subprocess, sys, time

HERE = os.path.dirname(os.path.abspath(__file__))

def host_t(line, day):
    m = re.match(r'(\d\d):(\d\d):(\d\d)\.(\d{3}) ', line)
    if not m:
        return None
    h, mi, s, ms = (int(x) for x in m.groups())
    return day + h * 3600 + mi * 60 + s + ms / 1000

def guest_t(sec, frac, status):
    return int(sec) + int(frac) / (1e9 if int(status) & 0x2000 else 1e6)

def main():
    out, vigil, rdir = sys.argv[1:4]
    iters = sys.argv[4] if len(sys.argv) > 4 else '10'
    flashes = sys.argv[5] if len(sys.argv) > 5 else '5'
    subprocess.run(['rm', '-rf', rdir])
    t_start = time.time()
    p = subprocess.run([vigil, 'run', os.path.join(HERE, 'distri-latency'), '--out', rdir,
                        '--var', f'LATENCY_ITERS={iters}', '--var', f'FLASH_ITERS={flashes}'],
                       capture_output=True, text=True)
    day = datetime.datetime.fromtimestamp(t_start, datetime.timezone.utc).replace(
        hour=0, minute=0, second=0, microsecond=0).timestamp()
    clock, lat, flash = [], [], []
    pending = None
    for line in open(os.path.join(rdir, 'vigil-log.txt'), errors='replace'):
        t = host_t(line, day)
        if t is None:
            continue
        if t < t_start - 60:  # the run crossed midnight
            t += 86400
        m = re.search(r'BENCH-CLOCK (\d+) (\d+) (\d+)', line)
        if m:
            clock.append(t - guest_t(*m.groups()))
        if 'BENCH-LATENCY-START' in line:
            pending = None
        if "matched latency-mark" in line:
            pending = t
        m = re.search(r'BENCH-DRAW (\d+) (\d+) (\d+) (\d+) (\d+) (\d+)', line)
        if m and pending is not None:
            i, s0, u0, s1, u1, st = m.groups()
            lat.append({'iter': int(i), 'match_host': pending, 'draw_before': guest_t(s0, u0, st),
                        'draw_after': guest_t(s1, u1, st)})
        m = re.search(r'BENCH-FLASH (\d+) (\w+)', line)
        if m:
            flash.append(m.group(2) == 'caught')
    res = {'rc': p.returncode, 'results_dir': rdir, 'clock_samples_s': [round(x, 4) for x in clock],
           'iters': int(iters), 'flash_iters': int(flashes)}
    if clock:
        off = min(clock)
        res['offset_s'] = round(off, 4)
        res['offset_spread_ms'] = round((statistics.median(clock) - off) * 1000, 1)
        for r in lat:
            r['latency_before_ms'] = round((r['match_host'] - (r['draw_before'] + off)) * 1000, 1)
            r['latency_after_ms'] = round((r['match_host'] - (r['draw_after'] + off)) * 1000, 1)
            r['latency_ms'] = round((r['latency_before_ms'] + r['latency_after_ms']) / 2, 1)
        res['latency'] = lat
        if lat:
            for k in ('latency_ms', 'latency_before_ms', 'latency_after_ms'):
                res['median_' + k] = round(statistics.median(r[k] for r in lat), 1)
            res['max_latency_ms'] = max(r['latency_ms'] for r in lat)
    res['flash'] = flash
    res['flash_caught'] = sum(flash)
    json.dump(res, open(out, 'w'), indent=1)
    print(f"latency: {len(lat)} samples, median {res.get('median_latency_ms')} ms "
          f"(before/after draw {res.get('median_latency_before_ms')}/{res.get('median_latency_after_ms')}), "
          f"flash caught {sum(flash)}/{len(flash)}, vigil rc {p.returncode}", file=sys.stderr)

main()
