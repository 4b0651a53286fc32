// SPDX-License-Identifier: MIT
// job-data.js - what the job page reads, once: the job with its details
// (/api/v1/jobs/<id>/details: settings, modules, artefact names), each
// module's result-<module>.json (os-autoinst's results: steps, needles,
// areas, similarity), results.json (reason, needs review), the video index
// and the comments; artefacts are fetched only when the details list them.
// Screenshots come as openQA serves them: /tests/<id>/images/<name> and
// their thumbnails /tests/<id>/images/thumb/<name>.
import { get } from './api.js';

// The URL of one of the job's artefacts.
export function fileUrl(ctx, name) {
	return `/tests/${ctx.id}/file/${encodeURIComponent(name)}`;
}

// A screenshot's thumbnail (the server sends the screenshot itself for a
// job whose worker uploaded none).
export function thumbUrl(ctx, name) {
	return `/tests/${ctx.id}/images/thumb/${encodeURIComponent(name)}`;
}

// A screenshot, whole.
export function imageUrl(ctx, name) {
	return `/tests/${ctx.id}/images/${encodeURIComponent(name)}`;
}

// An artefact as JSON.
export async function fileJson(ctx, name) {
	return get(fileUrl(ctx, name));
}

// An artefact as text; at most `tail` bytes from its end when tail is given
// (a Range request), with `partial` set when the file is longer.
export async function fileText(ctx, name, tail) {
	const url = fileUrl(ctx, name);
	const r = await fetch(url, { credentials: 'same-origin', headers: tail ? { Range: `bytes=-${tail}` } : {} });
	if (r.status === 416) return { text: '', partial: false, size: 0 }; // an empty file has no last bytes
	if (!r.ok) throw new Error(`${url}: ${r.status} ${r.statusText}`);
	const text = await r.text();
	const cr = r.headers.get('Content-Range') || '';
	const m = cr.match(/^bytes (\d+)-(\d+)\/(\d+)$/);
	return { text, partial: r.status === 206 && m && Number(m[1]) > 0, size: m ? Number(m[3]) : text.length };
}

// The JSON of needle NAME as the runner copied it (needle-NAME.json), or null.
export function needleJson(ctx, name) {
	const file = `needle-${name}.json`;
	if (!ctx.logs.has(file)) return Promise.resolve(null);
	if (!ctx.needles.has(name)) ctx.needles.set(name, fileJson(ctx, file).catch(() => null));
	return ctx.needles.get(name);
}

export function needlePng(ctx, name) {
	const file = `needle-${name}.png`;
	return ctx.pngs.has(file) ? fileUrl(ctx, file) : null;
}

// A step's result as an openQA result name (for resultClass).
export function stepResult(d) {
	return { ok: 'passed', fail: 'failed', softfail: 'softfailed', unk: 'none' }[d.result] || 'none';
}

// The lowest area similarity (percent) of a match or of the best candidate.
export function stepSimilarity(d) {
	const areas = d.area || (d.needles && d.needles[0] && d.needles[0].area);
	if (!areas || !areas.length) return null;
	return Math.min(...areas.map(a => Number(a.similarity)));
}

export async function loadJob(id) {
	const [{ job }, comments] = await Promise.all([
		get(`/api/v1/jobs/${id}/details`).catch(e => {
			throw new Error(e.status === 404 ? `Job ${id} does not exist.` : `job ${id}: ${e.message}`);
		}),
		get(`/api/v1/jobs/${id}/comments`).catch(() => []),
	]);
	const ctx = {
		id, job, comments: Array.isArray(comments) ? comments : [],
		logs: new Set(job.logs || []), pngs: new Set(job.screenshots || []), ulogs: new Set(job.ulogs || []),
		needles: new Map(), modules: [], steps: [], videoIndex: [], reason: null, needsReview: false,
	};
	ctx.commentCount = ctx.comments.length;
	const mods = job.testresults || job.modules || [];
	const optional = name => (ctx.logs.has(name) ? fileJson(ctx, name).catch(() => null) : null);
	const [overall, index, ...results] = await Promise.all([optional('results.json'), optional('video_index.json'),
		...mods.map(m => optional(`result-${m.name}.json`))]);
	if (overall) {
		ctx.reason = overall.reason || null;
		ctx.needsReview = overall.needs_review === true;
	}
	ctx.videoIndex = Array.isArray(index) ? index : [];
	mods.forEach((m, i) => {
		const r = results[i] || {};
		const mod = {
			name: m.name, result: m.result, flags: m.flags || [], script: m.script,
			details: Array.isArray(r.details) ? r.details : [], haveResults: !!results[i],
			needsReview: r.needs_review === true, failMessage: r.fail_message || null,
			time: r.execution_time, source: r.source || null, steps: [],
			copiedFrom: Number.isInteger(r.copied_from) ? r.copied_from : null, // re-run from a milestone
		};
		mod.details.forEach((d, k) => {
			const st = { mod, n: k + 1, d, index: ctx.steps.length };
			mod.steps.push(st);
			ctx.steps.push(st);
		});
		ctx.modules.push(mod);
	});
	return ctx;
}

// The video time (s) of a step: the video index, else the step's frametime.
export function stepTime(ctx, st) {
	const e = ctx.videoIndex.find(x => x.module === st.mod.name && Number(x.step) === st.n);
	if (e && Number.isFinite(Number(e.time))) return Number(e.time);
	const ft = st.d.frametime && parseFloat(st.d.frametime[0]);
	return Number.isFinite(ft) ? ft : null;
}
