// SPDX-License-Identifier: MIT
// admin-common.js - what the admin pages share: the admin navigation, the
// signed-in session (session.js, loaded on demand: no module or no user
// means signed out, and write controls stay hidden), sorting and
// filtering the tables the server wrote, a sortable table made here (job
// groups) and the error line.
import { h } from './dom.js';
import { setCsrf } from './api.js';

// The admin pages in openQA's menu order: [path, label].
const SECTIONS = [
	['/admin/groups', 'Job groups'],
	['/admin/machines', 'Machines'],
	['/admin/products', 'Products'],
	['/admin/test_suites', 'Test suites'],
	['/admin/workers', 'Workers'],
	['/admin/assets', 'Assets'],
	['/admin/needles', 'Needles'],
	['/admin/auditlog', 'Audit log'],
];

// The admin sub-navigation with the current page marked.
export function adminNav(active) {
	return h('nav', { class: 'adm-nav', 'aria-label': 'Administration' },
		SECTIONS.map(([path, label]) => h('a', {
			href: path, class: path === active ? 'current' : null,
			'aria-current': path === active ? 'page' : null,
		}, label)));
}

let session = null;

// The session as session.js's currentSession() gives it: {user: null} or
// {user: {name, role}, csrf}. A missing or failing session.js is "signed
// out". Fetched once per page load.
export function getSession() {
	if (!session) {
		session = (async () => {
			try {
				const mod = await import('./session.js');
				const s = await mod.currentSession();
				if (s && s.user && s.csrf) setCsrf(s.csrf);
				return s && s.user ? s : { user: null };
			} catch (e) {
				return { user: null };
			}
		})();
	}
	return session;
}

// Hand in the session (the sign-in code after it changed, or a browser
// test); the next render uses it.
export function useSession(s) {
	if (s && s.csrf) setCsrf(s.csrf);
	session = Promise.resolve(s && s.user ? s : { user: null });
}

export function isAdmin(s) {
	return !!(s && s.user && s.user.role === 'admin');
}

// Behaviour for a table the server wrote (docs/web.md, "Pages built
// once"): its head's buttons (th > button.adm-sort) sort the rows by the
// text of their cells (a cell's data-sort first), filter (an input) keeps
// the rows whose text holds what was typed. The rows are the server's,
// moved, never made anew. Set up once per table; returns its state, whose
// rows() lists the data rows in their current order and filter.
const live = new WeakMap();
export function liveTable(table, filter) {
	if (live.has(table)) return live.get(table);
	const tbody = table.tBodies[0];
	const rows = [...tbody.rows].filter(tr => tr.dataset.id !== undefined);
	const others = [...tbody.rows].filter(tr => tr.dataset.id === undefined);
	let sortBy = null;
	let desc = false;
	let q = '';
	const key = (tr, i) => {
		const td = tr.cells[i];
		if (!td) return '';
		const v = td.dataset.sort;
		if (v !== undefined) return v === '' ? '' : Number.isFinite(Number(v)) ? Number(v) : v;
		const t = td.textContent.trim();
		return /^-?\d+$/.test(t) ? Number(t) : t;
	};
	function fill() {
		let list = rows.filter(tr => !q || tr.textContent.toLowerCase().includes(q));
		if (sortBy !== null) list = list.sort((a, b) => (desc ? -1 : 1) * cmp(key(a, sortBy), key(b, sortBy)));
		tbody.replaceChildren(...list, ...(rows.length ? [] : others));
	}
	const heads = [...table.tHead.rows[0].cells];
	heads.forEach((th, i) => {
		const by = th.getAttribute('aria-sort');
		if (by === 'ascending' || by === 'descending') {
			sortBy = i;
			desc = by === 'descending';
		}
		const button = th.querySelector('button.adm-sort');
		if (!button) return;
		button.addEventListener('click', () => {
			desc = sortBy === i ? !desc : false;
			sortBy = i;
			heads.forEach((o, j) => {
				if (o.hasAttribute('aria-sort'))
					o.setAttribute('aria-sort', j === sortBy ? (desc ? 'descending' : 'ascending') : 'none');
			});
			fill();
		});
	});
	if (filter)
		filter.addEventListener('input', () => {
			q = filter.value.trim().toLowerCase();
			fill();
		});
	const state = { rows: () => [...tbody.rows].filter(tr => tr.dataset.id !== undefined) };
	live.set(table, state);
	return state;
}

// An error shown in place of (or above) the page's data.
export function errorLine(e) {
	return h('p', { class: 'error adm-error', role: 'alert' }, e instanceof Error ? e.message : String(e));
}

// The order of sortable values: empty last, numbers by value, text as
// people read it (digit runs by value).
function cmp(a, b) {
	if (a === b) return 0;
	if (a === null || a === undefined || a === '') return 1;
	if (b === null || b === undefined || b === '') return -1;
	if (typeof a === 'number' && typeof b === 'number') return a - b;
	return String(a).localeCompare(String(b), undefined, { numeric: true });
}

// A table whose headers sort the rows in the browser. columns:
// [{label, sort: row => value (optional), cell: row => node or text, class}];
// rows: the data; opts: {class, empty (text when no rows), sortBy (column
// index), desc, rowAttrs: row => attrs}. Returns the element (in a
// sideways-scrolling wrapper, so a wide table never widens the page).
export function sortableTable(columns, rows, opts = {}) {
	let sortBy = opts.sortBy ?? null;
	let desc = !!opts.desc;
	const tbody = h('tbody');
	const heads = columns.map((c, i) => {
		if (!c.sort) return h('th', { scope: 'col', class: c.class }, c.label);
		const th = h('th', { scope: 'col', class: c.class, 'aria-sort': 'none' },
			h('button', { type: 'button', class: 'adm-sort', onclick: () => {
				desc = sortBy === i ? !desc : false;
				sortBy = i;
				fill();
			} }, c.label));
		return th;
	});
	function fill() {
		let list = rows.slice();
		if (sortBy !== null && columns[sortBy].sort) {
			const key = columns[sortBy].sort;
			list.sort((a, b) => {
				const r = cmp(key(a), key(b));
				return desc ? -r : r;
			});
		}
		heads.forEach((th, i) => {
			if (columns[i].sort)
				th.setAttribute('aria-sort', i === sortBy ? (desc ? 'descending' : 'ascending') : 'none');
		});
		tbody.replaceChildren(...list.map(r => h('tr', opts.rowAttrs ? opts.rowAttrs(r) : {},
			columns.map(c => h('td', { class: c.class }, c.cell(r))))));
		if (!list.length)
			tbody.append(h('tr', {}, h('td', { colspan: columns.length, class: 'muted' }, opts.empty || 'None.')));
	}
	fill();
	const wrap = h('div', { class: 'scroll' }, h('table', { class: 'adm-table ' + (opts.class || '') },
		h('thead', {}, h('tr', {}, heads)), tbody));
	// Show other rows (a filter's result) in the current order.
	wrap.refill = newRows => {
		rows = newRows;
		fill();
	};
	return wrap;
}
