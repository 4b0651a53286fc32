/* SPDX-License-Identifier: MIT */
/* match_sort.c - tinycv picks the first element of std::sort(mins, by
 * distance to the origin). std::sort is not stable, so among candidates at
 * the same distance the winner is whatever libstdc++'s introsort leaves
 * first. This replays that algorithm (GCC's bits/stl_algo.h / stl_heap.h,
 * threshold 16, median-of-3, unguarded partition, heap fallback) on an index
 * array so the same candidate wins. Pure computation, no allocation beyond
 * the index array. */
#include <math.h>
#include <stdlib.h>
#include "image/match.h"
#include "util/banned.h" /* last: after every system header */

struct ssort {
	const double *key;
	size_t *a;
};

static int lt(const struct ssort *s, size_t i, size_t j)
{
	return s->key[s->a[i]] < s->key[s->a[j]];
}

static void swp(struct ssort *s, size_t i, size_t j)
{
	size_t t = s->a[i];
	s->a[i] = s->a[j];
	s->a[j] = t;
}

static void move_median_to_first(struct ssort *s, size_t result, size_t a, size_t b, size_t c)
{
	if (lt(s, a, b)) {
		if (lt(s, b, c))
			swp(s, result, b);
		else if (lt(s, a, c))
			swp(s, result, c);
		else
			swp(s, result, a);
	} else if (lt(s, a, c)) {
		swp(s, result, a);
	} else if (lt(s, b, c)) {
		swp(s, result, c);
	} else {
		swp(s, result, b);
	}
}

static size_t unguarded_partition(struct ssort *s, size_t first, size_t last, size_t pivot)
{
	for (;;) {
		while (lt(s, first, pivot))
			first++;
		last--;
		while (lt(s, pivot, last))
			last--;
		if (!(first < last))
			return first;
		swp(s, first, last);
		first++;
	}
}

static void push_heap(struct ssort *s, size_t first, size_t hole, size_t top, size_t value)
{
	size_t parent = hole > 0 ? (hole - 1) / 2 : 0;

	while (hole > top && s->key[s->a[first + parent]] < s->key[value]) {
		s->a[first + hole] = s->a[first + parent];
		hole = parent;
		parent = hole > 0 ? (hole - 1) / 2 : 0;
	}
	s->a[first + hole] = value;
}

static void adjust_heap(struct ssort *s, size_t first, size_t hole, size_t len, size_t value)
{
	size_t top = hole, child = hole;

	while (len >= 1 && child < (len - 1) / 2) {
		child = 2 * (child + 1);
		if (lt(s, first + child, first + child - 1))
			child--;
		s->a[first + hole] = s->a[first + child];
		hole = child;
	}
	if ((len & 1) == 0 && len >= 2 && child == (len - 2) / 2) {
		child = 2 * (child + 1);
		s->a[first + hole] = s->a[first + child - 1];
		hole = child - 1;
	}
	push_heap(s, first, hole, top, value);
}

static void heap_sort(struct ssort *s, size_t first, size_t last)
{
	size_t len = last - first, parent;

	if (len >= 2) {
		parent = (len - 2) / 2;
		for (;;) {
			adjust_heap(s, first, parent, len, s->a[first + parent]);
			if (parent == 0)
				break;
			parent--;
		}
	}
	while (last - first > 1) {
		size_t v;
		last--;
		v = s->a[last];
		s->a[last] = s->a[first];
		adjust_heap(s, first, 0, last - first, v);
	}
}

static void introsort_loop(struct ssort *s, size_t first, size_t last, long depth)
{
	while (last - first > 16) {
		size_t mid, cut;
		if (depth == 0) {
			heap_sort(s, first, last);
			return;
		}
		depth--;
		mid = first + (last - first) / 2;
		move_median_to_first(s, first, first + 1, mid, last - 1);
		cut = unguarded_partition(s, first + 1, last, first);
		introsort_loop(s, cut, last, depth);
		last = cut;
	}
}

static void unguarded_linear_insert(struct ssort *s, size_t last)
{
	size_t val = s->a[last], next = last - 1;

	while (s->key[val] < s->key[s->a[next]]) {
		s->a[last] = s->a[next];
		last = next;
		next--;
	}
	s->a[last] = val;
}

static void insertion_sort(struct ssort *s, size_t first, size_t last)
{
	size_t i;

	if (first == last)
		return;
	for (i = first + 1; i != last; i++) {
		if (lt(s, i, first)) {
			size_t val = s->a[i], k;
			for (k = i; k > first; k--)
				s->a[k] = s->a[k - 1];
			s->a[first] = val;
		} else {
			unguarded_linear_insert(s, i);
		}
	}
}

size_t match__closest(const int *px, const int *py, size_t n, int ox, int oy)
{
	struct ssort s;
	double *key;
	size_t i, best = 0;
	long lg = 0;

	if (n <= 1)
		return 0;
	key = malloc(n * sizeof(*key));
	s.a = malloc(n * sizeof(*s.a));
	if (!key || !s.a) {
		/* Out of memory: fall back to the first closest in scan order. */
		double bd = INFINITY;
		for (i = 0; i < n; i++) {
			double dx = (double)ox - px[i], dy = (double)oy - py[i];
			double d = sqrt(dx * dx + dy * dy);
			if (d < bd) {
				bd = d;
				best = i;
			}
		}
		free(key);
		free(s.a);
		return best;
	}
	for (i = 0; i < n; i++) {
		/* cv::norm(Point) = sqrt((double)x*x + (double)y*y) */
		double dx = (double)(ox - px[i]), dy = (double)(oy - py[i]);
		key[i] = sqrt(dx * dx + dy * dy);
		s.a[i] = i;
	}
	s.key = key;
	for (i = n; i > 1; i >>= 1)
		lg++;
	introsort_loop(&s, 0, n, lg * 2);
	if (n > 16) {
		insertion_sort(&s, 0, 16);
		for (i = 16; i < n; i++)
			unguarded_linear_insert(&s, i);
	} else {
		insertion_sort(&s, 0, n);
	}
	best = s.a[0];
	free(key);
	free(s.a);
	return best;
}
