#!/usr/bin/python3
# SPDX-License-Identifier: MIT
# devmode_cmd.py - send one developer-mode command to a runner's channel
# (OUT/.devmode.sock, docs/devmode.md) and print its one-line JSON answer:
#   devmode_cmd.py SOCKET '{"cmd": "status"}'
import socket
import sys

s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.settimeout(30)
s.connect(sys.argv[1])
s.sendall(sys.argv[2].encode() + b"\n")
buf = b""
while not buf.endswith(b"\n"):
    part = s.recv(65536)
    if not part:
        break
    buf += part
s.close()
sys.stdout.write(buf.decode())
