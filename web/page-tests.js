// SPDX-License-Identifier: MIT
// page-tests.js - /tests: running, scheduled and finished jobs.
import { h, replace, ago, resultClass } from './dom.js';
import { get } from './api.js';

function jobRow(j) {
	return h('tr', { dataset: { id: j.id } },
		h('td', {}, h('a', { href: `/tests/${j.id}` }, j.name || j.test)),
		h('td', { class: resultClass(j.result, j.state) }, j.state === 'done' ? j.result : j.state),
		h('td', {}, j.settings && j.settings.MACHINE),
		h('td', { class: 'muted' }, ago(j.t_finished || j.t_started)));
}

function table(title, jobs) {
	return [h('h2', {}, `${title} (${jobs.length})`),
		jobs.length ? h('div', { class: 'scroll' }, h('table', { class: 'jobs' },
			h('thead', {}, h('tr', {}, h('th', {}, 'Test'), h('th', {}, 'Result'), h('th', {}, 'Machine'), h('th', {}, 'When'))),
			h('tbody', {}, jobs.map(jobRow)))) : h('p', { class: 'muted' }, 'None.')];
}

export async function render(main) {
	const { jobs } = await get('/api/v1/jobs', { limit: 500 });
	const running = jobs.filter(j => j.state !== 'done' && j.state !== 'scheduled' && j.state !== 'cancelled');
	const scheduled = jobs.filter(j => j.state === 'scheduled');
	const done = jobs.filter(j => j.state === 'done' || j.state === 'cancelled');
	replace(main, h('h1', {}, 'Tests'), table('Running', running), table('Scheduled', scheduled), table('Finished', done));
}
