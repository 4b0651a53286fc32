#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# fake_peer.py - a stand-in for vigil's end of os-autoinst's JSON-line RPC:
# starts src/runner/perl/embed/vigil_autotest.pl on a socketpair in a fresh pool
# dir, answers every command plausibly (in the shapes isotovideo's parent
# and backend answer), and records both directions. No VM, no matching.
#
#   python3 tests/perl-spike/fake_peer.py [--distri DIR] [--frame-refs] [--error-on CMD | --close-on CMD] [POOLDIR]
# Writes POOLDIR/transcript.jsonl and prints a compact transcript.
# --error-on answers the first CMD with {"vigil_error": ...}; --close-on
# closes the socket instead of answering it (vigil gone).
import base64, json, os, re, shutil, socket, subprocess, sys, time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
BOOT = os.path.join(ROOT, 'src', 'runner', 'perl', 'embed', 'vigil_autotest.pl')
DISTRI = os.path.join(HERE, 'distri')
FPS = 24


class Peer:
    def __init__(self, pool):
        self.pool = pool
        self.t0 = time.monotonic()
        self.nframe = 0
        self.markers = []
        self.output_marker = None
        self.console = None
        self.consoles = {}
        self.serial = ''
        self.log = []
        self.frame_refs = False
        self.frames = {}
        self.needles = {}
        self.needles_dir = None

    def frame(self):
        """A PNG 'vigil already wrote' (and its thumbnail) as tinycv's reference;
        with --frame-refs a frame id that Perl asks vigil to write (vigil_write_image)."""
        self.nframe += 1
        if self.frame_refs:
            self.frames[self.nframe] = os.path.join(DISTRI, 'needles', 'x.png')
            ref = base64.b64encode(('vigil-frame:%d' % self.nframe).encode()).decode()
            return ref, int((time.monotonic() - self.t0) * FPS)
        d = os.path.join(self.pool, '.vigil-frames')
        os.makedirs(os.path.join(d, '.thumbs'), exist_ok=True)
        png = os.path.join(d, 'frame-%d.png' % self.nframe)
        shutil.copy(os.path.join(DISTRI, 'needles', 'x.png'), png)
        shutil.copy(png, os.path.join(d, '.thumbs', 'frame-%d.png' % self.nframe))
        ref = base64.b64encode(('vigil-png:' + png).encode()).decode()
        return ref, int((time.monotonic() - self.t0) * FPS)

    def needle(self, name):
        """needle::TO_JSON of a needle of the needles dir (file relative to it)."""
        j = self.needles[name]
        area = [dict({'type': 'match', 'margin': 50}, **a) for a in j['area']]
        return {'name': name, 'file': name + '.json', 'tags': j['tags'], 'properties': j.get('properties', []),
                'png': os.path.join(self.needles_dir, name + '.png'), 'area': area}

    def check_screen(self, m):
        tags = m['mustmatch'] if isinstance(m['mustmatch'], list) else [m['mustmatch']]
        image, frame = self.frame()
        hit = next((n for n in sorted(self.needles) if set(tags) & set(self.needles[n]['tags'])), None)
        if hit:
            nd = self.needle(hit)
            area = [{'x': a['xpos'], 'y': a['ypos'], 'w': a['width'], 'h': a['height'], 'similarity': 1.0,
                     'result': 'ok'} for a in nd['area'] if a['type'] == 'match']
            found = {'needle': nd, 'ok': 1, 'error': 0, 'area': area}
            return {'ret': {'found': found, 'candidates': [], 'image': image, 'frame': frame, 'tags': tags}}
        any_needle = sorted(self.needles)[0]
        cand = {'needle': self.needle(any_needle), 'ok': 0, 'error': 0.25,
                'area': [{'x': 0, 'y': 0, 'w': 8, 'h': 8, 'similarity': 0.5, 'result': 'fail'}]}
        return {'ret': {'timeout': 1, 'tags': tags, 'image': image, 'stall': 0,
                        'failed_screens': [{'candidates': [cand], 'image': image, 'frame': frame}]}}

    def answer(self, m):
        cmd = m['cmd']
        if cmd == 'tests_done':
            with open('/proc/%d/maps' % self.pid) as f:
                self.opencv = sorted({l.split()[-1] for l in f if 'opencv' in l})
            return None
        if cmd == 'check_screen':
            return self.check_screen(m)
        if cmd == 'read_serial':
            pos = m.get('position') or 0
            return {'serial': self.serial[pos:], 'position': len(self.serial)}
        if cmd == 'backend_type_string':
            # script_run/script_output/assert_script_run type "echo MARKER-$?-"
            for mk in re.findall(r'echo (\S+)-\$\?-', m['text']):
                self.markers.append(mk)
            mk = re.search(r'echo (\w+); bash', m['text'])
            if mk:
                self.output_marker = mk.group(1)
            return {'ret': 0}
        if cmd == 'backend_wait_serial':
            rx = m['regexp']
            mk = next((k for k in self.markers if k in str(rx)), None)
            if mk and mk.startswith('SCRIPT_FINISHED') and self.output_marker:
                s = '%s\nout\n%s-0-\n' % (self.output_marker, mk)
            elif mk:
                s = '%s-0-\n' % mk
            else:
                s = 'echo hi\nhi\n'
            if mk:
                self.markers.remove(mk)
            self.serial += s
            return {'ret': {'matched': 1, 'string': s}}
        if cmd == 'backend_select_console':
            name = m['testapi_console']
            if name not in self.consoles:
                return {'ret': {'error': "vigil: no console '%s'" % name}}
            activated = self.console != name
            self.console = name
            return {'ret': {'activated': 1 if activated else 0}}
        if cmd == 'backend_is_serial_terminal':
            cls = self.consoles.get(self.console, {}).get('class', '')
            return {'ret': {'yesorno': 1 if cls == 'virtio-terminal' else 0}}
        if cmd == 'backend_last_screenshot_data':
            image, frame = self.frame()
            return {'ret': {'image': image, 'frame': frame}}
        if cmd == 'backend_proxy_console_call':
            if m['function'] in ('disable_vnc_stalls',):
                return {'ret': {'result': None}}
            return {'ret': {'exception': "vigil: console method '%s' is not supported" % m['function']}}
        if cmd == 'vigil_write_image':
            src = self.frames.get(m['frame'])
            if not src:
                return {'vigil_error': 'no frame %s' % m['frame']}
            dst = os.path.join(self.pool, m['file'])
            shutil.copy(src, dst)
            if m.get('thumbnail'):
                os.makedirs(os.path.join(os.path.dirname(dst), '.thumbs'), exist_ok=True)
                shutil.copy(src, os.path.join(os.path.dirname(dst), '.thumbs', os.path.basename(dst)))
            return {'ret': 1}
        if cmd == 'vigil_schedule':
            for c in m['consoles']:
                self.consoles[c['name']] = c
            return {'ret': 1}
        fixed = {
            'vigil_hello': 1, 'vigil_add_console': 1, 'set_current_test': 1,
            'is_configured_to_pause_on_timeout': 0, 'report_timeout': 0, 'pause_test_execution': 1,
            'backend_can_handle': {'ret': 1},   # backend::qemu: snapshots supported
            'backend_get_last_mouse_set': {'x': -1, 'y': -1},
            'backend_mouse_hide': {'absolute': 1},
            'backend_wait_still_screen': {'sim': 50, 'elapsed': 1, 'timed_out': 0},
            'backend_wait_screen_change': {'sim': 10, 'elapsed': 0.2, 'timed_out': 0},
            'backend_get_wait_still_screen_on_here_doc_input': 0,
        }
        if cmd in fixed:
            return {'ret': fixed[cmd]}
        if cmd.startswith('backend_'):
            return {'ret': 0}   # send_key, mouse_*, snapshots: the backend's rsp // 0
        return {'vigil_error': "unknown command '%s'" % cmd}

    def record(self, way, msg):
        short = json.loads(json.dumps(msg), object_hook=_shorten)
        if 'pid' in short:
            short['pid'] = 0   # the recorded transcript stays the same from run to run
        self.log.append({'t': round(time.monotonic() - self.t0, 3), 'dir': way, 'msg': short})


def _shorten(o):
    if isinstance(o.get('image'), str):
        o['image'] = '<base64 ref %s>' % base64.b64decode(o['image']).decode().rsplit('/', 1)[-1]
    return o


def main():
    args, error_on, close_on, frame_refs, distri = sys.argv[1:], None, None, False, DISTRI
    while args and args[0].startswith('--'):
        if args[0] == '--frame-refs':
            frame_refs, args = True, args[1:]
            continue
        opt, val, args = args[0], args[1], args[2:]
        if opt == '--distri':
            distri = os.path.abspath(val)
        elif opt == '--error-on':
            error_on = val
        elif opt == '--close-on':
            close_on = val
        else:
            sys.exit('fake_peer.py: unknown option %s' % opt)
    pool = os.path.abspath(args[0] if args else '/tmp/vigil-perl-spike')
    shutil.rmtree(pool, ignore_errors=True)
    os.makedirs(os.path.join(pool, 'testresults', 'ulogs'))
    with open(os.path.join(pool, 'vars.json'), 'w') as f:
        json.dump({'CASEDIR': distri, 'PRODUCTDIR': distri, 'NEEDLES_DIR': os.path.join(distri, 'needles'),
                   'DISTRI': 'spike', 'BACKEND': 'qemu', 'QEMUPORT': 15222, 'JOBTOKEN': 'spiketoken',
                   'WORKER_HOSTNAME': 'localhost'}, f)
    ours, theirs = socket.socketpair()
    errlog = open(os.path.join(pool, 'autotest-stderr.txt'), 'w')
    proc = subprocess.Popen(['perl', BOOT, str(theirs.fileno())], pass_fds=[theirs.fileno()],
                            cwd=pool, stdout=errlog, stderr=subprocess.STDOUT)
    theirs.close()
    ours.settimeout(30)
    peer, buf = Peer(pool), b''
    peer.pid, peer.opencv, peer.frame_refs = proc.pid, None, frame_refs
    peer.needles_dir = os.path.join(distri, 'needles')
    for f in sorted(os.listdir(peer.needles_dir)):
        if f.endswith('.json'):
            with open(os.path.join(peer.needles_dir, f)) as nf:
                peer.needles[f[:-5]] = json.load(nf)
    try:
        while True:
            data = ours.recv(65536)
            if not data:
                break
            buf += data
            while b'\n' in buf:
                line, buf = buf.split(b'\n', 1)
                msg = json.loads(line)
                peer.record('in', msg)
                if msg['cmd'] == close_on:
                    raise EOFError
                if msg['cmd'] == error_on:
                    error_on = None
                    rsp = {'vigil_error': "%s failed: the VNC connection is gone" % msg['cmd']}
                else:
                    rsp = peer.answer(msg)
                if rsp is None:
                    continue
                rsp['json_cmd_token'] = msg.get('json_cmd_token')
                peer.record('out', rsp)
                ours.sendall(json.dumps(rsp).encode() + b'\n')
    except EOFError:
        pass
    finally:
        ours.close()
        try:
            rc = proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            rc = proc.wait()
    with open(os.path.join(pool, 'transcript.jsonl'), 'w') as f:
        for e in peer.log:
            f.write(json.dumps(e, sort_keys=True) + '\n')
    for e in peer.log:
        m = dict(e['msg'])
        m.pop('json_cmd_token', None)
        if e['dir'] == 'in':
            cmd = m.pop('cmd')
            print('-> %-40s %s' % (cmd, json.dumps(m, sort_keys=True)[:220]))
        else:
            print('<- %s' % json.dumps(m, sort_keys=True)[:220])
    print('OpenCV libraries mapped in the test process at tests_done: %s' % ('not checked' if peer.opencv is None else peer.opencv or 'none'))
    print('autotest exit status %d' % rc)
    return 0 if rc == 0 else 1


if __name__ == '__main__':
    sys.exit(main())
