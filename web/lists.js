// SPDX-License-Identifier: MIT
// lists.js - what the list pages share: the widths of the count bars the
// server wrote (the dashboard, a group's page and the overview are built
// by the server alone), page URLs that keep their query, and job labels.
import { resultClass } from './dom.js';

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
