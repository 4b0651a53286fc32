// SPDX-License-Identifier: MIT
// job-rerun.js - "re-run from here" on the job page's module list: a
// failed module of a finished job offers a signed-in operator a re-run
// resuming from the last milestone before it (POST rerun_from, then the
// new job's page); a module a re-run copied from an earlier job says so
// ("copied from t#N").
import { h, replace } from './dom.js';
import { send } from './api.js';

async function rerun(ctx, mod, button, msg) {
	button.disabled = true;
	replace(msg, 'Starting the re-run…');
	try {
		const r = await send('POST', `/api/v1/jobs/${ctx.id}/rerun_from`, { module: mod.name });
		if (r && r.test_url) { location.assign(r.test_url); return; }
		replace(msg, h('span', { class: 'error' }, 'No re-run was made.'));
	} catch (e) {
		replace(msg, h('span', { class: 'error' }, e.message));
	}
	button.disabled = false;
}

// The button on a failed module's head (nothing for others); where a
// copied module came from the server writes.
export function rerunParts(ctx, mod) {
	const parts = [];
	const u = ctx.user, j = ctx.job;
	if (mod.result === 'failed' && j.state === 'done' && !j.clone_id && u && (u.role === 'admin' || u.role === 'operator')) {
		const msg = h('span', { class: 'job-rerun-msg', role: 'status' });
		const button = h('button', { type: 'button', class: 'job-rerun',
			title: 'a new job that starts from the last milestone snapshot before this module' }, 'Re-run from here');
		button.addEventListener('click', () => rerun(ctx, mod, button, msg));
		parts.push(button, msg);
	}
	return parts;
}
