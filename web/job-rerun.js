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

// What the module's head shows about re-runs: where a copied module came
// from, and the button on a failed module (nothing else for others).
export function rerunParts(ctx, mod) {
	const parts = [];
	if (Number.isInteger(mod.copiedFrom)) {
		parts.push(h('span', { class: 'job-tag job-copied', title: 'this module was not run again: its results come from that job' },
			'copied from ', h('a', { href: `/tests/${mod.copiedFrom}` }, `t#${mod.copiedFrom}`)));
	}
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
