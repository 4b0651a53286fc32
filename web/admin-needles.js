// SPDX-License-Identifier: MIT
// admin-needles.js - /admin/needles: every needle the finished jobs used,
// with the job (module, step) that last matched it and the one that last
// had it among its candidates, from GET /api/v1/needles. Sorting, the
// name filter and paging happen on the server (keyset pages: "More" asks
// for the rows after the last one shown); the URL keeps sort and search.
import { h, replace } from './dom.js';
import { get } from './api.js';
import { adminNav, when } from './admin-common.js';

const PAGE = 100;
const SORTS = { last_match: 'Last match', last_seen: 'Last seen', name: 'Needle' };

function jobLink(job, module, step) {
	if (!job) return null;
	const anchor = module && step ? `#step/${encodeURIComponent(module)}/${step}` : '';
	return h('a', { href: `/tests/${job}${anchor}`, class: 'adm-joblink' },
		`#${job}${module ? ' ' + module : ''}${step ? ' step ' + step : ''}`);
}

function row(n) {
	return h('tr', { dataset: { id: n.id, name: n.name } },
		h('td', { class: 'adm-needle' }, h('span', { class: 'name' }, n.name),
			n.file && n.file !== `${n.name}.json` ? h('span', { class: 'muted file' }, ` ${n.file}`) : null),
		h('td', {}, n.distri),
		h('td', { class: 'adm-match' }, when(n.last_match), ' ', jobLink(n.last_match_job, n.last_match_module, n.last_match_step)),
		h('td', { class: 'adm-seen' }, when(n.last_seen), ' ', jobLink(n.last_seen_job, n.last_seen_module, n.last_seen_step)));
}

export async function render(main, name, query) {
	const sort = Object.hasOwn(SORTS, query.get('sort') || '') ? query.get('sort') : 'last_match';
	const search = query.get('search') || '';
	const tbody = h('tbody');
	const more = h('button', { type: 'button', class: 'adm-more', hidden: true }, 'More');
	const status = h('p', { class: 'adm-message muted', role: 'status' });
	let next = null;
	let shown = 0;

	// Show the page with other sort/search: the URL keeps them.
	function go(newSort, newSearch) {
		const q = new URLSearchParams();
		if (newSort !== 'last_match') q.set('sort', newSort);
		if (newSearch) q.set('search', newSearch);
		const qs = q.toString();
		history.replaceState(null, '', location.pathname + (qs ? `?${qs}` : ''));
		return render(main, name, q);
	}

	async function load() {
		more.disabled = true;
		const ans = await get('/api/v1/needles', { sort, search, limit: PAGE, after: next });
		tbody.append(...ans.needles.map(row));
		shown += ans.needles.length;
		next = ans.next;
		more.hidden = !next;
		more.disabled = false;
		status.textContent = shown ? `${shown} needle${shown === 1 ? '' : 's'} shown${next ? ', more below' : ''}.`
			: search ? `No needle name contains “${search}”.` : 'No job has reported needles yet.';
	}
	more.addEventListener('click', () => load().catch(e => { status.textContent = e.message; }));

	const head = (key, label) => h('th', { scope: 'col', 'aria-sort': key === sort ? (key === 'name' ? 'ascending' : 'descending') : 'none' },
		h('button', { type: 'button', class: 'adm-sort', onclick: () => go(key, search) }, label));
	const input = h('input', { type: 'search', class: 'adm-filter', placeholder: 'Needle name contains…',
		'aria-label': 'Needle name contains', value: search });
	const form = h('form', { class: 'adm-tools', role: 'search', onsubmit: ev => {
		ev.preventDefault();
		go(sort, input.value.trim());
	} }, input, h('button', { type: 'submit' }, 'Search'),
	h('span', { class: 'muted adm-hint' }, `Sorted by ${SORTS[sort].toLowerCase()}.`));

	replace(main, adminNav('/admin/needles'), h('h1', {}, 'Needles'), form,
		h('div', { class: 'scroll' }, h('table', { class: 'adm-table adm-needles' },
			h('thead', {}, h('tr', {}, head('name', 'Needle'), h('th', { scope: 'col' }, 'Distri'),
				head('last_match', 'Last match'), head('last_seen', 'Last seen'))),
			tbody)),
		more, status);
	await load();
}
