#!/usr/bin/python3
# SPDX-License-Identifier: MIT
# review.py - the review queue (GET /api/v1/review) at 100 and at 100,000
# jobs: bench/lists.py's data sets (same shape, longer history), of whose
# failed jobs one in ten still waits for review (the others reviewed, as a
# team keeps up) and one in twenty was retried (cloned); a page of 50 from
# the top and one from the middle (keyset), median of RUNS after WARM.
# Goal: 100k median <= 1.5x the 100 median for the same answer size.
# usage: review.py VIGIL WORKDIR   (BENCH_LISTS_RUNS=50, BENCH_LISTS_BIG=100000)
import os, sqlite3, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lists  # noqa: E402


def mark(data):
    """Set review_todo as review.c would for the seeded failed jobs; clone some."""
    db = sqlite3.connect(os.path.join(data, 'vigil.db'))
    ids = [r[0] for r in db.execute("SELECT id FROM jobs WHERE state = 'done' AND result = 'failed' ORDER BY id")]
    db.executemany('UPDATE jobs SET review_todo = 1 WHERE id = ?', [(i,) for i in ids[::10]])
    db.executemany('UPDATE jobs SET clone_id = ? WHERE id = ?', [(i + 1, i) for i in ids[5::20]])
    db.commit()
    n = db.execute('SELECT COUNT(*) FROM jobs WHERE review_todo = 1 AND clone_id IS NULL').fetchone()[0]
    db.close()
    return n


def main():
    vigil, work = sys.argv[1:3]
    os.makedirs(work, exist_ok=True)
    sets = {}
    for n in (lists.SMALL, lists.BIG):
        data = os.path.join(work, f'data-{n}')
        lists.seed(vigil, data, n)
        sets[n] = (data, mark(data))
        print(f'bench/review: {n} jobs, {sets[n][1]} waiting for review', flush=True)
    small = lists.Server(vigil, sets[lists.SMALL][0], os.path.join(work, 'serve-small.log'))
    big = lists.Server(vigil, sets[lists.BIG][0], os.path.join(work, 'serve-big.log'))
    try:
        # The same answer size from both: what the small queue fills.
        same = f'/api/v1/review?limit={max(1, min(50, sets[lists.SMALL][1]))}'
        a, b = lists.medians_ms(small, same, big, same)
        print(f'{same}: {a:.2f} ms at {lists.SMALL} jobs, {b:.2f} ms at {lists.BIG} (ratio {b / a:.2f},'
              f' goal <= {lists.GOAL})')
        page = '/api/v1/review?limit=50'

        mid = big.get('/api/v1/review?limit=200')['jobs'][-1]['id']
        for _ in range(sets[lists.BIG][1] // 400):
            nxt = big.get(f'/api/v1/review?limit=200&after={mid}')['next']
            if not nxt:
                break
            mid = nxt
        deep = f'/api/v1/review?limit=50&after={mid}'
        m1, m2 = lists.medians_ms(big, page, big, deep)
        print(f'page of 50 from the middle of the 100k queue (after={mid}): {m2:.2f} ms, first page {m1:.2f} ms')
    finally:
        small.stop()
        big.stop()


if __name__ == '__main__':
    t0 = time.monotonic()
    main()
    print(f'bench/review: {time.monotonic() - t0:.0f} s')
