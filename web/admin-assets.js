// SPDX-License-Identifier: MIT
// admin-assets.js - /admin/assets: the files under the server's factory/
// (type, name, size, the jobs whose settings name them). The server
// builds the table (src/server/pages/web_ssr_admin.c, from the domain's
// assets_list_json); this adds sorting and the filter, and for a
// signed-in admin a delete button per asset (DELETE /api/v1/assets/<id>,
// which removes the file too), after which the server's page is shown anew.
import { h, replace, builtByServer, reloadMain } from './dom.js';
import { send } from './api.js';
import { getSession, isAdmin, liveTable, errorLine } from './admin-common.js';

export async function render(main) {
	const table = builtByServer(main, 'table.adm-assets');
	if (!table) return;
	liveTable(table, main.querySelector('.adm-filter'));
	const session = await getSession();
	if (!isAdmin(session) || table.querySelector('th.adm-actions')) return;
	async function reload(msg) {
		await reloadMain(main);
		await render(main);
		const m = main.querySelector('.adm-message');
		if (msg && m) m.textContent = msg;
	}
	function actions(tr) {
		const box = h('span', { class: 'adm-buttons' });
		const id = tr.dataset.id;
		const what = `${tr.cells[0].textContent}/${tr.cells[1].textContent}`;
		return replace(box, h('button', { type: 'button', class: 'adm-del-btn danger', onclick: () => {
			replace(box, h('span', {}, `Delete ${tr.cells[1].textContent} and its file?`),
				h('button', { type: 'button', class: 'adm-confirm danger', onclick: async () => {
					try {
						await send('DELETE', `/api/v1/assets/${id}`);
						await reload(`Deleted ${what}.`);
					} catch (e) {
						replace(box, errorLine(e));
					}
				} }, 'Delete'),
				h('button', { type: 'button', onclick: () => reload() }, 'Keep'));
		} }, 'Delete'));
	}
	table.tHead.rows[0].append(h('th', { scope: 'col', class: 'adm-actions' }, 'Actions'));
	for (const tr of table.tBodies[0].rows)
		if (tr.dataset.id !== undefined) tr.append(h('td', { class: 'adm-actions' }, actions(tr)));
}
