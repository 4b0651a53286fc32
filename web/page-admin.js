// SPDX-License-Identifier: MIT
// page-admin.js - /admin/<name>: picks the admin page by name (the
// router's match[1]) and lets its module render. The pages read the same
// API as programs; writes appear only for a signed-in administrator.
import { h, replace } from './dom.js';
import { adminNav } from './admin-common.js';

// name → [module, title]
const PAGES = {
	machines: ['./admin-tables.js', 'Machines'],
	products: ['./admin-tables.js', 'Products'],
	test_suites: ['./admin-tables.js', 'Test suites'],
	workers: ['./admin-workers.js', 'Workers'],
	assets: ['./admin-assets.js', 'Assets'],
	needles: ['./admin-needles.js', 'Needles'],
	groups: ['./admin-groups.js', 'Job groups'],
};

export async function render(main, match, query) {
	const name = match[1];
	const page = Object.hasOwn(PAGES, name) ? PAGES[name] : null;
	if (!page) {
		replace(main, adminNav(null), h('p', { class: 'error' }, `No admin page named ${name}.`));
		return;
	}
	document.title = `${page[1]} - vigil`;
	const mod = await import(page[0]);
	await mod.render(main, name, query);
}
