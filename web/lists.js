// SPDX-License-Identifier: MIT
// lists.js - what the list pages share: the widths of the count bars the
// server wrote (the dashboard, a group's page and the overview are built
// by the server alone) and job labels.
import { resultClass } from './dom.js';

// The count bars the server wrote (src/server/web_ssr_lists.c): each
// segment's width from its data-share (percent), set through CSSOM (the
// CSP allows no inline style).
export function sizeBars(root) {
	for (const seg of root.querySelectorAll('.cbar span[data-share]'))
		seg.style.width = Number(seg.dataset.share).toFixed(2) + '%';
}

// A job's result as shown: its result when done, else its state; the class to colour it.
export function jobOutcome(j) {
	if (j.state === 'done' || j.state === 'cancelled') {
		if (j.result === 'failed' && j.needs_review) return ['needs review', 'r-needs_review'];
		return [j.result, resultClass(j.result, 'done')];
	}
	return [j.state, resultClass(j.result, j.state)];
}
