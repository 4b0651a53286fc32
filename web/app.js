// SPDX-License-Identifier: MIT
// app.js - the page shell's router: every page URL is served the same
// index.html; this picks the page module from location.pathname (openQA's
// URLs) and lets it render into <main>. Pages export render(main, match, query).
import { h, replace } from './dom.js';
import { renderUser } from './session.js';

// [pattern, module, title]: the first whose pattern matches the path wins.
const PAGES = [
	[/^\/$/, './page-dashboard.js', 'Dashboard'],
	[/^\/tests\/?$/, './page-tests.js', 'Tests'],
	[/^\/tests\/overview\/?$/, './page-overview.js', 'Test overview'],
	[/^\/review\/?$/, './page-review.js', 'Review'],
	[/^\/tests\/latest\/?$/, './page-job.js', 'Job'],
	[/^\/tests\/(\d+)\/?$/, './page-job.js', 'Job'],
	[/^\/tests\/(\d+)\/live\/?$/, './page-live.js', 'Live view'],
	[/^\/tests\/(\d+)\/modules\/([^/]+)\/steps\/(\d+)\/edit\/?$/, './page-needle-edit.js', 'Needle editor'],
	[/^\/group_overview\/(\d+)\/?$/, './page-group.js', 'Job group'],
	[/^\/admin\/job_templates\/(\d+)\/?$/, './page-templates.js', 'Job templates'],
	[/^\/admin\/auditlog\/?$/, './page-auditlog.js', 'Audit log'],
	[/^\/admin\/([a-z_]+)\/?$/, './page-admin.js', 'Admin'],
	[/^\/login\/?$/, './page-login.js', 'Sign in'],
	[/^\/user\/api_keys\/?$/, './page-apikeys.js', 'API keys'],
];

export async function route() {
	const main = document.getElementById('main');
	const path = location.pathname;
	const query = new URLSearchParams(location.search);
	for (const [re, mod, title] of PAGES) {
		const m = path.match(re);
		if (!m) continue;
		document.title = `${title} - vigil`;
		try {
			const page = await import(mod);
			await page.render(main, m, query);
		} catch (e) {
			replace(main, h('p', { class: 'error' }, `This page could not be shown: ${e.message}`));
		}
		rendered();
		return;
	}
	replace(main, h('p', { class: 'error' }, `No page at ${path}`));
	rendered();
}

// Marks the page as rendered by its script (<html data-rendered>): the
// server's first view (src/server/pages/web_ssr.h) shows the same data before,
// without the controls; tests wait for this mark before they act.
function rendered() {
	document.documentElement.dataset.rendered = '';
}

renderUser(document.getElementById('user'));
route();
