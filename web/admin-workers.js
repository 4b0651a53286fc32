// SPDX-License-Identifier: MIT
// admin-workers.js - /admin/workers: every registered worker (host and
// instance, state, the job it runs linked, its classes, when it was last
// heard from) from GET /api/v1/workers, the running jobs' names from
// GET /api/v1/jobs?ids=.
import { h, replace } from './dom.js';
import { get } from './api.js';
import { adminNav, when, sortableTable } from './admin-common.js';

// A worker not heard from for this long is shown offline: the server's
// default --worker-timeout, after which it gives the worker's job up.
const OFFLINE_S = 60;

function seenAgo(t) {
	if (!t) return Infinity;
	const ms = Date.parse(/[zZ]$/.test(t) ? t : t + 'Z');
	return Number.isNaN(ms) ? Infinity : (Date.now() - ms) / 1000;
}

// openQA's states: running, idle, broken (an error), offline (silent).
export function workerState(w) {
	if ((seenAgo(w.t_seen) > OFFLINE_S && !w.jobid) || w.status === 'dead') return 'offline';
	if (w.error) return 'broken';
	return w.jobid ? 'running' : (w.status || 'idle');
}

export async function render(main) {
	const { workers } = await get('/api/v1/workers');
	const ids = workers.map(w => w.jobid).filter(Boolean);
	const jobs = {};
	if (ids.length) {
		try {
			const ans = await get('/api/v1/jobs', { ids: ids.join(','), limit: ids.length });
			for (const j of ans.jobs || []) jobs[j.id] = j;
		} catch (e) { /* the ids alone still link the jobs */ }
	}
	const counts = {};
	for (const w of workers) counts[workerState(w)] = (counts[workerState(w)] || 0) + 1;
	const columns = [
		{ label: 'Worker', sort: w => `${w.host}:${String(w.instance).padStart(6, '0')}`,
			cell: w => h('span', { class: 'adm-worker' }, `${w.host}:${w.instance}`) },
		{ label: 'State', sort: workerState, cell: w => {
			const s = workerState(w);
			return h('span', { class: `adm-state ws-${s}` }, s);
		} },
		{ label: 'Current job', sort: w => w.jobid || 0, cell: w => w.jobid
			? h('a', { href: `/tests/${w.jobid}` }, jobs[w.jobid] ? `${jobs[w.jobid].name} (#${w.jobid})` : `#${w.jobid}`)
			: h('span', { class: 'muted' }, '—') },
		{ label: 'Classes', class: 'adm-classes', sort: w => (w.properties && w.properties.WORKER_CLASS) || '',
			cell: w => ((w.properties && w.properties.WORKER_CLASS) || '').split(',').filter(Boolean)
				.map(c => h('span', { class: 'adm-tag' }, c)) },
		{ label: 'Last seen', sort: w => w.t_seen || '', cell: w => when(w.t_seen) },
		{ label: 'Error', class: 'adm-desc', cell: w => w.error || '' },
	];
	const summary = Object.entries(counts).map(([s, n]) => h('span', { class: `adm-state ws-${s}` }, `${n} ${s}`));
	replace(main, adminNav('/admin/workers'),
		h('h1', {}, `Workers (${workers.length})`),
		h('p', { class: 'adm-summary' }, summary.length ? summary : 'No worker has registered yet.'),
		sortableTable(columns, workers, { class: 'adm-workers', sortBy: 0,
			rowAttrs: w => ({ dataset: { id: w.id } }), empty: 'No workers.' }));
}
