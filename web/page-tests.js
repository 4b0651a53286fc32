// SPDX-License-Identifier: MIT
// page-tests.js - /tests: running, scheduled and finished jobs, filtered,
// sorted and paged by the server (GET /api/v1/jobs with vigil's keyset
// pages: sort, next, prev). The whole state lives in the URL query, so a
// view can be shared: the filter form writes it, the older/newer links
// carry the page's cursor. ?state=… shows one list instead of the three.
import { h, replace, ago } from './dom.js';
import { get } from './api.js';
import { jobOutcome, medium, pageUrl } from './lists.js';

const RUNNING = 'assigned,setup,running,uploading';
const FINISHED = 'done,cancelled';
const SECTIONS = [['Running', RUNNING], ['Scheduled', 'scheduled'], ['Finished', FINISHED]];
const STATES = [['', 'all'], [RUNNING, 'running'], ['scheduled', 'scheduled'], [FINISHED, 'finished']];
const TEXT_FILTERS = ['distri', 'version', 'flavor', 'arch', 'build', 'test', 'machine'];
const RESULTS = ['passed', 'softfailed', 'failed', 'incomplete', 'skipped', 'obsoleted', 'parallel_failed',
	'parallel_restarted', 'user_cancelled', 'user_restarted', 'timeout_exceeded', 'none'];
const LIMITS = ['25', '50', '100', '200', '500'];
const SORTS = ['id', 'result', 'test'];
const DEFAULT_LIMIT = '50';

// The API parameters of the page's filters.
function filterParams(query) {
	const p = {};
	for (const k of [...TEXT_FILTERS, 'groupid', 'result']) if (query.get(k)) p[k] = query.get(k);
	return p;
}

function sortOf(query) {
	return SORTS.includes(query.get('sort')) ? query.get('sort') : 'id';
}

function limitOf(query) {
	const l = query.get('limit');
	return /^[1-9][0-9]{0,3}$/.test(l || '') ? l : DEFAULT_LIMIT;
}

function sortHeader(query, key, label) {
	const current = sortOf(query) === key;
	return h('th', { class: current ? 'sorted' : null, 'aria-sort': current ? (key === 'id' ? 'descending' : 'ascending') : null },
		h('a', { href: pageUrl(query, { sort: key === 'id' ? null : key, next: null, prev: null }) }, label));
}

function jobRow(j, groups) {
	const s = j.settings || {};
	const [text, cls] = jobOutcome(j);
	const when = j.t_finished || j.t_started;
	return h('tr', { dataset: { id: j.id } },
		h('td', { class: 't-id muted' }, String(j.id)),
		h('td', { class: 't-test' }, h('a', { href: `/tests/${j.id}`, title: j.name },
			j.test + (s.MACHINE ? '@' + s.MACHINE : ''))),
		h('td', { class: `t-result ${cls}` }, text),
		h('td', { class: 't-time muted', title: when || '' }, when ? ago(when) : ''),
		h('td', { class: 't-build' }, medium(s), s.BUILD ? h('span', { class: 'muted' }, ` Build ${s.BUILD}`) : null),
		h('td', { class: 't-group' }, j.group_id ? h('a', { href: `/group_overview/${j.group_id}` },
			j.group || groups.get(j.group_id) || String(j.group_id)) : ''));
}

function jobTable(query, jobs, groups) {
	if (!jobs.length) return h('p', { class: 'muted empty' }, 'None.');
	return h('div', { class: 'scroll' }, h('table', { class: 'jobs' },
		h('thead', {}, h('tr', {}, sortHeader(query, 'id', '#'), sortHeader(query, 'test', 'Test'),
			sortHeader(query, 'result', 'Result'), h('th', {}, 'When'), h('th', {}, 'Build'), h('th', {}, 'Group'))),
		h('tbody', {}, jobs.map(j => jobRow(j, groups)))));
}

// Older/newer links of a page; they keep every other parameter.
function pager(query, page) {
	const cursor = query.get('next') || query.get('prev');
	if (!cursor && page.next === null) return null;
	return h('nav', { class: 'pager', 'aria-label': 'pages' },
		cursor ? h('a', { class: 'p-first', href: pageUrl(query, { next: null, prev: null }) }, '« Newest') : null,
		page.prev !== null ? h('a', { class: 'p-prev', href: pageUrl(query, { next: null, prev: page.prev }) }, '‹ Newer')
			: null,
		page.next !== null ? h('a', { class: 'p-next', href: pageUrl(query, { prev: null, next: page.next }) }, 'Older ›')
			: null);
}

function listParams(query, state, paged) {
	const p = { ...filterParams(query), state, sort: sortOf(query), limit: limitOf(query) };
	if (paged) {
		if (query.get('next')) p.next = query.get('next');
		else if (query.get('prev')) p.prev = query.get('prev');
	}
	return p;
}

function field(name, value, attrs = {}) {
	return h('label', { class: 'f-field' }, h('span', {}, name),
		h('input', { name, value: value || '', type: 'text', autocomplete: 'off', spellcheck: 'false', ...attrs }));
}

function select(name, label, value, options) {
	const sel = h('select', { name },
		options.map(([v, text]) => h('option', { value: v, selected: v === value }, text)));
	return h('label', { class: 'f-field' }, h('span', {}, label), sel);
}

// The filter form: its state is the URL query; submitting navigates to the new query.
function filterForm(query, groupList) {
	const form = h('form', { class: 'filters', role: 'search' },
		TEXT_FILTERS.map(k => field(k, query.get(k))),
		select('groupid', 'group', query.get('groupid') || '',
			[['', 'any'], ...groupList.map(g => [String(g.id), g.name])]),
		select('result', 'result', query.get('result') || '', [['', 'any'], ...RESULTS.map(r => [r, r])]),
		select('state', 'state', query.get('state') || '', STATES),
		select('limit', 'per page', limitOf(query),
			(LIMITS.includes(limitOf(query)) ? LIMITS : [limitOf(query), ...LIMITS]).map(l => [l, l])),
		h('div', { class: 'f-buttons' }, h('button', { type: 'submit' }, 'Filter'),
			h('a', { href: '/tests' }, 'Reset')));
	form.addEventListener('submit', ev => {
		ev.preventDefault();
		const q = new URLSearchParams();
		for (const [k, v] of new FormData(form)) {
			const t = String(v).trim();
			if (t && !(k === 'limit' && t === DEFAULT_LIMIT)) q.set(k, t);
		}
		if (query.get('sort')) q.set('sort', query.get('sort'));
		location.assign('/tests' + (q.toString() ? '?' + q.toString() : ''));
	});
	// Open where there is room or something is filtered; a phone opens it on demand.
	const set = [...TEXT_FILTERS, 'groupid', 'result', 'state'].filter(k => query.get(k)).length;
	return h('details', { class: 'filter-box', open: set > 0 || !matchMedia('(max-width: 600px)').matches },
		h('summary', {}, set ? `Filters (${set} set)` : 'Filters'), form);
}

function heading(title, page, extra) {
	const n = page.jobs.length;
	return h('h2', {}, title, ' ', h('span', { class: 'muted' }, page.next !== null ? `(${n}+)` : `(${n})`), extra || null);
}

export async function render(main, match, query) {
	const state = query.get('state');
	const cursor = query.get('next') || query.get('prev');
	const groupsP = get('/api/v1/job_groups').catch(() => []);
	let body;
	if (state) {
		// One list, paged.
		const [page, groupList] = await Promise.all([get('/api/v1/jobs', listParams(query, state, true)), groupsP]);
		const groups = new Map(groupList.map(g => [g.id, g.name]));
		const title = (STATES.find(([v]) => v === state) || [state, state])[1];
		body = [heading(title[0].toUpperCase() + title.slice(1), page), jobTable(query, page.jobs, groups),
			pager(query, page)];
		return show(main, query, groupList, body);
	}
	// Running, scheduled and finished; the cursor pages the finished ones.
	const shown = cursor ? SECTIONS.slice(2) : SECTIONS;
	const [groupList, ...pages] = await Promise.all([groupsP,
		...shown.map(([, st]) => get('/api/v1/jobs', listParams(query, st, st === FINISHED)))]);
	const groups = new Map(groupList.map(g => [g.id, g.name]));
	body = shown.map(([title, st], i) => {
		const page = pages[i];
		const more = st !== FINISHED && page.next !== null
			? h('a', { class: 'more', href: pageUrl(query, { state: st, next: page.next }) }, 'more') : null;
		return h('section', { class: 'tests-section', dataset: { section: title.toLowerCase() } },
			heading(title, page, more ? [' ', more] : null), jobTable(query, page.jobs, groups),
			st === FINISHED ? pager(query, page) : null);
	});
	if (cursor)
		body.unshift(h('p', { class: 'muted' }, 'Running and scheduled jobs are on the ',
			h('a', { href: pageUrl(query, { next: null, prev: null }) }, 'first page'), '.'));
	show(main, query, groupList, body);
}

function show(main, query, groupList, body) {
	replace(main, h('div', { class: 'lp lp-tests' }, h('div', { class: 'page-head' }, h('h1', {}, 'Tests')), filterForm(query, groupList), body));
}
