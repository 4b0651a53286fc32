# SPDX-License-Identifier: MIT
# test_pages.py - every page URL answers with the shell, renders its main
# data with no console error, fits 390 px, and is kept as a screenshot.
from weblib import Server, Browser, check


def run():
    s = Server('pages')
    b = Browser(s)
    try:
        b.get('/tests')
        check('/tests lists the fixture jobs', lambda: len(b.wait_until(lambda: b.find('table.jobs tbody tr'))) >= 2)
        b.shot('tests')
        check('/tests: no console error', lambda: not [e for e in b.errors() if 'favicon' not in e], b.errors())
        b.d.set_window_size(390, 844)
        b.get('/tests')
        b.wait_for('table.jobs')
        check('/tests at 390 px: no sideways scroll', b.no_side_scroll)
        b.shot('tests-390')
    finally:
        b.quit()
        s.stop()
