// SPDX-License-Identifier: MIT
// admin-tables.js - /admin/machines, /admin/products, /admin/test_suites:
// the rows of openQA's admin tables with their settings, from the same API
// programs use (GET /api/v1/<table>); a signed-in admin adds (POST), edits
// (PUT /<id>) and deletes (DELETE /<id>) rows there. Settings are edited
// as KEY=value lines, as openQA's table editor shows them.
import { h, replace } from './dom.js';
import { get, send } from './api.js';
import { adminNav, getSession, isAdmin, sortableTable, filterBox, errorLine } from './admin-common.js';

// Per table: its API path, the JSON key of its rows, its columns (the
// form fields of the API) and which of them are required.
export const TABLES = {
	machines: {
		title: 'Machines', one: 'machine', api: '/api/v1/machines', key: 'Machines',
		cols: [['name', 'Name'], ['backend', 'Backend'], ['description', 'Description']],
		required: ['name', 'backend'],
	},
	products: {
		title: 'Products', one: 'product', api: '/api/v1/products', key: 'Products',
		cols: [['distri', 'Distri'], ['version', 'Version'], ['flavor', 'Flavor'], ['arch', 'Arch'],
			['description', 'Description']],
		required: ['distri', 'version', 'flavor', 'arch'],
	},
	test_suites: {
		title: 'Test suites', one: 'test suite', api: '/api/v1/test_suites', key: 'TestSuites',
		cols: [['name', 'Name'], ['description', 'Description']],
		required: ['name'],
	},
};

// Settings as the API lists them ([{key, value}]) or as an object, sorted by key.
function settingsList(s) {
	const list = Array.isArray(s) ? s.map(x => [x.key, x.value]) : Object.entries(s || {});
	return list.sort((a, b) => String(a[0]).localeCompare(String(b[0])));
}

function settingsCell(row) {
	const list = settingsList(row.settings);
	if (!list.length) return h('span', { class: 'muted' }, '—');
	return h('ul', { class: 'adm-settings' }, list.map(([k, v]) =>
		h('li', {}, h('span', { class: 'k' }, k), '=', h('span', { class: 'v' }, v))));
}

// "KEY=value" lines → {settings object} or throws naming the bad line.
export function parseSettings(text) {
	const out = {};
	String(text).split('\n').forEach((line, i) => {
		if (!line.trim()) return;
		const eq = line.indexOf('=');
		if (eq <= 0) throw new Error(`settings line ${i + 1}: expected KEY=value`);
		out[line.slice(0, eq).trim()] = line.slice(eq + 1);
	});
	return out;
}

// The form parameters of a row: its columns and settings[KEY]=value.
function formParams(t, fields, settings) {
	const p = {};
	for (const [col] of t.cols)
		if (fields[col] !== undefined && fields[col] !== '') p[col] = fields[col];
	for (const [k, v] of Object.entries(settings)) p[`settings[${k}]`] = v;
	return p;
}

// An editor for one row (row null: a new one): a form in a table row.
function editorRow(t, row, ncols, done) {
	const inputs = {};
	const status = h('span', { class: 'adm-status', role: 'status' });
	const settingsText = h('textarea', {
		class: 'adm-settings-edit', rows: Math.max(3, settingsList(row ? row.settings : []).length + 1),
		'aria-label': 'Settings, one KEY=value per line', placeholder: 'KEY=value', spellcheck: 'false',
	});
	settingsText.value = settingsList(row ? row.settings : []).map(([k, v]) => `${k}=${v}`).join('\n');
	const fields = t.cols.map(([col, label]) => {
		const input = h('input', { type: 'text', name: col, 'aria-label': label, placeholder: label,
			required: t.required.includes(col) });
		input.value = row && row[col] != null ? row[col] : '';
		inputs[col] = input;
		return input;
	});
	async function save(ev) {
		ev.preventDefault();
		status.textContent = 'Saving…';
		status.className = 'adm-status';
		try {
			const values = Object.fromEntries(Object.entries(inputs).map(([k, i]) => [k, i.value.trim()]));
			for (const col of t.required)
				if (!values[col]) throw new Error(`${col} is required`);
			const params = formParams(t, values, parseSettings(settingsText.value));
			if (row) await send('PUT', `${t.api}/${row.id}`, params);
			else await send('POST', t.api, params);
			await done(row ? `Saved ${t.one} ${row.id}.` : `Added ${t.one}.`);
		} catch (e) {
			status.textContent = e.message;
			status.className = 'adm-status error';
		}
	}
	const form = h('form', { class: 'adm-edit', onsubmit: save },
		h('div', { class: 'adm-edit-fields' }, fields),
		h('label', { class: 'adm-edit-settings' }, h('span', { class: 'muted' }, 'Settings (KEY=value per line)'),
			settingsText),
		h('div', { class: 'adm-edit-buttons' },
			h('button', { type: 'submit', class: 'adm-save' }, row ? 'Save' : `Add ${t.one}`),
			h('button', { type: 'button', onclick: () => done(null) }, 'Cancel'),
			status));
	return h('tr', { class: 'adm-editing', dataset: { id: row ? row.id : 'new' } },
		h('td', { colspan: ncols }, form));
}

export async function render(main, name) {
	const t = TABLES[name];
	const path = `/admin/${name}`;
	const [answer, session] = await Promise.all([get(t.api), getSession()]);
	const rows = answer[t.key] || [];
	const admin = isAdmin(session);
	const message = h('p', { class: 'adm-message', role: 'status' });

	// Re-read the rows after a write and show what happened.
	async function reload(msg) {
		await render(main, name);
		if (msg) {
			const m = main.querySelector('.adm-message');
			if (m) m.textContent = msg;
		}
	}

	const columns = [
		{ label: 'ID', class: 'num', sort: r => r.id, cell: r => String(r.id) },
		...t.cols.map(([col, label]) => ({
			label, class: col === 'description' ? 'adm-desc' : null,
			sort: r => r[col] ?? '', cell: r => r[col] ?? '',
		})),
		{ label: 'Settings', class: 'adm-settings-col', cell: settingsCell },
	];
	let tableEl = null;
	const ncols = columns.length + (admin ? 1 : 0);
	if (admin) {
		columns.push({ label: 'Actions', class: 'adm-actions', cell: r => {
			const box = h('span', { class: 'adm-buttons' });
			const edit = h('button', { type: 'button', class: 'adm-edit-btn', onclick: ev => {
				const tr = ev.target.closest('tr');
				tr.replaceWith(editorRow(t, r, ncols, reload));
			} }, 'Edit');
			const del = h('button', { type: 'button', class: 'adm-del-btn danger', onclick: () => {
				// Asked in place, so nothing modal stands in the way.
				replace(box, h('span', {}, `Delete ${t.one} ${r.id}?`),
					h('button', { type: 'button', class: 'adm-confirm danger', onclick: async () => {
						try {
							await send('DELETE', `${t.api}/${r.id}`);
							await reload(`Deleted ${t.one} ${r.id}.`);
						} catch (e) {
							replace(box, errorLine(e));
						}
					} }, 'Delete'),
					h('button', { type: 'button', onclick: () => reload() }, 'Keep'));
			} }, 'Delete');
			return replace(box, edit, del);
		} });
	}
	tableEl = sortableTable(columns, rows, {
		class: `adm-${name}`, empty: `No ${t.title.toLowerCase()} yet.`,
		rowAttrs: r => ({ dataset: { id: r.id } }),
	});
	const text = r => [r.id, ...t.cols.map(([c]) => r[c] ?? ''),
		...settingsList(r.settings).map(([k, v]) => `${k}=${v}`)].join(' ');
	const tools = h('div', { class: 'adm-tools' },
		filterBox(`Filter ${t.title.toLowerCase()}`, rows, text, list => tableEl.refill(list)),
		admin ? h('button', { type: 'button', class: 'adm-new', onclick: () => {
			const tbody = tableEl.querySelector('tbody');
			if (!tbody.querySelector('tr[data-id="new"]')) tbody.prepend(editorRow(t, null, ncols, reload));
		} }, `New ${t.one}`) : h('span', { class: 'muted adm-hint' }, 'Sign in as an administrator to edit.'));
	replace(main, adminNav(path), h('h1', {}, `${t.title} (${rows.length})`), tools, message, tableEl);
}
