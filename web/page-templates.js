// SPDX-License-Identifier: MIT
// page-templates.js - /admin/job_templates/<group>: a job group's job
// templates as a matrix per product (test suites × machines, the cells
// their priority) and its YAML, both built by the server
// (src/server/pages/web_ssr_admin.c, docs/web.md "Pages built once");
// this makes the YAML an editor over openQA's route
// /api/v1/job_templates_scheduling/<group>:
// "Preview" posts it with preview=1 (checked, nothing changed), "Save"
// replaces the templates (with reference=, so a change made meanwhile by
// someone else is refused). The server's errors ("line L, column C: ...",
// openQA's list of strings) are listed and their lines marked in a
// line-numbered gutter beside the text. Writes need a signed-in admin.
import { h, replace, builtByServer, serverMain } from './dom.js';
import { send } from './api.js';
import { getSession, isAdmin, errorLine } from './admin-common.js';

// The editor on screen (one per page): its elements and the YAML loaded.
let ed = null;

// The lines an error list names: bad (where the server found the
// problem: "line L" at the start) and ctx (what it was reading: "... at
// line L"), each a sorted list of 1-based line numbers.
export function errorLines(errors) {
	const bad = new Set(), ctx = new Set();
	for (const e of errors || []) {
		const m = /^line (\d+)/.exec(String(e));
		if (m) bad.add(Number(m[1]));
		for (const c of String(e).matchAll(/\bat line (\d+)/g)) ctx.add(Number(c[1]));
	}
	for (const l of bad) ctx.delete(l);
	const sorted = s => [...s].sort((a, b) => a - b);
	return { bad: sorted(bad), ctx: sorted(ctx) };
}

function lineCount(text) {
	return text.split('\n').length;
}

// Lines the editor shows without scrolling: the text plus one, within bounds.
const MIN_ROWS = 8, MAX_ROWS = 32;

// Gutter numbers for the text, marks kept; the editor as tall as the text.
function drawGutter() {
	const n = lineCount(ed.text.value);
	const cs = getComputedStyle(ed.text);
	const lh = parseFloat(cs.lineHeight) || 18;
	const pad = (parseFloat(cs.paddingTop) || 0) + (parseFloat(cs.paddingBottom) || 0);
	const px = `${Math.min(Math.max(n + 1, MIN_ROWS), MAX_ROWS) * lh + pad + 16}px`; // 16: a sideways scrollbar
	ed.text.style.height = px;
	ed.gutter.style.height = px;
	const have = ed.gutter.childElementCount;
	for (let i = have + 1; i <= n; i++) ed.gutter.append(h('div', { class: 'jt-ln', dataset: { line: i } }, String(i)));
	for (let i = have; i > n; i--) ed.gutter.lastElementChild.remove();
	syncScroll();
}

function syncScroll() {
	ed.gutter.scrollTop = ed.text.scrollTop;
	ed.marks.style.transform = `translateY(${-ed.text.scrollTop}px)`;
}

// Mark lines: the gutter numbers and a band behind the text line.
function markLines({ bad, ctx }) {
	clearMarks();
	const cs = getComputedStyle(ed.text);
	const lh = parseFloat(cs.lineHeight) || 18;
	const top = parseFloat(cs.paddingTop) || 0;
	const put = (line, cls) => {
		const num = ed.gutter.querySelector(`.jt-ln[data-line="${line}"]`);
		if (num) {
			num.classList.add(cls);
			num.title = cls === 'bad' ? 'error on this line' : 'the error is inside what starts here';
		}
		const band = h('div', { class: `jt-band ${cls}`, dataset: { line } });
		band.style.top = `${top + (line - 1) * lh}px`;
		band.style.height = `${lh}px`;
		ed.marks.append(band);
	};
	ctx.forEach(l => put(l, 'ctx'));
	bad.forEach(l => put(l, 'bad'));
	syncScroll();
}

function clearMarks() {
	ed.marks.replaceChildren();
	for (const el of ed.gutter.querySelectorAll('.bad, .ctx')) {
		el.classList.remove('bad', 'ctx');
		el.removeAttribute('title');
	}
}

// Put the caret on a line and scroll it into view.
function gotoLine(line) {
	const lines = ed.text.value.split('\n');
	let start = 0;
	for (let i = 0; i < line - 1 && i < lines.length; i++) start += lines[i].length + 1;
	const end = start + (lines[line - 1] || '').length;
	ed.text.focus();
	ed.text.setSelectionRange(start, end);
	const lh = parseFloat(getComputedStyle(ed.text).lineHeight) || 18;
	ed.text.scrollTop = Math.max(0, (line - 3) * lh);
	syncScroll();
}

// Show the server's answer to a preview or save: status (HTTP) and body
// (parsed JSON). Errors are listed and their lines marked; a success
// says what would change or changed. Exported for the browser test,
// which hands it answers it fetched itself.
export function showAnswer(status, body, preview) {
	if (!ed) throw new Error('no editor on the page');
	const out = ed.result;
	if (status >= 200 && status < 300 && body && !body.error) {
		clearMarks();
		const n = Array.isArray(body.ids) ? body.ids.length : 0;
		out.className = 'jt-result ok';
		replace(out, h('p', {}, preview
			? `Preview: the YAML is valid; it makes ${n} job template${n === 1 ? '' : 's'}. Nothing was saved.`
			: `Saved: ${n} job template${n === 1 ? '' : 's'}.`),
		body.changes ? h('pre', { class: 'jt-diff' }, body.changes.split('\n').map(l =>
			h('span', { class: l.startsWith('+') ? 'add' : l.startsWith('-') ? 'del' : null }, l + '\n'))) : null);
		return;
	}
	const errors = body && body.error ? [].concat(body.error) : [`HTTP ${status}`];
	const lines = errorLines(errors);
	markLines(lines);
	out.className = 'jt-result error';
	replace(out, h('p', {}, `${preview ? 'Preview' : 'Saving'} failed: nothing was changed.`),
		h('ul', { class: 'jt-errors' }, errors.map(e => {
			const m = /^line (\d+)/.exec(String(e));
			return h('li', {}, m ? h('button', { type: 'button', class: 'jt-goto', onclick: () => gotoLine(Number(m[1])) },
				`line ${m[1]}`) : null, m ? String(e).slice(m[0].length) : String(e));
		})));
}

async function post(preview) {
	const params = { template: ed.text.value, schema: 'JobTemplates-01.yaml', reference: ed.loaded };
	if (preview) params.preview = 1;
	ed.result.className = 'jt-result';
	replace(ed.result, h('p', { class: 'muted' }, preview ? 'Checking…' : 'Saving…'));
	for (const b of ed.buttons) b.disabled = true;
	try {
		const body = await send('POST', `/api/v1/job_templates_scheduling/${ed.group}`, params);
		if (!preview) {
			// The new templates: the server's matrix anew; the text is what it keeps.
			const fresh = await serverMain();
			const matrix = fresh.querySelector('.jt-section');
			const old = ed.main.querySelector('.jt-section');
			if (matrix && old) old.replaceWith(matrix);
			ed.loaded = ed.text.value;
		}
		showAnswer(200, body, preview);
	} catch (e) {
		if (e.body !== undefined) showAnswer(e.status, e.body, preview);
		else replace(ed.result, errorLine(e));
	} finally {
		for (const b of ed.buttons) b.disabled = false;
	}
}

export async function render(main, match) {
	const group = Number(match[1]);
	const text = builtByServer(main, 'textarea.jt-text');
	if (!text) return;
	const session = await getSession();
	const admin = isAdmin(session);
	const first = !ed || ed.text !== text;
	const buttons = admin ? [
		h('button', { type: 'button', class: 'jt-preview', onclick: () => post(true) }, 'Preview'),
		h('button', { type: 'button', class: 'jt-save primary', onclick: () => post(false) }, 'Save'),
		h('button', { type: 'button', class: 'jt-reset', onclick: () => {
			ed.text.value = ed.loaded;
			clearMarks();
			drawGutter();
			replace(ed.result);
		} }, 'Reset'),
	] : [];
	if (first)
		ed = {
			main, group, loaded: text.value, text, buttons: [],
			gutter: main.querySelector('.jt-gutter'),
			marks: main.querySelector('.jt-marks'),
			result: main.querySelector('.jt-result'),
		};
	if (first) {
		text.addEventListener('scroll', syncScroll);
		text.addEventListener('input', () => {
			clearMarks();
			drawGutter();
		});
	}
	if (admin && !ed.buttons.length) {
		ed.buttons = buttons;
		text.readOnly = false;
		const hint = text.closest('.jt-section').querySelector('.adm-hint');
		if (hint) hint.remove();
		ed.result.before(h('div', { class: 'jt-buttons' }, buttons));
	}
	drawGutter();
}
