// SPDX-License-Identifier: MIT
// rejudge.js - re-judging without re-running: renderRejudge(container,
// jobId) asks POST /api/v1/jobs/<id>/rejudge (the job's failed screen
// checks and those of its build's failed jobs on the same tags, judged
// again on their stored screenshots with the distribution's needles now)
// and shows per job which steps would now pass (thumbnail linking to the
// step), which still fail and why, and the honest note: a failed
// assert_screen stopped its module, so no job is "passed" until it runs on.
// The needle editor calls it after a save; the job page's Re-judge button too.
import { h, replace } from './dom.js';
import { send } from './api.js';

const VERDICT_CLASS = {
	would_run_on: 'rj-pass', checks_would_match: 'rj-pass', still_failing: 'rj-fail',
	other_failure: 'rj-fail', nothing: 'rj-none',
};

// "100 %" or "83 % < 96 %" for each match area of a judged candidate.
function figures(nj) {
	return (nj.areas || []).map(a => a.ok ? `${a.similarity} %` : `${a.similarity} % < ${a.required} %`).join(', ');
}

function stepHref(jobId, st) {
	return `/tests/${jobId}#step/${encodeURIComponent(st.module)}/${st.step}`;
}

function stepRow(jobId, st) {
	const nj = st.new, old = st.old || {};
	const was = old.needle ? `was ${old.result === 'unk' ? 'no match' : old.result}: best ${old.needle} ${old.similarity ?? '?'} %`
		: `was ${old.result === 'unk' ? 'no match' : old.result}`;
	let now;
	if (!nj) now = h('span', { class: 'rj-fail' }, 'not judged: ', st.error || 'no screenshot');
	else if (st.would_pass) {
		now = h('span', { class: 'rj-pass' }, `would ${nj.result === 'softfail' ? 'soft-fail (workaround)' : 'pass'} with `,
			h('code', {}, nj.needle), ` (${figures(nj)})`);
	} else if (nj.needle) {
		now = h('span', { class: 'rj-fail' }, 'still fails: best ', h('code', {}, nj.needle), ` (${figures(nj)})`);
	} else now = h('span', { class: 'rj-fail' }, 'still fails: ', nj.note || 'no candidate');
	const thumb = `/tests/${jobId}/images/thumb/${encodeURIComponent(st.screenshot)}`;
	return h('li', { class: 'rj-step ' + (st.would_pass ? 'rj-step-pass' : 'rj-step-fail'), dataset: { module: st.module, step: st.step } },
		h('a', { href: stepHref(jobId, st), class: 'rj-thumb', title: `${st.module} step ${st.step}` },
			h('img', { src: thumb, alt: `${st.module} step ${st.step}`, loading: 'lazy', width: 120, height: 90 })),
		h('div', { class: 'rj-step-text' },
			h('a', { href: stepHref(jobId, st) }, `${st.module} step ${st.step}`),
			` ${st.check} `, h('span', { class: 'muted' }, (st.tags || []).join(', ')),
			h('div', { class: 'rj-now' }, now),
			h('div', { class: 'muted rj-was' }, was)));
}

function jobBlock(job, asked) {
	const cls = VERDICT_CLASS[job.verdict] || 'rj-none';
	return h('section', { class: 'rj-job', dataset: { job: job.id, verdict: job.verdict } },
		h('h4', {}, h('a', { href: `/tests/${job.id}` }, `#${job.id} ${job.test}`),
			job.machine ? h('span', { class: 'muted' }, ` @${job.machine}`) : null,
			job.id === asked ? h('span', { class: 'job-tag' }, 'this job') : null,
			h('span', { class: 'rj-count' }, ` ${job.would_pass} would pass, ${job.still_failing} still fail`)),
		h('p', { class: 'rj-note ' + cls }, job.summary),
		job.verdict === 'would_run_on' && job.failed_module
			? h('p', { class: 'muted rj-runon', dataset: { module: job.failed_module } },
				`Its stored result stays "${job.result}": run it on from module ${job.failed_module} to know the rest.`)
			: null,
		job.steps.length ? h('ul', { class: 'rj-steps' }, job.steps.map(st => stepRow(job.id, st))) : null);
}

// Re-judge jobId and show the answer in container; resolves to the answer
// (or null when the server refused, the reason shown).
export async function renderRejudge(container, jobId) {
	replace(container, h('p', { class: 'loading rj-busy' }, 'Re-judging the stored screenshots…'));
	let r;
	try {
		// the session's CSRF token for the write (one fetch per page, shared)
		await import('./session.js').then(m => m.currentSession()).catch(() => null);
		r = await send('POST', `/api/v1/jobs/${jobId}/rejudge`);
	} catch (e) {
		replace(container, h('p', { class: 'error rj-error' }, `Not re-judged: ${e.message}`));
		return null;
	}
	const jobs = r.jobs || [];
	const steps = jobs.reduce((n, j) => n + j.steps.length, 0);
	const pass = jobs.reduce((n, j) => n + j.would_pass, 0);
	replace(container, h('div', { class: 'rj', dataset: { job: jobId } },
		h('p', { class: 'rj-head' },
			`${steps} failed check${steps === 1 ? '' : 's'} in ${jobs.length} job${jobs.length === 1 ? '' : 's'} of build ${r.build.build} `,
			`re-judged with ${r.needles} needles of ${r.build.distri} as they are now in ${Math.round(r.ms)} ms: `,
			h('strong', {}, `${pass} would pass`), '.'),
		h('p', { class: 'muted rj-honest' }, 'A stored screenshot shows one moment: a failed assert_screen stopped its module, ',
			'so a step that would pass means the job must run on from there, not that it passed. No stored result was changed.'),
		jobs.map(j => jobBlock(j, Number(jobId)))));
	return r;
}
