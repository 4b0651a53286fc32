// SPDX-License-Identifier: MIT
// job-info.js - the job page's tabs about the job rather than its run:
// #settings, #comments (bug references and http(s) URLs linked),
// #dependencies (chained parents and children), #next_previous (the same
// scenario's other results) and #investigation (the last good job of the
// scenario and what changed in the settings since).
import { h, replace, ago, resultClass } from './dom.js';
import { get, send } from './api.js';

const SCENARIO = [['distri', 'DISTRI'], ['version', 'VERSION'], ['flavor', 'FLAVOR'], ['arch', 'ARCH'],
	['test', 'TEST'], ['machine', 'MACHINE']];

// Bug trackers of openQA's bug references (marker -> URL an id is added to).
const TRACKERS = {
	bsc: 'https://bugzilla.suse.com/show_bug.cgi?id=', bnc: 'https://bugzilla.suse.com/show_bug.cgi?id=',
	boo: 'https://bugzilla.opensuse.org/show_bug.cgi?id=', bgo: 'https://bugzilla.gnome.org/show_bug.cgi?id=',
	bmo: 'https://bugzilla.mozilla.org/show_bug.cgi?id=', brc: 'https://bugzilla.redhat.com/show_bug.cgi?id=',
	bko: 'https://bugzilla.kernel.org/show_bug.cgi?id=', poo: 'https://progress.opensuse.org/issues/',
	gh: 'https://github.com/', kde: 'https://bugs.kde.org/show_bug.cgi?id=', kdi: 'https://invent.kde.org/',
	fdo: 'https://bugs.freedesktop.org/show_bug.cgi?id=', jsc: 'https://jira.suse.com/browse/',
	pio: 'https://pagure.io/', ggo: 'https://gitlab.gnome.org/', gfs: 'https://gitlab.com/fedora/sigs/',
	ffo: 'https://forge.fedoraproject.org/',
};

// The URL of a reference such as "bsc#123" or "gh#owner/repo#45", or null.
export function bugUrl(ref) {
	const m = ref.match(/^([a-z]+)#(?:([^#\s<>,]+)#)?((?:[A-Z]+-)?\d+)$/);
	if (!m || !TRACKERS[m[1]]) return null;
	const [, marker, repo, id] = m;
	return TRACKERS[marker] + (repo ? `${repo}/${marker === 'pio' ? 'issue' : 'issues'}/` : '') + id;
}

function escapeRe(s) {
	return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

// Text with its bug references (as the server found them) and http(s)
// URLs as links; everything else stays text.
export function linkify(text, bugrefs) {
	const refs = [...new Set((bugrefs || []).filter(r => bugUrl(r)))].sort((a, b) => b.length - a.length);
	const parts = refs.map(escapeRe).concat(['https?://[^\\s<>"\']+[^\\s<>"\'.,;:!?)\\]]']);
	const re = new RegExp(parts.join('|'), 'g');
	const out = [];
	let last = 0, m;
	while ((m = re.exec(text))) {
		if (m.index > last) out.push(text.slice(last, m.index));
		const url = /^https?:/.test(m[0]) ? m[0] : bugUrl(m[0]);
		out.push(h('a', { href: url, rel: 'noopener noreferrer', class: /^https?:/.test(m[0]) ? null : 'job-bugref' }, m[0]));
		last = m.index + m[0].length;
	}
	if (last < text.length) out.push(text.slice(last));
	return out;
}

function jobLink(j) {
	return h('a', { href: `/tests/${j.id}` }, '#' + j.id);
}

function outcome(j) {
	return h('span', { class: resultClass(j.result, j.state) }, j.state === 'done' ? j.result : j.state);
}

export async function renderSettings(panel, ctx) {
	const s = ctx.job.settings || {};
	const keys = Object.keys(s).sort();
	replace(panel, keys.length ? h('table', { class: 'job-settings' },
		h('thead', {}, h('tr', {}, h('th', {}, 'Key'), h('th', {}, 'Value'))),
		h('tbody', {}, keys.map(k => h('tr', { dataset: { key: k } }, h('td', { class: 'job-key' }, k),
			h('td', { class: 'job-value' }, /^https?:\/\/\S+$/.test(s[k]) ? h('a', { href: s[k], rel: 'noopener noreferrer' }, s[k]) : s[k])))))
		: h('p', { class: 'muted' }, 'This job has no settings.'));
}

// Whether user may write comments (openQA: operators and admins).
function mayComment(user) {
	return !!user && (user.role === 'operator' || user.role === 'admin');
}

// A comment's text as an editor with Save and Cancel, in place of the text.
function editor(ctx, c, article, redraw) {
	const text = h('textarea', { name: 'text', rows: 3, class: 'job-comment-input', 'aria-label': 'comment' });
	text.value = c.text || '';
	const msg = h('span', { class: 'muted', role: 'status' });
	const form = h('form', { class: 'job-comment-form job-comment-editor', onsubmit: async e => {
		e.preventDefault();
		msg.textContent = 'Saving…';
		try {
			await send('PUT', `/api/v1/jobs/${ctx.id}/comments/${c.id}`, { text: text.value });
			ctx.comments = await get(`/api/v1/jobs/${ctx.id}/comments`);
			redraw();
		} catch (err) {
			msg.textContent = err.message;
		}
	} }, text, h('div', {}, h('button', { type: 'submit', class: 'job-comment-save' }, 'Save'), ' ',
		h('button', { type: 'button', onclick: redraw }, 'Cancel'), ' ', msg));
	article.querySelector('.job-comment-text').replaceWith(form);
	text.focus();
}

function comment(ctx, c, redraw) {
	// The server decides who may edit (the author); the button is offered to them only.
	const mine = mayComment(ctx.user) && c.userName === ctx.user.name;
	const article = h('article', { class: 'job-comment', dataset: { id: c.id } },
		h('header', {}, h('strong', { class: 'job-comment-author' }, c.userName || 'someone'), ' ',
			h('span', { class: 'muted', title: c.created }, c.created ? ago(c.created.replace(' ', 'T').replace(/ \+0000$/, 'Z')) : ''),
			c.updated && c.updated !== c.created ? h('span', { class: 'muted' }, ' (edited)') : null,
			mine ? [' ', h('button', { type: 'button', class: 'link job-comment-edit', onclick: () => editor(ctx, c, article, redraw) }, 'Edit')] : null),
		h('p', { class: 'job-comment-text' }, linkify(c.text || '', c.bugrefs)));
	return article;
}

export async function renderComments(panel, ctx) {
	const list = h('div', { class: 'job-comments' });
	const draw = () => {
		replace(list, ctx.comments.length ? ctx.comments.map(c => comment(ctx, c, draw)) : h('p', { class: 'muted' }, 'No comments.'));
		ctx.tabs.comments.link.textContent = ctx.comments.length ? `Comments (${ctx.comments.length})` : 'Comments';
	};
	draw();
	let form = null;
	if (mayComment(ctx.user)) {
		const text = h('textarea', { name: 'text', rows: 3, class: 'job-comment-input', 'aria-label': 'comment', required: true });
		const msg = h('span', { class: 'muted', role: 'status' });
		form = h('form', { class: 'job-comment-form', onsubmit: async e => {
			e.preventDefault();
			msg.textContent = 'Saving…';
			try {
				await send('POST', `/api/v1/jobs/${ctx.id}/comments`, { text: text.value });
				ctx.comments = await get(`/api/v1/jobs/${ctx.id}/comments`);
				text.value = '';
				msg.textContent = '';
				draw();
			} catch (err) {
				msg.textContent = err.message;
			}
		} }, text, h('div', {}, h('button', { type: 'submit', class: 'job-comment-add' }, 'Add comment'), ' ', msg));
	}
	replace(panel, list, form);
}

export async function renderDependencies(panel, ctx) {
	const j = ctx.job;
	const groups = [['Parents', j.parents || {}], ['Children', j.children || {}]];
	const ids = groups.flatMap(([, g]) => Object.values(g).flat());
	if (!ids.length) {
		replace(panel, h('p', { class: 'muted' }, 'This job has no dependencies.'));
		return;
	}
	const { jobs } = await get('/api/v1/jobs', { ids: ids.join(',') });
	const byId = new Map(jobs.map(x => [x.id, x]));
	replace(panel, groups.map(([title, g]) => {
		const rows = Object.entries(g).flatMap(([kind, list]) => list.map(id => {
			const x = byId.get(id) || { id };
			return h('li', { class: 'job-dep', dataset: { id, kind } }, jobLink(x), ' ', x.name || '', ' ',
				x.state ? outcome(x) : null, h('span', { class: 'muted' }, ` (${kind.toLowerCase()})`));
		}));
		return [h('h3', {}, title), rows.length ? h('ul', { class: 'job-deps' }, rows) : h('p', { class: 'muted' }, 'None.')];
	}));
}

// The jobs of this job's scenario, newest first (fetched once).
function scenarioJobs(ctx) {
	if (!ctx.scenario) {
		const s = ctx.job.settings || {}, params = { limit: 200 };
		for (const [p, k] of SCENARIO) params[p] = s[k] || '';
		ctx.scenario = get('/api/v1/jobs', params).then(r => r.jobs.sort((a, b) => b.id - a.id));
	}
	return ctx.scenario;
}

export async function renderNextPrevious(panel, ctx) {
	const jobs = await scenarioJobs(ctx);
	const s = ctx.job.settings || {};
	replace(panel,
		h('p', { class: 'muted' }, 'Results of the scenario ', h('code', {}, SCENARIO.map(([, k]) => s[k] || '-').join(' / ')), ', newest first.'),
		h('div', { class: 'scroll' }, h('table', { class: 'job-scenario' },
			h('thead', {}, h('tr', {}, h('th', {}, 'Job'), h('th', {}, 'Result'), h('th', {}, 'Build'), h('th', {}, 'Finished'))),
			h('tbody', {}, jobs.map(x => h('tr', { class: x.id === ctx.id ? 'job-current' : null, dataset: { id: x.id } },
				h('td', {}, x.id === ctx.id ? h('strong', {}, '#' + x.id, ' (this job)') : jobLink(x)),
				h('td', {}, outcome(x)),
				h('td', {}, (x.settings && x.settings.BUILD) || ''),
				h('td', { class: 'muted' }, x.t_finished ? ago(x.t_finished) : '')))))));
}

export async function renderInvestigation(panel, ctx) {
	const j = ctx.job;
	if (j.state === 'done' && (j.result === 'passed' || j.result === 'softfailed')) {
		replace(panel, h('p', { class: 'muted' }, `This job ${j.result}: nothing to investigate.`));
		return;
	}
	const jobs = await scenarioJobs(ctx);
	const good = jobs.find(x => x.id < ctx.id && x.state === 'done' && (x.result === 'passed' || x.result === 'softfailed'));
	const failed = ctx.modules.find(m => m.result === 'failed');
	const first = failed ? h('p', {}, 'First failed module: ', h('a', { href: `#step/${encodeURIComponent(failed.name)}/${Math.max(1, failed.steps.findIndex(st => st.d.result === 'fail') + 1)}` }, failed.name),
		failed.failMessage ? [': ', h('span', { class: 'job-fail-msg' }, failed.failMessage)] : null) : null;
	if (!good) {
		replace(panel, first, h('p', { class: 'muted' }, 'No earlier job of this scenario passed: nothing to compare with.'));
		return;
	}
	const a = good.settings || {}, b = j.settings || {};
	const skip = new Set(['NAME']);
	const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].filter(k => !skip.has(k) && a[k] !== b[k]).sort();
	replace(panel, first,
		h('p', {}, 'Last good job of the scenario: ', jobLink(good), ' ', outcome(good),
			good.settings && good.settings.BUILD ? ` (build ${good.settings.BUILD})` : ''),
		keys.length ? h('div', { class: 'scroll' }, h('table', { class: 'job-diff' },
			h('thead', {}, h('tr', {}, h('th', {}, 'Setting'), h('th', {}, `#${good.id} (good)`), h('th', {}, `#${ctx.id} (this job)`))),
			h('tbody', {}, keys.map(k => h('tr', {}, h('td', { class: 'job-key' }, k),
				h('td', {}, a[k] === undefined ? h('span', { class: 'muted' }, '(unset)') : a[k]),
				h('td', {}, b[k] === undefined ? h('span', { class: 'muted' }, '(unset)') : b[k]))))))
			: h('p', { class: 'muted' }, 'The settings are the same as the last good job’s.'));
}
