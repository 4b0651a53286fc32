#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""call.py - one signed API request as openQA's Python client signs it,
printing the HTTP status and the body, whatever the status:
    call.py URL KEY SECRET METHOD PATH [NAME=VALUE...] [--body FILE]
(test_fault_inject.sh: what the server answers on a full disk)."""
import sys

import requests
from openqa_client.client import OpenQA_Client


def main(argv):
    body = None
    if "--body" in argv:
        i = argv.index("--body")
        with open(argv[i + 1], "rb") as f:
            body = f.read()
        del argv[i:i + 2]
    url, key, secret, method, path = argv[1:6]
    params = dict(a.split("=", 1) for a in argv[6:])
    host = url.split("://", 1)[1]
    c = OpenQA_Client(server=host, scheme="http", retries=0, wait=0)
    c.session.headers["X-API-Key"] = key
    c.apisecret = secret
    req = requests.Request(method, f"{url}/api/v1/{path}", params=params, data=body)
    prep = c._add_auth_headers(c.session.prepare_request(req))
    r = c.session.send(prep, timeout=120)
    print(r.status_code, r.text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
