#!/usr/bin/python3
# SPDX-License-Identifier: MIT
# pty_drive.py - runs a command on a new pseudo-terminal (its stdin,
# stdout and stderr, as a person's shell would) and answers its prompts:
# each time the output since the last answer contains EXPECT, SEND and a
# line end are typed. Everything the command printed goes to TRANSCRIPT.
# usage: pty_drive.py TRANSCRIPT TIMEOUT_S [EXPECT SEND]... -- COMMAND [ARG]...
# Exit status: the command's; 124 when it ran past TIMEOUT_S (then killed).
import os
import pty
import select
import signal
import sys
import time


def main():
    args = sys.argv[1:]
    sep = args.index('--')
    transcript, timeout, pairs, cmd = args[0], float(args[1]), args[2:sep], args[sep + 1:]
    answers = list(zip(pairs[0::2], pairs[1::2]))
    pid, fd = pty.fork()
    if pid == 0:
        os.execvp(cmd[0], cmd)
    out, seen, end = b'', 0, time.monotonic() + timeout
    with open(transcript, 'wb') as log:
        while True:
            left = end - time.monotonic()
            if left <= 0:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                return 124
            ready, _, _ = select.select([fd], [], [], min(left, 1.0))
            if not ready:
                continue
            try:
                data = os.read(fd, 4096)
            except OSError:  # EIO: the command closed the terminal
                data = b''
            if not data:
                break
            log.write(data)
            log.flush()
            out += data
            if answers and answers[0][0].encode() in out[seen:]:
                seen = len(out)
                os.write(fd, answers.pop(0)[1].encode() + b'\n')
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


sys.exit(main())
