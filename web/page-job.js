// SPDX-License-Identifier: MIT
// page-job.js - the job page, /tests/<id> and /tests/latest?distri=…: a
// header (name, result, times, worker, group and build, restart, clone and cancel
// for an operator) and openQA's tabs by anchor (#details, #settings,
// #comments, #dependencies, #next_previous, #investigation, #live, plus
// #video, #logs, #source and #step/<module>/<n>). The hash picks the tab
// without a reload, so the back button walks through them. The server
// writes the header, the tabs' links and #details (web_ssr_job.c); the
// other tabs are drawn on first view by their modules (job-*.js), and
// the details get their behaviour there; data only ever as text.
import { h, replace, builtByServer } from './dom.js';
import { send } from './api.js';
import { loadJob } from './job-data.js';
import { renderDetails, openStep, stepKeys } from './job-details.js';
import { renderVideo, renderLogs, seekVideo } from './job-media.js';
import { renderSettings, renderComments, renderDependencies, renderNextPrevious, renderInvestigation } from './job-info.js';
import { renderSource } from './job-source.js';

// The signed-in user, or null: session.js is optional until it is built in.
async function sessionUser() {
	try {
		const m = await import('./session.js');
		const s = await m.currentSession();
		return s && s.user ? s.user : null;
	} catch (e) {
		return null;
	}
}

// The header as the server wrote it, with an operator's buttons (re-judge,
// restart, clone, cancel) and the line that tells how they went.
function headerActions(head, ctx, user) {
	const j = ctx.job;
	const done = j.state === 'done' || j.state === 'cancelled';
	const msg = h('p', { class: 'job-action-msg', role: 'status' });
	const rejudged = h('section', { class: 'job-rejudge', 'aria-label': 're-judged steps', hidden: true });
	const actions = [];
	if (user && (user.role === 'admin' || user.role === 'operator')) {
		if (j.state === 'done') actions.push(h('button', { type: 'button', class: 'job-rejudge-btn', title: 'judge the failed checks again on their screenshots with the needles as they are now',
			onclick: () => { rejudged.hidden = false; import('./rejudge.js').then(m => m.renderRejudge(rejudged, ctx.id)); } }, 'Re-judge'));
		if (done) {
			actions.push(h('button', { type: 'button', class: 'job-restart', onclick: () => restart(ctx, msg) }, 'Restart'));
			actions.push(h('button', { type: 'button', class: 'job-clone-new', onclick: () => cloneJob(ctx, msg),
				title: 'a new job with these settings, as openqa-clone-job makes it (the job stays as it is)' }, 'Clone'));
		} else actions.push(h('button', { type: 'button', class: 'job-cancel', onclick: () => cancel(ctx, msg) }, 'Cancel'));
	}
	const title = head.querySelector('.job-title');
	if (actions.length && title) title.append(h('div', { class: 'job-actions' }, actions));
	head.append(msg, rejudged);
}

async function restart(ctx, msg) {
	replace(msg, 'Restarting…');
	try {
		const r = await send('POST', `/api/v1/jobs/${ctx.id}/restart`);
		const key = String(ctx.id);
		const url = (r.test_url && r.test_url[0] && r.test_url[0][key]) ||
			(r.result && r.result[0] && r.result[0][key] ? `/tests/${r.result[0][key]}` : null);
		if (url) { location.assign(url); return; }
		replace(msg, h('span', { class: 'error' }, 'Not restarted: ', (r.errors || []).join('; ') || 'no clone was made'));
	} catch (e) {
		replace(msg, h('span', { class: 'error' }, e.message));
	}
}

// openqa-clone-job's clone: a new job from the settings as they are shown
// (CLONED_FROM names this one; is_clone_job: no defaults merged again).
async function cloneJob(ctx, msg) {
	const j = ctx.job, params = {};
	for (const [k, v] of Object.entries(j.settings || {})) {
		if (k === 'NAME' || typeof v !== 'string') continue;
		if (v === '[redacted]') {
			replace(msg, h('span', { class: 'error' }, `Not cloned: the setting ${k} is secret here; Restart keeps it.`));
			return;
		}
		params[k] = v;
	}
	if (Number.isInteger(j.priority)) params._PRIORITY = String(j.priority);
	if (Number.isInteger(j.group_id)) params._GROUP_ID = String(j.group_id);
	params.CLONED_FROM = `${location.origin}/tests/${j.id}`;
	params.is_clone_job = '1';
	replace(msg, 'Cloning…');
	try {
		const r = await send('POST', '/api/v1/jobs', params);
		if (Number.isInteger(r.id)) { location.assign(`/tests/${r.id}`); return; }
		replace(msg, h('span', { class: 'error' }, 'Not cloned: ', r.error || 'no job was made'));
	} catch (e) {
		replace(msg, h('span', { class: 'error' }, e.message));
	}
}

async function cancel(ctx, msg) {
	replace(msg, 'Cancelling…');
	try {
		await send('POST', `/api/v1/jobs/${ctx.id}/cancel`);
		location.reload();
	} catch (e) {
		replace(msg, h('span', { class: 'error' }, e.message));
	}
}

async function renderLive(panel, ctx) {
	let mod;
	try {
		mod = await import('./live.js');
	} catch (e) {
		replace(panel, h('p', { class: 'muted' }, 'Live view unavailable.'));
		return;
	}
	if (ctx.tab !== 'live') { // left before the module came
		ctx.tabs.live.drawn = null;
		return;
	}
	replace(panel);
	// When the job ends, show it finished: its results, video and logs.
	ctx.live = mod.mountLive(panel, ctx.id, {
		onEnd: () => {
			history.replaceState(null, '', location.pathname + location.search + '#details');
			location.reload();
		},
	});
}

// [anchor, label, draw(panel, ctx), shown(ctx)]
const TABS = [
	['details', 'Details', renderDetails, () => true],
	['live', 'Live view', renderLive, ctx => ctx.job.state !== 'done' && ctx.job.state !== 'cancelled'],
	['video', 'Video', renderVideo, ctx => ctx.logs.has('video.webm')],
	['logs', 'Logs & assets', renderLogs, () => true],
	['source', 'Source', renderSource, () => true],
	['settings', 'Settings', renderSettings, () => true],
	['comments', 'Comments', renderComments, () => true],
	['dependencies', 'Dependencies', renderDependencies, () => true],
	['next_previous', 'Next & previous', renderNextPrevious, () => true],
	['investigation', 'Investigation', renderInvestigation, () => true],
];
// openQA's older anchors.
const ALIASES = { downloads: 'logs' };

function tabOf(hash) {
	const name = hash.replace(/^#/, '');
	if (name.startsWith('step/')) return 'details';
	if (name.startsWith('source/')) return 'source';
	return ALIASES[name] || name;
}

function selectTab(ctx, name) {
	if (!ctx.tabs[name]) name = 'details';
	// The live view streams while shown only; it is mounted again on return.
	if (name !== 'live' && ctx.live) {
		ctx.live.stop();
		ctx.live = null;
		ctx.tabs.live.drawn = null;
	}
	for (const [n, t] of Object.entries(ctx.tabs)) {
		const on = n === name;
		t.link.setAttribute('aria-selected', on ? 'true' : 'false');
		t.link.classList.toggle('job-tab-on', on);
		t.panel.hidden = !on;
	}
	const t = ctx.tabs[name];
	ctx.tab = name;
	if (!t.drawn) {
		t.drawn = (async () => {
			try {
				await t.draw(t.panel, ctx);
			} catch (e) {
				replace(t.panel, h('p', { class: 'error' }, `This tab could not be shown: ${e.message}`));
			}
		})();
	}
	return t.drawn;
}

// Follow the hash: a tab, or a step of the details.
async function onHash(ctx) {
	let hash = location.hash;
	try {
		hash = decodeURIComponent(hash);
	} catch (e) { /* a malformed escape: taken as it is */ }
	// A job still running opens on its live view, as in openQA.
	const name = hash === '' && ctx.tabs.live ? 'live' : tabOf(hash);
	const fresh = ctx.tabs[name] && !ctx.tabs[name].drawn;
	await selectTab(ctx, name);
	const m = hash.match(/^#step\/([^/]+)\/(\d+)$/);
	if (m) openStep(ctx, m[1], Number(m[2]), true);
	else if (ctx.tab === 'details') openStep(ctx, null);
	const src = hash.match(/^#source\/([^/]+)(?:\/(\d+))?$/);
	if (src && !fresh && ctx.tab === 'source' && ctx.showSource) ctx.showSource(src[1], src[2] ? Number(src[2]) : 0);
}

// The page as the server wrote it (src/server/pages/web_ssr_job.c: the
// header, the tabs' links, the #details tab; or why there is no job):
// this adds the buttons, the other tabs' panels, drawn when first shown,
// the opened step and the keys.
export async function render(main) {
	const page = builtByServer(main, '.job-page[data-job]');
	if (!page) return; // the server's message says why
	const [ctx, user] = await Promise.all([loadJob(Number(page.dataset.job)), sessionUser()]);
	document.title = `${ctx.job.name || ctx.job.test} - vigil`;
	const panels = page.querySelector('.job-panels');
	ctx.tabs = {};
	for (const [name, , draw] of TABS) {
		const link = page.querySelector(`#job-tab-${name}`);
		if (!link) continue;
		let panel = page.querySelector(`#job-panel-${name}`);
		if (!panel) {
			panel = h('section', { class: 'job-panel', id: 'job-panel-' + name, 'aria-labelledby': 'job-tab-' + name, hidden: true },
				h('p', { class: 'loading' }, 'Loading…'));
			panels.append(panel);
		}
		ctx.tabs[name] = { link, panel, draw, drawn: null };
	}
	ctx.selectTab = name => selectTab(ctx, name);
	ctx.seek = t => seekVideo(ctx, t);
	ctx.user = user;
	headerActions(page.querySelector('.job-head'), ctx, user);
	window.addEventListener('hashchange', () => onHash(ctx));
	document.addEventListener('keydown', e => stepKeys(ctx, e));
	await onHash(ctx);
}
