// SPDX-License-Identifier: MIT
// page-tests.js - /tests: running, scheduled and finished jobs, filtered,
// sorted and paged by the server, which builds the page
// (src/server/pages/web_ssr_tests.c, docs/web.md "Pages built once"). The
// whole state lives in the URL query, so a view can be shared: the filter
// form is a GET form of it, the older/newer links carry the page's cursor.
// This only leaves empty fields and the default page size out of the
// form's query, and opens the form where there is room.
import { builtByServer } from './dom.js';

const DEFAULT_LIMIT = '50';

export async function render(main) {
	if (!builtByServer(main, '.lp-tests')) return;
	const form = main.querySelector('form.filters');
	const box = main.querySelector('details.filter-box');
	// Open where there is room or something is filtered; a phone opens it on demand.
	if (box && !box.open && !matchMedia('(max-width: 600px)').matches) box.open = true;
	if (!form || form.dataset.tidy !== undefined) return;
	form.dataset.tidy = '';
	form.addEventListener('submit', ev => {
		ev.preventDefault();
		const q = new URLSearchParams();
		for (const [k, v] of new FormData(form)) {
			const t = String(v).trim();
			if (t && !(k === 'limit' && t === DEFAULT_LIMIT)) q.set(k, t);
		}
		location.assign('/tests' + (q.toString() ? '?' + q.toString() : ''));
	});
}
