// SPDX-License-Identifier: MIT
// lists.js - what the list pages share: counts as a bar and figures, the
// widths of the bars the server wrote (the dashboard's and a group's table
// of builds are built by the server alone), page URLs that keep their
// query, and job labels. Everything reaches the DOM as text via h().
import { h, resultClass } from './dom.js';

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

// The count bars the server wrote (src/server/web_ssr_lists.c): each
// segment's width from its data-share (percent), set through CSSOM (the
// CSP allows no inline style).
export function sizeBars(root) {
	for (const seg of root.querySelectorAll('.cbar span[data-share]'))
		seg.style.width = Number(seg.dataset.share).toFixed(2) + '%';
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
