// SPDX-License-Identifier: MIT
// admin-tables.js - /admin/machines, /admin/products, /admin/test_suites:
// the server builds the table (src/server/pages/web_ssr_admin.c, from the
// domain's tables_list); this adds sorting and the filter, and for a
// signed-in admin the write controls: add (POST /api/v1/<table>), edit
// (PUT /<id>) and delete (DELETE /<id>), after which the server's page is
// shown anew. Settings are edited as KEY=value lines, as openQA's table
// editor shows them.
import { h, replace, builtByServer, reloadMain } from './dom.js';
import { send } from './api.js';
import { getSession, isAdmin, liveTable, errorLine } from './admin-common.js';

// Per table: its API path, what a row is called, its columns (the form
// fields of the API, in the order of the server's table) and which of
// them are required.
export const TABLES = {
	machines: {
		one: 'machine', api: '/api/v1/machines',
		cols: [['name', 'Name'], ['backend', 'Backend'], ['description', 'Description']],
		required: ['name', 'backend'],
	},
	products: {
		one: 'product', api: '/api/v1/products',
		cols: [['distri', 'Distri'], ['version', 'Version'], ['flavor', 'Flavor'], ['arch', 'Arch'],
			['description', 'Description']],
		required: ['distri', 'version', 'flavor', 'arch'],
	},
	test_suites: {
		one: 'test suite', api: '/api/v1/test_suites',
		cols: [['name', 'Name'], ['description', 'Description']],
		required: ['name'],
	},
};

// A row of the server's table as the editor takes it: {id, <col>: text,
// settings: [[key, value]]}.
function rowOf(t, tr) {
	const row = { id: tr.dataset.id };
	t.cols.forEach(([col], i) => { row[col] = tr.cells[i + 1].textContent; });
	row.settings = [...tr.querySelectorAll('.adm-settings li')].map(li =>
		[li.querySelector('.k').textContent, li.querySelector('.v').textContent]);
	return row;
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
		class: 'adm-settings-edit', rows: Math.max(3, (row ? row.settings.length : 0) + 1),
		'aria-label': 'Settings, one KEY=value per line', placeholder: 'KEY=value', spellcheck: 'false',
	});
	settingsText.value = (row ? row.settings : []).map(([k, v]) => `${k}=${v}`).join('\n');
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
	const table = builtByServer(main, `table.adm-${name}`);
	if (!table) return;
	liveTable(table, main.querySelector('.adm-filter'));
	const session = await getSession();
	if (!isAdmin(session) || table.querySelector('th.adm-actions')) return;

	// The server's page anew after a write, with what happened.
	async function reload(msg) {
		await reloadMain(main);
		await render(main, name);
		const m = main.querySelector('.adm-message');
		if (msg && m) m.textContent = msg;
	}

	const ncols = table.tHead.rows[0].cells.length + 1;
	function actions(tr) {
		const box = h('span', { class: 'adm-buttons' });
		const id = tr.dataset.id;
		const edit = h('button', { type: 'button', class: 'adm-edit-btn', onclick: () => {
			tr.replaceWith(editorRow(t, rowOf(t, tr), ncols, reload));
		} }, 'Edit');
		const del = h('button', { type: 'button', class: 'adm-del-btn danger', onclick: () => {
			// Asked in place, so nothing modal stands in the way.
			replace(box, h('span', {}, `Delete ${t.one} ${id}?`),
				h('button', { type: 'button', class: 'adm-confirm danger', onclick: async () => {
					try {
						await send('DELETE', `${t.api}/${id}`);
						await reload(`Deleted ${t.one} ${id}.`);
					} catch (e) {
						replace(box, errorLine(e));
					}
				} }, 'Delete'),
				h('button', { type: 'button', onclick: () => reload() }, 'Keep'));
		} }, 'Delete');
		return replace(box, edit, del);
	}
	table.tHead.rows[0].append(h('th', { scope: 'col', class: 'adm-actions' }, 'Actions'));
	for (const tr of table.tBodies[0].rows)
		if (tr.dataset.id !== undefined) tr.append(h('td', { class: 'adm-actions' }, actions(tr)));
	const hint = main.querySelector('.adm-tools .adm-hint');
	if (hint) hint.remove();
	main.querySelector('.adm-tools').append(h('button', { type: 'button', class: 'adm-new', onclick: () => {
		const tbody = table.tBodies[0];
		if (!tbody.querySelector('tr[data-id="new"]')) tbody.prepend(editorRow(t, null, ncols, reload));
	} }, `New ${t.one}`));
}
