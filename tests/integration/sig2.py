#!/usr/bin/python3
# SPDX-License-Identifier: MIT
# sig2.py - sends one request signed with vigil's scheme 2 (docs/api.md,
# "Signatures"), written from the description so the test does not trust
# vigil's own client. Options let a test replay the same signed request,
# send a body other than the one signed, or sign the legacy way.
#   sig2.py URL KEY SECRET METHOD TARGET [BODY] [--times N] [--body-sent B]
#           [--legacy] [--headers FILE] [--replay FILE]
# Prints one HTTP status per request sent, then the last body.
import hashlib, hmac, json, secrets, sys, time, urllib.request, urllib.error

def main():
    a = sys.argv[1:]
    opts = {}
    for flag in ("--times", "--body-sent", "--headers", "--replay"):
        if flag in a:
            i = a.index(flag)
            opts[flag] = a[i + 1]
            del a[i:i + 2]
    legacy = "--legacy" in a
    if legacy:
        a.remove("--legacy")
    url, key, secret, method, target = a[:5]
    body = a[5].encode() if len(a) > 5 else b""
    if "--replay" in opts:
        hdrs = json.load(open(opts["--replay"]))
    else:
        mt = str(int(time.time()))
        hdrs = {"X-API-Key": key, "X-API-Microtime": mt, "Accept": "application/json"}
        if legacy:
            hdrs["X-API-Hash"] = hmac.new(secret.encode(), (target + mt).encode(), hashlib.sha1).hexdigest()
        else:
            nonce = secrets.token_hex(16)
            sha = hashlib.sha256(body).hexdigest()
            msg = "\n".join(["vigil-hmac-2", method, target, mt, nonce, sha]).encode()
            hdrs.update({"X-API-Nonce": nonce, "X-API-Content-SHA256": sha,
                         "X-API-Signature": hmac.new(secret.encode(), msg, hashlib.sha256).hexdigest()})
        if body:
            hdrs["Content-Type"] = "application/x-www-form-urlencoded"
    if "--headers" in opts:
        json.dump(hdrs, open(opts["--headers"], "w"))
    sent = opts["--body-sent"].encode() if "--body-sent" in opts else body
    text = ""
    for _ in range(int(opts.get("--times", "1"))):
        req = urllib.request.Request(url + target, data=sent if (sent or method == "POST") else None,
                                     method=method, headers=hdrs)
        try:
            with urllib.request.urlopen(req) as r:
                code, text = r.status, r.read().decode()
        except urllib.error.HTTPError as e:
            code, text = e.code, e.read().decode()
        print(code)
    print(text)

main()
