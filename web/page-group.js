// SPDX-License-Identifier: MIT
// page-group.js - /group_overview/<id>: a job group's description, its
// newest builds with counts (GET /api/v1/job_groups/<id>/build_results)
// and its comments. Descriptions and comments are shown as text.
import { h, replace, ago } from './dom.js';
import { get } from './api.js';
import { buildsTable, pageUrl } from './lists.js';

const LIMITS = ['10', '20', '50', '100', '400'];

function comment(c) {
	return h('article', { class: 'comment' },
		h('div', { class: 'comment-head' }, h('b', {}, c.userName || 'unknown'), ' ',
			h('span', { class: 'muted' }, ago(c.created))),
		h('div', { class: 'comment-text' }, c.text));
}

export async function render(main, match, query) {
	const id = match[1];
	const limit = LIMITS.includes(query.get('limit_builds')) ? query.get('limit_builds') : '10';
	const [groups, builds, comments] = await Promise.all([
		get(`/api/v1/job_groups/${id}`),
		get(`/api/v1/job_groups/${id}/build_results`, { limit_builds: limit }),
		get(`/api/v1/groups/${id}/comments`).catch(() => []),
	]);
	const g = groups[0];
	document.title = `${g.name} - vigil`;
	replace(main, h('div', { class: 'lp lp-group' },
		h('div', { class: 'page-head' }, h('h1', {}, g.name),
			h('a', { class: 'head-link', href: `/tests?groupid=${encodeURIComponent(id)}` }, 'Jobs of this group'),
			h('a', { class: 'head-link', href: `/admin/job_templates/${encodeURIComponent(id)}` }, 'Job templates')),
		g.description ? h('div', { class: 'group-desc' }, g.description) : null,
		h('div', { class: 'section-head' }, h('h2', {}, 'Builds'),
			h('span', { class: 'limit-links' }, 'show ', LIMITS.map(n => n === limit
				? h('b', {}, n) : h('a', { href: pageUrl(query, { limit_builds: n === '10' ? null : n }) }, n)))),
		buildsTable(builds, g.id),
		h('h2', {}, `Comments (${comments.length})`),
		comments.length ? h('div', { class: 'comments' }, comments.map(comment))
			: h('p', { class: 'muted' }, 'No comments.')));
}
