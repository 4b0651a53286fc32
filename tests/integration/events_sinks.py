#!/usr/bin/python3
# SPDX-License-Identifier: MIT
# events_sinks.py - the far ends of vigil's event notifications for
# test_events.sh and bench/events.sh (python3 stdlib only):
#   webhook PORT SECRET LOG FAILFILE   an HTTP receiver: checks each POST's
#        X-Vigil-Signature-256 (HMAC-SHA256 of the body), appends
#        {"delivery", "event", "sig_ok", "data"} to LOG (JSON lines) and
#        answers 204; while FAILFILE exists it answers 503 and appends
#        {"refused": delivery} instead (a receiver that fails, then recovers)
#   irc PORT NICK CHANNEL LOG [PASSWORD] an IRC client that joins CHANNEL on
#        127.0.0.1:PORT, writes "joined" to LOG.joined each time it has, and
#        appends every PRIVMSG text to LOG; it reconnects when the server
#        goes away (until killed)
#   api PORT KEY SECRET METHOD TARGET [JSON|k=v ...]  one signed request:
#        prints "STATUS BODY"; a single argument starting with '{' is sent
#        as a JSON body
#   wait-lines FILE N SECONDS          true once FILE has N lines or more
#   finish PORT KEY SECRET FIRST LAST RESULT  set_done each job FIRST..LAST
#        over one kept-alive connection; prints {"n", "errors", "seconds",
#        "p50_ms", "p99_ms", "max_ms"} of the requests (bench/events.sh)
import hashlib, hmac, http.client, http.server, json, os, socket, sys, time, urllib.parse


def webhook(port, secret, log, failfile):
    class H(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            n = int(self.headers.get('Content-Length', '0'))
            body = self.rfile.read(n)
            want = 'sha256=' + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
            got = self.headers.get('X-Vigil-Signature-256', '')
            delivery = self.headers.get('X-Vigil-Delivery')
            refuse = os.path.exists(failfile)
            if refuse:
                rec = {'refused': delivery}
            else:
                try:
                    data = json.loads(body)
                except ValueError:
                    data = None
                rec = {'delivery': delivery, 'event': self.headers.get('X-Vigil-Event'),
                       'sig_ok': hmac.compare_digest(want, got), 'data': data}
            # Logged before the answer: the sender's next request comes after it.
            with open(log, 'a') as f:
                f.write(json.dumps(rec) + '\n')
            self.send_response(503 if refuse else 204)
            self.end_headers()

        def log_message(self, *a):
            pass

    http.server.ThreadingHTTPServer(('127.0.0.1', int(port)), H).serve_forever()


def irc(port, nick, channel, log, password=None):
    while True:
        try:
            s = socket.create_connection(('127.0.0.1', int(port)), timeout=300)
        except OSError:
            time.sleep(0.2)
            continue
        f = s.makefile('rb')
        if password:
            s.sendall(f'PASS {password}\r\n'.encode())
        s.sendall(f'NICK {nick}\r\nUSER {nick} 0 * :observer\r\n'.encode())
        try:
            for raw in f:
                line = raw.decode('utf-8', 'replace').rstrip('\r\n')
                parts = line.split(' ')
                if line.startswith('PING '):
                    s.sendall(('PONG ' + line[5:] + '\r\n').encode())
                elif len(parts) > 1 and parts[1] == '001':
                    s.sendall(f'JOIN {channel}\r\n'.encode())
                elif len(parts) > 1 and parts[1] == '366':
                    with open(log + '.joined', 'a') as j:
                        j.write('joined\n')
                elif len(parts) > 3 and parts[1] == 'PRIVMSG' and parts[2] == channel:
                    text = line.split(' :', 1)[1] if ' :' in line else ''
                    with open(log, 'a') as o:
                        o.write(text + '\n')
        except OSError:
            pass
        s.close()
        time.sleep(0.2)


def api(port, key, secret, method, target, args):
    mt = f'{time.time():.6f}'
    h = {'X-API-Key': key, 'X-API-Microtime': mt, 'Accept': 'application/json',
         'X-API-Hash': hmac.new(secret.encode(), (target + mt).encode(), hashlib.sha1).hexdigest()}
    body = None
    if len(args) == 1 and args[0].startswith('{'):
        body = args[0]
        h['Content-Type'] = 'application/json'
    elif args:
        body = urllib.parse.urlencode([tuple(a.split('=', 1)) for a in args])
        h['Content-Type'] = 'application/x-www-form-urlencoded'
    c = http.client.HTTPConnection('127.0.0.1', int(port), timeout=120)
    c.request(method, target, body=body, headers=h)
    r = c.getresponse()
    print(r.status, r.read().decode())
    return r.status < 400


def signed(key, secret, target):
    mt = f'{time.time():.6f}'
    return {'X-API-Key': key, 'X-API-Microtime': mt, 'Accept': 'application/json',
            'X-API-Hash': hmac.new(secret.encode(), (target + mt).encode(), hashlib.sha1).hexdigest()}


def finish(port, key, secret, first, last, result):
    c = http.client.HTTPConnection('127.0.0.1', int(port), timeout=120)
    lat, errors, t0 = [], 0, time.time()
    for i in range(int(first), int(last) + 1):
        target = f'/api/v1/jobs/{i}/set_done?result={result}'
        t = time.time()
        try:
            c.request('POST', target, body='', headers=signed(key, secret, target))
            r = c.getresponse()
            r.read()
            if r.status != 200:
                errors += 1
        except (OSError, http.client.HTTPException):
            errors += 1
            c.close()
            c = http.client.HTTPConnection('127.0.0.1', int(port), timeout=120)
        lat.append((time.time() - t) * 1000)
    lat.sort()
    print(json.dumps({'n': len(lat), 'errors': errors, 'seconds': round(time.time() - t0, 2),
                      'p50_ms': round(lat[len(lat) // 2], 2), 'p99_ms': round(lat[int(len(lat) * 0.99)], 2),
                      'max_ms': round(lat[-1], 2)}))
    return errors == 0


def wait_lines(path, n, seconds):
    end = time.time() + float(seconds)
    while time.time() < end:
        try:
            with open(path) as f:
                if sum(1 for _ in f) >= int(n):
                    return True
        except OSError:
            pass
        time.sleep(0.1)
    return False


if __name__ == '__main__':
    cmd, a = sys.argv[1], sys.argv[2:]
    if cmd == 'webhook':
        webhook(*a)
    elif cmd == 'irc':
        irc(*a)
    elif cmd == 'api':
        sys.exit(0 if api(a[0], a[1], a[2], a[3], a[4], a[5:]) else 1)
    elif cmd == 'finish':
        sys.exit(0 if finish(*a) else 1)
    elif cmd == 'wait-lines':
        sys.exit(0 if wait_lines(*a) else 1)
    else:
        sys.exit(f'unknown command {cmd}')
