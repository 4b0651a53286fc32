// SPDX-License-Identifier: MIT
// page-needle-edit.js - the needle editor (/tests/<id>/modules/<m>/steps/<n>/edit,
// openQA's URL): the step's screenshot with the draft needle's areas
// (needle-canvas.js), its tags, match levels, margins, click point and
// workaround property; the server's live match of the draft on this very
// screenshot after each change (debounced, stale answers dropped); and the
// save (operators), which asks before replacing a needle.
import { h, replace } from './dom.js';
import { get, send, ApiError } from './api.js';
import { currentSession, loginHref } from './session.js';
import { NeedleCanvas } from './needle-canvas.js';

const DEBOUNCE_MS = 60;

function loadImage(src) {
	return new Promise((resolve, reject) => {
		const img = new Image();
		img.onload = () => resolve(img);
		img.onerror = () => reject(new Error(`the screenshot ${src} could not be loaded`));
		img.src = src;
	});
}

function today() {
	return new Date().toISOString().slice(0, 10).replace(/-/g, '');
}

// A needle of the editor's own: only the fields openQA saves.
function copyAreas(areas) {
	return (areas || []).map(a => {
		const o = { xpos: a.xpos | 0, ypos: a.ypos | 0, width: a.width | 0, height: a.height | 0, type: a.type || 'match' };
		if (a.match) o.match = a.match;
		if (a.margin) o.margin = a.margin;
		if (a.click_point) o.click_point = typeof a.click_point === 'object' ? { ...a.click_point } : a.click_point;
		return o;
	});
}

function field(label, input, cls) {
	return h('label', { class: 'ne-field' + (cls ? ' ' + cls : '') }, h('span', {}, label), input);
}

export async function render(main, m) {
	const jobId = Number(m[1]), module = decodeURIComponent(m[2]), step = Number(m[3]);
	replace(main, h('p', { class: 'loading' }, 'Loading…'));
	const [info, session] = await Promise.all([
		get(`/api/v1/jobs/${jobId}/needle_edit`, { module, step }), currentSession()]);
	const img = await loadImage(`/tests/${jobId}/images/${encodeURIComponent(info.screenshot)}`);
	const canEdit = session.user && (session.user.role === 'operator' || session.user.role === 'admin');

	const st = { seq: 0, shown: 0, timer: null, candidate: null };
	const canvas = h('canvas', { class: 'ne-canvas', 'aria-label': `screenshot of ${module} step ${step}` });
	const startSel = h('select', { id: 'ne-start' }, h('option', { value: '' }, 'nothing (new needle)'),
		info.candidates.map((c, i) => h('option', { value: String(i) },
			`${c.name}${c.matched ? ' (matched)' : ''}${c.needle ? '' : ' (unreadable)'}`)));
	const imageSel = h('select', { id: 'ne-image' }, h('option', { value: '' }, 'this screenshot (what a save writes)'));
	const tagsIn = h('input', { id: 'ne-tags', type: 'text', value: (info.tags || []).join(' '), autocomplete: 'off' });
	const newType = h('select', { id: 'ne-newtype' }, ['match', 'exclude', 'ocr'].map(t => h('option', { value: t }, t)));
	const areaBox = h('div', { class: 'ne-areas', id: 'ne-areas' });
	const wa = h('input', { id: 'ne-workaround', type: 'checkbox' });
	const bug = h('input', { id: 'ne-bugref', type: 'text', placeholder: 'bsc#1234: why', autocomplete: 'off' });
	const nameIn = h('input', { id: 'ne-name', type: 'text', autocomplete: 'off',
		value: `${(info.tags && info.tags[0]) || module}-${today()}` });
	const msgIn = h('input', { id: 'ne-message', type: 'text', autocomplete: 'off', placeholder: 'commit message (optional)' });
	const verdict = h('div', { class: 'ne-verdict', id: 'ne-verdict', 'aria-live': 'polite' }, '');
	const timing = h('div', { class: 'ne-timing muted', id: 'ne-timing' });
	const status = h('div', { class: 'ne-status', id: 'ne-status', 'aria-live': 'polite' });
	const question = h('div', { class: 'ne-question', id: 'ne-question', hidden: true });
	const saveBtn = h('button', { type: 'button', id: 'ne-save', disabled: !canEdit }, 'Save needle');
	const rejudge = h('div', { class: 'ne-rejudge', id: 'ne-rejudge' });

	const nc = new NeedleCanvas(canvas, img, {
		onchange: final => { areaList(); schedule(final); },
		onselect: () => areaList(),
		newType: () => newType.value,
	});

	function draft() {
		const tags = tagsIn.value.split(/[\s,]+/).filter(Boolean);
		const properties = wa.checked ? [bug.value.trim() ? { name: 'workaround', value: bug.value.trim() } : { name: 'workaround' }] : [];
		return { area: copyAreas(nc.areas), tags, properties };
	}

	function areaRow(a, i) {
		const num = (key, min, max, placeholder) => h('input', {
			type: 'number', min, max, value: a[key] ?? '', placeholder, class: `ne-${key}`, 'aria-label': `area ${i + 1} ${key}`,
			onchange: e => {
				const v = e.target.value === '' ? undefined : Number(e.target.value);
				if (v === undefined || Number.isNaN(v)) delete a[key]; else a[key] = v;
				if (['xpos', 'ypos', 'width', 'height'].includes(key)) nc.clamp(a);
				nc.draw(); areaList(); schedule(true);
			},
		});
		const r = nc.result && nc.result.areas.find(x => x.index === i);
		const type = h('select', { class: 'ne-type', 'aria-label': `area ${i + 1} type`,
			onchange: e => { a.type = e.target.value; nc.draw(); schedule(true); } },
		['match', 'exclude', 'ocr'].map(t => h('option', { value: t, selected: a.type === t }, t)));
		const click = h('input', { type: 'checkbox', class: 'ne-click', checked: !!a.click_point, 'aria-label': `area ${i + 1} click point`,
			onchange: e => {
				nc.areas.forEach(x => delete x.click_point);
				if (e.target.checked) a.click_point = { xpos: Math.max(1, a.width >> 1), ypos: Math.max(1, a.height >> 1) };
				nc.draw(); areaList(); schedule(true);
			} });
		return h('div', { class: 'ne-area' + (i === nc.selected ? ' ne-area-on' : ''), dataset: { index: i } },
			h('button', { type: 'button', class: 'ne-pick', onclick: () => nc.select(i) }, `#${i + 1}`),
			type,
			h('span', { class: 'ne-geom' }, num('xpos', 0, img.naturalWidth - 1), num('ypos', 0, img.naturalHeight - 1),
				num('width', 1, img.naturalWidth), num('height', 1, img.naturalHeight)),
			a.type === 'match' ? field('match %', num('match', 1, 100, '96')) : null,
			a.type === 'match' ? field('margin', num('margin', 1, 10000, '50')) : null,
			field('click', click),
			r ? h('span', { class: 'ne-asim ' + (r.result === 'ok' ? 'ne-ok' : 'ne-fail') }, `${r.similarity.toFixed(2)}% / ${r.required}%`) : null,
			h('button', { type: 'button', class: 'ne-del', 'aria-label': `delete area ${i + 1}`,
				onclick: () => { nc.areas.splice(i, 1); nc.select(Math.min(i, nc.areas.length - 1)); areaList(); schedule(true); } }, '×'));
	}

	function areaList() {
		replace(areaBox, nc.areas.length ? nc.areas.map(areaRow)
			: h('p', { class: 'muted' }, 'No area yet: drag on the screenshot to draw one.'));
	}

	function schedule(now) {
		clearTimeout(st.timer);
		st.timer = setTimeout(liveMatch, now ? 0 : DEBOUNCE_MS);
	}

	async function liveMatch() {
		const seq = ++st.seq;
		const d = draft();
		if (!d.area.some(a => a.type !== 'exclude')) {
			nc.setResult(null);
			verdict.textContent = 'Draw a match area to see whether the needle matches.';
			verdict.className = 'ne-verdict';
			return;
		}
		const t0 = performance.now();
		const body = { module, step, needle: d };
		if (imageSel.value) body.image = imageSel.value;
		let res;
		try {
			const r = await fetch(`/api/v1/jobs/${jobId}/needle_match`, {
				method: 'POST', credentials: 'same-origin',
				headers: { 'Content-Type': 'application/json', Accept: 'application/json' }, body: JSON.stringify(body) });
			res = await r.json();
			if (!r.ok) throw new Error(res.error || `${r.status}`);
		} catch (e) {
			if (seq !== st.seq) return;
			verdict.textContent = `Cannot match: ${e.message}`;
			verdict.className = 'ne-verdict ne-fail';
			return;
		}
		if (seq < st.shown) return; // an older answer arriving late
		st.shown = seq;
		const rt = performance.now() - t0;
		nc.setResult(res);
		areaList();
		verdict.textContent = res.match ? `Matches this screenshot (${res.similarity.toFixed(2)}%)`
			: `Does not match this screenshot (${res.similarity.toFixed(2)}%)`;
		verdict.className = 'ne-verdict ' + (res.match ? 'ne-ok' : 'ne-fail');
		verdict.dataset.similarity = String(res.similarity);
		verdict.dataset.seq = String(seq);
		timing.textContent = `server ${res.ms.toFixed(1)} ms, round trip ${rt.toFixed(0)} ms`;
	}

	function start() {
		const c = info.candidates[Number(startSel.value)];
		st.candidate = startSel.value === '' ? null : c;
		replace(imageSel, h('option', { value: '' }, 'this screenshot (what a save writes)'),
			st.candidate && st.candidate.needle ? h('option', { value: st.candidate.json }, `the image of ${st.candidate.name}`) : null);
		const n = (st.candidate && st.candidate.needle) || { area: [], tags: info.tags || [], properties: [] };
		nc.setAreas(copyAreas(n.area));
		tagsIn.value = (n.tags || []).join(' ');
		const w = (n.properties || []).find(p => (typeof p === 'string' ? p : p.name) === 'workaround');
		wa.checked = !!w;
		bug.value = w && typeof w === 'object' && w.value ? w.value : '';
		if (st.candidate) nameIn.value = st.candidate.file_name || st.candidate.name;
		areaList();
		schedule(true);
	}

	async function save(overwrite) {
		question.hidden = true;
		status.textContent = 'Saving…';
		status.className = 'ne-status';
		const params = { json: JSON.stringify(draft()), needlename: nameIn.value.trim(), commit_message: msgIn.value.trim() };
		if (st.candidate && st.candidate.dir && (st.candidate.file_name === params.needlename)) params.dir = st.candidate.dir;
		if (overwrite) params.overwrite = '1';
		try {
			const r = await send('POST', `/tests/${jobId}/modules/${encodeURIComponent(module)}/steps/${step}`, params);
			status.textContent = `Saved: ${r.json}${r.commit ? ` (commit ${r.commit.slice(0, 10)})` : ''}`;
			status.className = 'ne-status ne-ok';
			status.dataset.saved = r.json;
			import('./rejudge.js').then(mod => mod.renderRejudge(rejudge, jobId)).catch(() => {});
		} catch (e) {
			if (e instanceof ApiError && e.status === 409) {
				status.textContent = '';
				replace(question, h('p', {}, `A needle named ${params.needlename} exists already. Replace it?`),
					h('button', { type: 'button', id: 'ne-overwrite', onclick: () => save(true) }, 'Replace it'),
					h('button', { type: 'button', id: 'ne-cancel', onclick: () => { question.hidden = true; status.textContent = 'Not saved.'; } }, 'Cancel'));
				question.hidden = false;
				question.querySelector('button').focus();
				return;
			}
			status.textContent = e.message;
			status.className = 'ne-status ne-fail';
		}
	}

	startSel.addEventListener('change', start);
	imageSel.addEventListener('change', () => schedule(true));
	for (const el of [tagsIn, wa, bug]) el.addEventListener('change', () => schedule(true));
	saveBtn.addEventListener('click', () => save(false));

	replace(main,
		h('div', { class: 'ne-head' },
			h('h2', {}, 'Needle editor'),
			h('p', {}, h('a', { href: `/tests/${jobId}#step/${encodeURIComponent(module)}/${step}` }, `job ${jobId}`),
				` — ${info.job.name} — ${module}, step ${step} — `, h('code', {}, info.screenshot),
				` (${img.naturalWidth}×${img.naturalHeight})`)),
		h('div', { class: 'ne-main' },
			h('div', { class: 'ne-stage' }, canvas,
				h('p', { class: 'muted ne-help' }, 'Drag on the screenshot to draw an area, drag an area to move it, ',
					'its corners to resize it; shift+click inside an area sets its click point.')),
			h('div', { class: 'ne-panel' },
				field('Start from', startSel),
				field('Needle image for the live match', imageSel),
				verdict, timing,
				field('Tags', tagsIn),
				field('New areas are', newType),
				h('h3', {}, 'Areas'), areaBox,
				h('fieldset', { class: 'ne-props' }, h('legend', {}, 'Properties'),
					field('workaround', wa, 'ne-inline'), field('bug reference', bug)),
				h('h3', {}, 'Save'),
				field('Needle name', nameIn), field('Commit message', msgIn),
				canEdit ? saveBtn : h('p', { class: 'muted' }, h('a', { href: loginHref() }, 'Sign in'),
					' as an operator to save needles.'),
				question, status)),
		rejudge);
	startSel.value = info.candidates.length ? '0' : '';
	start();
}
