#!/usr/bin/python3
# SPDX-License-Identifier: MIT
# conc_client.py - the raw-socket and many-client steps of
# test_server_conc.sh (python3 stdlib only). Every wait is bounded by a
# generous limit that only a hung server reaches; nothing asserts speed.
# usage: conc_client.py PORT KEY SECRET COMMAND ARGS...
#   req METHOD TARGET [k=v ...] [--src ADDR]  print "STATUS BODY" (signed)
#   closed-after PARTIAL                      true once the server closes a
#                                             connection that sent PARTIAL
#   idle-closed                               one keep-alive request, then
#                                             true once the server closes it
#   slow-body GAP_S                           a body sent in two halves GAP_S
#                                             apart is still answered
#   hold N [--src ADDR]                       open N connections with a
#                                             partial request line, print
#                                             "held", keep them until stdin ends
#   flood N                                   N half-open connections from
#                                             127.0.0.2.. (60 per address)
#                                             past the connection limit,
#                                             then all closed at once;
#                                             prints how many were accepted
#   refused [--src ADDR]                      true when a full request gets no
#                                             answer (connection closed)
#   many WRITERS READERS                      all at once; true when every
#                                             answer is right
import hashlib, hmac, http.client, json, socket, sys, threading, time, urllib.parse

LIMIT_S = 120


def sign(key, secret, target):
    mt = f'{time.time():.6f}'
    h = hmac.new(secret.encode(), (target + mt).encode(), hashlib.sha1).hexdigest()
    return {'X-API-Key': key, 'X-API-Microtime': mt, 'X-API-Hash': h, 'Accept': 'application/json'}


def req(port, key, secret, method, target, form=None, src=None):
    c = http.client.HTTPConnection('127.0.0.1', port, timeout=LIMIT_S,
                                   source_address=(src, 0) if src else None)
    body = urllib.parse.urlencode(form or {}) if method != 'GET' else None
    hdr = sign(key, secret, target)
    if body is not None:
        hdr['Content-Type'] = 'application/x-www-form-urlencoded'
    c.request(method, target, body=body, headers=hdr)
    r = c.getresponse()
    data = r.read()
    c.close()
    return r.status, data


def connect(port, src=None):
    s = socket.create_connection(('127.0.0.1', port), timeout=LIMIT_S,
                                 source_address=(src, 0) if src else None)
    return s


def read_all(s):
    """Everything until the server closes (or LIMIT_S passes: None)."""
    data = b''
    try:
        while True:
            b = s.recv(65536)
            if not b:
                return data
            data += b
    except socket.timeout:
        return None
    except ConnectionResetError:
        return data


def main():
    port, key, secret, cmd = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
    args = sys.argv[5:]
    src = None
    if '--src' in args:
        i = args.index('--src')
        src = args[i + 1]
        del args[i:i + 2]
    if cmd == 'req':
        form = dict(a.split('=', 1) for a in args[2:])
        st, data = req(port, key, secret, args[0], args[1], form, src)
        print(st, data.decode())
        return 0
    if cmd == 'closed-after':
        s = connect(port, src)
        s.sendall(args[0].encode())
        data = read_all(s)
        return 0 if data == b'' else 1
    if cmd == 'idle-closed':
        s = connect(port, src)
        s.sendall(b'GET /api/v1/job_groups HTTP/1.1\r\nHost: x\r\n\r\n')
        data = read_all(s)
        # The answer came, then the idle connection was closed.
        return 0 if data is not None and data.startswith(b'HTTP/1.1 200') else 1
    if cmd == 'slow-body':
        s = connect(port, src)
        s.sendall(b'POST /api/v1/no_such_route HTTP/1.1\r\nHost: x\r\nConnection: close\r\n'
                  b'Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 10\r\n\r\na=1&')
        time.sleep(float(args[0]))
        s.sendall(b'b=234')
        s.sendall(b'5')
        data = read_all(s)
        return 0 if data and data.startswith(b'HTTP/1.1 404') else 1
    if cmd == 'hold':
        held = []
        for _ in range(int(args[0])):
            s = connect(port, src)
            s.sendall(b'GET /api/v1/jo')
            held.append(s)
        print('held', flush=True)
        sys.stdin.read()
        return 0
    if cmd == 'flood':
        held = []
        for i in range(int(args[0])):
            try:
                s = connect(port, '127.0.0.%d' % (2 + i // 60))
                s.sendall(b'GET /api/v1/jobs HTTP/1.1\r\nHost: x\r\n')
                held.append(s)
            except OSError:
                pass  # over the limit: refused or reset
        print(len(held), flush=True)
        for s in held:
            s.close()
        return 0
    if cmd == 'refused':
        s = connect(port, src)
        try:
            s.sendall(b'GET /api/v1/job_groups HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')
        except (BrokenPipeError, ConnectionResetError):
            return 0
        data = read_all(s)
        return 0 if data == b'' else 1
    if cmd == 'many':
        writers, readers = int(args[0]), int(args[1])
        res = {}
        lock = threading.Lock()

        def one(kind, i):
            try:
                if kind == 'w':
                    out = req(port, key, secret, 'POST', '/api/v1/job_groups', {'name': f'many-{i}'})
                else:
                    out = req(port, key, secret, 'GET', f'/api/v1/job_groups?n={i}')
            except OSError as e:
                out = (0, str(e).encode())
            with lock:
                res[(kind, i)] = out

        ts = [threading.Thread(target=one, args=('w', i)) for i in range(writers)]
        ts += [threading.Thread(target=one, args=('r', i)) for i in range(readers)]
        for t in ts:
            t.start()
        for t in ts:
            t.join(LIMIT_S)
        bad = [(k, v) for k, v in res.items() if v[0] != 200]
        ids = sorted(json.loads(v[1])['id'] for k, v in res.items() if k[0] == 'w' and v[0] == 200)
        lists_ok = all(isinstance(json.loads(v[1]), list) for k, v in res.items() if k[0] == 'r' and v[0] == 200)
        st, data = req(port, key, secret, 'GET', '/api/v1/job_groups')
        names = {g['name'] for g in json.loads(data)}
        want = {f'many-{i}' for i in range(writers)}
        ok = (len(res) == writers + readers and not bad and len(set(ids)) == writers and lists_ok
              and want <= names)
        if not ok:
            print('bad answers:', bad[:5], 'ids:', ids, 'missing:', sorted(want - names), file=sys.stderr)
        return 0 if ok else 1
    print(f'conc_client.py: unknown command {cmd}', file=sys.stderr)
    return 2


sys.exit(main())
