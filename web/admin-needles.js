// SPDX-License-Identifier: MIT
// admin-needles.js - /admin/needles: every needle the finished jobs used,
// with the job (module, step) that last matched it and the one that last
// had it among its candidates. The server builds the page
// (src/server/pages/web_ssr_admin.c, from the domain's needles_list), its
// order and search a form whose URL keeps them, a page of rows at a time
// with a "More" link to the next (?after=); this shows that next page's
// rows under these instead of leaving the page.
import { builtByServer, serverMain } from './dom.js';

export async function render(main) {
	const table = builtByServer(main, 'table.adm-needles');
	if (!table) return;
	const status = main.querySelector('.adm-message');
	async function more(ev) {
		const link = ev.currentTarget;
		ev.preventDefault();
		try {
			const next = await serverMain(link.href);
			const body = next.querySelector('table.adm-needles tbody');
			table.tBodies[0].append(...(body ? body.rows : []));
			const after = next.querySelector('a.adm-more');
			if (after) {
				after.addEventListener('click', more);
				link.replaceWith(after);
			} else {
				link.remove();
			}
			const shown = table.tBodies[0].rows.length;
			status.textContent = `${shown} needle${shown === 1 ? '' : 's'} shown${after ? ', more below' : ''}.`;
		} catch (e) {
			status.textContent = e.message;
		}
	}
	const link = main.querySelector('a.adm-more');
	if (link) link.addEventListener('click', more);
}
