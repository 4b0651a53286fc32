// SPDX-License-Identifier: MIT
// page-auditlog.js - /admin/auditlog: who changed what and when, newest
// first, a page at a time (?before=ID older, ?after=ID newer). The log is
// for administrators, as in openQA.
import { h, replace } from './dom.js';
import { get } from './api.js';
import { currentSession, loginHref } from './session.js';

const PAGE = 50;

// Details as "key: value" text; nested values as compact JSON.
function details(d) {
	if (!d || typeof d !== 'object') return String(d ?? '');
	return Object.entries(d)
		.map(([k, v]) => `${k}: ${v !== null && typeof v === 'object' ? JSON.stringify(v) : v}`)
		.join('; ');
}

function row(e) {
	return h('tr', { dataset: { id: e.id } },
		h('td', { class: 'audit-time' }, (e.time || '').replace('T', ' ')),
		h('td', { class: 'audit-user' }, e.user),
		h('td', { class: 'audit-event' }, e.event),
		h('td', { class: 'audit-details' }, details(e.details)));
}

export async function render(main, match, query) {
	const s = await currentSession();
	if (!s.user || s.user.role !== 'admin') {
		replace(main, h('h1', {}, 'Audit log'),
			h('p', { class: 'audit-denied' }, s.user
				? `The audit log is for administrators; ${s.user.name} is ${s.user.role === 'operator' ? 'an' : 'a'} ${s.user.role}.`
				: ['Sign in as an administrator to read the audit log: ', h('a', { href: loginHref() }, 'Sign in')]));
		return;
	}
	const limit = /^\d{1,3}$/.test(query.get('limit') || '') ? query.get('limit') : PAGE;
	const keep = limit === PAGE ? '' : `&limit=${limit}`;
	const page = await get('/api/v1/audit_log', { limit, before: query.get('before'), after: query.get('after') });
	const ev = page.events;
	const nav = h('nav', { class: 'audit-paging' },
		page.newer && ev.length ? h('a', { href: `/admin/auditlog?after=${ev[0].id}${keep}`, class: 'audit-newer' }, '← Newer') : null,
		page.older && ev.length ? h('a', { href: `/admin/auditlog?before=${ev[ev.length - 1].id}${keep}`, class: 'audit-older' }, 'Older →') : null);
	replace(main, h('h1', {}, 'Audit log'),
		ev.length ? h('div', { class: 'scroll' }, h('table', { class: 'audit' },
			h('thead', {}, h('tr', {}, h('th', {}, 'Time (UTC)'), h('th', {}, 'User'), h('th', {}, 'Event'), h('th', {}, 'Details'))),
			h('tbody', {}, ev.map(row))))
			: h('p', { class: 'muted' }, 'No events.'),
		nav);
}
