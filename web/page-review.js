// SPDX-License-Identifier: MIT
// page-review.js - /review: every finished job that failed and that no
// comment with a bug reference or label has reviewed, across groups, newest
// first (GET /api/v1/review, a page at a time by keyset). Keys: j / ArrowDown
// and k / ArrowUp move, Enter opens the job, o its first failed step.
import { h, replace, append, ago } from './dom.js';
import { get } from './api.js';
import { jobOutcome } from './lists.js';

const PAGE = 50;

function jobUrl(j, step) {
	const m = (j.failed_modules || [])[0];
	return `/tests/${j.id}` + (step && m ? `#step/${encodeURIComponent(m)}/1` : '');
}

function row(j) {
	const [text, cls] = jobOutcome({ ...j, state: 'done' });
	return h('tr', { class: 'review-row', dataset: { id: j.id }, tabindex: '-1' },
		h('td', {}, h('a', { href: jobUrl(j), class: 'review-job' }, j.name || `#${j.id}`)),
		h('td', {}, j.build),
		h('td', {}, j.group || h('span', { class: 'muted' }, 'none')),
		h('td', {}, h('span', { class: `cell ${cls}` }, text),
			j.restarts ? h('span', { class: 'muted' }, ` after ${j.restarts} restart${j.restarts > 1 ? 's' : ''}`) : null),
		h('td', {}, (j.failed_modules || []).map((m, i) => [i ? ', ' : '',
			h('a', { href: `/tests/${j.id}#step/${encodeURIComponent(m)}/1` }, m)])),
		h('td', { class: 'muted' }, j.t_finished ? ago(j.t_finished) : ''));
}

export async function render(main) {
	const body = h('tbody', {});
	const more = h('button', { type: 'button', class: 'review-more', hidden: true }, 'More');
	const count = h('span', { class: 'muted' });
	const wrap = h('div', { class: 'scroll' });
	const jobs = [];
	let next = null, current = -1;

	function select(i) {
		const rows = body.querySelectorAll('tr.review-row');
		if (!rows.length) return;
		current = Math.max(0, Math.min(rows.length - 1, i));
		rows.forEach((r, k) => {
			r.classList.toggle('review-current', k === current);
			r.setAttribute('aria-selected', k === current ? 'true' : 'false');
		});
		rows[current].focus({ preventScroll: true });
		rows[current].scrollIntoView({ block: 'nearest' });
	}

	async function load() {
		const page = await get('/api/v1/review', next ? { limit: PAGE, after: next } : { limit: PAGE });
		jobs.push(...page.jobs);
		append(body, page.jobs.map(row));
		next = page.next;
		more.hidden = !next;
		count.textContent = jobs.length
			? `${jobs.length}${next ? '+' : ''} job${jobs.length === 1 && !next ? '' : 's'} waiting for review.` : '';
		if (!jobs.length) replace(wrap, h('p', { class: 'muted review-empty' }, 'Nothing to review: every failed job has a bug reference or a label.'));
		if (current < 0 && jobs.length) select(0);
	}

	more.addEventListener('click', () => load().catch(e => { count.textContent = e.message; }));
	document.addEventListener('keydown', ev => {
		if (ev.target.closest && ev.target.closest('input, textarea, select, [contenteditable]')) return;
		if (ev.ctrlKey || ev.metaKey || ev.altKey || !jobs.length) return;
		if (ev.key === 'j' || ev.key === 'ArrowDown') select(current + 1);
		else if (ev.key === 'k' || ev.key === 'ArrowUp') select(current - 1);
		else if (ev.key === 'Enter' && current >= 0) location.assign(jobUrl(jobs[current]));
		else if (ev.key === 'o' && current >= 0) location.assign(jobUrl(jobs[current], true));
		else return;
		ev.preventDefault();
	});
	body.addEventListener('click', ev => {
		const tr = ev.target.closest('tr.review-row');
		if (tr) select([...body.querySelectorAll('tr.review-row')].indexOf(tr));
	});

	replace(main,
		h('h1', {}, 'Review queue'),
		h('p', { class: 'muted' }, 'Failed jobs that no comment with a bug reference or a label has reviewed yet, newest first. ',
			'A bug reference carried over from an earlier run of the same scenario takes a job off the queue. ',
			h('kbd', {}, 'j'), ' / ', h('kbd', {}, 'k'), ' move, ', h('kbd', {}, 'Enter'), ' opens the job, ',
			h('kbd', {}, 'o'), ' its failed step.'),
		count,
		wrap);
	append(wrap, h('table', { class: 'review-queue' },
		h('thead', {}, h('tr', {}, h('th', {}, 'Job'), h('th', {}, 'Build'), h('th', {}, 'Group'), h('th', {}, 'Result'),
			h('th', {}, 'Failed modules'), h('th', {}, 'Finished'))),
		body));
	main.append(more);
	await load();
}
