// SPDX-License-Identifier: MIT
// job-details.js - the job page's #details tab, which the server writes
// (src/server/pages/web_ssr_job.c: each module with its result and its
// steps as thumbnails, the similarity under them; the runner's small
// thumbnails, so a long job's page stays light): this draws the matched
// areas over the thumbnails and adds the re-run controls; a step opened (#step/<module>/<n>) shows the
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

// Boxes over a picture, placed in percent of the picture's size so they
// scale with it. areas: [{x, y, w, h, kind, label}], in the coordinates of
// the screen it shows (screen: [w, h]), or, without screen, of the picture
// as it loads.
function boxesOver(wrap, img, areas, screen) {
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
	if (!screen) {
		img.addEventListener('load', () => {
			if (img.naturalWidth && (img.naturalWidth !== sw || img.naturalHeight !== sh))
				place(img.naturalWidth, img.naturalHeight);
		});
	}
	wrap.append(...boxes);
}

// A picture of an opened step with boxes over it (boxesOver).
export function shot(src, areas, alt, cls) {
	const img = h('img', { src, alt, loading: 'eager', decoding: 'async', width: SCREEN_W, height: SCREEN_H });
	const wrap = h('div', { class: 'job-shot' + (cls ? ' ' + cls : '') }, img);
	boxesOver(wrap, img, areas);
	return wrap;
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

function seekButton(ctx, st) {
	const t = stepTime(ctx, st);
	if (t === null || !ctx.tabs.video) return null;
	return h('button', { type: 'button', class: 'job-seek', title: `play the video from ${t.toFixed(2)} s`,
		'aria-label': `play ${st.mod.name} step ${st.n} in the video`, onclick: () => ctx.seek(t) }, '▶');
}

// A step's tile as the server wrote it (src/server/pages/web_ssr_job.c):
// the areas its check found drawn over the thumbnail, the video's button.
function tile(ctx, st, el) {
	const d = st.d, wrap = el.querySelector('.job-thumb-shot'), img = wrap && wrap.querySelector('img');
	if (img) {
		// A check that missed on its way (unk) marks nothing; a failed one its best candidate.
		const found = d.area || (d.result === 'fail' && d.needles && d.needles[0] && d.needles[0].area) || [];
		boxesOver(wrap, img, foundAreas(found).map(a => ({ ...a, label: null })), screenSize(ctx));
	}
	const seek = seekButton(ctx, st), foot = el.querySelector('.job-step-foot');
	if (seek && foot) foot.append(seek);
}

// The #details tab: the server wrote it; this adds the boxes over the
// thumbnails, the video's buttons and the re-run controls.
export async function renderDetails(panel, ctx) {
	for (const section of panel.querySelectorAll('.job-module[data-module]')) {
		const mod = ctx.modules.find(m => m.name === section.dataset.module);
		if (!mod) continue;
		const head = section.querySelector('.job-module-head');
		if (head) head.append(...rerunParts(ctx, mod));
		for (const el of section.querySelectorAll('.job-step[data-step]')) {
			const st = mod.steps[Number(el.dataset.step) - 1];
			if (st) tile(ctx, st, el);
		}
	}
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
