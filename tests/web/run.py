#!/usr/bin/python3
# SPDX-License-Identifier: MIT
# run.py - the browser suites: imports each tests/web/test_*.py (or those
# named on the command line) and calls its run(); each counts its checks
# through weblib.check. Prints "N passed, N failed" last.
import importlib.util
import glob
import os
import sys
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import weblib  # noqa: E402

here = os.path.dirname(os.path.abspath(__file__))
names = sys.argv[1:] or sorted(glob.glob(os.path.join(here, 'test_*.py')))
for path in names:
    name = os.path.splitext(os.path.basename(path))[0]
    print(f'-- {name}', flush=True)
    spec = importlib.util.spec_from_file_location(name, os.path.join(here, os.path.basename(path)))
    mod = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(mod)
        mod.run()
    except Exception:
        weblib.check(f'{name} ran to its end', False, traceback.format_exc().strip().splitlines()[-1])
        traceback.print_exc()
weblib.finish()
