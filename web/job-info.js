// SPDX-License-Identifier: MIT
// job-info.js - the job page's tabs about the job rather than its run:
// #settings, #comments (bug references and http(s) URLs linked),
// #dependencies (chained and parallel parents and children), #next_previous (the same
// scenario's other results) and #investigation (openQA's investigation_ajax:
// the last good job of the scenario, what changed in settings, test code and
// needles since, the first failing step beside the good run's; RETRY runs).
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

// One step of a job as the investigation shows it: its screenshot (or
// text), the tags it checked and the needle that matched or came closest.
function stepCard(title, st) {
	if (!st) return h('div', { class: 'inv-step' }, h('h4', {}, title), h('p', { class: 'muted' }, 'The last good run has no such step.'));
	const best = (st.needles || []).slice().sort((x, y) => (x.error ?? 1) - (y.error ?? 1))[0];
	const sims = n => (n.area || []).map(a => `${a.similarity} %`).join(', ');
	return h('div', { class: 'inv-step', dataset: { job: st.job } },
		h('h4', {}, title, ': ', h('a', { href: `/tests/${st.job}#step/${encodeURIComponent(st.module)}/${st.step}` }, `#${st.job} ${st.module} step ${st.step}`),
			' ', h('span', { class: `cell ${st.result === 'fail' ? 'r-failed' : 'r-passed'}` }, st.result || '')),
		st.screenshot ? h('img', { class: 'inv-shot', alt: `screenshot of job ${st.job}, ${st.module} step ${st.step}`,
			src: `/tests/${st.job}/images/${encodeURIComponent(st.screenshot)}` })
			: st.text ? h('p', { class: 'muted' }, `text result ${st.text}`) : null,
		st.tags ? h('p', {}, 'Tags: ', h('code', {}, st.tags.join(', '))) : null,
		st.needle ? h('p', {}, 'Matched ', h('code', {}, st.needle), st.area ? ` (${sims(st)})` : '')
			: best ? h('p', {}, 'Best candidate ', h('code', {}, best.name), ` (${sims(best)})`) : null);
}

function notUsed() {
	return h('span', { class: 'muted' }, 'not used');
}

function linkText(l) {
	return l && typeof l === 'object' ? h('a', { href: l.link }, `#${l.text}`) : h('span', { class: 'muted' }, String(l || 'not found'));
}

export async function renderInvestigation(panel, ctx) {
	const j = ctx.job;
	const [inv, rev] = await Promise.all([get(`/tests/${ctx.id}/investigation_ajax`),
		get(`/api/v1/jobs/${ctx.id}/review`).catch(() => null)]);
	const retry = rev && rev.retry_verdict ? h('p', { class: 'inv-retry' }, `RETRY: ${rev.retry_verdict}; runs `,
		rev.runs.map((r, i) => [i ? ' → ' : '', r.id === ctx.id ? h('strong', {}, `#${r.id}`) : h('a', { href: `/tests/${r.id}` }, `#${r.id}`), ` ${r.result}`])) : null;
	const reason = rev && rev.reason !== 'GOOD' ? h('p', {}, 'Failure reason (what carry-over compares): ', h('code', {}, rev.reason)) : null;
	if (j.state === 'done' && (j.result === 'passed' || j.result === 'softfailed')) {
		replace(panel, retry, h('p', { class: 'muted' }, `This job ${j.result}: nothing to investigate.`));
		return;
	}
	if (inv.error || typeof inv.last_good !== 'object') {
		replace(panel, retry, reason, h('p', { class: 'muted' }, inv.error ? 'No earlier job of this scenario finished: nothing to compare with.'
			: 'No earlier job of this scenario passed: nothing to compare with.'),
			inv.first_bad ? h('p', {}, 'First failure of the scenario: ', linkText(inv.first_bad)) : null);
		return;
	}
	const good = inv.last_good_id;
	const sd = inv.settings_diff || [];
	const nd = inv.needles_diff || [];
	const ff = inv.first_failure;
	const unset = v => v === null || v === undefined ? h('span', { class: 'muted' }, '(unset)') : v;
	replace(panel, retry, reason,
		h('p', {}, 'Last good job of the scenario: ', linkText(inv.last_good),
			inv.first_bad ? [', first failure since: ', linkText(inv.first_bad)] : null),
		h('h3', {}, 'Settings'),
		sd.length ? h('div', { class: 'scroll' }, h('table', { class: 'job-diff inv-settings' },
			h('thead', {}, h('tr', {}, h('th', {}, 'Setting'), h('th', {}, `#${good} (good)`), h('th', {}, `#${ctx.id} (this job)`))),
			h('tbody', {}, sd.map(r => h('tr', {}, h('td', { class: 'job-key' }, r.key), h('td', {}, unset(r.last_good)), h('td', {}, unset(r.this)))))))
			: h('p', { class: 'muted' }, inv.diff_to_last_good && !sd.length && inv.diff_to_last_good.startsWith('not known') ? inv.diff_to_last_good : 'The settings are the same as the last good job’s.'),
		h('h3', {}, 'Test code'),
		h('pre', { class: 'inv-log' }, inv.test_log || ''),
		h('h3', {}, 'Needles'),
		nd.length ? h('div', { class: 'scroll' }, h('table', { class: 'job-diff inv-needles' },
			h('thead', {}, h('tr', {}, h('th', {}, 'Needle'), h('th', {}, `#${good} (good)`), h('th', {}, `#${ctx.id} (this job)`))),
			h('tbody', {}, nd.map(r => h('tr', {}, h('td', { class: 'job-key' }, r.name, r.changed ? h('span', { class: 'muted' }, ' (file changed)') : null),
				h('td', {}, r.last_good || notUsed()), h('td', {}, r.this || notUsed()))))))
			: h('p', { class: 'muted' }, 'The same needles matched as in the last good job.'),
		h('h3', {}, 'First failing step'),
		ff ? h('div', { class: 'inv-side' }, stepCard('This job', ff.this), stepCard('Last good', ff.last_good))
			: h('p', { class: 'muted' }, 'No failed step with results to compare.'));
}
