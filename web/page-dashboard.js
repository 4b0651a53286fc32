// SPDX-License-Identifier: MIT
// page-dashboard.js - / : every job group's newest builds with the counts
// of their latest jobs (GET /dashboard_build_results, openQA's), each
// build linking to its overview, each group to its page.
import { h, replace } from './dom.js';
import { get } from './api.js';
import { buildsTable } from './lists.js';

export async function render(main, match, query) {
	const limit = query.get('limit_builds') || '3';
	const days = query.get('time_limit_days') || '14';
	const { results } = await get('/dashboard_build_results', { limit_builds: limit, time_limit_days: days });
	const groups = results.map(r => h('section', { class: 'dash-group', dataset: { group: r.group.id } },
		h('h2', {}, h('a', { href: `/group_overview/${r.group.id}` }, r.group.name)),
		buildsTable(r, r.group.id)));
	replace(main, h('div', { class: 'lp lp-dashboard' },
		h('div', { class: 'page-head' }, h('h1', {}, 'Build dashboard'),
			h('span', { class: 'muted' }, `newest ${limit} build${limit === '1' ? '' : 's'} of each group, last ${days} days`),
			h('a', { class: 'head-link', href: '/tests' }, 'All tests')),
		groups.length ? groups : h('p', { class: 'muted empty' }, `No builds of a job group in the last ${days} days.`)));
}
