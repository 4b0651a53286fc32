// SPDX-License-Identifier: MIT
// page-overview.js - /tests/overview?distri=…&version=…&build=…&groupid=…:
// the latest job of each scenario of a build as a test × machine matrix
// (GET /api/v1/jobs/overview), one table per distri/version/flavor, each
// cell the job's result linking to /tests/<id>; the counts on top.
import { h, replace } from './dom.js';
import { get } from './api.js';
import { CATEGORIES, countBar, countFigures, jobOutcome } from './lists.js';

const PARAMS = ['distri', 'version', 'flavor', 'arch', 'machine', 'test', 'build', 'groupid', 'todo'];

// The category of a job in the counts.
function category(j) {
	if (j.state === 'done') {
		if (j.result === 'passed') return 'passed';
		if (j.result === 'softfailed') return 'softfailed';
		if (j.result === 'failed' && j.needs_review) return 'needs_review';
		if (['failed', 'incomplete', 'timeout_exceeded'].includes(j.result)) return 'failed';
		return 'skipped';
	}
	if (j.state === 'cancelled') return 'skipped';
	return j.state === 'scheduled' ? 'scheduled' : 'running';
}

function matrix(jobs) {
	const machines = [...new Set(jobs.map(j => j.machine))].sort();
	const tests = [...new Set(jobs.map(j => j.test))].sort();
	const cell = new Map(jobs.map(j => [j.test + '\u001f' + j.machine, j]));
	const archOf = new Map(jobs.map(j => [j.machine, j.arch]));
	return h('div', { class: 'scroll' }, h('table', { class: 'matrix' },
		h('thead', {}, h('tr', {}, h('th', { class: 'm-test' }, 'Test'),
			machines.map(m => h('th', { class: 'm-machine', scope: 'col' }, m || '(none)',
				archOf.get(m) ? h('span', { class: 'muted m-arch' }, archOf.get(m)) : null)))),
		h('tbody', {}, tests.map(t => h('tr', { dataset: { test: t } },
			h('th', { class: 'm-test', scope: 'row' }, t),
			machines.map(m => {
				const j = cell.get(t + '\u001f' + m);
				if (!j) return h('td', { class: 'm-empty' }, '');
				const [text, cls] = jobOutcome(j);
				return h('td', { class: 'm-cell' }, h('a', { class: `cell ${cls}`, href: `/tests/${j.id}`, title: j.name,
					dataset: { id: j.id } }, text));
			}))))));
}

export async function render(main, match, query) {
	const params = {};
	for (const k of PARAMS) if (query.get(k)) params[k] = query.get(k);
	const [jobs, groups] = await Promise.all([
		get('/api/v1/jobs/overview', params),
		params.groupid ? get(`/api/v1/job_groups/${encodeURIComponent(params.groupid)}`).catch(() => []) : [],
	]);
	const counts = { total: jobs.length };
	for (const [k] of CATEGORIES) counts[k] = 0;
	for (const j of jobs) counts[category(j)]++;
	const first = jobs[0] || {};
	const build = params.build || first.build;
	const title = [params.distri || first.distri, params.version || first.version, build ? `Build ${build}` : null]
		.filter(Boolean).join(' ');
	// One matrix per distri, version and flavor, as openQA groups them.
	const parts = new Map();
	for (const j of jobs) {
		const key = [j.distri, j.version, j.flavor].join(' ');
		if (!parts.has(key)) parts.set(key, []);
		parts.get(key).push(j);
	}
	replace(main, h('div', { class: 'lp lp-overview' },
		h('div', { class: 'page-head' }, h('h1', {}, 'Test result overview'),
			groups[0] ? h('a', { class: 'head-link', href: `/group_overview/${groups[0].id}` }, groups[0].name) : null),
		h('p', { class: 'ov-summary' }, h('b', {}, title || 'No build'), ' · ',
			`${jobs.length} job${jobs.length === 1 ? '' : 's'}`),
		jobs.length ? h('div', { class: 'ov-counts' }, countBar(counts), countFigures(counts)) : null,
		jobs.length ? [...parts.entries()].sort().map(([key, js]) => h('section', { class: 'ov-part' },
			parts.size > 1 ? h('h2', {}, key) : h('h2', { class: 'ov-flavor' }, key), matrix(js)))
			: h('p', { class: 'muted empty' }, 'No jobs match.')));
}
