// SPDX-License-Identifier: MIT
// job-details.js - the job page's #details tab: each module with its
// result and its steps as thumbnails (matched areas drawn over them, the
// similarity under them; the runner's small thumbnails, so a long job's
// page stays light); a step opened (#step/<module>/<n>) shows the
// whole screenshot with the needle's areas (match green, failed red,
// excluded grey) and, for a failed or near-miss check, the best candidate
// needle beside it. Keys: j/k (or arrows) walk the steps, n finds the next
// failed one, Esc closes.
import { h, replace, resultClass } from './dom.js';
import { imageUrl, thumbUrl, fileText, needleJson, needlePng, stepResult, stepSimilarity, stepTime } from './job-data.js';
import { rerunParts } from './job-rerun.js';

// The size the runner normalises screens to (XRES x YRES); a picture of
// another size is measured when it loads.
const SCREEN_W = 1024, SCREEN_H = 768;

const KIND_LABEL = { ok: 'matched', fail: 'failed', exclude: 'excluded', ocr: 'ocr' };

// The size of the job's screens (the runner's XRES x YRES).
function screenSize(ctx) {
	const s = ctx.job.settings || {};
	return [Number(s.XRES) || SCREEN_W, Number(s.YRES) || SCREEN_H];
}

// A picture with boxes over it, placed in percent of the picture's size so
// they scale with it. areas: [{x, y, w, h, kind, label}]. A thumbnail's
// areas are in the coordinates of the screen it shrinks (screen: [w, h]),
// whatever size the picture has.
export function shot(src, areas, alt, cls, screen) {
	const boxes = areas.map(a => h('span', { class: `job-box job-box-${a.kind}`, title: a.title || KIND_LABEL[a.kind] },
		a.label ? h('span', { class: 'job-box-label' }, a.label) : null));
	const place = (w, h0) => areas.forEach((a, i) => {
		const s = boxes[i].style;
		s.left = `${(a.x / w) * 100}%`;
		s.top = `${(a.y / h0) * 100}%`;
		s.width = `${(a.w / w) * 100}%`;
		s.height = `${(a.h / h0) * 100}%`;
	});
	const [sw, sh] = screen || [SCREEN_W, SCREEN_H];
	place(sw, sh);
	// Thumbnails load as they come into view; an opened step's pictures at once.
	const thumb = cls === 'job-thumb-shot';
	const img = h('img', { src, alt, loading: thumb ? 'lazy' : 'eager', decoding: 'async', width: sw, height: sh });
	if (!screen) {
		img.addEventListener('load', () => {
			if (img.naturalWidth && (img.naturalWidth !== sw || img.naturalHeight !== sh))
				place(img.naturalWidth, img.naturalHeight);
		});
	}
	return h('div', { class: 'job-shot' + (cls ? ' ' + cls : '') }, img, boxes);
}

// The areas a step's check found on the screen (x, y, w, h, result, similarity).
function foundAreas(list) {
	return (list || []).map(a => ({ x: a.x, y: a.y, w: a.w, h: a.h, kind: a.result === 'ok' ? 'ok' : 'fail',
		label: `${a.similarity}%`, title: `${KIND_LABEL[a.result === 'ok' ? 'ok' : 'fail']}, similarity ${a.similarity}%` }));
}

// The needle's own areas (its JSON: xpos, ypos, width, height, type),
// shifted by dx/dy; match areas take the result of the found area.
function needleAreas(nj, found, dx, dy, only) {
	let k = 0;
	return ((nj && nj.area) || []).map(a => {
		const type = a.type || 'match';
		let kind = type === 'match' ? 'ok' : type;
		if (type === 'match') {
			const f = (found || [])[k++];
			kind = f && f.result !== 'ok' ? 'fail' : 'ok';
		}
		return { x: a.xpos + dx, y: a.ypos + dy, w: a.width, h: a.height, kind };
	}).filter(a => !only || only.includes(a.kind));
}

// Where the needle's first match area was found, relative to its place.
function offset(nj, found) {
	const m = nj && (nj.area || []).find(a => (a.type || 'match') === 'match');
	const f = found && found[0];
	return m && f ? [f.x - m.xpos, f.y - m.ypos] : [0, 0];
}

function stepClass(st) {
	return resultClass(stepResult(st.d));
}

function stepLabel(st) {
	const d = st.d;
	if (d.text) return d.title || 'text';
	if (d.result === 'unk') return 'no match';
	if (d.needle) return d.needle;
	return { ok: 'screenshot', fail: 'failed', softfail: 'soft failure' }[d.result] || d.result || '';
}

function seekButton(ctx, st) {
	const t = stepTime(ctx, st);
	if (t === null || !ctx.tabs.video) return null;
	return h('button', { type: 'button', class: 'job-seek', title: `play the video from ${t.toFixed(2)} s`,
		'aria-label': `play ${st.mod.name} step ${st.n} in the video`, onclick: () => ctx.seek(t) }, '▶');
}

function tile(ctx, st) {
	const d = st.d, sim = stepSimilarity(d);
	const href = `#step/${encodeURIComponent(st.mod.name)}/${st.n}`;
	let face;
	if (d.screenshot && ctx.pngs.has(d.screenshot)) {
		// A check that missed on its way (unk) marks nothing; a failed one its best candidate.
		const found = d.area || (d.result === 'fail' && d.needles && d.needles[0] && d.needles[0].area) || [];
		const areas = foundAreas(found).map(a => ({ ...a, label: null }));
		face = shot(thumbUrl(ctx, d.screenshot), areas, `${st.mod.name} step ${st.n}`, 'job-thumb-shot', screenSize(ctx));
	} else if (d.text) {
		face = h('div', { class: 'job-thumb-text' }, h('span', { class: 'job-thumb-icon', 'aria-hidden': 'true' }, '≡'), d.title || 'text');
	} else {
		face = h('div', { class: 'job-thumb-text' }, stepLabel(st));
	}
	return h('div', { class: `job-step ${stepClass(st)}`, dataset: { module: st.mod.name, step: st.n } },
		h('a', { class: 'job-thumb', href, title: `${st.mod.name} step ${st.n}: ${stepLabel(st)}` }, face),
		h('div', { class: 'job-step-foot' },
			h('span', { class: 'job-step-n' }, String(st.n)),
			sim !== null ? h('span', { class: 'job-sim', title: 'similarity' }, `${sim}%`) : null,
			seekButton(ctx, st)));
}

function flagTags(mod) {
	return mod.flags.filter(f => f !== 'important').map(f => h('span', { class: 'job-tag' }, f));
}

function moduleSection(ctx, mod) {
	return h('section', { class: 'job-module', dataset: { module: mod.name } },
		h('div', { class: 'job-module-head' },
			h('h3', { class: 'job-module-name' }, mod.name),
			h('span', { class: 'job-module-result ' + resultClass(mod.result) }, mod.result || 'none'),
			mod.needsReview ? h('span', { class: 'job-tag job-review' }, 'near miss: needs review') : null,
			flagTags(mod),
			Number.isFinite(mod.time) ? h('span', { class: 'muted job-module-time' }, `${mod.time} s`) : null,
			mod.source ? h('a', { href: `#source/${encodeURIComponent(mod.name)}`, class: 'job-module-src' }, 'source') : null,
			rerunParts(ctx, mod)),
		mod.failMessage ? h('p', { class: 'job-fail-msg' }, mod.failMessage) : null,
		mod.steps.length ? h('div', { class: 'job-steps' }, mod.steps.map(st => tile(ctx, st)))
			: h('p', { class: 'muted job-nosteps' }, mod.haveResults ? 'No steps recorded.' : 'Not run.'));
}

export function keysHelp() {
	const k = s => h('kbd', {}, s);
	return h('p', { class: 'job-keys muted' }, 'Keys: ', k('j'), ' or ', k('→'), ' next step · ', k('k'), ' or ', k('←'),
		' previous step · ', k('n'), ' next failed step · ', k('Esc'), ' close the step');
}

export async function renderDetails(panel, ctx) {
	if (!ctx.modules.length) {
		const j = ctx.job;
		replace(panel, h('p', { class: 'muted' }, j.state === 'done' || j.state === 'cancelled'
			? 'This job recorded no test modules.' : `This job is ${j.state}: no results yet.`));
		return;
	}
	replace(panel, keysHelp(), ctx.modules.map(m => moduleSection(ctx, m)));
}

// --- one step, opened -------------------------------------------------------

function figure(caption, body) {
	return h('figure', { class: 'job-figure' }, body, h('figcaption', {}, caption));
}

async function candidateView(ctx, st, which, box) {
	const d = st.d, cands = d.needles || [];
	const c = cands[which];
	const nj = await needleJson(ctx, c.name);
	const [dx, dy] = offset(nj, c.area);
	const onScreen = foundAreas(c.area).concat(needleAreas(nj, c.area, dx, dy, ['exclude']));
	const sim = stepSimilarity({ area: c.area });
	const png = needlePng(ctx, c.name);
	const right = png
		? shot(png, needleAreas(nj, c.area, 0, 0), `needle ${c.name}`, 'job-full')
		: h('div', { class: 'job-missing' }, `The picture of needle ${c.name} is not among the job's artefacts.`);
	replace(box,
		cands.length > 1 ? h('div', { class: 'job-cands', role: 'group', 'aria-label': 'candidate needles' },
			cands.map((x, i) => h('button', { type: 'button', class: 'job-cand' + (i === which ? ' job-cand-on' : ''),
				'aria-pressed': i === which ? 'true' : 'false', onclick: () => candidateView(ctx, st, i, box) },
			`${x.name} ${stepSimilarity({ area: x.area }) ?? '?'}%`))) : null,
		h('div', { class: 'job-compare' },
			figure('Screenshot, with the candidate’s areas where they were searched best',
				shot(imageUrl(ctx, d.screenshot), onScreen, `${st.mod.name} step ${st.n}`, 'job-full')),
			figure(h('span', {}, 'Best candidate needle ', h('code', { class: 'job-cand-name' }, c.name),
				sim !== null ? ` (${sim}%)` : ''), right)));
}

async function stepBody(ctx, st, body) {
	const d = st.d;
	if (d.text) {
		const pre = h('pre', { class: 'job-steptext' }, 'Loading…');
		replace(body, pre);
		try {
			pre.textContent = (await fileText(ctx, d.text)).text;
		} catch (e) {
			pre.textContent = `${d.text} could not be read: ${e.message}`;
		}
		return;
	}
	if (!d.screenshot || !ctx.pngs.has(d.screenshot)) {
		replace(body, h('p', { class: 'muted' }, 'No screenshot for this step.'));
		return;
	}
	const src = imageUrl(ctx, d.screenshot);
	if (d.area) {
		const nj = await needleJson(ctx, d.needle);
		const [dx, dy] = offset(nj, d.area);
		const areas = foundAreas(d.area).concat(needleAreas(nj, d.area, dx, dy, ['exclude', 'ocr']));
		replace(body, figure(h('span', {}, 'Matched needle ', h('code', {}, d.needle)),
			shot(src, areas, `${st.mod.name} step ${st.n}`, 'job-full')));
	} else if (d.needles && d.needles.length) {
		const box = h('div', { class: 'job-candidates' });
		replace(body, box);
		await candidateView(ctx, st, 0, box);
		// loaded when a failed check is opened: the page itself never needs it
		const { explainStep } = await import('./job-explain.js');
		body.append(await explainStep(ctx, st) || '');
	} else {
		replace(body, figure(d.tags ? `No needle carries the tag(s) ${d.tags.join(', ')}` : 'Screenshot',
			shot(src, [], `${st.mod.name} step ${st.n}`, 'job-full')));
	}
	if (d.ocr && d.ocr.length) body.append(h('p', { class: 'job-ocr' }, 'Text read (OCR): ', h('code', {}, d.ocr.join(' | '))));
}

function stepView(ctx, st) {
	const d = st.d, sim = stepSimilarity(d), t = stepTime(ctx, st);
	const go = delta => moveTo(ctx, ctx.steps[st.index + delta]);
	const body = h('div', { class: 'job-sv-body' }, h('p', { class: 'loading' }, 'Loading…'));
	const facts = [
		h('span', { class: 'job-badge ' + stepClass(st) }, d.result === 'unk' ? 'no match' : stepResult(d)),
		sim !== null ? h('span', { class: 'job-sim' }, `similarity ${sim}%`) : null,
		d.needs_review ? h('span', { class: 'job-tag job-review' }, 'near miss: needs review') : null,
		d.tags && !d.area ? h('span', { class: 'muted' }, 'tags: ', d.tags.join(', ')) : null,
		d.line && st.mod.source ? h('a', { href: `#source/${encodeURIComponent(st.mod.name)}/${d.line}`, class: 'job-sv-line' },
			`${st.mod.source.file}:${d.line}`) : null,
		d.screenshot && ctx.pngs.has(d.screenshot) ? h('a', { class: 'job-sv-edit',
			href: `/tests/${ctx.id}/modules/${encodeURIComponent(st.mod.name)}/steps/${st.n}/edit` }, 'Edit needle') : null,
	];
	const view = h('div', { class: 'job-stepview', dataset: { module: st.mod.name, step: st.n }, tabindex: '-1' },
		h('div', { class: 'job-sv-head' },
			h('h4', {}, `${st.mod.name} — step ${st.n} of ${st.mod.steps.length}`),
			h('div', { class: 'job-sv-facts' }, facts),
			h('div', { class: 'job-sv-nav' },
				h('button', { type: 'button', class: 'job-sv-prev', disabled: st.index === 0, onclick: () => go(-1) }, '‹ Previous'),
				h('button', { type: 'button', class: 'job-sv-next', disabled: st.index === ctx.steps.length - 1, onclick: () => go(1) }, 'Next ›'),
				t !== null && ctx.tabs.video ? h('button', { type: 'button', class: 'job-sv-seek', onclick: () => ctx.seek(t) }, `▶ Video at ${t.toFixed(2)} s`) : null,
				h('button', { type: 'button', class: 'job-sv-close', 'aria-label': 'close the step', onclick: () => moveTo(ctx, null) }, '×'))),
		body);
	view.ready = stepBody(ctx, st, body).catch(e => replace(body, h('p', { class: 'error' }, e.message)));
	return view;
}

// Show step n of module (or close the open step when module is null).
export function openStep(ctx, module, n, scroll) {
	const panel = ctx.tabs.details.panel;
	for (const el of panel.querySelectorAll('.job-stepview')) el.remove();
	for (const el of panel.querySelectorAll('.job-step-on')) el.classList.remove('job-step-on');
	ctx.step = null;
	if (module === null) return;
	const mod = ctx.modules.find(m => m.name === module);
	const st = mod && mod.steps[n - 1];
	if (!st) {
		panel.prepend(h('p', { class: 'error job-stepview' }, `No step ${n} in module ${module}.`));
		return;
	}
	ctx.step = st;
	const section = panel.querySelector(`.job-module[data-module="${CSS.escape(module)}"]`);
	const tileEl = section.querySelector(`.job-step[data-step="${n}"]`);
	if (tileEl) tileEl.classList.add('job-step-on');
	const view = stepView(ctx, st);
	section.append(view);
	if (scroll) {
		// Bring the step's head into view once its pictures are in place
		// (the page may be too short to scroll before), leaving the page
		// be when the head shows already.
		view.ready.then(() => {
			const top = view.getBoundingClientRect().top;
			if (view.isConnected && (top < 0 || top > window.innerHeight * 0.6)) view.scrollIntoView({ block: 'start' });
		});
		view.focus({ preventScroll: true });
	}
}

// Open st (null: close), recording it in the hash without a history entry.
function moveTo(ctx, st) {
	const hash = st ? `#step/${encodeURIComponent(st.mod.name)}/${st.n}` : '#details';
	history.replaceState(null, '', hash);
	if (ctx.tab !== 'details') ctx.selectTab('details');
	openStep(ctx, st ? st.mod.name : null, st ? st.n : 0, true);
}

export function stepKeys(ctx, e) {
	if (e.ctrlKey || e.metaKey || e.altKey || e.defaultPrevented) return;
	const t = e.target;
	if (t && (t.isContentEditable || /^(INPUT|TEXTAREA|SELECT|VIDEO|AUDIO)$/.test(t.tagName))) return;
	if (!ctx.steps.length || ctx.tab !== 'details') return;
	const cur = ctx.step ? ctx.step.index : -1;
	let next;
	if (e.key === 'j' || e.key === 'ArrowRight') next = ctx.steps[Math.min(cur + 1, ctx.steps.length - 1)];
	else if (e.key === 'k' || e.key === 'ArrowLeft') next = ctx.steps[Math.max(cur - 1, 0)];
	else if (e.key === 'n') {
		const failed = st => st.d.result === 'fail';
		next = ctx.steps.slice(cur + 1).find(failed) || ctx.steps.slice(0, cur + 1).find(failed);
		if (!next) return;
	} else if (e.key === 'Escape' && ctx.step) next = null;
	else return;
	e.preventDefault();
	moveTo(ctx, next);
}
