// SPDX-License-Identifier: MIT
// admin-groups.js - /admin/groups: the job groups (GET /api/v1/job_groups)
// with how many job templates each has (GET /api/v1/job_templates), each
// linked to its overview and to its job templates page.
import { h, replace } from './dom.js';
import { get } from './api.js';
import { adminNav, sortableTable } from './admin-common.js';

export async function render(main) {
	const [groups, templates] = await Promise.all([get('/api/v1/job_groups'), get('/api/v1/job_templates')]);
	const count = {};
	for (const t of templates.JobTemplates || []) count[t.group_id] = (count[t.group_id] || 0) + 1;
	const list = Array.isArray(groups) ? groups : [];
	const columns = [
		{ label: 'ID', class: 'num', sort: g => g.id, cell: g => String(g.id) },
		{ label: 'Name', sort: g => g.name, cell: g => h('a', { href: `/group_overview/${g.id}` }, g.name) },
		{ label: 'Job templates', sort: g => count[g.id] || 0, cell: g =>
			h('a', { href: `/admin/job_templates/${g.id}`, class: 'adm-templates-link' },
				`${count[g.id] || 0} template${count[g.id] === 1 ? '' : 's'}${g.template ? ' (YAML)' : ''}`) },
		{ label: 'Priority', class: 'num', sort: g => g.default_priority, cell: g => String(g.default_priority ?? '') },
		{ label: 'Parent', sort: g => g.parent_id || 0, cell: g => (g.parent_id ? String(g.parent_id) : '') },
		{ label: 'Description', class: 'adm-desc', cell: g => g.description || '' },
	];
	replace(main, adminNav('/admin/groups'), h('h1', {}, `Job groups (${list.length})`),
		sortableTable(columns, list, { class: 'adm-groups', sortBy: 1, rowAttrs: g => ({ dataset: { id: g.id } }),
			empty: 'No job groups yet.' }));
}
