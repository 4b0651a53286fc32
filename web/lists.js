// SPDX-License-Identifier: MIT
// lists.js - what the list pages share: a build's counts as a bar and
// figures, the table of builds (dashboard, group page), page URLs that keep
// their query, and job labels. Everything reaches the DOM as text via h().
import { h, ago, resultClass } from './dom.js';

// The categories a build's counts are shown in, in order: [key, label, class].
// "failed" on screen leaves out the near misses, shown as "needs review".
export const CATEGORIES = [
	['passed', 'passed', 'r-passed'],
	['softfailed', 'softfailed', 'r-softfailed'],
	['failed', 'failed', 'r-failed'],
	['needs_review', 'needs review', 'r-needs_review'],
	['running', 'running', 'st-running'],
	['scheduled', 'scheduled', 'st-scheduled'],
	['skipped', 'skipped', 'r-skipped'],
];

// A build result (openQA's build_results entry) as disjoint counts.
export function buildCounts(b) {
	const c = {};
	for (const [k] of CATEGORIES) c[k] = Number(b[k]) || 0;
	c.failed = Math.max(0, c.failed - c.needs_review);
	// openQA's "unfinished" without vigil's split counts as running.
	if (b.running === undefined && b.unfinished) c.running = Number(b.unfinished) || 0;
	c.total = Number(b.total) || 0;
	return c;
}

// A stacked bar of counts c (proportional widths set through CSSOM).
export function countBar(c) {
	const bar = h('div', { class: 'cbar', role: 'img', 'aria-label': countText(c) });
	for (const [k, , cls] of CATEGORIES) {
		if (!c[k] || !c.total) continue;
		const seg = h('span', { class: `cbar-${cls}` });
		seg.style.width = (100 * c[k] / c.total).toFixed(2) + '%';
		bar.append(seg);
	}
	return bar;
}

export function countText(c) {
	return CATEGORIES.filter(([k]) => c[k]).map(([k, label]) => `${c[k]} ${label}`).join(', ') || 'no jobs';
}

// The non-zero counts as figures, each with its key in data-count.
export function countFigures(c) {
	const shown = CATEGORIES.filter(([k]) => c[k]);
	return h('span', { class: 'counts' }, shown.length
		? shown.map(([k, label, cls]) => h('span', { class: `count ${cls}`, dataset: { count: k }, title: label },
			h('b', {}, String(c[k])), ' ', label))
		: h('span', { class: 'muted' }, 'no jobs'));
}

// /tests/overview of a build of a group (every distri it has, as openQA links).
export function overviewUrl(b, groupId) {
	const q = new URLSearchParams();
	for (const d of Object.keys(b.distris || {}).sort()) q.append('distri', d);
	q.set('version', b.version);
	q.set('build', b.build);
	if (groupId) q.set('groupid', String(groupId));
	return '/tests/overview?' + q.toString();
}

// The table of a group's builds: build (link to its overview), when, bar, counts.
export function buildsTable(results, groupId) {
	const builds = results.build_results || [];
	if (!builds.length) return h('p', { class: 'muted' }, 'No builds.');
	return h('div', { class: 'scroll' }, h('table', { class: 'builds' },
		h('tbody', {}, builds.map(b => {
			const c = buildCounts(b);
			return h('tr', { dataset: { build: b.build, version: b.version } },
				h('td', { class: 'b-name', title: `version ${b.version}` },
					h('a', { href: overviewUrl(b, groupId) }, `Build ${b.build}`),
					b.version_count > 1 ? h('span', { class: 'muted b-ver' }, ` · ${b.version}`) : null),
				h('td', { class: 'b-when muted' }, b.date ? ago(b.date) : ''),
				h('td', { class: 'b-bar' }, countBar(c)),
				h('td', { class: 'b-counts' }, countFigures(c)));
		}))));
}

// The current page's URL with params changed (null/'' removes one).
export function pageUrl(query, changes) {
	const q = new URLSearchParams(query);
	for (const [k, v] of Object.entries(changes)) {
		if (v === null || v === undefined || v === '') q.delete(k);
		else q.set(k, String(v));
	}
	const s = q.toString();
	return location.pathname + (s ? '?' + s : '');
}

// A job's result as shown: its result when done, else its state; the class to colour it.
export function jobOutcome(j) {
	if (j.state === 'done' || j.state === 'cancelled') {
		if (j.result === 'failed' && j.needs_review) return ['needs review', 'r-needs_review'];
		return [j.result, resultClass(j.result, 'done')];
	}
	return [j.state, resultClass(j.result, j.state)];
}

// DISTRI-VERSION-FLAVOR-ARCH of a job's settings.
export function medium(s) {
	return [s.DISTRI, s.VERSION, s.FLAVOR, s.ARCH].filter(Boolean).join('-');
}
