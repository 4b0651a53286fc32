// SPDX-License-Identifier: MIT
// page-live.js - /tests/<id>/live: only the live view of one job (live.js),
// under the job's name; the job page's #live tab embeds the same view.
import { h, replace } from './dom.js';
import { get } from './api.js';
import { mountLive } from './live.js';

export async function render(main, match) {
	const id = match[1];
	const { job } = await get(`/api/v1/jobs/${id}`);
	const view = h('section', { class: 'live-page' });
	replace(main, h('h1', {}, h('a', { href: `/tests/${id}` }, job.name || `Job ${id}`), ' · live'), view);
	mountLive(view, id);
}
