// SPDX-License-Identifier: MIT
// page-job.js - the job page, /tests/<id> and /tests/latest?distri=…: a
// header (name, result, times, worker, group and build, restart, clone and cancel
// for an operator) and openQA's tabs by anchor (#details, #settings,
// #comments, #dependencies, #next_previous, #investigation, #live, plus
// #video, #logs, #source and #step/<module>/<n>). The hash picks the tab
// without a reload, so the back button walks through them. Each tab is
// drawn on first view by its module (job-*.js); data only ever as text.
import { h, replace, ago, duration, resultClass } from './dom.js';
import { get, send } from './api.js';
import { loadJob } from './job-data.js';
import { renderDetails, openStep, stepKeys } from './job-details.js';
import { renderVideo, renderLogs, seekVideo } from './job-media.js';
import { renderSettings, renderComments, renderDependencies, renderNextPrevious, renderInvestigation } from './job-info.js';
import { renderSource } from './job-source.js';

// The scenario keys of /tests/latest (openQA's), passed to the jobs list.
const LATEST_KEYS = ['distri', 'version', 'flavor', 'arch', 'test', 'machine', 'build', 'groupid'];

function isoTime(t) {
	if (!t) return null;
	const d = new Date(/[zZ]|[+-]\d\d:?\d\d$/.test(t) ? t : t + 'Z');
	return Number.isNaN(d.getTime()) ? null : d;
}

// The job's id: from the path, or the newest job of the scenario in the query.
async function resolveId(match, query) {
	if (match[1]) return Number(match[1]);
	const params = { latest: 1, limit: 1000 };
	let any = false;
	for (const k of LATEST_KEYS) {
		if (query.has(k)) { params[k] = query.get(k); any = true; }
	}
	if (!any) return null;
	const { jobs } = await get('/api/v1/jobs', params);
	return jobs.length ? Math.max(...jobs.map(j => j.id)) : 0;
}

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

function fact(label, ...value) {
	return h('div', { class: 'job-fact' }, h('dt', {}, label), h('dd', {}, ...value));
}

function timeFact(label, t) {
	const d = isoTime(t);
	if (!d) return null;
	return fact(label, h('time', { datetime: d.toISOString(), title: d.toLocaleString() }, ago(t)));
}

function header(ctx, user) {
	const j = ctx.job, s = j.settings || {};
	const done = j.state === 'done' || j.state === 'cancelled';
	const status = j.state === 'done' ? j.result : j.state;
	const started = isoTime(j.t_started), finished = isoTime(j.t_finished);
	const buildUrl = s.BUILD ? '/tests/overview?' + new URLSearchParams(Object.entries({
		distri: s.DISTRI || '', version: s.VERSION || '', build: s.BUILD, groupid: j.group_id || '' })
		.filter(([, v]) => v !== '')).toString() : null;
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
	return h('header', { class: 'job-head' },
		h('div', { class: 'job-title' },
			h('span', { class: 'job-badge ' + resultClass(j.result, j.state) }, status || 'none'),
			h('h1', {}, h('a', { href: `/tests/${j.id}`, class: 'job-id' }, '#' + j.id), ' ', j.name || j.test || ''),
			actions.length ? h('div', { class: 'job-actions' }, actions) : null),
		j.clone_id ? h('p', { class: 'job-clone' }, 'Restarted as ', h('a', { href: `/tests/${j.clone_id}` }, '#' + j.clone_id), '.') : null,
		ctx.reason ? h('p', { class: 'job-reason' }, 'Reason: ', ctx.reason) : null,
		h('dl', { class: 'job-facts' },
			fact('Result', h('span', { class: resultClass(j.result, j.state) }, status || 'none'),
				ctx.needsReview ? h('span', { class: 'job-tag job-review' }, 'needs review') : null),
			timeFact('Started', j.t_started),
			timeFact('Finished', j.t_finished),
			started && finished ? fact('Duration', duration((finished - started) / 1000)) : null,
			j.assigned_worker_id ? fact('Worker', h('a', { href: '/admin/workers', class: 'job-worker' },
				`worker ${j.assigned_worker_id}`)) : null,
			j.group_id ? fact('Group', h('a', { href: `/group_overview/${j.group_id}` }, j.group || `group ${j.group_id}`)) : null,
			buildUrl ? fact('Build', h('a', { href: buildUrl, class: 'job-build' }, s.BUILD)) : null,
			s.MACHINE ? fact('Machine', s.MACHINE) : null),
		msg, rejudged);
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

export async function render(main, match, query) {
	const id = await resolveId(match, query);
	if (id === null) {
		replace(main, h('p', { class: 'error' }, 'Name a scenario: /tests/latest?distri=…&version=…&flavor=…&arch=…&test=…&machine=…'));
		return;
	}
	if (!id) {
		replace(main, h('p', { class: 'error' }, `No job matches ${query.toString()}.`));
		return;
	}
	const [ctx, user] = await Promise.all([loadJob(id), sessionUser()]);
	document.title = `${ctx.job.name || ctx.job.test} - vigil`;
	const nav = h('nav', { class: 'job-tabs', 'aria-label': 'Job tabs' });
	const panels = h('div', { class: 'job-panels' });
	ctx.tabs = {};
	for (const [name, label, draw, shown] of TABS) {
		if (!shown(ctx)) continue;
		const text = name === 'comments' && ctx.commentCount ? `${label} (${ctx.commentCount})` : label;
		const link = h('a', { href: '#' + name, class: 'job-tab', id: 'job-tab-' + name, 'aria-selected': 'false',
			'aria-controls': 'job-panel-' + name }, text);
		const panel = h('section', { class: 'job-panel', id: 'job-panel-' + name, 'aria-labelledby': 'job-tab-' + name, hidden: true },
			h('p', { class: 'loading' }, 'Loading…'));
		nav.append(link);
		panels.append(panel);
		ctx.tabs[name] = { link, panel, draw, drawn: null };
	}
	ctx.selectTab = name => selectTab(ctx, name);
	ctx.seek = t => seekVideo(ctx, t);
	ctx.user = user;
	replace(main, h('div', { class: 'job-page', dataset: { job: ctx.id } }, header(ctx, user), nav, panels));
	window.addEventListener('hashchange', () => onHash(ctx));
	document.addEventListener('keydown', e => stepKeys(ctx, e));
	await onHash(ctx);
	if (ctx.job.assigned_worker_id) workerName(ctx, main);
}

// The worker's name in the header, once known (its id until then).
async function workerName(ctx, main) {
	try {
		const { workers } = await get('/api/v1/workers');
		const w = workers.find(x => x.id === ctx.job.assigned_worker_id);
		const a = main.querySelector('a.job-worker');
		if (w && a) a.textContent = `${w.host}:${w.instance}`;
	} catch (e) { /* the id stays */ }
}
