// SPDX-License-Identifier: MIT
// admin-assets.js - /admin/assets: the files under the server's factory/
// (type, name, size, the jobs whose settings name them) from
// GET /api/v1/assets; a signed-in admin deletes one (DELETE
// /api/v1/assets/<id>, which removes the file too).
import { h, replace } from './dom.js';
import { get, send } from './api.js';
import { adminNav, getSession, isAdmin, humanSize, when, sortableTable, filterBox, errorLine } from './admin-common.js';

// "2026-12-04 10:34:24" (openQA's raw row time) as an ISO time.
function isoTime(t) {
	return t ? String(t).replace(' ', 'T') : null;
}

function jobsCell(a) {
	const n = a.jobs || 0;
	if (!n) return h('span', { class: 'muted' }, 'none');
	const links = (a.last_jobs || []).map(id => h('a', { href: `/tests/${id}` }, `#${id}`));
	return h('span', { class: 'adm-jobs' }, `${n}: `, links.flatMap((l, i) => (i ? [' ', l] : [l])),
		n > links.length ? ' …' : '');
}

export async function render(main) {
	const [{ assets }, session] = await Promise.all([get('/api/v1/assets'), getSession()]);
	const admin = isAdmin(session);
	const total = assets.reduce((s, a) => s + (Number(a.size) || 0), 0);
	async function reload(msg) {
		await render(main);
		if (msg) main.querySelector('.adm-message').textContent = msg;
	}
	const columns = [
		{ label: 'Type', sort: a => a.type, cell: a => a.type },
		{ label: 'Name', sort: a => a.name, cell: a => h('a', { href: `/assets/${encodeURIComponent(a.type)}/${encodeURIComponent(a.name)}` }, a.name) },
		{ label: 'Size', class: 'num', sort: a => (a.size === null ? -1 : Number(a.size)),
			cell: a => (a.size === null || a.size === undefined ? h('span', { class: 'muted' }, 'unknown')
				: h('span', { title: `${a.size} bytes` }, humanSize(a.size))) },
		{ label: 'Jobs using it', sort: a => a.jobs || 0, cell: jobsCell },
		{ label: 'Last use', sort: a => a.last_use_job_id || 0,
			cell: a => (a.last_use_job_id ? h('a', { href: `/tests/${a.last_use_job_id}` }, `#${a.last_use_job_id}`) : '') },
		{ label: 'Registered', sort: a => a.t_created || '', cell: a => when(isoTime(a.t_created)) },
	];
	if (admin) {
		columns.push({ label: 'Actions', class: 'adm-actions', cell: a => {
			const box = h('span', { class: 'adm-buttons' });
			return replace(box, h('button', { type: 'button', class: 'adm-del-btn danger', onclick: () => {
				replace(box, h('span', {}, `Delete ${a.name} and its file?`),
					h('button', { type: 'button', class: 'adm-confirm danger', onclick: async () => {
						try {
							await send('DELETE', `/api/v1/assets/${a.id}`);
							await reload(`Deleted ${a.type}/${a.name}.`);
						} catch (e) {
							replace(box, errorLine(e));
						}
					} }, 'Delete'),
					h('button', { type: 'button', onclick: () => reload() }, 'Keep'));
			} }, 'Delete'));
		} });
	}
	const table = sortableTable(columns, assets, { class: 'adm-assets', sortBy: 1,
		rowAttrs: a => ({ dataset: { id: a.id } }), empty: 'No assets under factory/ yet.' });
	replace(main, adminNav('/admin/assets'),
		h('h1', {}, `Assets (${assets.length})`),
		h('div', { class: 'adm-tools' },
			filterBox('Filter assets', assets, a => `${a.type} ${a.name}`, list => table.refill(list)),
			h('span', { class: 'adm-summary' }, `${humanSize(total)} in all`)),
		h('p', { class: 'adm-message', role: 'status' }),
		table);
}
